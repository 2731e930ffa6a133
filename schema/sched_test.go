package schema_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	_ "github.com/traceduck/traceduck/ingest/all"
	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/queries"
	"github.com/traceduck/traceduck/schema"
)

// schedRun writes one run of format through fill and returns the run's
// task_instances, sched_latency and sched_fallback as text. dbtest.Open
// checks at the end that the views equal their references
// (task_instances_reference, sched_latency_reference).
func schedRun(t *testing.T, db *schema.DB, format string, fill func(w *schema.RunWriter) error) (inst, lat, fallback string) {
	t.Helper()
	id, err := db.Ingest(context.Background(), schema.RunInfo{Name: t.Name(), Format: format}, schema.IngestOptions{BatchRows: 3}, fill)
	if err != nil {
		t.Fatal(err)
	}
	q := db.SQL()
	inst = dbtest.Query(t, q, `SELECT object, instance, woke_from, activation_ts, start_ts, end_ts, exec, ready, waiting, preemptions, migrations, truncated
		FROM task_instances WHERE run_id = ? ORDER BY object, activation_ts`, id)
	lat = dbtest.Query(t, q, `SELECT object, ready_ts, run_ts, cpu, after, truncated FROM sched_latency WHERE run_id = ? ORDER BY object, ready_ts`, id)
	fallback = dbtest.Query(t, q, `SELECT o.name, f.reason FROM sched_fallback f JOIN objects o USING (run_id, object_id) WHERE run_id = ? ORDER BY ALL`, id)
	return inst, lat, fallback
}

