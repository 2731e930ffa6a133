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
//     object if declared, else what held the event's CPU just before the
//     event's rules apply (the CPU model's Holder: the innermost
//     interrupt, else the thread; none when idle or unknown); src_line =
//     the record's byte offset.
//   - thread (object) states: the description's <state> rules, starting
//     from every object in the unknown state (a wrapped log starts
//     mid-stream): no interval opens until a rule sets a state, and a
//     from= condition is tested against "unknown" as well. Each applied
//     rule closes the interval it ends and opens the next, even into the
//     same state, so that an interval is the time between two
//     transitions. Instance 0.
//   - CPU states: the <cpu> rules say who holds the CPU, and the run's CPU
//     model (schema.CPUTracker) keeps it and writes the intervals and
//     their levels: cpuThr runs the thread (Run), cpuIntr enters the
//     interrupt over what runs (Enter), return leaves the innermost one
//     (Leave), cpuIdle runs no thread (Idle). A CPU starts unknown. The
//     intervals are those of the CPU object (kind cpu, native_id = the CPU
//     number), state = the holder's name (cpuIdle when nothing runs),
//     instance = the holder's object_id (0 for cpuIdle); a holder that
//     goes on holding (a switch to the thread that runs) continues its
//     interval. A thread is declared to the model with its process, the
//     object (process, its pid). The from= conditions of <cpu> rules test
//     the state word the model implies: cpuIntr while an interrupt is
//     handled, else cpuThr while a thread runs, else cpuIdle, or unknown.
//
// traceduck's choices where the docs are silent: an object-id field whose
// value is 0 names no object in a rule (THREAD_SWITCH prev=0 from an idle
// CPU), so such a rule does not apply; a `return` while the CPU state is
// unknown leaves it unknown silently (a wrapped log may start inside a
// handler); a `return` to the state before an interrupt entered while the
// CPU state was unknown makes it unknown again (the interrupt's interval
// is complete; the CPU model shows nothing for the zero time between); a
// `return` from a known state with no interrupt to return to, or a
// cpuIntr nested deeper than 64, is a warning and the CPU state becomes
// unknown (the interval it cuts is marked truncated). A cpuThr or cpuIdle
// rule while interrupts are being handled changes what runs below them:
// the CPU stays with the innermost interrupt until it returns. Rules of
// one event apply in document order (by line; on one line, <state> rules
// before <cpu> rules).

// maxNesting bounds nested interrupts on one CPU (docs 2.7).
const maxNesting = 64

// The words of an owned resource's state (docs 2.8), and the bound on the
// state_levels rows they make (one per kind and number of waiters).
const (
	ResFree      = "free"
	ResHeld      = "held"
	maxResLevels = 1 << 16
)

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

// cpuState is one CPU as the machine sees it: its processor in the run's
// CPU model, which holds what runs there, writes the intervals, and
// answers the description's from= conditions (word).
type cpuState struct {
	n  schema.CPU      // the processor's number in the CPU model
	id schema.ObjectID // its object
}

// rule is one <state> (cpu false) or <cpu> rule of an event, in order,
// with the kind of its field's objects and the symbol of its target.
type rule struct {
	cpu   bool
	sync  bool // a <resource> or <message> rule: i indexes Syncs
	i     int
	kind  int32
	akind int32 // the kind of a sync rule's actor= field's objects
	to    schema.Sym
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
	procKind  int32            // kind id of "process"

	objs  map[objKey]schema.ObjectID
	texts map[kindPID]map[string]schema.ObjectID // user objects named by text
	byOID map[kindOID]schema.ObjectID
	kinds []int32  // kind of each object, by ObjectID-1 (CPU objects included)
	pids  []int64  // pid of each object, by ObjectID-1
	objSt []string // state of each object ("" unknown), by ObjectID-1
	held  []bool   // the object was declared to the CPU model, by ObjectID-1
	model *schema.CPUTracker
	cpus  map[int64]*cpuState
	dense []*cpuState // cpus for 0 <= n < maxDenseCPU
	odd   schema.CPU  // the last model number given to a CPU number outside 0..2^31-1
	evs   []evInfo
	args  Args
	ev    schema.Event // the event being written, reused

	resOf    []string                            // by kind id: what <id resource=> says its objects are ("": no resource)
	resDecl  []bool                              // the object was declared to the resource model, by ObjectID-1
	waitsFor map[schema.ObjectID]schema.ObjectID // actor -> the resource it waits for (the last wait the rules started)
	res      *schema.ResourceTracker             // nil until a rule applies
	rstate   map[schema.ObjectID]*resState       // owned resources the rules acted on
	dirty    []schema.ObjectID                   // owned resources whose state an event's rules changed
	msgs     *schema.MessageTracker              // nil until a rule applies

	levels map[string]bool // state_levels rows written for resource states (kind NUL state)

	prevTS   int64         // latest time of an event with a time field
	haveTS   bool          // prevTS is set
	backDiag schema.DiagID // the warning of times going backwards, once made
	back     bool          // backDiag is made
}

