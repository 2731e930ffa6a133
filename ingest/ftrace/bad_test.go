package ftrace_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	_ "github.com/traceduck/traceduck/ingest/all"
	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/schema"
)

const goodHead = "# tracer: nop\n#\n          <idle>-0     [000] d..2   100.000100: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=a next_pid=10 next_prio=120\n"

// badLines: a line 4 that cannot be read, and the exact message it gives.
var badLines = []struct{ line, want string }{
	{"hello world", `bad.txt:4: expected an event line "TASK-PID [CPU] TIMESTAMP: EVENT: fields", found "hello world"`},
	{"   a-10 [000] ....   12: sched_stat_runtime: x=1", `bad.txt:4: timestamp: expected SECONDS.FRACTION (1 to 9 decimals), found "12"`},
	{"   a-10 [000] ....   1.5 sched_stat_runtime: x=1", `bad.txt:4: timestamp: expected SECONDS.FRACTION followed by a colon, found "1.5"`},
	{"   a-10 [000] ....   100.1234567890: sched_stat_runtime: x=1", `bad.txt:4: timestamp: expected SECONDS.FRACTION (1 to 9 decimals), found "100.1234567890"`},
	{"   a-10 [000] ..../..   100.2: x: y", `bad.txt:4: expected the flags or the timestamp after the CPU column, found "..../.."`},
	{"   a-10 [000] ....   100.2: this is not one", `bad.txt:4: expected "EVENT: fields", a function, a system call or <stack trace> after the timestamp, found "this is not one"`},
	{"   a-10 [000] d..2   100.2: sched_switch: prev_comm=a", `bad.txt:4: sched_switch: expected "prev_comm=C prev_pid=N ... prev_state=S ==> next_comm=C next_pid=N ..." or "comm:pid [prio] S ==> comm:pid [prio]", found "prev_comm=a"`},
	{"   a-10 [000] d..2   100.2: sched_switch: prev_comm=a prev_pid=x prev_prio=1 prev_state=S ==> next_comm=b next_pid=2 next_prio=1", `bad.txt:4: sched_switch: prev_pid: expected a thread id, found "x"`},
	{"   a-10 [000] d..2   100.2: sched_switch: prev_comm=a prev_pid=10 prev_prio=1 ==> next_comm=b next_pid=2 next_prio=1", `bad.txt:4: sched_switch: prev_state: expected a state (R, S, D, ...), found ""`},
	{"   a-10 [000] d..2   100.2: sched_wakeup: comm=b prio=1", `bad.txt:4: sched_wakeup: expected "comm=C pid=N ..." or "comm:pid [prio] ...", found "comm=b prio=1"`},
	{"   a-10 [000] d..2   100.2: sched_process_fork: comm=a pid=10 child_comm=b", `bad.txt:4: sched_process_fork: child_pid: expected a thread id, found ""`},
	{"   a-10 [000] d.h1   100.2: irq_handler_entry: irq=x name=eth0", `bad.txt:4: irq_handler_entry: irq: expected a number, found "x"`},
	{"   a-10 [000] ....   100.2: sys_enter: NR x (1, 2)", `bad.txt:4: sys_enter: expected "NR n (args)", found "NR x (1, 2)"`},
	{"   a-10 [000] ....   100.2: sys_exit: 12", `bad.txt:4: sys_exit: expected "NR n = ret", found "12"`},
	{" 0)   0.541 us    |  getname();", `bad.txt:4: expected a function_graph line with an absolute timestamp "SECONDS.FRACTION | CPU)" (options/funcgraph-abstime), found "0)   0.541 us    |  getname();"`},
	{" 100.3 |   0)   bash-1   |   0.5 ms   |  getname();", `bad.txt:4: expected a duration "N.NNN us" or nothing before "|", found "0.5 ms"`},
	{" 100.3 |   0)   bash-1   |   0.5 us   |  getname", `bad.txt:4: expected "func() {", "func();", "}" or "/* comment */" after the duration column, found "getname"`},
	{"CPU:999999 [LOST 1 EVENTS]", `bad.txt:4: expected a CPU number under 65536 in the lost-events marker, found 999999`},
}

// TestBadLines: a line that cannot be read stops the ingest with
// FILE:LINE: what was expected, what was found; the database is as it
// was.
func TestBadLines(t *testing.T) {
	db := dbtest.Open(t)
	dir := t.TempDir()
	good := filepath.Join(dir, "good.txt")
	os.WriteFile(good, []byte(goodHead), 0o644)
	dbtest.Ingest(t, db, good, ingest.Options{})
	before := dbtest.Dump(t, db.SQL())
	for _, tc := range badLines {
		t.Run(tc.want, func(t *testing.T) {
			bad := filepath.Join(dir, "bad.txt")
			os.WriteFile(bad, []byte(goodHead+tc.line+"\n          <idle>-0     [001] d..2   100.000900: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=b next_pid=11 next_prio=120\n"), 0o644)
			_, err := ingest.Path(context.Background(), db, bad, ingest.Options{Format: "ftrace", Force: true})
			var ie *schema.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("got %v, want an InputError", err)
			}
			if got := filepath.Base(ie.File) + err.Error()[len(ie.File):]; got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
			if after := dbtest.Dump(t, db.SQL()); after != before {
				t.Errorf("database changed by a failed ingest")
			}
		})
	}
}

// TestSkipBad: with --skip-bad each bad line is one diagnostics row with
// the same message, and the lines around it are read.
func TestSkipBad(t *testing.T) {
	db := dbtest.Open(t)
	var text strings.Builder
	text.WriteString(goodHead)
	for _, tc := range badLines {
		text.WriteString(tc.line + "\n")
	}
	text.WriteString("               a-10    [000] d..2   100.000900: sched_switch: prev_comm=a prev_pid=10 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120\n")
	path := filepath.Join(t.TempDir(), "skip.txt")
	os.WriteFile(path, []byte(text.String()), 0o644)
	res := dbtest.Ingest(t, db, path, ingest.Options{SkipBad: true})
	if res.Events != 2 {
		t.Errorf("events %d, want 2", res.Events)
	}
	var want strings.Builder
	for i, tc := range badLines {
		_, msg, _ := strings.Cut(tc.want, ": ")
		want.WriteString(strconv.Itoa(4+i) + " | " + msg + "\n")
	}
	if got := dbtest.Query(t, db.SQL(), "SELECT src_line, message FROM diagnostics WHERE severity = 'error' ORDER BY src_line"); got != want.String() {
		t.Errorf("diagnostics:\n%s\nwant\n%s", got, want.String())
	}
	if got := dbtest.Query(t, db.SQL(), "SELECT state, end_ts - start_ts FROM state_intervals s JOIN objects o USING (run_id, object_id) WHERE o.name = 'a-10' ORDER BY start_ts"); got != "running | 800000\nsleeping | 0\n" {
		t.Errorf("a-10's intervals across the bad lines:\n%s", got)
	}
}

// TestLineTooLong: a line over the bound stops the ingest with its number.
func TestLineTooLong(t *testing.T) {
	db := dbtest.Open(t)
	path := filepath.Join(t.TempDir(), "long.txt")
	os.WriteFile(path, append([]byte(goodHead), strings.Repeat("x", ingest.MaxLineBytes+10)...), 0o644)
	_, err := ingest.Path(context.Background(), db, path, ingest.Options{})
	if err == nil || err.Error() != path+":4: expected a trace line, found a line longer than 1048576 bytes" {
		t.Fatalf("got %v", err)
	}
}
