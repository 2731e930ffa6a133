package dbtest

import (
	"github.com/apache/arrow/go/v17/arrow"
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
