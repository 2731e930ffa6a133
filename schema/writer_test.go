package schema

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow/memory"
)

func openTest(t *testing.T) (*DB, *memory.CheckedAllocator) {
	t.Helper()
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), "t.duckdb"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	db.SetAllocator(mem)
	return db, mem
}

func queryString(t *testing.T, db *sql.DB, q string) string {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		parts := make([]string, len(vals))
		for i, v := range vals {
			if v == nil {
				parts[i] = "NULL"
			} else {
				parts[i] = fmt.Sprint(v)
			}
		}
		out = append(out, strings.Join(parts, " "))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(out, "\n")
}

// fillSmall writes a small run across several batches: two tasks on one
// core, with transitions, and one attribute.
func fillSmall(n int) func(w *RunWriter) error {
	return func(w *RunWriter) error {
		core := w.Object("cpu", "Core_0")
		w.SetNativeID(core, 0)
		a := w.Object("task", "A")
		b := w.Object("task", "B")
		w.SetAttr(a, "priority", 3)
		cls, start, pre := w.Sym("T"), w.Sym("start"), w.Sym("preempt")
		running, ready := w.Sym("running"), w.Sym("ready")
		w.SetMeta("timeScale", "ns")
		for i := 0; i < n; i++ {
			ts := int64(i * 10)
			task, ev, st := a, start, running
			if i%2 == 1 {
				task, ev, st = a, pre, ready
			}
			e := Event{TS: ts, CPU: 0, Class: cls, Event: ev, Context: core, Object: task,
				SourceInstance: 0, TargetInstance: int64(i / 100), Line: int64(i + 1)}
			if i%3 == 0 {
				e.Value = []byte("note")
			}
			seq, err := w.Event(&e)
			if err != nil {
				return err
			}
			if err := w.Transition(task, int64(i/100), ts, st, seq, 0); err != nil {
				return err
			}
		}
		_ = b
		return nil
	}
}

func TestIngestRoundTrip(t *testing.T) {
	db, mem := openTest(t)
	ctx := context.Background()
	info := RunInfo{Name: "small", Source: "small.btf", Format: "test", SHA256: "abc123", Tags: [][2]string{{"build", "42"}}}
	id, err := db.Ingest(ctx, info, IngestOptions{BatchRows: 7}, fillSmall(250))
	if err != nil {
		t.Fatal(err)
	}
	if id != 1 {
		t.Fatalf("run id %d", id)
	}
	mem.AssertSize(t, 0)
	got := queryString(t, db.SQL(), `SELECT run_id, name, format, event_count, first_ts, last_ts, meta, tags FROM runs`)
	want := `1 small test 250 0 2490 {"timeScale":"ns"} {"build":"42"}`
	if got != want {
		t.Errorf("runs:\n got %s\nwant %s", got, want)
	}
	got = queryString(t, db.SQL(), `SELECT count(*), count(value), sum(seq), min(seq), max(seq), count(DISTINCT eco_id) FROM events`)
	if want := "250 84 31375 1 250 2"; got != want {
		t.Errorf("events: got %s want %s", got, want)
	}
	got = queryString(t, db.SQL(), `SELECT object_id, kind, name, native_id, attrs FROM objects ORDER BY object_id`)
	if want := "1 cpu Core_0 0 NULL\n2 task A NULL {\"priority\":3}\n3 task B NULL NULL"; got != want {
		t.Errorf("objects:\n%s\nwant\n%s", got, want)
	}
	got = queryString(t, db.SQL(), `SELECT class, event, count FROM eco_triples ORDER BY eco_id`)
	if want := "T start 125\nT preempt 125"; got != want {
		t.Errorf("eco: %s", got)
	}
	// 250 transitions over 3 instances: each instance's intervals chain;
	// the last one of each instance is truncated at the end of the trace.
	got = queryString(t, db.SQL(), `SELECT instance, count(*), sum(dur), count(*) FILTER (truncated) FROM state_intervals GROUP BY instance ORDER BY instance`)
	if want := "0 100 2490 1\n1 100 1490 1\n2 50 490 1"; got != want {
		t.Errorf("intervals:\n%s", got)
	}
}

