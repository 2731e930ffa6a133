package schema

import (
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// batch builds one record batch of a table. Columns are appended in bulk
// per row through the typed builders it hands out; nothing is allocated per
// row beyond the builders' own amortized growth.
type batch struct {
	schema *arrow.Schema
	cols   []colBuilder
	rows   int
}

type colBuilder interface {
	reserve(n int)
	newArray() arrow.Array
	release()
}

func newBatch(mem memory.Allocator, table string, syms *symtab) *batch {
	return newBatchCounting(mem, table, syms, new(int64))
}

// newBatchCounting is newBatch whose string columns count into bad the
// values they had to repair (see strCol).
func newBatchCounting(mem memory.Allocator, table string, syms *symtab, bad *int64) *batch {
	sc := ArrowSchema(table)
	b := &batch{schema: sc, cols: make([]colBuilder, len(sc.Fields()))}
	cols := lookupTable(table).storedColumns()
	for i, f := range sc.Fields() {
		switch f.Type.ID() {
		case arrow.INT32:
			if cols[i].isSymbol() {
				b.cols[i] = &symCol{newNumCol[int32](mem, arrow.PrimitiveTypes.Int32)}
				break
			}
			b.cols[i] = &i32Col{newNumCol[int32](mem, arrow.PrimitiveTypes.Int32)}
		case arrow.INT64:
			b.cols[i] = &i64Col{newNumCol[int64](mem, arrow.PrimitiveTypes.Int64)}
		case arrow.FLOAT64:
			b.cols[i] = &f64Col{array.NewFloat64Builder(mem)}
		case arrow.STRING:
			b.cols[i] = &strCol{StringBuilder: array.NewStringBuilder(mem), bad: bad}
		case arrow.BOOL:
			b.cols[i] = &boolCol{array.NewBooleanBuilder(mem)}
		case arrow.TIMESTAMP:
			b.cols[i] = &tsCol{array.NewTimestampBuilder(mem, f.Type.(*arrow.TimestampType))}
		case arrow.DICTIONARY:
			b.cols[i] = newDictCol(mem, syms)
		case arrow.LIST:
			lb := array.NewListBuilder(mem, arrow.BinaryTypes.String)
			b.cols[i] = &strListCol{ListBuilder: lb, values: &strCol{StringBuilder: lb.ValueBuilder().(*array.StringBuilder), bad: bad}}
		default:
			panic("schema: no column builder for " + f.Type.String())
		}
	}
	return b
}

func (b *batch) reserve(n int) {
	for _, c := range b.cols {
		c.reserve(n)
	}
}

// record turns what was appended into a record (the caller releases it) and
// leaves the batch empty, ready to be reused.
func (b *batch) record() arrow.Record {
	arrs := make([]arrow.Array, len(b.cols))
	for i, c := range b.cols {
		arrs[i] = c.newArray()
	}
	rec := array.NewRecord(b.schema, arrs, int64(b.rows))
	for _, a := range arrs {
		a.Release()
	}
	b.rows = 0
	return rec
}

// flushed is record for a batch that goes on filling: the next batch
// reserves as many rows as this one had, so that a long run appends
// without growing its builders, and a short one never reserves more than
// it used.
func (b *batch) flushed() arrow.Record {
	n := b.rows
	rec := b.record()
	b.reserve(n)
	return rec
}

func (b *batch) release() {
	for _, c := range b.cols {
		c.release()
	}
}

func (b *batch) i32(i int) *i32Col      { return b.cols[i].(*i32Col) }
func (b *batch) i64(i int) *i64Col      { return b.cols[i].(*i64Col) }
func (b *batch) f64(i int) *f64Col      { return b.cols[i].(*f64Col) }
func (b *batch) str(i int) *strCol      { return b.cols[i].(*strCol) }
func (b *batch) boolc(i int) *boolCol   { return b.cols[i].(*boolCol) }
func (b *batch) ts(i int) *tsCol        { return b.cols[i].(*tsCol) }
func (b *batch) dict(i int) *dictCol    { return b.cols[i].(*dictCol) }
func (b *batch) sym(i int) *symCol      { return b.cols[i].(*symCol) }
func (b *batch) strs(i int) *strListCol { return b.cols[i].(*strListCol) }

type i32Col struct{ *numCol[int32] }

type i64Col struct{ *numCol[int64] }

// symCol is a column of symbol ids, which the table's view turns back
// into names (see TableSymbols).
type symCol struct{ *numCol[int32] }

// put appends a symbol; NoSym is NULL.
func (c *symCol) put(s Sym) { c.numCol.put(int32(s), s < 0) }

type f64Col struct{ *array.Float64Builder }

func (c *f64Col) reserve(n int)         { c.Reserve(n) }
func (c *f64Col) newArray() arrow.Array { return c.NewArray() }
func (c *f64Col) release()              { c.Release() }

// strCol is a string column. DuckDB refuses a whole batch that holds a
// string which is not UTF-8, and a trace may hold any bytes: every value
// goes through here, and bytes that are not UTF-8 are replaced by U+FFFD
// and counted, so that the run can say so in diagnostics.
type strCol struct {
	*array.StringBuilder
	bad *int64
}

func (c *strCol) reserve(n int)         { c.Reserve(n) }
func (c *strCol) newArray() arrow.Array { return c.NewArray() }
func (c *strCol) release()              { c.Release() }

// putBytes appends v; a nil slice is NULL, an empty non-nil slice is ”.
func (c *strCol) putBytes(v []byte) {
	if v == nil {
		c.AppendNull()
		return
	}
	if !utf8.Valid(v) {
		*c.bad++
		c.Append(strings.ToValidUTF8(string(v), "\uFFFD"))
		return
	}
	c.BinaryBuilder.Append(v)
}

// putString appends v, or NULL when null is true.
func (c *strCol) putString(v string, null bool) {
	if null {
		c.AppendNull()
		return
	}
	c.add(v)
}

// add appends v.
func (c *strCol) add(v string) {
	if !utf8.ValidString(v) {
		*c.bad++
		v = strings.ToValidUTF8(v, "\uFFFD")
	}
	c.Append(v)
}

type boolCol struct{ *array.BooleanBuilder }

// put appends v, or NULL.
func (c *boolCol) put(v, null bool) {
	if null {
		c.AppendNull()
		return
	}
	c.Append(v)
}

func (c *boolCol) reserve(n int)         { c.Reserve(n) }
func (c *boolCol) newArray() arrow.Array { return c.NewArray() }
func (c *boolCol) release()              { c.Release() }

type tsCol struct{ *array.TimestampBuilder }

func (c *tsCol) reserve(n int)         { c.Reserve(n) }
func (c *tsCol) newArray() arrow.Array { return c.NewArray() }
func (c *tsCol) release()              { c.Release() }

// dictCol builds a dictionary-encoded string column from interned symbols.
// Each batch carries its own dictionary holding only the symbols the batch
// uses, so a dictionary never grows beyond the batch even when a column has
// many distinct values over the whole trace.
type dictCol struct {
	mem     memory.Allocator
	syms    *symtab
	idx     *numCol[int32]
	slot    []int32 // slot[sym] = local index + 1 in this batch, 0 = unused
	used    []Sym   // local index -> symbol
	dictTyp *arrow.DictionaryType
}

func newDictCol(mem memory.Allocator, syms *symtab) *dictCol {
	return &dictCol{mem: mem, syms: syms, idx: newNumCol[int32](mem, arrow.PrimitiveTypes.Int32), dictTyp: dict}
}

func (c *dictCol) reserve(n int) { c.idx.reserve(n) }

// put appends a symbol; NoSym is NULL.
func (c *dictCol) put(s Sym) {
	if s < 0 {
		c.idx.AppendNull()
		return
	}
	if int(s) >= len(c.slot) {
		grown := make([]int32, int(s)+1+len(c.slot))
		copy(grown, c.slot)
		c.slot = grown
	}
	l := c.slot[s]
	if l == 0 {
		c.used = append(c.used, s)
		l = int32(len(c.used))
		c.slot[s] = l
	}
	c.idx.Append(l - 1)
}

func (c *dictCol) newArray() arrow.Array {
	vb := array.NewStringBuilder(c.mem)
	defer vb.Release()
	vb.Reserve(len(c.used))
	for _, s := range c.used {
		vb.Append(c.syms.str(s))
		c.slot[s] = 0
	}
	c.used = c.used[:0]
	values := vb.NewArray()
	defer values.Release()
	indices := c.idx.newArray()
	defer indices.Release()
	return array.NewDictionaryArray(c.dictTyp, indices, values)
}

func (c *dictCol) release() { c.idx.release() }

// strListCol is a column of lists of strings (VARCHAR[]), each value
// repaired as strCol does.
type strListCol struct {
	*array.ListBuilder
	values *strCol
}

func (c *strListCol) reserve(n int)         { c.Reserve(n) }
func (c *strListCol) newArray() arrow.Array { return c.NewArray() }
func (c *strListCol) release()              { c.Release() }

// put appends the list of vs; a NULL string is ok[i] false.
func (c *strListCol) put(vs []string, ok []bool) {
	c.Append(true)
	for i, v := range vs {
		c.values.putString(v, !ok[i])
	}
}
