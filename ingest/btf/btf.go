// Package btf reads BTF (Best Trace Format) traces: a header of
// "#name value" attributes, then one event per line,
//
//	time,source,sourceInstance,targetType,target,targetInstance,action[,note]
//
// Every event becomes a row of events (class = target type, event =
// action, context = source, object = target); the state machines of the
// BTF definition turn processes (tasks, ISRs), runnables, semaphores and
// signals into state intervals, and tell the run's CPU model
// (schema.CPUTracker) what holds each core: a task that runs or polls on
// it, ISRs nested over it. README.md in this directory documents the
// mapping and the recoveries the state machines make on traces that go
// beyond the definition.
package btf

import (
	"bytes"
	"context"
	"math"
	"strconv"
	"strings"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/schema"
)

func init() { ingest.Register(10, Ingester{}) }

// Ingester reads BTF.
type Ingester struct {
	// chunk is the size of the chunks a file is read in (chunks.go): 0
	// for chunkBytes; negative to read it line by line, as a stream is
	// (tests compare the two).
	chunk int
}

// Format describes BTF.
func (Ingester) Format() ingest.Format {
	return ingest.Format{Name: "btf", Description: "BTF (Best Trace Format) system traces: tasks, ISRs, runnables, semaphores, signals, cores", Patterns: []string{"*.btf"}}
}

// Sniff reports whether head looks like BTF: a BTF header attribute, or a
// first data line of at least 7 comma-separated fields that starts with a
// decimal time and has a letter-only target type.
func (Ingester) Sniff(head []byte) bool {
	lr := ingest.NewLineReader(bytes.NewReader(head))
	for i := 0; i < 50; i++ {
		line, ok := lr.Next()
		if !ok {
			return false
		}
		line = trim(line)
		if len(line) == 0 {
			continue
		}
		if line[0] == '#' {
			name, _ := cutSpace(line[1:])
			switch strings.ToLower(string(name)) {
			case "version", "creator", "creationdate", "timescale", "entitytype", "entitytable", "entitytypetable":
				return true
			}
			continue
		}
		var f [7][]byte
		rest := line
		for j := 0; j < 7; j++ {
			k := bytes.IndexByte(rest, ',')
			if k < 0 {
				if j < 6 {
					return false
				}
				k = len(rest)
			}
			f[j] = trim(rest[:k])
			rest = rest[min(k+1, len(rest)):]
		}
		if _, ok := ingest.ParseUint(f[0]); !ok || len(f[3]) == 0 || len(f[6]) == 0 {
			return false
		}
		for _, c := range f[3] {
			if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
				return false
			}
		}
		return true
	}
	return false
}

// Ingest reads a BTF trace into w.
func (ing Ingester) Ingest(ctx context.Context, src *ingest.Source, w *schema.RunWriter) error {
	p := newParser(w)
	if src.Size < 0 || ing.chunk < 0 {
		return p.run(ctx, ingest.NewLineReader(src))
	}
	size := ing.chunk
	if size == 0 {
		size = chunkBytes
	}
	return p.runChunks(ctx, src, size)
}

type onceKey struct {
	kind   uint8 // which finding
	typ    entType
	act    action
	st     state
	name   schema.ObjectID
	detail schema.Sym
}

const (
	findUnmapped uint8 = iota
	findFromState
	findUnknownType
	findTypeClash
	findCoreBusy
	findBackwards
	findNoCore
	findSignalNoValue
	findMigrated
	findTwoInstances
	findISRCut
	findNestingDeep
	findSemSource
	findEventSource
	findEventTarget
	findNoTask
	findInheritMutex
	findNoActor
)

type parser struct {
	w    *schema.RunWriter
	cpus *schema.CPUTracker
	unit ingest.TimeUnit

	ents     map[string]*entity
	cores    []*core
	onlyCore *core   // the core of a single-core trace; nil with none or several
	fresh    []*core // cores registered by the current line, idle unless it runs something
	// procCore is the core each process instance runs (or polls) on, or
	// last did: cpuOf finds there the core of an event whose source is a
	// process, and a stop there the core it leaves.
	procCore map[procKey]*core
	// holding is the instance of a task that holds a core: the CPU model
	// knows holders (objects), BTF runs instances, and the stop of another
	// instance of the same task must not free the core.
	holding map[schema.ObjectID]int64
	state   map[procKey]state
	// eventWait is the event each process instance asked for with
	// wait_event and has not cleared: its wait action blocks on it.
	eventWait map[procKey]*entity
	// eventsDeclared marks the events declared to the resource model.
	eventsDeclared map[schema.ObjectID]bool
	confirmed      map[schema.ObjectID]bool

	classSym [nTypes]schema.Sym
	actSym   [nActions]actionSym // the symbol of each action's text, as last seen
	stateSym [nStates]schema.Sym
	levels   [nTypes]bool

	// header
	table        string // entity table being read, "" when none
	entityTypes  map[string]string
	entityNames  map[string]string
	tables       map[string][][2]string // for runs.meta, in file order
	tableBytes   int                    // of the rows in tables
	headerLines  [][2]string
	headerOver   bool // past maxHeaderLines or maxTableBytes: reported once, the rest not kept
	sawTimeScale bool

	once map[onceKey]schema.DiagID

	// the FreeRTOS logger's kernel notes (freertos.go)
	byKey     map[string][]*entity // NAME[N] -> the entities of task N
	mutexes   map[string]*mutexRow // by address
	mutexList []*mutexRow
	twins     []*entity // new entities of a task named before on another core (copyPriority)

	haveTS bool
	prevTS int64
	ev     schema.Event
	args   []byte
}