func TestFailedIngestLeavesDatabaseUnchanged(t *testing.T) {
	db, mem := openTest(t)
	ctx := context.Background()
	if _, err := db.Ingest(ctx, RunInfo{Name: "good", SHA256: "1"}, IngestOptions{BatchRows: 5}, fillSmall(40)); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("syntax error at line 30")
	_, err := db.Ingest(ctx, RunInfo{Name: "bad", SHA256: "2"}, IngestOptions{BatchRows: 5}, func(w *RunWriter) error {
		if err := fillSmall(30)(w); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("got %v", err)
	}
	mem.AssertSize(t, 0)
	for table, want := range map[string]string{"runs": "1", "events": "40", "objects": "3", "eco_triples": "2", "state_intervals": "40"} {
		if got := queryString(t, db.SQL(), "SELECT count(*) FROM "+table); got != want {
			t.Errorf("%s: %s rows, want %s", table, got, want)
		}
	}
	// cancelled ingest
	cctx, cancel := context.WithCancel(ctx)
	_, err = db.Ingest(cctx, RunInfo{Name: "cancelled", SHA256: "3"}, IngestOptions{BatchRows: 5}, func(w *RunWriter) error {
		if err := fillSmall(30)(w); err != nil {
			return err
		}
		cancel()
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v", err)
	}
	if got := queryString(t, db.SQL(), "SELECT count(*) FROM events"); got != "40" {
		t.Errorf("events after cancel: %s", got)
	}
	mem.AssertSize(t, 0)
}

func TestDuplicateRefused(t *testing.T) {
	db, _ := openTest(t)
	ctx := context.Background()
	if _, err := db.Ingest(ctx, RunInfo{Name: "a", SHA256: "feedbeef00112233"}, IngestOptions{}, fillSmall(3)); err != nil {
		t.Fatal(err)
	}
	_, err := db.Ingest(ctx, RunInfo{Name: "b"}, IngestOptions{SHA256: func() string { return "feedbeef00112233" }}, fillSmall(3))
	var dup *DuplicateError
	if !errors.As(err, &dup) || dup.RunID != 1 {
		t.Fatalf("got %v", err)
	}
	if want := "already ingested as run 1 (a, sha256 feedbeef0011); use --force to ingest it again"; err.Error() != want {
		t.Errorf("message %q", err.Error())
	}
	id, err := db.Ingest(ctx, RunInfo{Name: "b"}, IngestOptions{Force: true, SHA256: func() string { return "feedbeef00112233" }}, fillSmall(3))
	if err != nil || id != 2 {
		t.Fatalf("forced: %d %v", id, err)
	}
	_ = time.Now
}

func TestDiagnosticsBounded(t *testing.T) {
	db, _ := openTest(t)
	_, err := db.Ingest(context.Background(), RunInfo{Name: "d"}, IngestOptions{}, func(w *RunWriter) error {
		id := w.Diag(Info, 3, 1, "first")
		w.DiagRepeat(id)
		for i := 0; i < maxDiagnostics+5; i++ {
			w.Diagf(Warning, int64(i+10), NoSeq, "n%d", i)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got := queryString(t, db.SQL(), "SELECT count(*), sum(count) FROM diagnostics")
	if want := fmt.Sprintf("%d %d", maxDiagnostics+1, maxDiagnostics+5+2); got != want {
		t.Errorf("got %s want %s", got, want)
	}
}

// TestInvalidUTF8Repaired: DuckDB refuses strings that are not UTF-8; the
// writer repairs them (U+FFFD) in every string column and says so once.
func TestInvalidUTF8Repaired(t *testing.T) {
	db, mem := openTest(t)
	_, err := db.Ingest(context.Background(), RunInfo{Name: "bad\xffname"}, IngestOptions{}, func(w *RunWriter) error {
		w.SetMeta("creator", "x\xfe")
		o := w.Object("task", "T\xc3")
		for i, v := range [][]byte{[]byte("ok"), []byte("v\xff"), nil} {
			if _, err := w.Event(&Event{TS: int64(i), CPU: NoCPU, Class: w.Sym("C\xff"), Event: w.Sym("e"), Context: o, Object: o,
				SourceInstance: NoInstance, TargetInstance: NoInstance, Value: v, Line: int64(10 + i)}); err != nil {
				return err
			}
		}
		return w.Transition(o, 0, 0, w.Sym("s\xff"), 1, NoCPU)
	})
	if err != nil {
		t.Fatal(err)
	}
	mem.AssertSize(t, 0)
	got := queryString(t, db.SQL(), "SELECT name, meta->>'creator' FROM runs")
	if got != "bad\uFFFDname x\uFFFD" {
		t.Errorf("runs: %q", got)
	}
	got = queryString(t, db.SQL(), "SELECT string_agg(DISTINCT class, ','), string_agg(value, ',' ORDER BY seq) FROM events")
	if got != "C\uFFFD ok,v\uFFFD" {
		t.Errorf("events: %q", got)
	}
	got = queryString(t, db.SQL(), "SELECT (SELECT name FROM objects), (SELECT state FROM state_intervals)")
	if got != "T\uFFFD s\uFFFD" {
		t.Errorf("objects/intervals: %q", got)
	}
	// name, creator, class, value, object name, state: six values repaired,
	// the first event that brought one is on line 10.
	got = queryString(t, db.SQL(), "SELECT src_line, seq, severity, count FROM diagnostics")
	if got != "10 1 warning 6" {
		t.Errorf("diagnostics: %q", got)
	}
}

func TestNewObjectAndSetName(t *testing.T) {
	db, _ := openTest(t)
	_, err := db.Ingest(context.Background(), RunInfo{Name: "n"}, IngestOptions{}, func(w *RunWriter) error {
		a := w.NewObject("thread", "sh/1")
		b := w.NewObject("thread", "sh/1")
		c := w.Object("thread", "sh/1") // the registry does not know NewObject's objects
		if a == b || b == c || a == c {
			t.Errorf("ids %d %d %d", a, b, c)
		}
		w.SetPID(a, 10)
		w.SetPID(b, 11)
		w.SetName(b, "sh/1 (worker)")
		if w.Object("thread", "sh/1") != c {
			t.Error("registry lost c")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got := queryString(t, db.SQL(), "SELECT object_id, name, pid FROM objects ORDER BY object_id")
	if want := "1 sh/1 10\n2 sh/1 (worker) 11\n3 sh/1 NULL"; got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestParseByteSize(t *testing.T) {
	for in, want := range map[string]int64{"19.2 GiB": 20615843020, "256.0 MiB": 256 << 20, "1000 bytes": 1000, "1.5 KiB": 1536, "2 GB": 2e9} {
		if got, ok := parseByteSize(in); !ok || got != want {
			t.Errorf("parseByteSize(%q) = %d, %v; want %d", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "lots", "12 parsecs", "-1 GiB"} {
		if got, ok := parseByteSize(in); ok {
			t.Errorf("parseByteSize(%q) = %d, want an error", in, got)
		}
	}
}

func TestIngestRestoresSettings(t *testing.T) {
	db, _ := openTest(t)
	ctx := context.Background()
	before := queryString(t, db.SQL(), "SELECT current_setting('threads') || ' ' || current_setting('memory_limit')")
	var during string
	if _, err := db.Ingest(ctx, RunInfo{Name: "a", SHA256: "1"}, IngestOptions{}, func(w *RunWriter) error {
		during = queryString(t, db.SQL(), "SELECT current_setting('threads') || ' ' || current_setting('memory_limit')")
		return fillSmall(3)(w)
	}); err != nil {
		t.Fatal(err)
	}
	if want := "1 128.0 MiB"; during != want {
		t.Errorf("during the ingest: %q, want %q", during, want)
	}
	checkLimit := func(what, before string) {
		t.Helper()
		// set back from DuckDB's rounded print: within its last digit
		after := queryString(t, db.SQL(), "SELECT current_setting('memory_limit')")
		a, _ := parseByteSize(after)
		b, _ := parseByteSize(before)
		if a < b*99/100 || a > b*101/100 {
			t.Errorf("%s: memory_limit %q after the ingest, want %q as before", what, after, before)
		}
		// and the buffer pool has it, not only the setting: a query that
		// needs more than the ingest's limit runs
		if got := queryString(t, db.SQL(), "SELECT len(list(range)) FROM range(30000000)"); got != "30000000" {
			t.Errorf("%s: %s", what, got)
		}
	}
	if got := queryString(t, db.SQL(), "SELECT current_setting('threads')"); got != strings.Fields(before)[0] {
		t.Errorf("threads after the ingest: %s, want %s", got, before)
	}
	checkLimit("default", strings.SplitN(before, " ", 2)[1])
	// a limit lower than the ingest's is kept, a higher one set back
	for _, limit := range []string{"100MB", "3GB"} {
		if _, err := db.SQL().Exec("SET memory_limit = '" + limit + "'"); err != nil {
			t.Fatal(err)
		}
		before := queryString(t, db.SQL(), "SELECT current_setting('memory_limit')")
		if _, err := db.Ingest(ctx, RunInfo{Name: limit, SHA256: limit}, IngestOptions{}, func(w *RunWriter) error {
			during = queryString(t, db.SQL(), "SELECT current_setting('memory_limit')")
			return fillSmall(3)(w)
		}); err != nil {
			t.Fatal(err)
		}
		if want := map[string]string{"100MB": before, "3GB": "128.0 MiB"}[limit]; during != want {
			t.Errorf("limit %s: %q during the ingest, want %q", limit, during, want)
		}
		if limit == "3GB" {
			checkLimit(limit, before)
		}
	}
}

// TestLongNamesCut: object names and symbols longer than 32 KiB are kept
// cut to their first 32 KiB (not splitting a character; two names that
// agree that far are one), and a warning counts them: a name of tens of
// MB in the symbols table used to make every later ingest fail, and a
// run of many 1 MB names made DuckDB abort the process at COMMIT.
func TestLongNamesCut(t *testing.T) {
	const bound = 32 << 10
	db, mem := openTest(t)
	long := strings.Repeat("n", 5*bound)
	utf := strings.Repeat("é", bound) // 2 bytes each: cut at a character boundary
	_, err := db.Ingest(context.Background(), RunInfo{Name: "long"}, IngestOptions{}, func(w *RunWriter) error {
		a := w.Object("task", long+"a")
		if b := w.ObjectBytes(w.Sym("task"), []byte(long+"b")); b != a {
			t.Errorf("names that agree on their first %d bytes are objects %d and %d", bound, a, b)
		}
		c := w.NewObject("thread", utf)
		w.SetName(c, utf+"x")
		for i, st := range []string{long + "1", long + "2", "short"} {
			seq, err := w.Event(&Event{TS: int64(i), CPU: NoCPU, Class: w.Sym("C"), Event: w.SymBytes([]byte("e" + long)), Context: a, Object: a,
				SourceInstance: NoInstance, TargetInstance: NoInstance, Line: int64(7 + i)})
			if err != nil {
				return err
			}
			if err := w.Transition(a, 0, int64(i), w.Sym(st), seq, NoCPU); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	mem.AssertSize(t, 0)
	if got, want := queryString(t, db.SQL(), "SELECT object_id, length(name), strlen(name) FROM objects ORDER BY 1"), fmt.Sprintf("1 %d %d\n2 %d %d", bound, bound, bound/2, bound); got != want {
		t.Errorf("objects:\n%s\nwant\n%s", got, want)
	}
	if got, want := queryString(t, db.SQL(), "SELECT DISTINCT strlen(event) FROM events"), fmt.Sprint(bound); got != want {
		t.Errorf("events: %s", got)
	}
	if got, want := queryString(t, db.SQL(), "SELECT strlen(state), count(*) FROM state_intervals GROUP BY 1 ORDER BY 1"), fmt.Sprintf("5 1\n%d 1", bound); got != want {
		t.Errorf("states:\n%s\nwant\n%s", got, want)
	}
	// the two states are one once cut (one interval); cut: object a,
	// object c (NewObject, then SetName), the event and the state
	want := fmt.Sprintf("7 1 warning 5 a name longer than %d bytes: kept cut to its first %d (count = names cut, as object names and as class, event or state names)", bound, bound)
	if got := queryString(t, db.SQL(), "SELECT src_line, seq, severity, count, message FROM diagnostics"); got != want {
		t.Errorf("diagnostics:\n%s\nwant\n%s", got, want)
	}
}

// TestStaleTempRemoved: what a dead process left in FILE.tmp/ (DuckDB's
// spilled blocks; an abort at COMMIT left 336 MB) is removed when the
// database is next opened; other files there are kept.
func TestStaleTempRemoved(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.duckdb")
	for _, dirOnly := range []bool{true, false} {
		if err := os.MkdirAll(path+".tmp", 0o755); err != nil {
			t.Fatal(err)
		}
		block := filepath.Join(path+".tmp", "duckdb_temp_block-4611686018427388141.block")
		if err := os.WriteFile(block, make([]byte, 1<<20), 0o644); err != nil {
			t.Fatal(err)
		}
		other := filepath.Join(path+".tmp", "mine")
		if !dirOnly {
			if err := os.WriteFile(other, nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		db, err := Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		db.Close()
		if _, err := os.Stat(block); !os.IsNotExist(err) {
			t.Errorf("the stale block is left: %v", err)
		}
		_, err = os.Stat(path + ".tmp")
		if dirOnly && !os.IsNotExist(err) {
			t.Errorf("the empty directory is left: %v", err)
		}
		if _, err := os.Stat(other); !dirOnly && err != nil {
			t.Errorf("a file that is not DuckDB's: %v", err)
		}
	}
}

// TestRunIDsNeverReused: a run id is one more than any in any table, so
// that a new run never mixes with the rows of a run whose runs row is gone
// (DROP TABLE runs CASCADE, DELETE FROM runs through query).
func TestRunIDsNeverReused(t *testing.T) {
	db, _ := openTest(t)
	ctx := context.Background()
	ingest := func(sha string) int32 {
		t.Helper()
		id, err := db.Ingest(ctx, RunInfo{Name: sha, Source: sha, Format: "test", SHA256: sha}, IngestOptions{}, fillSmall(4))
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	ingest("a")
	ingest("b")
	if _, err := db.SQL().Exec("DELETE FROM runs"); err != nil {
		t.Fatal(err)
	}
	if id := ingest("c"); id != 3 {
		t.Errorf("after DELETE FROM runs: run %d", id)
	}
	if _, err := db.SQL().Exec("DROP TABLE runs CASCADE"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db, err := Open(ctx, db.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	id, err := db.Ingest(ctx, RunInfo{Name: "d", Source: "d", Format: "test", SHA256: "d"}, IngestOptions{}, fillSmall(4))
	if err != nil {
		t.Fatal(err)
	}
	if id != 4 {
		t.Errorf("after DROP TABLE runs CASCADE: run %d", id)
	}
}
