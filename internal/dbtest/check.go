package dbtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/traceduck/traceduck/schema"
)

// CheckBatch checks what every batch a RunWriter sends must hold, whatever
// the format wrote: the table's Arrow schema, every column as long as the
// batch, state intervals that end at or after their start (the view
// computes dur = end - start), and events.args that are valid JSON. The fuzz targets' sinks call
// it on every batch.
func CheckBatch(table string, rec arrow.Record) error {
	if !rec.Schema().Equal(schema.ArrowSchema(table)) {
		return fmt.Errorf("%s: batch schema %v differs from the table's", table, rec.Schema())
	}
	n := int(rec.NumRows())
	for i, c := range rec.Columns() {
		if c.Len() != n {
			return fmt.Errorf("%s: column %d has %d rows, the batch %d", table, i, c.Len(), n)
		}
	}
	switch table {
	case schema.TableStateIntervals:
		start := rec.Column(column(rec, "start_ts")).(*array.Int64)
		end := rec.Column(column(rec, "end_ts")).(*array.Int64)
		for i := 0; i < n; i++ {
			if end.Value(i) < start.Value(i) {
				return fmt.Errorf("state interval [%d, %d) ends before it starts", start.Value(i), end.Value(i))
			}
		}
	case schema.TableEvents:
		args := rec.Column(column(rec, "args"))
		for i := 0; i < n; i++ {
			if args.IsNull(i) {
				continue
			}
			if v := args.ValueStr(i); !json.Valid([]byte(v)) {
				return fmt.Errorf("events.args %q are not JSON", v)
			}
		}
	}
	return nil
}

func column(rec arrow.Record, name string) int {
	return rec.Schema().FieldIndices(name)[0]
}

// BatchChecker checks the batches of one run in the order a sink receives
// them: each with CheckBatch, and the symbol ids of events and
// state_intervals against the symbols sent before them (dense from 0).
type BatchChecker struct{ symbols int64 }

// Check checks one batch.
func (c *BatchChecker) Check(table string, rec arrow.Record) error {
	if err := CheckBatch(table, rec); err != nil {
		return err
	}
	var cols []string
	switch table {
	case schema.TableSymbols:
		ids := rec.Column(0).(*array.Int32)
		for i := 0; i < ids.Len(); i++ {
			if int64(ids.Value(i)) != c.symbols {
				return fmt.Errorf("symbol %d sent after %d symbols", ids.Value(i), c.symbols)
			}
			c.symbols++
		}
	case schema.TableEvents:
		cols = []string{"class_sym", "event_sym"}
	case schema.TableStateIntervals:
		cols = []string{"state_sym"}
	}
	for _, name := range cols {
		ids := rec.Column(column(rec, name)).(*array.Int32)
		for i := 0; i < ids.Len(); i++ {
			if ids.IsValid(i) && (ids.Value(i) < 0 || int64(ids.Value(i)) >= c.symbols) {
				return fmt.Errorf("%s.%s is symbol %d, of %d sent", table, name, ids.Value(i), c.symbols)
			}
		}
	}
	return nil
}

// Checked is a schema.Sink that checks every batch with a BatchChecker,
// keeps the first violation in Err and drops the batches.
type Checked struct {
	Err     error
	batches BatchChecker
}

// Put checks the batch.
func (s *Checked) Put(table string, rec arrow.Record) error {
	if s.Err == nil {
		s.Err = s.batches.Check(table, rec)
	}
	return nil
}

// EndFuzzRun checks what every text fuzz target requires of one ingest
// attempt that ended with err, and finishes or aborts the writer: without
// SkipBad the only error allowed is an input error at a line in
// 1..maxLine whose message says what was expected; with SkipBad none. The
// batches the sink received are valid, there are no more events than
// lines, and nothing built is left allocated.
func EndFuzzRun(t *testing.T, w *schema.RunWriter, sink *Checked, mem *memory.CheckedAllocator, err error, skip bool, maxLine, lines int64) {
	t.Helper()
	if err != nil {
		var ie *schema.InputError
		if skip || !errors.As(err, &ie) || ie.Line < 1 || ie.Line > maxLine || !strings.Contains(ie.Msg, "expected") {
			t.Fatalf("skip-bad=%v: %v", skip, err)
		}
		w.Abort()
	} else if err := w.Finish(time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	if sink.Err != nil {
		t.Fatal(sink.Err)
	}
	if w.Events() > lines {
		t.Fatalf("%d events from %d lines", w.Events(), lines)
	}
	mem.AssertSize(t, 0)
}