func newParser(w *schema.RunWriter) *parser {
	p := &parser{
		w:           w,
		unit:        ingest.TimeUnit{Name: "ns", Mul: 1, Div: 1},
		ents:        make(map[string]*entity),
		cpus:        w.CPUs(),
		procCore:    make(map[procKey]*core),
		holding:     make(map[schema.ObjectID]int64),
		state:       make(map[procKey]state),
		eventWait:   make(map[procKey]*entity),
		confirmed:   make(map[schema.ObjectID]bool),
		entityTypes: make(map[string]string),
		entityNames: make(map[string]string),
		tables:      make(map[string][][2]string),
		once:        make(map[onceKey]schema.DiagID),
		byKey:       make(map[string][]*entity),
		mutexes:     make(map[string]*mutexRow),
	}
	for t := entType(0); t < nTypes; t++ {
		if typeInfo[t].class != "" {
			p.classSym[t] = w.Sym(typeInfo[t].class)
		}
	}
	for s := state(0); s < nStates; s++ {
		p.stateSym[s] = w.Sym(stateNames[s])
	}
	p.cpus.SetWords(schema.CPUWords{Tasks: "tasks", Interrupts: "isrs"})
	p.cpus.IdleNames(idleTaskNames...)
	return p
}

// idleTaskNames are the idle tasks of the RTOSes whose BTF traces are
// known: FreeRTOS's idle task is "IDLE" (configIDLE_TASK_NAME), with the
// core's digit appended in an SMP build ("IDLE0", "IDLE1"); the FreeRTOS
// BTF logger (kuopinghsu/FreeRTOS-BTF-Trace) prefixes every task name
// with its task number, "(0002)IDLE" in its 2022 version and
// "[core/number]" since ("[0/0002]IDLE", "[1/0003]IDLE1"). TA Simulator
// traces have no idle task: a core runs nothing between its processes.
var idleTaskNames = []string{`(?:\(\d+\)|\[\d+/\d+\])?IDLE\d*`}

// run reads the trace:
//  1. Lines starting with '#' are comments ("# ..."), header attributes
//     ("#name value", in force from there on; a trace may stack several
//     header blocks) or rows of a BTF 1.x entity table ("#-ID VALUE" after
//     #entityType, #entityTable or #entityTypeTable).
//  2. Every other non-blank line is an event: it is parsed, its entities
//     are looked up (their type learned when they are a target), it is
//     written to events, and then the state machine of the target's type
//     moves (see handle).
//  3. At the end, the state levels and the header go into the run.
func (p *parser) run(ctx context.Context, lr *ingest.LineReader) error {
	err := lr.Each(ctx, p.w.Info().Source, "BTF", func(line []byte, n int64) error {
		line = trim(line)
		if len(line) == 0 {
			p.table = ""
			return nil
		}
		if line[0] == '#' {
			return p.header(line, n)
		}
		p.table = ""
		return p.data(line, n)
	})
	if err != nil {
		return err
	}
	p.finish()
	return nil
}

func (p *parser) header(line []byte, n int64) error {
	if len(line) == 1 || line[1] == ' ' || line[1] == '\t' {
		return nil // comment
	}
	if line[1] == '-' {
		if p.table == "" {
			return nil // a "#-" line outside an entity table: a comment
		}
		id, val := cutSpace(line[2:])
		if len(id) == 0 || len(val) == 0 {
			return p.w.BadLine(n, "#%s row: expected \"#-ID NAME\", found %q", p.table, line)
		}
		if p.tableBytes += len(id) + len(val); p.tableBytes > maxTableBytes {
			return p.headerBound(n, "#%s row: expected at most %d bytes of entity table rows, found more (the rest are not kept)", p.table, maxTableBytes)
		}
		p.tables[p.table] = append(p.tables[p.table], [2]string{string(id), string(val)})
		switch p.table {
		case "entityType":
			p.entityTypes[string(id)] = string(val)
		case "entityTable":
			p.entityNames[string(id)] = string(val)
		}
		return nil
	}
	name, value := cutSpace(line[1:])
	p.table = ""
	switch strings.ToLower(string(name)) {
	case "entitytype":
		p.table = "entityType"
		return nil
	case "entitytable":
		p.table = "entityTable"
		return nil
	case "entitytypetable":
		p.table = "entityTypeTable"
		return nil
	case "timescale":
		u, ok := ingest.LookupTimeUnit(string(value))
		if !ok || u.Div > 1000 { // BTF knows ps to s
			ok = false
		}
		if !ok {
			return p.w.BadLine(n, "#timeScale: expected ps, ns, us, ms or s, found %q", value)
		}
		p.unit = u
		p.sawTimeScale = true
	}
	if len(p.headerLines) == maxHeaderLines {
		return p.headerBound(n, "expected at most %d header lines \"#name value\", found more (the rest are not kept)", maxHeaderLines)
	}
	p.headerLines = append(p.headerLines, [2]string{string(name), string(value)})
	p.w.SetMeta(string(name), string(value))
	return nil
}

