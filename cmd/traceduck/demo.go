package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/marcboeker/go-duckdb"
	"github.com/spf13/cobra"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/samples"
)

// defaultDemoDB is where demo writes without --db.
const defaultDemoDB = "traceduck-demo.duckdb"

// demoTag is the tag every run demo ingests carries (its value is the
// sample's path); it is how demo knows a database it may recreate.
const demoTag = "sample"

// exampleQueries are the queries demo suggests; each must run on the demo
// database (the tests run them).
var exampleQueries = []struct{ what, sql string }{
	{"total running time per task, longest first",
		"SELECT run_id, object, total_ns FROM state_summary WHERE kind='task' AND state='running' ORDER BY total_ns DESC"},
	{"the most frequent events",
		"SELECT class, event, sum(count) AS count FROM event_counts GROUP BY class, event ORDER BY count DESC LIMIT 10"},
	{"the first state intervals of every object, in time order",
		"SELECT o.kind, o.name, s.state, s.start_ts, s.end_ts, s.dur FROM state_intervals s JOIN objects o USING (run_id, object_id) ORDER BY s.run_id, s.start_ts, o.name LIMIT 20"},
}

func newDemoCmd() *cobra.Command {
	var dbPath string
	cmd := &cobra.Command{
		Use:   "demo [--db FILE]",
		Short: "Ingest the bundled sample traces and show what SQL can ask of them",
		Long: `Demo ingests every sample trace bundled in the binary into a database
(default: ` + defaultDemoDB + ` in the current directory), prints a short
summary of what the database holds, and three example queries to try.

Demo is meant to be run again: when the file exists and holds only runs that
demo ingested, it is recreated. Any other existing file is left alone and
demo stops with an error.`,
		Example: `  traceduck demo
  traceduck demo --db /tmp/demo.duckdb`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDemo(cmd.Context(), cmd, dbPath)
		},
	}
	cmd.Flags().StringVar(&dbPath, "db", defaultDemoDB, "database file to (re)create")
	return cmd
}

func runDemo(ctx context.Context, cmd *cobra.Command, dbPath string) error {
	if dbPath == "" {
		return usagef("--db: empty file name")
	}
	if err := clearDemoDB(ctx, dbPath); err != nil {
		return err
	}
	db, err := openDB(ctx, dbPath)
	if err != nil {
		return err
	}
	defer db.Close()

	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "Ingesting the bundled samples into %s\n", dbPath)
	for _, s := range samples.List() {
		f, err := samples.FS.Open(s.Path)
		if err != nil {
			return err
		}
		size := int64(-1)
		if st, err := f.Stat(); err == nil {
			size = st.Size()
		}
		name := "samples/" + s.Path
		params, cleanup, err := sampleParams(s.Params)
		if err != nil {
			f.Close()
			return err
		}
		src := ingest.NewSource(name, f, size)
		bar := newProgress(cmd.ErrOrStderr(), name)
		res, err := ingest.Opened(ctx, db, src, ingest.Options{
			Format:   s.Format,
			Name:     s.Name,
			Tags:     [][2]string{{demoTag, s.Path}},
			Force:    true,
			Progress: bar.start,
			Params:   params,
		})
		bar.stop()
		f.Close()
		cleanup()
		if err != nil {
			return ingestError(ctx, name, err)
		}
		fmt.Fprintf(out, "run %d: %s (%s, %d events)\n    %s\n", res.RunID, name, res.Format, res.Events, s.Description)
	}

	conn, err := db.SQL().Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := demoSummary(ctx, conn, dbPath, out); err != nil {
		return err
	}

	prog := commandName()
	fmt.Fprintf(out, "\nTry:\n")
	for _, q := range exampleQueries {
		fmt.Fprintf(out, "  # %s\n  %s query --db %s %s\n", q.what, prog, shellQuote(dbPath), sqlQuote(q.sql))
	}
	return nil
}

