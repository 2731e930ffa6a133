package chrome

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/traceduck/traceduck/schema"
)

// finding names a kind of diagnostic: each is one row of diagnostics
// (the first occurrence), counted after that.
type finding uint8

const (
	findNoCloseArray finding = iota
	findNoCloseObject
	findTrailingComma
	findCutEvent
	findMetaTooLarge
	findMetaTotal
	findEmptyEvent
	findSubNS
	findUnknownPhase
	findUnmatchedE
	findEMismatch
	findLate
	findOverlap
	findTooDeep
	findNegDur
	findNoID
	findAsyncUnmatched
	findAsyncCut
	findLegacyNoStart
	findLegacyReopen
	findCounterValue
	findObjectNoCreate
	findObjectRecreate
	findMetadataArgs
)

type onceKey struct {
	f      finding
	detail string
}

// ident is a pid, tid or id as the trace writes it: a number, or a string
// that is not one.
type ident struct {
	n   int64
	s   string
	set bool
}

func (id ident) String() string {
	if id.s != "" {
		return id.s
	}
	return strconv.FormatInt(id.n, 10)
}

// appendTo appends the ident's text.
func (id ident) appendTo(dst []byte) []byte {
	if id.s != "" {
		return append(dst, id.s...)
	}
	return strconv.AppendInt(dst, id.n, 10)
}

type threadKey struct{ pid, tid ident }

type process struct {
	obj schema.ObjectID
}

// fields are the members of one event the machine reads; the others are
// only copied into args.
type fields struct {
	ph            []byte
	name, cat     []byte
	hasName       bool
	hasCat        bool
	ts, dur       int64
	hasTS, hasDur bool
	pid, tid      ident
	id            []byte
	hasID         bool
	idScope       []byte // "local"/"global" of id2, and the scope member
	s             []byte // instant scope
	args          int    // index in ms of the args member, -1 when none
	tsAt          int    // where ts is, for messages
}

// machine turns events into rows: one events row each (metadata events
// excepted), and the state machines of slices, async slices, counters and
// objects.
type machine struct {
	w *schema.RunWriter

	ended       bool   // the file ended early (reported)
	displayUnit string // the trace's displayTimeUnit, if any

	procs   map[ident]*process
	threads map[threadKey]*track
	tracks  []*track
	pending int // slices waiting in the tracks' heaps

	asyncs     map[string]*asyncTrack
	asyncList  []*asyncTrack
	legacy     map[string]*legacyAsync
	legacyList []*legacyAsync
	series     map[string]*series
	seriesList []*series
	objs       map[string]*traced
	objList    []*traced
	global     schema.ObjectID

	traceEnd int64
	haveEnd  bool

	onceIDs map[onceKey]schema.DiagID
	levels  map[[2]schema.Sym]bool

	// scratch, reused for every event
	ms, ms2   []member
	f         fields
	ev        schema.Event
	args      []byte
	key       []byte
	tmp       []byte
	surrogate bool

	kindThread, kindProcess, stateAlive, emptySym schema.Sym
}

func newMachine(w *schema.RunWriter) *machine {
	m := &machine{
		w:       w,
		procs:   make(map[ident]*process),
		threads: make(map[threadKey]*track),
		asyncs:  make(map[string]*asyncTrack),
		legacy:  make(map[string]*legacyAsync),
		series:  make(map[string]*series),
		objs:    make(map[string]*traced),
		global:  schema.NoObject,
		onceIDs: make(map[onceKey]schema.DiagID),
		levels:  make(map[[2]schema.Sym]bool),
	}
	m.kindThread = w.Sym("thread")
	m.kindProcess = w.Sym("process")
	m.stateAlive = w.Sym("alive")
	m.emptySym = w.Sym("")
	w.SetTimeUnit("us", 1000)
	return m
}

// once records a finding the first time, and counts it after that.
func (m *machine) once(f finding, sev schema.Severity, off int64, msg string) {
	m.onceDetail(f, "", sev, off, msg)
}

func (m *machine) onceDetail(f finding, detail string, sev schema.Severity, off int64, msg string) {
	k := onceKey{f, detail}
	if id, ok := m.onceIDs[k]; ok {
		m.w.DiagRepeat(id)
		return
	}
	m.onceIDs[k] = m.w.Diag(sev, off, schema.NoSeq, msg)
}

