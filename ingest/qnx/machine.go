package qnx

import (
	"bytes"
	"math"
	"math/bits"
	"path"
	"strconv"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/schema"
)

// machine turns events into rows: it rebuilds 64-bit time, tracks what
// runs on each CPU (the context of the events that do not name their
// source), and drives the thread, process, interrupt, kernel-call and CPU
// state intervals. Both readers feed it, so a trace read from .kev or
// from traceprinter's text gives the same tables.
type machine struct {
	w *schema.RunWriter

	// header
	cps    uint64 // TRACE_CYCLES_PER_SEC
	cpuNum int    // TRACE_CPU_NUM

	// time: the cycle counter's high word and the last low word
	clock clock

	// pending holds the events that come before the first CONTROL TIME
	// event (tracelogger writes a BUFFER event first): their high word is
	// only known from it.
	pending  []*event
	timeSeen bool

	procs   map[int64]*proc
	threads map[threadKey]*thread
	cpus    []*cpu
	irqs    map[int64]schema.ObjectID
	conns   map[string]schema.ObjectID

	syms     syms
	once     map[string]schema.DiagID
	args     []byte
	levelSet map[string]bool
}

type threadKey struct{ pid, tid int64 }

type proc struct {
	id   schema.ObjectID
	pid  int64
	name string // as the trace gives it (a path)
}

type thread struct {
	id      schema.ObjectID
	key     threadKey
	name    string
	call    schema.Sym // the kernel call the thread is in, NoSym when none
	callNum int        // its number, -1 when the name has none
	runOn   *cpu
}

type cpu struct {
	n       int
	id      schema.ObjectID
	running *thread
	ints    []schema.ObjectID // interrupts being handled, innermost last
	intNm   []string
}

// syms are the interned names the machine uses on every event.
type syms struct {
	idle, alive, inKernel, handler schema.Sym
	intClass                       schema.Sym
}

// Instances of a thread's state_intervals: 0 is its scheduling state
// (RUNNING, READY, ...), 1 the kernel call it is in (state = call name).
const (
	instState int64 = 0
	instCall  int64 = 1
)

func newMachine(w *schema.RunWriter) *machine {
	m := &machine{
		w:        w,
		procs:    make(map[int64]*proc),
		threads:  make(map[threadKey]*thread),
		irqs:     make(map[int64]schema.ObjectID),
		conns:    make(map[string]schema.ObjectID),
		once:     make(map[string]schema.DiagID),
		levelSet: make(map[string]bool),
	}
	m.syms = syms{idle: w.Sym("idle"), alive: w.Sym("alive"), inKernel: w.Sym("in_kernel"), handler: w.Sym("handler"), intClass: w.Sym("INT")}
	return m
}

// header records one attribute of the trace's header, with its key as
// traceprinter prints it (TRACE_CYCLES_PER_SEC, ...).
func (m *machine) header(key, value string) {
	m.w.SetMeta(key, value)
	switch key {
	case "TRACE_CYCLES_PER_SEC":
		if v, err := strconv.ParseUint(value, 10, 64); err == nil && v > 0 {
			m.cps = v
		}
	case "TRACE_CPU_NUM":
		if v, err := strconv.Atoi(value); err == nil && v > 0 && v <= 1024 {
			m.cpuNum = v
		}
	}
}

// maxPending bounds the events held back while waiting for the first
// CONTROL TIME event.
const maxPending = 1024

// handle applies one event:
//  1. Until the first CONTROL TIME event the high word of the clock is
//     unknown: events are held back (a copy, at most maxPending) and
//     applied when it comes.
//  2. The 64-bit cycle count is rebuilt (see clock) and converted to ns.
//  3. The event is written with its context: the interrupt being handled
//     on its CPU, else the thread running there.
//  4. Its class moves the state machines (apply).
func (m *machine) handle(e *event) error {
	if !m.timeSeen {
		if e.is("CONTROL", "TIME") {
			m.timeSeen = true
			msb, _ := hexField(e, "msb")
			m.clock.set(msb, e.t)
			for _, p := range m.pending {
				if err := m.apply(p); err != nil {
					return err
				}
			}
			m.pending = nil
			return m.apply(e)
		}
		if len(m.pending) < maxPending {
			m.pending = append(m.pending, e.clone())
			return nil
		}
		m.timeSeen = true
		m.diagOnce("notime", schema.Warning, e.pos, "no CONTROL TIME event in the first %d events: the high 32 bits of the cycle counter are taken as 0", maxPending)
		for _, p := range m.pending {
			if err := m.apply(p); err != nil {
				return err
			}
		}
		m.pending = nil
	} else if e.is("CONTROL", "TIME") {
		if msb, ok := hexField(e, "msb"); ok {
			m.clock.set(msb, e.t)
		}
	}
	return m.apply(e)
}

