package qnx_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/internal/qnxenc"
	"github.com/traceduck/traceduck/internal/recount"
	"github.com/traceduck/traceduck/internal/tracegen"
	"github.com/traceduck/traceduck/schema"
)

// truthCount is the generator's truth as a recount.QNX.
func truthCount(tr tracegen.QNXTruth) recount.QNX {
	c := recount.NewQNX()
	for cpu, ns := range tr.CPUBusyNS {
		c.Busy[cpu] = ns
	}
	for cpu, ns := range tr.CPUIdleNS {
		c.Idle[cpu] = ns
	}
	for cpu, m := range tr.CPUHolders {
		for h, ns := range m {
			if h == "" {
				h = "none"
			}
			c.Hold(cpu, h, ns)
		}
	}
	for _, m := range tr.RunningPerCPU {
		for th, ns := range m {
			c.Running[th] += ns
		}
	}
	return c
}

// dbCPUCount is what traceduck computed for run: the CPU intervals
// (cpu_intervals, the CPU model's view) and the threads' RUNNING
// intervals.
func dbCPUCount(t *testing.T, db *schema.DB, run int32) recount.QNX {
	t.Helper()
	c := recount.NewQNX()
	const from = ` FROM cpu_intervals i JOIN objects c ON c.run_id = i.run_id AND c.object_id = i.cpu_id
		LEFT JOIN objects h ON h.run_id = i.run_id AND h.object_id = i.holder_id
		WHERE i.run_id = ? AND NOT i.truncated `
	cpuOf := func(k string) int {
		n, err := strconv.Atoi(k)
		if err != nil {
			t.Fatalf("cpu %q", k)
		}
		return n
	}
	for k, ns := range dbtest.QueryCounts(t, db.SQL(), `SELECT c.native_id::VARCHAR, sum(i.dur)`+from+`AND i.busy GROUP BY ALL`, run) {
		c.Busy[cpuOf(k)] = ns
	}
	for k, ns := range dbtest.QueryCounts(t, db.SQL(), `SELECT c.native_id::VARCHAR, sum(i.dur)`+from+`AND NOT i.busy AND i.holder_id IS NOT NULL GROUP BY ALL`, run) {
		c.Idle[cpuOf(k)] = ns
	}
	for k, ns := range dbtest.QueryCounts(t, db.SQL(), `SELECT c.native_id || '|' || CASE WHEN h.object_id IS NULL THEN 'none' WHEN h.kind = 'thread' THEN h.pid || '/' || h.native_id
			WHEN h.kind = 'interrupt' THEN 'irq ' || h.native_id ELSE h.kind END, sum(i.dur)`+from+`GROUP BY ALL`, run) {
		cpu, h, _ := strings.Cut(k, "|")
		c.Hold(cpuOf(cpu), h, ns)
	}
	for k, ns := range dbtest.QueryCounts(t, db.SQL(), `SELECT o.pid || '/' || o.native_id, sum(s.dur) FROM state_intervals s JOIN objects o USING (run_id, object_id)
		WHERE s.run_id = ? AND o.kind = 'thread' AND s.instance = 0 AND s.state = 'RUNNING' AND NOT s.truncated GROUP BY ALL`, run) {
		c.Running[k] = ns
	}
	return c
}

// qnxRealTraces are the real traceprinter listings beside the repository.
func qnxRealTraces(t *testing.T) []string {
	files, _ := filepath.Glob(filepath.Join(shared, "testdata-external", "qnx", "*.txt"))
	if len(files) == 0 {
		t.Skip("no ../shared/testdata-external/qnx beside the repository")
	}
	return files
}

// TestCPUTruthQNX compares what traceduck makes of QNX traces' CPUs with
// counts it did not compute: the real traceprinter excerpt and the
// seed's listing recounted from their raw lines (recountQNXText), and
// generated traces against the simulator's truth and the recount of their
// text (the .kev renderings: checkTruth, from TestKevSameAsText). Exact: the listing gives every change of holder
// with its cycle count, and both sides floor the same 64-bit count to ns.
func TestCPUTruthQNX(t *testing.T) {
	check := func(t *testing.T, db *schema.DB, run int32, want recount.QNX) {
		t.Helper()
		if got := dbCPUCount(t, db, run); got.Rows() != want.Rows() {
			t.Errorf("traceduck's counts differ from the recount:\n%s", dbtest.Diff(want.Rows(), got.Rows()))
		}
	}
	t.Run("real-excerpt", func(t *testing.T) {
		for _, path := range qnxRealTraces(t) {
			want, err := recount.ReadQNXText(path)
			if err != nil {
				t.Fatal(err)
			}
			// Counted by hand too: the excerpt's 10 events are CONTROL
			// BUFFER and TIME, procnto's PROCCREATE_NAME, THCREATE of pid 1
			// tids 1..4, THREADY of tid 1 and THRECEIVE of tids 2 and 3. No
			// THRUNNING and no INT_ENTR: no CPU is ever known to be held
			// (no CPU interval, 0 ns busy, no holder) and no thread runs;
			// the three thread states are open at the end (cut).
			if rows := want.Rows(); rows != "" {
				t.Fatalf("the recount of the excerpt finds holds:\n%s", rows)
			}
			db := dbtest.Open(t)
			res := dbtest.Ingest(t, db, path, ingest.Options{})
			check(t, db, res.RunID, want)
			if got := dbtest.Query(t, db.SQL(), `SELECT count(*) FROM cpu_intervals WHERE run_id = ?`, res.RunID); got != "0\n" {
				t.Errorf("CPU intervals: %s", got)
			}
			if got := dbtest.Query(t, db.SQL(), `SELECT count(*) FILTER (truncated), count(*) FROM state_intervals s JOIN objects o USING (run_id, object_id)
				WHERE s.run_id = ? AND o.kind = 'thread'`, res.RunID); got != "3 | 3\n" {
				t.Errorf("thread states (cut, all): %s", got)
			}
		}
	})
	t.Run("seed-listing", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "seed-listing.txt")
		if err := os.WriteFile(path, []byte(seedListing(t)), 0o644); err != nil {
			t.Fatal(err)
		}
		want, err := recount.ReadQNXText(path)
		if err != nil {
			t.Fatal(err)
		}
		if want.Busy[0] == 0 || want.Idle[0] == 0 || want.Holders[0]["irq 0"] == 0 || want.Holders[0]["none"] == 0 {
			t.Fatalf("the seed's listing should have busy, idle-thread, interrupt and no-holder time:\n%s", want.Rows())
		}
		db := dbtest.Open(t)
		res := dbtest.Ingest(t, db, path, ingest.Options{})
		check(t, db, res.RunID, want)
	})
	t.Run("generated", func(t *testing.T) {
		for _, cfg := range truthConfigs {
			h, events, truth, err := tracegen.GenerateQNX(cfg)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			text := writeTrace(t, dir, "trace.txt", h, events, func(f *os.File, h qnxenc.Header, ev []qnxenc.Event) error { return qnxenc.WriteText(f, h, ev) })
			recount, err := recount.ReadQNXText(text)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := recount.Rows(), truthCount(truth).Rows(); got != want {
				t.Fatalf("%+v: the recount differs from the simulator's truth:\n%s", cfg, dbtest.Diff(want, got))
			}
			db := dbtest.Open(t)
			res := dbtest.Ingest(t, db, text, ingest.Options{})
			check(t, db, res.RunID, recount)
		}
	})
}