// bad reports an event that cannot be read: the error that stops the
// ingest, or nil with --skip-bad (the event is then skipped).
func (m *machine) bad(off int64, format string, args ...any) error {
	return m.w.BadOffset(off, format, args...)
}

// event reads one event (v: the bytes of one JSON value of the event
// array, at file offset off) and applies it.
func (m *machine) event(v []byte, off int64) error {
	if v[0] != '{' {
		return m.bad(off, "expected an event object, found %s", found(v, 0))
	}
	r := jsonReader{b: v}
	m.ms = m.ms[:0]
	if err := r.object(&m.ms, 0); err != nil {
		se := err.(*syntaxError)
		return m.bad(off+int64(se.at), "%s", se.msg)
	}
	m.surrogate = r.surrogate
	if len(m.ms) == 0 {
		m.once(findEmptyEvent, schema.Info, off, "an empty event {}: skipped, as Trace Compass does")
		return nil
	}
	ok, err := m.readFields(v, off)
	if !ok {
		return err
	}
	f := &m.f
	if len(f.ph) == 1 && f.ph[0] == 'M' {
		return m.metadata(v, off)
	}
	// 1. The events row.
	tr := m.context()
	m.buildArgs(v)
	ev := &m.ev
	*ev = schema.Event{TS: f.ts, CPU: schema.NoCPU, Class: schema.NoSym, Event: schema.NoSym,
		Context: schema.NoObject, Object: schema.NoObject, SourceInstance: schema.NoInstance, TargetInstance: schema.NoInstance,
		Args: m.args, Line: off}
	if f.hasCat {
		ev.Class = m.w.SymBytes(f.cat)
	}
	if f.hasName {
		ev.Event = m.w.SymBytes(f.name)
	}
	if tr != nil {
		ev.Context, ev.Object = tr.obj, tr.obj
	}
	m.seeTime(f.ts)
	// The main object of the phases that have their own.
	ph := byte(0)
	if len(f.ph) == 1 {
		ph = f.ph[0]
	}
	var as *asyncTrack
	var la *legacyAsync
	var obj *traced
	switch ph {
	case 'i', 'I':
		switch string(f.s) {
		case "g":
			ev.Object = m.globalObject()
		case "p":
			if f.pid.set {
				ev.Object = m.proc(f.pid).obj
			}
		}
	case 'C':
		if f.pid.set {
			ev.Object = m.proc(f.pid).obj
		}
	case 'b', 'e', 'n':
		if as = m.asyncTrack(off); as != nil {
			ev.Object = as.obj
		}
	case 'S', 'T', 'p', 'F':
		if la = m.legacyTrack(off); la != nil {
			ev.Object = la.obj
		}
	case 'N', 'O', 'D':
		if obj = m.tracedObject(off); obj != nil {
			ev.Object = obj.obj
		}
	}
	seq, err := m.w.Event(ev)
	if err != nil {
		return err
	}

	// 2. The state machines.
	name := m.emptySym
	if f.hasName {
		name = ev.Event
	}
	switch ph {
	case 'B':
		if tr == nil {
			return nil
		}
		return m.begin(tr, f.ts, name, ev.Class, seq, off)
	case 'E':
		if tr == nil {
			return nil
		}
		return m.end(tr, f.ts, f.hasName, name, seq, off)
	case 'X':
		if tr == nil {
			return nil
		}
		return m.complete(tr, f.ts, f.dur, f.hasDur, name, ev.Class, seq, off)
	case 'C':
		return m.counter(v, seq, off)
	case 'b':
		if as != nil {
			return as.begin(m, f.ts, name, seq, off)
		}
	case 'e':
		if as != nil {
			return as.end(m, f.ts, f.hasName, name, seq, off)
		}
	case 'S', 'T', 'p', 'F':
		if la != nil {
			return la.apply(m, ph, v, f.ts, seq, off)
		}
	case 'N', 'O', 'D':
		if obj != nil {
			return obj.apply(m, ph, f.ts, seq, off)
		}
	case 'i', 'I', 'n', 's', 't', 'f', 'P', 'R', 'c', 'v', 'V', '(', ')':
		// events only: instants, flow steps (their id is in args), samples,
		// marks, clock syncs, memory dumps, context enter/leave
	default:
		m.onceDetail(findUnknownPhase, string(f.ph), schema.Info, off,
			fmt.Sprintf("phase %q is not one of the Trace Event Format's: kept as an event, no state", f.ph))
	}
	return nil
}

