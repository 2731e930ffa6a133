// Package dbtest helps tests of ingesters: a temporary database with the
// views installed, ingesting files into it, and dumping tables as text for
// golden files.
package dbtest

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/queries"
	"github.com/traceduck/traceduck/schema"
)

// Update is the -update flag: regenerate golden files instead of comparing.
var Update = flag.Bool("update", false, "rewrite golden files")

// AllCallsEnv names the environment variable that makes the sampled
// checks run everywhere: TRACEDUCK_ALL_CALLS=1 go test ./... runs every
// comparison with a reference on every database (Sampled, and the
// samplers of the queries tests).
const AllCallsEnv = "TRACEDUCK_ALL_CALLS"

// Sampled tells whether the sampled checks run in this test: with
// TRACEDUCK_ALL_CALLS set always, else in one test in three, chosen by a
// hash of its name (the same tests from run to run).
func Sampled(t testing.TB) bool {
	return os.Getenv(AllCallsEnv) != "" || slot(t) == 0
}

// Calls returns the calls a check runs in this test: all of them with
// TRACEDUCK_ALL_CALLS set (or fewer than three), else every third from
// the test's slot, so that tests of different names run different thirds.
func Calls(t testing.TB, all []string) []string {
	if os.Getenv(AllCallsEnv) != "" || len(all) < 3 {
		return all
	}
	var out []string
	for i := slot(t); i < len(all); i += 3 {
		out = append(out, all[i])
	}
	return out
}

// slot is the test's third, 0, 1 or 2, by a hash of its name.
func slot(t testing.TB) int {
	h := fnv.New32a()
	h.Write([]byte(t.Name()))
	return int(h.Sum32() % 3)
}

