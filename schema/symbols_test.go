package schema

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestSymbolsSharedAcrossRuns: a second run reuses the ids of the symbols
// the first one stored and appends only its new ones, each name once, ids
// dense; a failed run adds none; the views give the names back in the
// order the rows were written.
func TestSymbolsSharedAcrossRuns(t *testing.T) {
	db, mem := openTest(t)
	ctx := context.Background()
	if _, err := db.Ingest(ctx, RunInfo{Name: "one", Source: "one", Format: "test", SHA256: "1"}, IngestOptions{BatchRows: 7}, fillSmall(30)); err != nil {
		t.Fatal(err)
	}
	first := queryString(t, db.SQL(), "SELECT sym, name FROM symbols ORDER BY sym")
	second := func(w *RunWriter) error {
		task := w.Object("task", "C")
		for i, ev := range []string{"stop", "start", "stop"} {
			seq, err := w.Event(&Event{TS: int64(i), CPU: 1, Class: w.Sym("T"), Event: w.Sym(ev), Context: NoObject, Object: task,
				SourceInstance: NoInstance, TargetInstance: NoInstance, Line: int64(i + 1)})
			if err != nil {
				return err
			}
			if err := w.Transition(task, 0, int64(i), w.Sym([]string{"waiting", "running", "waiting"}[i]), seq, 1); err != nil {
				return err
			}
		}
		return nil
	}
	if _, err := db.Ingest(ctx, RunInfo{Name: "two", Source: "two", Format: "test", SHA256: "2"}, IngestOptions{BatchRows: 2}, second); err != nil {
		t.Fatal(err)
	}
	fail := func(w *RunWriter) error {
		w.Event(&Event{Class: w.Sym("never"), Event: w.Sym("stored"), Context: NoObject, Object: NoObject, CPU: NoCPU,
			SourceInstance: NoInstance, TargetInstance: NoInstance})
		return errors.New("cut")
	}
	if _, err := db.Ingest(ctx, RunInfo{Name: "three", Source: "three", Format: "test", SHA256: "3"}, IngestOptions{BatchRows: 1}, fail); err == nil {
		t.Fatal("the failing run was ingested")
	}
	mem.AssertSize(t, 0)
	got := queryString(t, db.SQL(), "SELECT sym, name FROM symbols ORDER BY sym")
	if want := first + "\n7 stop\n8 waiting"; got != want {
		t.Errorf("symbols:\n%s\nwant\n%s", got, want)
	}
	if want := "0 cpu\n1 task\n2 T\n3 start\n4 preempt\n5 running\n6 ready"; first != want {
		t.Errorf("the first run's symbols:\n%s\nwant\n%s", first, want)
	}
	// No ORDER BY: the views keep the order of the base tables.
	got = queryString(t, db.SQL(), "SELECT seq, class, event FROM events WHERE run_id = 2")
	if want := "1 T stop\n2 T start\n3 T stop"; got != want {
		t.Errorf("events of run 2:\n%s", got)
	}
	got = queryString(t, db.SQL(), "SELECT string_agg(event, ',') FROM (SELECT event FROM events WHERE run_id = 1 LIMIT 4)")
	if want := "start,preempt,start,preempt"; got != want {
		t.Errorf("events of run 1 in stored order: %s", got)
	}
	got = queryString(t, db.SQL(), "SELECT state, start_ts, end_ts, truncated FROM state_intervals WHERE run_id = 2")
	if want := "waiting 0 1 false\nrunning 1 2 false\nwaiting 2 2 true"; got != want {
		t.Errorf("intervals of run 2:\n%s", got)
	}
}

