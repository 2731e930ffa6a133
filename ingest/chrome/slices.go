package chrome

import (
	"fmt"
	"math"

	"github.com/traceduck/traceduck/schema"
)

// Slices of a thread (B/E and X events) become state intervals of the
// thread: state = the slice's name, instance = its nesting depth (0 for a
// slice no other encloses). The depth of a slice is the number of slices
// of the thread that enclose it when slices are taken in the order of
// their start, the longer first at equal starts.
//
// B/E events come in time order per thread (the format requires it), but
// X events may come in any order: Chrome writes a complete event where
// it began, other writers (clang's -ftime-trace) where it ended, after
// the slices it encloses. So X slices wait in a heap per thread, ordered
// by start, and are placed (given their depth and written) when a B or E
// of the thread comes after them, when the heaps of all threads together
// hold more than maxPending slices (the thread holding the most places
// half of its own), or at the end of the trace. An X slice that arrives
// after slices it encloses were placed is placed where it would go among
// the slices still open, and reported.

// maxPending bounds the X slices waiting to be placed (about 40 bytes
// each): memory does not grow with the length of the trace.
var maxPending = 1 << 20

// maxDepth bounds the nesting of slices: deeper ones are events only.
const maxDepth = 1024

type pendingSlice struct {
	start, end int64 // end = math.MaxInt64 for a slice without end
	name, cat  schema.Sym
	seq        schema.Seq
	off        int64 // the event's byte offset, for diagnostics
	open       bool  // a B awaiting its E, or an X without dur
}

// placed is a slice on a thread's stack of enclosing slices; its depth is
// its index.
type placed struct {
	end  int64
	name schema.Sym
	open bool
	isB  bool
}

// track is a thread (or a process, for events without tid): its waiting
// X slices and its stack of placed slices that may enclose later ones.
type track struct {
	obj       schema.ObjectID
	kind      schema.Sym
	heap      []pendingSlice
	stack     []placed
	deepB     int // B slices deeper than maxDepth awaiting their E
	lastStart int64
	placedAny bool
}

func before(a, b *pendingSlice) bool {
	if a.start != b.start {
		return a.start < b.start
	}
	if a.end != b.end {
		return a.end > b.end
	}
	return a.seq < b.seq
}

