package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/queries/export"
)

// datasetQuery runs SQL over a Parquet dataset the way docs/export.md
// tells a user (export.OpenDataset: views.sql in an empty DuckDB).
func datasetQuery(t *testing.T, dataset, query string) string {
	t.Helper()
	db, err := export.OpenDataset(context.Background(), dataset)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	return dbtest.Query(t, db, query)
}

// dbQuery runs SQL over a database file the CLI wrote, as datasetQuery
// prints it.
func dbQuery(t *testing.T, path, query string) string {
	t.Helper()
	db, err := sql.Open("duckdb", path+"?access_mode=read_only")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	return dbtest.Query(t, db, query)
}

// TestExportParquet: export writes the runs a selector names; the dataset
// answers the views as the database does.
func TestExportParquet(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "t.duckdb")
	mustRun(t, dir, nil, "ingest", "--db", db, "--name", "v1", "--tag", "build=1", seedSample)
	mustRun(t, dir, nil, "ingest", "--db", db, "--name", "v2", "--tag", "build=2", sampleCopy(t, dir, "b.btf", "second"))
	mustRun(t, dir, nil, "ingest", "--db", db, "--name", "v3", "--tag", "build=3", sampleCopy(t, dir, "c.btf", "third"))

	dataset := filepath.Join(dir, "dataset")
	out := mustRun(t, dir, nil, "export", "--db", db, "--parquet", dataset, "--runs", "v1,build=3")
	if !strings.HasPrefix(out, "2 runs written to "+dataset+": ") {
		t.Errorf("output: %s", out)
	}
	const q = "SELECT run_id, kind, object, state, count, total_ns FROM state_summary ORDER BY ALL"
	want := dbQuery(t, db, "SELECT * FROM ("+q+") WHERE run_id IN (1, 3)")
	if got := datasetQuery(t, dataset, q); got != want {
		t.Errorf("state_summary over the dataset:\n%s\nwant (the database's):\n%s", got, want)
	}
	if strings.Count(want, "\n") < 8 { // 4 rows for each of two runs
		t.Errorf("too little to compare:\n%s", want)
	}

	// query --parquet: the same through the command.
	got := mustRun(t, dir, nil, "query", "--parquet", dataset, "--output", "csv", "SELECT count(*) AS n FROM ("+q+")")
	if wantN := strings.Count(want, "\n"); got != fmt.Sprintf("n\r\n%d\r\n", wantN) {
		t.Errorf("query --parquet: %q, want %d rows", got, wantN)
	}
	expectExit(t, td(t, dir, "query", "--parquet", filepath.Join(dir, "none"), "SELECT 1"), 1,
		"traceduck: "+filepath.Join(dir, "none")+": not a traceduck dataset (no views.sql; write one with 'traceduck export --parquet "+filepath.Join(dir, "none")+"')")

	expectExit(t, td(t, dir, "export", "--db", db, "--parquet", dataset, "--runs", "v9"), 2,
		`traceduck: --runs: runs selector "v9": "v9" selects no run (see 'SELECT run_id, name, tags FROM runs')`)
	expectExit(t, td(t, dir, "export", "--db", db), 2, "traceduck: give --parquet DIR or --chrome FILE (one of them)")
	expectExit(t, td(t, dir, "export", "--db", db, "--parquet", dataset, "--run", "1"), 2,
		"traceduck: --run is a flag of --chrome; --parquet takes --runs")
	expectExit(t, td(t, dir, "export", "--db", filepath.Join(dir, "none.duckdb"), "--parquet", dataset), 1, "no such database")
}