// TestMigrateVarcharTables: a database whose events and state_intervals
// are tables with VARCHAR columns (as traceduck wrote them before symbol
// ids) opens with the same rows, in the same order, behind the views; the
// next ingest goes on from its symbols.
func TestMigrateVarcharTables(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.duckdb")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	for i, name := range []string{"a", "b"} {
		if _, err := db.Ingest(ctx, RunInfo{Name: name, Source: name, Format: "test", SHA256: name}, IngestOptions{BatchRows: 5}, fillSmall(40+i*7)); err != nil {
			t.Fatal(err)
		}
	}
	const events, intervals = "SELECT * FROM events", "SELECT * FROM state_intervals"
	wantEvents, wantIntervals := queryString(t, db.SQL(), events), queryString(t, db.SQL(), intervals)
	for _, q := range []string{
		"CREATE TABLE old_events AS SELECT * FROM events",
		"CREATE TABLE old_intervals AS SELECT * FROM state_intervals",
		"DROP VIEW events", "DROP VIEW state_intervals",
		"DROP TABLE event_rows", "DROP TABLE state_interval_rows", "DROP TABLE symbols",
		"ALTER TABLE old_events RENAME TO events", "ALTER TABLE old_intervals RENAME TO state_intervals",
	} {
		if _, err := db.SQL().Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if got := queryString(t, db.SQL(), "SELECT data_type FROM information_schema.columns WHERE table_name = 'events' AND column_name = 'class'"); got != "VARCHAR" {
		t.Fatalf("the old layout has class %s", got)
	}
	db.Close()

	db, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got := queryString(t, db.SQL(), "SELECT table_name, table_type FROM information_schema.tables WHERE table_name IN ('events', 'state_intervals') ORDER BY 1"); got != "events VIEW\nstate_intervals VIEW" {
		t.Errorf("after migration: %s", got)
	}
	if got := queryString(t, db.SQL(), events); got != wantEvents {
		t.Errorf("events after migration differ:\n%s\nwant\n%s", got, wantEvents)
	}
	if got := queryString(t, db.SQL(), intervals); got != wantIntervals {
		t.Errorf("state_intervals after migration differ")
	}
	if got := queryString(t, db.SQL(), "SELECT string_agg(name, ',' ORDER BY sym) FROM symbols"); got != "T,preempt,ready,running,start" {
		t.Errorf("symbols: %s", got)
	}
	if _, err := db.Ingest(ctx, RunInfo{Name: "c", Source: "c", Format: "test", SHA256: "c"}, IngestOptions{}, fillSmall(3)); err != nil {
		t.Fatal(err)
	}
	if got := queryString(t, db.SQL(), "SELECT count(*), count(DISTINCT name), max(sym) FROM symbols"); got != "7 7 6" {
		t.Errorf("symbols after the next run (+ cpu, task): %s", got)
	}
	if got := queryString(t, db.SQL(), "SELECT string_agg(DISTINCT event, ',' ORDER BY event) FROM events WHERE run_id = 3"); got != "preempt,start" {
		t.Errorf("events of the run after migration: %s", got)
	}
}

// TestIngestReadsOnlyItsSymbols: a run looks up the names it uses, not
// the whole symbols table: a small run into a database of 300,000 names
// allocates what the small run needs (it used to read every name before
// its first event: "read symbols: Out of Memory" once a name was huge,
// seconds per ingest once there were millions), and still finds the ids
// the database gave its names.
func TestIngestReadsOnlyItsSymbols(t *testing.T) {
	db, _ := openTest(t)
	ctx := context.Background()
	const n = 300_000
	if _, err := db.SQL().Exec(`INSERT INTO symbols SELECT range, CASE range WHEN 150000 THEN 'running' ELSE 'name_' || range END FROM range(?)`, n); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if _, err := db.Ingest(ctx, RunInfo{Name: "small", Source: "small", Format: "test", SHA256: "s"}, IngestOptions{}, fillSmall(6)); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 16<<20 {
		t.Errorf("a 6-event run into a database of %d names allocated %d MB", n, got>>20)
	}
	if got := queryString(t, db.SQL(), "SELECT sym, name FROM symbols WHERE sym >= 150000 AND name NOT LIKE 'name_%' ORDER BY sym"); got != "150000 running\n300000 cpu\n300001 task\n300002 T\n300003 start\n300004 preempt\n300005 ready" {
		t.Errorf("symbols the run used:\n%s", got)
	}
	if got := queryString(t, db.SQL(), "SELECT string_agg(event || ':' || state, ',') FROM events e JOIN state_intervals s USING (run_id) WHERE e.seq = s.start_seq AND s.object_id = e.object_id"); got != "start:running,preempt:ready,start:running,preempt:ready,start:running,preempt:ready" {
		t.Errorf("the run's events and states: %s", got)
	}
}

