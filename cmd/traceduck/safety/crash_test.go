//go:build linux

package safety_test

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"github.com/traceduck/traceduck/internal/clitest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "github.com/marcboeker/go-duckdb"

	"github.com/traceduck/traceduck/internal/tracegen"
	"github.com/traceduck/traceduck/queries"
	"github.com/traceduck/traceduck/schema"
)

// crashLongEnv set to 1 makes TestCrashSafeIngest ingest a larger trace
// and kill it at many more points (a few minutes instead of ~30 s).
const crashLongEnv = "TRACEDUCK_CRASH_LONG"

// TestCrashSafeIngest kills `traceduck ingest` of a large generated BTF
// trace with SIGKILL at several points: as it opens the database, as it
// opens the trace, during the batches (at fractions of the trace read),
// with the run written but not committed, committed but the database not
// closed (not checkpointed), and at fractions of the time a complete
// ingest spends after it has read the whole trace (last batches, COMMIT,
// the checkpoint at close). After each kill the database opens, holds
// exactly the runs committed before (every table compared row by row
// through a hash), the library of views and macros is whole (every view
// and macro answers after the first run, the kills around COMMIT and the
// last kill; after every kill with TRACEDUCK_CRASH_LONG=1), and the same ingest,
// started again, gets past the point where the last one died; the ingest
// that completes holds as many events as the generator wrote.
func TestCrashSafeIngest(t *testing.T) {
	if _, err := os.Stat("/proc/self/fdinfo"); err != nil {
		t.Skip("needs /proc to watch the ingest's progress")
	}
	long := os.Getenv(crashLongEnv) == "1"
	events, fractions, tails := 500_000, []float64{0.3, 0.7}, []float64{0.5}
	if long {
		events = 4_000_000
		fractions = []float64{0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.97}
		tails = []float64{0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95}
	}
	dir := t.TempDir()
	trace := filepath.Join(dir, "big.btf")
	truth := writeBigBTF(t, trace, events)
	st, err := os.Stat(trace)
	if err != nil {
		t.Fatal(err)
	}
	size := st.Size()
	db := filepath.Join(dir, "crash.duckdb")

	// 1. One small run committed before any kill.
	clitest.MustRun(t, dir, nil, "ingest", "--db", db, clitest.SeedSample)
	c := &crashCheck{t: t, dir: dir, db: db, long: long}
	c.commit(1)
	c.checkAll("after the first run")

	ingestArgs := []string{"ingest", "--db", db, "--name", "big", trace}

	// 2. Killed before anything of the trace is read.
	p := clitest.Start(t, dir, "", nil, ingestArgs...)
	p.WaitFor("the database to be opened", func() bool { return p.HasOpen(db) })
	p.Kill()
	c.check("killed as it opened the database")

	p = clitest.Start(t, dir, "", nil, ingestArgs...)
	p.WaitFor("the trace to be opened", func() bool { return p.HasOpen(trace) })
	p.Kill()
	c.check("killed as it opened the trace")

	// 3. Killed during the batches. The trace is read twice: once to hash
	// it (a second descriptor, closed before parsing), then to parse it
	// through the descriptor opened first.
	for _, f := range fractions {
		p = clitest.Start(t, dir, "", nil, ingestArgs...)
		at := int64(f * float64(size))
		p.WaitFor(fmt.Sprintf("%.0f%% of the trace to be parsed", 100*f), func() bool {
			pos, n := p.TracePos(trace)
			return n == 1 && pos >= at
		})
		p.Kill()
		c.check(fmt.Sprintf("killed at %.0f%% of the batches", 100*f))
	}

	// 4. Killed with the whole run written in its transaction.
	p = clitest.Start(t, dir, "before-commit", nil, ingestArgs...)
	p.WaitStopped()
	p.Kill()
	c.checkAll("killed before COMMIT")

	// 5. Killed after COMMIT, before the database was closed: the run is
	// there, whole, and the same file is then refused as a duplicate.
	p = clitest.Start(t, dir, "after-commit", nil, ingestArgs...)
	p.WaitStopped()
	p.Kill()
	c.commit(2)
	c.checkAll("killed after COMMIT")
	c.wholeRun(2, truth.Lines)
	r := clitest.Td(t, dir, ingestArgs...)
	clitest.ExpectExit(t, r, 1, "big.btf: already ingested as run 2 (big, sha256 ")

	// 6. A complete ingest of the same file again (--force), timed from
	// the moment the whole trace has been read to the end of the process.
	forceArgs := []string{"ingest", "--db", db, "--force", "--name", "big", trace}
	p = clitest.Start(t, dir, "", nil, forceArgs...)
	var readAll time.Time
	p.WaitFor("the whole trace to be read", func() bool {
		pos, n := p.TracePos(trace)
		return n == 1 && pos == size
	})
	readAll = time.Now()
	if r := p.Wait(); r.Code != 0 {
		t.Fatalf("ingest --force: %s", r)
	}
	tail := time.Since(readAll)
	t.Logf("after the trace was read, the ingest took %v more (last batches, COMMIT, checkpoint)", tail)
	c.commit(3)
	c.check("after a complete ingest")
	c.wholeRun(3, truth.Lines)
	c.sameRun(2, 3)

	// 7. Killed at fractions of that tail: whether it died before or
	// after COMMIT, the run is there whole or not at all.
	next := int32(4)
	for i, f := range tails {
		p = clitest.Start(t, dir, "", nil, forceArgs...)
		p.WaitFor("the whole trace to be read", func() bool {
			pos, n := p.TracePos(trace)
			return n == 1 && pos == size
		})
		time.Sleep(time.Duration(f * float64(tail)))
		p.KillOrDone()
		if c.has(next) {
			c.commit(next)
			c.wholeRun(next, truth.Lines)
			c.sameRun(2, next)
			t.Logf("killed at %.0f%% of the tail: run %d had been committed", 100*f, next)
			next++
		} else {
			t.Logf("killed at %.0f%% of the tail: nothing committed", 100*f)
		}
		when := fmt.Sprintf("killed at %.0f%% of the time after the trace was read", 100*f)
		if i == len(tails)-1 {
			c.checkAll(when)
		} else {
			c.check(when)
		}
	}
}

