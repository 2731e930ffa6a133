package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/traceduck/traceduck/queries"
	"github.com/traceduck/traceduck/queries/export"
)

func newExportCmd() *cobra.Command {
	var (
		dbPath, parquetDir, chromePath, runsSel, from, to, loadWindow string
		run                                                           int32
	)
	cmd := &cobra.Command{
		Use:   "export --db FILE (--parquet DIR [--runs SELECTOR] | --chrome FILE --run N [--from TS] [--to TS])",
		Short: "Write runs as a Parquet dataset, or one run as Chrome trace JSON for Perfetto UI",
		Long: `Export writes what a database holds for other tools.

--parquet DIR writes a Hive-partitioned Parquet dataset: one folder per
table and one per run (DIR/events/run_id=3/part-0.parquet), and DIR/views.sql,
which recreates the tables as views over the files and installs every
traceduck view and macro. DuckDB, Spark, Trino or any Parquet engine read
the dataset in place (docs/export.md). A run keeps its run_id; a run of a
trace DIR holds (same sha256) replaces that run; a run whose run_id DIR
holds with another trace is written under a new run_id, and export says so
(a run of another trace is never replaced). --runs picks the runs (default all): ids (3), ranges (2-5), names (v1) or
tags (build=42), comma-separated.

--chrome FILE writes run --run (required when the database holds several)
in the Trace Event Format, which Perfetto UI (ui.perfetto.dev, opened
locally) and chrome://tracing open: state intervals as slices on one track
per object, CPUs on CPU tracks, service calls (the view service_calls:
TOPPERS's enterSVC ... leaveSVC) as slices on a track "OBJECT calls" beside
their task's, with their arguments and return code, other events (TLV's
dispatch, activate, ...) as instants, numeric signals and CPU load as
counters. --from and --to keep [from, to) (ns on the
trace's time base, or with a unit: 10ms), intervals clipped to it.
--load-window sets the CPU load counter's window (default: about 1000
windows); one that makes more than 1000000 windows over the exported time
is refused. "-" writes to standard output.`,
		Example: `  traceduck export --db runs.duckdb --parquet dataset/
  traceduck export --db runs.duckdb --parquet dataset/ --runs 'v1,build=42'
  traceduck export --db t.duckdb --run 1 --chrome run1.json
  traceduck export --db t.duckdb --run 1 --chrome window.json --from 100ms --to 200ms`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if (parquetDir == "") == (chromePath == "") {
				return usagef("give --parquet DIR or --chrome FILE (one of them)")
			}
			if parquetDir != "" {
				for _, f := range []string{"run", "from", "to", "load-window"} {
					if cmd.Flags().Changed(f) {
						return usagef("--%s is a flag of --chrome; --parquet takes --runs", f)
					}
				}
				return runExportParquet(cmd.Context(), cmd, dbPath, parquetDir, runsSel)
			}
			if cmd.Flags().Changed("runs") {
				return usagef("--runs is a flag of --parquet; --chrome writes one run (--run N)")
			}
			opt := export.ChromeOptions{Run: run}
			for _, f := range []struct {
				name, value string
				p           **int64
			}{{"from", from, &opt.From}, {"to", to, &opt.To}} {
				if f.value == "" {
					continue
				}
				ns, err := parseEventsTime(f.value)
				if err != nil {
					return usagef("--%s %s: %v", f.name, f.value, err)
				}
				*f.p = &ns
			}
			if loadWindow != "" {
				ns, err := parseEventsTime(loadWindow)
				if err != nil || ns <= 0 {
					return usagef("--load-window %s: expected a positive duration (ns, or with a unit: 1ms)", loadWindow)
				}
				opt.LoadWindow = ns
			}
			return runExportChrome(cmd.Context(), cmd, dbPath, chromePath, opt)
		},
	}
	addDBFlag(cmd, &dbPath, true, "database file (must exist)")
	f := cmd.Flags()
	f.StringVar(&parquetDir, "parquet", "", "write a Parquet dataset into this folder")
	f.StringVar(&runsSel, "runs", "", "with --parquet: the runs to write (ids, ranges, names, key=value tags; comma-separated)")
	f.StringVar(&chromePath, "chrome", "", "write one run as Chrome trace event JSON to this file (- for standard output)")
	addRunFlag(cmd, &run)
	f.StringVar(&from, "from", "", "with --chrome: from this time (ns, or with a unit: 10ms)")
	f.StringVar(&to, "to", "", "with --chrome: up to this time")
	f.StringVar(&loadWindow, "load-window", "", "with --chrome: window of the CPU load counters (default: about 1000 windows; at most 1000000 windows)")
	return cmd
}