// readFields reads the members the machine uses into m.f; ok is false
// for an event that cannot be read (err is then the error that stops the
// ingest, nil with --skip-bad).
func (m *machine) readFields(v []byte, off int64) (ok bool, err error) {
	f := &m.f
	f.ph, f.name, f.cat, f.id, f.idScope, f.s = f.ph[:0], f.name[:0], f.cat[:0], f.id[:0], f.idScope[:0], f.s[:0]
	f.hasName, f.hasCat, f.hasTS, f.hasDur, f.hasID = false, false, false, false, false
	f.pid, f.tid = ident{}, ident{}
	f.args = -1
	hasPh := false
	for i := range m.ms {
		mb := &m.ms[i]
		key := v[mb.keyLo:mb.keyHi]
		if mb.keyEsc {
			m.key = unquote(m.key[:0], key)
			key = m.key
		}
		val := v[mb.valLo:mb.valHi]
		at := off + int64(mb.valLo)
		switch string(key) {
		case "ph":
			if mb.kind != kString || len(val) == 2 {
				return false, m.bad(at, "\"ph\": expected the event's phase (a string such as \"B\"), found %s", found(val, 0))
			}
			f.ph = unquote(f.ph[:0], val[1:len(val)-1])
			hasPh = true
		case "name":
			switch mb.kind {
			case kString:
				f.name = unquote(f.name[:0], val[1:len(val)-1])
			case kNumber:
				f.name = append(f.name[:0], val...)
			case kNull:
				continue
			default:
				return false, m.bad(at, "\"name\": expected a string, found %s", kindNames[mb.kind])
			}
			f.hasName = true
		case "cat":
			switch mb.kind {
			case kString:
				f.cat = unquote(f.cat[:0], val[1:len(val)-1])
				f.hasCat = true
			case kNull:
			default:
				return false, m.bad(at, "\"cat\": expected a string, found %s", kindNames[mb.kind])
			}
		case "ts", "dur":
			t, ok, outOfRange := m.micros(mb.kind, val, at)
			if !ok {
				what := "the event's time"
				if key[0] == 'd' {
					what = "the slice's duration"
				}
				if outOfRange {
					return false, m.bad(at, "%q: expected %s in microseconds, at most 9223372036854775.807 either way (the events table's int64 ns), found %s", key, what, found(val, 0))
				}
				return false, m.bad(at, "%q: expected %s in microseconds (a number or a numeric string), found %s", key, what, found(val, 0))
			}
			if key[0] == 't' {
				f.ts, f.hasTS, f.tsAt = t, true, mb.valLo
			} else {
				f.dur, f.hasDur = t, true
			}
		case "pid", "tid":
			id, ok := m.ident(mb.kind, val)
			if !ok {
				return false, m.bad(at, "%q: expected a number or a string, found %s", key, kindNames[mb.kind])
			}
			if key[0] == 'p' {
				f.pid = id
			} else {
				f.tid = id
			}
		case "id":
			switch mb.kind {
			case kString:
				f.id = unquote(f.id[:0], val[1:len(val)-1])
			case kNumber:
				f.id = append(f.id[:0], val...)
			default:
				return false, m.bad(at, "\"id\": expected a string or a number, found %s", kindNames[mb.kind])
			}
			f.hasID = true
		case "id2":
			// {"local": id} (an id of its process) or {"global": id}
			if mb.kind != kObject {
				return false, m.bad(at, "\"id2\": expected {\"local\": id} or {\"global\": id}, found %s", kindNames[mb.kind])
			}
			r := jsonReader{b: val}
			m.ms2 = m.ms2[:0]
			if err := r.object(&m.ms2, 0); err != nil {
				return false, m.bad(at, "\"id2\": %v", err)
			}
			for _, sub := range m.ms2 {
				sk := string(val[sub.keyLo:sub.keyHi])
				sv := val[sub.valLo:sub.valHi]
				if (sk == "local" || sk == "global") && (sub.kind == kString || sub.kind == kNumber) {
					if sub.kind == kString {
						f.id = unquote(f.id[:0], sv[1:len(sv)-1])
					} else {
						f.id = append(f.id[:0], sv...)
					}
					f.idScope = append(f.idScope[:0], sk...)
					f.hasID = true
				}
			}
			if !f.hasID {
				return false, m.bad(at, "\"id2\": expected {\"local\": id} or {\"global\": id}, found %s", found(val, 0))
			}
		case "scope":
			if mb.kind == kString {
				m.tmp = unquote(m.tmp[:0], val[1:len(val)-1])
				if len(f.idScope) > 0 {
					f.idScope = append(f.idScope, ' ')
				}
				f.idScope = append(f.idScope, m.tmp...)
			}
		case "s":
			if mb.kind == kString {
				f.s = unquote(f.s[:0], val[1:len(val)-1])
			}
		case "args":
			f.args = i
		}
	}
	if !hasPh {
		return false, m.bad(off, "expected \"ph\" (the event's phase) in every event, found an event without it")
	}
	if !f.hasTS {
		if len(f.ph) == 1 && f.ph[0] == 'M' {
			return true, nil
		}
		return false, m.bad(off, "expected \"ts\" (the event's time) in every event but metadata (\"ph\": \"M\"), found a %q event without it", f.ph)
	}
	// The times the event gives, its ts and a complete event's end, lie
	// within the run's bounds (schema/bounds.go), or the event is bad and
	// --skip-bad skips it whole, before any of it is applied.
	msg := m.w.TimeOutOfBounds(f.ts)
	if msg == "" && f.hasDur && f.dur > 0 && len(f.ph) == 1 && f.ph[0] == 'X' {
		end := int64(math.MaxInt64 - 1)
		if f.ts <= math.MaxInt64-1-f.dur {
			end = f.ts + f.dur
		}
		msg = m.w.TimeOutOfBounds(end)
	}
	if msg != "" {
		return false, m.bad(off, "%s", msg)
	}
	return true, nil
}

