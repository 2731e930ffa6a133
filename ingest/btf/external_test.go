package btf_test

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

const externalDir = "../../../shared/testdata-external/btf"

// TestConformanceBTF ingests every real BTF trace and compares the
// database with the trace's recount from its raw lines (recount.ReadBTF): events per action,
// running time per task, what held each core and for how long (the idle
// task of FreeRTOS holds its core, which is not busy), the waits for a
// core, and the instances' response times.
func TestConformanceBTF(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(externalDir, "*.btf"))
	if len(files) == 0 {
		t.Skip("no ../shared/testdata-external/btf beside the repository")
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			raw, err := recount.ReadBTF(path)
			if err != nil {
				t.Fatal(err)
			}
			db := dbtest.Open(t)
			res := dbtest.Ingest(t, db, path, ingest.Options{})
			if res.Format != "btf" {
				t.Fatalf("detected as %s", res.Format)
			}
			q := db.SQL()
			if res.Events != raw.Events {
				t.Errorf("events: ingested %d, raw lines %d", res.Events, raw.Events)
			}
			check := func(what, query string, want []string) {
				t.Helper()
				sort.Strings(want)
				if got := dbtest.Query(t, q, query); got != strings.Join(want, "") {
					t.Errorf("%s:\n got %s\nwant %s", what, got, strings.Join(want, ""))
				}
			}
			var want []string
			for k, v := range raw.Actions {
				want = append(want, fmt.Sprintf("%s | %d\n", k, v))
			}
			check("event counts", "SELECT class || ' ' || event, count FROM event_counts ORDER BY 1", want)

			want = nil
			for task, ns := range raw.Running {
				want = append(want, fmt.Sprintf("%s | %d\n", task, ns))
			}
			if len(want) < 2 {
				t.Fatalf("fewer than two tasks ran: %v", want)
			}
			check("running time per task", "SELECT object, total_ns FROM state_summary WHERE kind IN ('task', 'isr') AND state = 'running' ORDER BY object", want)

			want = nil
			for c, holders := range raw.Held {
				for h, ns := range holders {
					busy := h != "idle" && !recount.BTFIdle(h)
					want = append(want, fmt.Sprintf("%s | %s | %t | %d\n", c, h, busy, ns))
				}
			}
			check("time per core and holder (cpu_utilization)", "SELECT cpu, holder, busy, ns FROM cpu_utilization ORDER BY cpu, holder", want)

			want = nil
			for c, ns := range raw.Busy {
				want = append(want, fmt.Sprintf("%s | %d\n", c, ns))
			}
			check("busy time per core (cpu_intervals)", "SELECT cpu, sum(dur) FROM cpu_intervals WHERE busy AND NOT truncated GROUP BY cpu ORDER BY cpu", want)
			if len(raw.CoreSaysBusy) > 0 {
				// TA Simulator's core actions, which the ingester keeps
				// as events only, tell the same busy time as the process
				// transitions it follows (the core is busy while its
				// process polls).
				want = nil
				for c, ns := range raw.CoreSaysBusy {
					want = append(want, fmt.Sprintf("%s | %d\n", c, ns))
				}
				check("busy time per core by the core's own actions (cpu_intervals)", "SELECT cpu, sum(dur) FROM cpu_intervals WHERE busy AND NOT truncated GROUP BY cpu ORDER BY cpu", want)
			}

			want = nil
			for task, n := range raw.Latency {
				want = append(want, fmt.Sprintf("%s | %d | %d\n", task, n.N, n.NS))
			}
			check("waits for a core per process (sched_latency)", "SELECT object, count(*), sum(latency) FROM sched_latency WHERE NOT truncated GROUP BY object ORDER BY object", want)

			want = nil
			for task, n := range raw.Response {
				want = append(want, fmt.Sprintf("%s | %d | %d\n", task, n.N, n.NS))
			}
			check("complete instances per process (task_instances)", "SELECT object, count(*), sum(response) FROM task_instances WHERE NOT truncated GROUP BY object ORDER BY object", want)

			// Holds and waits of the semaphores (resource_holds,
			// resource_waits), complete ones per semaphore and process,
			// and how many were cut by the start or end of the trace.
			if strings.Contains(path, "tracecompass") && (len(raw.Holds) == 0 || len(raw.Waits) == 0) {
				t.Fatalf("the recount finds no semaphore holds or waits in the TA Simulator trace: %v %v", raw.Holds, raw.Waits)
			}
			want = nil
			for k, n := range raw.Holds {
				want = append(want, fmt.Sprintf("%s | %d | %d\n", k, n.N, n.NS))
			}
			check("complete holds per semaphore and process (resource_holds)", "SELECT resource || ' ' || holder, count(*), sum(dur) FROM resource_holds WHERE NOT truncated GROUP BY ALL ORDER BY 1", want)
			want = nil
			for k, n := range raw.Waits {
				want = append(want, fmt.Sprintf("%s | %d | %d\n", k, n.N, n.NS))
			}
			check("complete waits per semaphore and process (resource_waits)", "SELECT resource || ' ' || waiter, count(*), sum(dur) FROM resource_waits WHERE NOT truncated GROUP BY ALL ORDER BY 1", want)
			check("holds and waits cut by the start or end of the trace", "SELECT (SELECT count(*) FROM resource_holds WHERE truncated) || ' ' || (SELECT count(*) FROM resource_waits WHERE truncated)",
				[]string{fmt.Sprintf("%d %d\n", raw.OpenHolds, raw.OpenWaits)})
			t.Logf("semaphores: holds %v, waits %v, cut %d + %d", raw.Holds, raw.Waits, raw.OpenHolds, raw.OpenWaits)

			t.Logf("diagnostics:\n%s", dbtest.Query(t, q, "SELECT severity, count, src_line, message FROM diagnostics ORDER BY src_line"))
		})
	}
}
