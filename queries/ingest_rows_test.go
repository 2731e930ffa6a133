package queries_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/queries"
	"github.com/traceduck/traceduck/schema"
)

// The rows the ingest writes for views that used to compute them at every
// query must give the rows of their SQL definitions exactly: the nodes of
// eco_tree (eco_tree_nodes, schema/ecotree.go; reference
// eco_tree_reference) in every order, sorted by name and by count, over
// whole runs and in windows, and the rows of state_level_map
// (state_level_paths, schema/levelmap.go; reference
// state_level_map_reference), with what reads it (cpu_intervals,
// cpu_utilization, cpu_load). The tests below compare them on generated
// traces of every format (two seeds and sizes, traces cut at a line in the
// middle) and on the real traces beside the repository, each trace
// ingested once for these comparisons and those of the merged levels
// (checkLevels, levels_test.go); the scheduling rows have their own
// (sched_rows_test.go). Each database runs a third of the calls of a
// check, a different third per test by its name (dbtest.Calls).

// checkIngestRows compares the views with their references over every
// run of db: state_level_map; eco_tree in each order and sort over whole
// runs, some in windows (absolute around the middle third of run 1,
// one-sided, relative). Every run with eco-triples must have its nodes,
// every run with levels its paths (none left to the references).
func checkIngestRows(t *testing.T, db *sql.DB) {
	t.Helper()
	if n := dbtest.Query(t, db, `SELECT run_id FROM runs WHERE run_id IN (SELECT run_id FROM eco_triples)
		AND run_id NOT IN (SELECT run_id FROM eco_tree_nodes) ORDER BY 1`); n != "" {
		t.Errorf("runs with eco-triples and no eco_tree_nodes:\n%s", n)
	}
	if n := dbtest.Query(t, db, `SELECT run_id FROM runs WHERE run_id IN (SELECT run_id FROM state_level_depth)
		AND run_id NOT IN (SELECT run_id FROM state_level_paths) ORDER BY 1`); n != "" {
		t.Errorf("runs with levels and no state_level_paths:\n%s", n)
	}
	// the state tree of every run is written (the view then reads it;
	// checkTreeRows compares it with the reference), but of one whose
	// levels the views merge from state_intervals
	if n := dbtest.Query(t, db, `SELECT run_id FROM runs WHERE run_id NOT IN (SELECT run_id FROM state_tree_runs)
		AND run_id NOT IN (SELECT run_id FROM state_level_objects WHERE NOT materialized) ORDER BY 1`); n != "" {
		t.Errorf("runs without their state tree (state_tree_runs):\n%s", n)
	}
	t.Logf("%d rows of state_level_map compared", dbtest.CheckLevelMap(t, db))
	checkTreeRows(t, db)
	checkStatsRows(t, db)
	var rows int64
	var orders []string
	for _, ord := range schema.EcoOrders {
		for _, sortBy := range []string{"name", "count"} {
			orders = append(orders, fmt.Sprintf("'%s', sort_by := '%s'", ord, sortBy))
		}
	}
	for _, o := range dbtest.Calls(t, orders) {
		rows += dbtest.CheckEco(t, db, o)
	}
	var lo, hi sql.NullInt64
	if err := db.QueryRow("SELECT first_ts, last_ts FROM runs WHERE run_id = 1").Scan(&lo, &hi); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d rows of eco_tree compared over whole runs", rows)
	if !lo.Valid || hi.Int64-lo.Int64 < 3 {
		return
	}
	a, b := lo.Int64+(hi.Int64-lo.Int64)/3, lo.Int64+2*(hi.Int64-lo.Int64)/3
	// the statistics' rows of a window (detail := false: the intervals
	// across a bound clipped, not made again of their parts) are those of
	// state_trace_level_rows in what the statistics read
	for _, w := range dbtest.Calls(t, []string{
		fmt.Sprintf("t_from := %d, t_to := %d", a, b),
		fmt.Sprintf("t_from := %d, relative := true", (hi.Int64-lo.Int64)/7),
		fmt.Sprintf("t_to := %d, relative := true", (hi.Int64-lo.Int64)/2),
	}) {
		const cols = "run_id, object_id, level, state, start_ts, end_ts, dur, truncated"
		diff := dbtest.Query(t, db, `SELECT sum(side) AS d, `+cols+` FROM (
				SELECT `+cols+`, 1 AS side FROM state_trace_level_rows(0, -1, `+w+`, detail := false)
				UNION ALL
				SELECT `+cols+`, -1 FROM state_trace_level_rows(0, -1, `+w+`))
			GROUP BY ALL HAVING sum(side) <> 0 ORDER BY ALL LIMIT 12`)
		if diff != "" {
			t.Errorf("state_trace_level_rows(0, -1, %s, detail := false) differs (+n: rows only there, -n: rows only with detail):\n%s", w, diff)
		}
	}
	for _, w := range dbtest.Calls(t, []string{
		fmt.Sprintf("'eco', t_from := %d, t_to := %d", a, b),
		fmt.Sprintf("'coe', sort_by := 'count', t_from := %d, t_to := %d", a, b),
		fmt.Sprintf("'oec', sort_by := 'count', t_from := %d, relative := true", (hi.Int64-lo.Int64)/7),
		fmt.Sprintf("'eoc', t_to := %d, relative := true", (hi.Int64-lo.Int64)/2),
		fmt.Sprintf("'ceo', sort_by := 'count', t_from := %d, t_to := %d", b, b+1),
	}) {
		dbtest.CheckEco(t, db, w)
	}
}

