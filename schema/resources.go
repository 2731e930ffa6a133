package schema

import (
	"fmt"
	"sort"
)

// The resource model (docs/semantics.md, "Resources: holds and waits"):
// one tracker, fed by every format with the same few verbs, decides who
// holds each resource (a semaphore, mutex, lock, queue, ...) and who waits
// for it, and writes each hold and each wait as a row of the table
// resource_intervals, from which the views resource_holds and
// resource_waits read.
//
// The verbs, each for one resource r and one actor a (the task, thread or
// ISR that acts on it), at ts, caused by the event seq:
//
//   - Request: a asks for r. Nothing is written; if the request blocks
//     (Wait), the wait starts at the request, not at the Wait.
//   - Wait: a's request blocked: a wait starts (at the pending request, if
//     any, else at ts). A Wait while a already waits for r changes
//     nothing.
//   - Assign: a got r: a hold starts, and a's wait for r, if one is open,
//     ends (ended = "assigned"). Assigning r to a again while a holds it
//     (a recursive mutex, a second unit of a counting semaphore) nests:
//     the hold lasts until the Release that gives back the last one.
//   - Release: a gives r back: the hold ends (ended = "released").
//   - GiveUp: a stops waiting without getting r (a timeout, a failed try):
//     the wait ends (ended = "gave_up").
//   - Woken: a, waiting for r, left the state it was blocked in (the
//     kernel made it ready); the Assign or GiveUp that follows (the
//     return of its call, which tells the result) ends the wait at the
//     wake-up rather than at its own time. A Wait before it (a is
//     blocked again) cancels it.
//
// A resource declared unowned (Declare, ResourceSpec.Unowned: an ITRON or
// POSIX counting semaphore, an event flag, a condition variable: whoever
// gives it, no task owns it) has waits and no holds: Assign ends a wait
// and starts no hold, Release changes nothing.
//
// Several actors hold r at once when the format assigns it to several (a
// counting semaphore); the tracker does not know capacities, the trace
// tells who got the resource.
//
// Truncation. An interval still open at the end of the trace ends at the
// run's last event, truncated (ended NULL); a wait woken whose result
// the trace did not tell ends at the wake-up, truncated too. A Release (GiveUp) by an
// actor of which the tracker has heard nothing yet for r says that the
// hold (the wait) began before the trace did: it starts at the run's first
// event, truncated (start_seq NULL). A Release or GiveUp that contradicts
// what was seen before (a holds nothing, waits for nothing, and r was
// heard of for a before) is a warning diagnostic, and changes nothing.
//
// Bounds (each with a warning diagnostic, once, counted after that; the
// verb is then ignored):
//
//   - MaxResources resources per run;
//   - MaxResourceActors actors per resource (holders, waiters, requesters
//     and those it has heard of);
//   - MaxResourceActorsPerRun actors over all the resources of a run.
//
// Memory is then at most about 100 bytes per actor, 100 MB for a run at
// the bound, whatever the length of the trace.
const (
	MaxResources            = 1 << 16
	MaxResourceActors       = 4096
	MaxResourceActorsPerRun = 1 << 20
)

// actorsPerRun is MaxResourceActorsPerRun; a test lowers it.
var actorsPerRun = MaxResourceActorsPerRun

// Ended values of resource_intervals.
const (
	endAssigned = "assigned"
	endReleased = "released"
	endGaveUp   = "gave_up"
)

type resourceRow struct {
	kind    Sym // NoSym: the object's kind when a row is written
	unowned bool
	actors  map[ObjectID]*actorRow
}

// ResourceSpec says what a resource is.
type ResourceSpec struct {
	// Kind is resource_kind: semaphore, mutex, lock, queue, ...; "" keeps
	// the object's kind.
	Kind string
	// Unowned: nobody owns the resource (a counting semaphore that any
	// task or handler signals, an event flag, a condition variable): it
	// has waits and no holds.
	Unowned bool
}