// TestExportParquetOtherDatabase: a second database's run 1 (another
// trace) exported into a dataset that holds run 1 goes to run 2, and
// export says so; the dataset's run 1 is kept. Exported again, it replaces
// its own run 2 (the same sha256); the first database's run still replaces
// run 1 only.
func TestExportParquetOtherDatabase(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.duckdb"), filepath.Join(dir, "b.duckdb")
	mustRun(t, dir, nil, "ingest", "--db", a, "--name", "first", seedSample)
	mustRun(t, dir, nil, "ingest", "--db", b, "--name", "second", sampleCopy(t, dir, "b.btf", "second"))
	ds := filepath.Join(dir, "ds")
	// 38 files: one per table of a run (schema/tables.go: runs, objects,
	// events, eco_triples, state_intervals, state_levels, diagnostics,
	// aggregations, histograms, resource_intervals, messages,
	// priority_intervals, clocks; the rows made at ingest of eco_tree,
	// eco_tree_nodes, and of state_level_map, state_level_paths; the two
	// of the levels merged at ingest,
	// state_level_intervals and state_level_objects; the five of the
	// scheduling rows written at ingest, sched_instances, sched_waits,
	// sched_durations, sched_runs, sched_fallback; the seven of the
	// report's summary, schema.ReportTables) and the overhead model's
	// tables beside them (its parameters and overhead_measured).
	summary := `1 run written to ` + regexp.QuoteMeta(ds) + `: 41 Parquet files, \d+ bytes; read them with ` + regexp.QuoteMeta(filepath.Join(ds, "views.sql")) + "\n$"
	expectOut := func(out, want string) {
		t.Helper()
		if !regexp.MustCompile("^" + want).MatchString(out) {
			t.Errorf("export printed:\n%s\nwant (regexp):\n%s", out, want)
		}
	}
	expectOut(mustRun(t, dir, nil, "export", "--db", a, "--parquet", ds), summary)
	sha := strings.TrimSpace(dbQuery(t, a, "SELECT sha256[:12] FROM runs"))
	expectOut(mustRun(t, dir, nil, "export", "--db", b, "--parquet", ds),
		regexp.QuoteMeta("run 1 (second) written as run 2: run 1 of "+ds+" is another trace (first, sha256 "+sha+")\n")+summary)
	const q = "SELECT run_id, name FROM runs ORDER BY run_id"
	if got := datasetQuery(t, ds, q); got != "1 | first\n2 | second\n" {
		t.Errorf("the dataset's runs:\n%s", got)
	}
	expectOut(mustRun(t, dir, nil, "export", "--db", b, "--parquet", ds),
		regexp.QuoteMeta("run 1 (second) written as run 2, which held the same trace (same sha256)\n")+summary)
	expectOut(mustRun(t, dir, nil, "export", "--db", a, "--parquet", ds), summary)
	if got := datasetQuery(t, ds, q); got != "1 | first\n2 | second\n" {
		t.Errorf("the dataset's runs after both exports again:\n%s", got)
	}
}

// TestIngestParquetParallel: jobs that ingest into one dataset at once,
// with no database, each get their own run_id; the dataset then holds
// every run with the rows a database ingest gives; a file the dataset
// holds is refused without --force.
func TestIngestParquetParallel(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dataset := filepath.Join(dir, "dataset")
	const jobs = 4
	var traces []string
	for i := 0; i < jobs; i++ {
		traces = append(traces, sampleCopy(t, dir, fmt.Sprintf("t%d.btf", i), fmt.Sprint("job ", i)))
	}
	var wg sync.WaitGroup
	results := make([]result, jobs)
	for i := range traces {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			results[i] = runIn(t, dir, nil, "ingest", "--parquet", dataset, "--tag", fmt.Sprint("job=", i), traces[i])
		}(i)
	}
	wg.Wait()
	line := regexp.MustCompile(`^run (\d+): .*t(\d)\.btf \(btf, (\d+) events, \d+ intervals\) -> ` + regexp.QuoteMeta(dataset) + "\n$")
	ids := map[string]string{}
	for i, r := range results {
		if r.code != 0 {
			t.Fatalf("job %d: %s", i, r)
		}
		m := line.FindStringSubmatch(r.stdout)
		if m == nil {
			t.Fatalf("job %d output: %q", i, r.stdout)
		}
		if other, dup := ids[m[1]]; dup {
			t.Fatalf("jobs %s and %s both got run_id %s", other, m[2], m[1])
		}
		ids[m[1]] = m[2]
	}
	var got []string
	for id := range ids {
		got = append(got, id)
	}
	sort.Strings(got)
	if strings.Join(got, ",") != "1,2,3,4" {
		t.Errorf("run_ids %v, want 1..4", got)
	}

	// The same rows as an ingest into a database.
	db := filepath.Join(dir, "t.duckdb")
	mustRun(t, dir, nil, "ingest", "--db", db, traces[0])
	const q = "SELECT count(*), sum(ts), count(DISTINCT object_id) FROM events"
	per := dbQuery(t, db, q)
	all := datasetQuery(t, dataset, q+" GROUP BY run_id")
	if strings.Count(all, per) != jobs {
		t.Errorf("dataset per run:\n%s\nwant each:\n%s", all, per)
	}
	tags := datasetQuery(t, dataset, "SELECT string_agg(tags->>'job', ',' ORDER BY tags->>'job') FROM runs")
	if tags != "0,1,2,3\n" {
		t.Errorf("tags: %q", tags)
	}

	r := td(t, dir, "ingest", "--parquet", dataset, traces[2])
	expectExit(t, r, 1, fmt.Sprintf("%s: already in %s as run ", traces[2], dataset), "(same sha256); --force ingests it again")
	if _, err := os.Stat(filepath.Join(dataset, "runs", "run_id=5")); err == nil {
		t.Error("a refused ingest claimed a run_id")
	}
	out := mustRun(t, dir, nil, "ingest", "--parquet", dataset, "--force", traces[2])
	if !strings.HasPrefix(out, "run 5: ") {
		t.Errorf("--force: %s", out)
	}
	expectExit(t, td(t, dir, "ingest", traces[0]), 2, "traceduck: give --db FILE or --parquet DIR (one of them)")
}

