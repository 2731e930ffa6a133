package dbtest

import (
	"testing"

	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/traceduck/traceduck/schema"
)

// TestCheckBatch: a well-formed interval passes; one that ends before it
// starts, or whose state is a symbol not sent before it, is named.
func TestCheckBatch(t *testing.T) {
	sb := array.NewRecordBuilder(memory.NewGoAllocator(), schema.ArrowSchema(schema.TableSymbols))
	sb.Field(0).(*array.Int32Builder).Append(0)
	sb.Field(1).(*array.StringBuilder).Append("running")
	symbols := sb.NewRecord()
	defer symbols.Release()
	sb.Release()
	for _, c := range []struct {
		start, end int64
		state      int32
		want       string
	}{
		{10, 25, 0, ""},
		{10, 10, 0, ""},
		{25, 10, 0, "state interval [25, 10) ends before it starts"},
		{10, 25, 1, "state_intervals.state_sym is symbol 1, of 1 sent"},
	} {
		b := array.NewRecordBuilder(memory.NewGoAllocator(), schema.ArrowSchema(schema.TableStateIntervals))
		b.Field(0).(*array.Int32Builder).Append(1)
		b.Field(1).(*array.Int32Builder).Append(1)
		b.Field(2).(*array.Int64Builder).Append(0)
		b.Field(3).(*array.Int32Builder).Append(c.state)
		b.Field(4).(*array.Int64Builder).Append(c.start)
		b.Field(5).(*array.Int64Builder).Append(c.end)
		b.Field(6).AppendNull()
		b.Field(7).AppendNull()
		b.Field(8).AppendNull()
		b.Field(9).(*array.BooleanBuilder).Append(false)
		rec := b.NewRecord()
		sink := &Checked{}
		sink.Put(schema.TableSymbols, symbols)
		sink.Put(schema.TableStateIntervals, rec)
		got := ""
		if sink.Err != nil {
			got = sink.Err.Error()
		}
		if got != c.want {
			t.Errorf("[%d, %d) state %d: %q, want %q", c.start, c.end, c.state, got, c.want)
		}
		rec.Release()
		b.Release()
	}
}
