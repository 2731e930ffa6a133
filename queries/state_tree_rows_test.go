package queries_test

import (
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/internal/dbtest"
)

// checkTreeRows compares state_stats_tree with its definition,
// state_stats_tree_reference, row for row (pos and path included) over
// every run of db: both orders, both sorts, over whole runs, one run, the
// objects of one kind (each kind with levels, and one without), and in
// windows (absolute around the middle third of run 1, one-sided,
// relative). checkIngestRows calls it, so it runs on the generated traces
// of every format and on the real ones; TestIngestRowsOlderDatabase reads
// the tree of a database without the ingest's newer tables.
func checkTreeRows(t *testing.T, db *sql.DB) {
	t.Helper()
	args := []string{}
	for _, ord := range []string{"kos", "kso"} {
		for _, sortBy := range []string{"name", "total"} {
			args = append(args, fmt.Sprintf("'%s', sort_by := '%s'", ord, sortBy))
		}
	}
	args = append(args, "'kos', run := 1", "'kso', run := 2, sort_by := 'total'")
	kinds := dbtest.Query(t, db, `(SELECT kind FROM state_level_depth ORDER BY depth DESC, kind LIMIT 2)
		UNION (SELECT kind FROM objects WHERE kind NOT IN (SELECT kind FROM state_level_depth) ORDER BY kind LIMIT 1)`)
	for _, k := range splitLines(kinds) {
		args = append(args, fmt.Sprintf("'kos', object_kind := '%s'", k), fmt.Sprintf("'kso', object_kind := '%s', sort_by := 'total'", k))
	}
	var lo, hi sql.NullInt64
	if err := db.QueryRow("SELECT first_ts, last_ts FROM runs WHERE run_id = 1").Scan(&lo, &hi); err != nil {
		t.Fatal(err)
	}
	if lo.Valid && hi.Int64-lo.Int64 >= 3 {
		a, b := lo.Int64+(hi.Int64-lo.Int64)/3, lo.Int64+2*(hi.Int64-lo.Int64)/3
		args = append(args,
			fmt.Sprintf("'kos', t_from := %d, t_to := %d", a, b),
			fmt.Sprintf("'kso', sort_by := 'total', t_from := %d, t_to := %d", a, b),
			fmt.Sprintf("'kos', sort_by := 'total', run := 1, t_from := %d, relative := true", (hi.Int64-lo.Int64)/7),
			fmt.Sprintf("'kso', t_to := %d, relative := true", (hi.Int64-lo.Int64)/2))
	}
	var rows int64
	args = dbtest.Calls(t, args)
	for _, a := range args {
		// each macro planned and run once: the count of the view's rows
		// and of the rows that differ in one query; the rows themselves
		// only when some differ
		diff := `WITH n AS MATERIALIZED (SELECT * FROM state_stats_tree(` + a + `)),
				r AS (SELECT * FROM state_stats_tree_reference(` + a + `)),
				d AS (SELECT sum(side) AS d, * EXCLUDE (side) FROM (
					SELECT *, 1 AS side FROM n UNION ALL SELECT *, -1 FROM r)
				GROUP BY ALL HAVING sum(side) <> 0)`
		var n, differ int64
		if err := db.QueryRow(diff+` SELECT (SELECT count(*) FROM n), (SELECT count(*) FROM d)`).Scan(&n, &differ); err != nil {
			t.Fatal(err)
		}
		if differ > 0 {
			t.Errorf("state_stats_tree(%s) differs from the reference in %d rows (+1: its rows, -1: the reference's):\n%s", a, differ,
				dbtest.Query(t, db, diff+` SELECT * FROM d ORDER BY run_id, pos, d LIMIT 12`))
		}
		rows += n
	}
	t.Logf("%d rows of state_stats_tree compared (%d calls)", rows, len(args))
}

func splitLines(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			if i > start {
				out = append(out, s[start:i])
			}
			start = i + 1
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// checkStatsRows compares state_stats_of with its definition,
// state_stats_of_reference, over every run of db: the view state_stats
// (state_stats_of_runs: whole runs, grouped by the states' symbol ids)
// and run 1 by name (state_stats_of_levels) every time, and a sample of
// whole runs, one run, one kind, a window; and the rows state_stat_rows
// reads with those of its reference, by name.
// checkIngestRows calls it.
func checkStatsRows(t *testing.T, db *sql.DB) {
	t.Helper()
	diff := dbtest.Query(t, db, `SELECT sum(side) AS d, run_id, object_id, level, state, truncated, dur FROM (
			SELECT s.run_id, s.object_id, s.level, coalesce(s.state, y.name) AS state, s.truncated, s.dur, 1 AS side
			FROM state_stat_rows() s LEFT JOIN state_stat_names() y ON y.sym = s.state_sym
			UNION ALL
			SELECT run_id, object_id, level, state, truncated, dur, -1 FROM state_stat_rows_reference())
		GROUP BY ALL HAVING sum(side) <> 0 ORDER BY ALL LIMIT 12`)
	if diff != "" {
		t.Errorf("state_stat_rows() differs from the reference (+n: its rows, -n: the reference's):\n%s", diff)
	}
	args := []string{"", "run := 1"}
	if k := dbtest.Query(t, db, `SELECT kind FROM state_level_depth ORDER BY depth DESC, kind LIMIT 1`); k != "" {
		args = append(args, fmt.Sprintf("object_kind := '%s'", strings.TrimSpace(k)))
	}
	var lo, hi sql.NullInt64
	if err := db.QueryRow("SELECT first_ts, last_ts FROM runs WHERE run_id = 1").Scan(&lo, &hi); err != nil {
		t.Fatal(err)
	}
	if lo.Valid && hi.Int64-lo.Int64 >= 3 {
		args = append(args, fmt.Sprintf("t_from := %d, t_to := %d", lo.Int64+(hi.Int64-lo.Int64)/3, lo.Int64+2*(hi.Int64-lo.Int64)/3))
	}
	// (the standard deviation to 4 decimals: a sum of floating point
	// numbers depends, in its last bits, on the order of its terms; every
	// time the view state_stats, over state_stats_of_runs, and run 1 by
	// name, as state_stats_window groups it)
	fast := []string{"state_stats", "state_stats_of_levels(run := 1)"}
	ref := []string{"state_stats_of_reference()", "state_stats_of_reference(run := 1)"}
	for _, a := range dbtest.Calls(t, args) {
		fast = append(fast, "state_stats_of("+a+")")
		ref = append(ref, "state_stats_of_reference("+a+")")
	}
	for i := range fast {
		diff := dbtest.Query(t, db, `SELECT sum(side) AS d, * EXCLUDE (side) FROM (
				SELECT * REPLACE (round(stddev_ns, 4) AS stddev_ns), 1 AS side FROM `+fast[i]+`
				UNION ALL
				SELECT * REPLACE (round(stddev_ns, 4) AS stddev_ns), -1 FROM `+ref[i]+`)
			GROUP BY ALL HAVING sum(side) <> 0 ORDER BY ALL LIMIT 12`)
		if diff != "" {
			t.Errorf("%s differs from the reference (+n: its rows, -n: the reference's):\n%s", fast[i], diff)
		}
	}
}
