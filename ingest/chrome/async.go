package chrome

import (
	"github.com/traceduck/traceduck/schema"
)

// asyncTrack is the object of nestable async events (b/e/n) with one
// category and id (and scope, and process for an id2.local): its slices
// are its states, instance = their nesting depth in the track, taken in
// file order.
type asyncTrack struct {
	obj   schema.ObjectID
	stack []schema.Sym // names of the open slices, outermost first
	deep  int          // b events deeper than maxDepth awaiting their e
}

// trackKey builds the map key of the event's async track in m.key: a tag
// (the kind of track), the part that names it (category or name), the id;
// false for an event without id (reported).
func (m *machine) trackKey(off int64, tag byte, part []byte) ([]byte, bool) {
	if !m.f.hasID {
		m.noID(off)
		return nil, false
	}
	k := append(m.key[:0], tag, 0)
	k = append(k, part...)
	k = append(k, 0)
	m.key = m.idKey(k)
	return m.key, true
}

// asyncTrack returns the track of the event, creating it; nil for an
// event without id (reported).
func (m *machine) asyncTrack(off int64) *asyncTrack {
	f := &m.f
	k, ok := m.trackKey(off, 'a', f.cat)
	if !ok {
		return nil
	}
	if a := m.asyncs[string(k)]; a != nil {
		return a
	}
	a := &asyncTrack{obj: m.w.NewObject("async", string(f.cat)+" "+string(f.id))}
	m.setIDAttrs(a.obj)
	m.asyncs[string(k)] = a
	m.asyncList = append(m.asyncList, a)
	return a
}

// begin opens a slice one level inside those open.
func (a *asyncTrack) begin(m *machine, ts int64, name schema.Sym, seq schema.Seq, off int64) error {
	if len(a.stack) >= maxDepth {
		m.once(findTooDeep, schema.Warning, off, "slices nested deeper than 1024: the deeper ones are events only")
		a.deep++
		return nil
	}
	a.stack = append(a.stack, name)
	return m.w.Transition(a.obj, int64(len(a.stack)-1), ts, name, seq, schema.NoCPU)
}

// end closes the innermost open slice of the same name (any, when the e
// has no name), as Chrome's viewer matches them; slices opened inside it
// and still open end with it, cut (reported).
func (a *asyncTrack) end(m *machine, ts int64, hasName bool, name schema.Sym, seq schema.Seq, off int64) error {
	if a.deep > 0 {
		a.deep--
		return nil
	}
	k := len(a.stack) - 1
	if hasName && name != m.emptySym {
		for k >= 0 && a.stack[k] != name {
			k--
		}
	}
	if k < 0 {
		m.once(findAsyncUnmatched, schema.Info, off, "an async end (\"e\") with no open async begin (\"b\") of its name, category and id: kept as an event")
		return nil
	}
	for d := len(a.stack) - 1; d > k; d-- {
		m.once(findAsyncCut, schema.Warning, off, "an async slice still open when an enclosing one ends: it ends there too (truncated)")
		if err := m.w.CloseCut(a.obj, int64(d), ts, seq); err != nil {
			return err
		}
	}
	a.stack = a.stack[:k]
	return m.w.Close(a.obj, int64(k), ts, seq)
}

// legacyAsync is the object of the older async events S/T/p/F, keyed by
// name and id as Chrome's viewer keys them: instance 0 is the slice from
// S to F, instance 1 its steps, named "name:step".
type legacyAsync struct {
	obj    schema.ObjectID
	open   bool
	name   schema.Sym
	lastTS int64 // the S or the last step, where a "p" step begins
}

func (m *machine) legacyTrack(off int64) *legacyAsync {
	f := &m.f
	k, ok := m.trackKey(off, 'l', f.name)
	if !ok {
		return nil
	}
	if l := m.legacy[string(k)]; l != nil {
		return l
	}
	l := &legacyAsync{obj: m.w.NewObject("async", string(f.name)+" "+string(f.id))}
	m.setIDAttrs(l.obj)
	m.legacy[string(k)] = l
	m.legacyList = append(m.legacyList, l)
	return l
}

// apply moves the slice:
//   - S opens it (a second S while it is open is ignored, as Chrome's
//     viewer does, and reported);
//   - T ("step into") starts the step args.step, which lasts until the
//     next step or the end;
//   - p ("step past") ends the step args.step, which began at the S or
//     the step before;
//   - F ends the slice and its step.
func (l *legacyAsync) apply(m *machine, ph byte, v []byte, ts int64, seq schema.Seq, off int64) error {
	w := m.w
	if ph == 'S' {
		if l.open {
			m.once(findLegacyReopen, schema.Warning, off, "an async start (\"S\") of a slice of that name and id already open: ignored")
			return nil
		}
		l.open, l.lastTS = true, ts
		l.name = w.SymBytes(m.f.name)
		return w.Transition(l.obj, 0, ts, l.name, seq, schema.NoCPU)
	}
	if !l.open {
		m.once(findLegacyNoStart, schema.Info, off, "an async step or finish (\"T\", \"p\", \"F\") with no open start (\"S\") of its name and id: kept as an event")
		return nil
	}
	switch ph {
	case 'T', 'p':
		step := m.stepName(v)
		start := ts
		if ph == 'p' {
			start = l.lastTS
		}
		if err := w.Transition(l.obj, 1, start, step, seq, schema.NoCPU); err != nil {
			return err
		}
		l.lastTS = ts
		if ph == 'p' {
			return w.Close(l.obj, 1, ts, seq)
		}
		return nil
	}
	// F
	l.open = false
	if err := w.Close(l.obj, 1, ts, seq); err != nil {
		return err
	}
	return w.Close(l.obj, 0, ts, seq)
}

// stepName is "name:step" for a T or p event, args.step as written (its
// text when it is a string).
func (m *machine) stepName(v []byte) schema.Sym {
	f := &m.f
	name := append(m.tmp[:0], f.name...)
	name = append(name, ':')
	if f.args >= 0 && m.ms[f.args].kind == kObject {
		mb := m.ms[f.args]
		args := v[mb.valLo:mb.valHi]
		r := jsonReader{b: args}
		m.ms2 = m.ms2[:0]
		if r.object(&m.ms2, 0) == nil {
			for _, a := range m.ms2 {
				if string(args[a.keyLo:a.keyHi]) == "step" {
					val := args[a.valLo:a.valHi]
					if a.kind == kString {
						name = unquote(name, val[1:len(val)-1])
					} else {
						name = append(name, val...)
					}
				}
			}
		}
	}
	m.tmp = name
	return m.w.SymBytes(name)
}