func (t *track) push(s pendingSlice) {
	t.heap = append(t.heap, s)
	h := t.heap
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if !before(&h[i], &h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func (t *track) pop() pendingSlice {
	h := t.heap
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < n && before(&h[l], &h[m]) {
			m = l
		}
		if r < n && before(&h[r], &h[m]) {
			m = r
		}
		if m == i {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	t.heap = h
	return top
}

// sweep places the waiting slices that start before limit (at limit too
// when inclusive).
func (m *machine) sweep(t *track, limit int64, inclusive bool) error {
	for len(t.heap) > 0 && (t.heap[0].start < limit || inclusive && t.heap[0].start == limit) {
		s := t.pop()
		m.pending--
		if err := m.place(t, s, false); err != nil {
			return err
		}
	}
	return nil
}

// place gives a slice its depth and opens its interval (and closes it,
// when its end is known):
//  1. The placed slices that ended by its start leave the stack.
//  2. Its depth is the height of the stack; a slice that overlaps the
//     one on top without ending inside it is reported, and nested anyway.
//  3. Its interval is written, and it goes on the stack.
func (m *machine) place(t *track, s pendingSlice, isB bool) error {
	if t.placedAny && s.start < t.lastStart {
		m.once(findLate, schema.Warning, s.off,
			"a slice arrives after slices that start later on its thread were placed (complete events out of order beyond the reorder window): its depth is where it goes among the slices still open")
	}
	if !t.placedAny || s.start > t.lastStart {
		t.lastStart = s.start
	}
	t.placedAny = true
	for len(t.stack) > 0 {
		top := &t.stack[len(t.stack)-1]
		if top.open || top.end > s.start {
			break
		}
		t.stack = t.stack[:len(t.stack)-1]
	}
	depth := len(t.stack)
	if depth >= maxDepth {
		m.once(findTooDeep, schema.Warning, s.off, fmt.Sprintf("slices nested deeper than %d: the deeper ones are events only", maxDepth))
		if isB {
			t.deepB++
		}
		return nil
	}
	if depth > 0 {
		if top := t.stack[depth-1]; !top.open && !s.open && s.end > top.end {
			m.once(findOverlap, schema.Warning, s.off,
				"a slice starts inside another of its thread and ends after it (not nested): it is placed one level deeper")
		}
	}
	if s.cat != schema.NoSym {
		if k := [2]schema.Sym{t.kind, s.name}; !m.levels[k] {
			m.levels[k] = true
			m.w.StateLevel(m.w.String(t.kind), m.w.String(s.name), 0, m.w.String(s.cat))
		}
	}
	if err := m.w.Transition(t.obj, int64(depth), s.start, s.name, s.seq, schema.NoCPU); err != nil {
		return err
	}
	if !s.open {
		if err := m.w.Close(t.obj, int64(depth), s.end, s.seq); err != nil {
			return err
		}
	}
	t.stack = append(t.stack, placed{end: s.end, name: s.name, open: s.open, isB: isB})
	return nil
}

// begin applies a B event: the X slices that start at or before it are
// placed first, then it opens a slice.
func (m *machine) begin(t *track, ts int64, name, cat schema.Sym, seq schema.Seq, off int64) error {
	if err := m.sweep(t, ts, true); err != nil {
		return err
	}
	return m.place(t, pendingSlice{start: ts, end: math.MaxInt64, name: name, cat: cat, seq: seq, off: off, open: true}, true)
}

// end applies an E event: the X slices that start before it are placed
// first, then it closes the innermost open B slice of the thread
// (whatever its name, as Chrome's viewer does; a different name is
// reported).
func (m *machine) end(t *track, ts int64, hasName bool, name schema.Sym, seq schema.Seq, off int64) error {
	if err := m.sweep(t, ts, false); err != nil {
		return err
	}
	if t.deepB > 0 {
		t.deepB--
		return nil
	}
	k := len(t.stack) - 1
	for k >= 0 && !(t.stack[k].isB && t.stack[k].open) {
		k--
	}
	if k < 0 {
		m.once(findUnmatchedE, schema.Info, off, "an E event with no open B on its thread (the trace began inside the slice): kept as an event")
		return nil
	}
	b := &t.stack[k]
	if hasName && name != b.name && name != m.emptySym {
		m.once(findEMismatch, schema.Info, off, fmt.Sprintf("an E event named %q closes the slice %q open on its thread (E closes the innermost B whatever its name)", m.w.String(name), m.w.String(b.name)))
	}
	b.open, b.end = false, ts
	return m.w.Close(t.obj, int64(k), ts, seq)
}

// complete applies an X event: a slice from ts lasting dur (without dur,
// one that lasts until the end of the trace) waits to be placed.
func (m *machine) complete(t *track, ts, dur int64, hasDur bool, name, cat schema.Sym, seq schema.Seq, off int64) error {
	s := pendingSlice{start: ts, end: math.MaxInt64, name: name, cat: cat, seq: seq, off: off, open: !hasDur}
	if hasDur {
		if dur < 0 {
			m.once(findNegDur, schema.Warning, off, "a complete event (\"X\") with a negative dur: taken as 0")
			dur = 0
		}
		if ts > math.MaxInt64-1-dur {
			s.end = math.MaxInt64 - 1
		} else {
			s.end = ts + dur
		}
		// The end is placed later, maybe at the end of the file: its
		// bound is checked here, where the event is.
		if err := m.w.CheckTime(off, s.end); err != nil {
			return err
		}
		m.seeTime(s.end)
	}
	t.push(s)
	m.pending++
	if m.pending > maxPending {
		// The thread that holds the most places half of its slices.
		var big *track
		for _, u := range m.tracks {
			if big == nil || len(u.heap) > len(big.heap) {
				big = u
			}
		}
		for n := max(1, len(big.heap)/2); n > 0; n-- {
			s := big.pop()
			m.pending--
			if err := m.place(big, s, false); err != nil {
				return err
			}
		}
	}
	return nil
}
