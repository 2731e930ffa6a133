package main

import (
	"bytes"
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
	"sort"
	"strings"
	"time"

	"github.com/marcboeker/go-duckdb"
	"github.com/spf13/cobra"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/queries"
	"github.com/traceduck/traceduck/queries/align"
	"github.com/traceduck/traceduck/samples"
	"github.com/traceduck/traceduck/schema"
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
summary of what the database holds, and three example queries to try. The
two logs of a Baget system (machines that exchanged messages, their clocks
apart) are put on one clock, as traceduck align does.

Demo is meant to be run again: an existing file is recreated when demo made
it (demo writes a table traceduck_demo into it, counting the rows it wrote)
and it holds nothing else: no run, row, table, view or macro added since.
Any other file is left as it is and demo stops with an error. The new
database is built beside the file and takes its place at the end, so that
an interrupted demo leaves the file as it was.`,
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
	// The database is built beside dbPath and renamed over it at the end:
	// an interrupted demo leaves dbPath as it was, and an existing file
	// is replaced only when demo made it (checked before and again just
	// before the rename).
	build := dbPath
	if dbPath != memoryDB {
		if err := checkDemoDB(ctx, dbPath); err != nil {
			return err
		}
		tmp, err := os.MkdirTemp(filepath.Dir(dbPath), ".traceduck-demo-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		build = filepath.Join(tmp, "demo.duckdb")
	}
	db, err := openDB(ctx, build)
	if err != nil {
		return err
	}
	defer db.Close()

	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "Ingesting the bundled samples into %s\n", dbPath)
	var systems []string
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
		tags := [][2]string{{demoTag, s.Path}}
		if s.System != "" {
			tags = append(tags, [2]string{"system", s.System})
			if len(systems) == 0 || systems[len(systems)-1] != s.System {
				systems = append(systems, s.System)
			}
		}
		src := ingest.NewSource(name, f, size)
		testStopUntilDone(ctx, cmd.ErrOrStderr(), "demo-ingest")
		bar := newProgress(cmd.ErrOrStderr(), name)
		res, err := ingest.Opened(ctx, db, src, ingest.Options{
			Format:   s.Format,
			Name:     s.Name,
			Tags:     tags,
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
		fmt.Fprintf(out, "run %d: %s\n    %s\n", res.RunID, ingestSummary(res, name), s.Description)
	}
	// The machines of a system on one clock, as traceduck align does.
	for _, sys := range systems {
		clocks, err := align.System(ctx, db, sys, align.SystemOptions{})
		if err != nil {
			return err
		}
		if err := db.SetClocks(ctx, clocks); err != nil {
			return err
		}
		for _, c := range clocks {
			if c.Source == schema.ClockMessages {
				fmt.Fprintf(out, "system %s: run %d's clock aligned from %d messages: offset %d ns at %d, drift %.1f ppm (traceduck align --show --system %s)\n",
					sys, c.RunID, c.Sent+c.Received, c.OffsetNS, c.RefTS, c.DriftPPM, sys)
			}
		}
	}
	if err := writeDemoMarker(ctx, db.SQL()); err != nil {
		return err
	}

	// The summary is printed once the file is in place (a reader that
	// stops reading ends demo, and must not leave a half-made database).
	conn, err := db.SQL().Conn(ctx)
	if err != nil {
		return err
	}
	var summary bytes.Buffer
	err = demoSummary(ctx, conn, dbPath, &summary)
	conn.Close()
	if err != nil {
		return err
	}
	if build != dbPath {
		if err := db.Close(); err != nil { // checkpointed: no .wal is left
			return err
		}
		if err := replaceDemoDB(ctx, build, dbPath); err != nil {
			return err
		}
	}
	if _, err := summary.WriteTo(out); err != nil {
		return err
	}

	prog := commandName()
	fmt.Fprintf(out, "\nTry:\n")
	for _, q := range exampleQueries {
		fmt.Fprintf(out, "  # %s\n  %s query --db %s %s\n", q.what, prog, shellQuote(dbPath), sqlQuote(q.sql))
	}
	return nil
}

// demoMarker is the table demo writes into every database it makes, and
// nothing else writes: one row per table with the rows demo left in it.
// A file is demo's to recreate only when it has the marker, nothing
// besides what traceduck installs in every database, and the rows the
// marker counts, no more and no fewer (a run, an overhead session or a
// table of the user's added since is data demo must not delete).
const demoMarker = "traceduck_demo"

// writeDemoMarker records what demo wrote.
func writeDemoMarker(ctx context.Context, db *sql.DB) error {
	counts, err := tableRows(ctx, db)
	if err != nil {
		return err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "CREATE TABLE "+demoMarker+" (table_name VARCHAR, row_count BIGINT); "+
		"COMMENT ON TABLE "+demoMarker+" IS 'written by traceduck demo: the rows it wrote per table; demo recreates this database only while they are all it holds'"); err != nil {
		return err
	}
	for _, name := range sortedKeys(counts) {
		if _, err := tx.ExecContext(ctx, "INSERT INTO "+demoMarker+" VALUES (?, ?)", name, counts[name]); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// checkDemoDB refuses an existing path unless demo made it and it holds
// nothing demo did not write (demoMarker). It does not change the file.
func checkDemoDB(ctx context.Context, path string) error {
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s: is %s, not a database file", path, fileKind(st.Mode()))
	}
	refuse := func(found string) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%s: demo recreates only a database it made, and this file %s; remove it or choose another --db", path, found)
	}
	if st.Size() == 0 {
		return refuse("is empty")
	}
	connector, err := duckdb.NewConnector(path+"?access_mode=read_only", nil)
	if err != nil {
		return refuse(fmt.Sprintf("is not a DuckDB database it can read (%v)", strings.TrimPrefix(err.Error(), driverPrefix)))
	}
	file := sql.OpenDB(connector)
	defer file.Close()
	have, err := catalog(ctx, file)
	if err != nil {
		return refuse(fmt.Sprintf("is not a DuckDB database it can read (%v)", strings.TrimPrefix(err.Error(), driverPrefix)))
	}
	if !have["table main."+demoMarker] {
		return refuse("has no " + demoMarker + " table (the marker demo writes)")
	}
	ref, err := openDB(ctx, memoryDB) // what traceduck puts in every database
	if err != nil {
		return err
	}
	defer ref.Close()
	installed, err := catalog(ctx, ref.SQL())
	if err != nil {
		return err
	}
	for _, obj := range sortedKeys(have) {
		if !installed[obj] && obj != "table main."+demoMarker {
			return refuse("holds " + obj + ", which demo did not make")
		}
	}
	wrote := map[string]int64{}
	rows, err := file.QueryContext(ctx, "SELECT table_name, row_count FROM "+demoMarker)
	if err != nil {
		return err
	}
	for rows.Next() {
		var name string
		var n int64
		if err := rows.Scan(&name, &n); err != nil {
			rows.Close()
			return err
		}
		wrote[name] = n
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	counts, err := tableRows(ctx, file)
	if err != nil {
		return err
	}
	// runs first: the table a user knows.
	names := append([]string{"runs"}, sortedKeys(counts)...)
	for _, name := range names {
		n, w := counts[name], wrote[name]
		switch {
		case n == w:
		case name == "runs" && n > w:
			return refuse(fmt.Sprintf("holds %s that demo did not ingest", plural(n-w, "run")))
		default:
			return refuse(fmt.Sprintf("has %s in table %s where demo wrote %d", plural(n, "row"), name, w))
		}
	}
	return nil
}

// replaceDemoDB renames the database demo built over path, once path is
// checked again (it may have changed while demo ran).
func replaceDemoDB(ctx context.Context, built, path string) error {
	if err := checkDemoDB(ctx, path); err != nil {
		return err
	}
	// A write-ahead log beside the old file belongs to it; left there, it
	// would be replayed into the new one.
	if err := os.Remove(path + ".wal"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return os.Rename(built, path)
}

// catalog lists the objects of the database a client made: "KIND
// SCHEMA.NAME" for its tables, views, macros, sequences, types, indexes
// and schemas.
func catalog(ctx context.Context, db *sql.DB) (map[string]bool, error) {
	rows, err := db.QueryContext(ctx, `
		SELECT 'table ' || schema_name || '.' || table_name FROM duckdb_tables() WHERE NOT internal AND database_name = current_database()
		UNION ALL SELECT 'view ' || schema_name || '.' || view_name FROM duckdb_views() WHERE NOT internal AND database_name = current_database()
		UNION ALL SELECT 'macro ' || schema_name || '.' || function_name FROM duckdb_functions() WHERE function_type IN ('macro', 'table_macro') AND NOT internal AND database_name = current_database()
		UNION ALL SELECT 'sequence ' || schema_name || '.' || sequence_name FROM duckdb_sequences() WHERE database_name = current_database()
		UNION ALL SELECT 'type ' || schema_name || '.' || type_name FROM duckdb_types() WHERE NOT internal AND database_name = current_database()
		UNION ALL SELECT 'index ' || schema_name || '.' || index_name FROM duckdb_indexes() WHERE database_name = current_database()
		UNION ALL SELECT 'schema ' || schema_name FROM duckdb_schemas() WHERE NOT internal AND database_name = current_database() AND schema_name <> 'main'`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	objs := map[string]bool{}
	for rows.Next() {
		var obj string
		if err := rows.Scan(&obj); err != nil {
			return nil, err
		}
		objs[obj] = true
	}
	return objs, rows.Err()
}

// tableRows counts the rows of every table of the main schema but the
// demo marker and the report's summaries (derived from the runs, which a
// report may store again: no data of the user's).
func tableRows(ctx context.Context, db *sql.DB) (map[string]int64, error) {
	rows, err := db.QueryContext(ctx, `SELECT table_name FROM duckdb_tables()
		WHERE NOT internal AND database_name = current_database() AND schema_name = 'main' AND table_name <> '`+demoMarker+`'
		  AND NOT list_contains(`+queries.LiteralList(schema.ReportTables())+`, table_name)`)
	if err != nil {
		return nil, err
	}
	var names []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return nil, err
		}
		names = append(names, name)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	counts := map[string]int64{}
	for _, name := range names {
		var n int64
		if err := db.QueryRowContext(ctx, "SELECT count(*) FROM "+queries.Ident(name)).Scan(&n); err != nil {
			return nil, err
		}
		counts[name] = n
	}
	return counts, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
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