// apply writes one event and moves the state machines.
func (m *machine) apply(e *event) error {
	cycles, wrapped := m.clock.at(e.t)
	if wrapped {
		m.diagOnce("wrap", schema.Info, e.pos, "the cycle counter's low word wrapped without a CONTROL TIME event: the high word was advanced")
	}
	ts := m.ns(cycles)
	c := m.cpu(e.cpu)
	class, name := e.class, e.name

	// The row's class and event name: kernel calls are named by the call
	// (MSG_SENDV, its number in args), interrupts are class INT.
	evClass, evName := m.w.SymBytes(class), m.w.SymBytes(name)
	kernel := bytes.HasPrefix(class, []byte("KER_"))
	var call []byte
	if kernel {
		call, _, _ = callName(name)
		evName = m.w.SymBytes(call)
	}
	intr := bytes.HasPrefix(class, []byte("INT_"))
	if intr {
		evClass, evName = m.syms.intClass, m.w.SymBytes(class)
	}

	ctx := m.context(c)
	obj := schema.NoObject
	var th *thread
	var irq schema.ObjectID = schema.NoObject
	switch {
	case string(class) == "THREAD":
		th = m.threadOf(e)
		if th != nil {
			obj = th.id
		}
	case string(class) == "PROCESS":
		obj = m.processOf(e)
	case kernel:
		if c.running != nil {
			obj = c.running.id
		}
	case intr:
		irq = m.irqOf(name)
		obj = irq
	case string(class) == "COMM":
		obj = m.commObject(e)
	case string(class) == "CONTROL":
		obj = c.id
	default:
		obj = ctx
	}

	ev := schema.Event{TS: ts, TSRaw: int64(cycles), HasRaw: true, CPU: schema.CPU(e.cpu), Class: evClass, Event: evName,
		Context: ctx, Object: obj, SourceInstance: schema.NoInstance, TargetInstance: schema.NoInstance, Line: e.pos}
	if cycles > math.MaxInt64 {
		ev.HasRaw = false
	}
	m.args = appendArgs(m.args[:0], e, kernel)
	ev.Args = m.args
	if string(class) == "USER" || string(class) == "USREVENT" {
		// user events: traceprinter prints USREVENT:EVENT:N STR:"text"
		// (string events) or the numbers as fields
		for _, k := range []string{"STR", "str"} {
			if v, ok := e.get(k); ok {
				ev.Value = v
				break
			}
		}
	}
	seq, err := m.w.Event(&ev)
	if err != nil {
		return err
	}

	switch {
	case string(class) == "THREAD" && th != nil:
		return m.threadEvent(th, name, ts, seq, c)
	case string(class) == "PROCESS":
		return m.processEvent(name, obj, ts, seq, c)
	case kernel:
		return m.kernelCall(class, name, ts, seq, c, e.pos)
	case intr:
		return m.interrupt(class, irq, name, ts, seq, c, e.pos)
	}
	return nil
}

// context is what runs on a CPU: the innermost interrupt being handled,
// else the running thread.
func (m *machine) context(c *cpu) schema.ObjectID {
	if n := len(c.ints); n > 0 {
		return c.ints[n-1]
	}
	if c.running != nil {
		return c.running.id
	}
	return schema.NoObject
}

