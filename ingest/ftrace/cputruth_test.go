package ftrace_test

import (
	"path/filepath"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/internal/recount"
)

// TestCPUTruthFtrace: on every real ftrace file, what traceduck says of the
// CPUs (cpu_utilization: busy and known ns per CPU, ns per holder; the
// interrupts' handler intervals; the threads' running time) is what
// recount.ReadFtrace counts from the raw lines, exactly. Where the trace cannot
// tell (a CPU before its first sched_switch; after lost events; a
// contradiction) neither counts: traceduck has no CPU interval there (or
// a truncated one), the recount's Unknown holds that time.
func TestCPUTruthFtrace(t *testing.T) {
	for _, path := range externalFiles(t) {
		t.Run(filepath.Base(path)[max(0, len(filepath.Base(path))-40):], func(t *testing.T) {
			rc, err := recount.ReadFtrace(path)
			if err != nil {
				t.Fatal(err)
			}
			db := dbtest.Open(t)
			dbtest.Ingest(t, db, path, ingest.Options{})
			busy, held, running, handlers := rc.Rows()
			dbtest.SameRows(t, db.SQL(), "busy and known ns per CPU", busy, `SELECT cpu, coalesce(sum(ns) FILTER (WHERE busy), 0), sum(ns) FROM cpu_utilization GROUP BY cpu`)
			dbtest.SameRows(t, db.SQL(), "ns per CPU and holder", held, `SELECT i.cpu, CASE WHEN o.kind = 'thread' AND o.native_id > 0 THEN 'tid ' || o.native_id ELSE o.name END, sum(i.dur)
					FROM cpu_intervals i JOIN objects o ON o.run_id = i.run_id AND o.object_id = i.holder_id WHERE NOT i.truncated GROUP BY ALL`)
			dbtest.SameRows(t, db.SQL(), "running ns per thread", running, `SELECT o.native_id::VARCHAR, sum(s.dur) FROM state_intervals s JOIN objects o USING (run_id, object_id)
					WHERE o.kind = 'thread' AND s.instance = 0 AND s.state = 'running' AND NOT s.truncated GROUP BY ALL`)
			dbtest.SameRows(t, db.SQL(), "handler intervals per interrupt", handlers, `SELECT o.name, count(*), sum(s.dur) FROM state_intervals s JOIN objects o USING (run_id, object_id)
					WHERE o.kind = 'interrupt' AND NOT s.truncated GROUP BY ALL`)
			t.Logf("busy/known per CPU %v/%v; unknown ns per CPU %v; %d lost-events markers, %d contradictions", rc.Busy, rc.Known, rc.Unknown, rc.Lost, rc.Contradictions)
		})
	}
}
