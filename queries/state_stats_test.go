package queries_test

import (
	"bytes"
	"database/sql"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	_ "github.com/traceduck/traceduck/ingest/all"
	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/internal/qnxenc"
	"github.com/traceduck/traceduck/internal/tracegen"
	"github.com/traceduck/traceduck/schema"
)

// stateHandBTF is a BTF trace of one core running tasks A and B and the
// ISR IRQ, whose intervals are worked out by hand here (times in ns; the
// CLI test of 'traceduck states' reads it too). A polling task keeps its
// core (active waiting); park takes it off:
//
//	Core_0: idle [0,10) A [10,30) idle [30,30) IRQ [30,35) idle [35,35)
//	        A [35,60) idle [60,60) B [60,90) idle [90,95) B [95,100)
//	        idle [100,160) A [160,175) idle [175,185) A [185,200)
//	        idle [200,200) A [200,230) idle [230,260)
//	        B [260,300) (cut by the end: truncated)
//	A#0: active [0,10) running [10,30) ready [30,35) running [35,60)
//	A#1: active [150,160) running [160,170) polling [170,175)
//	     parking [175,185) polling [185,190) running [190,200)
//	A#2: active [172,200) running [200,230)   (overlaps A#1)
//	B#0: active [60,60) running [60,80) polling [80,90) parking [90,95)
//	     polling [95,97) running [97,100)
//	B#1: active [250,260) running [260,300) (truncated)
//	IRQ#0: active [30,30) running [30,35)
const stateHandBTF = "testdata/states-hand.btf"

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
// they are; the levels above (a core: 1 the holder, 2 tasks/isrs/idle, 3
// busy/idle; a task: 1 runnable/on_cpu/blocked) leave out 0 ns intervals
// and merge what meets.
func TestStateStatsByHand(t *testing.T) {
	db := dbtest.Open(t)
	dbtest.Ingest(t, db, stateHandBTF, ingest.Options{})

	// Durations by hand (non-truncated), then count, total, min, p50, p90,
	// p99, max (nearest rank: the value of rank ceil(q * count)), the
	// number left out, and the parent state.
	//   Core_0 level 0 idle: 10 0 0 0 5 60 10 0 30 -> sorted
	//     0 0 0 0 5 10 10 30 60: p50 rank ceil(4.5) = 5 = 5, p90 rank
	//     ceil(8.1) = 9 = 60. A: 20 25 15 15 30; a holder is its own
	//     parent at level 0 (the CPU model declares it at level 1).
	//   level 1 A: [10,30) 20, [35,60) 25, [160,175) 15, [185,200) +
	//     [200,230) 45 (the 0 ns idle between them left out) -> sorted
	//     15 20 25 45.
	//   level 2 tasks: [10,30) 20, [35,60)+[60,90) 55, [95,100) 5,
	//     [160,175) 15, [185,230) 45, [260,300) truncated -> sorted
	//     5 15 20 45 55.
	//   level 3 busy: [10,30)+[30,35)+[35,90) = [10,90) 80, [95,100) 5,
	//     [160,175) 15, [185,230) 45, [260,300) truncated -> sorted
	//     5 15 45 80: p50 rank 2, p90 rank ceil(3.6) = 4.
	//   A level 1: A's instances overlap (A#2 is activated while A#1
	//     polls), so each instance is its own sequence: A#1's running
	//     and polling are one on_cpu interval [160,175) although A#2's
	//     activation comes between them, and A#1's on_cpu [185,200) does
	//     not merge with A#2's [200,230).
	//   B level 1: on_cpu = running [60,80) + polling [80,90) = 30 and
	//     polling [95,97) + running [97,100) = 5; blocked = parking
	//     [90,95) 5; runnable: B#0's 0 ns active is left out.
	//   IRQ level 1: its only runnable interval is 0 ns: no row.
	got := dbtest.Query(t, db.SQL(), `
		SELECT object, level, state, coalesce(parent_state, '-'), count, total_ns, min_ns, p50_ns, p90_ns, p99_ns, max_ns, truncated
		FROM state_stats WHERE kind IN ('cpu', 'task', 'isr') ORDER BY object, level, state`)
	want := `A | 0 | active | runnable | 3 | 48 | 10 | 10 | 28 | 28 | 28 | 0
A | 0 | parking | blocked | 1 | 10 | 10 | 10 | 10 | 10 | 10 | 0
A | 0 | polling | on_cpu | 2 | 10 | 5 | 5 | 5 | 5 | 5 | 0
A | 0 | ready | runnable | 1 | 5 | 5 | 5 | 5 | 5 | 5 | 0
A | 0 | running | on_cpu | 5 | 95 | 10 | 20 | 30 | 30 | 30 | 0
A | 1 | blocked | - | 1 | 10 | 10 | 10 | 10 | 10 | 10 | 0
A | 1 | on_cpu | - | 5 | 105 | 15 | 20 | 30 | 30 | 30 | 0
A | 1 | runnable | - | 4 | 53 | 5 | 10 | 28 | 28 | 28 | 0
B | 0 | active | runnable | 2 | 10 | 0 | 0 | 10 | 10 | 10 | 0
B | 0 | parking | blocked | 1 | 5 | 5 | 5 | 5 | 5 | 5 | 0
B | 0 | polling | on_cpu | 2 | 12 | 2 | 2 | 10 | 10 | 10 | 0
B | 0 | running | on_cpu | 2 | 23 | 3 | 3 | 20 | 20 | 20 | 1
B | 1 | blocked | - | 1 | 5 | 5 | 5 | 5 | 5 | 5 | 0
B | 1 | on_cpu | - | 2 | 35 | 5 | 5 | 30 | 30 | 30 | 1
B | 1 | runnable | - | 1 | 10 | 10 | 10 | 10 | 10 | 10 | 0
Core_0 | 0 | A | A | 5 | 105 | 15 | 20 | 30 | 30 | 30 | 0
Core_0 | 0 | B | B | 2 | 35 | 5 | 5 | 30 | 30 | 30 | 1
Core_0 | 0 | IRQ | IRQ | 1 | 5 | 5 | 5 | 5 | 5 | 5 | 0
Core_0 | 0 | idle | idle | 9 | 115 | 0 | 5 | 60 | 60 | 60 | 0
Core_0 | 1 | A | tasks | 4 | 105 | 15 | 20 | 45 | 45 | 45 | 0
Core_0 | 1 | B | tasks | 2 | 35 | 5 | 5 | 30 | 30 | 30 | 1
Core_0 | 1 | IRQ | isrs | 1 | 5 | 5 | 5 | 5 | 5 | 5 | 0
Core_0 | 1 | idle | idle | 5 | 115 | 5 | 10 | 60 | 60 | 60 | 0
Core_0 | 2 | idle | idle | 5 | 115 | 5 | 10 | 60 | 60 | 60 | 0
Core_0 | 2 | isrs | busy | 1 | 5 | 5 | 5 | 5 | 5 | 5 | 0
Core_0 | 2 | tasks | busy | 5 | 140 | 5 | 20 | 55 | 55 | 55 | 1
Core_0 | 3 | busy | - | 4 | 145 | 5 | 15 | 80 | 80 | 80 | 1
Core_0 | 3 | idle | - | 5 | 115 | 5 | 10 | 60 | 60 | 60 | 0
IRQ | 0 | active | runnable | 1 | 0 | 0 | 0 | 0 | 0 | 0 | 0
IRQ | 0 | running | on_cpu | 1 | 5 | 5 | 5 | 5 | 5 | 5 | 0
IRQ | 1 | on_cpu | - | 1 | 5 | 5 | 5 | 5 | 5 | 5 | 0
`
	if got != want {
		t.Errorf("state_stats:\n%s\nwant\n%s", got, want)
	}

	// Mean and sample standard deviation by hand.
	//   Core_0 idle level 0: 0 0 0 0 5 10 10 30 60, mean 115/9; the
	//     squared deviations sum to sum(x^2) - 115^2/9 = 4725 - 13225/9
	//     = 29300/9, / 8.
	//   Core_0 A: 15 15 20 25 30, mean 21; 36 + 36 + 1 + 16 + 81 = 170, / 4.
	//   Core_0 busy level 3: 5 15 45 80, mean 36.25; 976.5625 + 451.5625
	//     + 76.5625 + 1914.0625 = 3418.75, / 3.
	//   IRQ running: one interval, no standard deviation.
	for _, c := range []struct {
		object, state string
		level         int
		mean, stddev  float64
	}{
		{"Core_0", "idle", 0, 115.0 / 9, math.Sqrt(29300.0 / 72)},
		{"Core_0", "A", 0, 21, math.Sqrt(42.5)},
		{"Core_0", "busy", 3, 36.25, math.Sqrt(3418.75 / 3)},
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

	// The merged traces themselves: Core_0 at level 3, with the number of
	// state_intervals rows each merged interval is made of, and their
	// instance (the holder's object_id: A 2, B 5; NULL when the parts have
	// different ones).
	got = dbtest.Query(t, db.SQL(), `
		SELECT state, start_ts, end_ts, dur, parts, truncated, instance, cpu, start_seq, end_seq
		FROM state_trace(3) WHERE object = 'Core_0' ORDER BY start_ts`)
	want = `idle | 0 | 10 | 10 | 1 | false | 0 | 0 | 1 | 3
busy | 10 | 90 | 80 | 4 | false | NULL | 0 | 3 | 13
idle | 90 | 95 | 5 | 1 | false | 0 | 0 | 13 | 14
busy | 95 | 100 | 5 | 1 | false | 5 | 0 | 14 | 16
idle | 100 | 160 | 60 | 1 | false | 0 | 0 | 16 | 18
busy | 160 | 175 | 15 | 1 | false | 2 | 0 | 18 | 21
idle | 175 | 185 | 10 | 1 | false | 0 | 0 | 21 | 22
busy | 185 | 230 | 45 | 2 | false | 2 | 0 | 22 | 26
idle | 230 | 260 | 30 | 1 | false | 0 | 0 | 26 | 28
busy | 260 | 300 | 40 | 1 | true | 5 | 0 | 28 | NULL
`
	if got != want {
		t.Errorf("state_trace(3) of Core_0:\n%s\nwant\n%s", got, want)
	}
	// Levels counted from the top: -1 is each kind's top (cpu 3, task 1),
	// a level past a kind's depth is its top too.
	for _, q := range []string{
		`SELECT DISTINCT kind, level FROM state_trace(-1) WHERE kind IN ('cpu', 'task') ORDER BY kind`,
		`SELECT DISTINCT kind, level FROM state_trace(7) WHERE kind IN ('cpu', 'task') ORDER BY kind`,
	} {
		if got, want := dbtest.Query(t, db.SQL(), q), "cpu | 3\ntask | 1\n"; got != want {
			t.Errorf("%s:\n%s\nwant\n%s", q, got, want)
		}
	}
	if got, want := dbtest.Query(t, db.SQL(), `SELECT DISTINCT kind, level FROM state_trace(-2) WHERE kind IN ('cpu', 'task') ORDER BY kind`),
		"cpu | 2\ntask | 0\n"; got != want {
		t.Errorf("state_trace(-2):\n%s\nwant\n%s", got, want)
	}
	if got, want := dbtest.Query(t, db.SQL(), `SELECT state_level_at(-1, 2), state_level_at(5, 2), state_level_at(-4, 2), state_level_at(1, NULL), state_level_at(-1, NULL)`),
		"2 | 2 | 0 | 0 | 0\n"; got != want {
		t.Errorf("state_level_at: %s, want %s", got, want)
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

// stateRow is one state_intervals row with its object.
type stateRow struct {
	run, obj   int32
	kind, name string
	inst       int64
	state      string
	start, end int64
	seq        sql.NullInt64
	endSeq     sql.NullInt64
	truncated  bool
}

// clip cuts r to the window [lo, hi) as state_trace_levels does (the
// definition in its comment): false when r is outside it; the part
// inside is truncated only where the trace cut r on a side the window
// does not cut.
func (r stateRow) clip(lo, hi int64) (stateRow, bool) {
	if r.start >= hi || r.end <= lo && !(r.start == r.end && r.start >= lo) {
		return r, false
	}
	cutStart, cutEnd := r.start < lo, r.end > hi
	if cutStart {
		r.start, r.seq = lo, sql.NullInt64{}
	}
	if cutEnd {
		r.end, r.endSeq = hi, sql.NullInt64{}
	}
	// the trace cut it at the start when its start_seq was NULL, at the
	// end when its end_seq was: known if the window cut every such side
	if r.truncated && (!r.seq.Valid && !cutStart || !r.endSeq.Valid && !cutEnd || r.seq.Valid && r.endSeq.Valid) {
		return r, true
	}
	r.truncated = false
	return r, true
}

// stateStatsByGo recomputes state_stats from state_intervals and
// state_levels in Go, from the definition in state_aggregation.sql and
// state_stats.sql, and returns its rows as text lines (integers exactly,
// mean and standard deviation to 9 significant digits).
func stateStatsByGo(t *testing.T, db *sql.DB) []string {
	return stateStatsByGoIn(t, db, nil)
}

// stateStatsByGoIn is stateStatsByGo over the window win ([lo, hi) in ns;
// nil: the whole trace): the intervals clipped to it first, each
// object's sequences told from its intervals over the whole trace (a
// window of the merged trace is the merged trace of the window).
func stateStatsByGoIn(t *testing.T, db *sql.DB, win *[2]int64) []string {
	t.Helper()
	type levelKey struct {
		run         int32
		kind, state string
		level       int
	}
	parent := map[levelKey]string{}
	depth := map[[2]string]int{} // (run, kind) -> depth
	rs, err := db.Query(`SELECT run_id, kind, state, level, coalesce(parent_state, '') FROM state_levels`)
	if err != nil {
		t.Fatal(err)
	}
	for rs.Next() {
		var k levelKey
		var p string
		if err := rs.Scan(&k.run, &k.kind, &k.state, &k.level, &p); err != nil {
			t.Fatal(err)
		}
		parent[k] = p
		if p != "" {
			dk := [2]string{fmt.Sprint(k.run), k.kind}
			depth[dk] = max(depth[dk], k.level+1)
		}
	}
	rs.Close()
	mapUp := func(run int32, kind, state string, level int) string {
		for l := 0; l < level; l++ {
			if p := parent[levelKey{run, kind, state, l}]; p != "" {
				state = p
			}
		}
		return state
	}

	objects := map[[2]int32][]stateRow{}
	rs, err = db.Query(`SELECT s.run_id, s.object_id, o.kind, o.name, s.instance, s.state, s.start_ts, s.end_ts, s.start_seq, s.end_seq, s.truncated
		FROM state_intervals s JOIN objects o USING (run_id, object_id)`)
	if err != nil {
		t.Fatal(err)
	}
	for rs.Next() {
		var r stateRow
		if err := rs.Scan(&r.run, &r.obj, &r.kind, &r.name, &r.inst, &r.state, &r.start, &r.end, &r.seq, &r.endSeq, &r.truncated); err != nil {
			t.Fatal(err)
		}
		objects[[2]int32{r.run, r.obj}] = append(objects[[2]int32{r.run, r.obj}], r)
	}
	rs.Close()

	type statKey struct {
		run, obj int32
		level    int
		state    string
	}
	durs := map[statKey][]int64{}
	cut := map[statKey]int{}
	names := map[statKey][2]string{}
	for _, rows := range objects {
		// Time order; then whether two intervals overlap.
		sort.Slice(rows, func(i, j int) bool {
			a, b := rows[i], rows[j]
			if a.start != b.start {
				return a.start < b.start
			}
			if a.seq != b.seq {
				return !a.seq.Valid || (b.seq.Valid && a.seq.Int64 < b.seq.Int64)
			}
			return a.end < b.end
		})
		overlapping := false
		for i := 1; i < len(rows); i++ {
			for j := 0; j < i; j++ {
				if rows[i].start < rows[j].end {
					overlapping = true
				}
			}
		}
		if win != nil {
			var in []stateRow
			for _, r := range rows {
				if c, ok := r.clip(win[0], win[1]); ok {
					in = append(in, c)
				}
			}
			if len(in) == 0 {
				continue
			}
			rows = in
		}
		r0 := rows[0]
		d := depth[[2]string{fmt.Sprint(r0.run), r0.kind}]
		add := func(level int, state string, dur int64, truncated bool) {
			k := statKey{r0.run, r0.obj, level, state}
			names[k] = [2]string{r0.kind, r0.name}
			if truncated {
				cut[k]++
			} else {
				durs[k] = append(durs[k], dur)
			}
			if _, ok := durs[k]; !ok {
				durs[k] = nil
			}
		}
		for _, r := range rows {
			add(0, r.state, r.end-r.start, r.truncated)
		}
		for level := 1; level <= d; level++ {
			// One sequence per instance when intervals overlap; the
			// merged interval in progress of each sequence.
			type open struct {
				state      string
				start, end int64
				truncated  bool
			}
			cur := map[int64]*open{}
			flush := func(o *open) {
				if o != nil {
					add(level, o.state, o.end-o.start, o.truncated)
				}
			}
			var order []int64
			for _, r := range rows {
				if r.end == r.start {
					continue
				}
				seq := int64(0)
				if overlapping {
					seq = r.inst
				}
				st := mapUp(r.run, r.kind, r.state, level)
				o := cur[seq]
				if o != nil && o.state == st && o.end == r.start {
					o.end = r.end
					o.truncated = o.truncated || r.truncated
					continue
				}
				flush(o)
				if o == nil {
					order = append(order, seq)
				}
				cur[seq] = &open{st, r.start, r.end, r.truncated}
			}
			for _, seq := range order {
				flush(cur[seq])
			}
		}
	}

	var out []string
	for k, ds := range durs {
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		n := int64(len(ds))
		par := "NULL"
		if d := depth[[2]string{fmt.Sprint(k.run), names[k][0]}]; k.level < d {
			par = k.state
			if p := parent[levelKey{k.run, names[k][0], k.state, k.level}]; p != "" {
				par = p
			}
		}
		line := fmt.Sprintf("%d | %s | %s | %d | %s | %s | %d", k.run, names[k][0], names[k][1], k.level, k.state, par, n)
		if n == 0 {
			line += " | 0 | NULL | NULL | NULL | NULL | NULL | NULL | NULL"
		} else {
			var total int64
			for _, v := range ds {
				total += v
			}
			mean := float64(total) / float64(n)
			sd := "NULL"
			if n > 1 {
				var ss float64
				for _, v := range ds {
					ss += (float64(v) - mean) * (float64(v) - mean)
				}
				sd = fmt.Sprintf("%.9g", math.Sqrt(ss/float64(n-1)))
			}
			// Nearest rank: ceil(n * Q / 100), in integers.
			rank := func(q int64) int64 { return ds[max(1, (n*q+99)/100)-1] }
			line += fmt.Sprintf(" | %d | %.9g | %d | %d | %s | %d | %d | %d", total, mean, ds[0], ds[n-1], sd, rank(50), rank(90), rank(99))
		}
		out = append(out, fmt.Sprintf("%s | %d", line, cut[k]))
	}
	sort.Strings(out)
	return out
}

// stateStatsBySQL returns state_stats in the layout of stateStatsByGo.
func stateStatsBySQL(t *testing.T, db *sql.DB) []string {
	return stateStatsFrom(t, db, "state_stats")
}

// stateStatsFrom returns the rows of a relation with the columns of
// state_stats (the view, a macro) in the layout of stateStatsByGo.
func stateStatsFrom(t *testing.T, db *sql.DB, from string) []string {
	t.Helper()
	rs, err := db.Query(`SELECT run_id, kind, object, level, state, parent_state, count, total_ns, mean_ns, min_ns, max_ns, stddev_ns, p50_ns, p90_ns, p99_ns, truncated FROM ` + from)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	var out []string
	for rs.Next() {
		var run int32
		var level, count, trunc int64
		var kind, object, state string
		var par sql.NullString
		var total int64
		var mean, sd sql.NullFloat64
		var mn, mx, p50, p90, p99 sql.NullInt64
		if err := rs.Scan(&run, &kind, &object, &level, &state, &par, &count, &total, &mean, &mn, &mx, &sd, &p50, &p90, &p99, &trunc); err != nil {
			t.Fatal(err)
		}
		f := func(v sql.NullFloat64) string {
			if !v.Valid {
				return "NULL"
			}
			return fmt.Sprintf("%.9g", v.Float64)
		}
		i := func(v sql.NullInt64) string {
			if !v.Valid {
				return "NULL"
			}
			return fmt.Sprint(v.Int64)
		}
		p := "NULL"
		if par.Valid {
			p = par.String
		}
		out = append(out, fmt.Sprintf("%d | %s | %s | %d | %s | %s | %d | %d | %s | %s | %s | %s | %s | %s | %s | %d",
			run, kind, object, level, state, p, count, total, f(mean), i(mn), i(mx), f(sd), i(p50), i(p90), i(p99), trunc))
	}
	if err := rs.Err(); err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// stateRuns ingests runs of five formats into db: the hand-written BTF
// trace, the bundled BTF, TLV and DTrace samples, a generated QNX trace
// (text) and a generated Baget log; it returns the QNX and Baget truths.
func stateRuns(t *testing.T, db *schema.DB) (tracegen.QNXConfig, tracegen.QNXTruth, []qnxenc.Event, tracegen.BagetTruth) {
	t.Helper()
	dbtest.Ingest(t, db, stateHandBTF, ingest.Options{})
	dbtest.Ingest(t, db, "../samples/btf/rtos-2core.btf", ingest.Options{})
	dbtest.Ingest(t, db, "../samples/tlv/tiny.log", ingest.Options{Format: "tlv", Params: map[string]string{
		"resources": "../samples/tlv/tiny.res", "rules": "../samples/tlv/tiny.cnv", "headers": "../samples/tlv/tiny.resh"}})
	dbtest.Ingest(t, db, "../samples/dtrace/sched-syscalls.txt", ingest.Options{Format: "dtrace"})

	qcfg := tracegen.QNXConfig{Events: 20000, CPUs: 2, Procs: 3, Seed: 11}
	h, events, qtruth, err := tracegen.GenerateQNX(qcfg)
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	if err := qnxenc.WriteText(&text, h, events); err != nil {
		t.Fatal(err)
	}
	stateIngestText(t, db, "qnx.txt", text.String(), ingest.Options{Format: "qnx"})

	log, desc, btruth, err := tracegen.GenerateBaget(tracegen.BagetConfig{Events: 4000, CPUs: 2, Seed: 5, ABI: "le32"})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	descPath := filepath.Join(dir, "desc.xml")
	if err := os.WriteFile(descPath, desc, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "baget.log"), log, 0o644); err != nil {
		t.Fatal(err)
	}
	dbtest.Ingest(t, db, filepath.Join(dir, "baget.log"), ingest.Options{Format: "baget", Params: map[string]string{"description": descPath}})
	return qcfg, qtruth, events, btruth
}

// TestStateStatsRecomputed checks every row of state_stats, at every
// level, of runs of five formats against the same statistics recomputed
// in Go from state_intervals and state_levels; and level 0 of the
// generated QNX and Baget runs against the generators' ground truth.
func TestStateStatsRecomputed(t *testing.T) {
	db := dbtest.Open(t)
	_, qtruth, _, btruth := stateRuns(t, db)

	got, want := stateStatsBySQL(t, db.SQL()), stateStatsByGo(t, db.SQL())
	if len(got) < 500 {
		t.Fatalf("only %d rows in state_stats", len(got))
	}
	if g, w := strings.Join(got, "\n"), strings.Join(want, "\n"); g != w {
		t.Errorf("state_stats differs from the Go recomputation (%d vs %d rows):\n%s", len(got), len(want), stateFirstDiff(got, want))
	}
	// The filtered macros give the rows of the views with the same WHERE.
	for _, c := range []struct{ args, where string }{
		{"run := 2", "run_id = 2"},
		{"object_kind := 'cpu'", "kind = 'cpu'"},
		{"object_name := 'Task_1ms_1'", "object = 'Task_1ms_1'"},
		{"run := 4, object_kind := 'thread'", "run_id = 4 AND kind = 'thread'"},
		{"object_kind := 'none'", "false"},
	} {
		// (Means and deviations summed in another order differ in the
		// last bits.)
		const cols = "* EXCLUDE (mean_ns, stddev_ns), round(mean_ns, 6), round(stddev_ns, 6)"
		for _, q := range [][2]string{
			{"SELECT " + cols + " FROM state_stats_of(" + c.args + ")", "SELECT " + cols + " FROM state_stats WHERE " + c.where},
			{"SELECT * FROM state_trace(-1, " + c.args + ")", "SELECT * FROM state_trace(-1) WHERE " + c.where},
		} {
			got := dbtest.Query(t, db.SQL(), q[0]+" ORDER BY ALL")
			if want := dbtest.Query(t, db.SQL(), q[1]+" ORDER BY ALL"); got != want {
				t.Errorf("%s:\n%s\nwant (%s)\n%s", q[0], got, q[1], want)
			}
			if c.where != "false" && got == "" {
				t.Errorf("%s: no rows", q[0])
			}
		}
	}
	// Every format has aggregated levels that merge something.
	if got := dbtest.Query(t, db.SQL(), `SELECT r.format, count(DISTINCT s.level) > 1, bool_or(s.level > 0 AND s.parts > 1)
		FROM state_trace_levels(0, -1) s JOIN runs r USING (run_id) WHERE r.format <> 'tlv' GROUP BY ALL ORDER BY ALL`); got != "baget | true | true\nbtf | true | true\ndtrace | true | true\nqnx | true | true\n" {
		t.Errorf("levels and merges per format:\n%s", got)
	}

	// QNX level 0: thread states and kernel calls of the truth.
	type tk struct {
		thread, state string
	}
	truthStats := func(m map[tk][]int64) []string {
		var out []string
		for k, ds := range m {
			sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
			n := int64(len(ds))
			var total int64
			for _, v := range ds {
				total += v
			}
			rank := func(q int64) int64 { return ds[max(1, (n*q+99)/100)-1] }
			out = append(out, fmt.Sprintf("%s | %s | %d | %d | %d | %d | %d | %d | %d", k.thread, k.state, n, total, ds[0], rank(50), rank(90), rank(99), ds[n-1]))
		}
		sort.Strings(out)
		return out
	}
	qnx := map[tk][]int64{}
	for _, iv := range append(append([]tracegen.QNXInterval(nil), qtruth.ThreadStates...), qtruth.KernelCalls...) {
		k := tk{fmt.Sprintf("%d/%d", iv.Pid, iv.Tid), iv.State}
		qnx[k] = append(qnx[k], iv.EndNS-iv.StartNS)
	}
	gotQNX := strings.Split(strings.TrimSuffix(dbtest.Query(t, db.SQL(), `
		SELECT o.pid || '/' || o.native_id AS thread, s.state, s.count, s.total_ns, s.min_ns, s.p50_ns, s.p90_ns, s.p99_ns, s.max_ns
		FROM state_stats s JOIN objects o USING (run_id, object_id) JOIN runs r USING (run_id)
		WHERE r.format = 'qnx' AND s.kind = 'thread' AND s.level = 0 AND s.count > 0 ORDER BY ALL`), "\n"), "\n")
	sort.Strings(gotQNX)
	if g, w := strings.Join(gotQNX, "\n"), strings.Join(truthStats(qnx), "\n"); g != w {
		t.Errorf("QNX thread statistics differ from the truth:\n%s", stateFirstDiff(gotQNX, truthStats(qnx)))
	}

	// Baget level 0: the CPU states of the truth.
	baget := map[tk][]int64{}
	for _, iv := range btruth.CPUStates {
		k := tk{fmt.Sprintf("cpu %d", iv.CPU), iv.State}
		baget[k] = append(baget[k], iv.EndNS-iv.StartNS)
	}
	gotBaget := strings.Split(strings.TrimSuffix(dbtest.Query(t, db.SQL(), `
		SELECT s.object, s.state, s.count, s.total_ns, s.min_ns, s.p50_ns, s.p90_ns, s.p99_ns, s.max_ns
		FROM state_stats s JOIN runs r USING (run_id)
		WHERE r.format = 'baget' AND s.kind = 'cpu' AND s.level = 0 AND s.count > 0`), "\n"), "\n")
	sort.Strings(gotBaget)
	if g, w := strings.Join(gotBaget, "\n"), strings.Join(truthStats(baget), "\n"); g != w {
		t.Errorf("Baget CPU statistics differ from the truth:\n%s", stateFirstDiff(gotBaget, truthStats(baget)))
	}
}

// stateFirstDiff shows the first differing line of two sorted listings.
func stateFirstDiff(got, want []string) string {
	for i := 0; i < len(got) || i < len(want); i++ {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			return fmt.Sprintf("line %d:\n   got %s\n  want %s", i+1, g, w)
		}
	}
	return ""
}
