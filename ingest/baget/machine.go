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

type objKey struct {
	kind string
	pid  int64
	oid  uint64
	text string
}

type kindOID struct {
	kind string
	oid  uint64
}

// cpuState is one CPU's known state: st "" is unknown.
type cpuState struct {
	id    schema.ObjectID
	st    string
	obj   schema.ObjectID // thread or interrupt; NoObject for idle
	stack []savedCPU
}

type savedCPU struct {
	st  string
	obj schema.ObjectID
}

// rule is one <state> (cpu false) or <cpu> rule of an event, in order.
type rule struct {
	cpu bool
	i   int
}

type evInfo struct {
	class, name schema.Sym
	rules       []rule
	mainKind    string
}

type machine struct {
	w *schema.RunWriter
	d *Description

	objs  map[objKey]schema.ObjectID
	byOID map[kindOID]schema.ObjectID
	kinds []string // kind of each object, by ObjectID-1
	objSt []string // state of each object ("" unknown), by ObjectID-1
	cpus  map[int64]*cpuState
	evs   []evInfo
	syms  map[string]schema.Sym
	args  Args
	ev    schema.Event // the event being written, reused

	prevTS   int64         // latest time of an event with a time field
	haveTS   bool          // prevTS is set
	backDiag schema.DiagID // the warning of times going backwards, once made
	back     bool          // backDiag is made
}

