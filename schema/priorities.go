package schema

import "sort"

// The priority model (docs/semantics.md, "Priorities"): one tracker, fed
// by every format that tells the priority of its tasks or threads, keeps
// each one's base and effective priority over time and writes each span of
// constant priorities as a row of the table priority_intervals, which the
// view priority_inversions reads.
//
// The verbs, each for one task or thread o, at ts, caused by the event
// seq:
//
//   - Base: o's base priority (the one it was created with, or that a
//     set_priority / chg_pri gave it) is p. Its effective priority follows
//     unless it is raised above the base (by inheritance or a ceiling) and
//     p is no more urgent than the raised one: a raised priority stays
//     until Effective lowers it (FreeRTOS's vTaskPrioritySet, ITRON's
//     chg_pri under a mutex).
//   - Effective: o runs at p from now on, whatever its base (priority
//     inheritance, a priority ceiling, their end). A format that knows
//     only the priority a thread runs at (QNX's thread events) speaks
//     only this verb: the base is then unknown (NULL).
//
// Numbers are the format's own. Formats differ in which way is more
// urgent (FreeRTOS, QNX: a larger number; TOPPERS/ITRON: a smaller one):
// SetLowerIsUrgent says so for the run, and each row carries urgency, the
// effective priority on one scale for every format (larger is more
// urgent: the number, or its negation), which is what the views compare.
//
// A span ends when a verb changes o's base or effective priority; a verb
// that changes neither changes nothing. Spans of zero length (two changes
// at one time) are not written. Before the first verb for o, its priority
// is unknown: no row. The span open at the end of the trace ends at the
// run's last event, truncated. Memory is one entry per task or thread
// with a known priority (objects are bounded by the writer).
type PriorityTracker struct {
	w         *RunWriter
	lowUrgent bool // smaller numbers are more urgent
	set       bool // a verb was spoken: the order is fixed
	open      map[ObjectID]*prioRow
	b         *batch
	warned    bool
}

type prioRow struct {
	base, eff int64
	hasBase   bool
	start     int64
	seq       Seq
}

// Priorities returns the run's priority tracker.
func (w *RunWriter) Priorities() *PriorityTracker {
	t := &w.prios
	if t.w == nil {
		t.w = w
		t.open = make(map[ObjectID]*prioRow)
	}
	return t
}

// SetLowerIsUrgent says that in this run a smaller priority number is
// more urgent (TOPPERS/ITRON); the default is a larger one (FreeRTOS,
// QNX). It is kept in runs.meta.priority_order. It must come before the
// first verb; a later call that would change the order is a warning and
// changes nothing.
func (t *PriorityTracker) SetLowerIsUrgent(lower bool) {
	if t.set {
		if lower != t.lowUrgent && !t.warned {
			t.warned = true
			t.w.Diag(Warning, t.w.bounds.line, t.w.seq, "the order of priorities changed after the first priority was told: the first order is kept")
		}
		return
	}
	t.lowUrgent = lower
}

func (t *PriorityTracker) start() {
	if !t.set {
		t.set = true
		order := "higher_first"
		if t.lowUrgent {
			order = "lower_first"
		}
		t.w.SetMeta("priority_order", order)
	}
}

// urgency puts p on the scale where larger is more urgent.
func (t *PriorityTracker) urgency(p int64) int64 {
	if t.lowUrgent {
		return -p
	}
	return p
}

// Base says that o's base priority is p from ts on.
func (t *PriorityTracker) Base(o ObjectID, p, ts int64, seq Seq) error {
	if err := t.w.checkTime(t.w.bounds.line, ts); err != nil {
		return err
	}
	t.start()
	r := t.open[o]
	if r == nil {
		t.open[o] = &prioRow{base: p, eff: p, hasBase: true, start: ts, seq: seq}
		return nil
	}
	eff := r.eff
	// raised above the base: the raise stays unless p is more urgent
	raised := r.hasBase && t.urgency(r.eff) > t.urgency(r.base)
	if !raised || t.urgency(p) > t.urgency(r.eff) {
		eff = p
	}
	return t.change(o, r, p, true, eff, ts, seq)
}

// Effective says that o runs at priority p from ts on (inheritance, a
// ceiling, or their end), its base unchanged.
func (t *PriorityTracker) Effective(o ObjectID, p, ts int64, seq Seq) error {
	if err := t.w.checkTime(t.w.bounds.line, ts); err != nil {
		return err
	}
	t.start()
	r := t.open[o]
	if r == nil {
		t.open[o] = &prioRow{eff: p, start: ts, seq: seq}
		return nil
	}
	return t.change(o, r, r.base, r.hasBase, p, ts, seq)
}

// Priority returns o's base and effective priority now; ok is false when
// no verb has told them (hasBase false: the base is unknown).
func (t *PriorityTracker) Priority(o ObjectID) (base, eff int64, hasBase, ok bool) {
	if r := t.open[o]; r != nil {
		return r.base, r.eff, r.hasBase, true
	}
	return 0, 0, false, false
}

func (t *PriorityTracker) change(o ObjectID, r *prioRow, base int64, hasBase bool, eff, ts int64, seq Seq) error {
	if base == r.base && hasBase == r.hasBase && eff == r.eff {
		return nil
	}
	if err := t.emit(o, r, ts, seq); err != nil {
		return err
	}
	r.base, r.hasBase, r.eff = base, hasBase, eff
	r.start, r.seq = max(r.start, ts), seq
	return nil
}

// emit writes o's span r, ending at end (endSeq NoSeq: cut by the end of
// the trace). An end before the start (timestamps going backwards) is
// clamped to the start; a span of zero length is not written.
func (t *PriorityTracker) emit(o ObjectID, r *prioRow, end int64, endSeq Seq) error {
	w := t.w
	if end <= r.start {
		return nil
	}
	if t.b == nil {
		t.b = newBatchCounting(w.mem, TablePriorityIntervals, w.syms, &w.badUTF8)
		t.b.reserve(min(w.batchRows, 1024))
	}
	b := t.b
	b.i32(0).Append(w.info.RunID)
	b.i32(1).Append(int32(o))
	b.i64(2).put(r.base, !r.hasBase)
	b.i64(3).Append(r.eff)
	b.i64(4).Append(t.urgency(r.eff))
	b.i64(5).Append(r.start)
	b.i64(6).Append(end)
	b.i64(7).Append(end - r.start)
	b.i64(8).put(int64(r.seq), r.seq < 0)
	b.i64(9).put(int64(endSeq), endSeq < 0)
	b.boolc(10).Append(endSeq < 0)
	b.rows++
	if b.rows >= w.batchRows {
		return w.flushTable(TablePriorityIntervals, b)
	}
	return nil
}

// finish ends every span still open at the run's last event, truncated,
// in the order of their objects.
func (t *PriorityTracker) finish(lastTS int64) error {
	if t.w == nil {
		return nil
	}
	objs := make([]ObjectID, 0, len(t.open))
	for o := range t.open {
		objs = append(objs, o)
	}
	sort.Slice(objs, func(i, j int) bool { return objs[i] < objs[j] })
	for _, o := range objs {
		if err := t.emit(o, t.open[o], lastTS, NoSeq); err != nil {
			return err
		}
	}
	clear(t.open)
	return t.w.flushTable(TablePriorityIntervals, t.b)
}

func (t *PriorityTracker) release() {
	if t.b != nil {
		t.b.release()
		t.b = nil
	}
}
