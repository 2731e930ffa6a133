package schema

import (
	"sync"

	"github.com/apache/arrow/go/v17/arrow/memory"
)

// bufferPool is an Arrow allocator that keeps the buffers of released
// batches and hands them out again, cleared as a fresh allocation is. A
// run builds every batch of a table with the same column sizes, so after
// the first few batches the builders stop asking the Go heap for memory:
// fewer page faults and garbage collections, and a fuzz target that builds
// thousands of small runs does not allocate each one anew. At most
// poolBytes are kept; a buffer freed beyond that goes to the garbage
// collector.
type bufferPool struct {
	inner memory.Allocator
	mu    sync.Mutex
	free  map[int][][]byte // by len
	kept  int
}

const poolBytes = 256 << 20

// NewBufferPool returns an allocator that recycles the buffers freed to it.
func NewBufferPool() memory.Allocator {
	return &bufferPool{inner: memory.NewGoAllocator(), free: map[int][][]byte{}}
}

// DefaultAllocator is the allocator runs are built with unless
// DB.SetAllocator or NewRunWriter says otherwise.
var DefaultAllocator = NewBufferPool()

func (p *bufferPool) Allocate(size int) []byte {
	p.mu.Lock()
	if l := p.free[size]; len(l) > 0 {
		b := l[len(l)-1]
		l[len(l)-1] = nil
		p.free[size] = l[:len(l)-1]
		p.kept -= cap(b)
		p.mu.Unlock()
		clear(b)
		return b
	}
	p.mu.Unlock()
	return p.inner.Allocate(size)
}

func (p *bufferPool) Reallocate(size int, b []byte) []byte {
	if size == len(b) {
		return b
	}
	nb := p.Allocate(size)
	copy(nb, b)
	p.Free(b)
	return nb
}

func (p *bufferPool) Free(b []byte) {
	p.mu.Lock()
	if p.kept+cap(b) <= poolBytes {
		p.free[len(b)] = append(p.free[len(b)], b)
		p.kept += cap(b)
	}
	p.mu.Unlock()
}