func newMachine(w *schema.RunWriter, d *Description) *machine {
	m := &machine{w: w, d: d,
		objs: map[objKey]schema.ObjectID{}, byOID: map[kindOID]schema.ObjectID{},
		cpus: map[int64]*cpuState{}, syms: map[string]schema.Sym{}}
	for _, ev := range m.d.Events {
		info := evInfo{class: w.Sym(orDefault(ev.Group, "other")), name: w.Sym(ev.Name), mainKind: ev.MainKind}
		if info.mainKind == "" && ev.Main != nil && ev.Main.Base != nil {
			info.mainKind = ev.Main.Base.ObjKind
		}
		for i := range ev.States {
			info.rules = append(info.rules, rule{false, i})
		}
		for i := range ev.CPURules {
			info.rules = append(info.rules, rule{true, i})
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
	return m
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func (m *machine) sym(s string) schema.Sym {
	if y, ok := m.syms[s]; ok {
		return y
	}
	y := m.w.Sym(s)
	m.syms[s] = y
	return y
}

// object returns the object (kind, pid, oid, text), registering it.
func (m *machine) object(k objKey) schema.ObjectID {
	if id, ok := m.objs[k]; ok {
		return id
	}
	name := k.text
	if k.text == "" {
		name = k.kind + " " + strconv.FormatUint(k.oid, 10)
	}
	id := m.w.NewObject(k.kind, name)
	if k.text == "" {
		m.w.SetNativeID(id, int64(k.oid))
	}
	m.w.SetPID(id, k.pid)
	m.objs[k] = id
	if k.text == "" {
		ko := kindOID{k.kind, k.oid}
		if _, ok := m.byOID[ko]; !ok {
			m.byOID[ko] = id
		}
	}
	m.kinds = append(m.kinds, k.kind)
	m.objSt = append(m.objSt, "")
	return id
}

// byField returns the object named by a field that carries no pid: the
// known object of that kind and oid, or a new one with pid 0. NoObject for
// oid 0.
func (m *machine) byField(n *Node, rec []byte) schema.ObjectID {
	if n == nil || n.Base == nil {
		return schema.NoObject
	}
	oid := uint64(m.d.Int(rec, n))
	if oid == 0 {
		return schema.NoObject
	}
	kind := orDefault(n.Base.ObjKind, "object")
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
	k := objKey{kind: orDefault(info.mainKind, "object"), pid: m.d.Pid(ev, rec)}
	if ev.Main.Dims != nil {
		k.text = string(text)
		if k.text == "" {
			k.text = "(empty)"
		}
	} else {
		k.oid = uint64(id)
	}
	return m.object(k)
}

// creation registers the object a creation record creates, with its name
// and parent.
func (m *machine) creation(ev *Event, rec []byte) {
	c := ev.Creates
	k := objKey{kind: orDefault(c.Field.Base.ObjKind, "object"), oid: uint64(m.d.Int(rec, c.Field))}
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
			kind := "process"
			if c.Parent.Base.Kind == KindObject {
				kind = orDefault(c.Parent.Base.ObjKind, "process")
			}
			if pid, ok := m.byOID[kindOID{kind, uint64(p)}]; ok && pid != id {
				m.w.SetParent(id, pid)
			}
		}
	}
}

func (m *machine) cpu(n int64) *cpuState {
	c := m.cpus[n]
	if c == nil {
		c = &cpuState{id: m.w.NewObject("cpu", "cpu "+strconv.FormatInt(n, 10)), obj: schema.NoObject}
		m.w.SetNativeID(c.id, n)
		m.cpus[n] = c
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
			m.creation(ev, rec)
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
		m.creation(ev, rec)
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
	e.Context = m.context(ev, rec, c)
	e.Args = m.args.Build(m.d, ev, rec)
	seq, err := m.w.Event(e)
	if err != nil {
		return err
	}
	for _, r := range info.rules {
		var err error
		if r.cpu {
			err = m.cpuRule(&ev.CPURules[r.i], rec, c, ts, seq, e.CPU, ent.Off)
		} else {
			err = m.stateRule(ev, &ev.States[r.i], rec, c, ts, seq, e.CPU)
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
func (m *machine) context(ev *Event, rec []byte, c *cpuState) schema.ObjectID {
	if ev.Context != nil {
		return m.byField(ev.Context, rec)
	}
	if c.st == CPUThr || c.st == CPUIntr {
		return c.obj
	}
	return schema.NoObject
}

func (m *machine) stateRule(ev *Event, r *StateRule, rec []byte, c *cpuState, ts int64, seq schema.Seq, cpu schema.CPU) error {
	obj := schema.NoObject
	switch {
	case r.Field != nil:
		obj = m.byField(r.Field, rec)
	case ev.Context != nil:
		obj = m.byField(ev.Context, rec)
	case c.st == CPUThr:
		obj = c.obj
	}
	if obj == schema.NoObject {
		return nil
	}
	if r.Context && m.kinds[obj-1] != "thread" {
		return nil
	}
	if !admits(r.From, m.objSt[obj-1]) {
		return nil
	}
	if err := m.w.Close(obj, 0, ts, seq); err != nil {
		return err
	}
	m.objSt[obj-1] = r.To
	return m.w.Transition(obj, 0, ts, m.sym(r.To), seq, cpu)
}

// setCPU ends c's interval and opens st (with obj) or, for st "", none.
func (m *machine) setCPU(c *cpuState, st string, obj schema.ObjectID, ts int64, seq schema.Seq, cpu schema.CPU) error {
	if c.st != "" {
		if err := m.w.Close(c.id, instOf(c.obj), ts, seq); err != nil {
			return err
		}
	}
	c.st, c.obj = st, obj
	if st == "" {
		c.obj = schema.NoObject
		return nil
	}
	return m.w.Transition(c.id, instOf(obj), ts, m.sym(st), seq, cpu)
}

func instOf(obj schema.ObjectID) int64 {
	if obj == schema.NoObject {
		return 0
	}
	return int64(obj)
}

func (m *machine) cpuRule(r *CPURule, rec []byte, c *cpuState, ts int64, seq schema.Seq, cpu schema.CPU, off int64) error {
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
			return m.setCPU(c, "", schema.NoObject, ts, seq, cpu)
		}
		s := c.stack[len(c.stack)-1]
		c.stack = c.stack[:len(c.stack)-1]
		return m.setCPU(c, s.st, s.obj, ts, seq, cpu)
	case CPUIdle:
		return m.setCPU(c, CPUIdle, schema.NoObject, ts, seq, cpu)
	}
	obj := m.byField(r.Field, rec)
	if obj == schema.NoObject {
		return nil
	}
	if r.To == CPUIntr {
		if len(c.stack) >= maxNesting {
			m.w.Diagf(schema.Warning, off, seq, "cpu %d: interrupts nested deeper than %d: CPU state unknown until the next <cpu> rule", cpu, maxNesting)
			c.stack = c.stack[:0]
			return m.setCPU(c, "", schema.NoObject, ts, seq, cpu)
		}
		c.stack = append(c.stack, savedCPU{c.st, c.obj})
	}
	return m.setCPU(c, r.To, obj, ts, seq, cpu)
}
