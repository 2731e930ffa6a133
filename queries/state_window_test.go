package queries_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/internal/tracegen"
)

// TestStateStatsWindowByHand: state_stats_window on windows worked out by
// hand. The BTF seed example: T_1MS_0 runs 100..25100, so [1000, 11000)
// holds 10000 ns of it (issue 22's figure). stateHandBTF (its intervals
// are listed above stateHandBTF) in [50, 270): Core_0's level 0
//
//	A [50,60) 10 (clipped), [160,175) 15, [185,200) 15, [200,230) 30: 4, 70
//	B [60,90) 30, [95,100) 5, [260,270) 10: 3, 45 (the last was cut by
//	  the end of the trace, [260,300), truncated; the window ends before:
//	  its part inside is known)
//	idle [60,60) 0, [90,95) 5, [100,160) 60, [175,185) 10, [200,200) 0,
//	  [230,260) 30: 6, 105
//
// and level 3: busy [50,90) 40 (A, B and the 0 ns idle between them),
// [95,100) 5, [160,175) 15, [185,230) 45, [260,270) 10: 5, 115; idle
// 5, 60, 10, 30: 4, 105. 220 ns in all, the window's width.
func TestStateStatsWindowByHand(t *testing.T) {
	db := dbtest.Open(t)
	dbtest.Ingest(t, db, "../samples/btf/seed-example.btf", ingest.Options{})
	dbtest.Ingest(t, db, stateHandBTF, ingest.Options{})
	got := dbtest.Query(t, db.SQL(), `SELECT level, state, count, total_ns, truncated FROM state_stats_window(1000, 11000, run := 1)
		WHERE object = 'T_1MS_0' ORDER BY ALL`)
	if want := "0 | running | 1 | 10000 | 0\n1 | on_cpu | 1 | 10000 | 0\n"; got != want {
		t.Errorf("seed example, T_1MS_0 in [1000, 11000):\n%s\nwant\n%s", got, want)
	}
	got = dbtest.Query(t, db.SQL(), `SELECT level, state, count, total_ns, min_ns, max_ns, truncated FROM state_stats_window(50, 270, run := 2)
		WHERE object = 'Core_0' AND level IN (0, 3) ORDER BY ALL`)
	want := `0 | A | 4 | 70 | 10 | 30 | 0
0 | B | 3 | 45 | 5 | 30 | 0
0 | idle | 6 | 105 | 0 | 60 | 0
3 | busy | 5 | 115 | 5 | 45 | 0
3 | idle | 4 | 105 | 5 | 60 | 0
`
	if got != want {
		t.Errorf("stateHandBTF, Core_0 in [50, 270):\n%s\nwant\n%s", got, want)
	}
	// A window past the end keeps B's last interval truncated: its true
	// end is unknown there.
	got = dbtest.Query(t, db.SQL(), `SELECT count, total_ns, truncated FROM state_stats_window(250, 400, run := 2)
		WHERE object = 'Core_0' AND level = 0 AND state = 'B'`)
	if want := "0 | 0 | 1\n"; got != want {
		t.Errorf("stateHandBTF, Core_0's B in [250, 400): %q, want %q", got, want)
	}
	// relative := true counts from each run's first event (both 0 here),
	// and an empty window is an error that says so.
	if a, b := dbtest.Query(t, db.SQL(), `SELECT * FROM state_stats_window(50, 270, relative := true) ORDER BY ALL`),
		dbtest.Query(t, db.SQL(), `SELECT * FROM state_stats_window(50, 270) ORDER BY ALL`); a != b {
		t.Errorf("relative windows from 0 differ:\n%s\n%s", a, b)
	}
	if _, err := db.SQL().Exec(`SELECT * FROM state_stats_window(270, 50)`); err == nil || !strings.Contains(err.Error(), "state_stats_window: the window [270, 50) is empty: want t1 < t2") {
		t.Errorf("empty window: %v", err)
	}
}

