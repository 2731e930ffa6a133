package schema_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand"
	"path/filepath"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/queries"
	"github.com/traceduck/traceduck/schema"
)

// The run writer's merged levels (levels.go) in the cases where what is
// known while intervals close is not what the run says at its end: each
// case says which objects must be materialized and which left to the
// reference SQL, and every case must give the reference's rows.

type levelCase struct {
	name string
	fill func(w *schema.RunWriter) error
	// the objects (by name) that must not be materialized; all others
	// with levels must be
	unstored []string
}

// ivs makes intervals of obj on one instance: states and the times
// between them, from t0.
func ivs(w *schema.RunWriter, obj schema.ObjectID, inst int64, t0 int64, steps ...any) (int64, error) {
	ts := t0
	for i := 0; i < len(steps); i += 2 {
		state, d := steps[i].(string), int64(steps[i+1].(int))
		if err := w.Transition(obj, inst, ts, w.Sym(state), schema.NoSeq, schema.NoCPU); err != nil {
			return 0, err
		}
		ts += d
	}
	return ts, w.Close(obj, inst, ts, schema.NoSeq)
}

func taskLevels(w *schema.RunWriter) {
	w.StateLevel("task", "running", 0, "on")
	w.StateLevel("task", "ready", 0, "waiting")
	w.StateLevel("task", "blocked", 0, "waiting")
}

