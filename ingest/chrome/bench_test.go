package chrome_test

import (
	"bufio"
	"os"
	"path/filepath"
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
	path, _, events := benchTrace(b)
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	dbtest.BenchParse(b, chrome.Ingester{}, data, int64(events))
}

// BenchmarkIngest is the whole path: file -> parser -> Arrow batches -> a
// fresh DuckDB file, committed.
func BenchmarkIngest(b *testing.B) {
	path, _, events := benchTrace(b)
	dbtest.BenchIngest(b, path, int64(events), ingest.Options{Format: "chrome"})
}