// threadEvent applies a THREAD class event: THCREATE registers the thread
// (done by threadOf), THDESTROY ends it, TH<STATE> moves it to STATE; a
// thread becoming RUNNING becomes what its CPU runs.
func (m *machine) threadEvent(th *thread, name []byte, ts int64, seq schema.Seq, c *cpu) error {
	switch string(name) {
	case "THCREATE":
		// A new life of this pid/tid (a tid is reused after THDESTROY and
		// THDEAD): what was open of the previous one ends here; the new
		// state comes with the next event.
		return m.w.Close(th.id, instState, ts, seq)
	case "THDESTROY":
		if th.call != schema.NoSym {
			// The call never returns (THREAD_DESTROY, THREAD_DESTROYALL):
			// its interval ends here but is no complete call.
			th.call = schema.NoSym
			if err := m.w.CloseCut(th.id, instCall, ts, seq); err != nil {
				return err
			}
		}
		if th.runOn != nil && th.runOn.running == th {
			th.runOn.running = nil
		}
		return m.w.Close(th.id, instState, ts, seq)
	}
	if !bytes.HasPrefix(name, []byte("TH")) || len(name) < 3 {
		return nil
	}
	state := m.w.SymBytes(name[2:])
	if err := m.w.Transition(th.id, instState, ts, state, seq, schema.CPU(c.n)); err != nil {
		return err
	}
	if string(name) != "THRUNNING" {
		return nil
	}
	if th.runOn != nil && th.runOn != c && th.runOn.running == th {
		th.runOn.running = nil // it migrated
	}
	th.runOn = c
	c.running = th
	if len(c.ints) > 0 {
		return nil // the CPU shows the interrupt until it exits
	}
	return m.w.Transition(c.id, 0, ts, m.cpuState(c), seq, schema.CPU(c.n))
}

// cpuState is the state of a CPU running its running thread: "idle" for
// procnto's idle threads (pid 1, tid 1..CPU_NUM: one per CPU), else the
// thread's name.
func (m *machine) cpuState(c *cpu) schema.Sym {
	th := c.running
	if th == nil {
		return m.syms.idle
	}
	if th.key.pid == 1 && th.key.tid >= 1 && th.key.tid <= int64(max(m.cpuNum, 1)) {
		m.level("cpu", "idle", 0, "idle")
		return m.syms.idle
	}
	pname := m.processName(th.key.pid)
	m.level("cpu", th.name, 0, pname)
	m.level("cpu", pname, 1, "threads")
	m.level("cpu", "threads", 2, "busy")
	return m.w.Sym(th.name)
}

func (m *machine) level(kind, state string, level int, parent string) {
	k := kind + "\x00" + state + "\x00" + strconv.Itoa(level)
	if m.levelSet[k] {
		return
	}
	m.levelSet[k] = true
	m.w.StateLevel(kind, state, level, parent)
}

// processEvent applies a PROCESS class event: a process lives from its
// PROCCREATE[_NAME] to its PROCDESTROY[_NAME].
func (m *machine) processEvent(name []byte, obj schema.ObjectID, ts int64, seq schema.Seq, c *cpu) error {
	if obj == schema.NoObject {
		return nil
	}
	switch string(name) {
	case "PROCCREATE", "PROCCREATE_NAME":
		m.level("process", "alive", 0, "alive")
		return m.w.Transition(obj, 0, ts, m.syms.alive, seq, schema.CPU(c.n))
	case "PROCDESTROY", "PROCDESTROY_NAME":
		return m.w.Close(obj, 0, ts, seq)
	}
	return nil
}

