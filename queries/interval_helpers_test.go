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

// TestStateAtAndOverlapping checks state_at and intervals_overlapping on
// the hand-written BTF trace of state_stats_test.go.
func TestStateAtAndOverlapping(t *testing.T) {
	db := dbtest.Open(t)
	dbtest.Ingest(t, db, stateHandBTF, ingest.Options{})
	for _, c := range []struct {
		t    int64
		want string
	}{
		// At 30 A is preempted and IRQ starts: the 0 ns idle of the core
		// and IRQ's 0 ns active hold no instant. A core's instance is its
		// holder's object_id (A 2, IRQ 4, B 5; 0 idle).
		{30, "A | 0 | ready | 30 | 35\nCore_0 | 4 | IRQ | 30 | 35\nIRQ | 0 | running | 30 | 35\n"},
		{10, "A | 0 | running | 10 | 30\nCore_0 | 2 | A | 10 | 30\n"},
		// From 172 both instances of A are in force; A#1, parked, has left
		// the core.
		{180, "A | 1 | parking | 175 | 185\nA | 2 | active | 172 | 200\nCore_0 | 0 | idle | 175 | 185\n"},
		// At 299 B still runs (truncated); 300 is the end of its interval.
		{299, "B | 1 | running | 260 | 300\nCore_0 | 5 | B | 260 | 300\n"},
		{300, ""},
	} {
		got := dbtest.Query(t, db.SQL(), `SELECT object, instance, state, start_ts, end_ts FROM state_at(?) ORDER BY object, instance`, c.t)
		if got != c.want {
			t.Errorf("state_at(%d):\n%s\nwant\n%s", c.t, got, c.want)
		}
	}

	// The core between 25 and 95: A [10,30) clipped to 5, IRQ 5, A 25,
	// B 30 (it polls from 80, on its core), idle [90,95) 5, and three 0 ns
	// idles inside the window; the clipped parts fill the window: 95 - 25
	// = 70.
	got := dbtest.Query(t, db.SQL(), `SELECT state, start_ts, clip_start, clip_end, clip_dur FROM intervals_overlapping(25, 95)
		WHERE object = 'Core_0' ORDER BY start_ts, start_seq`)
	want := `A | 10 | 25 | 30 | 5
idle | 30 | 30 | 30 | 0
IRQ | 30 | 30 | 35 | 5
idle | 35 | 35 | 35 | 0
A | 35 | 35 | 60 | 25
idle | 60 | 60 | 60 | 0
B | 60 | 60 | 90 | 30
idle | 90 | 90 | 95 | 5
`
	if got != want {
		t.Errorf("intervals_overlapping(25, 95):\n%s\nwant\n%s", got, want)
	}
	if got := dbtest.Query(t, db.SQL(), `SELECT sum(clip_dur) FROM intervals_overlapping(25, 95) WHERE object = 'Core_0'`); got != "70\n" {
		t.Errorf("the core's clipped time in [25, 95) is %s, want 70", got)
	}
	// Bounds: [30, 35) holds the 0 ns idle at 30 but not the one at 35,
	// nor A [10,30), which ends where the window starts.
	got = dbtest.Query(t, db.SQL(), `SELECT state, start_ts, end_ts FROM intervals_overlapping(30, 35) WHERE object = 'Core_0' ORDER BY start_ts, start_seq`)
	if want := "idle | 30 | 30\nIRQ | 30 | 35\n"; got != want {
		t.Errorf("intervals_overlapping(30, 35):\n%s\nwant\n%s", got, want)
	}
}

