package ftrace

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/schema"
	"golang.org/x/tools/txtar"
)

// FuzzIngest feeds arbitrary text to the ftrace reader, strict and with
// --skip-bad: it never panics; a strict read stops only with a FILE:LINE
// error saying what was expected; a lenient one never stops; every args
// value is JSON and every interval well formed; memory is released. The
// seeds (the hand-worked traces and edge cases) replay as a normal test.
func FuzzIngest(f *testing.F) {
	files, _ := filepath.Glob("testdata/hand/*.txtar")
	for _, path := range files {
		ar, err := txtar.ParseFile(path)
		if err != nil {
			f.Fatal(err)
		}
		for _, file := range ar.Files {
			if file.Name == "trace.txt" {
				f.Add(string(file.Data))
			}
		}
	}
	const sw = "  a-1 [000] d..2 1.000001: sched_switch: prev_comm=a prev_pid=1 prev_prio=1 prev_state=S ==> next_comm=b next_pid=2 next_prio=1\n"
	for _, s := range []string{
		"",
		"# tracer: nop\r\n  a-1 [000] 1.5: x: y\r",
		sw + sw + sw,
		"  a-1 [000] d..2 1.000001: sched_switch: prev_comm= prev_pid=1 prev_prio=1 prev_state=\xff ==> next_comm=\x00 next_pid=1 next_prio=1\n",
		"  a-1 [000] d..2 1.000001: sched_switch: a:1 [1] R ==> b:2 [1]\n  b-2 [000] 0.5: sched_switch: b:2 [x] D|K ==> :0\n",
		"  a-1 [000] 1.1: irq_handler_entry: irq=1 name=x\n" + strings.Repeat("  a-1 [000] 1.1: irq_handler_entry: irq=2 name=y\n", 100) + "  a-1 [000] 1.2: irq_handler_exit: irq=1 ret=handled\n",
		"  a-1 [000] 1.1: softirq_exit: vec=1 [action=TIMER]\n  a-1 [000] 1.1: softirq_entry: vec=-1 [action=\n",
		"  a-1 [000] 1.1: sys_enter: NR -1 (,,,)\n  a-1 [000] 1.1: sys_exit: NR -1 = -1\n  a-1 [000] 1.1: sys_x -> \n  a-1 [000] 1.1: sys_(x)\n",
		"  a-1 [000] 1.1: <stack trace>\n" + strings.Repeat(" => f\n", 1100) + " =>\n",
		"CPU:0 [LOST 1 EVENTS]\nCPU:1 [EVENTS DROPPED]\n##### CPU 7 buffer started ####\n  a-1 [65535] 1.1: sched_wakeup: comm=a pid=1\n",
		" 1.0 |   0)   a-1   |               |  f() {\n 1.0 |   0)   a-1   | ! 1000.000 us |  }\n 1.0 |   0)   |  /* x */\n",
		"  a-1 (      1) [000] 1.1: sched_process_fork: comm=a pid=1 child_comm=b child_pid=1\n  a-1 (------) [000] 1.1: sched_process_free: comm=a pid=1\n  a-1 [000] 1.1: sched_process_free: comm=a pid=1\n",
		"  a-1 [000] 9223372036.854775807: x: y\n  a-1 [000] 9223372036.854775808: x: y\n",
		"  a b -[1] [000] 1.1: x: k=v=w [a=b] [c] k=v\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		lines := int64(strings.Count(text, "\n") + strings.Count(text, "\r") + 1)
		for _, skip := range []bool{false, true} {
			mem := memory.NewCheckedAllocator(dbtest.RecyclingAllocator)
			sink := &dbtest.Checked{}
			w := schema.NewRunWriter(schema.RunInfo{RunID: 1, Source: "fuzz.txt", SkipBad: skip}, sink, mem)
			err := Ingester{}.Ingest(context.Background(), ingest.NewSource("fuzz.txt", strings.NewReader(text), int64(len(text))), w)
			dbtest.EndFuzzRun(t, w, sink, mem, err, skip, lines, lines)
		}
	})
}
