package btf_test

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/ingest/btf"
	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/internal/tracegen"
	"github.com/traceduck/traceduck/queries"
	"github.com/traceduck/traceduck/schema"
)

// The benchmarks ingest a generated trace of a million events on two
// cores. Besides ns/op they report events/s, MB/s (of BTF text) and
// peakRSS_MB, the process's peak resident set (VmHWM) during the
// benchmark. VmHWM is process-wide: it is reset at the start of each
// benchmark where the kernel allows it (/proc/self/clear_refs), but it
// still counts everything the test binary holds, so run one benchmark at
// a time with a small fixed count for a clean figure:
//
//	go test -run XXX -bench 'Ingest$' -benchtime 3x -count 1 ./ingest/btf/
//	go test -run XXX -bench ParseOnly -benchtime 3x -count 1 ./ingest/btf/

const benchEvents = 1_000_000

// benchTrace writes the benchmark trace into a temporary directory, outside
// the timer, and returns its path, size and number of events.
func benchTrace(b *testing.B) (path string, size int64, events int) {
	b.Helper()
	path = filepath.Join(b.TempDir(), "bench.btf")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	truth, err := tracegen.WriteBTF(f, tracegen.Config{Events: benchEvents, Cores: 2, Tasks: 8, Seed: 1, TimeScale: "ns"})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		b.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	return path, st.Size(), truth.Lines
}

// BenchmarkIngest is the whole path: BTF file → parser → Arrow batches →
// a fresh DuckDB file, committed.
func BenchmarkIngest(b *testing.B) {
	path, size, events := benchTrace(b)
	ctx := context.Background()
	dir := b.TempDir()
	resetPeakRSS()
	b.SetBytes(size)
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
		res, err := ingest.Path(ctx, db, path, ingest.Options{Format: "btf"})
		if err != nil {
			b.Fatal(err)
		}
		if res.Events != int64(events) {
			b.Fatalf("ingested %d events, generated %d", res.Events, events)
		}
		b.StopTimer()
		db.Close()
		os.Remove(db.Path)
		os.Remove(db.Path + ".wal")
		b.StartTimer()
	}
	reportRates(b, events)
}

// BenchmarkParseOnly runs the BTF ingester into a RunWriter whose sink
// drops the batches: reading, parsing, state machines and building the
// Arrow batches, without DuckDB. BenchmarkIngest minus this is the cost of
// loading into DuckDB.
func BenchmarkParseOnly(b *testing.B) {
	path, size, events := benchTrace(b)
	ctx := context.Background()
	resetPeakRSS()
	b.SetBytes(size)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		src, err := ingest.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		w := schema.NewRunWriter(schema.RunInfo{RunID: 1, Name: "bench", Source: path, Format: "btf"}, dbtest.Discard{}, memory.DefaultAllocator)
		if err := (btf.Ingester{}).Ingest(ctx, src, w); err != nil {
			b.Fatal(err)
		}
		if err := w.Finish(time.Now()); err != nil {
			b.Fatal(err)
		}
		if w.Events() != int64(events) {
			b.Fatalf("parsed %d events, generated %d", w.Events(), events)
		}
		src.Close()
	}
	reportRates(b, events)
}

func reportRates(b *testing.B, events int) {
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
		line := sc.Bytes()
		if rest, ok := bytes.CutPrefix(line, []byte(name+":")); ok {
			rest = bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimSpace(rest), []byte("kB")))
			v, err := strconv.ParseInt(string(rest), 10, 64)
			return v, err == nil
		}
	}
	return 0, false
}
