package queries_test

import (
	"math"
	"os"
	"path/filepath"
		"testing"

	"github.com/traceduck/traceduck/ingest"
	_ "github.com/traceduck/traceduck/ingest/all"
	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/schema"
)

// stateHandBTF is one core running tasks A and B and the ISR IRQ, whose
// intervals are worked out by hand in the comments (times in ns):
//
//	Core_0: idle [0,10) A [10,30) idle [30,30) IRQ [30,35) idle [35,35)
//	        A [35,60) idle [60,60) B [60,80) idle [80,97) B [97,100)
//	        idle [100,160) A [160,200) idle [200,200) A [200,230)
//	        idle [230,260) B [260,300) (cut by the end: truncated)
//	A#0: active [0,10) running [10,30) ready [30,35) running [35,60)
//	A#1: active [150,160) running [160,200)
//	A#2: active [170,200) running [200,230)   (overlaps A#1)
//	B#0: active [60,60) running [60,80) polling [80,90) parking [90,95)
//	     polling [95,97) running [97,100)
//	B#1: active [250,260) running [260,300) (truncated)
//	IRQ#0: active [30,30) running [30,35)
const stateHandBTF = `#version 2.2.0
#creator traceduck test
#timeScale ns
0,Core_0,0,C,Core_0,0,set_frequency,1000
0,Stim,0,T,A,0,activate
10,Core_0,0,T,A,0,start
30,Stim,0,I,IRQ,0,activate
30,Core_0,0,T,A,0,preempt
30,Core_0,0,I,IRQ,0,start
35,Core_0,0,I,IRQ,0,terminate
35,Core_0,0,T,A,0,resume
60,Core_0,0,T,A,0,terminate
60,Stim,0,T,B,0,activate
60,Core_0,0,T,B,0,start
80,Core_0,0,T,B,0,poll
90,Core_0,0,T,B,0,park
95,Core_0,0,T,B,0,poll_parking
97,Core_0,0,T,B,0,run
100,Core_0,0,T,B,0,terminate
150,Stim,0,T,A,1,activate
160,Core_0,0,T,A,1,start
170,Stim,0,T,A,2,activate
200,Core_0,0,T,A,1,terminate
200,Core_0,0,T,A,2,start
230,Core_0,0,T,A,2,terminate
250,Stim,0,T,B,1,activate
260,Core_0,0,T,B,1,start
300,Stim,0,STI,Stim,0,trigger
`

// ingestText writes text to a file in a temporary directory and ingests it.
func stateIngestText(t *testing.T, db *schema.DB, name, text string, opt ingest.Options) ingest.Result {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return dbtest.Ingest(t, db, path, opt)
}

