package qnx_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/traceduck/traceduck/ingest"
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