// actorRow is what one actor does with one resource.
type actorRow struct {
	holds    int32 // assignments not yet released (nested)
	hold     openResInterval
	waiting  bool
	wait     openResInterval
	request  bool
	reqTS    int64
	reqSeq   Seq
	reqInst  int64
	holdSeen bool // it is known what a holds of r (it was assigned, released, ...)
	waitSeen bool
	woken    bool // the wait's blocking ended at wokenTS (Woken)
	wokenTS  int64
	wokenSeq Seq
}

type openResInterval struct {
	start int64
	seq   Seq
	inst  int64
	cut   bool // began before the trace
}

// ResourceTracker is the run's resource model; RunWriter.Resources returns
// it.
type ResourceTracker struct {
	w         *RunWriter
	resources map[ObjectID]*resourceRow
	actors    int
	b         *batch
	symHold   Sym
	symWait   Sym
	symEnd    [3]Sym
	diags     map[string]DiagID
}

// Resources returns the run's resource tracker.
func (w *RunWriter) Resources() *ResourceTracker {
	t := &w.resources
	if t.w == nil {
		t.w = w
		t.resources = make(map[ObjectID]*resourceRow)
		t.symHold, t.symWait = w.Sym("hold"), w.Sym("wait")
		t.symEnd = [3]Sym{w.Sym(endAssigned), w.Sym(endReleased), w.Sym(endGaveUp)}
		t.diags = make(map[string]DiagID)
	}
	return t
}

// Declare says what resource r is: its kind (semaphore, mutex, lock,
// queue, ...: resource_kind of its rows; without it, a row takes the kind
// of r's object when it is written), and whether it has an owner.
func (t *ResourceTracker) Declare(r ObjectID, spec ResourceSpec) {
	if res := t.resource(r); res != nil {
		res.kind = NoSym
		if spec.Kind != "" {
			res.kind = t.w.Sym(spec.Kind)
		}
		res.unowned = spec.Unowned
	}
}

// Request says that a asks for r at ts; a later Wait of a for r starts the
// wait here. A request while a waits for r changes nothing; a new one
// replaces one still pending (a request that neither blocked nor was
// granted: a failed try).
func (t *ResourceTracker) Request(r, a ObjectID, inst, ts int64, seq Seq) error {
	if err := t.w.checkTime(t.w.bounds.line, ts); err != nil {
		return err
	}
	x := t.actor(r, a)
	if x == nil || x.waiting {
		return nil
	}
	x.request, x.reqTS, x.reqSeq, x.reqInst = true, ts, seq, inst
	return nil
}

// Wait says that a's request for r blocked at ts: a waits from its pending
// request (else from ts) until Assign or GiveUp.
func (t *ResourceTracker) Wait(r, a ObjectID, inst, ts int64, seq Seq) error {
	if err := t.w.checkTime(t.w.bounds.line, ts); err != nil {
		return err
	}
	x := t.actor(r, a)
	if x == nil {
		return nil
	}
	if x.waiting {
		x.woken = false // blocked again
		return nil
	}
	x.waiting, x.waitSeen, x.woken = true, true, false
	x.wait = openResInterval{start: ts, seq: seq, inst: inst}
	if x.request {
		x.wait.start, x.wait.seq = x.reqTS, x.reqSeq
		if inst == NoInstance {
			x.wait.inst = x.reqInst
		}
		x.request = false
	}
	return nil
}

// Assign says that a got r at ts: its wait, if any, ends; a hold starts
// (or nests in the one a has).
func (t *ResourceTracker) Assign(r, a ObjectID, inst, ts int64, seq Seq) error {
	if err := t.w.checkTime(t.w.bounds.line, ts); err != nil {
		return err
	}
	x := t.actor(r, a)
	if x == nil {
		return nil
	}
	x.request = false
	if x.waiting {
		x.waiting = false
		end, endSeq := x.wokenAt(ts, seq)
		if err := t.emit(r, a, false, x.wait, end, endSeq, t.symEnd[0]); err != nil {
			return err
		}
	}
	x.holdSeen, x.waitSeen = true, true
	if t.resources[r].unowned {
		return nil
	}
	if x.holds > 0 {
		if x.holds < 1<<30 {
			x.holds++
		}
		return nil
	}
	x.holds = 1
	x.hold = openResInterval{start: ts, seq: seq, inst: inst}
	return nil
}

