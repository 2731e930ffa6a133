package schema

import (
	"sort"
)

// stateTracker turns state transitions into state intervals: each
// (object, instance) has at most one open interval; a transition closes it
// and opens the next.
type stateTracker struct {
	w *RunWriter
	// open holds pointers so that a transition of an open interval, the
	// common case, hashes its key once; freed intervals are reused.
	open    map[stateKey]*openInterval
	spare   []*openInterval
	b       *batch
	clamped DiagID
	hasClam bool
}

type stateKey struct {
	obj  ObjectID
	inst int64
}

type openInterval struct {
	state    Sym
	start    int64
	startSeq Seq
	cpu      CPU
	cutStart bool
}

func (t *stateTracker) init(w *RunWriter) {
	t.w = w
	t.open = make(map[stateKey]*openInterval)
}

// Transition closes the open interval of (obj, inst), if any, at ts and
// opens one in state; a transition into the state already open (on the
// same cpu) changes nothing. seq is the event that caused it; cpu the processor
// it happened on (NoCPU when unknown).
func (w *RunWriter) Transition(obj ObjectID, inst int64, ts int64, state Sym, seq Seq, cpu CPU) error {
	return w.states.transition(obj, inst, ts, state, seq, cpu, false)
}

// TransitionFromStart opens a state that was already in force when the
// trace started (the format knows it, but not since when): the interval is
// marked truncated.
func (w *RunWriter) TransitionFromStart(obj ObjectID, inst int64, ts int64, state Sym, seq Seq, cpu CPU) error {
	return w.states.transition(obj, inst, ts, state, seq, cpu, true)
}

// Close closes the open interval of (obj, inst) at ts without opening
// another (the object reached a final state, or its state became unknown).
func (w *RunWriter) Close(obj ObjectID, inst int64, ts int64, seq Seq) error {
	if err := w.checkTime(w.bounds.line, ts); err != nil {
		return err
	}
	o, ok := w.states.take(stateKey{obj, inst})
	if !ok {
		return nil
	}
	return w.states.emit(obj, inst, o, ts, seq, false)
}

// CloseCut closes the open interval of (obj, inst) at ts and marks it
// truncated: it ended without the event that normally ends it (a kernel
// call whose thread was destroyed inside it), so its length is not that
// of a complete one.
func (w *RunWriter) CloseCut(obj ObjectID, inst int64, ts int64, seq Seq) error {
	if err := w.checkTime(w.bounds.line, ts); err != nil {
		return err
	}
	o, ok := w.states.take(stateKey{obj, inst})
	if !ok {
		return nil
	}
	return w.states.emit(obj, inst, o, ts, seq, true)
}

// Current returns the state of (obj, inst) and since when, if one is open.
func (w *RunWriter) Current(obj ObjectID, inst int64) (state Sym, since int64, ok bool) {
	o := w.states.open[stateKey{obj, inst}]
	if o == nil {
		return NoSym, 0, false
	}
	return o.state, o.start, true
}

// take removes the open interval of k and returns it.
func (t *stateTracker) take(k stateKey) (openInterval, bool) {
	p := t.open[k]
	if p == nil {
		return openInterval{}, false
	}
	delete(t.open, k)
	o := *p
	t.spare = append(t.spare, p)
	return o, true
}

func (t *stateTracker) transition(obj ObjectID, inst int64, ts int64, state Sym, seq Seq, cpu CPU, cutStart bool) error {
	// A state change's time is bounded as an event's (bounds.go); it
	// comes from the last event's line.
	if err := t.w.checkTime(t.w.bounds.line, ts); err != nil {
		return err
	}
	k := stateKey{obj, inst}
	p := t.open[k]
	if p != nil {
		o := *p
		if o.state == state && o.cpu == cpu {
			// Entering the state the object is in (a repeated write of the
			// same value, an alias action) continues the interval: an
			// interval is time in one state, not time between events.
			return nil
		}
		if err := t.emit(obj, inst, o, ts, seq, false); err != nil {
			return err
		}
		if ts < o.start {
			ts = o.start // see emit: the next interval starts where the clamped one ended
		}
	} else {
		if n := len(t.spare); n > 0 {
			p = t.spare[n-1]
			t.spare = t.spare[:n-1]
		} else {
			p = new(openInterval)
		}
		t.open[k] = p
	}
	*p = openInterval{state: state, start: ts, startSeq: seq, cpu: cpu, cutStart: cutStart}
	return nil
}

// emit writes one interval. A transition earlier than the start of the
// interval it closes (timestamps going backwards) is clamped to a zero
// length interval and reported once, counted thereafter.
func (t *stateTracker) emit(obj ObjectID, inst int64, o openInterval, end int64, endSeq Seq, cutEnd bool) error {
	w := t.w
	if end < o.start {
		if !t.hasClam {
			t.clamped = w.Diagf(Warning, 0, endSeq,
				"state transition at %d ns is earlier than the start of the interval it closes (%d ns): interval clamped to zero length", end, o.start)
			t.hasClam = true
		} else {
			w.DiagRepeat(t.clamped)
		}
		end = o.start
	}
	if err := w.sched.interval(obj, inst, &o, end, o.cutStart || cutEnd); err != nil {
		return err
	}
	if t.b == nil {
		t.b = newBatchCounting(w.mem, TableStateIntervals, w.syms, &w.badUTF8)
	}
	b := t.b
	b.i32(0).Append(w.info.RunID)
	b.i32(1).Append(int32(obj))
	b.i64(2).Append(inst)
	b.sym(3).put(o.state)
	b.i64(4).Append(o.start)
	b.i64(5).Append(end)
	b.i32(6).put(int32(o.cpu), o.cpu < 0)
	b.i64(7).put(int64(o.startSeq), o.startSeq < 0)
	b.i64(8).put(int64(endSeq), endSeq < 0)
	b.boolc(9).Append(o.cutStart || cutEnd)
	b.rows++
	part := lvPart{inst: inst, start: o.start, end: end, cpu: o.cpu, startSeq: o.startSeq, endSeq: endSeq, trunc: o.cutStart || cutEnd}
	if err := w.lv.interval(obj, &part, o.state); err != nil {
		return err
	}
	w.tree.add(obj, 0, int32(o.state), 0, end-o.start, part.trunc)
	if b.rows >= w.batchRows {
		return t.flush()
	}
	return nil
}

func (t *stateTracker) flush() error {
	if t.b == nil || t.b.rows == 0 {
		return t.w.out.err()
	}
	return t.w.putWithSymbols(TableStateIntervals, t.b.flushed())
}

// finish closes every open interval at the end of the trace, in the order
// they were opened so that the output is deterministic.
func (t *stateTracker) finish(lastTS int64) error {
	keys := make([]stateKey, 0, len(t.open))
	for k := range t.open {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := *t.open[keys[i]], *t.open[keys[j]]
		if a.startSeq != b.startSeq {
			return a.startSeq < b.startSeq
		}
		if keys[i].obj != keys[j].obj {
			return keys[i].obj < keys[j].obj
		}
		return keys[i].inst < keys[j].inst
	})
	for _, k := range keys {
		o := *t.open[k]
		end := max(lastTS, o.start)
		if err := t.emit(k.obj, k.inst, o, end, NoSeq, true); err != nil {
			t.release()
			return err
		}
	}
	clear(t.open)
	err := t.flush()
	t.release()
	return err
}

func (t *stateTracker) release() {
	if t.b != nil {
		t.b.release()
		t.b = nil
	}
}