// writeBigBTF writes a generated BTF trace of about n events.
func writeBigBTF(t *testing.T, path string, n int) tracegen.Truth {
	t.Helper()
	return writeBigBTFSeed(t, path, n, 11)
}

// writeBigBTFSeed is writeBigBTF with the generator's seed.
func writeBigBTFSeed(t *testing.T, path string, n int, seed int64) tracegen.Truth {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	truth, err := tracegen.WriteBTF(w, tracegen.Config{Events: n, Cores: 4, Tasks: 12, Seed: seed})
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	return truth
}

// crashCheck knows which runs the database must hold and what each held
// when it was committed.
type crashCheck struct {
	t       *testing.T
	long    bool // TRACEDUCK_CRASH_LONG=1: every check runs every view
	dir, db string
	runs    []int32
	prints  map[int32]map[string]string // run -> table -> rows and row hash
}

// commit records run as committed, with the contents it has now.
func (c *crashCheck) commit(run int32) {
	c.t.Helper()
	c.runs = append(c.runs, run)
	if c.prints == nil {
		c.prints = map[int32]map[string]string{}
	}
	c.withDB(func(db *sql.DB) { c.prints[run] = fingerprint(c.t, db, run) })
}

// has reports whether the database holds run.
func (c *crashCheck) has(run int32) bool {
	c.t.Helper()
	got := clitest.Scalar(c.t, c.dir, c.db, fmt.Sprintf("SELECT count(*) FROM runs WHERE run_id = %d", run))
	return got != "0"
}

// withDB opens the database with DuckDB alone (not through traceduck) and
// closes it after fn, so that the next traceduck can lock it.
func (c *crashCheck) withDB(fn func(*sql.DB)) {
	c.t.Helper()
	db, err := sql.Open("duckdb", c.db)
	if err != nil {
		c.t.Fatal(err)
	}
	defer db.Close()
	fn(db)
}

// check opens the database through traceduck, then checks that it holds
// exactly the committed runs, each as it was committed, that no table
// holds rows of any other run, and that the library of views and macros
// is installed whole (queries.Installed). With TRACEDUCK_CRASH_LONG=1 it
// also runs every view and macro, as checkAll does.
func (c *crashCheck) check(when string) {
	c.t.Helper()
	c.checkTables(when, c.long)
}

