package chrome_test

import (
	"io"
	"os"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/ingest/chrome"
	"github.com/traceduck/traceduck/internal/chromegen"
	"github.com/traceduck/traceduck/internal/dbtest"
)

// The benchmarks read a generated trace of the simulated browser (B/E,
// complete events in begin and end order, counters, async requests,
// flows, objects): 462,000 events, 45 MB. Besides ns/op they
// report events/s and MB/s (of JSON); run with -benchmem:
//
//	go test -run XXX -bench ParseOnly -benchmem -benchtime 1x ./ingest/chrome/
//	go test -run XXX -bench 'Ingest$' -benchmem -benchtime 1x ./ingest/chrome/
const benchTasks = 12000

// benchTrace writes the benchmark trace, outside the timer.
func benchTrace(b *testing.B) (path string, events int64) {
	return dbtest.BenchTrace(b, "bench.json", func(w io.Writer) (int, error) {
		truth, err := chromegen.Write(w, chromegen.Config{Seed: 1, Tasks: benchTasks})
		return truth.Events, err
	})
}

// BenchmarkParseOnly: file -> parser -> Arrow batches, dropped.
func BenchmarkParseOnly(b *testing.B) {
	path, events := benchTrace(b)
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	dbtest.BenchParse(b, chrome.Ingester{}, data, events)
}

// BenchmarkIngest is the whole path: file -> parser -> Arrow batches -> a
// fresh DuckDB file, committed.
func BenchmarkIngest(b *testing.B) {
	path, events := benchTrace(b)
	dbtest.BenchIngest(b, path, events, ingest.Options{Format: "chrome"})
}