// TestExportChromeRoundTrip: a BTF run exported as Chrome JSON and
// ingested back by traceduck's Chrome ingester has the same intervals on
// objects of the same names (an object's extra lanes, "NAME #k", are the
// object's), and the signal's values.
func TestExportChromeRoundTrip(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "t.duckdb")
	trace, err := filepath.Abs(filepath.Join("..", "..", "samples", "btf", "rtos-2core.btf"))
	if err != nil {
		t.Fatal(err)
	}
	mustRun(t, dir, nil, "ingest", "--db", db, trace)
	out := mustRun(t, dir, nil, "export", "--db", db, "--chrome", "run.json")
	if !regexp.MustCompile(`^run 1 written to run\.json: \d+ slices, \d+ instants, \d+ counter values, \d+ holds, \d+ waits, \d+ calls, \d+ flows on \d+ tracks\n$`).MatchString(out) {
		t.Errorf("output: %q", out)
	}
	var doc map[string]any
	if err := json.Unmarshal(readFile(t, filepath.Join(dir, "run.json")), &doc); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	mustRun(t, dir, nil, "ingest", "--db", db, "run.json")

	// The holds and waits of a resource come back as the intervals of its
	// tracks "RESOURCE holds" and "RESOURCE waits", named after the holder
	// or waiter.
	const q = `SELECT regexp_replace(o.name, ' #[0-9]+$', '') AS name, s.state, s.start_ts, s.dur
		FROM state_intervals s JOIN objects o USING (run_id, object_id) WHERE run_id = %d AND %s`
	const qRes = ` UNION ALL SELECT r.name || ' ' || i.relation || 's', a.name, i.start_ts, i.dur FROM resource_intervals i
		JOIN objects r ON r.run_id = i.run_id AND r.object_id = i.resource_id JOIN objects a ON a.run_id = i.run_id AND a.object_id = i.actor_id
		WHERE i.run_id = 1`
	want := mustRun(t, dir, nil, "query", "--db", db, "--output", "csv", fmt.Sprintf(q, 1, "lower(o.kind) <> 'signal'")+qRes+" ORDER BY ALL")
	got := mustRun(t, dir, nil, "query", "--db", db, "--output", "csv", fmt.Sprintf(q, 2, "o.kind <> 'counter'")+" ORDER BY ALL")
	if got != want {
		t.Errorf("intervals after the round trip differ: %d lines, want %d", strings.Count(got, "\n"), strings.Count(want, "\n"))
	}
	if n := strings.Count(want, "\n"); n < 3000 {
		t.Errorf("only %d intervals compared", n)
	}
	// The signal's values are its counter's, at the same times.
	const qs = `SELECT s.state, s.start_ts FROM state_intervals s JOIN objects o USING (run_id, object_id)
		WHERE run_id = %d AND o.name IN ('SIG_Speed', 'SIG_Speed value') ORDER BY ALL`
	if w, g := mustRun(t, dir, nil, "query", "--db", db, fmt.Sprintf(qs, 1)), mustRun(t, dir, nil, "query", "--db", db, fmt.Sprintf(qs, 2)); w != g {
		t.Errorf("signal values differ:\n%s\nwant\n%s", g, w)
	}

	expectExit(t, td(t, dir, "export", "--db", db, "--chrome", "x.json"), 2,
		"traceduck: --chrome writes one run: give --run N (the database holds 2 runs)")
	expectExit(t, td(t, dir, "export", "--db", db, "--chrome", "x.json", "--run", "1", "--from", "5parsecs"), 2,
		`traceduck: --from 5parsecs: unknown unit "parsecs" (s, ms, us, ns)`)
	if _, err := os.Stat(filepath.Join(dir, "x.json")); err == nil {
		t.Error("a failed export left its file")
	}
}
