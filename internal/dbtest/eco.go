package dbtest

import (
	"database/sql"
	"fmt"
	"testing"
)

// CheckEco asserts that eco_tree(args), whose nodes are read from what is
// written at ingest (eco_tree_nodes, schema/ecotree.go), holds exactly the
// rows of its SQL reference, eco_tree_reference(args), and returns how
// many rows it compared. Every database Open makes is checked at the end
// of its test with one order sorted by count ('ceo', which fixes the
// three dimensions in another order than eco's); queries/eco_rows_test.go
// checks every order, both sorts and windows.
func CheckEco(t testing.TB, db *sql.DB, args string) int64 {
	t.Helper()
	// each macro run once: +n, rows only in eco_tree; -n, only in the reference
	diff := fmt.Sprintf(`SELECT x, sum(side) AS d, count(*) FILTER (WHERE side = 1) AS v FROM (
		SELECT m AS x, 1 AS side FROM eco_tree(%[1]s) m
		UNION ALL
		SELECT r, -1 FROM eco_tree_reference(%[1]s) r)
	GROUP BY x`, args)
	var n, rows, total sql.NullInt64
	if err := db.QueryRow("SELECT count(*) FILTER (WHERE d <> 0), sum(abs(d)) FILTER (WHERE d <> 0), sum(v) FROM ("+diff+")").Scan(&n, &rows, &total); err != nil {
		t.Errorf("compare eco_tree(%s) with its reference: %v", args, err)
		return 0
	}
	if n.Int64 > 0 {
		t.Errorf("eco_tree(%s) differs from eco_tree_reference(%s) in %d rows (+n: only in the view, -n: only in the reference), the first:\n%s",
			args, args, rows.Int64, Query(t, db, "SELECT d, x FROM ("+diff+") WHERE d <> 0 ORDER BY x.run_id, x.pos, d LIMIT 20"))
	}
	checkEcoOrder(t, db, args)
	return total.Int64
}

// checkEcoOrder asserts that eco_tree(args) gives its rows in depth-first
// order, by run_id then pos, as a query without ORDER BY reads them: the
// macro sorts before it names the rows (projections keep the order).
func checkEcoOrder(t testing.TB, db *sql.DB, args string) {
	t.Helper()
	rows, err := db.Query(fmt.Sprintf("SELECT run_id, pos FROM eco_tree(%s)", args))
	if err != nil {
		t.Errorf("eco_tree(%s): %v", args, err)
		return
	}
	defer rows.Close()
	var prevRun, prevPos int64
	for i := 0; rows.Next(); i++ {
		var run, pos int64
		if err := rows.Scan(&run, &pos); err != nil {
			t.Errorf("eco_tree(%s): %v", args, err)
			return
		}
		if i > 0 && (run < prevRun || run == prevRun && pos <= prevPos) {
			t.Errorf("eco_tree(%s): row %d is run %d pos %d, after run %d pos %d: not in (run_id, pos) order", args, i+1, run, pos, prevRun, prevPos)
			return
		}
		prevRun, prevPos = run, pos
	}
	if err := rows.Err(); err != nil {
		t.Errorf("eco_tree(%s): %v", args, err)
	}
}
