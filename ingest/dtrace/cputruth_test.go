package dtrace

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/internal/recount"
	"github.com/traceduck/traceduck/internal/tracegen"
)

// TestCPUTruthDTrace: what traceduck says of the CPUs of DTrace event
// output (cpu_utilization: busy and known ns per CPU, ns per holder; the
// interrupts' handler intervals; the threads' running time) is what
// recount.ReadDTrace counts from the raw lines, exactly: on generated outputs
// (switches at one instant as bpftrace prints them, and with a gap as
// DTrace does; nested interrupts; idle CPUs) and on every real DTrace
// output of the collection. Those (the DTraceToolkit's examples) hold
// printed aggregations and tool output, no event lines: there both sides
// are empty, and the generated outputs are the only ones with CPU
// intervals.
func TestCPUTruthDTrace(t *testing.T) {
	var paths []string
	dir := t.TempDir()
	for i, cfg := range []tracegen.DTraceConfig{
		{Lines: 5000, CPUs: 2, Processes: 3, Threads: 2, Seed: 31, Gap: true},
		{Lines: 8000, CPUs: 4, Processes: 2, Threads: 2, Seed: 32},
		{Lines: 8000, CPUs: 3, Processes: 4, Threads: 3, Seed: 33, Gap: true},
	} {
		var buf bytes.Buffer
		if _, err := tracegen.WriteDTrace(&buf, cfg); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, fmt.Sprintf("gen%d.d.txt", i))
		if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	real, _ := filepath.Glob(filepath.Join(externalDir, "dtrace", "*"))
	if len(real) == 0 {
		t.Log("no ../shared/testdata-external/dtrace beside the repository: generated outputs only")
	}
	db := dbtest.Open(t)
	withLines := 0
	for _, path := range append(paths, real...) {
		rc, err := recount.ReadDTrace(path)
		if err != nil {
			t.Fatal(err)
		}
		res, err := ingest.Path(context.Background(), db, path, ingest.Options{Format: "dtrace"})
		if err != nil {
			// an example of prose and a command's output with nothing
			// DTrace in it is refused (docs/bad-input.md): no events
			if rc.EventLines != 0 || !strings.Contains(err.Error(), "expected DTrace or bpftrace output") {
				t.Fatalf("ingest %s: %v", path, err)
			}
			continue
		}
		if rc.EventLines != int(res.Events) {
			t.Errorf("%s: %d events, %d event lines", filepath.Base(path), res.Events, rc.EventLines)
		}
		if rc.EventLines > 0 {
			withLines++
		}
		busy, held, running, handlers := rc.Rows()
		dbtest.SameRows(t, db.SQL(), filepath.Base(path)+": busy and known ns per CPU", busy, `SELECT cpu, coalesce(sum(ns) FILTER (WHERE busy), 0), sum(ns) FROM cpu_utilization WHERE run_id = $1 GROUP BY cpu`, res.RunID)
		dbtest.SameRows(t, db.SQL(), filepath.Base(path)+": ns per CPU and holder", held, `SELECT i.cpu, CASE WHEN o.kind = 'thread' AND o.native_id IS NOT NULL THEN o.pid || '/' || o.native_id
					WHEN o.kind = 'thread' THEN 'idle' WHEN o.kind = 'system' THEN 'switching' ELSE o.name END, sum(i.dur)
				FROM cpu_intervals i JOIN objects o ON o.run_id = i.run_id AND o.object_id = i.holder_id WHERE i.run_id = $1 AND NOT i.truncated GROUP BY ALL`, res.RunID)
		dbtest.SameRows(t, db.SQL(), filepath.Base(path)+": running ns per thread", running, `SELECT o.pid || '/' || o.native_id, sum(s.dur) FROM state_intervals s JOIN objects o USING (run_id, object_id)
				WHERE s.run_id = $1 AND o.kind = 'thread' AND s.instance = 0 AND s.state = 'running' AND NOT s.truncated GROUP BY ALL`, res.RunID)
		dbtest.SameRows(t, db.SQL(), filepath.Base(path)+": handler intervals per interrupt", handlers, `SELECT o.name, count(*), sum(s.dur) FROM state_intervals s JOIN objects o USING (run_id, object_id)
				WHERE s.run_id = $1 AND o.kind = 'interrupt' AND NOT s.truncated GROUP BY ALL`, res.RunID)
		if rc.EventLines > 0 {
			t.Logf("%s: busy/known per CPU %v/%v, unknown %v", filepath.Base(path), rc.Busy, rc.Known, rc.Unknown)
		}
	}
	if withLines != len(paths) {
		t.Errorf("%d outputs with event lines, want the %d generated ones (a real one has them now: look at it)", withLines, len(paths))
	}
}
