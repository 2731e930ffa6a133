package dbtest

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/queries"
	"github.com/traceduck/traceduck/schema"
)

// The format packages' benchmarks share these two loops. Besides ns/op
// and MB/s they report events/s and peakRSS_MB, the process's peak
// resident set (VmHWM) during the benchmark. VmHWM is process-wide: it is
// reset at the start of each benchmark where the kernel allows it
// (/proc/self/clear_refs), but it still counts everything the test binary
// holds, so run one benchmark at a time with a small fixed count for a
// clean figure (go test -run XXX -bench 'Ingest$' -benchtime 3x -count 1).

// BenchIngest times the whole path: ingest.Path of the file at path into a
// fresh DuckDB file with the views installed, committed; opening and
// closing the database are outside the timer. Each iteration must ingest
// events events.
func BenchIngest(b *testing.B, path string, events int64, opt ingest.Options) {
	b.Helper()
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	dir := b.TempDir()
	resetPeakRSS()
	b.SetBytes(st.Size())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		db, err := schema.Open(ctx, filepath.Join(dir, "bench"+strconv.Itoa(i)+".duckdb"))
		if err != nil {
			b.Fatal(err)
		}
		if err := queries.Install(ctx, db.SQL()); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		res, err := ingest.Path(ctx, db, path, opt)
		if err != nil {
			b.Fatal(err)
		}
		if res.Events != events {
			b.Fatalf("ingested %d events, want %d", res.Events, events)
		}
		b.StopTimer()
		db.Close()
		os.Remove(db.Path)
		os.Remove(db.Path + ".wal")
		b.StartTimer()
	}
	b.StopTimer()
	ReportRates(b, events)
}

// BenchParse times an ingester reading data into a RunWriter whose sink
// drops the batches: reading, parsing, state machines and building the
// Arrow batches, without DuckDB (BenchIngest minus this is the cost of
// loading into DuckDB). Each iteration must write events events.
func BenchParse(b *testing.B, ing ingest.Ingester, data []byte, events int64) {
	b.Helper()
	ctx := context.Background()
	format := ing.Format().Name
	resetPeakRSS()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w := schema.NewRunWriter(schema.RunInfo{RunID: 1, Name: "bench", Source: "bench", Format: format}, Discard{}, memory.DefaultAllocator)
		if err := ing.Ingest(ctx, ingest.NewSource("bench", bytes.NewReader(data), int64(len(data))), w); err != nil {
			b.Fatal(err)
		}
		if err := w.Finish(time.Now()); err != nil {
			b.Fatal(err)
		}
		if w.Events() != events {
			b.Fatalf("parsed %d events, want %d", w.Events(), events)
		}
	}
	b.StopTimer()
	ReportRates(b, events)
}

// ReportRates reports events/s over the benchmark's elapsed time and the
// peak resident set.
func ReportRates(b *testing.B, events int64) {
	b.Helper()
	if s := b.Elapsed().Seconds(); s > 0 {
		b.ReportMetric(float64(events)*float64(b.N)/s, "events/s")
	}
	if kb, ok := procStatusKB("VmHWM"); ok {
		b.ReportMetric(float64(kb)/1024, "peakRSS_MB")
	}
}

// resetPeakRSS resets the process's VmHWM to its current RSS (Linux 4.0
// and later); where that is not possible the figure stays the peak since
// the process started.
func resetPeakRSS() {
	os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

// procStatusKB reads a "Name: N kB" field of /proc/self/status.
func procStatusKB(name string) (int64, bool) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if rest, ok := bytes.CutPrefix(sc.Bytes(), []byte(name+":")); ok {
			rest = bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimSpace(rest), []byte("kB")))
			v, err := strconv.ParseInt(string(rest), 10, 64)
			return v, err == nil
		}
	}
	return 0, false
}

// BenchTrace writes a generated trace to a file named name in a temporary
// directory, outside the benchmark's timer, and returns its path and the
// number of events the generator says it wrote.
func BenchTrace(b *testing.B, name string, generate func(io.Writer) (events int, err error)) (path string, events int64) {
	b.Helper()
	path = filepath.Join(b.TempDir(), name)
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	n, err := generate(bw)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		b.Fatal(err)
	}
	return path, int64(n)
}