// TestStateStatsByHand checks state_stats on stateHandBTF against statistics
// worked out by hand from the intervals above. Level 0 counts intervals as
// they are; level 1 (BTF: tasks/isrs/idle, runnable/on_cpu/blocked) and
// level 2 (busy/idle) leave out 0 ns intervals and merge what meets.
func TestStateStatsByHand(t *testing.T) {
	db := dbtest.Open(t)
	stateIngestText(t, db, "hand.btf", stateHandBTF, ingest.Options{})

	// Durations by hand (non-truncated), then count, total, min, p50, p90,
	// p99, max (nearest rank: the value of rank ceil(q * count)), the
	// number left out, and the parent state.
	//   Core_0 level 0 idle: 10 0 0 0 17 60 0 30 -> sorted 0 0 0 0 10 17 30 60:
	//     p50 rank 4 = 0, p90 rank ceil(7.2) = 8 = 60.
	//   level 1 tasks: [10,30) 20, [35,60)+[60,80) 45, [97,100) 3,
	//     [160,200)+[200,230) 70 (the 0 ns idle between them left out),
	//     [260,300) truncated -> sorted 3 20 45 70.
	//   level 2 busy: [10,30)+[30,35)+[35,80) = [10,80) 70, [97,100) 3,
	//     [160,230) 70, [260,300) truncated -> sorted 3 70 70: p50 rank 2.
	//   A level 1: A's instances overlap (A#2 is activated while A#1
	//     runs), so each instance is its own sequence and A#1's
	//     on_cpu [160,200) does not merge with A#2's [200,230).
	//   B level 1: blocked = polling [80,90) + parking [90,95) + polling
	//     [95,97) = [80,97) 17; runnable: B#0's 0 ns active is left out.
	//   IRQ level 1: its only runnable interval is 0 ns: no row.
	got := dbtest.Query(t, db.SQL(), `
		SELECT object, level, state, coalesce(parent_state, '-'), count, total_ns, min_ns, p50_ns, p90_ns, p99_ns, max_ns, truncated
		FROM state_stats WHERE kind IN ('cpu', 'task', 'isr') ORDER BY object, level, state`)
	want := `A | 0 | active | runnable | 3 | 50 | 10 | 10 | 30 | 30 | 30 | 0
A | 0 | ready | runnable | 1 | 5 | 5 | 5 | 5 | 5 | 5 | 0
A | 0 | running | on_cpu | 4 | 115 | 20 | 25 | 40 | 40 | 40 | 0
A | 1 | on_cpu | - | 4 | 115 | 20 | 25 | 40 | 40 | 40 | 0
A | 1 | runnable | - | 4 | 55 | 5 | 10 | 30 | 30 | 30 | 0
B | 0 | active | runnable | 2 | 10 | 0 | 0 | 10 | 10 | 10 | 0
B | 0 | parking | blocked | 1 | 5 | 5 | 5 | 5 | 5 | 5 | 0
B | 0 | polling | blocked | 2 | 12 | 2 | 2 | 10 | 10 | 10 | 0
B | 0 | running | on_cpu | 2 | 23 | 3 | 3 | 20 | 20 | 20 | 1
B | 1 | blocked | - | 1 | 17 | 17 | 17 | 17 | 17 | 17 | 0
B | 1 | on_cpu | - | 2 | 23 | 3 | 3 | 20 | 20 | 20 | 1
B | 1 | runnable | - | 1 | 10 | 10 | 10 | 10 | 10 | 10 | 0
Core_0 | 0 | A | tasks | 4 | 115 | 20 | 25 | 40 | 40 | 40 | 0
Core_0 | 0 | B | tasks | 2 | 23 | 3 | 3 | 20 | 20 | 20 | 1
Core_0 | 0 | IRQ | isrs | 1 | 5 | 5 | 5 | 5 | 5 | 5 | 0
Core_0 | 0 | idle | idle | 8 | 117 | 0 | 0 | 60 | 60 | 60 | 0
Core_0 | 1 | idle | idle | 4 | 117 | 10 | 17 | 60 | 60 | 60 | 0
Core_0 | 1 | isrs | busy | 1 | 5 | 5 | 5 | 5 | 5 | 5 | 0
Core_0 | 1 | tasks | busy | 4 | 138 | 3 | 20 | 70 | 70 | 70 | 1
Core_0 | 2 | busy | - | 3 | 143 | 3 | 70 | 70 | 70 | 70 | 1
Core_0 | 2 | idle | - | 4 | 117 | 10 | 17 | 60 | 60 | 60 | 0
IRQ | 0 | active | runnable | 1 | 0 | 0 | 0 | 0 | 0 | 0 | 0
IRQ | 0 | running | on_cpu | 1 | 5 | 5 | 5 | 5 | 5 | 5 | 0
IRQ | 1 | on_cpu | - | 1 | 5 | 5 | 5 | 5 | 5 | 5 | 0
`
	if got != want {
		t.Errorf("state_stats:\n%s\nwant\n%s", got, want)
	}

	// Mean and sample standard deviation by hand.
	//   Core_0 idle level 0: mean 117/8 = 14.625; squared deviations
	//     4 * 14.625^2 + 4.625^2 + 2.375^2 + 15.375^2 + 45.375^2 = 3177.875,
	//     / 7 -> stddev sqrt(453.98214...).
	//   Core_0 A: 20 25 30 40, mean 28.75; 76.5625 + 14.0625 + 1.5625 +
	//     126.5625 = 218.75, / 3.
	//   Core_0 busy level 2: 3 70 70, mean 143/3; deviations -134/3, 67/3,
	//     67/3: (17956 + 4489 + 4489) / 9 / 2.
	//   IRQ running: one interval, no standard deviation.
	for _, c := range []struct {
		object, state string
		level         int
		mean, stddev  float64
	}{
		{"Core_0", "idle", 0, 14.625, math.Sqrt(3177.875 / 7)},
		{"Core_0", "A", 0, 28.75, math.Sqrt(218.75 / 3)},
		{"Core_0", "busy", 2, 143.0 / 3, math.Sqrt((17956.0 + 4489 + 4489) / 9 / 2)},
		{"IRQ", "running", 0, 5, math.NaN()},
	} {
		var mean float64
		var sd *float64
		if err := db.SQL().QueryRow(`SELECT mean_ns, stddev_ns FROM state_stats WHERE object = ? AND state = ? AND level = ?`,
			c.object, c.state, c.level).Scan(&mean, &sd); err != nil {
			t.Fatalf("%s %s %d: %v", c.object, c.state, c.level, err)
		}
		if !stateNear(mean, c.mean) {
			t.Errorf("%s %s level %d: mean %v, want %v", c.object, c.state, c.level, mean, c.mean)
		}
		switch {
		case math.IsNaN(c.stddev) && sd != nil:
			t.Errorf("%s %s level %d: stddev %v, want NULL", c.object, c.state, c.level, *sd)
		case !math.IsNaN(c.stddev) && (sd == nil || !stateNear(*sd, c.stddev)):
			t.Errorf("%s %s level %d: stddev %v, want %v", c.object, c.state, c.level, sd, c.stddev)
		}
	}

	// The merged traces themselves: Core_0 at level 2, with the number of
	// state_intervals rows each merged interval is made of.
	got = dbtest.Query(t, db.SQL(), `
		SELECT state, start_ts, end_ts, dur, parts, truncated, instance, cpu, start_seq, end_seq
		FROM state_trace(2) WHERE object = 'Core_0' ORDER BY start_ts`)
	want = `idle | 0 | 10 | 10 | 1 | false | 0 | 0 | 1 | 3
busy | 10 | 80 | 70 | 4 | false | 0 | 0 | 3 | 12
idle | 80 | 97 | 17 | 1 | false | 0 | 0 | 12 | 15
busy | 97 | 100 | 3 | 1 | false | 0 | 0 | 15 | 16
idle | 100 | 160 | 60 | 1 | false | 0 | 0 | 16 | 18
busy | 160 | 230 | 70 | 2 | false | 0 | 0 | 18 | 22
idle | 230 | 260 | 30 | 1 | false | 0 | 0 | 22 | 24
busy | 260 | 300 | 40 | 1 | true | 0 | 0 | 24 | NULL
`
	if got != want {
		t.Errorf("state_trace(2) of Core_0:\n%s\nwant\n%s", got, want)
	}
	// Levels counted from the top: -1 is each kind's top (cpu 2, task 1),
	// a level past a kind's depth is its top too.
	for _, q := range []string{
		`SELECT DISTINCT kind, level FROM state_trace(-1) WHERE kind IN ('cpu', 'task') ORDER BY kind`,
		`SELECT DISTINCT kind, level FROM state_trace(7) WHERE kind IN ('cpu', 'task') ORDER BY kind`,
	} {
		if got, want := dbtest.Query(t, db.SQL(), q), "cpu | 2\ntask | 1\n"; got != want {
			t.Errorf("%s:\n%s\nwant\n%s", q, got, want)
		}
	}
	if got, want := dbtest.Query(t, db.SQL(), `SELECT DISTINCT kind, level FROM state_trace(-2) WHERE kind IN ('cpu', 'task') ORDER BY kind`),
		"cpu | 1\ntask | 0\n"; got != want {
		t.Errorf("state_trace(-2):\n%s\nwant\n%s", got, want)
	}
	// state_summary is level 0 of state_stats, truncated intervals left out.
	got = dbtest.Query(t, db.SQL(), `SELECT * FROM state_summary WHERE object = 'B' ORDER BY state`)
	want = `1 | task | B | active | 2 | 10 | 5 | 10
1 | task | B | parking | 1 | 5 | 5 | 5
1 | task | B | polling | 2 | 12 | 6 | 10
1 | task | B | running | 2 | 23 | 11.5 | 20
`
	if got != want {
		t.Errorf("state_summary:\n%s\nwant\n%s", got, want)
	}
}

func stateNear(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b))
}