func newMachine(w *schema.RunWriter, d *Description) *machine {
	m := &machine{w: w, d: d, kindIDs: map[string]int32{},
		objs: map[objKey]schema.ObjectID{}, texts: map[kindPID]map[string]schema.ObjectID{},
		byOID: map[kindOID]schema.ObjectID{}, cpus: map[int64]*cpuState{}, model: w.CPUs(), waitsFor: map[schema.ObjectID]schema.ObjectID{}}
	m.thread = m.kindID("thread")
	m.cpuKind = m.kindID("cpu")
	m.procKind = m.kindID("process")
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
			info.rules = append(info.rules, rule{i: i, kind: m.fieldKind(r.Field), to: w.Sym(r.To)})
		}
		for i, r := range ev.CPURules {
			info.rules = append(info.rules, rule{cpu: true, i: i, kind: m.fieldKind(r.Field), to: schema.NoSym})
		}
		for i, r := range ev.Syncs {
			info.rules = append(info.rules, rule{sync: true, i: i, kind: m.fieldKind(r.Field), akind: m.fieldKind(r.Actor), to: schema.NoSym})
		}
		line := func(r rule) int {
			switch {
			case r.cpu:
				return ev.CPURules[r.i].Line
			case r.sync:
				return ev.Syncs[r.i].Line
			}
			return ev.States[r.i].Line
		}
		sort.SliceStable(info.rules, func(i, j int) bool { return line(info.rules[i]) < line(info.rules[j]) })
		m.evs = append(m.evs, info)
	}
	m.resOf = make([]string, len(m.kindNames))
	for kind, res := range d.Resources {
		if id, ok := m.kindIDs[kind]; ok {
			m.resOf[id] = res
		}
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
	m.track(kind, pid)
	return id
}

// track adds the machine's columns of the object just made: every object
// of the run is made through newObject, object or cpu, so that they stay
// in step with the object ids.
func (m *machine) track(kind int32, pid int64) {
	m.kinds = append(m.kinds, kind)
	m.pids = append(m.pids, pid)
	m.objSt = append(m.objSt, "")
	m.held = append(m.held, false)
	m.resDecl = append(m.resDecl, false)
}