// Release says that a gave r back at ts: its hold ends (when a has given
// back every assignment it nested).
func (t *ResourceTracker) Release(r, a ObjectID, inst, ts int64, seq Seq) error {
	if err := t.w.checkTime(t.w.bounds.line, ts); err != nil {
		return err
	}
	x := t.actor(r, a)
	if x == nil || t.resources[r].unowned {
		return nil
	}
	switch {
	case x.holds > 1:
		x.holds--
		return nil
	case x.holds == 1:
		x.holds = 0
		return t.emit(r, a, true, x.hold, ts, seq, t.symEnd[1])
	case !x.holdSeen:
		// held since before the trace began
		x.holdSeen = true
		return t.emit(r, a, true, openResInterval{start: t.w.firstTS, seq: NoSeq, inst: inst, cut: true}, ts, seq, t.symEnd[1])
	}
	t.diag("a release of a resource its actor does not hold (it released it before, or was never assigned it after the trace began): no hold")
	return nil
}

// GiveUp says that a stopped waiting for r at ts without getting it.
func (t *ResourceTracker) GiveUp(r, a ObjectID, inst, ts int64, seq Seq) error {
	if err := t.w.checkTime(t.w.bounds.line, ts); err != nil {
		return err
	}
	x := t.actor(r, a)
	if x == nil {
		return nil
	}
	x.request = false
	switch {
	case x.waiting:
		x.waiting = false
		end, endSeq := x.wokenAt(ts, seq)
		return t.emit(r, a, false, x.wait, end, endSeq, t.symEnd[2])
	case !x.waitSeen:
		x.waitSeen = true
		return t.emit(r, a, false, openResInterval{start: t.w.firstTS, seq: NoSeq, inst: inst, cut: true}, ts, seq, t.symEnd[2])
	}
	t.diag("an actor gives up waiting for a resource it does not wait for: no wait")
	return nil
}

// Woken says that a, waiting for r, was woken at ts: the wait ends there
// when the next verb is Assign or GiveUp. It changes nothing when a does
// not wait for r.
func (t *ResourceTracker) Woken(r, a ObjectID, ts int64, seq Seq) error {
	if err := t.w.checkTime(t.w.bounds.line, ts); err != nil {
		return err
	}
	x := t.actor(r, a)
	if x == nil || !x.waiting {
		return nil
	}
	x.woken, x.wokenTS, x.wokenSeq = true, ts, seq
	return nil
}

// wokenAt is the end of a's wait, ended by a verb at ts: the wake-up, if
// there was one.
func (x *actorRow) wokenAt(ts int64, seq Seq) (int64, Seq) {
	if x.woken {
		x.woken = false
		return x.wokenTS, x.wokenSeq
	}
	return ts, seq
}

// Holds returns how many assignments of r a holds (nested ones counted).
func (t *ResourceTracker) Holds(r, a ObjectID) int {
	if res := t.resources[r]; res != nil {
		if x := res.actors[a]; x != nil {
			return int(x.holds)
		}
	}
	return 0
}

// Waiting reports whether a waits for r.
func (t *ResourceTracker) Waiting(r, a ObjectID) bool {
	if res := t.resources[r]; res != nil {
		if x := res.actors[a]; x != nil {
			return x.waiting
		}
	}
	return false
}

func (t *ResourceTracker) resource(r ObjectID) *resourceRow {
	if r <= 0 || int(r) > len(t.w.objects) {
		panic("schema: no resource object")
	}
	res := t.resources[r]
	if res == nil {
		if len(t.resources) >= MaxResources {
			t.diag(fmt.Sprintf("more than %d resources in one run: the holds and waits of the others are not tracked", MaxResources))
			return nil
		}
		res = &resourceRow{kind: NoSym, actors: make(map[ObjectID]*actorRow)}
		t.resources[r] = res
	}
	return res
}

