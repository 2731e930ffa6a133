package btf_test

import (
	"io"
	"os"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/ingest/btf"
	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/internal/tracegen"
)

// The benchmarks ingest a generated trace of a million events on two
// cores; they report events/s, MB/s (of BTF text) and peakRSS_MB (see
// internal/dbtest/bench.go). Run one at a time for a clean peak RSS:
//
//	go test -run XXX -bench 'Ingest$' -benchtime 3x -count 1 ./ingest/btf/
//	go test -run XXX -bench ParseOnly -benchtime 3x -count 1 ./ingest/btf/

const benchEvents = 1_000_000

// benchTrace writes the benchmark trace, outside the timer.
func benchTrace(b *testing.B) (path string, events int64) {
	return dbtest.BenchTrace(b, "bench.btf", func(w io.Writer) (int, error) {
		truth, err := tracegen.WriteBTF(w, tracegen.Config{Events: benchEvents, Cores: 2, Tasks: 8, Seed: 1, TimeScale: "ns"})
		return truth.Lines, err
	})
}

// BenchmarkIngest is the whole path: BTF file → parser → Arrow batches →
// a fresh DuckDB file, committed.
func BenchmarkIngest(b *testing.B) {
	path, events := benchTrace(b)
	dbtest.BenchIngest(b, path, events, ingest.Options{Format: "btf"})
}

// BenchmarkParseOnly runs the BTF ingester into a RunWriter whose sink
// drops the batches: reading, parsing, state machines and building the
// Arrow batches, without DuckDB. BenchmarkIngest minus this is the cost of
// loading into DuckDB.
func BenchmarkParseOnly(b *testing.B) {
	path, events := benchTrace(b)
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	dbtest.BenchParse(b, btf.Ingester{}, data, events)
}
