package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/safetext"
	"github.com/traceduck/traceduck/queries/align"
	"github.com/traceduck/traceduck/queries/export"
	"github.com/traceduck/traceduck/schema"
)

func newIngestCmd() *cobra.Command {
	var (
		dbPath    string
		parquet   string
		noSummary bool
		system    string
		clocks    []string
		opt       ingest.Options
		tags      [][2]string
		formats   = func() string {
			var names []string
			for _, ing := range ingest.Ingesters() {
				names = append(names, ing.Format().Name)
			}
			return strings.Join(names, ", ")
		}()
	)
	cmd := &cobra.Command{
		Use:   "ingest (--db FILE | --parquet DIR) [flags] PATH...",
		Short: "Ingest trace files into a database, one run per file",
		Long: `Ingest reads each PATH ("-" is standard input) and writes it into the
database as one run, in one transaction: a failed or interrupted ingest
leaves nothing of that file in the database. The database file and its
tables are created when missing.

Several paths give several runs, ingested one after the other; the first
failure stops the command (exit code 1) and the runs already ingested stay.
With several paths, --name is a prefix: the runs are named NAME-BASE, BASE
being each file's base name without its extension ("stdin" for "-").

The runs of one call are tagged as one system (tag system=NAME): the logs
of machines that interact, read together in time order by the view
system_events or the macro system_timeline('NAME'). NAME is --system, else
--name, else the first run's name. A single path is tagged only with
--system. --clock-offset RUN=OFFSET[,DRIFTppm] gives the clock of a run of
the system (by name; OFFSET in ns or with a unit, -3ms) and then aligns the
system as 'traceduck align --set' does: the other runs' clocks are estimated
from the messages the machines exchanged (docs/semantics.md, "Aligned
time").

Without --format the format is detected from the first bytes of the file
(formats: ` + formats + `).
A file already in the database (same sha256) is refused unless --force.

--parquet DIR writes each run into a Parquet dataset instead of a database
(the layout of 'traceduck export --parquet'), with no database file: a
batch scheduler runs one such job per trace, all into one DIR at once. Each
run takes the next free run_id of the dataset (a job claims it in
DIR/.claims, so parallel jobs never share one); a file the dataset already
holds, or that another job is writing into it, is refused unless --force.
A run is in the dataset once its runs file, written last, is there: a job
that is killed leaves nothing a reader sees, and the next job clears what
it left.

--idle-task PATTERN names the idle tasks of the traced system: a task,
thread or ISR that holds a CPU and whose name matches is the RTOS's idle
loop, so the CPU is idle while it runs (docs/semantics.md). The idle tasks
the format's RTOSes are known to have are recognised without it (FreeRTOS
IDLE, QNX procnto's idle threads, Linux swapper/N, ...). * matches any
text, ? one character, [...] a class; the whole name must match. The
patterns are kept in runs.meta (idle_tasks) and matched holders get
objects.attrs.idle = true.

Each run is stored with its summary for traceduck report (what a report
shows of it, computed once, so that a report over many runs reads a few
rows per run: docs/report.md, "Scale"); --no-summary leaves it out (a
report then computes it, and keeps it in a database it may write).

A progress bar is shown on standard error when it is a terminal.`,
		Example: `  traceduck ingest --db t.duckdb trace.btf
  traceduck ingest --db t.duckdb --tag build=42 --tag board=rev2 a.btf b.btf
  traceduck ingest --db t.duckdb --system rig node0.blog node1.blog
  traceduck ingest --db t.duckdb --system rig --clock-offset node1=-1.5ms node0.blog node1.blog
  gunzip -c trace.btf.gz | traceduck ingest --db t.duckdb --format btf --name nightly -
  traceduck ingest --parquet /shared/dataset --tag build=42 trace.btf
  traceduck ingest --db t.duckdb --idle-task 'idle_loop*' trace.btf`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("no trace to ingest: give one or more paths, or - for standard input")
			}
			stdin := 0
			for _, a := range args {
				if a == "-" {
					stdin++
				}
			}
			if stdin > 1 {
				return usagef("- (standard input) given %d times", stdin)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := systemTag(tags, system, opt.Name, args)
			if err != nil {
				return err
			}
			opt.Tags = t
			for _, p := range opt.IdleTasks {
				if _, err := schema.GlobRegexp(p); err != nil {
					return usagef("--idle-task: %v", err)
				}
			}
			if (dbPath == "") == (parquet == "") {
				return usagef("give --db FILE or --parquet DIR (one of them)")
			}
			var set map[string]align.UserClock
			for _, c := range clocks {
				run, uc, err := parseClockSet("--clock-offset", c)
				if err != nil {
					return err
				}
				if set == nil {
					set = map[string]align.UserClock{}
				}
				if _, dup := set[run]; dup {
					return usagef("--clock-offset %s: run %s is given twice", c, run)
				}
				set[run] = uc
			}
			sys := ""
			for _, tg := range opt.Tags {
				if tg[0] == "system" {
					sys = tg[1]
				}
			}
			if len(set) > 0 && sys == "" {
				return usagef("--clock-offset: the runs are of no system (give several paths, or --system NAME)")
			}
			if parquet != "" {
				if len(set) > 0 {
					return usagef("--clock-offset: give --db (the clocks are stored in a database; align the dataset's system in one with traceduck align)")
				}
				return runIngestParquet(cmd.Context(), cmd, parquet, args, opt, !noSummary)
			}
			if err := runIngest(cmd.Context(), cmd, dbPath, args, opt, !noSummary); err != nil || len(set) == 0 {
				return err
			}
			return runAlign(cmd.Context(), dbPath, sys, align.SystemOptions{Set: set}, false, outputFlags{format: outTable}, cmd.OutOrStdout())
		},
	}
	addDBFlag(cmd, &dbPath, false, "database file (created when missing)")
	f := cmd.Flags()
	f.StringVar(&parquet, "parquet", "", "write the runs into this Parquet dataset instead of a database")
	f.StringVar(&opt.Format, "format", "", "trace format (default: detect); see 'traceduck formats'")
	f.StringVar(&opt.Name, "name", "", "run name (default: the file's base name); with several paths, a prefix")
	f.Var(tagsValue{&tags}, "tag", "tag the runs with key=value (repeatable); stored in runs.tags")
	f.StringVar(&system, "system", "", "tag the runs with system=NAME: logs of interacting machines, read together by system_timeline (default with several paths: --name, else the first run's name)")
	f.StringArrayVar(&clocks, "clock-offset", nil, "RUN=OFFSET[,DRIFTppm]: the clock of a run of the system, then align the system's clocks (repeatable; see traceduck align)")
	f.BoolVar(&opt.Force, "force", false, "ingest a file even when the database already holds it (same sha256)")
	f.BoolVar(&opt.SkipBad, "skip-bad", false, "record bad lines in diagnostics and go on instead of stopping")
	f.BoolVar(&noSummary, "no-summary", false, "do not store the runs' summaries for traceduck report (a report computes them, and keeps them in a database it may write)")
	f.StringArrayVar(&opt.IdleTasks, "idle-task", nil, "a task or thread whose name matches PATTERN is an idle task: the CPU is idle while it runs (repeatable; * ? [...])")
	params := addFormatFlags(cmd)
	run := cmd.RunE
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		opt.Params = params()
		return run(cmd, args)
	}
	return cmd
}