// The header is kept in memory for runs.meta: a trace has a few header
// lines and an entity table per entity; a file of header lines must not
// grow memory (or the search for a header name in runs.meta) without end.
const (
	maxHeaderLines = 4096
	maxTableBytes  = 16 << 20
)

// headerBound reports the first header line or table row past a bound;
// with --skip-bad the rest are dropped without more diagnostics.
func (p *parser) headerBound(n int64, format string, args ...any) error {
	if p.headerOver {
		return nil
	}
	p.headerOver = true
	return p.w.BadLine(n, format, args...)
}

// data parses one event line and applies it.
func (p *parser) data(line []byte, n int64) error {
	var t dataTok
	tokenize(line, 0, &t)
	return p.apply(line, &t, n)
}

// dataTok is an event line split and its numbers parsed: what tokenize
// finds without the parser's state, so that a chunk's lines can be
// tokenized beside the parser (chunks.go). Fields are offsets into the
// bytes the line was tokenized in.
type dataTok struct {
	nf     uint8 // fields found, up to 7
	rawOK  bool
	srcOK  bool
	tgtOK  bool
	act    action
	typ    entType // of the target type field as written (before an entity table)
	f      [7][2]int32
	note   [2]int32 // note[0] < 0: no note
	raw    uint64
	srcIns int64
	tgtIns int64
}

// tokenize splits an event line, line = data[base:...], into t: seven
// fields, and the note after a seventh comma (it may hold commas itself).
func tokenize(line []byte, base int32, t *dataTok) {
	var f [7][]byte
	rest := line
	nf := 0
	for nf < 7 {
		i := bytes.IndexByte(rest, ',')
		if i < 0 {
			f[nf] = trim(rest)
			nf++
			rest = nil
			break
		}
		f[nf] = trim(rest[:i])
		nf++
		rest = rest[i+1:]
	}
	t.nf = uint8(nf)
	t.note[0] = -1
	if nf < 7 {
		return
	}
	// f[k] is line[x:y] (trim slices without a cap): x is where the
	// capacities differ
	for k := range f {
		start := base + int32(cap(line)-cap(f[k]))
		t.f[k] = [2]int32{start, start + int32(len(f[k]))}
	}
	if rest != nil {
		note := trim(rest)
		start := base + int32(cap(line)-cap(note))
		t.note = [2]int32{start, start + int32(len(note))}
	}
	t.raw, t.rawOK = ingest.ParseUint(f[0])
	t.srcIns, t.srcOK = parseInstance(f[2])
	t.tgtIns, t.tgtOK = parseInstance(f[5])
	t.typ = parseType(f[3])
	t.act = parseAction(f[6])
}

// trimBounds is trim's result as offsets: b starts at off.
func trimBounds(b []byte, off int32) [2]int32 {
	i, j := 0, len(b)
	for i < j && (b[i] == ' ' || b[i] == '\t') {
		i++
	}
	for j > i && (b[j-1] == ' ' || b[j-1] == '\t') {
		j--
	}
	return [2]int32{off + int32(i), off + int32(j)}
}

