package qnx_test

import (
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
	"github.com/traceduck/traceduck/ingest/qnx"
	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/internal/qnxenc"
	"github.com/traceduck/traceduck/internal/tracegen"
	"github.com/traceduck/traceduck/queries"
	"github.com/traceduck/traceduck/schema"
)

// BenchmarkIngestText and BenchmarkIngestKev ingest the same generated
// trace of a million events on 4 CPUs, as traceprinter text and as .kev,
// into a new DuckDB file:
//
//	go test -run XXX -bench Ingest -benchtime 3x ./ingest/qnx/
func BenchmarkIngestText(b *testing.B) {
	benchIngest(b, "trace.txt", func(f *os.File, h qnxenc.Header, ev []qnxenc.Event) error { return qnxenc.WriteText(f, h, ev) })
}

func BenchmarkIngestKev(b *testing.B) {
	benchIngest(b, "trace.kev", func(f *os.File, h qnxenc.Header, ev []qnxenc.Event) error { return qnxenc.WriteKev(f, h, ev) })
}

func benchIngest(b *testing.B, name string, write func(*os.File, qnxenc.Header, []qnxenc.Event) error) {
	h, events, truth, err := tracegen.GenerateQNX(tracegen.QNXConfig{Events: 1_000_000, CPUs: 4, Procs: 8, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	path := filepath.Join(dir, name)
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := write(f, h, events); err != nil {
		b.Fatal(err)
	}
	f.Close()
	st, _ := os.Stat(path)
	events = nil
	ctx := context.Background()
	b.SetBytes(st.Size())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		db, err := schema.Open(ctx, filepath.Join(dir, "b"+strconv.Itoa(i)+".duckdb"))
		if err != nil {
			b.Fatal(err)
		}
		if err := queries.Install(ctx, db.SQL()); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		res, err := ingest.Path(ctx, db, path, ingest.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if res.Events != int64(truth.Events) {
			b.Fatalf("%d events, want %d", res.Events, truth.Events)
		}
		b.StopTimer()
		db.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(truth.Events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkParseOnlyText and BenchmarkParseOnlyKev read the same generated
// trace (a million events on 4 CPUs) through the ingesters into a run
// writer whose sink drops the batches: parsing, the state machine and the
// Arrow batches, without DuckDB:
//
//	go test -run XXX -bench ParseOnly -benchmem ./ingest/qnx/
func BenchmarkParseOnlyText(b *testing.B) {
	benchParse(b, qnx.TextIngester{}, qnxenc.WriteText)
}

func BenchmarkParseOnlyKev(b *testing.B) {
	benchParse(b, qnx.KevIngester{}, func(w io.Writer, h qnxenc.Header, ev []qnxenc.Event) error { return qnxenc.WriteKev(w, h, ev) })
}

func benchParse(b *testing.B, ing ingest.Ingester, write func(io.Writer, qnxenc.Header, []qnxenc.Event) error) {
	h, events, truth, err := tracegen.GenerateQNX(tracegen.QNXConfig{Events: 1_000_000, CPUs: 4, Procs: 8, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	if err := write(&buf, h, events); err != nil {
		b.Fatal(err)
	}
	events = nil
	data := buf.Bytes()
	ctx := context.Background()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w := schema.NewRunWriter(schema.RunInfo{RunID: 1, Source: "bench", Format: ing.Format().Name}, dbtest.Discard{}, memory.DefaultAllocator)
		if err := ing.Ingest(ctx, ingest.NewSource("bench", bytes.NewReader(data), int64(len(data))), w); err != nil {
			b.Fatal(err)
		}
		if err := w.Finish(time.Now()); err != nil {
			b.Fatal(err)
		}
		if w.Events() != int64(truth.Events) {
			b.Fatalf("%d events, want %d", w.Events(), truth.Events)
		}
	}
	b.ReportMetric(float64(truth.Events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
