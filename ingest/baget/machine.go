package baget

import (
	"sort"
	"strconv"

	"github.com/traceduck/traceduck/schema"
)

// The machine turns the records of a log, in file order, into the run's tables (docs/baget-format.md
// 1.5–1.7, 2.5–2.7):
//
//   - objects: the creation records of the service blocks first, then
//     every object the events name (main objects and the objects of state
//     rules), in one map keyed by (kind, pid, oid) (seed 3.5). native_id is
//     the oid, pid the process id; a user object named by text (main_kind
//     with a char-array main field) has the text as its name and no
//     native_id. A field that is not the main one carries no pid: its
//     object is found by (kind, oid) among the objects already known, and
//     registered with pid 0 when none is.
//   - events: every event (essential record of a data block) in order; class = the event group,
//     object = the main object, context = the <event context=> field's
//     object if declared, else what ran on the event's CPU just before the
//     event's rules apply (the thread of cpuThr, the interrupt of cpuIntr;
//     none when idle or unknown); src_line = the record's byte offset.
//   - states: the description's <state> and <cpu> rules, in document order,
//     starting from every object and CPU in the unknown state (a wrapped log
//     starts mid-stream): no interval opens until a rule sets a state, and a
//     from= condition is tested against "unknown" as well. Each applied rule
//     closes the interval it ends and opens the next, even into the same
//     state, so that an interval is the time between two transitions.
//   - CPU intervals are intervals of the CPU object (kind cpu, native_id =
//     the CPU number); their instance is the object_id of the thread
//     (cpuThr) or interrupt (cpuIntr) that held the CPU, 0 for cpuIdle.
//     Thread (object) intervals have instance 0.
//
// traceduck's choices where the docs are silent: an object-id field whose
// value is 0 names no object in a rule (THREAD_SWITCH prev=0 from an idle
// CPU), so such a rule does not apply; a `return` while the CPU state is
// unknown leaves it unknown silently (a wrapped log may start inside a
// handler); a `return` from a known state with no interrupt to return to,
// or a cpuIntr nested deeper than 64, is a warning and the CPU state
// becomes unknown. Rules of one event apply in document order (by line; on
// one line, <state> rules before <cpu> rules).

// maxNesting bounds nested interrupts on one CPU (docs 2.7).
const maxNesting = 64

// Objects are keyed by integers (kind interned per description node at
// the start): a record's lookups hash no strings and allocate nothing.
type objKey struct {
	kind int32
	pid  int64
	oid  uint64
}

type kindOID struct {
	kind int32
	oid  uint64
}

type kindPID struct {
	kind int32
	pid  int64
}

// cpuState is one CPU's known state: st "" is unknown.
type cpuState struct {
	id    schema.ObjectID
	st    string
	sym   schema.Sym      // of st
	obj   schema.ObjectID // thread or interrupt; NoObject for idle
	stack []savedCPU
}

type savedCPU struct {
	st  string
	sym schema.Sym
	obj schema.ObjectID
}

// rule is one <state> (cpu false) or <cpu> rule of an event, in order,
// with the kind of its field's objects and the symbol of its target.
type rule struct {
	cpu  bool
	i    int
	kind int32
	to   schema.Sym
}

type evInfo struct {
	class, name schema.Sym
	rules       []rule
	mainKind    int32 // main object's kind
	ctxKind     int32 // context= field's kind
	createKind  int32 // <creates> field's kind
	parentKind  int32 // <creates parent=> kind
}

// maxDenseCPU bounds the CPU numbers looked up in a slice; others go
// through a map.
const maxDenseCPU = 1024

type machine struct {
	w *schema.RunWriter
	d *Description

	kindIDs   map[string]int32 // setup only
	kindNames []string         // by kind id
	thread    int32            // kind id of "thread"
	cpuKind   int32            // kind id of "cpu"

	objs  map[objKey]schema.ObjectID
	texts map[kindPID]map[string]schema.ObjectID // user objects named by text
	byOID map[kindOID]schema.ObjectID
	kinds []int32  // kind of each object, by ObjectID-1 (CPU objects included)
	objSt []string // state of each object ("" unknown), by ObjectID-1
	cpus  map[int64]*cpuState
	dense []*cpuState // cpus for 0 <= n < maxDenseCPU
	evs   []evInfo
	idle  schema.Sym
	args  Args
	ev    schema.Event // the event being written, reused

	prevTS   int64         // latest time of an event with a time field
	haveTS   bool          // prevTS is set
	backDiag schema.DiagID // the warning of times going backwards, once made
	back     bool          // backDiag is made
}

