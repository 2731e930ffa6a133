package schema

import (
	"math/bits"
	"sync"

	"github.com/apache/arrow/go/v17/arrow/memory"
)

// bufferPool is an Arrow allocator that keeps the buffers of released
// batches and hands them out again, cleared as a fresh allocation is. A
// run builds every batch of a table with about the same column sizes, so
// after the first few batches the builders stop asking the Go heap for
// memory: fewer page faults and garbage collections, and a fuzz target
// that builds thousands of small runs does not allocate each one anew.
//
// Buffers are kept by size class (sizeClass): a string column's data is a
// little longer or shorter in every batch, and kept by exact length those
// buffers were never asked for again; they piled up to poolBytes, which
// made a 50M-event BTF ingest's heap grow from 81 to 142 MB. At most
// poolBytes are kept; a buffer freed beyond that goes to the garbage
// collector.
type bufferPool struct {
	inner memory.Allocator
	mu    sync.Mutex
	free  map[int][][]byte // by capacity, a size class
	kept  int
}

const poolBytes = 128 << 20

// NewBufferPool returns an allocator that recycles the buffers freed to it.
func NewBufferPool() memory.Allocator {
	return &bufferPool{inner: memory.NewGoAllocator(), free: map[int][][]byte{}}
}

// DefaultAllocator is the allocator runs are built with unless
// DB.SetAllocator or NewRunWriter says otherwise.
var DefaultAllocator = NewBufferPool()

// sizeClass rounds n up to a multiple of an eighth of the power of two
// below it (1024, 1152, 1280, ...): a buffer is at most 12.5% larger
// than asked for, and sizes that differ a little share a class.
func sizeClass(n int) int {
	if n <= 64 {
		return 64
	}
	shift := bits.Len(uint(n-1)) - 4
	return ((n-1)>>shift + 1) << shift
}

func (p *bufferPool) Allocate(size int) []byte {
	c := sizeClass(size)
	p.mu.Lock()
	if l := p.free[c]; len(l) > 0 {
		b := l[len(l)-1]
		l[len(l)-1] = nil
		p.free[c] = l[:len(l)-1]
		p.kept -= c
		p.mu.Unlock()
		clear(b) // the whole class: Reallocate may extend into it
		return b[:size]
	}
	p.mu.Unlock()
	return p.inner.Allocate(c)[:size]
}

func (p *bufferPool) Reallocate(size int, b []byte) []byte {
	if size <= cap(b) {
		// As Arrow's Go allocator does: the bytes past the old length are
		// what Allocate left (zero) unless the buffer was shrunk before.
		return b[:size]
	}
	nb := p.Allocate(size)
	copy(nb, b)
	p.Free(b)
	return nb
}

func (p *bufferPool) Free(b []byte) {
	c := cap(b)
	if sizeClass(c) != c {
		return // not one of ours
	}
	p.mu.Lock()
	if p.kept+c <= poolBytes {
		p.free[c] = append(p.free[c], b[:c])
		p.kept += c
	}
	p.mu.Unlock()
}