// apply checks a tokenized event line, data[...] holding its bytes, and
// applies it.
func (p *parser) apply(data []byte, t *dataTok, n int64) error {
	if t.nf < 7 {
		return p.w.BadLine(n, "expected 7 or 8 comma-separated fields (time,source,sourceInstance,targetType,target,targetInstance,action[,note]), found %d", t.nf)
	}
	field := func(k int) []byte { return data[t.f[k][0]:t.f[k][1]] } // for messages
	var f [7][]byte                                                  // the fields used on every line
	for _, k := range [...]int{1, 3, 4, 6} {
		f[k] = data[t.f[k][0]:t.f[k][1]]
	}
	var note []byte // nil: no note; empty: an empty note
	if t.note[0] >= 0 {
		note = data[t.note[0]:t.note[1]]
	}

	// 2. Fields.
	raw, ok := t.raw, t.rawOK
	if !ok {
		return p.w.BadLine(n, "time: expected a non-negative integer, found %q", field(0))
	}
	ts, ok := p.toNS(raw)
	if !ok {
		return p.w.BadLine(n, "time: %d %s does not fit in int64 nanoseconds", raw, p.unit.Name)
	}
	if msg := p.w.TimeOutOfBounds(ts); msg != "" {
		return p.w.BadLine(n, "%s", msg)
	}
	if len(f[1]) == 0 {
		return p.w.BadLine(n, "source: expected an entity name, found nothing")
	}
	srcInst, ok := t.srcIns, t.srcOK
	if !ok {
		return p.w.BadLine(n, "source instance: expected an integer, found %q", field(2))
	}
	if len(f[3]) == 0 {
		return p.w.BadLine(n, "target type: expected an entity type (T, I, R, SEM, ...), found nothing")
	}
	if len(f[4]) == 0 {
		return p.w.BadLine(n, "target: expected an entity name, found nothing")
	}
	tgtInst, ok := t.tgtIns, t.tgtOK
	if !ok {
		return p.w.BadLine(n, "target instance: expected an integer, found %q", field(5))
	}
	if len(f[6]) == 0 {
		return p.w.BadLine(n, "action: expected an action, found nothing")
	}

	// 3. Entities. BTF 1.x traces may write ids from the entity tables.
	srcName, typName, tgtName := p.resolve(f[1], p.entityNames), p.resolve(f[3], p.entityTypes), p.resolve(f[4], p.entityNames)
	typ := t.typ
	if len(p.entityTypes) > 0 {
		typ = parseType(typName)
	}
	act := t.act
	class := p.classSym[typ]
	if typ == tOther {
		class = p.w.SymBytes(typName)
		p.findOnce(onceKey{kind: findUnknownType, detail: class}, schema.Info, n, schema.NoSeq,
			"target type %q is not a BTF entity type: its events are kept with class %q, its entities as kind user", typName, typName)
	}
	tgt := p.target(tgtName, typ, n)
	src := tgt
	if !bytes.Equal(srcName, tgtName) {
		src = p.source(srcName, typ, act)
	}

	// 4. The event.
	if p.haveTS && ts < p.prevTS {
		p.findOnce(onceKey{kind: findBackwards}, schema.Warning, n, schema.NoSeq,
			"timestamps go backwards (%d ns after %d ns); events are kept in file order, state intervals are clamped", ts, p.prevTS)
	}
	p.haveTS = true
	p.prevTS = max(p.prevTS, ts)
	c := p.cpuOf(src, srcInst, tgt, typ, tgtInst, act)
	ev := &p.ev
	*ev = schema.Event{TS: ts, CPU: schema.NoCPU, Class: class, Event: p.actionSym(act, f[6]),
		Context: src.id, Object: tgt.id, SourceInstance: srcInst, TargetInstance: tgtInst, Value: note, Line: n}
	if p.unit.Div != 1 {
		ev.TSRaw, ev.HasRaw = int64(raw), true
	}
	if c != nil {
		ev.CPU = c.cpu
	}
	if typ == tEvent && act == aSetEvent && note != nil {
		p.args = appendJSONObject(p.args[:0], "process", note)
		ev.Args = p.args
	}
	seq, err := p.w.Event(ev)
	if err != nil {
		return err
	}
	if len(p.twins) > 0 {
		if err := p.copyPriority(ts, seq); err != nil {
			return err
		}
	}

	// 5. State machines. A target that clashes with its type (reported in
	// target) keeps its first type: the event does not drive the other
	// type's machine on it.
	if tgt.typ != typ {
		return p.idleFreshCores(p.prevTS, seq)
	}
	inst := tgtInst
	if inst == schema.NoInstance {
		inst = 0
	}
	if err := p.handle(typ, act, src, tgt, inst, note, ts, seq, c, n); err != nil {
		return err
	}
	return p.idleFreshCores(p.prevTS, seq)
}

// actionSym is the symbol of an action's text. A known action's text is
// almost always the same bytes (parseAction also takes other cases), so
// it is compared with the last one seen instead of hashed again.
type actionSym struct {
	text []byte
	sym  schema.Sym
}

func (p *parser) actionSym(act action, text []byte) schema.Sym {
	if act == aOther {
		return p.w.SymBytes(text)
	}
	c := &p.actSym[act]
	if c.text == nil || !bytes.Equal(c.text, text) {
		c.text = append(c.text[:0], text...)
		c.sym = p.w.SymBytes(text)
	}
	return c.sym
}

// idleFreshCores says that the cores the line registered and that hold
// nothing after it are idle: a core's state is known from its first
// appearance.
func (p *parser) idleFreshCores(ts int64, seq schema.Seq) error {
	for _, fc := range p.fresh {
		if fc.ent.typ == tCore && p.cpus.Holder(fc.cpu) == schema.NoObject {
			if err := p.cpus.Idle(fc.cpu, ts, seq); err != nil {
				return err
			}
		}
	}
	p.fresh = p.fresh[:0]
	return nil
}

// handle applies one event to the state machine of the target's type.
func (p *parser) handle(typ entType, act action, src, tgt *entity, inst int64, note []byte, ts int64, seq schema.Seq, c *core, n int64) error {
	if !knownAction[typ][act] {
		p.findOnce(onceKey{kind: findUnmapped, typ: typ, detail: p.ev.Event}, schema.Info, n, seq,
			"%s action %q is not in the BTF definition of %s entities: kept as an event, no state change", p.w.String(p.ev.Class), p.w.String(p.ev.Event), p.w.String(p.ev.Class))
		return nil
	}
	if typ.isProcess() && note != nil {
		if pri, ok := priToken(note); ok {
			if err := p.w.Priorities().Base(tgt.id, pri, ts, seq); err != nil {
				return err
			}
		}
	}
	if tb := table[typ]; tb != nil && tb[act].known {
		return p.transition(typ, tb[act], act, tgt, inst, ts, seq, c, n)
	}
	switch {
	case typ == tSemaphore && semVerb[act]:
		return p.semaphore(act, src, tgt, ts, seq, n)
	case typ == tEvent:
		return p.event(act, src, tgt, note, ts, seq, n)
	case typ == tStimulus && act == aTrigger && len(note) > 0:
		return p.kernelNote(tgt, note, ts, seq, c, n)
	case typ == tSignal && act == aWrite:
		if note == nil || len(note) == 0 {
			p.findOnce(onceKey{kind: findSignalNoValue, name: tgt.id}, schema.Warning, n, seq,
				"signal %s written without a value (the note carries it): its value interval is not changed", p.w.ObjectName(tgt.id))
			return nil
		}
		return p.w.Transition(tgt.id, inst, ts, p.w.SymBytes(note), seq, cpuOf(c))
	case typ == tSim && (act == aTag || act == aDescription) && note != nil:
		p.w.SetAttr(src.id, p.w.String(p.ev.Event), string(note))
	case typ == tSim && act == aError:
		p.w.Diagf(schema.Warning, n, seq, "the trace records an error of %s: %s", p.w.ObjectName(src.id), note)
	case typ == tCore && act == aSetFrequency && note != nil:
		if hz, err := strconv.ParseInt(string(note), 10, 64); err == nil {
			p.w.SetAttr(tgt.id, "frequency_hz", hz)
		} else {
			p.w.SetAttr(tgt.id, "frequency", string(note))
		}
	}
	return nil
}