// Open returns a new database in a temporary directory, with the views
// installed and a checked Arrow allocator that the test asserts is empty at
// the end. At the end the test also checks that the JSON columns hold
// JSON and, when Sampled, that the rows written at ingest for the views
// (scheduling, merged levels, level map, eco-tree nodes) are those of
// their SQL references: a net under every test's database, sampled
// because the references cost about 1 CPU-second per database, most of
// the time of the tests that make many small ones (the tests that
// compare them deliberately, queries' TestIngestRows* and
// TestSchedRowsEveryFormat, run whatever the sampling).
func Open(t testing.TB) *schema.DB {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "test.duckdb")
	tmpl, err := emptyDatabase()
	if err == nil {
		err = os.WriteFile(path, tmpl, 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
	db, err := schema.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := queries.Install(ctx, db.SQL()); err != nil {
		t.Fatal(err)
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	db.SetAllocator(mem)
	t.Cleanup(func() {
		mem.AssertSize(t, 0)
		checkJSON(t, db.SQL())
		if Sampled(t) && hasRuns(t, db.SQL()) {
			CheckSched(t, db.SQL())
			CheckLevels(t, db.SQL())
			CheckLevelMap(t, db.SQL())
			CheckEco(t, db.SQL(), "'ceo', sort_by := 'count'")
		}
		db.Close()
	})
	return db
}

// emptyDatabase returns the bytes of a new database with the tables and
// the views, made once per test process: a copy opens in about half the
// time it takes to create one (the tables and about 130 views and
// macros), for tests that make hundreds. (schema's and cmd/traceduck's
// tests create theirs.)
var emptyDatabase = sync.OnceValues(func() ([]byte, error) {
	dir, err := os.MkdirTemp("", "dbtest-empty-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "empty.duckdb")
	db, err := schema.Open(context.Background(), path)
	if err != nil {
		return nil, err
	}
	err = queries.Install(context.Background(), db.SQL())
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(path + ".wal"); err == nil {
		return nil, fmt.Errorf("dbtest: the empty database kept a write-ahead log after it was closed")
	}
	return os.ReadFile(path)
})

// hasRuns tells whether the database holds a run (a test of a failed
// ingest may leave none: nothing to compare).
func hasRuns(t testing.TB, db *sql.DB) bool {
	var n int64
	if err := db.QueryRow("SELECT count(*) FROM runs").Scan(&n); err != nil {
		t.Errorf("count the runs: %v", err)
		return false
	}
	return n > 0
}

// checkJSON asserts that every value of every JSON column is valid JSON:
// batches reach DuckDB marked as JSON and are not parsed on the way in.
func checkJSON(t testing.TB, db *sql.DB) {
	t.Helper()
	for table, cols := range map[string][]string{"runs": {"meta", "tags"}, "objects": {"attrs"}, "events": {"args"}, "aggregations": {"keys"}, "histograms": {"keys"}} {
		for _, c := range cols {
			var bad int64
			if err := db.QueryRow("SELECT count(*) FROM " + table + " WHERE " + c + " IS NOT NULL AND NOT json_valid(" + c + ")").Scan(&bad); err != nil {
				t.Errorf("check %s.%s: %v", table, c, err)
			} else if bad > 0 {
				t.Errorf("%s.%s: %d values are not valid JSON", table, c, bad)
			}
		}
	}
}

// Ingest ingests a file and fails the test on error.
func Ingest(t testing.TB, db *schema.DB, path string, opt ingest.Options) ingest.Result {
	t.Helper()
	res, err := ingest.Path(context.Background(), db, path, opt)
	if err != nil {
		t.Fatalf("ingest %s: %v", path, err)
	}
	if res.SummaryErr != nil {
		t.Fatalf("ingest %s: the run's summary: %v", path, res.SummaryErr)
	}
	return res
}

// Query runs q and returns the rows as text: one line per row, values
// separated by " | ", NULL as NULL.
func Query(t testing.TB, db *sql.DB, q string, args ...any) string {
	t.Helper()
	rows, err := db.Query(q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		for i, v := range vals {
			if i > 0 {
				b.WriteString(" | ")
			}
			b.WriteString(format(v))
		}
		b.WriteByte('\n')
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func format(v any) string {
	switch v := v.(type) {
	case nil:
		return "NULL"
	case []byte:
		return string(v)
	case float64:
		return fmt.Sprintf("%g", v)
	default:
		return fmt.Sprint(v)
	}
}

// order is how each table is listed in a dump.
var order = map[string]string{
	schema.TableRuns:              "run_id",
	schema.TableObjects:           "run_id, object_id",
	schema.TableEvents:            "run_id, seq",
	schema.TableEcoTriples:        "run_id, eco_id",
	schema.TableStateIntervals:    "run_id, object_id, instance, start_ts, start_seq",
	schema.TableStateLevels:       "run_id, kind, level, state",
	schema.TableDiagnostics:       "run_id, src_line, message",
	schema.TableAggregations:      "run_id, src_line",
	schema.TableHistograms:        "run_id, src_line",
	schema.TableResourceIntervals: "run_id, resource_id, relation, actor_id, start_ts, start_seq",
	schema.TableMessages:          "run_id, coalesce(send_seq, receive_seq, reply_seq), receive_seq, reply_seq",
	schema.TablePriorityIntervals: "run_id, object_id, start_ts, start_seq",
	schema.TableClocks:            "run_id",
	// The report's summaries (optional: an ingest of dbtest writes none).
	schema.TableReportSummaries:   "run_id",
	schema.TableReportValues:      "run_id, metric, key",
	schema.TableReportBuckets:     "run_id, what, object, bucket",
	schema.TableReportObjects:     "run_id, rank",
	schema.TableReportStates:      "run_id, object, class",
	schema.TableReportDiagnostics: "run_id, rank",
	schema.TableReportCPULoad:     "run_id, cpu, t_ns",
}

// optional lists the tables that only some formats fill: a dump shows them
// only when they hold rows, so that the golden files of the other formats
// do not change when such a table is added.
var optional = map[string]bool{
	schema.TableAggregations:      true,
	schema.TableHistograms:        true,
	schema.TableResourceIntervals: true,
	schema.TableMessages:          true,
	schema.TablePriorityIntervals: true,
	schema.TableClocks:            true,
	schema.TableReportSummaries:   true,
	schema.TableReportValues:      true,
	schema.TableReportBuckets:     true,
	schema.TableReportObjects:     true,
	schema.TableReportStates:      true,
	schema.TableReportDiagnostics: true,
	schema.TableReportCPULoad:     true,
}

// Dump returns every table's content as text, for golden files. Columns
// that change from one ingest to the next (ingested_at, sha256, source)
// are left out of runs. The tables computed from the others at ingest
// (schema.DerivedTables: the scheduling rows, the merged levels) are not
// dumped: they are not what the trace says, and Open checks them against
// their reference SQL in every test.
func Dump(t testing.TB, db *sql.DB) string {
	t.Helper()
	var b strings.Builder
	derived := map[string]bool{}
	for _, table := range schema.DerivedTables() {
		derived[table] = true
	}
	for _, table := range schema.TableNames() {
		if derived[table] {
			continue
		}
		cols := schema.Columns(table)
		if table == schema.TableRuns {
			var keep []string
			for _, c := range cols {
				if c != "ingested_at" && c != "sha256" && c != "source" {
					keep = append(keep, c)
				}
			}
			cols = keep
		}
		rows := Query(t, db, "SELECT "+strings.Join(cols, ", ")+" FROM "+table+" ORDER BY "+order[table])
		if rows == "" && optional[table] {
			continue
		}
		fmt.Fprintf(&b, "-- %s: %s\n", table, strings.Join(cols, " | "))
		b.WriteString(rows)
		b.WriteByte('\n')
	}
	return b.String()
}

// Golden compares got with the golden file (or rewrites it with -update).
func Golden(t testing.TB, path, got string) {
	t.Helper()
	if *Update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs (run with -update to accept, then review the diff):\n%s", path, Diff(string(want), got))
	}
}

// Diff shows the first lines (up to 20) where two texts differ.
func Diff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	shown := 0
	for i := 0; i < max(len(w), len(g)) && shown < 20; i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			fmt.Fprintf(&b, "line %d:\n  want: %s\n   got: %s\n", i+1, wl, gl)
			shown++
		}
	}
	return b.String()
}

// BadThenSkipped writes data to a file named name in a temporary
// directory and checks the two ways a bad input is read: without
// --skip-bad the ingest stops with want (the file's path shortened to
// name), and with it the run holds events events and want as its one
// error diagnostic. It returns the database holding that run.
func BadThenSkipped(t *testing.T, name string, data []byte, want string, events int64) *schema.DB {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	db := Open(t)
	_, err := ingest.Path(context.Background(), db, path, ingest.Options{})
	if err == nil || name+strings.TrimPrefix(err.Error(), path) != want {
		t.Fatalf("error\n got %v\nwant %s", err, want)
	}
	res := Ingest(t, db, path, ingest.Options{SkipBad: true})
	if res.Events != events {
		t.Errorf("--skip-bad: %d events, want %d", res.Events, events)
	}
	msg := strings.TrimPrefix(want, name+":")
	if got := Query(t, db.SQL(), "SELECT src_line || ': ' || message FROM diagnostics WHERE severity = 'error'"); got != msg+"\n" {
		t.Errorf("--skip-bad diagnostics\n got %s\nwant %s", got, msg)
	}
	return db
}

// QueryCounts runs a query of (name, number) rows and returns them as a
// map (the shape of the truth tests' comparisons with a generator).
func QueryCounts(t testing.TB, db *sql.DB, q string, args ...any) map[string]int64 {
	t.Helper()
	rows, err := db.Query(q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	m := map[string]int64{}
	for rows.Next() {
		var k string
		var v int64
		if err := rows.Scan(&k, &v); err != nil {
			t.Fatal(err)
		}
		m[k] = v
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return m
}

// QueryLines returns the rows of q, values joined by " | " (Query), one
// string per row; nil when there is none.
func QueryLines(t testing.TB, db *sql.DB, q string) []string {
	t.Helper()
	text := Query(t, db, q)
	if text == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(text, "\n"), "\n")
}