// TestStateStatsWindowRecomputed: on runs of five formats, state_stats in
// a window of each run (its middle third, relative to its first event) is
// the Go recomputation over the intervals clipped to the window
// (stateStatsByGoIn); the generated QNX run's level 0 is the simulator's
// thread states and kernel calls clipped to the window; the whole span
// gives state_stats.
func TestStateStatsWindowRecomputed(t *testing.T) {
	db := dbtest.Open(t)
	_, qtruth, _, _ := stateRuns(t, db)
	q := db.SQL()
	rows, err := q.Query(`SELECT run_id, first_ts, last_ts, format FROM runs ORDER BY run_id`)
	if err != nil {
		t.Fatal(err)
	}
	type span struct {
		run         int32
		first, last int64
		format      string
	}
	var runs []span
	for rows.Next() {
		var s span
		if err := rows.Scan(&s.run, &s.first, &s.last, &s.format); err != nil {
			t.Fatal(err)
		}
		runs = append(runs, s)
	}
	rows.Close()
	for _, r := range runs {
		third := (r.last - r.first) / 3
		lo, hi := r.first+third, r.first+2*third
		prefix := fmt.Sprintf("%d | ", r.run)
		var want []string
		for _, l := range stateStatsByGoIn(t, q, &[2]int64{lo, hi}) {
			if strings.HasPrefix(l, prefix) {
				want = append(want, l)
			}
		}
		got := stateStatsFrom(t, q, fmt.Sprintf("state_stats_window(%d, %d, run := %d, relative := true)", third, 2*third, r.run))
		if g, w := strings.Join(got, "\n"), strings.Join(want, "\n"); g != w || len(got) == 0 {
			t.Errorf("run %d (%s) in [%d, %d): state_stats_window differs from the Go recomputation (%d vs %d rows):\n%s", r.run, r.format, lo, hi, len(got), len(want), stateFirstDiff(got, want))
		}
		whole := stateStatsFrom(t, q, fmt.Sprintf("state_stats_window(%d, %d, run := %d)", r.first, r.last+1, r.run))
		var all []string
		for _, l := range stateStatsBySQL(t, q) {
			if strings.HasPrefix(l, prefix) {
				all = append(all, l)
			}
		}
		if g, w := strings.Join(whole, "\n"), strings.Join(all, "\n"); g != w {
			t.Errorf("run %d: the whole span differs from state_stats:\n%s", r.run, stateFirstDiff(whole, all))
		}
		if r.format != "qnx" {
			continue
		}
		// The simulator's intervals, clipped: those open at the end are
		// complete inside a window that ends before it.
		type tk struct{ thread, state string }
		durs := map[tk][]int64{}
		ivs := append(append(append([]tracegen.QNXInterval(nil), qtruth.ThreadStates...), qtruth.KernelCalls...), qtruth.ThreadOpen...)
		for _, iv := range ivs {
			s, e := max(iv.StartNS, lo), min(iv.EndNS, hi)
			if iv.StartNS >= hi || iv.EndNS <= lo && !(iv.StartNS == iv.EndNS && iv.StartNS >= lo) {
				continue
			}
			k := tk{fmt.Sprintf("%d/%d", iv.Pid, iv.Tid), iv.State}
			durs[k] = append(durs[k], e-s)
		}
		var truth []string
		for k, ds := range durs {
			var total int64
			for _, d := range ds {
				total += d
			}
			sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
			truth = append(truth, fmt.Sprintf("%s | %s | %d | %d | %d | %d", k.thread, k.state, len(ds), total, ds[0], ds[len(ds)-1]))
		}
		sort.Strings(truth)
		got = strings.Split(strings.TrimSuffix(dbtest.Query(t, q, fmt.Sprintf(`
			SELECT o.pid || '/' || o.native_id, s.state, s.count, s.total_ns, s.min_ns, s.max_ns
			FROM state_stats_window(%d, %d, run := %d) s JOIN objects o USING (run_id, object_id)
			WHERE s.kind = 'thread' AND s.level = 0 AND s.count > 0`, lo, hi, r.run)), "\n"), "\n")
		sort.Strings(got)
		if g, w := strings.Join(got, "\n"), strings.Join(truth, "\n"); g != w || len(truth) < 20 {
			t.Errorf("QNX threads in [%d, %d) differ from the simulator's (%d vs %d rows):\n%s", lo, hi, len(got), len(truth), stateFirstDiff(got, truth))
		}
	}
}

// TestEcoTreeWindow: eco_tree_window counts the events in the window. The
// BTF seed example's events are at 0 (2), 100 (2), 25000 and 25100, so
// [0, 101) has 4, [100, 25000) 2, and its depth-4 counts of any window are
// the events of each triple there.
func TestEcoTreeWindow(t *testing.T) {
	db := dbtest.Open(t)
	dbtest.Ingest(t, db, "../samples/btf/seed-example.btf", ingest.Options{})
	dbtest.Ingest(t, db, "../samples/btf/rtos-2core.btf", ingest.Options{})
	for _, c := range []struct {
		lo, hi int64
		want   string
	}{{0, 101, "4\n"}, {100, 25000, "2\n"}, {25100, 25101, "1\n"}} {
		if got := dbtest.Query(t, db.SQL(), `SELECT count FROM eco_tree_window('eco', ?, ?) WHERE run_id = 1 AND depth = 0`, c.lo, c.hi); got != c.want {
			t.Errorf("[%d, %d): %q events, want %q", c.lo, c.hi, got, c.want)
		}
	}
	for _, ord := range []string{"eco", "oce"} {
		got := dbtest.Query(t, db.SQL(), `SELECT run_id, eco_id, count FROM eco_tree_window(?, 5000000, 9000000) WHERE depth = 4 ORDER BY ALL`, ord)
		want := dbtest.Query(t, db.SQL(), `SELECT run_id, eco_id, count(*) FROM events WHERE ts >= 5000000 AND ts < 9000000 GROUP BY ALL ORDER BY ALL`)
		if got != want || strings.Count(want, "\n") < 10 {
			t.Errorf("%s: depth-4 counts in the window:\n%s\nwant\n%s", ord, got, want)
		}
	}
	if _, err := db.SQL().Exec(`SELECT * FROM eco_tree_window('eco', 10, 10)`); err == nil || !strings.Contains(err.Error(), "eco_tree: the window [10, 10) is empty") {
		t.Errorf("empty window: %v", err)
	}
}