// TestIngestRowsGenerated compares the rows written at ingest with their
// references on generated traces of every format: the merged levels of
// each run (checkLevels), then the rest over the database (checkIngestRows).
func TestIngestRowsGenerated(t *testing.T) {
	seeds := []int64{1, 2}
	if testing.Short() {
		seeds = seeds[:1]
	}
	for _, format := range levelFormats {
		t.Run(format, func(t *testing.T) {
			dir := t.TempDir()
			db := dbtest.Open(t)
			run := 0
			for _, seed := range seeds {
				path, opt := genTrace(t, dir, format, 4000*int(seed), seed)
				// (seed 2: the state tree's histograms coarse, as in a run
				// past its budget of fine ones, and the percentiles they
				// cannot tell left to the view, as in a database of an
				// older traceduck; seed 1: taken from the durations at
				// ingest)
				opt.CoarseTree = seed == 2
				opt.TreeTargets = seed == 2
				dbtest.Ingest(t, db, path, opt)
				run++
				checkTreeTargets(t, db.SQL(), run, opt.TreeTargets)
				t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) { checkLevels(t, db.SQL(), run, true) })
				if cutFormats[format] && seed == seeds[0] {
					dbtest.Ingest(t, db, cutAtLine(t, path, 0.43), opt)
					run++
					t.Run("cut", func(t *testing.T) { checkLevels(t, db.SQL(), run, true) })
				}
			}
			checkIngestRows(t, db.SQL())
		})
	}
}

// checkTreeTargets: a run whose tree's unknown percentiles were left to
// the view has targets for them; otherwise the ingest took every
// percentile of a node with durations into state_tree_nodes and left no
// target.
func checkTreeTargets(t *testing.T, db *sql.DB, run int, kept bool) {
	t.Helper()
	var targets, unknown int
	if err := db.QueryRow(`SELECT (SELECT count(*) FROM state_tree_target_rows WHERE run_id = $1),
		(SELECT count(*) FROM state_tree_nodes WHERE run_id = $1 AND count > 0
		   AND (p50_ns IS NULL OR p90_ns IS NULL OR p99_ns IS NULL))`, run).Scan(&targets, &unknown); err != nil {
		t.Fatal(err)
	}
	if !kept && (targets > 0 || unknown > 0) {
		t.Errorf("run %d: %d targets and %d nodes without a percentile left by the ingest", run, targets, unknown)
	}
	if kept && (targets == 0) != (unknown == 0) {
		t.Errorf("run %d: %d targets for %d nodes without a percentile", run, targets, unknown)
	}
	t.Logf("run %d: %d targets, %d nodes without a percentile", run, targets, unknown)
}

