package schema

import (
	"strconv"
)

// MaxTimestamp bounds every time of a run, in ns: event timestamps and
// the ends of state intervals lie in [-MaxTimestamp, MaxTimestamp]. 2^62
// ns is about 146 years, so a clock counting ns since 1970 fits until
// 2116; MaxSpan bounds the distance between the earliest and the latest
// time of a run to the same 2^62 ns.
//
// The bounds keep a run computable by the views: a duration, a window
// index or a window edge (first_ts + k*window + window) is at most 2^62 +
// a window, so no view's BIGINT arithmetic overflows, and a run cannot make
// a query over every run fail with an INT64 overflow. Line-based formats
// check a line's time as they read it (TimeOutOfBounds): the line is bad,
// and --skip-bad skips it. Behind them the writer checks every time it is
// given, events' and intervals' alike: past the bounds the ingest stops
// with FILE:LINE (FILE@OFFSET for formats that point at byte offsets), also
// with --skip-bad, since by then the ingester has acted on the line and it
// cannot be skipped cleanly.
const (
	MaxTimestamp int64 = 1 << 62
	MaxSpan      int64 = 1 << 62
)

// timeBounds tracks the earliest and the latest time a run has seen (of
// events and of state intervals alike).
type timeBounds struct {
	lo, hi int64
	have   bool
	line   int64 // src_line of the last event: where a state change comes from
}

// checkTime refuses a time past MaxTimestamp, or one that would make the
// run span more than MaxSpan; pos is its line (or byte offset).
func (w *RunWriter) checkTime(pos, ts int64) error {
	if msg := w.TimeOutOfBounds(ts); msg != "" {
		return w.timeError(pos, msg)
	}
	if b := &w.bounds; b.have {
		b.lo, b.hi = min(b.lo, ts), max(b.hi, ts)
	} else {
		b.lo, b.hi, b.have = ts, ts, true
	}
	return nil
}

// TimeOutOfBounds says why ts cannot be a time of this run ("" when it
// can). A line-based ingester asks it as soon as it has read a line's time,
// before it acts on the line, and reports a non-empty answer as a bad line
// (BadLine): with --skip-bad that line is skipped like any other bad line.
// The writer's own check of every time (checkTime) stays behind it for the
// times an ingester derives.
func (w *RunWriter) TimeOutOfBounds(ts int64) string {
	b := &w.bounds
	if ts < -MaxTimestamp || ts > MaxTimestamp {
		return "time: expected at most " + strconv.FormatInt(MaxTimestamp, 10) +
			" ns (2^62 ns, about 146 years) either side of 0, found " + strconv.FormatInt(ts, 10) + " ns"
	}
	if !b.have {
		return ""
	}
	lo, hi := min(b.lo, ts), max(b.hi, ts)
	if hi-lo <= MaxSpan {
		return ""
	}
	where := " ns after the run's earliest time " + strconv.FormatInt(b.lo, 10)
	if ts < b.lo {
		where = " ns before the run's latest time " + strconv.FormatInt(b.hi, 10)
	}
	return "time: expected a run to span at most " + strconv.FormatInt(MaxSpan, 10) +
		" ns (2^62 ns, about 146 years), found " + strconv.FormatInt(ts, 10) + " ns, " +
		strconv.FormatInt(hi-lo, 10) + where + " ns"
}

// CheckTime refuses a time that an ingester derived from the input at
// pos (a line, or a byte offset for formats that point at offsets) before
// the writer sees it: the end of a Chrome complete event is its ts plus
// its dur, and is placed later. The error is the one Event and
// Transition would return, pointing at pos instead of the last event.
func (w *RunWriter) CheckTime(pos, ts int64) error {
	if ts >= -MaxTimestamp && ts <= MaxTimestamp && (!w.bounds.have ||
		(max(w.bounds.hi, ts)-min(w.bounds.lo, ts) <= MaxSpan)) {
		return nil
	}
	return w.checkTime(pos, ts)
}

// timeError is the error of a time past the bounds: InputError at the
// line (or offset) pos, never skipped.
func (w *RunWriter) timeError(pos int64, msg string) error {
	if w.info.Offsets {
		return &InputError{File: w.info.Source, Offset: pos, Msg: msg}
	}
	return &InputError{File: w.info.Source, Line: pos, Offset: -1, Msg: msg}
}