// systemTag adds the tag system=NAME to the user's tags when the call
// ingests several paths or names a system (see the command's help).
func systemTag(tags [][2]string, system, name string, paths []string) ([][2]string, error) {
	for _, t := range tags {
		if t[0] != "system" {
			continue
		}
		if system != "" && system != t[1] {
			return nil, usagef("--system %s and --tag system=%s disagree", system, t[1])
		}
		return tags, nil
	}
	switch {
	case system != "":
	case len(paths) < 2:
		return tags, nil
	case name != "":
		system = name
	default:
		system = ingest.RunName(paths[0])
	}
	return append(append([][2]string(nil), tags...), [2]string{"system", system}), nil
}

// addFormatFlags offers every flag of the configurable formats (only
// those named, when any are; TLV's --resources, ...), each labelled with
// every format that takes it, and returns a function that gives the ones
// set.
func addFormatFlags(cmd *cobra.Command, only ...string) func() map[string]string {
	values := map[string]*string{}
	var order []string
	help := map[string]string{}
	takers := map[string][]string{}
	for _, ing := range ingest.Ingesters() {
		c, ok := ing.(ingest.Configurable)
		if !ok || (len(only) > 0 && !slices.Contains(only, ing.Format().Name)) {
			continue
		}
		for _, p := range c.Params() {
			if _, seen := help[p.Name]; !seen {
				order = append(order, p.Name)
				help[p.Name] = p.Help
			}
			takers[p.Name] = append(takers[p.Name], ing.Format().Name)
		}
	}
	for _, name := range order {
		v := new(string)
		values[name] = v
		label := "format " + takers[name][0]
		if len(takers[name]) > 1 {
			label = "formats " + strings.Join(takers[name], ", ")
		}
		cmd.Flags().StringVar(v, name, "", help[name]+" ("+label+")")
	}
	return func() map[string]string {
		set := map[string]string{}
		for name, v := range values {
			if cmd.Flags().Changed(name) {
				set[name] = *v
			}
		}
		return set
	}
}

