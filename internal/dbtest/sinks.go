package dbtest

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/schema"
)

// Discard is a schema.Sink that drops every batch: parse-only benchmarks,
// fuzz targets and tests of a RunWriter without DuckDB.
type Discard struct{}

// Put drops the batch.
func (Discard) Put(string, arrow.Record) error { return nil }

// RecyclingAllocator is the Arrow allocator of the fuzz targets: the
// buffer pool runs are built with (schema.NewBufferPool), shared by every
// input so that each one does not allocate and clear its batches anew.
var RecyclingAllocator = schema.NewBufferPool()

// FuzzSink is the sink of a fuzz target's RunWriter: it checks the
// batches it receives and says how many events rows it saw and the first
// problem it found.
type FuzzSink interface {
	schema.Sink
	Result() (eventRows int64, err error)
}

// FuzzIngest ingests data with ing into a RunWriter without DuckDB, in
// small batches (3 to 16 rows, from the input's length) so that inputs
// cross batch boundaries, and returns the events written and the ingest's
// error. A run that ingests is finished; then the sink must have found
// nothing wrong and received every event; nothing built may stay
// allocated.
func FuzzIngest(t *testing.T, ing ingest.Ingester, file string, data []byte, skipBad bool, sink FuzzSink) (events int64, err error) {
	t.Helper()
	mem := memory.NewCheckedAllocator(RecyclingAllocator)
	defer mem.AssertSize(t, 0)
	w := schema.NewRunWriter(schema.RunInfo{RunID: 1, Name: "fuzz", Source: file, Format: ing.Format().Name, SkipBad: skipBad, Offsets: ing.Format().Offsets}, sink, mem)
	w.SetBatchRows(3 + len(data)%14)
	err = ing.Ingest(context.Background(), ingest.NewSource(file, bytes.NewReader(data), int64(len(data))), w)
	events = w.Events()
	if err != nil {
		w.Abort()
		return events, err
	}
	if err := w.Finish(time.Now()); err != nil {
		t.Fatalf("Finish: %v", err)
	}
	rows, serr := sink.Result()
	if serr != nil {
		t.Fatal(serr)
	}
	if rows != events {
		t.Fatalf("writer counted %d events, the sink received %d rows", events, rows)
	}
	return events, nil
}
