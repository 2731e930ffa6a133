package qnx_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/ingest/qnx"
	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/internal/qnxenc"
	"github.com/traceduck/traceduck/internal/tracegen"
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
	path := filepath.Join(b.TempDir(), name)
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := write(f, h, events); err != nil {
		b.Fatal(err)
	}
	f.Close()
	events = nil
	dbtest.BenchIngest(b, path, int64(truth.Events), ingest.Options{})
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
	dbtest.BenchParse(b, ing, buf.Bytes(), int64(truth.Events))
}
