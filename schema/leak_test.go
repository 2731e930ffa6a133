package schema

import (
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

type nopSink struct{ rows map[string]int64 }

func (s *nopSink) Put(table string, rec arrow.Record) error {
	s.rows[table] += rec.NumRows()
	return nil
}

func TestWriterNoLeakWithoutDuckDB(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	s := &nopSink{rows: map[string]int64{}}
	w := NewRunWriter(RunInfo{Name: "x"}, s, mem)
	w.SetBatchRows(7)
	if err := fillSmall(250)(w); err != nil {
		t.Fatal(err)
	}
	if err := w.Finish(time.Now()); err != nil {
		t.Fatal(err)
	}
	mem.AssertSize(t, 0)
	t.Log(s.rows)
}
