package queries_test

import (
	"database/sql"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/dbtest"
)

// TestStateStatsTree: the state statistics tree of the hand-written trace
// (stateHandBTF, its intervals listed above it) and of runs of five
// formats.
func TestStateStatsTree(t *testing.T) {
	db := dbtest.Open(t)
	dbtest.Ingest(t, db, stateHandBTF, ingest.Options{})
	q := db.SQL()

	// kos, task A by hand (TestStateStatsByHand's numbers): level 1
	// on_cpu [10,30) 20, [35,60) 25, [160,175) 15, [190,200) 10, [200,230)
	// 30 (A#1's and A#2's are apart); runnable 10, 5, 10, 28; blocked 10.
	// The object: its top-level intervals, 10 of them, 168 ns.
	got := dbtest.Query(t, q, `SELECT repeat('  ', depth) || label, node, coalesce(level, -1), count, total_ns, max_ns, p50_ns, truncated
		FROM state_stats_tree('kos') WHERE object = 'A' ORDER BY pos`)
	want := `    A | object | -1 | 10 | 168 | 30 | 15 | 0
      blocked | state | 1 | 1 | 10 | 10 | 10 | 0
        parking | state | 0 | 1 | 10 | 10 | 10 | 0
      on_cpu | state | 1 | 5 | 105 | 30 | 20 | 0
        polling | state | 0 | 2 | 10 | 5 | 5 | 0
        running | state | 0 | 5 | 95 | 30 | 20 | 0
      runnable | state | 1 | 4 | 53 | 28 | 10 | 0
        active | state | 0 | 3 | 48 | 28 | 10 | 0
        ready | state | 0 | 1 | 5 | 5 | 5 | 0
`
	if got != want {
		t.Errorf("kos, task A:\n%s\nwant\n%s", got, want)
	}
	// kso pools the kind's objects: on_cpu of A (5, 105) and B (2, 35,
	// one more cut by the end); the IRQ's runnable has only a 0 ns
	// interval, left out at level 1: a node of count 0 above its active.
	got = dbtest.Query(t, q, `SELECT repeat('  ', depth) || label, node, count, total_ns, truncated
		FROM state_stats_tree('kso', sort_by := 'total') WHERE kind IN ('task', 'isr') AND depth <= 3 ORDER BY pos`)
	want = `  task | kind | 14 | 218 | 1
    on_cpu | state | 7 | 140 | 1
      running | state | 7 | 118 | 1
      polling | state | 4 | 22 | 0
    runnable | state | 5 | 63 | 0
      active | state | 5 | 58 | 0
      ready | state | 1 | 5 | 0
    blocked | state | 2 | 15 | 0
      parking | state | 2 | 15 | 0
  isr | kind | 1 | 5 | 0
    on_cpu | state | 1 | 5 | 0
      running | state | 1 | 5 | 0
    runnable | state | 0 | 0 | 0
      active | state | 1 | 0 | 0
`
	if got != want {
		t.Errorf("kso by total, tasks and ISRs to depth 3:\n%s\nwant\n%s", got, want)
	}

	// On runs of five formats: every state node of kos is its row of
	// state_stats; the nodes form a tree in depth-first order (each
	// node's parent is there, before it, and a subtree's rows are
	// contiguous); kso's leaves add up to its pooled nodes.
	db = dbtest.Open(t)
	_, _, _, _ = stateRuns(t, db)
	q = db.SQL()
	got = dbtest.Query(t, q, `SELECT run_id, object_id, level, state, count, total_ns, max_ns, p50_ns, p90_ns, p99_ns, truncated
		FROM state_stats_tree('kos') WHERE node = 'state' AND count + truncated > 0 ORDER BY ALL`)
	want = dbtest.Query(t, q, `SELECT run_id, object_id, level, state, count, total_ns, max_ns, p50_ns, p90_ns, p99_ns, truncated
		FROM state_stats ORDER BY ALL`)
	if got != want || strings.Count(want, "\n") < 500 {
		t.Errorf("kos state nodes differ from state_stats (%d vs %d rows)", strings.Count(got, "\n"), strings.Count(want, "\n"))
	}
	for _, ord := range []string{"kos", "kso"} {
		for _, sort := range []string{"name", "total"} {
			checkTreeOrder(t, q, ord, sort)
		}
	}
	if bad := dbtest.Query(t, q, `WITH t AS (SELECT * FROM state_stats_tree('kso'))
		SELECT p.run_id, p.path, p.count, p.total_ns, sum(c.count), sum(c.total_ns) FROM t p
		JOIN t c ON c.run_id = p.run_id AND c.node = 'object' AND c.path[1:len(c.path) - 1] = p.path
		WHERE p.node = 'state' GROUP BY ALL HAVING p.count <> sum(c.count) OR p.total_ns <> sum(c.total_ns) LIMIT 5`); bad != "" {
		t.Errorf("kso: objects that do not add up to their state:\n%s", bad)
	}
	// A window reaches the tree.
	got = dbtest.Query(t, q, `SELECT object_id, level, state, count, total_ns FROM state_stats_tree('kos', run := 1, t_from := 50, t_to := 270) WHERE node = 'state' ORDER BY ALL`)
	if want := dbtest.Query(t, q, `SELECT object_id, level, state, count, total_ns FROM state_stats_window(50, 270, run := 1) ORDER BY ALL`); got != want {
		t.Errorf("the window [50, 270):\n%s\nwant\n%s", got, want)
	}
	if _, err := q.Exec(`SELECT * FROM state_stats_tree('oks')`); err == nil || !strings.Contains(err.Error(), `state_stats_tree: order "oks" is not one of kos, kso`) {
		t.Errorf("a bad order: %v", err)
	}
}

// checkTreeOrder reads a tree in pos order and checks it is depth-first:
// each node's parent (its path less the last label) is the innermost
// node still open before it, and depths start at 0 per run.
func checkTreeOrder(t *testing.T, q *sql.DB, ord, sort string) {
	t.Helper()
	rows, err := q.Query(`SELECT run_id, pos, depth, coalesce(array_to_string(path, chr(31)), '') FROM state_stats_tree(?, sort_by := ?) ORDER BY run_id, pos`, ord, sort)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var stack []string
	lastRun, n := int32(-1), 0
	for rows.Next() {
		var run int32
		var pos, depth int64
		var path string
		if err := rows.Scan(&run, &pos, &depth, &path); err != nil {
			t.Fatal(err)
		}
		n++
		if run != lastRun {
			lastRun, stack = run, nil
			if depth != 0 || pos != 1 {
				t.Fatalf("%s by %s: run %d begins at pos %d, depth %d", ord, sort, run, pos, depth)
			}
			stack = append(stack, "")
			continue
		}
		if depth < 1 || int(depth) > len(stack) {
			t.Fatalf("%s by %s: run %d pos %d: depth %d under %d open nodes", ord, sort, run, pos, depth, len(stack))
		}
		stack = stack[:depth]
		parent := stack[depth-1]
		want := path
		if i := strings.LastIndexByte(path, 31); i >= 0 {
			want = path[:i]
		} else {
			want = ""
		}
		if parent != want {
			t.Fatalf("%s by %s: run %d pos %d (%q) under %q, not its parent", ord, sort, run, pos, path, parent)
		}
		stack = append(stack, path)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if n < 500 {
		t.Errorf("%s by %s: only %d nodes", ord, sort, n)
	}
}