var levelCases = []levelCase{
	// an interval of an object id not registered yet (bad input; the
	// writer does not check): the objects registered after it are left
	// to the reference, whichever got the id; those before are not
	{name: "interval of an id registered later", fill: func(w *schema.RunWriter) error {
		taskLevels(w)
		a := w.Object("task", "A")
		if _, err := ivs(w, a+2, 0, 0, "ready", 5, "running", 7); err != nil {
			return err
		}
		b := w.Object("task", "B")
		c := w.Object("task", "C")
		for _, o := range []schema.ObjectID{a, b, c} {
			if _, err := ivs(w, o, 0, 20, "running", 4, "blocked", 3, "ready", 2, "running", 6); err != nil {
				return err
			}
		}
		_, err := ivs(w, a+7, 1, 40, "running", 3) // never registered
		return err
	}, unstored: []string{"B", "C"}},
	{name: "instances in turn, two meeting", fill: func(w *schema.RunWriter) error {
		taskLevels(w)
		a := w.Object("task", "A")
		ts := int64(0)
		for inst := int64(0); inst < 40; inst++ {
			var err error
			if ts, err = ivs(w, a, inst, ts, "ready", 5, "running", 7, "blocked", 3, "running", 2); err != nil {
				return err
			}
			if inst%3 == 0 {
				ts += 4 // a gap
			}
		}
		return nil
	}},
	{name: "overlap after merges across instances", fill: func(w *schema.RunWriter) error {
		taskLevels(w)
		a := w.Object("task", "A")
		ts := int64(0)
		for inst := int64(0); inst < 30; inst++ {
			var err error
			if ts, err = ivs(w, a, inst, ts, "running", 5, "ready", 5, "running", 5); err != nil {
				return err
			}
		}
		// instance 100 runs while 101 is ready: they overlap
		w.Transition(a, 100, ts, w.Sym("running"), schema.NoSeq, schema.NoCPU)
		w.Transition(a, 101, ts+1, w.Sym("ready"), schema.NoSeq, schema.NoCPU)
		w.Close(a, 101, ts+3, schema.NoSeq)
		w.Transition(a, 101, ts+3, w.Sym("running"), schema.NoSeq, schema.NoCPU)
		w.Close(a, 100, ts+4, schema.NoSeq)
		_, err := ivs(w, a, 100, ts+4, "running", 3, "ready", 2)
		return err
	}},
	{name: "out of order, no overlap", unstored: []string{"A"}, fill: func(w *schema.RunWriter) error {
		taskLevels(w)
		a := w.Object("task", "A")
		if _, err := ivs(w, a, 1, 100, "running", 10); err != nil {
			return err
		}
		// time goes back: an interval before the one that came first
		_, err := ivs(w, a, 2, 20, "running", 10, "ready", 5)
		return err
	}},
	// a state the run's end closed is written after those that came
	// later (QNX: a thread's THREAD_DESTROYALL of 0 ns on instance 1,
	// written after its DEAD on instance 0); 3 threads in 17,880 of a
	// 10M-event QNX run, which kept the run's whole state tree from being
	// stored
	{name: "an interval late after a 0 ns one at its end", fill: func(w *schema.RunWriter) error {
		taskLevels(w)
		a := w.Object("task", "A")
		w.Transition(a, 0, 0, w.Sym("ready"), schema.NoSeq, schema.NoCPU)
		w.Transition(a, 0, 5, w.Sym("running"), schema.NoSeq, schema.NoCPU)
		if _, err := ivs(w, a, 1, 12, "destroyall", 0); err != nil {
			return err
		}
		if _, err := ivs(w, a, 3, 12, "destroyall", 0); err != nil {
			return err
		}
		w.Close(a, 0, 12, schema.NoSeq) // running [5, 12], after both
		_, err := ivs(w, a, 0, 13, "blocked", 87, "ready", 4)
		return err
	}},
	{name: "an interval late around a 0 ns one", fill: func(w *schema.RunWriter) error {
		taskLevels(w)
		a := w.Object("task", "A")
		w.Transition(a, 0, 0, w.Sym("ready"), schema.NoSeq, schema.NoCPU)
		w.Transition(a, 0, 5, w.Sym("running"), schema.NoSeq, schema.NoCPU)
		if _, err := ivs(w, a, 1, 8, "destroyall", 0); err != nil {
			return err
		}
		w.Close(a, 0, 12, schema.NoSeq) // running [5, 12] holds it: per instance
		_, err := ivs(w, a, 0, 13, "blocked", 87, "ready", 4)
		return err
	}},
	{name: "a late 0 ns interval, then one late around it", unstored: []string{"A"}, fill: func(w *schema.RunWriter) error {
		taskLevels(w)
		a := w.Object("task", "A")
		w.Transition(a, 0, 0, w.Sym("ready"), schema.NoSeq, schema.NoCPU)
		w.Transition(a, 0, 5, w.Sym("running"), schema.NoSeq, schema.NoCPU)
		if _, err := ivs(w, a, 1, 30, "destroyall", 0); err != nil {
			return err
		}
		if _, err := ivs(w, a, 2, 20, "destroyall", 0); err != nil { // late, after every one
			return err
		}
		w.Close(a, 0, 25, schema.NoSeq) // running [5, 25] holds the one at 20
		return nil
	}},
	{name: "a late 0 ns interval between the last two", fill: func(w *schema.RunWriter) error {
		taskLevels(w)
		a := w.Object("task", "A")
		if _, err := ivs(w, a, 0, 0, "ready", 5, "running", 7); err != nil {
			return err
		}
		if _, err := ivs(w, a, 0, 13, "blocked", 87); err != nil {
			return err
		}
		_, err := ivs(w, a, 1, 12, "destroyall", 0) // at the end of running
		return err
	}},
	{name: "a late 0 ns interval at the start of the last", fill: func(w *schema.RunWriter) error {
		taskLevels(w)
		a := w.Object("task", "A")
		if _, err := ivs(w, a, 0, 0, "ready", 5, "running", 7, "blocked", 10); err != nil {
			return err
		}
		_, err := ivs(w, a, 1, 12, "destroyall", 0)
		return err
	}},
	{name: "a late 0 ns interval inside the last", fill: func(w *schema.RunWriter) error {
		taskLevels(w)
		a := w.Object("task", "A")
		if _, err := ivs(w, a, 0, 0, "ready", 5, "running", 7, "blocked", 10); err != nil {
			return err
		}
		_, err := ivs(w, a, 1, 15, "destroyall", 0) // overlaps blocked: per instance
		return err
	}},
	{name: "a late 0 ns interval inside an earlier one", unstored: []string{"A"}, fill: func(w *schema.RunWriter) error {
		taskLevels(w)
		a := w.Object("task", "A")
		if _, err := ivs(w, a, 0, 0, "ready", 5, "running", 7, "blocked", 10); err != nil {
			return err
		}
		_, err := ivs(w, a, 1, 3, "destroyall", 0) // inside ready: not known to overlap when it comes
		return err
	}},
	{name: "one instance's intervals overlap", unstored: []string{"A"}, fill: func(w *schema.RunWriter) error {
		taskLevels(w)
		a := w.Object("task", "A")
		ivs(w, a, 1, 0, "running", 10, "ready", 10)
		ivs(w, a, 2, 5, "running", 10) // overlaps instance 1: per instance from here
		_, err := ivs(w, a, 1, 12, "running", 4)
		return err
	}},
	{name: "many instances held, one comes back", unstored: []string{"A"}, fill: func(w *schema.RunWriter) error {
		taskLevels(w)
		a := w.Object("task", "A")
		w.Transition(a, 0, 0, w.Sym("running"), schema.NoSeq, schema.NoCPU)
		w.Transition(a, 1, 1, w.Sym("running"), schema.NoSeq, schema.NoCPU) // overlap: per instance
		w.Close(a, 1, 2, schema.NoSeq)
		w.Close(a, 0, 3, schema.NoSeq)
		ts := int64(3)
		for inst := int64(10); inst < 40; inst++ { // more instances than slots
			ts, _ = ivs(w, a, inst, ts, "running", 2)
		}
		_, err := ivs(w, a, 0, 3, "running", 2) // instance 0 again, where it stopped
		return err
	}},
	{name: "kind changes", unstored: []string{"B"}, fill: func(w *schema.RunWriter) error {
		taskLevels(w)
		w.StateLevel("isr", "running", 0, "on")
		b := w.Object("isr", "B")
		ivs(w, b, 0, 0, "running", 5, "ready", 5)
		w.SetKind(b, "task")
		_, err := ivs(w, b, 0, 10, "running", 5)
		return err
	}},
	{name: "a deeper level after intervals closed", unstored: []string{"A", "C"}, fill: func(w *schema.RunWriter) error {
		taskLevels(w)
		a, c := w.Object("task", "A"), w.Object("task", "C")
		ivs(w, a, 0, 0, "running", 5, "ready", 5)
		w.StateLevel("task", "on", 1, "alive")
		_, err := ivs(w, c, 0, 0, "running", 5, "ready", 5)
		return err
	}},
	{name: "a state's level declared after its intervals", fill: func(w *schema.RunWriter) error {
		taskLevels(w)
		a := w.Object("task", "A")
		ivs(w, a, 0, 0, "running", 5, "sleeping", 5, "ready", 3, "sleeping", 4)
		w.StateLevel("task", "sleeping", 0, "asleep") // a name of its own: merged as it was
		_, err := ivs(w, a, 0, 17, "sleeping", 5, "blocked", 2)
		return err
	}},
	{name: "a state's level declared after its intervals, one with another", unstored: []string{"A"}, fill: func(w *schema.RunWriter) error {
		taskLevels(w)
		a := w.Object("task", "A")
		ivs(w, a, 0, 0, "running", 5, "sleeping", 5, "ready", 3, "sleeping", 4)
		w.StateLevel("task", "sleeping", 0, "waiting") // ready and sleeping met: one at level 1
		_, err := ivs(w, a, 0, 17, "sleeping", 5, "blocked", 2)
		return err
	}},
	{name: "a level declared after its state merged with another", unstored: []string{"A"}, fill: func(w *schema.RunWriter) error {
		taskLevels(w)
		a := w.Object("task", "A")
		ivs(w, a, 0, 0, "on", 5, "running", 5) // "on" keeps its name: one with running at level 1
		w.StateLevel("task", "on", 0, "waiting")
		return nil
	}},
	{name: "levels after the kind's first intervals", fill: func(w *schema.RunWriter) error {
		a := w.Object("thread", "A")
		ivs(w, a, 0, 0, "running", 5, "ready", 5, "running", 2)
		w.StateLevel("thread", "sys_read", 0, "kernel")
		_, err := ivs(w, a, 0, 12, "sys_read", 5, "running", 5)
		return err
	}},
	{name: "levels only at the end", fill: func(w *schema.RunWriter) error {
		a := w.Object("thread", "A")
		ivs(w, a, 0, 0, "running", 5, "ready", 5, "running", 2)
		w.StateLevel("thread", "running", 0, "on")
		return nil
	}},
	{name: "NULL states", fill: func(w *schema.RunWriter) error {
		taskLevels(w)
		a := w.Object("task", "A")
		w.Transition(a, 0, 0, schema.NoSym, schema.NoSeq, schema.NoCPU)
		w.Transition(a, 0, 5, w.Sym("running"), schema.NoSeq, schema.NoCPU)
		w.Transition(a, 0, 6, schema.NoSym, schema.NoSeq, schema.NoCPU)
		w.Transition(a, 1, 9, schema.NoSym, schema.NoSeq, schema.NoCPU)
		return w.Close(a, 0, 9, schema.NoSeq)
	}},
	{name: "CPUs", fill: func(w *schema.RunWriter) error {
		cpus := w.CPUs()
		p := w.Object("process", "app")
		t1, t2, irq, idle := w.Object("thread", "t1"), w.Object("thread", "t2"), w.Object("interrupt", "irq"), w.Object("thread", "idle0")
		cpus.Declare(t1, schema.HolderSpec{Role: schema.RoleTask, Process: p})
		cpus.Declare(t2, schema.HolderSpec{Role: schema.RoleTask, Process: p})
		cpus.Declare(idle, schema.HolderSpec{Role: schema.RoleIdle})
		ts := int64(0)
		for i := 0; i < 20; i++ {
			cpus.Run(0, t1, ts, schema.NoSeq)
			cpus.Run(0, t2, ts+3, schema.NoSeq)
			cpus.Enter(0, irq, ts+4, schema.NoSeq)
			cpus.Leave(0, irq, ts+5, schema.NoSeq)
			cpus.Run(0, idle, ts+7, schema.NoSeq)
			cpus.Idle(1, ts+1, schema.NoSeq)
			cpus.Run(1, t1, ts+8, schema.NoSeq)
			ts += 10
		}
		return nil
	}},
	{name: "CPUs, an idle task told at the end", unstored: []string{"cpu 0"}, fill: func(w *schema.RunWriter) error {
		cpus := w.CPUs()
		t1, idle := w.Object("thread", "t1"), w.Object("thread", "idle0")
		ts := int64(0)
		for i := 0; i < 5; i++ {
			cpus.Run(0, t1, ts, schema.NoSeq)
			cpus.Run(0, idle, ts+3, schema.NoSeq)
			ts += 10
		}
		cpus.Declare(idle, schema.HolderSpec{Role: schema.RoleIdle})
		return nil
	}},
	{name: "CPUs, two processes of one name", fill: func(w *schema.RunWriter) error {
		cpus := w.CPUs()
		p1, p2 := w.NewObject("process", "cat"), w.NewObject("process", "cat")
		w.SetNativeID(p1, 11)
		w.SetNativeID(p2, 12)
		t1, t2 := w.Object("thread", "t1"), w.Object("thread", "t2")
		cpus.Declare(t1, schema.HolderSpec{Role: schema.RoleTask, Process: p1})
		for i := int64(0); i < 5; i++ {
			cpus.Run(0, t1, i*10, schema.NoSeq)
			cpus.Idle(0, i*10+5, schema.NoSeq)
		}
		// the second cat comes later: both become cat[N]
		cpus.Declare(t2, schema.HolderSpec{Role: schema.RoleTask, Process: p2})
		cpus.Run(0, t2, 60, schema.NoSeq)
		return cpus.Idle(0, 65, schema.NoSeq)
	}},
	{name: "CPUs, an interrupt named as a process", unstored: []string{"cpu 0"}, fill: func(w *schema.RunWriter) error {
		cpus := w.CPUs()
		p := w.Object("process", "x")
		t1, irq := w.Object("thread", "t1"), w.Object("interrupt", "x")
		cpus.Declare(t1, schema.HolderSpec{Role: schema.RoleTask, Process: p})
		cpus.Run(0, t1, 0, schema.NoSeq)
		cpus.Enter(0, irq, 5, schema.NoSeq)
		cpus.Leave(0, irq, 7, schema.NoSeq)
		return cpus.Idle(0, 9, schema.NoSeq)
	}},
}