func must(t *testing.T, errs ...error) {
	t.Helper()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestSchedRowsByHand: the rows the tracker writes for a BTF task (two
// instances, a preemption, a migration) and a QNX thread (woken from a
// blocked state), and no object left to the reference.
func TestSchedRowsByHand(t *testing.T) {
	db := dbtest.Open(t)
	inst, lat, fb := schedRun(t, db, "btf", func(w *schema.RunWriter) error {
		a := w.Object("task", "A")
		s := func(n string) schema.Sym { return w.Sym(n) }
		must(t,
			w.Transition(a, 0, 0, s("active"), 1, -1),
			w.Transition(a, 0, 10, s("running"), 2, 0),
			w.Transition(a, 1, 20, s("active"), 3, -1),
			w.Transition(a, 0, 30, s("ready"), 4, 0),
			w.Transition(a, 1, 30, s("running"), 5, 0),
			w.Close(a, 1, 40, 6),
			w.Transition(a, 0, 55, s("running"), 7, 1),
			w.Close(a, 0, 70, 8),
		)
		return nil
	})
	if want := "A | 0 | NULL | 0 | 10 | 70 | 35 | 35 | 0 | 1 | 1 | false\n" +
		"A | 1 | NULL | 20 | 30 | 40 | 10 | 10 | 0 | 0 | 0 | false\n"; inst != want {
		t.Errorf("task_instances:\n%s\nwant:\n%s", inst, want)
	}
	if want := "A | 0 | 10 | 0 | wakeup | false\nA | 20 | 30 | 0 | wakeup | false\nA | 30 | 55 | 1 | preemption | false\n"; lat != want {
		t.Errorf("sched_latency:\n%s\nwant:\n%s", lat, want)
	}
	if fb != "" {
		t.Errorf("left to the reference: %s", fb)
	}

	inst, lat, fb = schedRun(t, db, "qnx", func(w *schema.RunWriter) error {
		th := w.Object("thread", "T")
		s := func(n string) schema.Sym { return w.Sym(n) }
		must(t,
			w.TransitionFromStart(th, 0, 0, s("RECEIVE"), schema.NoSeq, -1),
			w.Transition(th, 0, 5, s("READY"), 1, 0),
			w.Transition(th, 1, 6, s("KERCALL"), 2, 0), // a kernel call: instance 1, no scheduling state
			w.Transition(th, 0, 8, s("RUNNING"), 3, 0),
			w.Transition(th, 0, 20, s("REPLY"), 4, 0),
			w.Transition(th, 0, 25, s("READY"), 5, 1),
		)
		return nil
	})
	if want := "T | 1 | RECEIVE | 5 | 8 | 20 | 12 | 3 | 0 | 0 | 0 | false\n" +
		"T | 2 | REPLY | 25 | NULL | 25 | 0 | 0 | 0 | 0 | 0 | true\n"; inst != want {
		t.Errorf("task_instances:\n%s\nwant:\n%s", inst, want)
	}
	if want := "T | 5 | 8 | 0 | wakeup | false\n"; lat != want {
		t.Errorf("sched_latency:\n%s\nwant:\n%s", lat, want)
	}
	if fb != "" {
		t.Errorf("left to the reference: %s", fb)
	}
}

// TestSchedFallback: where the stream cannot give the reference's answer
// for an object, the object is listed in sched_fallback with the reason,
// and the views answer for it from the reference (dbtest.Open checks that
// they equal it); the other objects keep their rows.
func TestSchedFallback(t *testing.T) {
	for _, c := range []struct {
		name, format string
		fill         func(w *schema.RunWriter, s func(string) schema.Sym) error
		fallback     string
		inst         string // task_instances of object X, when given
	}{
		{"instance reused", "btf", func(w *schema.RunWriter, s func(string) schema.Sym) error {
			x := w.Object("task", "X")
			must(t, w.Transition(x, 0, 0, s("active"), 1, -1), w.Transition(x, 0, 10, s("running"), 2, 0), w.Close(x, 0, 20, 3),
				w.Transition(x, 0, 30, s("active"), 4, -1), w.Transition(x, 0, 40, s("running"), 5, 0), w.Close(x, 0, 50, 6))
			return nil
		}, "X | instance reused\n", "X | 0 | NULL | 0 | 10 | 50 | 20 | 20 | 0 | 0 | 0 | false\n"},
		{"intervals out of order", "qnx", func(w *schema.RunWriter, s func(string) schema.Sym) error {
			x := w.Object("thread", "X")
			must(t, w.Transition(x, 0, 100, s("READY"), 1, 0), w.Transition(x, 0, 110, s("RUNNING"), 2, 0), w.Close(x, 0, 200, 3),
				w.Transition(x, 0, 90, s("READY"), 4, 0), w.Transition(x, 0, 95, s("RUNNING"), 5, 0), w.Close(x, 0, 96, 6))
			return nil
		}, "X | intervals out of order\n", ""},
		{"kind changed after its intervals", "btf", func(w *schema.RunWriter, s func(string) schema.Sym) error {
			x := w.Object("runnable", "X")
			must(t, w.Transition(x, 0, 0, s("active"), 1, -1), w.Transition(x, 0, 10, s("running"), 2, 0), w.Close(x, 0, 20, 3))
			w.SetKind(x, "task")
			return nil
		}, "X | kind changed\n", "X | 0 | NULL | 0 | 10 | 20 | 10 | 10 | 0 | 0 | 0 | false\n"},
		{"kind changed between its intervals", "btf", func(w *schema.RunWriter, s func(string) schema.Sym) error {
			x := w.Object("runnable", "X")
			must(t, w.Transition(x, 0, 0, s("active"), 1, -1), w.Transition(x, 0, 10, s("running"), 2, 0))
			w.SetKind(x, "isr")
			must(t, w.Close(x, 0, 20, 3))
			return nil
		}, "X | kind changed\n", "X | 0 | NULL | 0 | 10 | 20 | 10 | 10 | 0 | 0 | 0 | false\n"},
		{"kind changed within the scheduling kinds", "btf", func(w *schema.RunWriter, s func(string) schema.Sym) error {
			x := w.Object("task", "X")
			must(t, w.Transition(x, 0, 0, s("active"), 1, -1), w.Transition(x, 0, 10, s("running"), 2, 0))
			w.SetKind(x, "isr") // the same classes: nothing to fall back for
			must(t, w.Close(x, 0, 20, 3))
			return nil
		}, "", "X | 0 | NULL | 0 | 10 | 20 | 10 | 10 | 0 | 0 | 0 | false\n"},
		{"tie in a wait", "btf", func(w *schema.RunWriter, s func(string) schema.Sym) error {
			// preempted at 10 (ready, zero length), then active at 10: the
			// wait's two first intervals start at 10, the reference's
			// arg_min may take either
			x := w.Object("task", "X")
			must(t, w.Transition(x, 0, 0, s("running"), 1, 0), w.Transition(x, 0, 10, s("ready"), 2, 0),
				w.Transition(x, 0, 10, s("active"), 3, 0), w.Transition(x, 0, 20, s("running"), 4, 0), w.Close(x, 0, 30, 5))
			return nil
		}, "X | tie in a wait\n", ""},
		{"too many instances ended out of order", "btf", func(w *schema.RunWriter, s func(string) schema.Sym) error {
			x := w.Object("task", "X")
			for i := int64(0); i < 200; i += 2 {
				must(t, w.Transition(x, i, i, s("active"), schema.Seq(i+1), -1), w.Close(x, i, i+1, schema.Seq(i+2)))
			}
			return nil
		}, "X | too many instances ended out of order\n", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			db := dbtest.Open(t)
			inst, _, fb := schedRun(t, db, c.format, func(w *schema.RunWriter) error {
				s := func(n string) schema.Sym { return w.Sym(n) }
				// Y is another object, whose rows stay stored
				y := w.Object(map[string]string{"btf": "task", "qnx": "thread"}[c.format], "Y")
				ys := map[string][2]string{"btf": {"active", "running"}, "qnx": {"READY", "RUNNING"}}[c.format]
				must(t, w.Transition(y, 0, 0, s(ys[0]), 1, 0), w.Transition(y, 0, 3, s(ys[1]), 2, 0), w.Close(y, 0, 7, 3))
				return c.fill(w, s)
			})
			if fb != c.fallback {
				t.Errorf("sched_fallback:\n%s\nwant:\n%s", fb, c.fallback)
			}
			var x []string
			for _, l := range strings.SplitAfter(inst, "\n") {
				if strings.HasPrefix(l, "X |") {
					x = append(x, l)
				}
			}
			if c.inst != "" && strings.Join(x, "") != c.inst {
				t.Errorf("task_instances of X:\n%s\nwant:\n%s", strings.Join(x, ""), c.inst)
			}
			n := dbtest.Query(t, db.SQL(), `SELECT count(*) FROM sched_instances i JOIN objects o USING (run_id, object_id) WHERE o.name = 'Y'`)
			if n != "1\n" {
				t.Errorf("Y's stored instances: %s", n)
			}
		})
	}
}

// TestSchedUnregisteredObject: an interval of an object id the run has not
// registered leaves the whole run to the reference (no row in sched_runs).
func TestSchedUnregisteredObject(t *testing.T) {
	db := dbtest.Open(t)
	schedRun(t, db, "btf", func(w *schema.RunWriter) error {
		a := w.Object("task", "A")
		must(t, w.Transition(a, 0, 0, w.Sym("running"), 1, 0), w.Transition(a+5, 0, 0, w.Sym("running"), 2, 0), w.Close(a+5, 0, 5, 3), w.Close(a, 0, 10, 4))
		return nil
	})
	if got := dbtest.Query(t, db.SQL(), "SELECT (SELECT count(*) FROM sched_runs), (SELECT count(*) FROM task_instances)"); got != "0 | 1\n" {
		t.Errorf("sched_runs rows, task_instances rows: %s", got)
	}
}

// TestSchedOlderDatabase: a database written by a traceduck before the
// scheduling rows (no sched_* tables, and its own views) answers
// task_instances, sched_latency and sched_stats with the same rows once
// opened by this one: Open creates
// the empty tables and the views take the runs without a row in
// sched_runs from the reference. A run ingested after that has its rows
// stored, beside.
func TestSchedOlderDatabase(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.duckdb")
	open := func() *schema.DB {
		db, err := schema.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		if err := queries.Install(ctx, db.SQL()); err != nil {
			t.Fatal(err)
		}
		return db
	}
	const views = `SELECT 'i', * FROM task_instances UNION ALL SELECT 'l', run_id, object_id, kind, object, NULL, NULL, ready_ts, run_ts, NULL, latency, NULL, cpu, NULL, NULL, NULL, NULL, after = 'preemption' FROM sched_latency
		UNION ALL SELECT 's', run_id, object_id, kind, object, NULL, class, count, total_ns, mean_ns, max_ns, p50_ns, p90_ns, p99_ns, share, truncated, NULL, NULL FROM sched_stats ORDER BY ALL`
	db := open()
	for _, p := range []string{"../samples/btf/rtos-2core.btf", "../samples/qnx/neutrino-2cpu.txt"} {
		if _, err := ingest.Path(ctx, db, p, ingest.Options{}); err != nil {
			t.Fatal(err)
		}
	}
	before := dbtest.Query(t, db.SQL(), views)
	if !strings.Contains(before, "\ni | 2 |") || !strings.Contains(before, "\nl | 1 |") || !strings.Contains(before, "\ns | 2 |") {
		t.Fatalf("the samples have no rows:\n%.500s", before)
	}
	// What the previous traceduck wrote: the same tables but these.
	for _, q := range []string{"DROP VIEW task_instances", "DROP VIEW sched_latency", "DROP VIEW sched_stats", "DROP VIEW sched_neighbours",
		"DROP VIEW sched_fallback_objects", "DROP MACRO TABLE task_instances_reference", "DROP MACRO TABLE sched_latency_reference",
		"DROP MACRO TABLE sched_stats_reference", "DROP MACRO TABLE sched_neighbours_of",
		"DROP VIEW sched_instances", "DROP TABLE sched_instance_rows", "DROP TABLE sched_waits", "DROP TABLE sched_durations",
		"DROP TABLE sched_runs", "DROP TABLE sched_fallback", "DROP MACRO traceduck_queries_sha256"} {
		if _, err := db.SQL().Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()

	db = open()
	defer db.Close()
	if after := dbtest.Query(t, db.SQL(), views); after != before {
		t.Errorf("the older database answers otherwise:\n%s", dbtest.Diff(before, after))
	}
	if n := dbtest.Query(t, db.SQL(), "SELECT count(*) FROM sched_runs"); n != "0\n" {
		t.Errorf("sched_runs: %s", n)
	}
	if _, err := ingest.Path(ctx, db, "../samples/tlv/tiny.log", ingest.Options{Format: "tlv", Params: map[string]string{
		"resources": "../samples/tlv/tiny.res", "headers": "../samples/tlv/tiny.resh", "rules": "../samples/tlv/tiny.cnv"}}); err != nil {
		t.Fatal(err)
	}
	if n := dbtest.Query(t, db.SQL(), "SELECT string_agg(run_id::VARCHAR, ' ') FROM sched_runs"); n != "3\n" {
		t.Errorf("runs with stored rows: %s", n)
	}
	c := dbtest.CheckSched(t, db.SQL())
	if c.Instances == 0 || c.Waits == 0 {
		t.Errorf("%+v", c)
	}
}

// TestSchedFormatWithoutClasses: a run of a format without scheduling
// states (Chrome JSON) has its row in sched_runs all the same, so that the
// views do not compute it from the reference (sched_fallback_objects).
func TestSchedFormatWithoutClasses(t *testing.T) {
	db := dbtest.Open(t)
	schedRun(t, db, "chrome", func(w *schema.RunWriter) error {
		a := w.Object("thread", "main")
		must(t, w.Transition(a, 0, 0, w.Sym("running"), 1, -1), w.Close(a, 0, 10, 2))
		return nil
	})
	if got := dbtest.Query(t, db.SQL(), "SELECT intervals, instances, waits, fallback, (SELECT count(*) FROM sched_fallback_objects) FROM sched_runs"); got != "0 | 0 | 0 | 0 | 0\n" {
		t.Errorf("sched_runs, fallback objects: %s", got)
	}
}
