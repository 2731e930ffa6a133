package baget_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/ingest/baget"
	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/internal/tracegen"
)

// The benchmarks read one generated log of a million events on 4 CPUs
// (be64, 4 KiB blocks), from indexing alone to the whole ingest:
//
//	go test -run XXX -bench . -benchmem -benchtime 3x ./ingest/baget/
//
// BenchmarkIndex is what the seed's tracer does to open a log: the primary
// and secondary index, reading only descriptors and block records.
// BenchmarkParseOnly adds decoding, objects, eco-triples, state machines
// and the Arrow batches, without DuckDB; BenchmarkIngest is the whole path
// into a fresh DuckDB file.
var benchLog struct {
	log, desc []byte
	events    int
	dir       string
}

func benchSetup(b *testing.B) {
	b.Helper()
	if benchLog.log == nil {
		log, desc, truth, err := tracegen.GenerateBaget(tracegen.BagetConfig{Events: 1_000_000, CPUs: 4, Seed: 1, ABI: "be64", BlockSize: 4096})
		if err != nil {
			b.Fatal(err)
		}
		benchLog.log, benchLog.desc, benchLog.events = log, desc, truth.Events
	}
}

func benchDesc(b *testing.B) *baget.Description {
	d, err := baget.Parse("minirtos.xml", benchLog.desc)
	if err != nil {
		b.Fatal(err)
	}
	return d
}

func BenchmarkIndex(b *testing.B) {
	benchSetup(b)
	d := benchDesc(b)
	b.SetBytes(int64(len(benchLog.log)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		l, err := baget.Open(bytes.NewReader(benchLog.log), int64(len(benchLog.log)), "bench.blog", d, nil)
		if err != nil {
			b.Fatal(err)
		}
		if len(l.Events) != benchLog.events {
			b.Fatalf("%d events indexed, generated %d", len(l.Events), benchLog.events)
		}
	}
	b.ReportMetric(float64(benchLog.events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

func benchFiles(b *testing.B) (logPath, descPath string) {
	dir := b.TempDir()
	logPath, descPath = filepath.Join(dir, "bench.blog"), filepath.Join(dir, "minirtos.xml")
	if err := os.WriteFile(logPath, benchLog.log, 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(descPath, benchLog.desc, 0o644); err != nil {
		b.Fatal(err)
	}
	return logPath, descPath
}

func BenchmarkParseOnly(b *testing.B) {
	benchSetup(b)
	_, descPath := benchFiles(b)
	ing, err := ingest.Configure(&baget.Ingester{}, map[string]string{"description": descPath})
	if err != nil {
		b.Fatal(err)
	}
	dbtest.BenchParse(b, ing, benchLog.log, int64(benchLog.events))
}

func BenchmarkIngest(b *testing.B) {
	benchSetup(b)
	logPath, descPath := benchFiles(b)
	dbtest.BenchIngest(b, logPath, int64(benchLog.events), ingest.Options{Format: "baget", Params: map[string]string{"description": descPath}})
}
