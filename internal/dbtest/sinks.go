package dbtest

import (
	"sync"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// Discard is a schema.Sink that drops every batch: parse-only benchmarks,
// fuzz targets and tests of a RunWriter without DuckDB.
type Discard struct{}

// Put drops the batch.
func (Discard) Put(string, arrow.Record) error { return nil }

// RecyclingAllocator is an Arrow allocator shared by the fuzz targets: a
// RunWriter reserves full-size batches (DefaultBatchRows rows, megabytes)
// before it sees the first line, and allocating and clearing them afresh
// for every input made fuzzing ten times slower and the minimization of
// each new input take minutes. It keeps freed buffers by size (16 of
// each) and hands them out again cleared, as a fresh allocation would be.
var RecyclingAllocator memory.Allocator = &recycler{inner: memory.NewGoAllocator(), free: map[int][][]byte{}}

type recycler struct {
	inner memory.Allocator
	mu    sync.Mutex
	free  map[int][][]byte
}

func (p *recycler) Allocate(size int) []byte {
	p.mu.Lock()
	if l := p.free[size]; len(l) > 0 {
		b := l[len(l)-1]
		p.free[size] = l[:len(l)-1]
		p.mu.Unlock()
		clear(b)
		return b
	}
	p.mu.Unlock()
	return p.inner.Allocate(size)
}

func (p *recycler) Reallocate(size int, b []byte) []byte {
	if size == len(b) {
		return b
	}
	nb := p.Allocate(size)
	copy(nb, b)
	p.Free(b)
	return nb
}

func (p *recycler) Free(b []byte) {
	p.mu.Lock()
	if l := p.free[len(b)]; len(l) < 16 {
		p.free[len(b)] = append(l, b)
	}
	p.mu.Unlock()
}