// micros reads ts or dur: a JSON number, or a string holding one.
func (m *machine) micros(kind int, val []byte, at int64) (t int64, ok, outOfRange bool) {
	var text []byte
	switch kind {
	case kNumber:
		text = val
	case kString:
		m.tmp = unquote(m.tmp[:0], val[1:len(val)-1])
		text = m.tmp
	default:
		return 0, false, false
	}
	t, sub, ok := microsToNS(text)
	if !ok {
		return 0, false, isDecimal(text)
	}
	if sub {
		m.once(findSubNS, schema.Info, at, "a time or duration with digits below 1 ns (more than three decimals of microseconds): the digits below 1 ns are dropped")
	}
	return t, true, false
}

// ident reads a pid or tid: an integer is a number; a string that holds
// one is that number; any other value is kept as its text.
func (m *machine) ident(kind int, val []byte) (ident, bool) {
	var text []byte
	switch kind {
	case kNumber:
		text = val
	case kString:
		m.tmp = unquote(m.tmp[:0], val[1:len(val)-1])
		text = m.tmp
	case kNull:
		return ident{}, true
	default:
		return ident{}, false
	}
	if n, err := strconv.ParseInt(string(text), 10, 64); err == nil {
		return ident{n: n, set: true}, true
	}
	if len(text) == 0 {
		return ident{s: `""`, set: true}, true
	}
	return ident{s: string(text), set: true}, true
}

// buildArgs writes events.args: the event's members that no column holds
// (ph, args, dur, id, s, bp, tts, ...), as written (blanks between tokens
// left out), in their order.
func (m *machine) buildArgs(v []byte) {
	b := append(m.args[:0], '{')
	n := 0
	for _, mb := range m.ms {
		key := v[mb.keyLo:mb.keyHi]
		if !mb.keyEsc {
			switch string(key) {
			case "name", "cat", "ts", "pid", "tid":
				continue
			}
		}
		if n > 0 {
			b = append(b, ',')
		}
		n++
		b = append(b, v[mb.keyLo-1:mb.keyHi+1]...)
		b = append(b, ':')
		b = appendCompact(b, v[mb.valLo:mb.valHi])
	}
	b = append(b, '}')
	if m.surrogate {
		fixSurrogates(b)
	}
	m.args = b
}

// rawJSON copies a value of the event for objects.attrs or runs.meta.
func (m *machine) rawJSON(val []byte) json.RawMessage {
	raw := append(json.RawMessage(nil), val...)
	if m.surrogate {
		fixSurrogates(raw)
	}
	return raw
}