// kernelCall applies KER_CALL (the running thread enters the call) and
// KER_EXIT (it leaves it): the interval between them, on instance 1 of the
// thread, is named by the call. An exit matches its entry by the call's
// number: traceprinter prints some exits under another name
// (SYNC_CONDVAR_SIGNAL/83 returns as SYNC_CONDVAR_SIG/83).
func (m *machine) kernelCall(class, name []byte, ts int64, seq schema.Seq, c *cpu, pos int64) error {
	th := c.running
	if th == nil {
		m.diagOnce("kc-nothread", schema.Info, pos, "kernel call on CPU %d before any thread is known to run there: kept as an event, no kernel-call interval", c.n)
		return nil
	}
	call, num, hasNum := callName(name)
	if !hasNum {
		num = -1
	}
	sym := m.w.SymBytes(call)
	switch string(class) {
	case "KER_CALL":
		if th.call != schema.NoSym {
			m.diagOnce("kc-nested", schema.Warning, pos, "thread %s enters %s while its %s has no KER_EXIT: that call's interval ends here", th.name, call, m.w.String(th.call))
		}
		th.call, th.callNum = sym, num
		m.level("thread", string(call), 0, "kernel")
		return m.w.Transition(th.id, instCall, ts, sym, seq, schema.CPU(c.n))
	case "KER_EXIT":
		same := th.call != schema.NoSym && (th.call == sym || (num >= 0 && th.callNum == num))
		if !same {
			m.diagOnce("kc-unmatched", schema.Info, pos, "KER_EXIT of %s on thread %s without its KER_CALL in the trace: kept as an event", call, th.name)
			return nil
		}
		th.call, th.callNum = schema.NoSym, -1
		return m.w.Close(th.id, instCall, ts, seq)
	}
	return nil
}

// interrupt applies INT_ENTR / INT_HANDLER_ENTR / INT_HANDLER_EXIT /
// INT_EXIT: the interrupt's intervals on the CPU (instance = CPU) are
// in_kernel and handler, and while it is handled the CPU shows it and it
// is the context of the CPU's events. Interrupts nest.
func (m *machine) interrupt(class []byte, irq schema.ObjectID, name []byte, ts int64, seq schema.Seq, c *cpu, pos int64) error {
	inst := int64(c.n)
	cpuN := schema.CPU(c.n)
	switch string(class) {
	case "INT_ENTR":
		c.ints = append(c.ints, irq)
		nm := m.w.ObjectName(irq)
		c.intNm = append(c.intNm, nm)
		m.level("cpu", nm, 0, "interrupts")
		m.level("cpu", "interrupts", 1, "busy")
		m.level("interrupt", "in_kernel", 0, "interrupt")
		m.level("interrupt", "handler", 0, "interrupt")
		if err := m.w.Transition(irq, inst, ts, m.syms.inKernel, seq, cpuN); err != nil {
			return err
		}
		return m.w.Transition(c.id, 0, ts, m.w.Sym(nm), seq, cpuN)
	case "INT_HANDLER_ENTR":
		return m.w.Transition(irq, inst, ts, m.syms.handler, seq, cpuN)
	case "INT_HANDLER_EXIT":
		return m.w.Transition(irq, inst, ts, m.syms.inKernel, seq, cpuN)
	case "INT_EXIT":
		n := len(c.ints)
		if n == 0 || c.ints[n-1] != irq {
			m.diagOnce("int-unmatched", schema.Info, pos, "INT_EXIT of %s on CPU %d that is not the interrupt being handled there: kept as an event", name, c.n)
			return nil
		}
		c.ints, c.intNm = c.ints[:n-1], c.intNm[:n-1]
		if err := m.w.Close(irq, inst, ts, seq); err != nil {
			return err
		}
		var state schema.Sym
		if n > 1 {
			state = m.w.Sym(c.intNm[n-2]) // back to the outer interrupt
		} else {
			state = m.cpuState(c)
		}
		return m.w.Transition(c.id, 0, ts, state, seq, cpuN)
	}
	return nil
}

// cpu returns the CPU object of number n, creating it.
func (m *machine) cpu(n int) *cpu {
	for len(m.cpus) <= n {
		i := len(m.cpus)
		id := m.w.NewObject("cpu", "cpu "+strconv.Itoa(i))
		m.w.SetNativeID(id, int64(i))
		m.cpus = append(m.cpus, &cpu{n: i, id: id})
	}
	return m.cpus[n]
}

// threadOf returns the thread a THREAD event names (pid, tid), creating
// it on first sight.
func (m *machine) threadOf(e *event) *thread {
	pid, ok1 := intField(e, "pid")
	tid, ok2 := intField(e, "tid")
	if !ok1 || !ok2 {
		m.diagOnce("thread-noid", schema.Warning, e.pos, "THREAD %s without pid and tid: kept as an event", e.name)
		return nil
	}
	return m.thread(threadKey{pid, tid})
}

