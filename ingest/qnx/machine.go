package qnx

import (
	"bytes"
	"math"
	"math/bits"
	"path"
	"sort"
	"strconv"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/schema"
)

// machine turns events into rows: it rebuilds 64-bit time, drives the
// thread, process, interrupt and kernel-call state intervals, and tells
// the run's CPU model (schema.CPUTracker) what holds each CPU, which is
// also the context of the events. Both readers feed it, so a trace read
// from .kev or from traceprinter's text gives the same tables.
//
// What holds a CPU (docs/semantics.md, "Who holds a CPU"):
//   - THRUNNING of a thread on CPU n makes it the CPU's thread (Run); it
//     leaves the CPU it ran on before, if any, with none.
//   - A thread leaving RUNNING for another state (THREADY, THSEND, ...)
//     does not free the CPU by itself: in QNX's traces the next THRUNNING
//     on that CPU says who runs, and the kernel's work in between (the
//     scheduler's, on the leaving thread's behalf) stays with the thread
//     that left, as its events' context does.
//   - THDESTROY of the CPU's thread leaves the CPU with none (Stop) until
//     the next THRUNNING there.
//   - INT_ENTR / INT_EXIT enter and leave the interrupt (its vector) over
//     what runs; interrupts nest.
//   - procnto's idle threads (pid 1, tid 1..TRACE_CPU_NUM, one per CPU)
//     hold their CPU, which is idle; every thread aggregates into its
//     process (level 1).
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
	irqs    map[int64]schema.ObjectID
	conns   map[string]schema.ObjectID
	// the sync objects (sync.go), by process and address
	syncObjs map[syncKey]schema.ObjectID

	// the CPU model, and per CPU (made in order 0..n) its object and what
	// the machine needs besides the model (onCPU)
	cpus   *schema.CPUTracker
	msgs   *schema.MessageTracker // the message model (comm)
	cpuIDs []schema.ObjectID
	onCPU  []onCPU

	syms     syms
	once     map[string]schema.DiagID
	args     []byte
	levelSet map[string]bool
}

type threadKey struct{ pid, tid int64 }

// onCPU is what the machine keeps of a CPU besides the model: the thread
// last made to run there, which is the CPU's thread as long as the model
// says so (running); the interrupts entered there (INT_ENTR) and not left,
// with the seq of their entry, for their own intervals (instance = the
// CPU); the model keeps their nesting.
type onCPU struct {
	lastRun *thread
	entered map[schema.ObjectID]schema.Seq
}

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
	sync    *syncCall  // the sync call it may wait in (sync.go), nil when none
}

// syms are the interned names the machine uses on every event.
type syms struct {
	alive, inKernel, handler schema.Sym
	intClass                 schema.Sym
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
		cpus:     w.CPUs(),
		msgs:     w.Messages(),
	}
	m.cpus.SetWords(schema.CPUWords{Tasks: "threads", Interrupts: "interrupts"})
	m.syms = syms{alive: w.Sym("alive"), inKernel: w.Sym("in_kernel"), handler: w.Sym("handler"), intClass: w.Sym("INT")}
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
//  3. The event is written with its context: what holds its CPU (the
//     interrupt being handled there, else the CPU's thread).
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
	if msg := m.w.TimeOutOfBounds(ts); msg != "" {
		return m.w.BadAt(e.pos, "%s", msg) // nil with --skip-bad: the event is skipped
	}
	cpuObj := m.cpu(e.cpu)
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

	ctx := m.cpus.Holder(schema.CPU(e.cpu))
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
		if th := m.running(e.cpu); th != nil {
			obj = th.id
		}
	case intr:
		irq = m.irqOf(name)
		obj = irq
	case string(class) == "COMM":
		obj = m.commObject(e)
	case string(class) == "CONTROL":
		obj = cpuObj
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
		if err := m.threadEvent(th, name, ts, seq, e.cpu); err != nil {
			return err
		}
		// A thread state event in wide mode carries the priority the
		// thread runs at (its effective one: raised by priority
		// inheritance on a mutex or by a message from a client of a
		// higher one); QNX's base priority is not in the events.
		if pri, ok := intField(e, "priority"); ok && string(name) != "THDESTROY" && string(name) != "THCREATE" {
			if err := m.w.Priorities().Effective(th.id, pri, ts, seq); err != nil {
				return err
			}
		}
		return m.syncState(th, name, ts, seq)
	case string(class) == "PROCESS":
		return m.processEvent(name, obj, ts, seq, e.cpu)
	case kernel:
		th := m.running(e.cpu)
		if err := m.kernelCall(class, name, ts, seq, e.cpu, e.pos); err != nil {
			return err
		}
		_, num, hasNum := callName(name)
		if !hasNum {
			num = -1
		}
		return m.syncKernel(e, th, class, call, num, ts, seq)
	case intr:
		return m.interrupt(class, irq, name, ts, seq, e.cpu, e.pos)
	case string(class) == "COMM":
		return m.comm(e, obj, ts, seq)
	}
	return nil
}

