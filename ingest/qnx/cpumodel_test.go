package qnx_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/dbtest"
)

// TestCPUModelQNX: how the machine tells the CPU model what holds QNX's
// CPUs (machine.go), on a listing written by hand (1 cycle = 1 ns): a
// thread leaving RUNNING keeps its CPU (its kernel call's context is
// still it), a THRUNNING of the same thread continues, THDESTROY leaves
// the CPU with none, interrupts nest over the thread and an INT_EXIT of
// the outer one ends the inner one (cut), an INT_HANDLER_ENTR of an
// interrupt not entered is an event only, an INT_ENTR of a vector being
// handled ends the earlier handling (cut); without TRACE_CPU_NUM,
// procnto's tids 1 and 2 are the idle threads of the two CPUs the events
// name.
func TestCPUModelQNX(t *testing.T) {
	const listing = `TRACEPRINTER version 1.02
 -- HEADER FILE INFORMATION -- 
  TRACE_CYCLES_PER_SEC:: 1000000000
 -- KERNEL EVENTS -- 
t:0x00000000 CPU:00 CONTROL :TIME msb:0x00000000 lsb(offset):0x00000000
t:0x00000010 CPU:00 THREAD  :THCREATE      pid:1 tid:1
t:0x00000010 CPU:00 THREAD  :THCREATE      pid:1 tid:2
t:0x00000010 CPU:00 THREAD  :THCREATE      pid:7 tid:1
t:0x00000020 CPU:00 THREAD  :THRUNNING     pid:7 tid:1
t:0x00000030 CPU:01 THREAD  :THRUNNING     pid:1 tid:2
t:0x00000040 CPU:00 THREAD  :THREADY       pid:7 tid:1
t:0x00000050 CPU:00 KER_CALL:MSG_SENDV/11 coid:0x00000003 msg:"" (0x00040116)
t:0x00000060 CPU:00 THREAD  :THRUNNING     pid:7 tid:1
t:0x00000070 CPU:00 INT_ENTR:0x00000004 (4) IP:0xf0084a1c
t:0x00000080 CPU:00 INT_ENTR:0x00000009 (9) IP:0xf0084a1c
t:0x00000090 CPU:00 INT_EXIT:0x00000004 (4) inkernel:0x00000f01
t:0x000000a0 CPU:00 INT_HANDLER_ENTR:0x00000009 (9) PID:1 IP:0x080b7334 AREA:0x0812a060
t:0x000000b0 CPU:00 INT_ENTR:0x0000000b (11) IP:0xf0084a1c
t:0x000000c0 CPU:00 INT_ENTR:0x0000000b (11) IP:0xf0084a1c
t:0x000000d0 CPU:00 INT_EXIT:0x0000000b (11) inkernel:0x00000f01
t:0x000000e0 CPU:00 THREAD  :THDESTROY     pid:7 tid:1
t:0x000000f0 CPU:00 THREAD  :THRUNNING     pid:1 tid:1
t:0x00000100 CPU:00 THREAD  :THREADY       pid:1 tid:1
`
	path := filepath.Join(t.TempDir(), "model.txt")
	if err := os.WriteFile(path, []byte(listing), 0o644); err != nil {
		t.Fatal(err)
	}
	db := dbtest.Open(t)
	res := dbtest.Ingest(t, db, path, ingest.Options{Format: "qnx"})
	q := func(sql string) string { return dbtest.Query(t, db.SQL(), sql, res.RunID) }
	check := func(what, got, want string) {
		t.Helper()
		if got != want {
			t.Errorf("%s:\n%s", what, dbtest.Diff(want, got))
		}
	}
	check("cpu intervals", q(`SELECT cpu, holder, start_ts, end_ts, busy, truncated FROM cpu_intervals WHERE run_id = ? ORDER BY cpu, start_ts, end_ts`), `cpu 0 | 7/1 | 32 | 112 | true | false
cpu 0 | irq 4 | 112 | 128 | true | false
cpu 0 | irq 9 | 128 | 144 | true | false
cpu 0 | 7/1 | 144 | 176 | true | false
cpu 0 | irq 11 | 176 | 192 | true | false
cpu 0 | 7/1 | 192 | 192 | true | false
cpu 0 | irq 11 | 192 | 208 | true | false
cpu 0 | 7/1 | 208 | 224 | true | false
cpu 0 | idle | 224 | 240 | false | false
cpu 0 | 1/1 | 240 | 256 | false | true
cpu 1 | 1/2 | 48 | 256 | false | true
`)
	check("interrupt intervals", q(`SELECT o.name, s.instance, s.state, s.start_ts, s.end_ts, s.truncated FROM state_intervals s JOIN objects o USING (run_id, object_id)
		WHERE s.run_id = ? AND o.kind = 'interrupt' ORDER BY s.start_ts, o.name`), `irq 4 | 0 | in_kernel | 112 | 144 | false
irq 9 | 0 | in_kernel | 128 | 144 | true
irq 11 | 0 | in_kernel | 176 | 192 | true
irq 11 | 0 | in_kernel | 192 | 208 | false
`)
	check("contexts", q(`SELECT e.ts, e.class, e.event, coalesce(c.name, '-'), coalesce(o.name, '-') FROM events e
		LEFT JOIN objects c ON c.run_id = e.run_id AND c.object_id = e.context_id
		LEFT JOIN objects o ON o.run_id = e.run_id AND o.object_id = e.object_id
		WHERE e.run_id = ? AND e.ts IN (64, 80, 96, 144, 160, 240) ORDER BY e.seq`), `64 | THREAD | THREADY | 7/1 | 7/1
80 | KER_CALL | MSG_SENDV | 7/1 | 7/1
96 | THREAD | THRUNNING | 7/1 | 7/1
144 | INT | INT_EXIT | irq 9 | irq 4
160 | INT | INT_HANDLER_ENTR | 7/1 | irq 9
240 | THREAD | THRUNNING | - | 1/1
`)
	check("idle threads", q(`SELECT name FROM objects WHERE run_id = ? AND json_extract_string(attrs, '$.idle') = 'true' ORDER BY name`), "1/1\n1/2\n")
	check("levels", q(`SELECT state, level, parent_state FROM state_levels WHERE run_id = ? AND kind = 'cpu' ORDER BY level, state`), `1/1 | 0 | idle
1/2 | 0 | idle
7/1 | 0 | 7
idle | 0 | idle
7 | 1 | threads
idle | 1 | idle
irq 11 | 1 | interrupts
irq 4 | 1 | interrupts
irq 9 | 1 | interrupts
idle | 2 | idle
interrupts | 2 | busy
threads | 2 | busy
`)
	check("diagnostics", q(`SELECT severity, message FROM diagnostics WHERE run_id = ? AND (message LIKE '%INT%' OR message LIKE '%irq%') ORDER BY message`), `warning | INT_ENTR of 0x0000000b on CPU 0 while it is being handled there: its INT_EXIT is missing, it ends here
info | INT_HANDLER_ENTR of 0x00000009 on CPU 0 where it was not entered (no INT_ENTR): kept as an event
warning | irq 4 on CPU 0 ends while 1 interrupt(s) entered after it have no INT_EXIT: they end with it
`)
}