func (m *machine) seeTime(t int64) {
	if !m.haveEnd || t > m.traceEnd {
		m.traceEnd, m.haveEnd = t, true
	}
}

// proc returns the process of a pid, creating it.
func (m *machine) proc(pid ident) *process {
	if p := m.procs[pid]; p != nil {
		return p
	}
	p := &process{obj: m.w.NewObject("process", pid.String())}
	if pid.s == "" {
		m.w.SetNativeID(p.obj, pid.n)
		m.w.SetPID(p.obj, pid.n)
	}
	m.procs[pid] = p
	return p
}

// context returns the track of the event's thread (of its process when
// it has no tid); nil when it has neither.
func (m *machine) context() *track {
	f := &m.f
	if !f.pid.set && !f.tid.set {
		return nil
	}
	return m.track(f.pid, f.tid)
}

func (m *machine) track(pid, tid ident) *track {
	k := threadKey{pid, tid}
	if t := m.threads[k]; t != nil {
		return t
	}
	t := &track{kind: m.kindThread}
	if !tid.set {
		t.obj = m.proc(pid).obj
		t.kind = m.kindProcess
	} else {
		var proc *process
		if pid.set {
			proc = m.proc(pid) // the process first: objects in order of appearance
		}
		name := pid.String() + "/" + tid.String()
		if !pid.set {
			name = tid.String()
		}
		t.obj = m.w.NewObject("thread", name)
		if tid.s == "" {
			m.w.SetNativeID(t.obj, tid.n)
		}
		if proc != nil {
			if pid.s == "" {
				m.w.SetPID(t.obj, pid.n)
			}
			m.w.SetParent(t.obj, proc.obj)
		}
	}
	m.threads[k] = t
	m.tracks = append(m.tracks, t)
	return t
}

func (m *machine) globalObject() schema.ObjectID {
	if m.global == schema.NoObject {
		m.global = m.w.NewObject("system", "global")
	}
	return m.global
}

// idKey appends the identity of an id: its scope (id2's local/global and
// the scope member), the pid for a process-local id, and the id.
func (m *machine) idKey(dst []byte) []byte {
	f := &m.f
	dst = append(dst, f.idScope...)
	dst = append(dst, 0)
	if string(f.idScope) == "local" || len(f.idScope) > 6 && string(f.idScope[:6]) == "local " {
		dst = f.pid.appendTo(dst)
	}
	dst = append(dst, 0)
	return append(dst, f.id...)
}

func (m *machine) setIDAttrs(obj schema.ObjectID) {
	f := &m.f
	m.w.SetAttr(obj, "id", string(f.id))
	if len(f.idScope) > 0 {
		m.w.SetAttr(obj, "scope", string(f.idScope))
	}
	if f.hasCat {
		m.w.SetAttr(obj, "cat", string(f.cat))
	}
	if f.pid.set {
		m.w.SetParent(obj, m.proc(f.pid).obj)
		if f.pid.s == "" {
			m.w.SetPID(obj, f.pid.n)
		}
	}
}

func (m *machine) noID(off int64) {
	m.onceDetail(findNoID, string(m.f.ph), schema.Info, off,
		fmt.Sprintf("a %q event without \"id\": kept as an event, no async slice or object", m.f.ph))
}

