package dbtest

import (
	"database/sql"
	"testing"
)

// CheckLevels asserts that state_trace_levels, whose levels above 0 are
// read from what is written at ingest (state_level_intervals,
// schema/levels.go), holds exactly the rows of its SQL reference
// (state_trace_levels_reference) over every run, levels 1 to the top, and
// returns how many rows it compared. Every database Open makes is checked
// at the end of its test.
func CheckLevels(t testing.TB, db *sql.DB) int64 {
	t.Helper()
	// each macro run once: +n, rows only in state_trace_levels; -n, rows
	// only in the reference
	const diff = `SELECT x, sum(side) AS d FROM (
		SELECT m AS x, 1 AS side FROM state_trace_levels(1, -1) m
		UNION ALL
		SELECT r, -1 FROM state_trace_levels_reference(1, -1) r)
	GROUP BY x`
	var n, rows sql.NullInt64
	if err := db.QueryRow("SELECT count(*) FILTER (WHERE d <> 0), sum(abs(d)) FILTER (WHERE d <> 0) FROM ("+diff+")").Scan(&n, &rows); err != nil {
		t.Errorf("compare state_trace_levels with its reference: %v", err)
		return 0
	}
	if n.Int64 > 0 {
		t.Errorf("state_trace_levels(1, -1) differs from state_trace_levels_reference(1, -1) in %d rows (+n: only in the view, -n: only in the reference), the first:\n%s",
			rows.Int64, Query(t, db, "SELECT d, x FROM ("+diff+") WHERE d <> 0 ORDER BY x LIMIT 20"))
	}
	var total int64
	if err := db.QueryRow("SELECT count(*) FROM state_trace_levels(1, -1)").Scan(&total); err != nil {
		t.Errorf("state_trace_levels: %v", err)
	}
	return total
}

// CheckLevelMap asserts that state_level_map, whose rows are written at
// ingest (state_level_paths, schema/levelmap.go), holds exactly the rows
// of its SQL reference (state_level_map_reference), and returns how many
// rows it has. Every database Open makes is checked at the end of its
// test.
func CheckLevelMap(t testing.TB, db *sql.DB) int64 {
	t.Helper()
	const diff = `SELECT x, sum(side) AS d FROM (
		SELECT m AS x, 1 AS side FROM state_level_map m
		UNION ALL
		SELECT r, -1 FROM state_level_map_reference() r)
	GROUP BY x`
	var n, rows sql.NullInt64
	if err := db.QueryRow("SELECT count(*) FILTER (WHERE d <> 0), sum(abs(d)) FILTER (WHERE d <> 0) FROM ("+diff+")").Scan(&n, &rows); err != nil {
		t.Errorf("compare state_level_map with its reference: %v", err)
		return 0
	}
	if n.Int64 > 0 {
		t.Errorf("state_level_map differs from state_level_map_reference() in %d rows (+n: only in the view, -n: only in the reference), the first:\n%s",
			rows.Int64, Query(t, db, "SELECT d, x FROM ("+diff+") WHERE d <> 0 ORDER BY x LIMIT 20"))
	}
	var total int64
	if err := db.QueryRow("SELECT count(*) FROM state_level_map").Scan(&total); err != nil {
		t.Errorf("state_level_map: %v", err)
	}
	return total
}
