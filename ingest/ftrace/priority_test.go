package ftrace_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/dbtest"
)

// TestPriorities: the kernel priority the scheduler events print (a
// wakeup's prio, sched_switch's prev_prio and next_prio) is the thread's
// effective priority on the kernel's scale, smaller more urgent: worker
// 20 runs at 120, is boosted to 98 (an rt_mutex a real-time thread waits
// for, or a binder call) and falls back to 120; the idle task has none.
func TestPriorities(t *testing.T) {
	trace := `# tracer: nop
#
#           TASK-PID   CPU#  ||||    TIMESTAMP  FUNCTION
#              | |       |   ||||       |         |
          <idle>-0     [000] d..2   100.000100: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=worker next_pid=20 next_prio=120
          worker-20    [000] d..3   100.000200: sched_waking: comm=rt pid=21 prio=98 target_cpu=000
          worker-20    [000] d..2   100.000210: sched_switch: prev_comm=worker prev_pid=20 prev_prio=120 prev_state=R+ ==> next_comm=rt next_pid=21 next_prio=98
              rt-21    [000] d..2   100.000300: sched_switch: prev_comm=rt prev_pid=21 prev_prio=98 prev_state=D ==> next_comm=worker next_pid=20 next_prio=98
          worker-20    [000] d..3   100.000400: sched_waking: comm=rt pid=21 prio=98 target_cpu=000
          worker-20    [000] d..2   100.000410: sched_switch: prev_comm=worker prev_pid=20 prev_prio=120 prev_state=R+ ==> next_comm=rt next_pid=21 next_prio=98
              rt-21    [000] d..2   100.000500: sched_switch: prev_comm=rt prev_pid=21 prev_prio=98 prev_state=S ==> next_comm=worker next_pid=20 next_prio=120
`
	path := filepath.Join(t.TempDir(), "prio.txt")
	if err := os.WriteFile(path, []byte(trace), 0o644); err != nil {
		t.Fatal(err)
	}
	db := dbtest.Open(t)
	dbtest.Ingest(t, db, path, ingest.Options{Format: "ftrace"})
	got := dbtest.Query(t, db.SQL(), `SELECT o.native_id, p.base, p.effective, p.urgency, p.start_ts - 100000000000, p.end_ts - 100000000000, p.truncated, r.meta->>'priority_order'
		FROM priority_intervals p JOIN objects o USING (run_id, object_id) JOIN runs r USING (run_id) ORDER BY o.native_id, p.start_ts`)
	want := `20 | NULL | 120 | -120 | 100000 | 300000 | false | lower_first
20 | NULL | 98 | -98 | 300000 | 410000 | false | lower_first
20 | NULL | 120 | -120 | 410000 | 500000 | true | lower_first
21 | NULL | 98 | -98 | 200000 | 500000 | true | lower_first
`
	if got != want {
		t.Errorf("priority_intervals:\n got %s\nwant %s", got, want)
	}
}
