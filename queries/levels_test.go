package queries_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/bench"
	"github.com/traceduck/traceduck/internal/chromegen"
	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/internal/recount"
	"github.com/traceduck/traceduck/queries"
	"github.com/traceduck/traceduck/schema"
)

// The merged intervals of the levels above 0 that the ingest writes
// (state_level_intervals, schema/levels.go) must be the rows of the SQL
// definition, state_trace_levels_reference, exactly: the tests below
// compare state_trace_levels with it on generated traces of every format
// (two seeds and sizes, traces cut at a line in the middle) and on the real
// traces beside the repository, over whole runs and in windows
// (checkLevels, from TestIngestRowsGenerated and TestIngestRowsReal, which
// ingest each trace once for all the comparisons).

// sameLevels fails when state_trace_levels(args) and
// state_trace_levels_reference(args) differ, with the rows that differ
// (+1: only in state_trace_levels, -1: only in the reference), each macro
// run once.
func sameLevels(t *testing.T, db *sql.DB, args string) {
	t.Helper()
	diff := dbtest.Query(t, db, `SELECT d, x FROM (
		SELECT x, sum(side) AS d FROM (
			SELECT m AS x, 1 AS side FROM state_trace_levels(`+args+`) m
			UNION ALL
			SELECT r, -1 FROM state_trace_levels_reference(`+args+`) r)
		GROUP BY x)
		WHERE d <> 0 ORDER BY x LIMIT 12`)
	if diff != "" {
		t.Errorf("state_trace_levels(%s) differs from the reference (+n: rows only there, -n: rows only in the reference):\n%s", args, diff)
	}
}

// checkLevels compares the materialized levels of run with the reference:
// the whole run, some kinds and levels, and windows (absolute, one-sided,
// relative). With all, every object with levels must be materialized (the
// rows are read, not recomputed).
func checkLevels(t *testing.T, db *sql.DB, run int, all bool) {
	t.Helper()
	var lo, hi sql.NullInt64
	if err := db.QueryRow("SELECT first_ts, last_ts FROM runs WHERE run_id = ?", run).Scan(&lo, &hi); err != nil {
		t.Fatal(err)
	}
	var objects, stored, rows int64
	if err := db.QueryRow(`SELECT count(*), count(*) FILTER (WHERE materialized),
		(SELECT count(*) FROM state_level_intervals WHERE run_id = $1) FROM state_level_objects WHERE run_id = $1`, run).Scan(&objects, &stored, &rows); err != nil {
		t.Fatal(err)
	}
	t.Logf("run %d: %d of %d objects with levels materialized, %d merged intervals", run, stored, objects, rows)
	if all && stored != objects {
		t.Errorf("run %d: %d of %d objects with levels are materialized; want all:\n%s", run, stored, objects,
			dbtest.Query(t, db, `SELECT o.kind, count(*) FROM state_level_objects m JOIN objects o USING (run_id, object_id)
				WHERE m.run_id = ? AND NOT m.materialized GROUP BY ALL ORDER BY ALL`, run))
	}
	r := fmt.Sprintf("run := %d", run)
	sameLevels(t, db, "0, -1, "+r)
	more := []string{"1, 1, object_kind := 'cpu', " + r}
	if lo.Valid && hi.Int64-lo.Int64 >= 3 {
		a, b := lo.Int64+(hi.Int64-lo.Int64)/3, lo.Int64+2*(hi.Int64-lo.Int64)/3
		more = append(more,
			fmt.Sprintf("0, -1, %s, t_from := %d, t_to := %d", r, a, b),
			fmt.Sprintf("-2, -1, %s, t_from := %d, relative := true", r, (hi.Int64-lo.Int64)/7))
	}
	for _, w := range dbtest.Calls(t, more) {
		sameLevels(t, db, w)
	}
}

