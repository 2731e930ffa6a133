package schema

import (
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

type discardSink struct{}

func (discardSink) Put(string, arrow.Record) error { return nil }

// TestTimeBounds: every time of a run (an event's, a state change's, a
// time an ingester derived) lies within ±MaxTimestamp and the run spans
// at most MaxSpan; past them the writer stops the ingest with FILE:LINE
// (FILE@OFFSET for formats that point at offsets), --skip-bad or not, and
// the times at the bounds are taken.
func TestTimeBounds(t *testing.T) {
	const max = MaxTimestamp
	for _, c := range []struct {
		name    string
		offsets bool
		do      func(w *RunWriter) error
		want    string
	}{
		{"event past the bound", false, events(0, max+1),
			"x.trace:2: time: expected at most 4611686018427387904 ns (2^62 ns, about 146 years) either side of 0, found 4611686018427387905 ns"},
		{"event below the bound, offsets", true, events(-max - 1),
			"x.trace@1: time: expected at most 4611686018427387904 ns (2^62 ns, about 146 years) either side of 0, found -4611686018427387905 ns"},
		{"int64 extremes", false, events(0, 9223372036854775807),
			"x.trace:2: time: expected at most 4611686018427387904 ns (2^62 ns, about 146 years) either side of 0, found 9223372036854775807 ns"},
		{"span past the bound, later", false, events(-5, max-4),
			"x.trace:2: time: expected a run to span at most 4611686018427387904 ns (2^62 ns, about 146 years), found 4611686018427387900 ns, 4611686018427387905 ns after the run's earliest time -5 ns"},
		{"span past the bound, earlier", false, events(5, 10, 4-max),
			"x.trace:3: time: expected a run to span at most 4611686018427387904 ns (2^62 ns, about 146 years), found -4611686018427387900 ns, 4611686018427387910 ns before the run's latest time 10 ns"},
		{"the bounds themselves", false, events(0, max), ""},
		{"the bounds themselves, negative", false, events(-max, 0), ""},
		{"state change past the span", false, func(w *RunWriter) error {
			if err := events(-10, 0)(w); err != nil {
				return err
			}
			o := w.Object("task", "A")
			if err := w.Transition(o, 0, 0, w.Sym("running"), 2, NoCPU); err != nil {
				return err
			}
			return w.Close(o, 0, max-5, 2)
		}, "x.trace:2: time: expected a run to span at most 4611686018427387904 ns (2^62 ns, about 146 years), found 4611686018427387899 ns, 4611686018427387909 ns after the run's earliest time -10 ns"},
		{"transition past the bound", false, func(w *RunWriter) error {
			if err := events(0)(w); err != nil {
				return err
			}
			return w.Transition(w.Object("task", "A"), 0, -max-1, w.Sym("running"), 1, NoCPU)
		}, "x.trace:1: time: expected at most 4611686018427387904 ns (2^62 ns, about 146 years) either side of 0, found -4611686018427387905 ns"},
		{"derived time at its own offset", true, func(w *RunWriter) error {
			if err := events(0, 10)(w); err != nil {
				return err
			}
			return w.CheckTime(77, max+1)
		}, "x.trace@77: time: expected at most 4611686018427387904 ns (2^62 ns, about 146 years) either side of 0, found 4611686018427387905 ns"},
		{"derived time within the bounds", true, func(w *RunWriter) error {
			if err := events(0, 10)(w); err != nil {
				return err
			}
			return w.CheckTime(77, max)
		}, ""},
	} {
		for _, skip := range []bool{false, true} {
			w := NewRunWriter(RunInfo{Source: "x.trace", Offsets: c.offsets, SkipBad: skip}, discardSink{}, memory.NewGoAllocator())
			err := c.do(w)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != c.want {
				t.Errorf("%s (skip-bad %v):\n got %q\nwant %q", c.name, skip, got, c.want)
			}
			if err == nil {
				if err := w.Finish(time.Time{}); err != nil {
					t.Errorf("%s: Finish: %v", c.name, err)
				}
			} else {
				w.Abort()
			}
		}
	}
}

// events writes events at the times given, the i-th on line (or at
// offset) i+1.
func events(ts ...int64) func(w *RunWriter) error {
	return func(w *RunWriter) error {
		for i, t := range ts {
			if _, err := w.Event(&Event{TS: t, CPU: NoCPU, Class: w.Sym("c"), Event: w.Sym("e"),
				Context: NoObject, Object: NoObject, SourceInstance: NoInstance, TargetInstance: NoInstance,
				Line: int64(i + 1)}); err != nil {
				return err
			}
		}
		return nil
	}
}
