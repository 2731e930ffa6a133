package schema

import (
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// numCol builds a fixed-width column straight into an Arrow buffer: a
// value is one store, and the validity bitmap exists only from the first
// NULL on (most columns have none). Arrow's builders keep a bitmap for
// every column and set a bit per value; in the BTF profile their Append
// and SetBit were 15% of the parser's time.
type numCol[T int32 | int64] struct {
	mem   memory.Allocator
	typ   arrow.DataType
	data  *memory.Buffer
	vals  []T // data's bytes as values
	valid *memory.Buffer
	bits  []byte // valid's bytes; nil until the first NULL
	n     int
	nulls int
}

func newNumCol[T int32 | int64](mem memory.Allocator, typ arrow.DataType) *numCol[T] {
	return &numCol[T]{mem: mem, typ: typ}
}

func (c *numCol[T]) width() int { var v T; return int(unsafe.Sizeof(v)) }

// reserve makes room for n more values.
func (c *numCol[T]) reserve(n int) {
	if c.n+n <= len(c.vals) {
		return
	}
	capacity := max(c.n+n, 2*len(c.vals), 64)
	if c.data == nil {
		c.data = memory.NewResizableBuffer(c.mem)
	}
	c.data.Reserve(capacity * c.width())
	b := c.data.Buf()
	c.vals = unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/c.width())
	if c.valid != nil {
		c.growBits()
	}
}

func (c *numCol[T]) growBits() {
	need := bitutil.BytesForBits(int64(len(c.vals)))
	old := len(c.bits)
	if int(need) <= old {
		return
	}
	c.valid.Reserve(int(need))
	c.bits = c.valid.Buf()[:need]
	clear(c.bits[old:]) // a pool's buffer holds old bits
}

// Append appends v.
func (c *numCol[T]) Append(v T) {
	if c.n == len(c.vals) {
		c.reserve(1)
	}
	c.vals[c.n] = v
	if c.bits != nil {
		bitutil.SetBit(c.bits, c.n)
	}
	c.n++
}

// AppendNull appends NULL.
func (c *numCol[T]) AppendNull() {
	if c.n == len(c.vals) {
		c.reserve(1)
	}
	if c.bits == nil {
		// every value so far was valid
		c.valid = memory.NewResizableBuffer(c.mem)
		c.growBits()
		bitutil.SetBitsTo(c.bits, 0, int64(c.n), true)
	}
	c.vals[c.n] = 0
	bitutil.ClearBit(c.bits, c.n)
	c.nulls++
	c.n++
}

// put appends v, or NULL when null is true.
func (c *numCol[T]) put(v T, null bool) {
	if null {
		c.AppendNull()
		return
	}
	c.Append(v)
}

// newArray hands the buffers to an array and leaves the column empty.
func (c *numCol[T]) newArray() arrow.Array {
	if c.data == nil {
		c.reserve(1)
	}
	c.data.ResizeNoShrink(c.n * c.width())
	bufs := []*memory.Buffer{nil, c.data}
	if c.valid != nil {
		c.valid.ResizeNoShrink(int(bitutil.BytesForBits(int64(c.n))))
		bufs[0] = c.valid
	}
	data := array.NewData(c.typ, c.n, bufs, nil, c.nulls, 0)
	defer data.Release()
	c.release()
	return array.MakeFromData(data)
}

func (c *numCol[T]) release() {
	if c.data != nil {
		c.data.Release()
	}
	if c.valid != nil {
		c.valid.Release()
	}
	c.data, c.vals, c.valid, c.bits = nil, nil, nil, nil
	c.n, c.nulls = 0, 0
}