// clearDemoDB removes an earlier demo database at path, and refuses to
// touch a file that holds anything else.
func clearDemoDB(ctx context.Context, path string) error {
	if path == memoryDB {
		return nil
	}
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if st.IsDir() {
		return fmt.Errorf("%s: is a directory", path)
	}
	if st.Size() > 0 {
		others, err := nonDemoRuns(ctx, path)
		if err != nil {
			return fmt.Errorf("%s exists and is not a traceduck demo database (%v); remove it or choose another --db", path, err)
		}
		if others > 0 {
			return fmt.Errorf("%s exists and holds %s that demo did not ingest; remove it or choose another --db", path, plural(others, "run"))
		}
	}
	if err := os.Remove(path); err != nil {
		return err
	}
	if err := os.Remove(path + ".wal"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// nonDemoRuns counts the runs of the database at path that demo did not
// ingest, without changing the file.
func nonDemoRuns(ctx context.Context, path string) (int64, error) {
	connector, err := duckdb.NewConnector(path+"?access_mode=read_only", nil)
	if err != nil {
		return 0, err
	}
	db := sql.OpenDB(connector)
	defer db.Close()
	var n int64
	err = db.QueryRowContext(ctx, "SELECT count(*) FROM runs WHERE tags->>'"+demoTag+"' IS NULL").Scan(&n)
	return n, err
}

// demoSummary prints what the demo database holds.
func demoSummary(ctx context.Context, conn *sql.Conn, dbPath string, out io.Writer) error {
	// The runs, with their duration in readable units.
	runs := &collectWriter{}
	err := queryTo(ctx, conn, `SELECT r.run_id AS run, r.name, r.format, r.event_count AS events,
		(SELECT count(*) FROM objects o WHERE o.run_id = r.run_id) AS objects,
		r.last_ts - r.first_ts AS duration
		FROM runs r ORDER BY r.run_id`, runs)
	if err != nil {
		return err
	}
	for _, r := range runs.rows {
		if ns, ok := r[5].(int64); ok {
			r[5] = roundDuration(time.Duration(ns)).String()
		}
	}
	runs.cols[5].Type = "VARCHAR"
	fmt.Fprintf(out, "\nRuns in %s:\n", dbPath)
	if err := runs.writeTo(&gridWriter{w: out}); err != nil {
		return err
	}

	fmt.Fprintf(out, "\nMost frequent events (view event_counts):\n")
	err = queryTo(ctx, conn, `SELECT run_id AS run, class, event, count FROM event_counts
		ORDER BY count DESC, run_id, class, event LIMIT 8`, &gridWriter{w: out})
	if err != nil {
		return err
	}

	fmt.Fprintf(out, "\nLongest total time in a state (view state_summary, truncated intervals left out):\n")
	return queryTo(ctx, conn, `SELECT run_id AS run, kind, object, state, count, total_ns, max_ns FROM state_summary
		ORDER BY total_ns DESC, run_id, kind, object, state LIMIT 8`, &gridWriter{w: out})
}

// roundDuration keeps about six significant digits.
func roundDuration(d time.Duration) time.Duration {
	switch {
	case d >= 1000*time.Second:
		return d.Round(time.Second)
	case d >= time.Second:
		return d.Round(time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(time.Microsecond)
	}
	return d
}

// collectWriter keeps a result in memory.
type collectWriter struct {
	cols []column
	rows [][]any
}

func (c *collectWriter) begin(cols []column) error { c.cols = cols; return nil }
func (c *collectWriter) row(vals []any) error {
	c.rows = append(c.rows, append([]any(nil), vals...))
	return nil
}
func (c *collectWriter) end() error { return nil }

func (c *collectWriter) writeTo(w resultWriter) error {
	if err := w.begin(c.cols); err != nil {
		return err
	}
	for _, r := range c.rows {
		if err := w.row(r); err != nil {
			return err
		}
	}
	return w.end()
}

// commandName is how the user runs this traceduck, for command lines to
// paste: "go run ./cmd/traceduck" under go run, "traceduck" when that is
// this program on PATH, the executable's path otherwise.
func commandName() string {
	exe, err := os.Executable()
	if err != nil {
		return "traceduck"
	}
	if strings.Contains(filepath.ToSlash(exe), "/go-build") {
		return "go run ./cmd/traceduck"
	}
	if p, err := exec.LookPath("traceduck"); err == nil {
		a, err1 := os.Stat(p)
		b, err2 := os.Stat(exe)
		if err1 == nil && err2 == nil && os.SameFile(a, b) {
			return "traceduck"
		}
	}
	return shellQuote(exe)
}

var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_./:=@%+,-]+$`)

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// sqlQuote quotes a SQL text for a POSIX shell, in double quotes when
// nothing in it is special there (SQL strings use single quotes).
func sqlQuote(s string) string {
	if !strings.ContainsAny(s, "\"$`\\!") {
		return `"` + s + `"`
	}
	return shellQuote(s)
}

// sampleParams writes the files a sample's format flags name (TLV's
// resource file, rules and headers, embedded in the binary) to a
// temporary directory, since formats take their flags as paths.
func sampleParams(files map[string]string) (map[string]string, func(), error) {
	if len(files) == 0 {
		return nil, func() {}, nil
	}
	dir, err := os.MkdirTemp("", "traceduck-demo-")
	if err != nil {
		return nil, nil, err
	}
	cleanup := func() { os.RemoveAll(dir) }
	params := map[string]string{}
	for flag, name := range files {
		data, err := samples.FS.ReadFile(name)
		if err != nil {
			cleanup()
			return nil, nil, err
		}
		p := filepath.Join(dir, filepath.Base(name))
		if err := os.WriteFile(p, data, 0o644); err != nil {
			cleanup()
			return nil, nil, err
		}
		params[flag] = p
	}
	return params, cleanup, nil
}