// semVerb marks the process-side semaphore actions that tell the run's
// resource model (schema.ResourceTracker) who holds a semaphore and who
// waits for it.
var semVerb = [nActions]bool{aRequestSemaphore: true, aExclusiveSemaphore: true, aAssigned: true, aWaiting: true, aReleased: true}

// semaphore applies a process's action on a semaphore to the resource
// model: requestsemaphore and exclusivesemaphore are requests, waiting
// says the request blocked (the wait starts at the request), assigned
// makes the process a holder (ending its wait), released ends its hold.
// The actor is the source process, with its instance; an action whose
// source is not a process (the semaphore itself, a core) is an event only.
func (p *parser) semaphore(act action, src, sem *entity, ts int64, seq schema.Seq, n int64) error {
	if !src.typ.isProcess() {
		p.findOnce(onceKey{kind: findSemSource, act: act}, schema.Info, n, seq,
			"SEM %s by %s, which is not a process: kept as an event, no hold or wait", p.w.String(p.ev.Event), p.w.ObjectName(src.id))
		return nil
	}
	res, inst := p.w.Resources(), p.ev.SourceInstance
	switch act {
	case aRequestSemaphore, aExclusiveSemaphore:
		return res.Request(sem.id, src.id, inst, ts, seq)
	case aWaiting:
		return res.Wait(sem.id, src.id, inst, ts, seq)
	case aAssigned:
		return res.Assign(sem.id, src.id, inst, ts, seq)
	case aReleased:
		return res.Release(sem.id, src.id, inst, ts, seq)
	}
	return nil
}

// event applies a process's action on an event (the seed's EVENT
// entity: a process waits for it, another sets it for that process, the
// waiter clears it) to the resource model, where an event has waits and no
// holds (ResourceSpec.Unowned, kind event):
//
//  1. wait_event: the source process instance requests the event;
//  2. its wait action (running -> waiting, from the core) while the
//     request is pending: the request blocked, the wait starts at the
//     wait_event (transition calls eventBlocked);
//  3. set_event naming the process in the note: it is woken, the wait
//     ends there;
//  4. clear_event by the process: it got the event (ended assigned). A
//     wait_event that finds the event set is cleared at once: no wait.
func (p *parser) event(act action, src, ev *entity, note []byte, ts int64, seq schema.Seq, n int64) error {
	if !src.typ.isProcess() {
		p.findOnce(onceKey{kind: findEventSource, act: act}, schema.Info, n, seq,
			"EVENT %s by %s, which is not a process: kept as an event, no wait", p.w.String(p.ev.Event), p.w.ObjectName(src.id))
		return nil
	}
	res := p.w.Resources()
	if !p.eventsDeclared[ev.id] {
		if p.eventsDeclared == nil {
			p.eventsDeclared = make(map[schema.ObjectID]bool)
		}
		p.eventsDeclared[ev.id] = true
		res.Declare(ev.id, schema.ResourceSpec{Kind: "event", Unowned: true})
	}
	inst := p.ev.SourceInstance
	switch act {
	case aWaitEvent:
		p.eventWait[procKey{src.id, inst}] = ev
		return res.Request(ev.id, src.id, inst, ts, seq)
	case aSetEvent:
		waiter := p.ents[string(note)]
		if waiter == nil || !waiter.typ.isProcess() {
			p.findOnce(onceKey{kind: findEventTarget, act: act}, schema.Info, n, seq,
				"set_event of %s names %q in its note, which is not a process the trace knows: no waiter is woken", p.w.ObjectName(ev.id), note)
			return nil
		}
		return res.Woken(ev.id, waiter.id, ts, seq)
	case aClearEvent:
		delete(p.eventWait, procKey{src.id, inst})
		return res.Assign(ev.id, src.id, inst, ts, seq)
	}
	return nil
}

// eventBlocked starts the wait of process instance k for the event it
// asked for, when its wait action comes while the request is pending.
func (p *parser) eventBlocked(k procKey, ts int64, seq schema.Seq) error {
	ev := p.eventWait[k]
	if ev == nil {
		return nil
	}
	return p.w.Resources().Wait(ev.id, k.obj, k.inst, ts, seq)
}