// summarize says whether each run's report summary is stored with it
// (ingest --no-summary: not).
func runIngest(ctx context.Context, cmd *cobra.Command, dbPath string, paths []string, opt ingest.Options, summarize bool) error {
	if opt.Format != "" {
		if _, err := ingest.Lookup(opt.Format); err != nil {
			return &usageError{err}
		}
	}
	_, statErr := os.Stat(dbPath)
	created := dbPath != memoryDB && errors.Is(statErr, fs.ErrNotExist)
	db, err := openDB(ctx, dbPath)
	if err != nil {
		if created {
			removeDB(dbPath)
		}
		return err
	}
	if !summarize {
		db.SetSummarize(nil)
	}
	runs := 0
	err = ingestPaths(ctx, cmd, db, paths, opt, func(res ingest.Result, path string) error {
		runs++
		fmt.Fprintf(cmd.OutOrStdout(), "run %d: %s\n", res.RunID, ingestSummary(res, path))
		return nil
	})
	db.Close()
	if created && runs == 0 {
		// A database this ingest created and put no run into is not left
		// behind (an empty database of 800 KB, its tables and views).
		removeDB(dbPath)
	}
	return err
}

// ingestSummary says what an ingest read: PATH (FORMAT, N events, the
// intervals, aggregations and histograms it made when there are any; the
// errors and warnings it recorded, and the first of them, when there are
// any). Informational diagnostics (what the input uses beyond its
// format's definition, handled) are not counted here; the table
// diagnostics has them all.
func ingestSummary(res ingest.Result, path string) string {
	c := res.Counts
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s, %s", cellText(path), res.Format, plural(res.Events, "event"))
	if c.Intervals > 0 {
		b.WriteString(", " + plural(c.Intervals, "interval"))
	}
	if c.Aggregations > 0 {
		fmt.Fprintf(&b, ", %s (%s)", plural(c.Aggregations, "aggregation"), plural(c.AggValues, "value"))
	}
	if c.Histograms > 0 {
		fmt.Fprintf(&b, ", %s (%s)", plural(c.Histograms, "histogram"), plural(c.Buckets, "bucket"))
	}
	if c.FoundBeside != "" {
		fmt.Fprintf(&b, "; read with %s, found beside it", cellText(c.FoundBeside))
	}
	if c.FoundBundled != "" {
		fmt.Fprintf(&b, "; read with the bundled %s", cellText(c.FoundBundled))
	}
	if c.Errors+c.Warnings > 0 {
		var parts []string
		if c.Errors > 0 {
			parts = append(parts, plural(c.Errors, "error"))
		}
		if c.Warnings > 0 {
			parts = append(parts, plural(c.Warnings, "warning"))
		}
		fmt.Fprintf(&b, "; %s, first: %s: %s; see diagnostics", strings.Join(parts, ", "), cellText(c.FirstAt), cellText(safetext.Cut(c.First, 160)))
	}
	b.WriteString(")")
	return b.String()
}

// removeDB removes a database file and what DuckDB keeps beside it.
func removeDB(path string) {
	os.Remove(path)
	os.Remove(path + ".wal")
	os.Remove(path + ".tmp") // DuckDB empties it at close
}