// checkAll is check, and every view and macro answers (checkViewsAnswer:
// about 130 queries over every run, the most costly part of a check; the
// tables equal to a committed state and the library whole, the views
// answer as they did then).
func (c *crashCheck) checkAll(when string) {
	c.t.Helper()
	c.checkTables(when, true)
}

func (c *crashCheck) checkTables(when string, views bool) {
	c.t.Helper()
	r := clitest.Td(c.t, c.dir, "query", "--db", c.db, "--output", "csv", "SELECT run_id FROM runs ORDER BY run_id")
	if r.Code != 0 {
		c.t.Fatalf("%s: the database does not open: %s", when, r)
	}
	var want strings.Builder
	want.WriteString("run_id\r\n")
	for _, id := range c.runs {
		fmt.Fprintf(&want, "%d\r\n", id)
	}
	if r.Stdout != want.String() {
		c.t.Fatalf("%s: runs %q, want %q", when, r.Stdout, want.String())
	}
	c.withDB(func(db *sql.DB) {
		for _, table := range runTables(c.t, db) {
			var stray int64
			q := fmt.Sprintf("SELECT count(*) FROM %s WHERE run_id NOT IN (%s)", table, joinIDs(c.runs))
			if err := db.QueryRow(q).Scan(&stray); err != nil {
				c.t.Fatalf("%s: %s: %v", when, q, err)
			}
			if stray != 0 {
				c.t.Errorf("%s: %s holds %d rows of runs never committed", when, table, stray)
			}
		}
		for _, id := range c.runs {
			got := fingerprint(c.t, db, id)
			for table, w := range c.prints[id] {
				if got[table] != w {
					c.t.Errorf("%s: run %d in %s: %s, want %s as committed", when, id, table, got[table], w)
				}
			}
		}
		if ok, err := queries.Installed(context.Background(), db); err != nil || !ok {
			c.t.Errorf("%s: the views and macros are not all installed (%v)", when, err)
		}
		if views {
			checkViewsAnswer(c.t, db, when)
		}
	})
}

// wholeRun checks that run holds every event of the trace.
func (c *crashCheck) wholeRun(run int32, events int) {
	c.t.Helper()
	c.withDB(func(db *sql.DB) {
		var n, count int64
		if err := db.QueryRow("SELECT (SELECT count(*) FROM events WHERE run_id = $1), (SELECT event_count FROM runs WHERE run_id = $1)", run).Scan(&n, &count); err != nil {
			c.t.Fatal(err)
		}
		if n != int64(events) || count != int64(events) {
			c.t.Errorf("run %d: %d events, event_count %d, want %d (the generator's lines)", run, n, count, events)
		}
	})
}

// sameRun checks that runs a and b (the same file) have as many rows in
// every table.
func (c *crashCheck) sameRun(a, b int32) {
	c.t.Helper()
	// The report's summary is written after the run's COMMIT, in a
	// transaction of its own (docs/report.md, "Scale"): a run killed then
	// has none, in any of its tables, and the report computes it.
	noSummary := strings.HasPrefix(c.prints[b][schema.TableReportSummaries], "0 rows")
	report := map[string]bool{}
	for _, table := range schema.ReportTables() {
		report[table] = true
	}
	for table, fa := range c.prints[a] {
		na, _, _ := strings.Cut(fa, " rows")
		nb, _, _ := strings.Cut(c.prints[b][table], " rows")
		switch {
		case report[table] && noSummary:
			if nb != "0" {
				c.t.Errorf("%s: run %d has %s rows without a row in %s: half a summary", table, b, nb, schema.TableReportSummaries)
			}
		case na != nb:
			c.t.Errorf("%s: run %d has %s rows, run %d (the same file) %s", table, a, na, b, nb)
		}
	}
}

func joinIDs(ids []int32) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.Itoa(int(id))
	}
	return strings.Join(s, ", ")
}

