package qnx_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/dbtest"
)

// TestSyncWaits: a hand-written traceprinter trace (1 cycle = 1 ns) with
// a thread that blocks on a mutex and gets it (from its KER_CALL to the
// THREADY that wakes it), one whose SYNC_SEM_WAIT returns an error after
// it was woken (gave up), one whose SYNC_SEM_WAIT does not block (no
// wait), one destroyed while it waits in SYNC_CONDVAR_WAIT (gave up at
// THDESTROY), one still blocked at the end (cut), and a call without
// sync_p (an info diagnostic). Objects are per process; no holds.
func TestSyncWaits(t *testing.T) {
	trace := `TRACEPRINTER version 1.02
 -- HEADER FILE INFORMATION -- 
  TRACE_CYCLES_PER_SEC:: 1000000000
         TRACE_CPU_NUM:: 2
 -- KERNEL EVENTS -- 
t:0x00000000 CPU:00 CONTROL :TIME msb:0x00000000 lsb(offset):0x00000000
t:0x00000064 CPU:00 THREAD  :THRUNNING     pid:7 tid:1 
t:0x00000064 CPU:01 THREAD  :THRUNNING     pid:7 tid:2 
t:0x000000c8 CPU:00 KER_CALL:SYNC_MUTEX_LOCK/80 sync_p:8050310 owner:2
t:0x000000d2 CPU:00 THREAD  :THMUTEX       pid:7 tid:1 
t:0x000000d2 CPU:00 THREAD  :THRUNNING     pid:7 tid:3 
t:0x0000012c CPU:00 KER_CALL:SYNC_SEM_WAIT/85 sync_p:8050320 count:0
t:0x00000136 CPU:00 THREAD  :THSEM         pid:7 tid:3 
t:0x00000136 CPU:00 THREAD  :THRUNNING     pid:8 tid:1 
t:0x00000190 CPU:01 KER_CALL:SYNC_MUTEX_UNLOCK/81 sync_p:8050310 owner:2
t:0x0000019a CPU:01 THREAD  :THREADY       pid:7 tid:1 
t:0x000001a4 CPU:01 KER_EXIT:SYNC_MUTEX_UNLOCK/81 ret_val:0 empty:0x00000000
t:0x000001f4 CPU:00 KER_CALL:SYNC_SEM_WAIT/85 sync_p:8050320 count:1
t:0x000001fe CPU:00 KER_EXIT:SYNC_SEM_WAIT/85 ret_val:0 empty:0x00000000
t:0x00000258 CPU:00 THREAD  :THREADY       pid:7 tid:3 
t:0x00000262 CPU:00 KER_CALL:SYNC_CONDVAR_WAIT/82 sync_p:8050330 mutex_p:8050310
t:0x0000026c CPU:00 THREAD  :THCONDVAR     pid:8 tid:1 
t:0x0000026c CPU:00 THREAD  :THRUNNING     pid:7 tid:1 
t:0x00000276 CPU:00 KER_EXIT:SYNC_MUTEX_LOCK/80 ret_val:0 empty:0x00000000
t:0x00000280 CPU:00 THREAD  :THREADY       pid:7 tid:1 
t:0x00000280 CPU:00 THREAD  :THRUNNING     pid:7 tid:3 
t:0x0000028a CPU:00 KER_EXIT:SYNC_SEM_WAIT/85 ret_val:0x00000004 empty:0x00000000
t:0x000002bc CPU:00 THREAD  :THDESTROY     pid:8 tid:1 
t:0x000002c6 CPU:00 KER_CALL:SYNC_MUTEX_LOCK/80 count:0
t:0x000002d0 CPU:01 KER_CALL:SYNC_SEM_WAIT/85 sync_p:8050320 count:0
t:0x000002da CPU:01 THREAD  :THSEM         pid:7 tid:2 
t:0x00000320 CPU:01 THREAD  :THRUNNING     pid:1 tid:2 
`
	path := filepath.Join(t.TempDir(), "sync.txt")
	if err := os.WriteFile(path, []byte(trace), 0o644); err != nil {
		t.Fatal(err)
	}
	db := dbtest.Open(t)
	dbtest.Ingest(t, db, path, ingest.Options{Format: "qnx"})
	got := dbtest.Query(t, db.SQL(), `SELECT r.name, r.kind, r.pid, i.resource_kind, i.relation, a.pid || '/' || a.native_id, i.start_ts, i.end_ts, i.dur, i.ended, i.truncated
		FROM resource_intervals i JOIN objects r ON r.run_id = i.run_id AND r.object_id = i.resource_id
		JOIN objects a ON a.run_id = i.run_id AND a.object_id = i.actor_id ORDER BY i.start_ts`)
	want := `mutex 8050310 pid 7 | mutex | 7 | mutex | wait | 7/1 | 200 | 410 | 210 | assigned | false
semaphore 8050320 pid 7 | semaphore | 7 | semaphore | wait | 7/3 | 300 | 600 | 300 | gave_up | false
condvar 8050330 pid 8 | condvar | 8 | condvar | wait | 8/1 | 610 | 700 | 90 | gave_up | false
semaphore 8050320 pid 7 | semaphore | 7 | semaphore | wait | 7/2 | 720 | 800 | 80 | NULL | true
`
	if got != want {
		t.Errorf("waits:\n got %s\nwant %s", got, want)
	}
	if got, want := dbtest.Query(t, db.SQL(), `SELECT severity, message FROM diagnostics WHERE message LIKE '%sync_p%'`),
		"info | SYNC_MUTEX_LOCK without sync_p: the object it waits for is not known, no wait is followed\n"; got != want {
		t.Errorf("diagnostics: %s, want %s", got, want)
	}
}