// object returns the object (kind, pid, oid), registering it.
func (m *machine) object(k objKey) schema.ObjectID {
	if id, ok := m.objs[k]; ok {
		return id
	}
	id := m.w.NewObject(m.kindNames[k.kind], m.kindNames[k.kind]+" "+strconv.FormatUint(k.oid, 10))
	m.w.SetNativeID(id, int64(k.oid))
	m.w.SetPID(id, k.pid)
	m.track(k.kind, k.pid)
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

// cpu returns the CPU numbered n, making its object (kind cpu, named
// "cpu N", native_id N) and registering it with the CPU model when first
// met. Numbers outside 0..2^31-1 (a record's garbage) are processors of
// their own in the model, numbered -1, -2, ... in the order met (their
// intervals, like their events, carry no cpu).
func (m *machine) cpu(n int64) *cpuState {
	if n >= 0 && n < int64(len(m.dense)) && m.dense[n] != nil {
		return m.dense[n]
	}
	c := m.cpus[n]
	if c == nil {
		c = &cpuState{id: m.w.NewObject("cpu", "cpu "+strconv.FormatInt(n, 10)), n: schema.CPU(n)}
		m.w.SetNativeID(c.id, n)
		m.track(m.cpuKind, 0)
		if n < 0 || n > 1<<31-1 {
			m.odd--
			c.n = m.odd
		}
		m.model.Add(c.n, c.id)
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

// start writes the thread state levels and gives the CPU model the
// seed's words (2.6), before any record. The CPU model writes the CPU
// state levels at the end: the holder (level 1 of the seed, cpuThr or
// cpuIntr of a given thread or interrupt; cpuIdle), its process (cpuProc)
// or the interrupt, cpuThreads / cpuInterrupts / cpuIdle, busy / idle.
func (m *machine) start() {
	for _, lv := range StateLevels {
		m.w.StateLevel(lv.Kind, lv.State, lv.Level-1, lv.Parent)
	}
	m.model.SetWords(schema.CPUWords{Idle: CPUIdle, IdleGroup: CPUIdle, Tasks: CPUThreads, Interrupts: CPUInterrupts})
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
		switch {
		case r.sync:
			err = m.syncRule(&ev.Syncs[r.i], r, rec, e.Context, ts, seq, ent.Off)
		case r.cpu:
			err = m.cpuRule(&ev.CPURules[r.i], r, rec, c, ts, seq, e.CPU, ent.Off)
		default:
			err = m.stateRule(ev, info, &ev.States[r.i], r, rec, c, ts, seq, e.CPU)
		}
		if err != nil {
			return err
		}
	}
	if len(m.dirty) > 0 {
		return m.resourceStates(ts, seq, e.CPU)
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

// context is the event's context: its context= field, or what holds c
// (the innermost interrupt, else the thread; none when idle or unknown).
func (m *machine) context(ev *Event, info *evInfo, rec []byte, c *cpuState) schema.ObjectID {
	if ev.Context != nil {
		return m.byField(ev.Context, info.ctxKind, rec)
	}
	return m.model.Holder(c.n)
}

// word is c's state as the from= conditions of <cpu> rules name it:
// cpuIntr while an interrupt is handled, else cpuThr while a thread runs,
// else cpuIdle; "" (unknown) when the log has not told.
func (m *machine) word(c *cpuState) string {
	switch {
	case !m.model.Known(c.n):
		return ""
	case m.model.Nesting(c.n) > 0:
		return CPUIntr
	case m.model.Holder(c.n) != schema.NoObject:
		return CPUThr
	}
	return CPUIdle
}

func (m *machine) stateRule(ev *Event, info *evInfo, r *StateRule, ru rule, rec []byte, c *cpuState, ts int64, seq schema.Seq, cpu schema.CPU) error {
	obj := schema.NoObject
	switch {
	case r.Field != nil:
		obj = m.byField(r.Field, ru.kind, rec)
	case ev.Context != nil:
		obj = m.byField(ev.Context, info.ctxKind, rec)
	case m.word(c) == CPUThr:
		obj = m.model.Holder(c.n)
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

// cpuRule applies a <cpu> rule: the description's way of saying what
// holds the CPU, told to the CPU model (cpuThr: the thread runs; cpuIntr:
// the interrupt enters over what runs; return: the innermost interrupt
// leaves; cpuIdle: no thread runs).
func (m *machine) cpuRule(r *CPURule, ru rule, rec []byte, c *cpuState, ts int64, seq schema.Seq, cpu schema.CPU, off int64) error {
	if !admits(r.From, m.word(c)) {
		return nil
	}
	switch r.To {
	case CPUReturn:
		if !m.model.Known(c.n) {
			return nil
		}
		if m.model.Nesting(c.n) == 0 {
			m.w.Diagf(schema.Warning, off, seq, "cpu %d: return from an interrupt with no interrupt to return to: CPU state unknown until the next <cpu> rule", cpu)
			return m.model.Unknown(c.n, ts, seq)
		}
		// back to what the innermost interrupt interrupted; unknown
		// again when that is what the first one was entered over
		_, _, err := m.model.Leave(c.n, m.model.Holder(c.n), ts, seq)
		return err
	case CPUIdle:
		return m.model.Idle(c.n, ts, seq)
	}
	obj := m.byField(r.Field, ru.kind, rec)
	if obj == schema.NoObject {
		return nil
	}
	if r.To == CPUIntr {
		m.declare(obj, schema.RoleInterrupt)
		ok, err := m.model.Enter(c.n, obj, ts, seq)
		if err != nil || ok {
			return err
		}
		m.w.Diagf(schema.Warning, off, seq, "cpu %d: interrupts nested deeper than %d: CPU state unknown until the next <cpu> rule", cpu, maxNesting)
		return m.model.Unknown(c.n, ts, seq)
	}
	m.declare(obj, schema.RoleTask)
	return m.model.Run(c.n, obj, ts, seq)
}

// declare tells the CPU model, the first time obj holds a CPU, what it
// is: a thread (of the process its pid names: the object (process, pid),
// found or registered as the objects of fields are; none for pid 0) or
// an interrupt.
func (m *machine) declare(obj schema.ObjectID, role schema.HolderRole) {
	if m.held[obj-1] {
		return
	}
	m.held[obj-1] = true
	spec := schema.HolderSpec{Role: role}
	if pid := m.pids[obj-1]; role == schema.RoleTask && pid != 0 {
		spec.Process = m.process(pid)
	}
	m.model.Declare(obj, spec)
}

// process returns the process object of a pid: the known object of kind
// process with that oid, or a new one (pid 0).
func (m *machine) process(pid int64) schema.ObjectID {
	if id, ok := m.byOID[kindOID{m.procKind, uint64(pid)}]; ok {
		return id
	}
	return m.object(objKey{kind: m.procKind, oid: uint64(pid)})
}

// syncRule applies a <resource> or <message> rule (docs 2.8): its verb,
// told to the run's resource model or message model, about the resource
// (queue) its field names and the actor its actor= field names, else the
// event's context. A resource verb needs an actor; a rule without field=
// acts on the resource the actor waits for, and does not apply when it
// waits for none. An object id of 0 names no object: the rule does not
// apply.
func (m *machine) syncRule(r *SyncRule, ru rule, rec []byte, ctx schema.ObjectID, ts int64, seq schema.Seq, off int64) error {
	if !r.Applies(m.d, rec) {
		return nil
	}
	actor := ctx
	if r.Actor != nil {
		actor = m.byField(r.Actor, ru.akind, rec)
	}
	if r.Message {
		return m.message(r, ru, rec, actor, ts, seq, off)
	}
	if actor == schema.NoObject {
		return nil
	}
	res, ok := m.waitsFor[actor]
	if !ok {
		res = schema.NoObject
	}
	if r.Field != nil {
		res = m.byField(r.Field, ru.kind, rec)
		if res != schema.NoObject && !m.resDecl[res-1] {
			m.resDecl[res-1] = true
			m.resources().Declare(res, schema.ResourceSpec{Unowned: m.resOf[ru.kind] != ResOwned})
		}
	}
	if res == schema.NoObject {
		return nil
	}
	t := m.resources()
	owned := m.resOf[m.kinds[res-1]] == ResOwned
	var h0, w0 bool
	if owned {
		h0, w0 = t.Holds(res, actor) > 0, t.Waiting(res, actor)
	}
	var err error
	switch r.Verb {
	case VerbRequest:
		err = t.Request(res, actor, schema.NoInstance, ts, seq)
	case VerbWait:
		err = t.Wait(res, actor, schema.NoInstance, ts, seq)
	case VerbAssign:
		err = t.Assign(res, actor, schema.NoInstance, ts, seq)
	case VerbRelease:
		err = t.Release(res, actor, schema.NoInstance, ts, seq)
	case VerbGiveUp:
		err = t.GiveUp(res, actor, schema.NoInstance, ts, seq)
	case VerbWoken:
		err = t.Woken(res, actor, ts, seq)
	}
	w1 := t.Waiting(res, actor)
	switch {
	case w1:
		m.waitsFor[actor] = res
	case m.waitsFor[actor] == res:
		delete(m.waitsFor, actor)
	}
	if owned && err == nil {
		m.resourceCounts(res, actor, r.Verb, h0, w0, t.Holds(res, actor) > 0, w1)
	}
	return err
}

// resState is what the machine knows of an owned resource's state
// (docs 2.8): how many actors hold it (the holder when one does) and
// wait for it, as the rules told the resource model; known from the first
// assign or release on it (before, a log that starts mid-stream has not
// told who holds it).
type resState struct {
	known   bool
	holders int32
	waiters int32
	holder  schema.ObjectID // the one holder; NoObject when none, several or not known
	inst    int64           // of the interval open
	open    bool
	word    string
	dirty   bool
}

// resourceCounts updates res's counts after a verb of actor, which held
// (h0, h1) and waited (w0, w1) for it before and after.
func (m *machine) resourceCounts(res, actor schema.ObjectID, verb string, h0, w0, h1, w1 bool) {
	if m.rstate == nil {
		m.rstate = map[schema.ObjectID]*resState{}
	}
	st := m.rstate[res]
	if st == nil {
		st = &resState{holder: schema.NoObject}
		m.rstate[res] = st
	}
	switch {
	case h1 && !h0:
		st.holders++
		st.holder = schema.NoObject
		if st.holders == 1 {
			st.holder = actor
		}
	case h0 && !h1:
		st.holders--
		if st.holders != 1 || st.holder == actor {
			st.holder = schema.NoObject // none, several, or the other one (not known which)
		}
	}
	switch {
	case w1 && !w0:
		st.waiters++
	case w0 && !w1:
		st.waiters--
	}
	if verb == VerbAssign || verb == VerbRelease {
		st.known = true
	}
	if st.known && !st.dirty {
		st.dirty = true
		m.dirty = append(m.dirty, res)
	}
}

// resourceStates writes the state of each owned resource an event's rules
// changed: free or held, with " (N waiting)" while N actors wait; the
// interval's instance is the holder's object_id when one actor holds it
// (0 otherwise), as a CPU's is the holder's. A new interval opens only
// when the word or the holder changes.
func (m *machine) resourceStates(ts int64, seq schema.Seq, cpu schema.CPU) error {
	for _, res := range m.dirty {
		st := m.rstate[res]
		st.dirty = false
		word := ResFree
		if st.holders > 0 {
			word = ResHeld
		}
		base := word
		if st.waiters > 0 {
			word += " (" + strconv.Itoa(int(st.waiters)) + " waiting)"
		}
		inst := int64(0)
		if st.holder != schema.NoObject {
			inst = int64(st.holder)
		}
		if st.open && st.word == word && st.inst == inst {
			continue
		}
		if st.open {
			if err := m.w.Close(res, st.inst, ts, seq); err != nil {
				return err
			}
		}
		if m.levels == nil {
			m.levels = map[string]bool{}
		}
		kind := m.kindNames[m.kinds[res-1]]
		if k := kind + "\x00" + word; !m.levels[k] && len(m.levels) < maxResLevels {
			m.levels[k] = true
			m.w.StateLevel(kind, word, 0, base)
		}
		if k := kind + "\x01" + base; !m.levels[k] {
			m.levels[k] = true
			m.w.StateLevel(kind, base, 1, "")
		}
		st.open, st.word, st.inst = true, word, inst
		if err := m.w.Transition(res, inst, ts, m.w.Sym(word), seq, cpu); err != nil {
			return err
		}
	}
	m.dirty = m.dirty[:0]
	return nil
}

// message applies a <message> rule: a one-way message sent to or received
// from the queue its field names, by the actor (NoObject: not known); with
// id=, a receive takes the oldest message in flight on the queue with that
// id, else the oldest on the queue.
func (m *machine) message(r *SyncRule, ru rule, rec []byte, actor schema.ObjectID, ts int64, seq schema.Seq, off int64) error {
	q := m.byField(r.Field, ru.kind, rec)
	if q == schema.NoObject {
		return nil
	}
	if m.msgs == nil {
		m.msgs = m.w.Messages()
	}
	msg := schema.Msg{OneWay: true, Key: schema.MsgKey{A: int64(q)}, ID: schema.NoInstance, Channel: q, TS: ts, Seq: seq, Line: off}
	if r.ID != nil {
		msg.ID = m.d.Int(rec, r.ID)
		msg.Key.B = msg.ID
	}
	if r.Verb == VerbSend {
		msg.Client = actor
		return m.msgs.Send(msg)
	}
	msg.Server = actor
	return m.msgs.Receive(msg)
}

func (m *machine) resources() *schema.ResourceTracker {
	if m.res == nil {
		m.res = m.w.Resources()
	}
	return m.res
}