// metadata applies an "M" event: process and thread names, sort indexes
// and labels to the objects; it is no row of events (its ts, 0 or none,
// is no time in the trace).
func (m *machine) metadata(v []byte, off int64) error {
	f := &m.f
	if !f.pid.set && !f.tid.set {
		return nil
	}
	var args []byte
	m.ms2 = m.ms2[:0]
	if f.args >= 0 {
		mb := m.ms[f.args]
		args = v[mb.valLo:mb.valHi]
		if mb.kind == kObject {
			r := jsonReader{b: args}
			if err := r.object(&m.ms2, 0); err != nil {
				return m.bad(off+int64(mb.valLo), "\"args\": %v", err)
			}
		}
	}
	arg := func(name string) ([]byte, int) {
		for _, a := range m.ms2 {
			if string(args[a.keyLo:a.keyHi]) == name {
				return args[a.valLo:a.valHi], a.kind
			}
		}
		return nil, kNone
	}
	var obj schema.ObjectID
	if bytes.HasPrefix(f.name, []byte("thread")) {
		if !f.tid.set {
			return nil
		}
		obj = m.track(f.pid, f.tid).obj
	} else {
		if !f.pid.set {
			return nil
		}
		obj = m.proc(f.pid).obj
	}
	switch string(f.name) {
	case "process_name", "thread_name":
		val, kind := arg("name")
		if kind != kString {
			m.onceDetail(findMetadataArgs, string(f.name), schema.Info, off,
				fmt.Sprintf("a %s metadata event without a string args.name: ignored", f.name))
			return nil
		}
		m.w.SetName(obj, string(unquote(m.tmp[:0], val[1:len(val)-1])))
	case "process_sort_index", "thread_sort_index":
		if val, kind := arg("sort_index"); kind == kNumber {
			m.w.SetAttr(obj, "sort_index", m.rawJSON(val))
		}
	case "process_labels":
		if val, kind := arg("labels"); kind == kString {
			m.w.SetAttr(obj, "labels", string(unquote(m.tmp[:0], val[1:len(val)-1])))
		}
	default:
		if args != nil && len(f.name) > 0 {
			m.w.SetAttr(obj, string(f.name), m.rawJSON(args))
		}
	}
	return nil
}

// counter applies a "C" event: each member of args is a series, a
// "counter" object whose value is its state; a value that is not a number
// is left out.
func (m *machine) counter(v []byte, seq schema.Seq, off int64) error {
	f := &m.f
	if f.args < 0 || m.ms[f.args].kind != kObject {
		m.once(findCounterValue, schema.Info, off, "a counter (\"C\") event whose args are not an object of numbers: kept as an event, no value")
		return nil
	}
	mb := m.ms[f.args]
	args := v[mb.valLo:mb.valHi]
	r := jsonReader{b: args}
	m.ms2 = m.ms2[:0]
	if err := r.object(&m.ms2, 0); err != nil {
		return m.bad(off+int64(mb.valLo), "\"args\": %v", err)
	}
	for _, a := range m.ms2 {
		val := args[a.valLo:a.valHi]
		var num []byte
		switch a.kind {
		case kNumber:
			num = val
		case kString:
			num = unquote(m.tmp[:0], val[1:len(val)-1])
		}
		text, ok := m.number(num)
		if !ok {
			m.once(findCounterValue, schema.Info, off+int64(mb.valLo+a.valLo),
				fmt.Sprintf("counter %s: series %s has a value that is not a number (%s): left out", f.name, args[a.keyLo:a.keyHi], found(val, 0)))
			continue
		}
		sr := m.seriesOf(args[a.keyLo:a.keyHi], a.keyEsc)
		if err := m.w.Transition(sr.obj, 0, f.ts, m.w.SymBytes(text), seq, schema.NoCPU); err != nil {
			return err
		}
		sr.set = true
	}
	return nil
}

// number normalizes a counter value: an integer as written, any other
// number as Go's shortest float formatting (so that 1.50 and 1.5 are one
// value); false when b is no number.
func (m *machine) number(b []byte) ([]byte, bool) {
	if len(b) == 0 {
		return nil, false
	}
	if n, err := strconv.ParseInt(string(b), 10, 64); err == nil {
		m.tmp = strconv.AppendInt(m.tmp[:0], n, 10)
		return m.tmp, true
	}
	x, err := strconv.ParseFloat(string(b), 64)
	if err != nil || math.IsInf(x, 0) || math.IsNaN(x) {
		return nil, false
	}
	m.tmp = strconv.AppendFloat(m.tmp[:0], x, 'g', -1, 64)
	return m.tmp, true
}

// series is one series of a counter: its value intervals.
type series struct {
	obj schema.ObjectID
	set bool
}