func runExportParquet(ctx context.Context, cmd *cobra.Command, dbPath, dir, selector string) error {
	db, err := openExistingDB(ctx, dbPath)
	if err != nil {
		return err
	}
	defer db.Close()
	runs, err := queries.SelectRuns(ctx, db.SQL(), selector)
	if err != nil {
		return usagef("--runs: %v", err)
	}
	if len(runs) == 0 {
		return fmt.Errorf("%s: no run to export", dbPath)
	}
	var ids []int32
	for _, r := range runs {
		ids = append(ids, r.ID)
	}
	w, err := export.NewWriter(dir, testStopSteps(cmd.ErrOrStderr(), "parquet-step-"))
	if err != nil {
		return err
	}
	defer w.Close()
	placed, res, err := w.Export(ctx, db.SQL(), ids)
	out := cmd.OutOrStdout()
	for _, p := range placed {
		switch {
		case p.To == p.From:
		case p.Replaced:
			fmt.Fprintf(out, "run %d (%s) written as run %d, which held the same trace (same sha256)\n", p.From, cellText(p.Name), p.To)
		case p.Over != nil:
			fmt.Fprintf(out, "run %d (%s) written as run %d: run %d of %s is another trace (%s, sha256 %.12s)\n",
				p.From, cellText(p.Name), p.To, p.Over.ID, cellText(dir), cellText(p.Over.Name), p.Over.SHA256)
		default:
			fmt.Fprintf(out, "run %d (%s) written as run %d\n", p.From, cellText(p.Name), p.To)
		}
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%s written to %s: %s, %d bytes; read them with %s\n",
		plural(int64(len(placed)), "run"), cellText(dir), plural(int64(res.Files), "Parquet file"), res.Bytes, cellText(filepath.Join(dir, export.ViewsFile)))
	return nil
}

func runExportChrome(ctx context.Context, cmd *cobra.Command, dbPath, path string, opt export.ChromeOptions) error {
	db, err := openExistingDB(ctx, dbPath)
	if err != nil {
		return err
	}
	defer db.Close()
	if opt.Run == 0 {
		runs, err := queries.ListRuns(ctx, db.SQL())
		if err != nil {
			return err
		}
		if len(runs) != 1 {
			return usagef("--chrome writes one run: give --run N (the database holds %d runs)", len(runs))
		}
		opt.Run = runs[0].ID
	} else if err := checkRunExists(ctx, db.SQL(), opt.Run); err != nil {
		return err
	}
	if path == "-" {
		_, err := export.Chrome(ctx, db.SQL(), cmd.OutOrStdout(), opt)
		return err
	}
	// Written beside the target and renamed: a failed export leaves no
	// half file under the name a viewer would open.
	var res export.ChromeResult
	err = writeFileAtomic(path, func(w io.Writer) error {
		var err error
		res, err = export.Chrome(ctx, db.SQL(), w, opt)
		return err
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "run %d written to %s: %d slices, %d instants, %d counter values, %d holds, %d waits, %d calls, %d flows on %d tracks\n",
		opt.Run, cellText(path), res.Slices, res.Instants, res.Counters, res.Holds, res.Waits, res.Calls, res.Flows, res.Tracks)
	if res.Slices+res.Instants+res.Counters+res.Holds+res.Waits+res.Calls+res.Flows == 0 && (opt.From != nil || opt.To != nil) {
		conn, err := db.SQL().Conn(ctx)
		if err != nil {
			return err
		}
		defer conn.Close()
		w := windowFlags{from: fmtOpt(opt.From), to: fmtOpt(opt.To), lo: opt.From, hi: opt.To}
		_, err = explainWindow(ctx, conn, selection{run: opt.Run, window: &w, noRelative: true})
		return err
	}
	return nil
}

// fmtOpt prints an optional time in the unit that reads best.
func fmtOpt(p *int64) string {
	if p == nil {
		return ""
	}
	return fmtNS(*p)
}
