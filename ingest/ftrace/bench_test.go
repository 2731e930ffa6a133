package ftrace

import (
	"bytes"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/internal/tracegen"
	"github.com/traceduck/traceduck/schema"
)

// BenchmarkIngest reads a million generated event lines (8 CPUs, 40
// threads, the TGID column, sched_waking) through the ftrace reader into
// a run writer whose sink drops the batches: parsing, objects, the state
// machines and the Arrow batches, without DuckDB. It reports events/s:
//
//	go test -run XXX -bench Ingest -benchmem ./ingest/ftrace/
func BenchmarkIngest(b *testing.B) {
	var buf bytes.Buffer
	truth, err := tracegen.WriteFtrace(&buf, tracegen.FtraceConfig{Lines: 1_000_000, CPUs: 8, Processes: 10, Threads: 4, Seed: 1, TGID: true, Waking: true})
	if err != nil {
		b.Fatal(err)
	}
	dbtest.BenchParse(b, Ingester{}, buf.Bytes(), int64(truth.Lines))
}

// TestLineAllocs: once its objects and names exist, reading an event
// line allocates nothing (the writer's batches, filled in place, are not
// counted: the sink is never reached within these lines).
func TestLineAllocs(t *testing.T) {
	w := schema.NewRunWriter(schema.RunInfo{RunID: 1, Source: "a.txt"}, dbtest.Discard{}, memory.DefaultAllocator)
	defer w.Abort()
	r := newReader(w)
	// the lines after their timestamp column, which each pass makes larger
	lines := []struct{ head, tail string }{
		{"          <idle>-0     (-------) [000] d..2 ", ": sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=Web Content next_pid=1000 next_prio=120"},
		{"     Web Content-1000  (   1000) [000] .... ", ": sys_enter: NR 63 (3, 7ffd0000, 100, 0, 0, 0)"},
		{"     Web Content-1000  (   1000) [000] d..3 ", ": sched_waking: comm=audiod pid=1200 prio=120 target_cpu=000"},
		{"     Web Content-1000  (   1000) [000] d..3 ", ": sched_wakeup: comm=audiod pid=1200 prio=120 target_cpu=000"},
		{"     Web Content-1000  (   1000) [000] d.h1 ", ": irq_handler_entry: irq=27 name=arch_timer"},
		{"     Web Content-1000  (   1000) [000] d.h1 ", ": irq_handler_exit: irq=27 ret=handled"},
		{"     Web Content-1000  (   1000) [000] ..s1 ", ": softirq_entry: vec=1 [action=TIMER]"},
		{"     Web Content-1000  (   1000) [000] ..s1 ", ": softirq_exit: vec=1 [action=TIMER]"},
		{"     Web Content-1000  (   1000) [000] .... ", ": sys_exit: NR 63 = 100"},
		{"     Web Content-1000  (   1000) [000] d..3 ", ": sched_stat_runtime: comm=Web Content pid=1000 runtime=87535 [ns] vruntime=4421000020 [ns]"},
		{"     Web Content-1000  (   1000) [000] d..2 ", ": sched_switch: prev_comm=Web Content prev_pid=1000 prev_prio=120 prev_state=S ==> next_comm=audiod next_pid=1200 next_prio=120"},
		{"          audiod-1200  (   1200) [000] d..3 ", ": sched_waking: comm=Web Content pid=1000 prio=120 target_cpu=000"},
		{"          audiod-1200  (   1200) [000] d..2 ", ": sched_switch: prev_comm=audiod prev_pid=1200 prev_prio=120 prev_state=R+ ==> next_comm=Web Content next_pid=1000 next_prio=120"},
		{"     Web Content-1000  (   1000) [000] d..2 ", ": sched_switch: prev_comm=Web Content prev_pid=1000 prev_prio=120 prev_state=D ==> next_comm=audiod next_pid=1200 next_prio=120"},
		{"          audiod-1200  (   1200) [000] d..3 ", ": sched_wakeup: comm=Web Content pid=1000 prio=120 target_cpu=000"},
		{"          audiod-1200  (   1200) [000] d..2 ", ": sched_switch: prev_comm=audiod prev_pid=1200 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120"},
		{"          <idle>-0     (-------) [000] d..2 ", ": sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=Web Content next_pid=1000 next_prio=120"},
		{"          audiod-1200  (   1200) [000] d..3 ", ": sched_waking: comm=audiod pid=1200 prio=120 target_cpu=000"},
	}
	n, us := int64(0), int64(100_000_000)
	buf := make([]byte, 0, 256)
	read := func() {
		for _, l := range lines {
			n++
			us += 10
			buf = append(buf[:0], l.head...)
			buf = append(buf, []byte("100.")...)
			buf = appendSixDigits(buf, us%1_000_000)
			buf = append(buf, l.tail...)
			if err := r.line(buf, n); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Objects, names and levels allocate at first sight; the writer's
	// builders grow by doubling until a batch is full (nothing is reserved
	// before the first one): a thousand passes leave them room for the
	// passes measured.
	for range 1000 {
		read()
	}
	if a := testing.AllocsPerRun(100, read); a > 0 {
		t.Errorf("%.1f allocations per %d lines", a, len(lines))
	}
}

func appendSixDigits(b []byte, v int64) []byte {
	var d [6]byte
	for i := 5; i >= 0; i-- {
		d[i] = byte('0' + v%10)
		v /= 10
	}
	return append(b, d[:]...)
}