func newMachine(w *schema.RunWriter, d *Description) *machine {
	m := &machine{w: w, d: d, kindIDs: map[string]int32{},
		objs: map[objKey]schema.ObjectID{}, texts: map[kindPID]map[string]schema.ObjectID{},
		byOID: map[kindOID]schema.ObjectID{}, cpus: map[int64]*cpuState{}}
	m.thread = m.kindID("thread")
	m.cpuKind = m.kindID("cpu")
	m.idle = w.Sym(CPUIdle)
	for _, ev := range m.d.Events {
		info := evInfo{class: w.Sym(orDefault(ev.Group, "other")), name: w.Sym(ev.Name)}
		mainKind := ev.MainKind
		if mainKind == "" && ev.Main != nil && ev.Main.Base != nil {
			mainKind = ev.Main.Base.ObjKind
		}
		info.mainKind = m.kindID(orDefault(mainKind, "object"))
		info.ctxKind = m.fieldKind(ev.Context)
		if c := ev.Creates; c != nil {
			info.createKind = m.fieldKind(c.Field)
			if c.Parent != nil {
				kind := "process"
				if c.Parent.Base.Kind == KindObject {
					kind = orDefault(c.Parent.Base.ObjKind, "process")
				}
				info.parentKind = m.kindID(kind)
			}
		}
		for i, r := range ev.States {
			info.rules = append(info.rules, rule{false, i, m.fieldKind(r.Field), w.Sym(r.To)})
		}
		for i, r := range ev.CPURules {
			info.rules = append(info.rules, rule{true, i, m.fieldKind(r.Field), w.Sym(r.To)})
		}
		line := func(r rule) int {
			if r.cpu {
				return ev.CPURules[r.i].Line
			}
			return ev.States[r.i].Line
		}
		sort.SliceStable(info.rules, func(i, j int) bool { return line(info.rules[i]) < line(info.rules[j]) })
		m.evs = append(m.evs, info)
	}
	m.kindIDs = nil
	return m
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// kindID interns an object kind (setup only).
func (m *machine) kindID(kind string) int32 {
	if id, ok := m.kindIDs[kind]; ok {
		return id
	}
	id := int32(len(m.kindNames))
	m.kindIDs[kind] = id
	m.kindNames = append(m.kindNames, kind)
	return id
}

// fieldKind is the kind of the objects a field without pid names (-1
// without a field).
func (m *machine) fieldKind(n *Node) int32 {
	if n == nil || n.Base == nil {
		return -1
	}
	return m.kindID(orDefault(n.Base.ObjKind, "object"))
}

// newObject registers an object of a kind.
func (m *machine) newObject(kind int32, name string, pid int64) schema.ObjectID {
	id := m.w.NewObject(m.kindNames[kind], name)
	m.w.SetPID(id, pid)
	m.kinds = append(m.kinds, kind)
	m.objSt = append(m.objSt, "")
	return id
}

// object returns the object (kind, pid, oid), registering it.
func (m *machine) object(k objKey) schema.ObjectID {
	if id, ok := m.objs[k]; ok {
		return id
	}
	id := m.w.NewObject(m.kindNames[k.kind], m.kindNames[k.kind]+" "+strconv.FormatUint(k.oid, 10))
	m.w.SetNativeID(id, int64(k.oid))
	m.w.SetPID(id, k.pid)
	m.kinds = append(m.kinds, k.kind)
	m.objSt = append(m.objSt, "")
	m.objs[k] = id
	ko := kindOID{k.kind, k.oid}
	if _, ok := m.byOID[ko]; !ok {
		m.byOID[ko] = id
	}
	return id
}

// textObject returns the user object (kind, pid) named by text,
// registering it; it has no native_id and is not found by oid.
func (m *machine) textObject(kind int32, pid int64, text []byte) schema.ObjectID {
	if len(text) == 0 {
		text = []byte("(empty)")
	}
	kp := kindPID{kind, pid}
	byText := m.texts[kp]
	if id, ok := byText[string(text)]; ok {
		return id
	}
	if byText == nil {
		byText = map[string]schema.ObjectID{}
		m.texts[kp] = byText
	}
	name := string(text)
	id := m.newObject(kind, name, pid)
	byText[name] = id
	return id
}

// byField returns the object named by a field that carries no pid: the
// known object of that kind and oid, or a new one with pid 0. NoObject for
// oid 0 or no field (kind < 0).
func (m *machine) byField(n *Node, kind int32, rec []byte) schema.ObjectID {
	if kind < 0 {
		return schema.NoObject
	}
	oid := uint64(m.d.Int(rec, n))
	if oid == 0 {
		return schema.NoObject
	}
	if id, ok := m.byOID[kindOID{kind, oid}]; ok {
		return id
	}
	return m.object(objKey{kind: kind, oid: oid})
}

// mainObject returns the main object of a record (NoObject without main=).
func (m *machine) mainObject(ev *Event, info *evInfo, rec []byte) schema.ObjectID {
	id, text, ok := m.d.Main(ev, rec)
	if !ok {
		return schema.NoObject
	}
	pid := m.d.Pid(ev, rec)
	if ev.Main.Dims != nil {
		return m.textObject(info.mainKind, pid, text)
	}
	return m.object(objKey{kind: info.mainKind, pid: pid, oid: uint64(id)})
}

// creation registers the object a creation record creates, with its name
// and parent.
func (m *machine) creation(ev *Event, info *evInfo, rec []byte) {
	c := ev.Creates
	k := objKey{kind: info.createKind, oid: uint64(m.d.Int(rec, c.Field))}
	if c.Field == ev.Main {
		k.pid = m.d.Pid(ev, rec)
	}
	id := m.object(k)
	if c.Name != nil {
		if name := m.d.Text(rec, c.Name); len(name) > 0 {
			m.w.SetName(id, string(name))
		}
	}
	if c.Parent != nil {
		if p := m.d.Int(rec, c.Parent); p != 0 {
			if pid, ok := m.byOID[kindOID{info.parentKind, uint64(p)}]; ok && pid != id {
				m.w.SetParent(id, pid)
			}
		}
	}
}

func (m *machine) cpu(n int64) *cpuState {
	if n >= 0 && n < int64(len(m.dense)) && m.dense[n] != nil {
		return m.dense[n]
	}
	c := m.cpus[n]
	if c == nil {
		c = &cpuState{id: m.w.NewObject("cpu", "cpu "+strconv.FormatInt(n, 10)), obj: schema.NoObject}
		m.w.SetNativeID(c.id, n)
		m.kinds = append(m.kinds, m.cpuKind) // ids stay in step with kinds and objSt
		m.objSt = append(m.objSt, "")
		m.cpus[n] = c
		if n >= 0 && n < maxDenseCPU {
			if n >= int64(len(m.dense)) {
				m.dense = append(m.dense, make([]*cpuState, int(n)+1-len(m.dense))...)
			}
			m.dense[n] = c
		}
	}
	return c
}

func admits(from []string, st string) bool {
	if from == nil {
		return true
	}
	if st == "" {
		st = StateUnknown
	}
	for _, f := range from {
		if f == st {
			return true
		}
	}
	return false
}

// start writes the state levels, before any record.
func (m *machine) start() {
	for _, lv := range StateLevels {
		m.w.StateLevel(lv.Kind, lv.State, lv.Level-1, lv.Parent)
	}
}

// visit takes the records of the log in file order (a Visit): the
// creation records of the service blocks, then the events of the data
// blocks; other records carry nothing for the tables.
func (m *machine) visit(ent Entry, rec []byte, service bool) error {
	ev := m.d.Events[ent.Ev]
	switch {
	case service:
		if ev.Creates != nil {
			m.creation(ev, &m.evs[ent.Ev], rec)
		}
		return nil
	case ev.Kind.Essential():
		return m.event(ev, ent, rec)
	}
	return nil
}

// event writes one event and applies its rules.
func (m *machine) event(ev *Event, ent Entry, rec []byte) error {
	info := &m.evs[ent.Ev]
	if ev.Creates != nil {
		m.creation(ev, info, rec)
	}
	ts := m.d.Time(ev, rec)
	if ev.Time != nil {
		m.checkTime(ts, ent.Off)
	}
	cpuN := m.d.CPU(ev, rec)
	c := m.cpu(cpuN)
	e := &m.ev
	*e = schema.Event{TS: ts, CPU: schema.CPU(cpuN), Class: info.class, Event: info.name,
		SourceInstance: schema.NoInstance, TargetInstance: schema.NoInstance, Line: ent.Off}
	if cpuN < 0 || cpuN > 1<<31-1 {
		e.CPU = schema.NoCPU
	}
	e.Object = m.mainObject(ev, info, rec)
	e.Context = m.context(ev, info, rec, c)
	e.Args = m.args.Build(m.d, ev, rec)
	seq, err := m.w.Event(e)
	if err != nil {
		return err
	}
	for _, r := range info.rules {
		var err error
		if r.cpu {
			err = m.cpuRule(&ev.CPURules[r.i], r, rec, c, ts, seq, e.CPU, ent.Off)
		} else {
			err = m.stateRule(ev, info, &ev.States[r.i], r, rec, c, ts, seq, e.CPU)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// checkTime records, once and counted, an event earlier than one before
// it: events keep record order (the secondary index), and the state
// tracker clamps what such an event would close before it opened.
func (m *machine) checkTime(ts, off int64) {
	switch {
	case m.haveTS && ts < m.prevTS && m.back:
		m.w.DiagRepeat(m.backDiag)
	case m.haveTS && ts < m.prevTS:
		m.back = true
		m.backDiag = m.w.Diagf(schema.Warning, off, schema.NoSeq, "timestamps go backwards (%d ns after %d ns); events are kept in record order, state intervals are clamped", ts, m.prevTS)
	}
	m.haveTS = true
	m.prevTS = max(m.prevTS, ts)
}

// context is the event's context: its context= field, or what runs on c.
func (m *machine) context(ev *Event, info *evInfo, rec []byte, c *cpuState) schema.ObjectID {
	if ev.Context != nil {
		return m.byField(ev.Context, info.ctxKind, rec)
	}
	if c.st == CPUThr || c.st == CPUIntr {
		return c.obj
	}
	return schema.NoObject
}

func (m *machine) stateRule(ev *Event, info *evInfo, r *StateRule, ru rule, rec []byte, c *cpuState, ts int64, seq schema.Seq, cpu schema.CPU) error {
	obj := schema.NoObject
	switch {
	case r.Field != nil:
		obj = m.byField(r.Field, ru.kind, rec)
	case ev.Context != nil:
		obj = m.byField(ev.Context, info.ctxKind, rec)
	case c.st == CPUThr:
		obj = c.obj
	}
	if obj == schema.NoObject {
		return nil
	}
	if r.Context && m.kinds[obj-1] != m.thread {
		return nil
	}
	if !admits(r.From, m.objSt[obj-1]) {
		return nil
	}
	if err := m.w.Close(obj, 0, ts, seq); err != nil {
		return err
	}
	m.objSt[obj-1] = r.To
	return m.w.Transition(obj, 0, ts, ru.to, seq, cpu)
}

// setCPU ends c's interval and opens st (symbol sym, with obj) or, for st
// "", none.
func (m *machine) setCPU(c *cpuState, st string, sym schema.Sym, obj schema.ObjectID, ts int64, seq schema.Seq, cpu schema.CPU) error {
	if c.st != "" {
		if err := m.w.Close(c.id, instOf(c.obj), ts, seq); err != nil {
			return err
		}
	}
	c.st, c.sym, c.obj = st, sym, obj
	if st == "" {
		c.obj = schema.NoObject
		return nil
	}
	return m.w.Transition(c.id, instOf(obj), ts, sym, seq, cpu)
}

func instOf(obj schema.ObjectID) int64 {
	if obj == schema.NoObject {
		return 0
	}
	return int64(obj)
}

func (m *machine) cpuRule(r *CPURule, ru rule, rec []byte, c *cpuState, ts int64, seq schema.Seq, cpu schema.CPU, off int64) error {
	if !admits(r.From, c.st) {
		return nil
	}
	switch r.To {
	case CPUReturn:
		if c.st == "" {
			return nil
		}
		if len(c.stack) == 0 {
			m.w.Diagf(schema.Warning, off, seq, "cpu %d: return from an interrupt with no interrupt to return to: CPU state unknown until the next <cpu> rule", cpu)
			return m.setCPU(c, "", 0, schema.NoObject, ts, seq, cpu)
		}
		s := c.stack[len(c.stack)-1]
		c.stack = c.stack[:len(c.stack)-1]
		return m.setCPU(c, s.st, s.sym, s.obj, ts, seq, cpu)
	case CPUIdle:
		return m.setCPU(c, CPUIdle, m.idle, schema.NoObject, ts, seq, cpu)
	}
	obj := m.byField(r.Field, ru.kind, rec)
	if obj == schema.NoObject {
		return nil
	}
	if r.To == CPUIntr {
		if len(c.stack) >= maxNesting {
			m.w.Diagf(schema.Warning, off, seq, "cpu %d: interrupts nested deeper than %d: CPU state unknown until the next <cpu> rule", cpu, maxNesting)
			c.stack = c.stack[:0]
			return m.setCPU(c, "", 0, schema.NoObject, ts, seq, cpu)
		}
		c.stack = append(c.stack, savedCPU{c.st, c.sym, c.obj})
	}
	return m.setCPU(c, r.To, ru.to, obj, ts, seq, cpu)
}