// transition moves a process, runnable or semaphore instance. An action
// from a state the definition does not allow it from is recorded (once per
// type, action and state, counted after that) and applied anyway: the
// action names the state it leads to, and the trace is the truth about the
// target; only where it came from is unknown.
func (p *parser) transition(typ entType, tr transition, act action, ent *entity, inst, ts int64, seq schema.Seq, c *core, n int64) error {
	k := procKey{ent.id, inst}
	cur := p.state[k]
	if tr.from&(1<<cur) == 0 {
		p.findOnce(onceKey{kind: findFromState, typ: typ, act: act, st: cur}, schema.Info, n, seq,
			"%s %s while %s (BTF allows it from %s): taken as a transition to %s", p.w.String(p.ev.Class), p.w.String(p.ev.Event), cur, describe(tr.from), tr.to)
	}
	if !p.levels[typ] {
		p.levels[typ] = true
		p.declareLevels(typ)
	}
	// The process's own interval changes at ts (the state tracker clamps
	// it if timestamps went backwards); its core changes at the latest
	// time seen (p.prevTS), so that a core's intervals never overlap.
	if tr.to == stGone {
		delete(p.state, k)
		delete(p.eventWait, k)
		if err := p.w.Close(ent.id, inst, ts, seq); err != nil {
			return err
		}
	} else {
		if act == aWait && typ.isProcess() {
			if err := p.eventBlocked(k, ts, seq); err != nil {
				return err
			}
		}
		p.state[k] = tr.to
		if err := p.w.Transition(ent.id, inst, ts, p.stateSym[tr.to], seq, cpuOf(c)); err != nil {
			return err
		}
	}
	switch tr.core {
	case coreRuns:
		if c == nil {
			p.findOnce(onceKey{kind: findNoCore, typ: typ, act: act}, schema.Info, n, seq,
				"%s %s on a core the trace does not name (source %s): no core interval", p.w.String(p.ev.Class), p.w.String(p.ev.Event), p.w.ObjectName(p.ev.Context))
			return nil
		}
		return p.hold(typ, c, k, cur, p.prevTS, seq, n)
	case coreStops:
		on := p.procCore[k]
		if on == nil && c != nil {
			// First sight of this instance on a core (it ran before the
			// trace says so): the core that stops it is the one it was on,
			// and the one later events with it as source happen on.
			on = c
			p.procCore[k] = c
		} else if on != nil && c != nil && on != c {
			p.findOnce(onceKey{kind: findMigrated, typ: typ, act: act}, schema.Info, n, seq,
				"%s %s by %s while it runs on %s: it leaves %s", p.w.String(p.ev.Class), p.w.String(p.ev.Event), p.w.ObjectName(c.ent.id), p.w.ObjectName(on.ent.id), p.w.ObjectName(on.ent.id))
		}
		if tr.to == stGone {
			delete(p.procCore, k)
		}
		if on != nil {
			return p.leave(typ, on, k, cur, p.prevTS, seq, n)
		}
	}
	return nil
}

// onCore reports whether a process in state s holds its core: it runs, or
// polls (active waiting, the seed's process states).
func onCore(s state) bool { return s == stRunning || s == stPolling }

// hold makes process instance k, in state cur before the event, hold core
// c from ts: a task becomes the core's holder (CPU model Run), an ISR is
// entered over what the core runs (Enter) unless it holds it already (run
// after poll).
func (p *parser) hold(typ entType, c *core, k procKey, cur state, ts int64, seq schema.Seq, n int64) error {
	p.procCore[k] = c
	if typ == tISR {
		if onCore(cur) {
			return nil
		}
		ok, err := p.cpus.Enter(c.cpu, k.obj, ts, seq)
		if err == nil && !ok {
			p.findOnce(onceKey{kind: findNestingDeep, name: c.ent.id}, schema.Warning, n, seq,
				"core %s enters ISR %s over %d ISRs that have not ended: the deeper ones are not shown (their ends are probably missing)", p.w.ObjectName(c.ent.id), p.w.ObjectName(k.obj), p.cpus.Nesting(c.cpu))
		}
		return err
	}
	if inst, ok := p.holding[k.obj]; ok && inst == k.inst && onCore(cur) {
		// it holds the core already (run after poll)
		return p.cpus.Run(c.cpu, k.obj, ts, seq)
	}
	if other, ok := p.holding[k.obj]; ok && other != k.inst {
		if on, runs := p.cpus.On(k.obj); runs && on != c.cpu {
			p.findOnce(onceKey{kind: findTwoInstances, name: k.obj}, schema.Info, n, seq,
				"%s instance %d starts on %s while instance %d still runs on another core: a core shows a process, not an instance, so the other core is left with nothing", p.w.ObjectName(k.obj), k.inst, p.w.ObjectName(c.ent.id), other)
		}
	}
	if h := p.cpus.Holder(c.cpu); h != schema.NoObject && h != k.obj {
		if p.cpus.Nesting(c.cpu) > 0 {
			p.findOnce(onceKey{kind: findCoreBusy, typ: tISR, name: c.ent.id}, schema.Info, n, seq,
				"core %s starts %s while ISR %s still runs on it: the task holds the core from the end of the ISR", p.w.ObjectName(c.ent.id), p.w.ObjectName(k.obj), p.w.ObjectName(h))
		} else {
			p.findOnce(onceKey{kind: findCoreBusy, name: c.ent.id}, schema.Info, n, seq,
				"core %s starts %s while %s still holds it (no preempt, wait, park or terminate in between): the core switches", p.w.ObjectName(c.ent.id), p.w.ObjectName(k.obj), p.w.ObjectName(h))
		}
	}
	p.holding[k.obj] = k.inst
	return p.cpus.Run(c.cpu, k.obj, ts, seq)
}