func (m *machine) thread(k threadKey) *thread {
	if th := m.threads[k]; th != nil {
		return th
	}
	name := path.Base(m.processName(k.pid)) + "/" + strconv.FormatInt(k.tid, 10)
	th := &thread{key: k, name: name, call: schema.NoSym, callNum: -1}
	th.id = m.w.NewObject("thread", name)
	m.w.SetNativeID(th.id, k.tid)
	m.w.SetPID(th.id, k.pid)
	m.w.SetParent(th.id, m.process(k.pid).id)
	m.threads[k] = th
	return th
}

// processName is the name of a process as the trace gives it, or its pid.
func (m *machine) processName(pid int64) string {
	if p := m.procs[pid]; p != nil && p.name != "" {
		return p.name
	}
	return strconv.FormatInt(pid, 10)
}

func (m *machine) process(pid int64) *proc {
	if p := m.procs[pid]; p != nil {
		return p
	}
	p := &proc{pid: pid}
	p.id = m.w.NewObject("process", strconv.FormatInt(pid, 10))
	m.w.SetNativeID(p.id, pid)
	m.w.SetPID(p.id, pid)
	m.procs[pid] = p
	return p
}

// processOf returns the process a PROCESS event names, learning its name
// and parent; PROCTHREAD_NAME names a thread instead.
func (m *machine) processOf(e *event) schema.ObjectID {
	pid, ok := intField(e, "pid")
	if !ok {
		return schema.NoObject
	}
	if string(e.name) == "PROCTHREAD_NAME" {
		if tid, ok := intField(e, "tid"); ok {
			th := m.thread(threadKey{pid, tid})
			if nm, ok := e.get("name"); ok {
				m.w.SetAttr(th.id, "name", string(nm))
			}
			return th.id
		}
	}
	p := m.process(pid)
	if nm, ok := e.get("name"); ok && len(nm) > 0 && p.name != string(nm) {
		p.name = string(nm)
		m.w.SetName(p.id, p.name)
	}
	if ppid, ok := intField(e, "ppid"); ok && ppid != pid && ppid > 0 { // procnto's ppid is 0: no process
		m.w.SetParent(p.id, m.process(ppid).id)
	}
	return p.id
}

// irqOf returns the interrupt object of an INT_* event's vector.
func (m *machine) irqOf(vector []byte) schema.ObjectID {
	v, err := strconv.ParseInt(string(bytes.TrimPrefix(bytes.TrimPrefix(vector, []byte("0x")), []byte("0X"))), 16, 64)
	if err != nil {
		v = -1
	}
	if id, ok := m.irqs[v]; ok {
		return id
	}
	name := "irq " + strconv.FormatInt(v, 10)
	if v < 0 {
		name = "irq " + string(vector)
	}
	id := m.w.NewObject("interrupt", name)
	if v >= 0 {
		m.w.SetNativeID(id, v)
	}
	m.irqs[v] = id
	return id
}

// commObject is the main object of a COMM event: the connection it names
// (scoid, coid), else the process (pid).
func (m *machine) commObject(e *event) schema.ObjectID {
	for _, key := range []string{"scoid", "coid"} {
		if v, ok := e.get(key); ok {
			name := key + " " + string(v)
			if id, ok := m.conns[name]; ok {
				return id
			}
			id := m.w.NewObject("channel", name)
			m.conns[name] = id
			return id
		}
	}
	if pid, ok := intField(e, "pid"); ok {
		return m.process(pid).id
	}
	return schema.NoObject
}

// ns converts cycles to ns: floor(cycles * 1e9 / cycles_per_sec), exactly.
func (m *machine) ns(cycles uint64) int64 {
	cps := m.cps
	if cps == 0 {
		cps = 1_000_000_000
	}
	hi, lo := bits.Mul64(cycles, 1_000_000_000)
	if hi >= cps {
		return math.MaxInt64
	}
	q, _ := bits.Div64(hi, lo, cps)
	if q > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(q)
}