func (m *machine) seriesOf(rawKey []byte, esc bool) *series {
	f := &m.f
	k := f.pid.appendTo(m.key[:0])
	k = append(k, 0)
	k = append(k, f.name...)
	k = append(k, 0)
	if f.hasID {
		k = append(k, f.id...)
	}
	k = append(k, 0)
	k = append(k, rawKey...)
	m.key = k
	if sr := m.series[string(k)]; sr != nil {
		return sr
	}
	key := rawKey
	if esc {
		key = unquote(nil, rawKey)
	}
	counter := string(f.name)
	if f.hasID {
		counter += "[" + string(f.id) + "]"
	}
	sr := &series{obj: m.w.NewObject("counter", counter+" "+string(key))}
	m.w.SetAttr(sr.obj, "counter", counter)
	m.w.SetAttr(sr.obj, "series", string(key))
	if f.hasCat {
		m.w.SetAttr(sr.obj, "cat", string(f.cat))
	}
	if f.pid.set {
		m.w.SetParent(sr.obj, m.proc(f.pid).obj)
		if f.pid.s == "" {
			m.w.SetPID(sr.obj, f.pid.n)
		}
	}
	m.series[string(k)] = sr
	m.seriesList = append(m.seriesList, sr)
	return sr
}

// traced is an object of the N/O/D events: each life (N to D) is an
// interval of state "alive", instance = the life's number from 0.
type traced struct {
	obj   schema.ObjectID
	alive bool
	life  int64
	lives int64
}

func (m *machine) tracedObject(off int64) *traced {
	f := &m.f
	if !f.hasID {
		m.noID(off)
		return nil
	}
	k := append(m.key[:0], 'o', 0)
	k = f.pid.appendTo(k)
	k = append(k, 0)
	k = append(k, f.name...)
	k = append(k, 0)
	k = m.idKey(k)
	m.key = k
	if o := m.objs[string(k)]; o != nil {
		return o
	}
	o := &traced{obj: m.w.NewObject("object", string(f.name)+" "+string(f.id))}
	m.setIDAttrs(o.obj)
	m.objs[string(k)] = o
	m.objList = append(m.objList, o)
	return o
}

func (o *traced) apply(m *machine, ph byte, ts int64, seq schema.Seq, off int64) error {
	switch ph {
	case 'N':
		if o.alive {
			m.once(findObjectRecreate, schema.Warning, off, "an object created again (\"N\") while alive: its life ends there (truncated)")
			if err := m.w.CloseCut(o.obj, o.life, ts, seq); err != nil {
				return err
			}
		}
		o.life, o.alive = o.lives, true
		o.lives++
		return m.w.Transition(o.obj, o.life, ts, m.stateAlive, seq, schema.NoCPU)
	case 'D':
		if !o.alive {
			m.once(findObjectNoCreate, schema.Info, off, "an object deleted (\"D\") or snapshot (\"O\") that the trace did not create (\"N\"): kept as an event")
			return nil
		}
		o.alive = false
		return m.w.Close(o.obj, o.life, ts, seq)
	default: // 'O': a snapshot, its args are the event's
		if !o.alive {
			m.once(findObjectNoCreate, schema.Info, off, "an object deleted (\"D\") or snapshot (\"O\") that the trace did not create (\"N\"): kept as an event")
		}
	}
	return nil
}

// finish places the slices still waiting, and closes what is still open
// at the end of the trace (the largest time of any event or slice end),
// marked truncated.
func (m *machine) finish() error {
	for _, t := range m.tracks {
		if err := m.sweep(t, math.MaxInt64, true); err != nil {
			return err
		}
	}
	if !m.haveEnd {
		return nil
	}
	end := m.traceEnd
	for _, t := range m.tracks {
		for d := len(t.stack) - 1; d >= 0; d-- {
			if t.stack[d].open {
				if err := m.w.CloseCut(t.obj, int64(d), end, schema.NoSeq); err != nil {
					return err
				}
			}
		}
	}
	for _, a := range m.asyncList {
		for d := len(a.stack) - 1; d >= 0; d-- {
			if err := m.w.CloseCut(a.obj, int64(d), end, schema.NoSeq); err != nil {
				return err
			}
		}
	}
	for _, l := range m.legacyList {
		if l.open {
			if err := m.w.CloseCut(l.obj, 1, end, schema.NoSeq); err != nil {
				return err
			}
			if err := m.w.CloseCut(l.obj, 0, end, schema.NoSeq); err != nil {
				return err
			}
		}
	}
	for _, sr := range m.seriesList {
		if sr.set {
			if err := m.w.CloseCut(sr.obj, 0, end, schema.NoSeq); err != nil {
				return err
			}
		}
	}
	for _, o := range m.objList {
		if o.alive {
			if err := m.w.CloseCut(o.obj, o.life, end, schema.NoSeq); err != nil {
				return err
			}
		}
	}
	return nil
}