// comm tells the message model (schema.MessageTracker) about a COMM event
// (docs/semantics.md, "Messages: round trips"), as QNX's kernel emits
// them:
//   - SND_MESSAGE rcvid pid: the thread running on the CPU (the client,
//     in its MsgSend) sends a message to process pid (the event's object);
//     a round trip, keyed by its rcvid.
//   - REC_MESSAGE rcvid pid: the thread running on the CPU (the server,
//     leaving its MsgReceive) receives the message of that rcvid. A
//     failed receive (rcvid 0xffffffff) receives nothing.
//   - REPLY_MESSAGE / MSG_ERROR tid pid: the reply (or error) is
//     delivered to the client thread pid/tid; its round trip ends.
//   - SND_PULSE scoid pid: the thread running on the CPU sends a pulse
//     (one-way) through the server connection scoid to process pid.
//     SND_PULSE_EXE, _DIS, _DEA, _UN, _QUN: the kernel sends one (a
//     sigevent, a disconnect, a death, an unblock): no client. Keyed by
//     (scoid, pid): pulses of one connection are received in the order
//     they were sent. Its server is process pid until it is received.
//   - REC_PULSE scoid pid: the thread running on the CPU receives the
//     oldest pulse in flight of (scoid, pid).
func (m *machine) comm(e *event, obj schema.ObjectID, ts int64, seq schema.Seq) error {
	name := string(e.name)
	msg := schema.Msg{ID: schema.NoInstance, Client: schema.NoObject, Server: schema.NoObject, Channel: schema.NoObject, TS: ts, Seq: seq, Line: e.pos}
	running := func() schema.ObjectID {
		if th := m.running(e.cpu); th != nil {
			return th.id
		}
		return schema.NoObject
	}
	switch name {
	case "SND_MESSAGE", "REC_MESSAGE":
		rcvid, ok := hexField(e, "rcvid")
		if !ok || rcvid == 0xffffffff {
			return nil
		}
		msg.Key, msg.ID = schema.MsgKey{A: int64(rcvid)}, int64(rcvid)
		if name == "SND_MESSAGE" {
			msg.Client, msg.Server = running(), obj // commObject: the process pid
			return m.msgs.Send(msg)
		}
		msg.Server = running()
		return m.msgs.Receive(msg)
	case "REPLY_MESSAGE", "MSG_ERROR":
		pid, ok1 := intField(e, "pid")
		tid, ok2 := intField(e, "tid")
		if !ok1 || !ok2 {
			return nil
		}
		if th := m.threads[threadKey{pid, tid}]; th != nil {
			msg.Client = th.id
		}
		return m.msgs.Reply(msg)
	case "SND_PULSE", "SND_PULSE_EXE", "SND_PULSE_DIS", "SND_PULSE_DEA", "SND_PULSE_UN", "SND_PULSE_QUN", "REC_PULSE":
		scoid, ok1 := hexField(e, "scoid")
		pid, ok2 := intField(e, "pid")
		if !ok1 || !ok2 {
			return nil
		}
		msg.OneWay, msg.Key, msg.ID, msg.Channel = true, schema.MsgKey{A: int64(scoid), B: pid}, int64(scoid), obj
		switch name {
		case "REC_PULSE":
			msg.Server = running()
			return m.msgs.Receive(msg)
		case "SND_PULSE":
			msg.Client = running()
		}
		msg.Server = m.process(pid).id
		return m.msgs.Send(msg)
	}
	return nil
}