// leave takes process instance k, in state cur before the event, off core
// c at ts: a task stops (if it is the instance that holds a core), an ISR
// that ran or polled there ends, giving the core back to what it
// interrupted.
func (p *parser) leave(typ entType, c *core, k procKey, cur state, ts int64, seq schema.Seq, n int64) error {
	if typ == tISR {
		if !onCore(cur) {
			return nil
		}
		cut, ok, err := p.cpus.Leave(c.cpu, k.obj, ts, seq)
		if ok && cut > 0 {
			p.findOnce(onceKey{kind: findISRCut, name: c.ent.id}, schema.Info, n, seq,
				"ISR %s leaves %s while %d ISR(s) entered after it have not ended: they end with it", p.w.ObjectName(k.obj), p.w.ObjectName(c.ent.id), cut)
		}
		return err
	}
	if inst, ok := p.holding[k.obj]; !ok || inst != k.inst {
		return nil
	}
	delete(p.holding, k.obj)
	_, err := p.cpus.Stop(k.obj, ts, seq)
	return err
}

// declareLevels writes how the states of a type aggregate.
func (p *parser) declareLevels(typ entType) {
	kind := typeInfo[typ].kind
	switch typ {
	case tTask, tISR:
		// polling is active waiting: the process holds its core (on_cpu);
		// parking is a polling process taken off it
		for _, l := range [][2]string{{"active", "runnable"}, {"ready", "runnable"}, {"running", "on_cpu"}, {"polling", "on_cpu"}, {"waiting", "blocked"}, {"parking", "blocked"}} {
			p.w.StateLevel(kind, l[0], 0, l[1])
		}
	case tRunnable:
		p.w.StateLevel(kind, "running", 0, "running")
		p.w.StateLevel(kind, "suspended", 0, "preempted")
	case tSemaphore:
		p.w.StateLevel(kind, "free", 0, "free")
		for _, s := range []string{"used", "full", "overfull"} {
			p.w.StateLevel(kind, s, 0, "taken")
		}
	}
}

// cpuOf finds the core an event happened on: the target core of a core
// event; the source when it is a core; the core the source process
// instance runs or last ran on; the core the target process instance runs
// on; the core the FreeRTOS logger's name prefix of a process target
// names; the only core of a single-core trace; else none.
func (p *parser) cpuOf(src *entity, srcInst int64, tgt *entity, typ entType, tgtInst int64, act action) *core {
	if typ == tCore && tgt.core != nil {
		return tgt.core
	}
	if src.core != nil {
		return src.core
	}
	if c := p.procCore[procKey{src.id, instOrZero(srcInst)}]; c != nil {
		return c
	}
	if typ.isProcess() && processTable[act].core != coreRuns {
		if c := p.procCore[procKey{tgt.id, instOrZero(tgtInst)}]; c != nil {
			return c
		}
	}
	if typ.isProcess() && len(p.cores) > 1 {
		if c := p.prefixCore(p.w.String(tgt.name)); c != nil {
			return c
		}
	}
	return p.onlyCore
}

// prefixCore is the core a FreeRTOS BTF logger name names: the logger
// (kuopinghsu/FreeRTOS-BTF-Trace) writes a task of core c as
// "[c/number]name", the core of the event that switched it in or out; its
// source is the task that ran before, not the core, so that an SMP trace's
// first switch on a core ("[0/0000]" as source) says its core only there.
func (p *parser) prefixCore(name string) *core {
	if len(name) < 4 || name[0] != '[' {
		return nil
	}
	slash := strings.IndexByte(name, '/')
	end := strings.IndexByte(name, ']')
	if slash < 2 || slash > 7 || end < slash+2 || !ingest.IsDigits([]byte(name[1:slash])) || !ingest.IsDigits([]byte(name[slash+1:end])) {
		return nil
	}
	n, err := strconv.Atoi(name[1:slash])
	if err != nil {
		return nil
	}
	for _, c := range p.cores {
		if int(c.cpu) == n && c.ent.typ == tCore {
			return c
		}
	}
	return nil
}

func instOrZero(i int64) int64 {
	if i == schema.NoInstance {
		return 0
	}
	return i
}

func cpuOf(c *core) schema.CPU {
	if c == nil {
		return schema.NoCPU
	}
	return c.cpu
}

// target returns the entity named as the target of an event of type typ,
// learning or checking its type.
func (p *parser) target(name []byte, typ entType, n int64) *entity {
	e := p.ents[string(name)]
	if e == nil {
		e = p.newEntity(name, typ)
		p.confirmed[e.id] = true
		return e
	}
	if p.confirmed[e.id] {
		if e.typ != typ {
			p.findOnce(onceKey{kind: findTypeClash, name: e.id}, schema.Warning, n, schema.NoSeq,
				"entity %s is the target of %s events but was a %s target before: kept as %s", name, typeName(typ), typeName(e.typ), typeInfo[e.typ].kind)
		}
		return e
	}
	p.confirmed[e.id] = true
	if e.typ != typ {
		p.setType(e, typ)
	}
	return e
}