// TestIngestRowsReal: the same comparisons on the real traces, every
// trace a run of one database (the comparisons over the database cover
// them all).
func TestIngestRowsReal(t *testing.T) {
	traces := realTraces(t, t.TempDir(), "btf/*.btf", "ftrace/*", "qnx/*.txt", "chrome-json/*.json", "dtrace/*_example.txt")
	db := dbtest.Open(t)
	runs := 0
	for _, tr := range traces {
		res, err := ingest.Path(context.Background(), db, tr.path, tr.opt)
		if err != nil {
			t.Logf("%s: not a trace traceduck reads whole: %v", filepath.Base(tr.path), err)
			continue
		}
		runs++
		t.Run(filepath.Base(tr.path), func(t *testing.T) { checkLevels(t, db.SQL(), int(res.RunID), true) })
	}
	t.Logf("%d of %d files ingested", runs, len(traces))
	checkIngestRows(t, db.SQL())
}

// TestIngestRowsOlderDatabase: the runs of a database written before
// eco_tree_nodes and state_level_paths (no rows there) answer with the
// same rows, from the reference SQL, as do those of a database whose
// tables are gone; a database with both kinds of runs answers each from
// its own path.
func TestIngestRowsOlderDatabase(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "old.duckdb")
	db, err := schema.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if err := queries.Install(context.Background(), db.SQL()); err != nil {
		t.Fatal(err)
	}
	for i, format := range []string{"btf", "qnx", "ftrace"} {
		p, opt := genTrace(t, dir, format, 6000, int64(i+1))
		dbtest.Ingest(t, db, p, opt)
	}
	qs := []string{
		`SELECT * FROM eco_tree('eco')`,
		`SELECT * FROM eco_tree('oce', sort_by := 'count')`,
		`SELECT * FROM eco_tree_window('coe', 1000, 20000000, relative := true, sort_by := 'count')`,
		`SELECT * FROM state_level_map ORDER BY ALL`,
		`SELECT * FROM cpu_utilization ORDER BY ALL`,
		`SELECT * FROM cpu_load(1000000) ORDER BY ALL`,
		`SELECT * FROM state_stats_tree('kos') ORDER BY run_id, pos`,
		`SELECT * FROM state_stats_tree('kso', sort_by := 'total', t_from := 1000, t_to := 20000000, relative := true) ORDER BY run_id, pos`,
	}
	want := make([]string, len(qs))
	for i, q := range qs {
		want[i] = dbtest.Query(t, db.SQL(), q)
		if want[i] == "" {
			t.Fatalf("%s: no rows", q)
		}
	}
	same := func(what string) {
		t.Helper()
		for i, q := range qs {
			if got := dbtest.Query(t, db.SQL(), q); got != want[i] {
				t.Errorf("%s: %s differs:\n%s", what, q, dbtest.Diff(want[i], got))
			}
		}
	}
	// run 2 as an older traceduck wrote it: without the rows
	for _, table := range []string{"eco_tree_nodes", "state_level_paths"} {
		if _, err := db.SQL().Exec(`DELETE FROM ` + table + ` WHERE run_id = 2`); err != nil {
			t.Fatal(err)
		}
	}
	same("run 2 without rows")

	// a database of a traceduck before the tables
	for _, table := range []string{"eco_tree_nodes", "state_level_paths"} {
		if _, err := db.SQL().Exec("DROP TABLE " + table); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	db, err = schema.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := queries.Install(context.Background(), db.SQL()); err != nil {
		t.Fatal(err)
	}
	if n := dbtest.Query(t, db.SQL(), "SELECT (SELECT count(*) FROM eco_tree_nodes) + (SELECT count(*) FROM state_level_paths)"); n != "0\n" {
		t.Fatalf("eco_tree_nodes, state_level_paths: %s rows", n)
	}
	same("older database")
}