// runIngestParquet ingests each path into a scratch database and moves
// the run into the dataset at dir under a run_id claimed there
// (export.Writer: a job of the dataset, which first clears what dead jobs
// left).
func runIngestParquet(ctx context.Context, cmd *cobra.Command, dir string, paths []string, opt ingest.Options, summarize bool) error {
	if opt.Format != "" {
		if _, err := ingest.Lookup(opt.Format); err != nil {
			return &usageError{err}
		}
	}
	scratch, err := export.NewScratch("")
	if err != nil {
		return err
	}
	defer scratch.Close()
	db, err := openDB(ctx, filepath.Join(scratch.Dir, "run.duckdb"))
	if err != nil {
		return err
	}
	if !summarize {
		db.SetSummarize(nil)
	}
	defer db.Close()
	// The job of the dataset starts with the first run to write, so that a
	// trace that cannot be read leaves no folder behind.
	var w *export.Writer
	defer func() {
		if w != nil {
			w.Close()
		}
	}()
	force := opt.Force
	opt.Force = true // the scratch database is empty; the dataset is what may hold the file
	return ingestPaths(ctx, cmd, db, paths, opt, func(res ingest.Result, path string) error {
		if w == nil {
			if w, err = export.NewWriter(dir, testStopSteps(cmd.ErrOrStderr(), "parquet-step-")); err != nil {
				return err
			}
		}
		id, _, err := w.AddRun(ctx, db.SQL(), res.RunID, force)
		var dup *export.DuplicateError
		var busy *export.BusyError
		if errors.As(err, &dup) || errors.As(err, &busy) {
			return fmt.Errorf("%s: %v; --force ingests it again", path, err)
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(cmd.OutOrStdout(), "run %d: %s -> %s\n", id, ingestSummary(res, path), cellText(dir))
		return nil
	})
}

// ingestPaths ingests each path and hands its result to done.
func ingestPaths(ctx context.Context, cmd *cobra.Command, db *schema.DB, paths []string, opt ingest.Options, done func(ingest.Result, string) error) error {
	for _, path := range paths {
		o := opt
		if len(paths) > 1 && opt.Name != "" {
			o.Name = opt.Name + "-" + ingest.RunName(path)
		}
		bar := newProgress(cmd.ErrOrStderr(), path)
		o.Progress = bar.start
		o.BeforeCommit = testStopHook(cmd.ErrOrStderr(), "before-commit")
		res, err := ingest.Path(ctx, db, path, o)
		bar.stop()
		if err != nil {
			return ingestError(ctx, path, err)
		}
		testStopAt(cmd.ErrOrStderr(), "after-commit")
		if res.SummaryErr != nil {
			warnf(ctx, "%s: run %d is in, without its summary for traceduck report, which computes it instead: %v", path, res.RunID, res.SummaryErr)
		}
		if err := done(res, path); err != nil {
			return err
		}
	}
	return nil
}

// ingestError words the failure of one path. The ingesters' own messages
// already name the file (FILE:LINE: ...); others get the path in front.
func ingestError(ctx context.Context, path string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%s: interrupted; nothing of it was written", path)
	}
	if strings.Contains(err.Error(), "No space left on device") {
		// DuckDB's message says which file; the user also wants to know
		// that the database is as it was.
		return fmt.Errorf("%s: disk full, nothing of it was written: %w", path, err)
	}
	var ie *schema.InputError
	if errors.As(err, &ie) {
		return err // FILE:LINE: ... or FILE@OFFSET: ...
	}
	msg := err.Error()
	if strings.HasPrefix(msg, path+":") || (path == "-" && strings.HasPrefix(msg, "-:")) {
		return err
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		return err // "open PATH: ..."
	}
	return fmt.Errorf("%s: %w", path, err)
}

// progress shows a progress bar of one ingest on standard error, only
// when standard error is a terminal; piped, it prints nothing.
type progress struct {
	w    io.Writer
	name string
	tty  bool

	mu   sync.Mutex
	done chan struct{}
	wg   sync.WaitGroup
	bar  *progressbar.ProgressBar
}

func newProgress(w io.Writer, name string) *progress {
	tty := false
	if f, ok := w.(*os.File); ok {
		tty = term.IsTerminal(int(f.Fd()))
	}
	return &progress{w: w, name: cellText(name), tty: tty}
}

// start is ingest.Options.Progress: it polls how much of the source has
// been read until stop.
func (p *progress) start(src *ingest.Source) {
	if !p.tty {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done != nil {
		return
	}
	p.bar = progressbar.NewOptions64(src.Size,
		progressbar.OptionSetWriter(p.w),
		progressbar.OptionSetDescription(p.name),
		progressbar.OptionShowBytes(true),
		progressbar.OptionShowCount(),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionSpinnerType(14),
		progressbar.OptionClearOnFinish(),
	)
	p.done = make(chan struct{})
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-p.done:
				return
			case <-t.C:
				_ = p.bar.Set64(src.BytesRead())
			}
		}
	}()
}

// stop removes the bar, so that what follows starts on a clean line.
func (p *progress) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done == nil {
		return
	}
	close(p.done)
	p.wg.Wait()
	_ = p.bar.Clear()
	fmt.Fprint(p.w, "\r\033[K")
	p.done = nil
}