// TestIntervalIntersect checks the range join on intervals written by
// hand, and on the hand-written BTF trace's aggregated traces.
func TestIntervalIntersect(t *testing.T) {
	db := dbtest.Open(t)
	// a: [0,10), the instant 10, [20,30); b: [5,20), the instants 10 and
	// 25, [30,40); and the same times in run 2, which must not meet run 1.
	//   [0,10) & [5,20) = [5,10); 10 & [5,20) = 10; 10 & 10 = 10;
	//   [20,30) & 25 = 25. [20,30) and [5,20) only touch, as do [20,30)
	//   and [30,40); [0,10) does not hold the instant 10.
	got := dbtest.Query(t, db.SQL(), `
		WITH a AS (SELECT * FROM (VALUES (1, 'a1', 0, 10), (1, 'a2', 10, 10), (1, 'a3', 20, 30), (2, 'a4', 0, 10)) t(run_id, id, start_ts, end_ts)),
		     b AS (SELECT * FROM (VALUES (1, 'b1', 5, 20), (1, 'b2', 10, 10), (1, 'b3', 25, 25), (1, 'b4', 30, 40), (2, 'b5', 20, 30)) t(run_id, id, start_ts, end_ts))
		SELECT run_id, a.id, b.id, start_ts, end_ts, dur FROM interval_intersect('a', 'b') ORDER BY ALL`)
	want := `1 | a1 | b1 | 5 | 10 | 5
1 | a2 | b1 | 10 | 10 | 0
1 | a2 | b2 | 10 | 10 | 0
1 | a3 | b3 | 25 | 25 | 0
`
	if got != want {
		t.Errorf("interval_intersect:\n%s\nwant\n%s", got, want)
	}
	// While B was blocked ([90,95) at level 1: parked; it polled before
	// and after, on its core), the core was idle the whole time: its busy
	// periods [10,90) and [95,100) only touch it.
	dbtest.Ingest(t, db, stateHandBTF, ingest.Options{})
	// It plans a range join (on small tables a piecewise merge join, on
	// large ones an IE_JOIN), not a comparison of every pair.
	plan := dbtest.Query(t, db.SQL(), `EXPLAIN SELECT * FROM interval_intersect('state_intervals', 'state_intervals')`)
	if !strings.Contains(plan, "IE_JOIN") && !strings.Contains(plan, "PIECEWISE_MERGE_JOIN") {
		t.Errorf("interval_intersect is not planned as a range join:\n%s", plan)
	}
	// DuckDB 1.1 plans no IE_JOIN in a statement with a recursive CTE
	// (a 10M-event intersection then took minutes in a piecewise merge
	// join): the aggregated traces must not use one.
	if plan := dbtest.Query(t, db.SQL(), `EXPLAIN SELECT * FROM state_trace(-1)`); strings.Contains(plan, "RECURSIVE") {
		t.Errorf("state_trace is planned with a recursive CTE:\n%s", plan)
	}
	got = dbtest.Query(t, db.SQL(), `
		WITH blocked AS (SELECT * FROM state_trace(1) WHERE object = 'B' AND state = 'blocked'),
		     core AS (SELECT * FROM state_trace(-1) WHERE object = 'Core_0')
		SELECT b.state, b.start_ts, b.end_ts, start_ts, end_ts, dur FROM interval_intersect('blocked', 'core')`)
	if want := "idle | 90 | 95 | 90 | 95 | 5\n"; got != want {
		t.Errorf("B blocked & the core:\n%s\nwant\n%s", got, want)
	}
}

// TestThreadRunningAtInterrupt answers "which thread was running when
// this interrupt came" with interval_intersect (the example of its
// comment) on a generated QNX trace, and checks the answer against the
// generator: each INT_ENTR event and the truth's RUNNING interval of a
// thread on the event's CPU that holds its time.
func TestThreadRunningAtInterrupt(t *testing.T) {
	db := dbtest.Open(t)
	qcfg, qtruth, events, _ := stateRuns(t, db)
	cps := qcfg.CyclesPerSec
	if cps == 0 {
		cps = 736629000 // tracegen's default
	}
	var want []string
	for _, e := range events {
		if e.Class != "INT_ENTR" {
			continue
		}
		ns := tracegen.QNXCyclesToNS(e.Cycles, cps)
		for _, iv := range qtruth.ThreadStates {
			if iv.State == "RUNNING" && iv.CPU == e.CPU && iv.StartNS <= ns && ns < iv.EndNS {
				want = append(want, fmt.Sprintf("%d | %d | %d/%d", ns, e.CPU, iv.Pid, iv.Tid))
			}
		}
	}
	sort.Strings(want)
	if len(want) < 100 {
		t.Fatalf("only %d interrupts with a known running thread", len(want))
	}
	rows := dbtest.Query(t, db.SQL(), `
		WITH irq AS (SELECT e.run_id, e.ts AS start_ts, e.ts AS end_ts, e.cpu, e.seq
		             FROM events e JOIN runs r USING (run_id)
		             WHERE r.format = 'qnx' AND e.class = 'INT' AND e.event = 'INT_ENTR'),
		     running AS (SELECT s.*, o.pid || '/' || o.native_id AS thread FROM state_intervals s
		                 JOIN objects o USING (run_id, object_id)
		                 WHERE o.kind = 'thread' AND s.state = 'RUNNING')
		SELECT a.start_ts, a.cpu, b.thread
		FROM interval_intersect('irq', 'running')
		WHERE a.cpu = b.cpu AND NOT b.truncated`)
	got := strings.Split(strings.TrimSuffix(rows, "\n"), "\n")
	sort.Strings(got)
	if g, w := strings.Join(got, "\n"), strings.Join(want, "\n"); g != w {
		t.Errorf("running thread at each interrupt (%d vs %d):\n%s", len(got), len(want), stateFirstDiff(got, want))
	}
}
