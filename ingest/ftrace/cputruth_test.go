package ftrace_test

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
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
			var busy, held, running, handlers []string
			for n, k := range rc.Known {
				busy = append(busy, fmt.Sprintf("cpu %d | %d | %d", n, rc.Busy[n], k))
			}
			for n, hs := range rc.Held {
				for h, ns := range hs {
					held = append(held, fmt.Sprintf("cpu %d | %s | %d", n, h, ns))
				}
			}
			for tid, ns := range rc.Running {
				running = append(running, fmt.Sprintf("%s | %d", tid, ns))
			}
			for ir, h := range rc.Handlers {
				handlers = append(handlers, fmt.Sprintf("%s | %d | %d", ir, h[0], h[1]))
			}
			for _, c := range []struct {
				what string
				want []string
				sql  string
			}{
				{"busy and known ns per CPU", busy, `SELECT cpu, coalesce(sum(ns) FILTER (WHERE busy), 0), sum(ns) FROM cpu_utilization GROUP BY cpu`},
				{"ns per CPU and holder", held, `SELECT i.cpu, CASE WHEN o.kind = 'thread' AND o.native_id > 0 THEN 'tid ' || o.native_id ELSE o.name END, sum(i.dur)
					FROM cpu_intervals i JOIN objects o ON o.run_id = i.run_id AND o.object_id = i.holder_id WHERE NOT i.truncated GROUP BY ALL`},
				{"running ns per thread", running, `SELECT o.native_id::VARCHAR, sum(s.dur) FROM state_intervals s JOIN objects o USING (run_id, object_id)
					WHERE o.kind = 'thread' AND s.instance = 0 AND s.state = 'running' AND NOT s.truncated GROUP BY ALL`},
				{"handler intervals per interrupt", handlers, `SELECT o.name, count(*), sum(s.dur) FROM state_intervals s JOIN objects o USING (run_id, object_id)
					WHERE o.kind = 'interrupt' AND NOT s.truncated GROUP BY ALL`},
			} {
				sort.Strings(c.want)
				got := strings.Split(strings.TrimSuffix(dbtest.Query(t, db.SQL(), c.sql), "\n"), "\n")
				if len(got) == 1 && got[0] == "" {
					got = nil
				}
				sort.Strings(got)
				if g, w := strings.Join(got, "\n"), strings.Join(c.want, "\n"); g != w {
					t.Errorf("%s:\n%s", c.what, dbtest.Diff(w+"\n", g+"\n"))
				}
			}
			t.Logf("busy/known per CPU %v/%v; unknown ns per CPU %v; %d lost-events markers, %d contradictions", rc.Busy, rc.Known, rc.Unknown, rc.Lost, rc.Contradictions)
		})
	}
}