// running is CPU n's thread: the one the last THRUNNING there made run,
// as long as the CPU model has it there (it did not run elsewhere since,
// nor was it destroyed); nil when none.
func (m *machine) running(n int) *thread {
	if n >= len(m.onCPU) {
		return nil
	}
	th := m.onCPU[n].lastRun
	if th == nil {
		return nil
	}
	if on, ok := m.cpus.On(th.id); !ok || int(on) != n {
		return nil
	}
	return th
}

// threadEvent applies a THREAD class event: THCREATE registers the thread
// (done by threadOf), THDESTROY ends it, TH<STATE> moves it to STATE; a
// thread becoming RUNNING becomes its CPU's thread (see machine).
func (m *machine) threadEvent(th *thread, name []byte, ts int64, seq schema.Seq, n int) error {
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
		if _, err := m.cpus.Stop(th.id, ts, seq); err != nil {
			return err
		}
		return m.w.Close(th.id, instState, ts, seq)
	}
	if !bytes.HasPrefix(name, []byte("TH")) || len(name) < 3 {
		return nil
	}
	state := m.w.SymBytes(name[2:])
	if err := m.w.Transition(th.id, instState, ts, state, seq, schema.CPU(n)); err != nil {
		return err
	}
	if string(name) != "THRUNNING" {
		return nil // the thread keeps its CPU until the next THRUNNING there
	}
	m.onCPU[n].lastRun = th
	return m.cpus.Run(schema.CPU(n), th.id, ts, seq)
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
func (m *machine) processEvent(name []byte, obj schema.ObjectID, ts int64, seq schema.Seq, n int) error {
	if obj == schema.NoObject {
		return nil
	}
	switch string(name) {
	case "PROCCREATE", "PROCCREATE_NAME":
		m.level("process", "alive", 0, "alive")
		return m.w.Transition(obj, 0, ts, m.syms.alive, seq, schema.CPU(n))
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
func (m *machine) kernelCall(class, name []byte, ts int64, seq schema.Seq, n int, pos int64) error {
	th := m.running(n)
	if th == nil {
		m.diagOnce("kc-nothread", schema.Info, pos, "kernel call on CPU %d where no thread is known to run: kept as an event, no kernel-call interval", n)
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
		return m.w.Transition(th.id, instCall, ts, sym, seq, schema.CPU(n))
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
// INT_EXIT. INT_ENTR enters the interrupt (its vector) on the CPU over what
// runs there and INT_EXIT leaves it: the CPU model nests them, and the
// innermost one holds the CPU and is the context of its events. Between
// them the interrupt's own intervals on the CPU (instance = the CPU) are
// in_kernel, and handler from INT_HANDLER_ENTR to INT_HANDLER_EXIT.
//   - INT_ENTR of an interrupt being handled on that CPU already: a vector
//     does not interrupt itself, its INT_EXIT was lost; it is left there
//     first.
//   - INT_EXIT of an interrupt entered before others that have not exited
//     on that CPU: their exits were lost; they end with it (cut).
//   - INT_EXIT and INT_HANDLER_* of an interrupt not entered on that CPU
//     (the trace began inside it): event only.
//   - An INT_ENTR over 64 nested interrupts: event only.
func (m *machine) interrupt(class []byte, irq schema.ObjectID, name []byte, ts int64, seq schema.Seq, n int, pos int64) error {
	inst := int64(n)
	cpuN := schema.CPU(n)
	on := &m.onCPU[n]
	_, in := on.entered[irq]
	switch string(class) {
	case "INT_ENTR":
		if in {
			m.diagOnce("int-reentered", schema.Warning, pos, "INT_ENTR of %s on CPU %d while it is being handled there: its INT_EXIT is missing, it ends here", name, n)
			if err := m.leave(n, irq, true, ts, seq, pos); err != nil {
				return err
			}
		}
		ok, err := m.cpus.Enter(cpuN, irq, ts, seq)
		if err != nil {
			return err
		}
		if !ok {
			m.diagOnce("int-deep", schema.Warning, pos, "INT_ENTR of %s on CPU %d over 64 nested interrupts: kept as an event", name, n)
			return nil
		}
		if on.entered == nil {
			on.entered = make(map[schema.ObjectID]schema.Seq)
		}
		on.entered[irq] = seq
		m.level("interrupt", "in_kernel", 0, "interrupt")
		m.level("interrupt", "handler", 0, "interrupt")
		return m.w.Transition(irq, inst, ts, m.syms.inKernel, seq, cpuN)
	case "INT_HANDLER_ENTR", "INT_HANDLER_EXIT":
		if !in {
			m.diagOnce("int-unentered", schema.Info, pos, "%s of %s on CPU %d where it was not entered (no INT_ENTR): kept as an event", class, name, n)
			return nil
		}
		state := m.syms.inKernel
		if string(class) == "INT_HANDLER_ENTR" {
			state = m.syms.handler
		}
		return m.w.Transition(irq, inst, ts, state, seq, cpuN)
	case "INT_EXIT":
		if !in {
			m.diagOnce("int-unmatched", schema.Info, pos, "INT_EXIT of %s on CPU %d that is not being handled there: kept as an event", name, n)
			return nil
		}
		return m.leave(n, irq, false, ts, seq, pos)
	}
	return nil
}

// leave ends interrupt irq on CPU n (lost: its exit was not seen, the
// interval is cut): the CPU model gives the CPU back to what it
// interrupted, and the interrupts entered after it there that have not
// exited end with it, cut.
func (m *machine) leave(n int, irq schema.ObjectID, lost bool, ts int64, seq schema.Seq, pos int64) error {
	cut, _, err := m.cpus.Leave(schema.CPU(n), irq, ts, seq)
	if err != nil {
		return err
	}
	on := &m.onCPU[n]
	if cut > 0 {
		from := on.entered[irq]
		var inner []schema.ObjectID
		for o, s := range on.entered {
			if s > from {
				inner = append(inner, o)
			}
		}
		sort.Slice(inner, func(i, j int) bool { return on.entered[inner[i]] < on.entered[inner[j]] })
		for _, o := range inner {
			delete(on.entered, o)
			if err := m.w.CloseCut(o, int64(n), ts, seq); err != nil {
				return err
			}
		}
		m.diagOnce("int-cut", schema.Warning, pos, "%s on CPU %d ends while %d interrupt(s) entered after it have no INT_EXIT: they end with it", m.w.ObjectName(irq), n, cut)
	}
	delete(on.entered, irq)
	if lost {
		return m.w.CloseCut(irq, int64(n), ts, seq)
	}
	return m.w.Close(irq, int64(n), ts, seq)
}

// cpu returns the object of CPU n, registering CPUs 0..n with the CPU
// model in order.
func (m *machine) cpu(n int) schema.ObjectID {
	for len(m.cpuIDs) <= n {
		i := len(m.cpuIDs)
		m.cpuIDs = append(m.cpuIDs, m.cpus.Object(schema.CPU(i)))
		m.onCPU = append(m.onCPU, onCPU{})
	}
	return m.cpuIDs[n]
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
	p := m.process(k.pid)
	m.w.SetParent(th.id, p.id)
	// a thread holds its CPU and aggregates into its process; procnto's
	// idle threads are declared as soon as the header tells how many CPUs
	// there are (the merged levels of the CPU states are made as its
	// intervals close: schema/levels.go), else by finish
	spec := schema.HolderSpec{Role: schema.RoleTask, Process: p.id}
	if k.pid == 1 && k.tid >= 1 && k.tid <= int64(m.cpuNum) {
		spec.Role = schema.RoleIdle
	}
	m.cpus.Declare(th.id, spec)
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
	m.declareIdle()
	if m.cps == 0 {
		m.diagOnce("nocps", schema.Warning, 0, "no TRACE_CYCLES_PER_SEC in the header: cycles are taken as ns")
		m.w.SetTimeUnit("cycles", 1)
	} else {
		m.w.SetTimeUnit("cycles", 1e9/float64(m.cps))
	}
	return nil
}

// declareIdle declares procnto's idle threads to the CPU model: pid 1, tid
// 1 to the number of CPUs (TRACE_CPU_NUM; without it, the CPUs the events
// name), one per CPU. They hold their CPU, which is idle.
func (m *machine) declareIdle() {
	n := m.cpuNum
	if n == 0 {
		n = max(len(m.cpuIDs), 1)
	}
	p, ok := m.procs[1]
	if !ok {
		return
	}
	for tid := 1; tid <= n; tid++ {
		if th := m.threads[threadKey{1, int64(tid)}]; th != nil {
			m.cpus.Declare(th.id, schema.HolderSpec{Role: schema.RoleIdle, Process: p.id})
		}
	}
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