// TestManyNamesMeasure measures a small ingest into a database that holds
// TRACEDUCK_MANY_NAMES names (one run of that many states), for
// docs and reports: go test ./schema -run TestManyNamesMeasure -v with
// TRACEDUCK_MANY_NAMES=3000000. Not part of the default run.
func TestManyNamesMeasure(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("TRACEDUCK_MANY_NAMES"))
	if n <= 0 {
		t.Skip("set TRACEDUCK_MANY_NAMES to a number of names")
	}
	db, _ := openTest(t)
	ctx := context.Background()
	big := func(w *RunWriter) error {
		task := w.Object("task", "T")
		cls, ev := w.Sym("T"), w.Sym("set")
		for i := 0; i < n; i++ {
			seq, err := w.Event(&Event{TS: int64(i), CPU: NoCPU, Class: cls, Event: ev, Context: NoObject, Object: task,
				SourceInstance: NoInstance, TargetInstance: NoInstance, Line: int64(i + 1)})
			if err != nil {
				return err
			}
			if err := w.Transition(task, 0, int64(i), w.Sym("state_"+strconv.Itoa(i)), seq, NoCPU); err != nil {
				return err
			}
		}
		return nil
	}
	start := time.Now()
	if _, err := db.Ingest(ctx, RunInfo{Name: "big", Source: "big", Format: "test", SHA256: "big"}, IngestOptions{}, big); err != nil {
		t.Fatal(err)
	}
	t.Logf("a run of %d names: %v", n, time.Since(start).Round(time.Millisecond))
	for i := 0; i < 3; i++ {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		start = time.Now()
		if _, err := db.Ingest(ctx, RunInfo{Name: "small", Source: "small", Format: "test", SHA256: strconv.Itoa(i)}, IngestOptions{}, fillSmall(6)); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		t.Logf("then a 6-event run: %v, %d KB allocated, Go heap %d MB", time.Since(start).Round(time.Millisecond),
			(after.TotalAlloc-before.TotalAlloc)>>10, after.HeapAlloc>>20)
	}
}

// TestSymbolsInGoOrInSQL: the run's names looked up in Go (a database of
// few names) or in SQL (more than maxCachedSymbols, or a run whose own
// names pass it) give the same symbols table, ids and views, over runs
// that bring new names in every batch, reuse the previous runs' and repeat
// names that read the same once repaired; a failed run adds no name.
func TestSymbolsInGoOrInSQL(t *testing.T) {
	defer func(m int) { maxCachedSymbols = m }(maxCachedSymbols)
	run := func(states int, extra ...string) func(w *RunWriter) error {
		return func(w *RunWriter) error {
			task := w.Object("task", "A")
			for i := 0; i < 3*states; i++ {
				seq, err := w.Event(&Event{TS: int64(i), CPU: NoCPU, Class: w.Sym("SIG"), Event: w.Sym("write"), Context: NoObject, Object: task,
					SourceInstance: NoInstance, TargetInstance: NoInstance, Line: int64(i + 1)})
				if err != nil {
					return err
				}
				st := "v" + strconv.Itoa(i%states)
				if i%5 == 4 && len(extra) > 0 {
					st = extra[i%len(extra)]
				}
				if err := w.Transition(task, 0, int64(i), w.Sym(st), seq, NoCPU); err != nil {
					return err
				}
			}
			return nil
		}
	}
	var want string
	for _, max := range []int{1 << 16, 0, 3, 40} {
		maxCachedSymbols = max
		db, _ := openTest(t)
		ctx := context.Background()
		for i, fill := range []func(w *RunWriter) error{run(30), run(50, "\xff", "\xfe", "x\xff", "v7"), run(20, "new")} {
			if _, err := db.Ingest(ctx, RunInfo{Name: "r", Source: "r", Format: "test", SHA256: strconv.Itoa(i)}, IngestOptions{BatchRows: 4}, fill); err != nil {
				t.Fatal(err)
			}
		}
		fail := func(w *RunWriter) error {
			if err := run(10, "never")(w); err != nil {
				return err
			}
			return errors.New("cut")
		}
		if _, err := db.Ingest(ctx, RunInfo{Name: "f", Source: "f", Format: "test", SHA256: "f"}, IngestOptions{BatchRows: 4}, fail); err == nil {
			t.Fatal("the failing run was ingested")
		}
		got := queryString(t, db.SQL(), "SELECT sym, name FROM symbols ORDER BY sym") + "\n" +
			queryString(t, db.SQL(), "SELECT run_id, count(*), string_agg(state_sym::VARCHAR, ','), string_agg(state, ',') FROM state_interval_rows JOIN state_intervals USING (run_id, start_seq) GROUP BY run_id ORDER BY run_id") + "\n" +
			queryString(t, db.SQL(), "SELECT count(DISTINCT name), count(*), max(sym) + 1 FROM symbols")
		if want == "" {
			want = got
			continue
		}
		if got != want {
			t.Errorf("at most %d names in Go:\n%s\nwant (all in Go)\n%s", max, got, want)
		}
	}
	if !strings.Contains(want, "\n3 ") || strings.Contains(want, "never") {
		t.Errorf("symbols:\n%s", want)
	}
}
