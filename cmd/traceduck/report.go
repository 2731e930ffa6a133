package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/traceduck/traceduck/queries/export"
	"github.com/traceduck/traceduck/queries/report"
	"github.com/traceduck/traceduck/schema"
)

// regressionError is a report that found values beyond a threshold: exit
// code 3, after every output was written. Its message has several lines:
// the count, then one per crossing (writeError indents them).
type regressionError struct{ lines []string }

func (e *regressionError) Error() string { return strings.Join(e.lines, "\n  ") }

type reportArgs struct {
	dbPath, dataset            string
	runs, order, baseline      string
	metricFiles, failOn, hists []string
	top                        int
	htmlPath, jsonPath, mdPath string
	window                     windowFlags
}

func newReportCmd() *cobra.Command {
	var a reportArgs
	cmd := &cobra.Command{
		Use:   "report (--db FILE | --parquet DIR) [--runs SELECTOR] [--baseline NAME|ID] [--fail-on COND]... [--html F] [--json F] [--markdown F]",
		Short: "Compare many runs with a baseline: metrics, thresholds, HTML/JSON/Markdown reports",
		Long: `Report computes metrics for the runs of a database and compares each run with
a baseline run: per task, ISR or thread its running-time share, response
time p50/p99/max and scheduling latency p99; per CPU its load; per run its
event rate and diagnostics. Every metric is an SQL query returning
(run_id, key, value) (queries/report/metrics.sql); --metrics FILE adds
your own in the same form. A run is compared with the baseline when it has
the baseline's format, key by key (an object's or a CPU's name).

--fail-on METRIC[KEY] OP LIMIT checks the values (OP: >, >=, <, <=):
  response_p99 > +10%     the change from the baseline, in percent
  response_p99 > +2ms     the change from the baseline (ns, us, ms, s)
  cpu_load > 0.85         the value itself, in every run
  cpu_load[Core_0] > 0.5  only the keys matching a glob
When a value is beyond a threshold, report writes its outputs, names the
values on standard error and exits with code 3.

--runs selects runs by comma-separated run_ids (3), ranges (2-5), names
(v1) and tags (build=41), as export does; default every run. --order
sets the order of the trends: ingest (run_id, the default), name, or
tag:KEY. --baseline is a run name or run_id (default the first run).
--hist WHAT[:OBJECT] adds a histogram per run of response, start_delay,
sched_latency, or the durations of running, ready, waiting or blocked
intervals, of the objects matching a glob.

--from and --to keep a time window [from, to) of every run (ns on the
trace's time base or with a unit, 1.5ms; --relative: from each run's
first event, the origin to compare runs by). Time shares, CPU load and
event rates count what is inside the window, over the run's time inside
it; the instances, waits and round trips the window cuts are left out of
response times and latencies, as those the trace cuts (docs/report.md).

--parquet DIR reports over a Parquet dataset instead of a database (one
that parallel CI jobs each wrote a run into with ingest --parquet DIR),
with the same numbers as from a database holding the same runs.

Each ingest stores what the report shows of its run (its summary), so a
report over many runs reads a few rows per run; runs ingested by an older
traceduck, and every run under --from/--to, are summarized by the report
itself, with the same numbers, more slowly (docs/report.md, "Scale").

--html writes one self-contained page (inline CSS and SVG plots, no
script, nothing fetched), --json the same numbers (keys in
docs/report.md), --markdown a compact summary for a CI comment; "-" is
standard output. Without any of them the Markdown goes to standard output.`,
		Example: `  traceduck report --db runs.duckdb --baseline v1 --html r.html --fail-on 'response_p99 > +10%'
  traceduck report --db runs.duckdb --runs 2-9 --order tag:build --json r.json --markdown -
  traceduck report --db runs.duckdb --fail-on 'cpu_load > 0.85' --fail-on 'diagnostics[error] > 0'
  traceduck report --db runs.duckdb --metrics my-metrics.sql --hist response:Task_10ms_*
  traceduck report --db runs.duckdb --relative --from 1s --to 2s --markdown -
  traceduck report --parquet /shared/dataset --baseline v1 --html r.html --json r.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runReport(cmd.Context(), a, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	addDBFlag(cmd, &a.dbPath, false, "database file (must exist)")
	f := cmd.Flags()
	f.StringVar(&a.dataset, "parquet", "", "report over this Parquet dataset (export --parquet, ingest --parquet) instead of a database")
	f.StringVar(&a.runs, "runs", "", "runs to report: run_ids, ranges A-B, names, tags k=v, comma-separated (default every run)")
	f.StringVar(&a.order, "order", "ingest", "order of the runs in trends: ingest, name or tag:KEY")
	f.StringVar(&a.baseline, "baseline", "", "the run the others are compared with: a name or run_id (default the first run)")
	f.StringArrayVar(&a.metricFiles, "metrics", nil, "file of more metrics (\"-- metric: NAME\" blocks of SQL returning run_id, key, value); repeatable")
	f.StringArrayVar(&a.failOn, "fail-on", nil, "threshold METRIC[KEY] OP LIMIT, e.g. 'response_p99 > +10%' or 'cpu_load > 0.85'; repeatable; exit code 3 when crossed")
	f.StringArrayVar(&a.hists, "hist", nil, "histogram per run of WHAT[:OBJECT]: response, start_delay, sched_latency, running, ready, waiting, blocked; repeatable")
	f.IntVar(&a.top, "top", 10, "objects per run in the run tables (by running time)")
	f.StringVar(&a.htmlPath, "html", "", "write the HTML report to this file")
	f.StringVar(&a.jsonPath, "json", "", "write the JSON report to this file")
	f.StringVar(&a.mdPath, "markdown", "", "write the Markdown summary to this file")
	addWindowFlags(cmd, &a.window, "report on each run")
	return cmd
}

func runReport(ctx context.Context, a reportArgs, stdout, stderr io.Writer) error {
	if (a.dbPath == "") == (a.dataset == "") {
		return usagef("give --db FILE or --parquet DIR (one of them)")
	}
	opt := report.Options{Database: a.dbPath, Runs: a.runs, Order: a.order, Baseline: a.baseline, Top: a.top}
	if a.dataset != "" {
		opt.Database = a.dataset
	}
	if a.top < 1 {
		return usagef("--top: expected a number of objects >= 1, found %d", a.top)
	}
	if err := a.window.parse(); err != nil {
		return err
	}
	if a.window.set() {
		opt.Window = &report.Window{From: a.window.lo, To: a.window.hi, Relative: a.window.relative}
	}
	for _, s := range a.failOn {
		t, err := report.ParseThreshold(s)
		if err != nil {
			return &usageError{err}
		}
		opt.Thresholds = append(opt.Thresholds, t)
	}
	for _, s := range a.hists {
		h, err := report.ParseHistSpec(s)
		if err != nil {
			return &usageError{err}
		}
		opt.Hists = append(opt.Hists, h)
	}
	stdoutUsers := 0
	for _, p := range []string{a.htmlPath, a.jsonPath, a.mdPath} {
		if p == "-" {
			stdoutUsers++
		}
	}
	if stdoutUsers > 1 {
		return usagef("--html, --json and --markdown: only one of them can be - (standard output)")
	}
	if a.htmlPath == "" && a.jsonPath == "" && a.mdPath == "" {
		a.mdPath = "-"
	}
	for _, path := range a.metricFiles {
		text, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		ms, err := report.ParseMetrics(path, string(text))
		if err != nil {
			return err
		}
		opt.Metrics = append(opt.Metrics, ms...)
	}

	var sqlDB *sql.DB
	if a.dataset != "" {
		// The views of the runs and their summaries only, the others
		// when the report computes a summary (docs/report.md, "Scale").
		var err error
		sqlDB, opt.Expand, err = export.OpenDatasetTables(ctx, a.dataset, append([]string{"runs"}, schema.ReportTables()...)...)
		if err != nil {
			return err
		}
		defer sqlDB.Close()
	} else {
		db, err := openExistingDB(ctx, a.dbPath)
		if err != nil {
			return err
		}
		defer db.Close()
		sqlDB = db.SQL()
		// The summaries of runs of an older traceduck, computed now, are
		// kept for the next report.
		opt.Store = !db.ReadOnly
	}
	rep, err := report.Build(ctx, sqlDB, opt)
	var oe *report.OptionError
	if errors.As(err, &oe) {
		return &usageError{err}
	}
	if err != nil {
		return err
	}
	if rep.StoreErr != nil {
		warnf(ctx, "%s: the runs' summaries computed could not be stored (the next report computes them again): %v", a.dbPath, rep.StoreErr)
	}
	for _, out := range []struct {
		path  string
		write func(io.Writer) error
	}{{a.htmlPath, rep.WriteHTML}, {a.jsonPath, rep.WriteJSON}, {a.mdPath, rep.WriteMarkdown}} {
		if err := writeOutput(out.path, stdout, out.write); err != nil {
			return err
		}
	}
	if rep.Crossed() {
		return &regressionError{crossingsMessage(rep)}
	}
	return nil
}

// writeOutput writes one output to its file ("-": w; "": none), whole or
// not at all (writeFileAtomic).
func writeOutput(path string, w io.Writer, write func(io.Writer) error) error {
	switch path {
	case "":
		return nil
	case "-":
		return write(w)
	}
	return writeFileAtomic(path, write)
}

// crossingsMessage names the first crossings for standard error, a line
// each.
func crossingsMessage(rep *report.Report) []string {
	lines := []string{fmt.Sprintf("%s beyond a threshold:", plural(int64(len(rep.Crossings)), "value"))}
	for i, c := range rep.Crossings {
		if i == 5 {
			lines = append(lines, fmt.Sprintf("... and %d more (see the report)", len(rep.Crossings)-5))
			break
		}
		lines = append(lines, fmt.Sprintf("%s: %s", c.Threshold, rep.Describe(c)))
	}
	return lines
}
