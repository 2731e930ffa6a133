package qnx_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/dbtest"
)

// TestThreadPriorities: thread state events in wide mode carry the
// priority the thread runs at (traceprinter's priority: field): each
// change is a new span of priority_intervals, with no base (QNX's events
// do not tell it); fast-mode events, without the field, change nothing.
// Thread 7/1 runs at 10, is raised to 21 (a client of priority 21 sent it
// a message, or it holds a mutex a thread of 21 waits for), and falls
// back to 10; thread 7/2 is seen at 15 only.
func TestThreadPriorities(t *testing.T) {
	trace := `TRACEPRINTER version 1.02
 -- HEADER FILE INFORMATION -- 
  TRACE_CYCLES_PER_SEC:: 1000000000
         TRACE_CPU_NUM:: 1
 -- KERNEL EVENTS -- 
t:0x00000000 CPU:00 CONTROL :TIME msb:0x00000000 lsb(offset):0x00000000
t:0x00000064 CPU:00 THREAD  :THRUNNING     pid:7 tid:1 priority:10 policy:2
t:0x000000c8 CPU:00 THREAD  :THREADY       pid:7 tid:1 priority:10 policy:2
t:0x000000c8 CPU:00 THREAD  :THRUNNING     pid:7 tid:2 priority:15 policy:2
t:0x0000012c CPU:00 THREAD  :THREADY       pid:7 tid:1 priority:21 policy:2
t:0x0000012c CPU:00 THREAD  :THREADY       pid:7 tid:2 priority:15 policy:2
t:0x0000012c CPU:00 THREAD  :THRUNNING     pid:7 tid:1 priority:21 policy:2
t:0x00000190 CPU:00 THREAD  :THRUNNING     pid:7 tid:1
t:0x000001f4 CPU:00 THREAD  :THREPLY       pid:7 tid:1 priority:10 policy:2
t:0x000001f4 CPU:00 THREAD  :THRUNNING     pid:7 tid:2 priority:15 policy:2
t:0x00000258 CPU:00 THREAD  :THREADY       pid:7 tid:2 priority:15 policy:2
`
	path := filepath.Join(t.TempDir(), "prio.txt")
	if err := os.WriteFile(path, []byte(trace), 0o644); err != nil {
		t.Fatal(err)
	}
	db := dbtest.Open(t)
	dbtest.Ingest(t, db, path, ingest.Options{Format: "qnx"})
	got := dbtest.Query(t, db.SQL(), `SELECT o.pid || '/' || o.native_id, p.base, p.effective, p.urgency, p.start_ts, p.end_ts, p.truncated, r.meta->>'priority_order'
		FROM priority_intervals p JOIN objects o USING (run_id, object_id) JOIN runs r USING (run_id)
		ORDER BY o.native_id, p.start_ts`)
	want := `7/1 | NULL | 10 | 10 | 100 | 300 | false | higher_first
7/1 | NULL | 21 | 21 | 300 | 500 | false | higher_first
7/1 | NULL | 10 | 10 | 500 | 600 | true | higher_first
7/2 | NULL | 15 | 15 | 200 | 600 | true | higher_first
`
	if got != want {
		t.Errorf("priority_intervals:\n got %s\nwant %s", got, want)
	}
	if got := dbtest.Query(t, db.SQL(), "SELECT count(*) FROM priority_inversions"); got != "0\n" {
		t.Errorf("priority_inversions: %s (QNX has no holds)", got)
	}
}