func TestLevelCases(t *testing.T) {
	ctx := context.Background()
	db, err := schema.Open(ctx, filepath.Join(t.TempDir(), "t.duckdb"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := queries.Install(ctx, db.SQL()); err != nil {
		t.Fatal(err)
	}
	for _, c := range levelCases {
		t.Run(c.name, func(t *testing.T) {
			run, err := db.Ingest(ctx, schema.RunInfo{Name: c.name, Format: "test"}, schema.IngestOptions{BatchRows: 3}, c.fill)
			if err != nil {
				t.Fatal(err)
			}
			got := levelQuery(t, db.SQL(), `SELECT string_agg(o.name, ' ' ORDER BY o.name) FROM state_level_objects m
				JOIN objects o USING (run_id, object_id) WHERE m.run_id = ? AND NOT m.materialized`, run)
			if want := strings.Join(c.unstored, " "); got != want {
				t.Errorf("not materialized: %q, want %q", got, want)
			}
			for _, args := range []string{"0, -1", "1, 1", "0, -1, t_from := 4, t_to := 11"} {
				sameRows(t, db.SQL(), fmt.Sprintf("%s, run := %d", args, run))
			}
		})
	}
}

// sameRows fails when state_trace_levels(args) and
// state_trace_levels_reference(args) differ, each run once.
func sameRows(t *testing.T, db *sql.DB, args string) {
	t.Helper()
	diff := levelQuery(t, db, `SELECT string_agg(d || ' ' || x::VARCHAR, '; ' ORDER BY x) FROM (
		SELECT x, sum(side) AS d FROM (
			SELECT m AS x, 1 AS side FROM state_trace_levels(`+args+`) m
			UNION ALL
			SELECT r, -1 FROM state_trace_levels_reference(`+args+`) r)
		GROUP BY x)
		WHERE d <> 0`)
	if diff != "" {
		t.Errorf("state_trace_levels(%s) differs from the reference (+n: rows only there, -n: only in the reference): %s", args, diff)
	}
}

func levelQuery(t *testing.T, db *sql.DB, q string, args ...any) string {
	t.Helper()
	var s sql.NullString
	if err := db.QueryRow(q, args...).Scan(&s); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return s.String
}

// TestLevelsRandom: runs of random transitions (objects of three kinds
// with several instances, times that mostly go forward, sometimes stay or
// go back, levels declared at random moments, a kind changed now and then)
// give the reference's rows, whether the merger could materialize them or
// not.
func TestLevelsRandom(t *testing.T) {
	ctx := context.Background()
	db, err := schema.Open(ctx, filepath.Join(t.TempDir(), "t.duckdb"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := queries.Install(ctx, db.SQL()); err != nil {
		t.Fatal(err)
	}
	runs := 24
	if testing.Short() {
		runs = 8
	}
	stored, all := 0, 0
	for seed := 1; seed <= runs; seed++ {
		r := rand.New(rand.NewSource(int64(seed)))
		// every other run is tame: times never go back, the levels are
		// declared first and kinds never change (the merger materializes
		// most of its objects)
		tame := seed%2 == 0
		fill := func(w *schema.RunWriter) error {
			kinds := []string{"task", "thread", "sem"}
			var objs []schema.ObjectID
			for i := 0; i < 5; i++ {
				objs = append(objs, w.Object(kinds[r.Intn(len(kinds))], fmt.Sprintf("o%d", i)))
			}
			declare := func() {
				k := kinds[r.Intn(len(kinds))]
				if r.Intn(4) == 0 {
					w.StateLevel(k, fmt.Sprintf("p%d", r.Intn(3)), 1, fmt.Sprintf("q%d", r.Intn(2)))
				} else {
					w.StateLevel(k, fmt.Sprintf("s%d", r.Intn(6)), 0, fmt.Sprintf("p%d", r.Intn(3)))
				}
			}
			for i := r.Intn(4); i > 0 || tame && i > -4; i-- {
				declare()
			}
			ts := int64(100)
			steps := 100 + r.Intn(300)
			for i := 0; i < steps; i++ {
				switch d := r.Intn(20); {
				case d < 12:
					ts += int64(r.Intn(5))
				case d < 19:
					// stays
				default:
					if !tame {
						ts -= int64(r.Intn(8))
					}
				}
				o := objs[r.Intn(len(objs))]
				inst := int64(r.Intn(1 + r.Intn(4)))
				switch a := r.Intn(30); {
				case a == 0 && !tame:
					declare()
				case a == 1 && !tame && r.Intn(5) == 0:
					w.SetKind(o, kinds[r.Intn(len(kinds))])
				case a < 6:
					if err := w.Close(o, inst, ts, schema.Seq(i+1)); err != nil {
						return err
					}
				default:
					if err := w.Transition(o, inst, ts, w.Sym(fmt.Sprintf("s%d", r.Intn(6))), schema.Seq(i+1), schema.CPU(r.Intn(3)-1)); err != nil {
						return err
					}
				}
			}
			return nil
		}
		run, err := db.Ingest(ctx, schema.RunInfo{Name: fmt.Sprint(seed), Format: "test"}, schema.IngestOptions{BatchRows: 16}, fill)
		if err != nil {
			t.Fatal(err)
		}
		var n, m int
		if err := db.SQL().QueryRow(`SELECT count(*), count(*) FILTER (WHERE materialized) FROM state_level_objects WHERE run_id = ?`, run).Scan(&n, &m); err != nil {
			t.Fatal(err)
		}
		all, stored = all+n, stored+m
		for _, args := range []string{"0, -1", "1, -1, t_from := 150, t_to := 300"} {
			sameRows(t, db.SQL(), fmt.Sprintf("%s, run := %d", args, run))
		}
	}
	t.Logf("%d of %d objects with levels materialized", stored, all)
}
