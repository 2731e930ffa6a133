package chrome_test

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/ingest/chrome"
	"github.com/traceduck/traceduck/internal/chromegen"
	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/queries"
	"github.com/traceduck/traceduck/schema"
)

// The benchmarks read a generated trace of the simulated browser (B/E,
// complete events in begin and end order, counters, async requests,
// flows, objects): 462,000 events, 45 MB. Besides ns/op they
// report events/s and MB/s (of JSON); run with -benchmem:
//
//	go test -run XXX -bench ParseOnly -benchmem -benchtime 1x ./ingest/chrome/
//	go test -run XXX -bench 'Ingest$' -benchmem -benchtime 1x ./ingest/chrome/
const benchTasks = 12000

func benchTrace(b *testing.B) (path string, size int64, events int) {
	b.Helper()
	path = filepath.Join(b.TempDir(), "bench.json")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	truth, err := chromegen.Write(bw, chromegen.Config{Seed: 1, Tasks: benchTasks})
	if err == nil {
		err = bw.Flush()
	}
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
	return path, st.Size(), truth.Events
}

// BenchmarkParseOnly: file -> parser -> Arrow batches, dropped.
func BenchmarkParseOnly(b *testing.B) {
	path, size, events := benchTrace(b)
	b.SetBytes(size)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		src, err := ingest.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		w := schema.NewRunWriter(schema.RunInfo{RunID: 1, Source: path, Format: "chrome"}, dbtest.Discard{}, memory.NewGoAllocator())
		if err := (chrome.Ingester{}).Ingest(context.Background(), src, w); err != nil {
			b.Fatal(err)
		}
		if err := w.Finish(time.Now()); err != nil {
			b.Fatal(err)
		}
		src.Close()
		if w.Events() != int64(events) {
			b.Fatalf("%d events, want %d", w.Events(), events)
		}
	}
	b.ReportMetric(float64(events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkIngest is the whole path: file -> parser -> Arrow batches -> a
// fresh DuckDB file, committed.
func BenchmarkIngest(b *testing.B) {
	path, size, events := benchTrace(b)
	ctx := context.Background()
	dir := b.TempDir()
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
		res, err := ingest.Path(ctx, db, path, ingest.Options{Format: "chrome"})
		if err != nil {
			b.Fatal(err)
		}
		if res.Events != int64(events) {
			b.Fatalf("%d events, want %d", res.Events, events)
		}
		b.StopTimer()
		db.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
