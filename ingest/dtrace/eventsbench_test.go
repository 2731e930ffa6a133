package dtrace

import (
	"bytes"
	"context"
	"strconv"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/internal/tracegen"
	"github.com/traceduck/traceduck/schema"
)

// BenchmarkEvents reads a million generated event lines (8 CPUs, 40
// threads, DTrace-style switches) through the event reader into a run
// writer whose sink drops the batches: parsing, objects, the state
// machine and the Arrow batches, without DuckDB. It reports events/s and
// allocs/line (allocations of the whole read, batches included, per
// line):
//
//	go test -run XXX -bench Events -benchmem ./ingest/dtrace/
func BenchmarkEvents(b *testing.B) {
	var buf bytes.Buffer
	truth, err := tracegen.WriteDTrace(&buf, tracegen.DTraceConfig{Lines: 1_000_000, CPUs: 8, Processes: 10, Threads: 4, Seed: 1, Gap: true})
	if err != nil {
		b.Fatal(err)
	}
	text := buf.Bytes()
	ctx := context.Background()
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w := schema.NewRunWriter(schema.RunInfo{RunID: 1, Source: "bench.txt"}, dbtest.Discard{}, memory.DefaultAllocator)
		r := newEventReader(w, "bench.txt")
		err := ingest.NewLineReader(bytes.NewReader(text)).Each(ctx, "bench.txt", "DTrace", func(line []byte, n int64) error {
			_, err := r.Line(n, line)
			return err
		})
		if err == nil {
			err = r.End()
		}
		if err != nil {
			b.Fatal(err)
		}
		if w.Events() != int64(truth.Lines) {
			b.Fatalf("%d events, %d lines", w.Events(), truth.Lines)
		}
		w.Abort()
	}
	b.StopTimer()
	if s := b.Elapsed().Seconds(); s > 0 {
		b.ReportMetric(float64(truth.Lines)*float64(b.N)/s, "events/s")
	}
}

// TestEventLineAllocs: once its objects and names exist, reading an
// event line allocates nothing (the writer's batches, filled in place,
// are not counted: the sink here is never reached within the lines).
func TestEventLineAllocs(t *testing.T) {
	w := schema.NewRunWriter(schema.RunInfo{RunID: 1, Source: "a.txt"}, dbtest.Discard{}, memory.DefaultAllocator)
	defer w.Abort()
	r := newEventReader(w, "a.txt")
	if _, err := r.Line(1, []byte("#traceduck-events 1 timestamp cpu pid tid probe")); err != nil {
		t.Fatal(err)
	}
	// Event lines without their timestamp, which each pass makes larger.
	lines := []string{
		` 0 7 1 sched:unix:resume:on-cpu idle=0 execname="app 1"`,
		` 0 7 1 syscall::read:entry arg0=3 execname="app 1"`,
		` 0 7 1 sched:unix:swtch:off-cpu idle=0 state=sleeping execname="app 1"`,
		` 0 0 1000 sched:unix:resume:on-cpu idle=1 execname="sched"`,
		` 0 0 500 sdt:unix:av_dispatch_autovect:interrupt-start irq=e1000g0`,
		` 0 0 500 sdt:unix:av_dispatch_autovect:interrupt-complete irq=e1000g0`,
		` 0 0 1000 sched:unix:swtch:off-cpu idle=1 state=runnable execname="sched"`,
		` 0 7 1 sched:unix:resume:on-cpu idle=0 execname="app 1"`,
		` 0 7 1 syscall::read:return ret=512 errno=0 execname="app 1"`,
		` 0 7 1 pid7:libc.so.1:malloc:entry execname="app 1"`,
		` 0 7 1 pid7:libc.so.1:malloc:return ret=0 execname="app 1"`,
		` 0 7 1 sched:unix:swtch:off-cpu idle=0 state=runnable execname="app 1"`,
	}
	n, ts := int64(1), int64(100)
	buf := make([]byte, 0, 256)
	read := func() {
		for _, l := range lines {
			n++
			ts += 10
			buf = append(strconv.AppendInt(buf[:0], ts, 10), l...)
			if ok, err := r.Line(n, buf); !ok || err != nil {
				t.Fatal(ok, err)
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