// runTables lists the base tables that have a run_id column.
func runTables(t *testing.T, db *sql.DB) []string {
	t.Helper()
	rows, err := db.Query(`SELECT c.table_name FROM duckdb_columns() c JOIN duckdb_tables() t USING (database_name, schema_name, table_name)
		WHERE c.column_name = 'run_id' AND NOT t.internal ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(names) < 7 {
		t.Fatalf("only %d tables with run_id: %v", len(names), names)
	}
	return names
}

// fingerprint is, per table, the number of rows of run and the sum of
// their hashes: equal fingerprints mean equal rows.
func fingerprint(t *testing.T, db *sql.DB, run int32) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, table := range runTables(t, db) {
		var n int64
		var sum string
		q := fmt.Sprintf("SELECT count(*), coalesce(sum(hash(x)::HUGEINT), 0)::VARCHAR FROM %s AS x WHERE run_id = $1", table)
		if err := db.QueryRow(q, run).Scan(&n, &sum); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		out[table] = fmt.Sprintf("%d rows, hash %s", n, sum)
	}
	return out
}

// macroCalls is a representative call of each macro of queries/*.sql.
// A macro missing here is called with NULL for every argument, which
// proves at least that its body binds.
var macroCalls = map[string]string{
	"bucket_label":                 "SELECT bucket_label(1000000, 0, 1000000)",
	"clock_aligned":                "SELECT clock_aligned(1000::BIGINT, 10::BIGINT, 50.0, 0::BIGINT)",
	"cpu_load":                     "SELECT count(*) FROM cpu_load(10000000, run := 1)",
	"cpu_load_by_holder":           "SELECT count(*) FROM cpu_load_by_holder(10000000, run := 1)",
	"durations_between_events":     "SELECT count(*) FROM durations_between_events('activate', 'terminate', by_instance := true, run := 1)",
	"durations_in_state":           "SELECT count(*) FROM durations_in_state('running', run := 1)",
	"durations_in_state_level":     "SELECT count(*) FROM durations_in_state_level('busy', -1, run := 1)",
	"hist_state_levels":            "SELECT count(*) FROM hist_state_levels('busy', run := 1)",
	"hist_state_names":             "SELECT count(*) FROM hist_state_names(1, run := 1)",
	"eco_marks":                    "SELECT count(*) FROM eco_marks(['event=T:start&context=Core_*'], ['all'])",
	"eco_selection":                "SELECT count(*) FROM eco_selection(['event=T:start'], ['context=Core_1']) WHERE run_id = 1",
	"eco_tree":                     "SELECT count(*) FROM eco_tree('eco') WHERE run_id = 1 AND depth <= 3",
	"eco_tree_reference":           "SELECT count(*) FROM eco_tree_reference('coe', sort_by := 'count', unstored := true) WHERE run_id = 1",
	"eco_tree_window":              "SELECT count(*) FROM eco_tree_window('eco', 0, 10000000) WHERE run_id = 1",
	"edges_bucket":                 "SELECT edges_bucket(50000, [0, 10000, 100000, 1000000])",
	"edges_check":                  "SELECT edges_check([0, 10000, 100000])",
	"hist_check":                   "SELECT count(*) FROM hist_check(NULL)",
	"hist_edges":                   "SELECT count(*) FROM hist_edges('SELECT dur AS value FROM state_intervals WHERE run_id = 1', [0, 10000, 100000, 1000000])",
	"hist_input":                   "SELECT count(*) FROM hist_input('SELECT 2.5 AS value')",
	"hist_linear":                  "SELECT count(*) FROM hist_linear('SELECT dur AS value FROM state_intervals WHERE run_id = 1', 10)",
	"hist_llquantize":              "SELECT count(*) FROM hist_llquantize('SELECT dur AS value FROM state_intervals WHERE run_id = 1', 10, 3, 9, 10)",
	"hist_lquantize":               "SELECT count(*) FROM hist_lquantize('SELECT dur / 1000 AS value FROM state_intervals WHERE run_id = 1', 0, 100, 10)",
	"hist_quantize":                "SELECT count(*) FROM hist_quantize('FROM durations_in_state(''running'', object_kind := ''task'', run := 1)')",
	"intervals_in_bucket":          "SELECT count(*) FROM intervals_in_bucket('running', 0, 1000000, run := 1)",
	"interval_intersect":           "WITH a AS (FROM state_intervals WHERE run_id = 1), b AS (FROM cpu_intervals WHERE run_id = 1) SELECT count(*) FROM interval_intersect('a', 'b')",
	"intervals_overlapping":        "SELECT count(*) FROM intervals_overlapping(0, 2500000) WHERE run_id = 1",
	"linear_bucket":                "SELECT linear_bucket(57, 0, 25, 4)",
	"lock_stats":                   "SELECT count(*) FROM lock_stats(run := 1)",
	"llquantize_bucket":            "SELECT llquantize_bucket(37, 10, 0, 1, 20)",
	"llquantize_check":             "SELECT llquantize_check(10, 0, 6, 20)",
	"llquantize_label":             "SELECT llquantize_label(100, 10, 0, 1, 20)",
	"llquantize_powers":            "SELECT llquantize_powers(10, 1)",
	"lquantize_bucket":             "SELECT lquantize_bucket(57, 0, 100, 10)",
	"lquantize_check":              "SELECT lquantize_check(0, 100, 10)",
	"lquantize_label":              "SELECT lquantize_label(-9223372036854775808, 0, 100, 10)",
	"lquantize_top":                "SELECT lquantize_top(0, 95, 10)",
	"pow2_floor":                   "SELECT pow2_floor(1000)",
	"quantize_bucket":              "SELECT quantize_bucket(1000)",
	"sched_latency_reference":      "SELECT count(*) FROM sched_latency_reference() WHERE run_id = 1",
	"sched_neighbours_of":          "SELECT count(*) FROM sched_neighbours_of(true)",
	"sched_stats_reference":        "SELECT count(*) FROM sched_stats_reference() WHERE run_id = 1",
	"selected_events":              "SELECT count(*) FROM selected_events(['event=T:start'], ['context=Core_1']) WHERE run_id = 1",
	"state_at":                     "SELECT count(*) FROM state_at(2500000) WHERE run_id = 1",
	"tlv_resources":                "SELECT count(*) FROM tlv_resources(['*'], ['Task'], run := 1)",
	"tlv_matching":                 "SELECT count(*) FROM tlv_matching(['*'], ['Task'], 'state', 'RUNNING', NULL, NULL, run := 1)",
	"tlv_count":                    "SELECT count(*) FROM tlv_count(['*'], ['Task'], 'state', 'RUNNING', NULL, NULL, run := 1)",
	"tlv_count_windows":            "SELECT count(*) FROM tlv_count_windows(['*'], ['Task'], 'state', 'RUNNING', NULL, NULL, 1000000, run := 1)",
	"tlv_measure":                  "SELECT count(*) FROM tlv_measure(['*'], ['Task'], 'state', 'RUNNING', NULL, NULL, run := 1)",
	"tlv_measure_from_to":          "SELECT count(*) FROM tlv_measure_from_to('Task_1ms_1', 'state', 'RUNNABLE', NULL, NULL, 'Task_1ms_1', 'state', 'RUNNING', NULL, NULL, run := 1)",
	"state_stats_of":               "SELECT count(*) FROM state_stats_of(run := 1, object_kind := 'task')",
	"state_stats_of_reference":     "SELECT count(*) FROM state_stats_of_reference(run := 1, object_kind := 'task')",
	"state_stats_of_runs":          "SELECT count(*) FROM state_stats_of_runs(run := 1)",
	"state_stats_of_levels":        "SELECT count(*) FROM state_stats_of_levels(run := 1, object_kind := 'task')",
	"state_stat_rows":              "SELECT count(*) FROM state_stat_rows(run := 1)",
	"state_stat_rows_reference":    "SELECT count(*) FROM state_stat_rows_reference(run := 1)",
	"state_stat_rows_stored":       "SELECT count(*) FROM state_stat_rows_stored(run := 1)",
	"state_stat_rows_unstored":     "SELECT count(*) FROM state_stat_rows_unstored(run := 1)",
	"state_tree_stored_runs":       "SELECT count(*) FROM state_tree_stored_runs(run := 1)",
	"state_tree_stored":            "SELECT count(*) FROM state_tree_stored(2, run := 1)",
	"state_stats_window":           "SELECT count(*) FROM state_stats_window(0, 10000000, run := 1)",
	"state_intervals_window":       "SELECT count(*) FROM state_intervals_window(0, 10000000, run := 1)",
	"state_stats_tree":             "SELECT count(*) FROM state_stats_tree('kos', run := 1)",
	"state_stats_tree_reference":   "SELECT count(*) FROM state_stats_tree_reference('kso', run := 1, sort_by := 'total')",
	"state_stats_selected":         "SELECT count(*) FROM state_stats_selected(['kind=cpu'], ['state=idle'], run := 1)",
	"state_marks":                  "SELECT count(*) FROM state_marks(['kind=cpu&state=busy'], ['all'])",
	"state_trace":                  "SELECT count(*) FROM state_trace(1, run := 1, object_kind := 'cpu')",
	"state_trace_levels":           "SELECT count(*) FROM state_trace_levels(0, 1, run := 1, object_kind := 'cpu')",
	"state_level_map_reference":    "SELECT count(*) FROM state_level_map_reference(unstored := true) WHERE run_id = 1",
	"state_trace_levels_reference": "SELECT count(*) FROM state_trace_levels_reference(0, 1, run := 1, object_kind := 'cpu', unstored := true)",
	"state_trace_level_rows":       "SELECT count(*) FROM state_trace_level_rows(0, -1, run := 1, t_from := 0, t_to := 10000000)",
	"system_timeline":              "SELECT count(*) FROM system_timeline('rig')",
	"task_instances_reference":     "SELECT count(*) FROM task_instances_reference(fallback := true)",
}

// checkViewsAnswer runs SELECT count(*) over every view and a
// representative call of every macro, over run 1 (the small one) where
// they can be narrowed to a run: what is checked is that the catalog is
// whole; the rows of every run are checked by fingerprint.
func checkViewsAnswer(t *testing.T, db *sql.DB, when string) {
	t.Helper()
	views := names(t, db, "SELECT view_name FROM duckdb_views() WHERE NOT internal ORDER BY 1")
	hasRunID := map[string]bool{}
	for _, v := range names(t, db, "SELECT table_name FROM duckdb_columns() WHERE column_name = 'run_id' AND NOT internal") {
		hasRunID[v] = true
	}
	if len(views) < 10 {
		t.Fatalf("%s: only %d views: %v", when, len(views), views)
	}
	for _, v := range views {
		var n int64
		filter := ""
		if hasRunID[v] {
			filter = " WHERE run_id = 1"
		}
		if err := db.QueryRow("SELECT count(*) FROM " + v + filter).Scan(&n); err != nil {
			t.Errorf("%s: view %s: %v", when, v, err)
		}
	}
	macros := names(t, db, "SELECT DISTINCT function_name || ' ' || function_type || ' ' || len(parameters) FROM duckdb_functions() WHERE NOT internal AND function_type IN ('macro', 'table_macro') ORDER BY 1")
	if len(macros) < 20 {
		t.Fatalf("%s: only %d macros: %v", when, len(macros), macros)
	}
	for _, m := range macros {
		f := strings.Fields(m)
		q, ok := macroCalls[f[0]]
		if !ok {
			n, _ := strconv.Atoi(f[2])
			args := strings.TrimSuffix(strings.Repeat("NULL, ", n), ", ")
			if f[1] == "macro" {
				q = "SELECT " + f[0] + "(" + args + ")"
			} else {
				q = "SELECT count(*) FROM " + f[0] + "(" + args + ")"
			}
			rows, err := db.Query(q)
			if err == nil {
				for rows.Next() {
				}
				err = rows.Err()
				rows.Close()
			}
			// With NULLs a macro may refuse its arguments; its body must
			// still bind against the catalog.
			if err != nil && (strings.Contains(err.Error(), "Catalog Error") || strings.Contains(err.Error(), "Binder Error")) {
				t.Errorf("%s: %s: %v", when, q, err)
			}
			continue
		}
		rows, err := db.Query(q)
		if err == nil {
			for rows.Next() {
			}
			err = rows.Err()
			rows.Close()
		}
		if err != nil {
			t.Errorf("%s: macro %s: %s: %v", when, f[0], q, err)
		}
	}
}

func names(t *testing.T, db *sql.DB, q string) []string {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
