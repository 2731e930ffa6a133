package dbtest

import (
	"testing"

	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/traceduck/traceduck/schema"
)

// TestCheckBatch: a well-formed interval passes; one whose dur is not
// end - start, or that ends before it starts, or whose state is a symbol
// not sent before it, is named.
func TestCheckBatch(t *testing.T) {
	sb := array.NewRecordBuilder(memory.NewGoAllocator(), schema.ArrowSchema(schema.TableSymbols))
	sb.Field(0).(*array.Int32Builder).Append(0)
	sb.Field(1).(*array.StringBuilder).Append("running")
	symbols := sb.NewRecord()
	defer symbols.Release()
	sb.Release()
	for _, c := range []struct {
		start, end, dur int64
		state           int32
		want            string
	}{
		{10, 25, 15, 0, ""},
		{10, 25, 14, 0, "state interval [10, 25) with dur 14"},
		{25, 10, -15, 0, "state interval [25, 10) with dur -15"},
		{10, 25, 15, 1, "state_intervals.state_sym is symbol 1, of 1 sent"},
	} {
		b := array.NewRecordBuilder(memory.NewGoAllocator(), schema.ArrowSchema(schema.TableStateIntervals))
		b.Field(0).(*array.Int32Builder).Append(1)
		b.Field(1).(*array.Int32Builder).Append(1)
		b.Field(2).(*array.Int64Builder).Append(0)
		b.Field(3).(*array.Int32Builder).Append(c.state)
		b.Field(4).(*array.Int64Builder).Append(c.start)
		b.Field(5).(*array.Int64Builder).Append(c.end)
		b.Field(6).(*array.Int64Builder).Append(c.dur)
		b.Field(7).AppendNull()
		b.Field(8).AppendNull()
		b.Field(9).AppendNull()
		b.Field(10).(*array.BooleanBuilder).Append(false)
		rec := b.NewRecord()
		sink := &Checked{}
		sink.Put(schema.TableSymbols, symbols)
		sink.Put(schema.TableStateIntervals, rec)
		got := ""
		if sink.Err != nil {
			got = sink.Err.Error()
		}
		if got != c.want {
			t.Errorf("[%d, %d) dur %d: %q, want %q", c.start, c.end, c.dur, got, c.want)
		}
		rec.Release()
		b.Release()
	}
}