// finish ends the trace: events still held back (no CONTROL TIME at all)
// are applied with a high word of 0, and the time unit is recorded.
func (m *machine) finish() error {
	if !m.timeSeen && len(m.pending) > 0 {
		m.diagOnce("notime", schema.Warning, m.pending[0].pos, "no CONTROL TIME event: the high 32 bits of the cycle counter are taken as 0")
		for _, p := range m.pending {
			if err := m.apply(p); err != nil {
				return err
			}
		}
		m.pending = nil
	}
	if m.cps == 0 {
		m.diagOnce("nocps", schema.Warning, 0, "no TRACE_CYCLES_PER_SEC in the header: cycles are taken as ns")
		m.w.SetTimeUnit("cycles", 1)
	} else {
		m.w.SetTimeUnit("cycles", 1e9/float64(m.cps))
	}
	return nil
}

func (m *machine) diagOnce(key string, sev schema.Severity, pos int64, format string, args ...any) {
	if id, ok := m.once[key]; ok {
		m.w.DiagRepeat(id)
		return
	}
	m.once[key] = m.w.Diagf(sev, pos, schema.NoSeq, format, args...)
}

// clock rebuilds the 64-bit cycle count from the low words the events
// carry: the high word comes from CONTROL TIME events, and a low word far
// below the last one (more than half the range: events are never that far
// apart) is a wrap that no TIME event announced. A low word far above the
// last one is an event from before the last wrap, written late (the seed's
// overlapping events): it gets the previous high word and does not move
// the clock.
type clock struct {
	msb   uint64
	last  uint32
	valid bool
}

func (c *clock) set(msb uint64, t uint32) {
	c.msb, c.last, c.valid = msb, t, true
}

func (c *clock) at(t uint32) (cycles uint64, wrapped bool) {
	if c.valid {
		switch {
		case t < c.last && c.last-t > 1<<31:
			c.msb++
			wrapped = true
		case t > c.last && t-c.last > 1<<31 && c.msb > 0:
			return (c.msb-1)<<32 | uint64(t), false
		}
	}
	c.last, c.valid = t, true
	return c.msb<<32 | uint64(t), wrapped
}

// clone copies an event out of the reader's buffers.
func (e *event) clone() *event {
	n := len(e.class) + len(e.name)
	for _, f := range e.fields {
		n += len(f.key) + len(f.value)
	}
	buf := make([]byte, 0, n)
	cp := func(b []byte) []byte {
		start := len(buf)
		buf = append(buf, b...)
		return buf[start:len(buf):len(buf)]
	}
	c := &event{pos: e.pos, cpu: e.cpu, t: e.t, class: cp(e.class), name: cp(e.name), fields: make([]field, len(e.fields))}
	for i, f := range e.fields {
		c.fields[i] = field{key: cp(f.key), value: cp(f.value)}
	}
	return c
}

func intField(e *event, key string) (int64, bool) {
	v, ok := e.get(key)
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(string(v), 0, 64)
	return n, err == nil
}

func hexField(e *event, key string) (uint64, bool) {
	v, ok := e.get(key)
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseUint(string(bytes.TrimPrefix(v, []byte("0x"))), 16, 64)
	return n, err == nil
}

// appendArgs writes the event's fields as a JSON object of strings, in
// their order; a positional field is "_N" (its position, from 1). A
// kernel call's number goes in "call".
func appendArgs(dst []byte, e *event, kernel bool) []byte {
	dst = append(dst, '{')
	first := true
	sep := func() {
		if !first {
			dst = append(dst, ',')
		}
		first = false
	}
	if kernel {
		if _, num, ok := callName(e.name); ok {
			sep()
			dst = append(dst, `"call":`...)
			dst = strconv.AppendInt(dst, int64(num), 10)
		}
	}
	for i, f := range e.fields {
		sep()
		if len(f.key) == 0 {
			dst = append(dst, `"_`...)
			dst = strconv.AppendInt(dst, int64(i+1), 10)
			dst = append(dst, '"')
		} else {
			dst = ingest.AppendJSONString(dst, f.key)
		}
		dst = append(dst, ':')
		dst = ingest.AppendJSONString(dst, f.value)
	}
	return append(dst, '}')
}