// genTrace writes a generated trace of format (chrome: chromegen's) and
// returns how to ingest it.
func genTrace(t *testing.T, dir, format string, events int, seed int64) (string, ingest.Options) {
	t.Helper()
	path := filepath.Join(dir, fmt.Sprintf("%s-%d.trace", format, seed))
	if format == "chrome" {
		var b bytes.Buffer
		if _, err := chromegen.Write(&b, chromegen.Config{Seed: uint64(seed), Tasks: events / 40}); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return path, ingest.Options{Format: "chrome"}
	}
	tr, err := bench.Generate(path, bench.GenConfig{Format: format, Events: events, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	return path, ingest.Options{Format: tr.Format, Params: tr.Params}
}

// cutAtLine writes the first part of a text trace, up to a line end near
// the fraction f of its bytes: a trace that stops in the middle of what
// was going on.
func cutAtLine(t *testing.T, path string, f float64) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := int(float64(len(data)) * f)
	if i := bytes.IndexByte(data[n:], '\n'); i >= 0 {
		n += i + 1
	}
	out := strings.TrimSuffix(path, ".trace") + ".cut.trace"
	if err := os.WriteFile(out, data[:n], 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// levelFormats are the formats whose generated traces are checked: those
// of cmd/tracegen and Chrome JSON; cut are those read line by line.
var (
	levelFormats = append(append([]string{}, bench.Formats...), "chrome")
	cutFormats   = map[string]bool{"btf": true, "qnx": true, "tlv": true, "toppers-asp": true, "toppers-fmp": true, "dtrace": true, "ftrace": true}
)

// external is the collection of real traces beside the repository.
const externalTraces = "../../shared/testdata-external"

// realTrace is a real trace beside the repository and how to ingest it.
type realTrace struct {
	path string
	opt  ingest.Options
}

// realTraces lists the real traces of the given patterns under
// externalTraces, then the TOPPERS logs (recount.TOPPERSLogs) with their
// resource files (dir holds the full log's); it skips the test when none
// is there.
func realTraces(t *testing.T, dir string, patterns ...string) []realTrace {
	t.Helper()
	var traces []realTrace
	for _, pattern := range patterns {
		files, _ := filepath.Glob(filepath.Join(externalTraces, pattern))
		for _, f := range files {
			traces = append(traces, realTrace{path: f})
		}
	}
	for _, c := range recount.TOPPERSLogs {
		log := filepath.Join(externalTraces, "toppers", "YixiaoLi__tlv4mc__"+c.Log)
		res := filepath.Join(dir, "full.res")
		if c.Res != "" {
			res = filepath.Join(externalTraces, "toppers", "YixiaoLi__tlv4mc__"+c.Res)
		} else if err := os.WriteFile(res, []byte(recount.FullLogResources()), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(log); err == nil {
			traces = append(traces, realTrace{log, ingest.Options{Format: "toppers-asp", Params: map[string]string{"resources": res}}})
		}
	}
	if len(traces) == 0 {
		t.Skipf("no traces in %s", externalTraces)
	}
	return traces
}

// TestLevelsOlderDatabase: the runs of a database written before
// state_level_intervals (no state_level_objects rows) answer with the
// same rows and statistics, the views merging their intervals with the
// reference SQL; so do objects marked not materialized.
func TestLevelsOlderDatabase(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "old.duckdb")
	db, err := schema.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if err := queries.Install(context.Background(), db.SQL()); err != nil {
		t.Fatal(err)
	}
	for i, format := range []string{"btf", "qnx"} {
		p, opt := genTrace(t, dir, format, 8000, int64(i+1))
		dbtest.Ingest(t, db, p, opt)
	}
	// (the mean and standard deviation to 4 decimals: a sum of floating
	// point numbers depends, in its last bits, on the order of its terms)
	const stats = `SELECT * REPLACE (round(mean_ns, 4) AS mean_ns, round(stddev_ns, 4) AS stddev_ns) FROM state_stats ORDER BY ALL`
	const window = `SELECT * REPLACE (round(mean_ns, 4) AS mean_ns, round(stddev_ns, 4) AS stddev_ns)
		FROM state_stats_window(1000, 40000000, relative := true) ORDER BY ALL`
	want, wantWindow := dbtest.Query(t, db.SQL(), stats), dbtest.Query(t, db.SQL(), window)

	// run 2's objects (QNX) marked not materialized, and one task of run
	// 1 (BTF) beside the stored ones of its kind, their rows pruned as
	// the ingest prunes those of an object it leaves to the reference:
	// read from the reference
	for _, q := range []string{
		`UPDATE state_level_objects SET materialized = false WHERE run_id = 2
		   OR run_id = 1 AND object_id = (SELECT min(object_id) FROM objects WHERE run_id = 1 AND kind = 'task')`,
		`DELETE FROM state_level_interval_rows r WHERE EXISTS (SELECT 1 FROM state_level_objects m
		   WHERE m.run_id = r.run_id AND m.object_id = r.object_id AND NOT m.materialized)`,
		// nor does the ingest write the state tree of such a run
		`DELETE FROM state_tree_runs`,
	} {
		if _, err := db.SQL().Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	if n := dbtest.Query(t, db.SQL(), `SELECT count(*) FROM state_level_objects m JOIN objects o USING (run_id, object_id)
		WHERE m.run_id = 1 AND o.kind = 'task' GROUP BY m.materialized ORDER BY m.materialized`); len(splitLines(n)) != 2 {
		t.Fatalf("run 1's tasks, not materialized and materialized: %q, want both", n)
	}
	if got := dbtest.Query(t, db.SQL(), stats); got != want {
		t.Errorf("objects not materialized: state_stats differs:\n%s", dbtest.Diff(want, got))
	}
	sameLevels(t, db.SQL(), "0, -1")
	// (kso pools a kind's objects, stored and not: one node per state)
	checkTreeRows(t, db.SQL())

	// a database of a traceduck before the tables: none of them
	for _, table := range []string{"state_level_objects", "state_level_intervals", "state_level_interval_rows",
		"state_tree_runs", "state_tree_nodes", "state_tree_targets", "state_tree_target_rows"} {
		kind := "TABLE"
		if table == "state_level_intervals" || table == "state_tree_targets" {
			kind = "VIEW"
		}
		if _, err := db.SQL().Exec("DROP " + kind + " " + table); err != nil {
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
	if n := dbtest.Query(t, db.SQL(), "SELECT count(*) FROM state_level_objects"); n != "0\n" {
		t.Fatalf("state_level_objects: %s rows", n)
	}
	if got := dbtest.Query(t, db.SQL(), stats); got != want {
		t.Errorf("older database: state_stats differs:\n%s", dbtest.Diff(want, got))
	}
	if got := dbtest.Query(t, db.SQL(), window); got != wantWindow {
		t.Errorf("older database: state_stats_window differs:\n%s", dbtest.Diff(wantWindow, got))
	}
	sameLevels(t, db.SQL(), "0, -1")
}