// source returns the entity named as the source of an event; an entity
// first seen as a source gets a provisional type (see guessSourceType).
func (p *parser) source(name []byte, target entType, act action) *entity {
	if e := p.ents[string(name)]; e != nil {
		return e
	}
	return p.newEntity(name, guessSourceType(name, target, act))
}

func (p *parser) newEntity(name []byte, typ entType) *entity {
	s := string(name)
	e := &entity{typ: typ, name: p.w.Sym(s)}
	e.id = p.w.Object(typeInfo[typ].kind, s)
	p.ents[s] = e
	if key := freeRTOSKey(s); key != "" {
		if len(p.byKey[key]) > 0 {
			p.twins = append(p.twins, e)
		}
		p.byKey[key] = append(p.byKey[key], e)
	}
	if typ == tCore {
		p.addCore(e)
	}
	return e
}

func (p *parser) setType(e *entity, typ entType) {
	e.typ = typ
	p.w.SetKind(e.id, typeInfo[typ].kind)
	if typ == tCore && e.core == nil {
		p.addCore(e)
	}
	p.countCores() // a guessed core may have turned out something else
}

// countCores keeps onlyCore: cores are few, and change only when an entity
// is registered or retyped, not per event.
func (p *parser) countCores() {
	p.onlyCore = nil
	n := 0
	for _, c := range p.cores {
		if c.ent.typ == tCore {
			p.onlyCore = c
			n++
		}
	}
	if n != 1 {
		p.onlyCore = nil
	}
}

// addCore registers a core; its index is the number its name ends with
// (Core_2 is cpu 2), or the next free index.
func (p *parser) addCore(e *entity) {
	name := p.w.String(e.name)
	idx := -1
	i := len(name)
	for i > 0 && name[i-1] >= '0' && name[i-1] <= '9' {
		i--
	}
	if i < len(name) && len(name)-i <= 6 {
		idx, _ = strconv.Atoi(name[i:])
	}
	for _, c := range p.cores {
		if int(c.cpu) == idx {
			idx = -1
		}
	}
	if idx < 0 {
		for _, c := range p.cores {
			idx = max(idx, int(c.cpu))
		}
		idx++
	}
	c := &core{ent: e, cpu: schema.CPU(idx)}
	e.core = c
	p.cores = append(p.cores, c)
	p.countCores()
	p.fresh = append(p.fresh, c)
	p.w.SetNativeID(e.id, int64(idx))
	p.cpus.Add(c.cpu, e.id)
}

func typeName(t entType) string {
	if typeInfo[t].class != "" {
		return typeInfo[t].class
	}
	return "unknown-type"
}

func (p *parser) findOnce(k onceKey, sev schema.Severity, n int64, seq schema.Seq, format string, args ...any) {
	if id, ok := p.once[k]; ok {
		p.w.DiagRepeat(id)
		return
	}
	p.once[k] = p.w.Diagf(sev, n, seq, format, args...)
}

// resolve maps an id of a BTF 1.x entity table to its name.
func (p *parser) resolve(field []byte, ids map[string]string) []byte {
	if len(ids) == 0 || !ingest.IsDigits(field) {
		return field
	}
	if name, ok := ids[string(field)]; ok {
		return []byte(name)
	}
	return field
}

func (p *parser) toNS(raw uint64) (int64, bool) {
	if raw > math.MaxInt64/p.unit.Mul {
		return 0, false
	}
	return int64(raw * p.unit.Mul / p.unit.Div), true
}

func (p *parser) finish() {
	p.w.SetTimeUnit(p.unit.Name, p.unit.NsPerUnit())
	if len(p.headerLines) > 0 {
		p.w.SetMeta("header", p.headerLines)
	}
	for _, t := range []string{"entityType", "entityTable", "entityTypeTable"} {
		if rows := p.tables[t]; len(rows) > 0 {
			p.w.SetMeta(t, rows)
		}
	}
}

func trim(b []byte) []byte {
	i, j := 0, len(b)
	for i < j && (b[i] == ' ' || b[i] == '\t') {
		i++
	}
	for j > i && (b[j-1] == ' ' || b[j-1] == '\t') {
		j--
	}
	return b[i:j]
}

// cutSpace splits at the first blank: name and the trimmed rest.
func cutSpace(b []byte) (name, rest []byte) {
	i := bytes.IndexAny(b, " \t")
	if i < 0 {
		return b, b[len(b):]
	}
	return b[:i], trim(b[i+1:])
}

// parseInstance parses an instance field: empty is NULL.
func parseInstance(b []byte) (int64, bool) {
	if len(b) == 0 {
		return schema.NoInstance, true
	}
	neg := b[0] == '-'
	if neg || b[0] == '+' {
		b = b[1:]
	}
	v, ok := ingest.ParseUint(b)
	if !ok || v > math.MaxInt64 {
		return 0, false
	}
	if neg {
		return -int64(v), true
	}
	return int64(v), true
}

// appendJSONObject appends {"key":"value"}.
func appendJSONObject(dst []byte, key string, value []byte) []byte {
	dst = append(dst, '{')
	dst = ingest.AppendJSONString(dst, []byte(key))
	dst = append(dst, ':')
	dst = ingest.AppendJSONString(dst, value)
	return append(dst, '}')
}