func (t *ResourceTracker) actor(r, a ObjectID) *actorRow {
	if a <= 0 || int(a) > len(t.w.objects) {
		panic("schema: no actor object")
	}
	res := t.resource(r)
	if res == nil {
		return nil
	}
	x := res.actors[a]
	if x == nil {
		switch {
		case len(res.actors) >= MaxResourceActors:
			t.diag(fmt.Sprintf("more than %d tasks or threads act on one resource: the holds and waits of the others are not tracked", MaxResourceActors))
			return nil
		case t.actors >= actorsPerRun:
			t.diag(fmt.Sprintf("more than %d (resource, task or thread) pairs in one run: the holds and waits of the others are not tracked", MaxResourceActorsPerRun))
			return nil
		}
		t.actors++
		x = &actorRow{}
		res.actors[a] = x
	}
	return x
}

// diag reports a finding once, counting it after that, at the last
// event's line.
func (t *ResourceTracker) diag(msg string) {
	if id, ok := t.diags[msg]; ok {
		t.w.DiagRepeat(id)
		return
	}
	t.diags[msg] = t.w.Diag(Warning, t.w.bounds.line, t.w.seq, msg)
}

// emit writes one hold (hold true) or wait of actor a for resource r,
// open since o, ending at end (endSeq NoSeq and ended NoSym: cut by the
// end of the trace). An end before the start (timestamps that go
// backwards) is clamped to a zero-length interval, with a warning.
func (t *ResourceTracker) emit(r, a ObjectID, hold bool, o openResInterval, end int64, endSeq Seq, ended Sym) error {
	w := t.w
	if end < o.start {
		t.diag("a hold or wait ends before it starts (timestamps go backwards): clamped to zero length")
		end = o.start
	}
	if t.b == nil {
		t.b = newBatchCounting(w.mem, TableResourceIntervals, w.syms, &w.badUTF8)
		t.b.reserve(min(w.batchRows, 1024))
	}
	kind := t.resources[r].kind
	if kind == NoSym {
		kind = w.obj(r).kind
	}
	rel := t.symWait
	if hold {
		rel = t.symHold
	}
	b := t.b
	b.i32(0).Append(w.info.RunID)
	b.i32(1).Append(int32(r))
	b.dict(2).put(kind)
	b.dict(3).put(rel)
	b.i32(4).Append(int32(a))
	b.i64(5).put(o.inst, o.inst == NoInstance)
	b.i64(6).Append(o.start)
	b.i64(7).Append(end)
	b.i64(8).Append(end - o.start)
	b.i64(9).put(int64(o.seq), o.seq < 0)
	b.i64(10).put(int64(endSeq), endSeq < 0)
	b.dict(11).put(ended)
	b.boolc(12).Append(o.cut || endSeq < 0)
	b.rows++
	if b.rows >= w.batchRows {
		return w.flushTable(TableResourceIntervals, b)
	}
	return nil
}

// finish ends every hold and wait still open at the run's last event,
// truncated, in the order they began.
func (t *ResourceTracker) finish(lastTS int64) error {
	if t.w == nil {
		return nil
	}
	type open struct {
		r, a ObjectID
		hold bool
		o    openResInterval
		end  int64
	}
	var all []open
	for r, res := range t.resources {
		for a, x := range res.actors {
			if x.holds > 0 {
				all = append(all, open{r, a, true, x.hold, lastTS})
			}
			if x.waiting {
				// a wait woken whose result the trace did not tell ends at
				// the wake-up, truncated all the same
				end := lastTS
				if x.woken {
					end = x.wokenTS
				}
				all = append(all, open{r, a, false, x.wait, end})
			}
		}
	}
	sort.Slice(all, func(i, j int) bool {
		x, y := all[i], all[j]
		switch {
		case x.o.seq != y.o.seq:
			return x.o.seq < y.o.seq
		case x.r != y.r:
			return x.r < y.r
		case x.a != y.a:
			return x.a < y.a
		}
		return x.hold && !y.hold
	})
	for _, o := range all {
		if err := t.emit(o.r, o.a, o.hold, o.o, max(o.end, o.o.start), NoSeq, NoSym); err != nil {
			return err
		}
	}
	clear(t.resources)
	return t.w.flushTable(TableResourceIntervals, t.b)
}

func (t *ResourceTracker) release() {
	if t.b != nil {
		t.b.release()
		t.b = nil
	}
}
