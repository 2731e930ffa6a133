package ftrace

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/traceduck/traceduck/schema"
)

// what the trace says of a thread's scheduling state
type stateKind uint8

const (
	stUnknown  stateKind = iota // not seen in a scheduling event yet, or since lost events
	stRunning                   // switched in
	stRunnable                  // woken, or switched out in state R / R+
	stBlocked                   // switched out in any other state (S, D, I, T, Z, ...)
)

// Instances of a thread's state_intervals.
const (
	instSched  int64 = 0 // running, runnable, sleeping, uninterruptible, ...
	instRawSys int64 = 1 // raw_syscalls: sys_enter to sys_exit, state "NR n"
	instSys    int64 = 2 // syscalls events: sys_enter_NAME to sys_exit_NAME, state NAME
)

// A thread holds a CPU (the CPU tracker's holder) from the sched_switch
// that switches it in to the one that switches it out; where it runs by
// the trace's account is the tracker's (CPUTracker.On).
type thread struct {
	id    schema.ObjectID
	tid   int64
	name  string // comm-tid, "<...>-tid" until a comm is known
	comm  string // the comm last seen
	named bool   // name made from a real comm
	proc  *process
	st    stateKind
	ended bool // sched_process_free seen: the tid's next use is a new thread
	sys   [2]openCall
}

type openCall struct {
	open bool
	id   int64      // raw_syscalls: the number
	name schema.Sym // syscalls events: the call's name
}

type process struct {
	id    schema.ObjectID
	tgid  int64
	name  string
	named bool // named after its main thread (tid = tgid)
}

// A CPU: what it runs (its thread or idle task, the interrupts nested
// over it) is the CPU tracker's, w.CPUs().
type cpu struct {
	n       int64
	idle    *thread // swapper/N: the context of pid 0's lines, its holder when it idles
	firstTS int64
	seen    bool
}

type interrupt struct {
	id    schema.ObjectID
	num   int64
	soft  bool
	given string // the handler or action name the trace gives
	name  string
}

type irqKey struct {
	soft bool
	num  int64
}

// findings recorded once in diagnostics and counted after that
type finding uint8

const (
	findBackwards finding = iota
	findSwitchOther
	findSwitchInts
	findOffNotRunning
	findRunningElsewhere
	findLost
	findBufferStarted
	findOrphanFrames
	findTooManyFrames
	findIrqExitNoEntry
	findIrqExitSkips
	findSysExitNoEntry
	findSysReenter
	findSysExitOther
	findTooDeep
	findTIDReused
	nFindings
)

// maxInterrupts is the interrupt nesting the CPU tracker keeps per CPU
// (entries without exits must not grow a stack without bound): it
// refuses deeper ones.
const maxInterrupts = 64

// machine turns parsed lines into rows: threads, processes, CPUs and
// interrupts, their state intervals, and the events.
type machine struct {
	w       *schema.RunWriter
	cpuT    *schema.CPUTracker // what each CPU runs
	threads map[int64]*thread
	list    []*thread // every thread object (idle tasks but), in creation order
	byID    []*thread // every thread object (idle tasks too), by object id
	procs   map[int64]*process
	cpus    []*cpu
	irqs    map[irqKey][]*interrupt // by number; a hardware irq's handlers by name
	irqByID map[schema.ObjectID]*interrupt
	nrSyms  map[int64]schema.Sym

	syms struct {
		running, runnable, sleeping, uninterruptible, handler schema.Sym
		ftrace, syscalls, rawSyscalls                         schema.Sym
	}
	threadLevels map[schema.Sym]bool

	once [nFindings]schema.DiagID
	seen [nFindings]bool

	haveTS bool
	lastTS int64

	// header
	entriesInBuffer, entriesWritten int64
	entriesLine                     int64
	lostCount                       int64

	// per-event scratch, reused
	fields  []field
	args    []byte
	scratch []byte
	name    []byte
}

func newMachine(w *schema.RunWriter) *machine {
	m := &machine{w: w, cpuT: w.CPUs(), threads: make(map[int64]*thread), procs: make(map[int64]*process),
		irqs: make(map[irqKey][]*interrupt), irqByID: make(map[schema.ObjectID]*interrupt), nrSyms: make(map[int64]schema.Sym), threadLevels: make(map[schema.Sym]bool)}
	m.syms.running = w.Sym("running")
	m.syms.runnable = w.Sym("runnable")
	m.syms.sleeping = w.Sym("sleeping")
	m.syms.uninterruptible = w.Sym("uninterruptible")
	m.syms.handler = w.Sym("handler")
	m.syms.ftrace = w.Sym("ftrace")
	m.syms.syscalls = w.Sym("syscalls")
	m.syms.rawSyscalls = w.Sym("raw_syscalls")
	w.Priorities().SetLowerIsUrgent(true) // the kernel's prio
	return m
}

// priority tells the priority model the kernel priority a scheduler event
// prints for thread t (sched_switch's prev_prio and next_prio, a wakeup's
// prio): the task's p->prio, its effective priority (a priority
// inheritance boost of an rt_mutex included), on the kernel's scale where
// smaller is more urgent (0..99 real-time, 100..139 the others, 120 nice
// 0). The idle task (pid 0) has none.
func (m *machine) priority(t *thread, fs []field, key []byte, ts int64, seq schema.Seq) error {
	if t == nil || t.tid <= 0 {
		return nil
	}
	p, ok := getInt(fs, key)
	if !ok {
		return nil
	}
	return m.w.Priorities().Effective(t.id, p, ts, seq)
}

// action is what an event does to the state machines.
type action uint8

const (
	actNone action = iota
	actSwitch
	actWake
	actFork
	actExit
	actFree
	actIrqEntry
	actIrqExit
	actSoftEntry
	actSoftExit
	actRawEnter
	actRawExit
	actSysEnter
	actSysExit
	actRename
)

// event applies one event line (with the stack frames that followed it,
// a JSON array, or nil):
//  1. its fields are read, by the form of its body and its name;
//  2. the threads it names are found or made, learning their comms and
//     the TGID column's process;
//  3. the row is written, with the innermost interrupt of its CPU (else
//     the line's thread, else what the CPU runs) as context and what it
//     is about as object;
//  4. the state machines move (apply).
//
// A scheduling event without the fields it must have is a bad line.
func (m *machine) event(e *eventLine, lineNo int64, stack []byte) error {
	if e.form == formGraph && e.graph.kind == graphNone {
		return nil // an interrupt or switch marker of the graph tracer
	}
	if e.form == formGraph && e.graph.kind == graphComment {
		// an event the graph tracer printed as a comment: "/* sched_switch: ... */"
		var in eventLine
		if readBody(e.graph.text, &in) == "" && in.form == formEvent {
			e.form, e.name, e.body = formEvent, in.name, in.body
		} else {
			e.form, e.name, e.body = formEvent, []byte("print"), e.graph.text
		}
	}
	c := m.cpu(e.cpu)
	if !c.seen {
		c.seen, c.firstTS = true, e.ts
	}
	if m.haveTS && e.ts < m.lastTS {
		m.diagOnce(findBackwards, schema.Warning, lineNo, schema.NoSeq, func() string {
			return fmt.Sprintf("timestamp %s is earlier than the line before (%s): events are kept in file order; an interval that would end before it starts is clamped to zero length", fmtNS(e.ts), fmtNS(m.lastTS))
		})
	}
	m.haveTS, m.lastTS = true, max(m.lastTS, e.ts)

	// 1. fields
	fs := m.fields[:0]
	act := actNone
	var class schema.Sym
	switch e.form {
	case formFunction:
		fs = functionFields(e.body, fs)
		class = m.syms.ftrace
	case formKernStack, formUserStack:
		class = m.syms.ftrace
	case formSysEnter, formSysExit:
		if e.form == formSysEnter {
			fs = sysEnterFields(e.body, fs)
			act = actSysEnter
		} else {
			fs = append(fs, field{key: kRet, value: bytes.TrimSpace(e.body)})
			act = actSysExit
		}
		class = m.syms.syscalls
	case formGraph:
		g := &e.graph
		if len(g.fn) > 0 {
			fs = append(fs, field{key: kFunc, value: g.fn})
		}
		m.scratch = strconv.AppendInt(m.scratch[:0], int64(g.depth), 10)
		depthAt := len(m.scratch)
		if g.hasDur {
			m.scratch = strconv.AppendInt(m.scratch, g.dur, 10)
		}
		fs = append(fs, field{key: kDepth, value: m.scratch[:depthAt], raw: true})
		if g.hasDur {
			fs = append(fs, field{key: kDuration, value: m.scratch[depthAt:], raw: true})
		}
		class = m.syms.ftrace
	default:
		var msg string
		fs, act, msg = m.eventFields(e, fs)
		if msg != "" {
			m.fields = fs
			return m.w.BadLine(lineNo, "%s: %s", e.name, msg)
		}
		class = m.classOf(e.name)
	}
	m.fields = fs

	// 2. threads
	cpuN := schema.CPU(e.cpu)
	var th *thread
	switch {
	case !e.hasTask:
		// a function_graph line without the task column: what the CPU
		// runs (a thread or its idle task)
		th = m.byObject(m.cpuT.Base(cpuN))
	case e.pid == 0:
		th = m.idleThread(c)
	default:
		th = m.thread(e.pid, e.task)
		if e.tgid > 0 {
			m.setTGID(th, e.tgid)
		}
	}
	ctx := schema.NoObject
	if m.cpuT.Nesting(cpuN) > 0 {
		ctx = m.cpuT.Holder(cpuN) // the innermost interrupt
	} else if th != nil {
		ctx = th.id
	}
	obj := ctx
	var a, b *thread // the threads an action concerns
	var ir *interrupt
	switch act {
	case actSwitch:
		pp, _ := getInt(fs, kPrevPID)
		np, _ := getInt(fs, kNextPID)
		pc, _ := get(fs, kPrevComm)
		nc, _ := get(fs, kNextComm)
		a = m.thread(pp, pc)
		b = m.thread(np, nc)
		if b != nil {
			obj = b.id
		} else {
			obj = m.idleThread(c).id
		}
	case actWake, actExit, actFree:
		p, _ := getInt(fs, kPID)
		cm, _ := get(fs, kComm)
		if act == actFree {
			if t := m.threads[p]; t != nil && t.ended {
				cm = nil // a second free of the same thread
			}
		}
		a = m.thread(p, cm)
		if a != nil {
			obj = a.id
		}
	case actFork:
		p, _ := getInt(fs, kPID)
		cm, _ := get(fs, kComm)
		a = m.thread(p, cm)
		cp, _ := getInt(fs, kChildPID)
		cc, _ := get(fs, kChildComm)
		if old := m.threads[cp]; old != nil && !old.ended && cp > 0 {
			// the tid is in use by the trace's account: that thread's end
			// was not traced
			m.diagOnce(findTIDReused, schema.Info, lineNo, schema.NoSeq, func() string {
				return fmt.Sprintf("sched_process_fork makes thread %d, which the trace already holds (%s) with no sched_process_free: a new thread object is made; the old one's open intervals are cut here", cp, old.name)
			})
			if err := m.endThread(old, e.ts, schema.NoSeq, true); err != nil {
				return err
			}
		}
		b = m.thread(cp, cc)
		if b != nil {
			obj = b.id
			if a != nil {
				m.w.SetAttr(b.id, "parent_tid", a.tid)
			}
		}
	case actRename:
		// task_rename: pid=N oldcomm=A newcomm=B
		p, _ := getInt(fs, kPID)
		cm, _ := get(fs, kNewComm)
		if t := m.thread(p, cm); t != nil {
			obj = t.id
		}
	case actIrqEntry, actIrqExit, actSoftEntry, actSoftExit:
		ir = m.interruptOf(act, fs, cpuN)
		if ir != nil {
			obj = ir.id
		}
	default:
		if p, ok := getInt(fs, kPID); ok && p > 0 {
			cm, _ := get(fs, kComm)
			if t := m.thread(p, cm); t != nil {
				obj = t.id
			}
		}
	}

	// 3. the row
	var evName schema.Sym
	switch e.form {
	case formSysEnter, formSysExit:
		m.name = append(m.name[:0], "sys_enter_"...)
		if e.form == formSysExit {
			m.name = append(m.name[:0], "sys_exit_"...)
		}
		m.name = append(m.name, e.name[4:]...)
		evName = m.w.SymBytes(m.name)
	default:
		evName = m.w.SymBytes(e.name)
	}
	ev := schema.Event{TS: e.ts, CPU: cpuN, Class: class, Event: evName, Context: ctx, Object: obj,
		SourceInstance: schema.NoInstance, TargetInstance: schema.NoInstance, Line: lineNo}
	if len(fs) > 0 || stack != nil {
		m.args = appendArgs(m.args[:0], fs, stack)
		ev.Args = m.args
	}
	seq, err := m.w.Event(&ev)
	if err != nil {
		return err
	}

	// 4. state
	switch act {
	case actSwitch:
		if err := m.priority(a, fs, kPrevPrio, e.ts, seq); err != nil {
			return err
		}
		if err := m.priority(b, fs, kNextPrio, e.ts, seq); err != nil {
			return err
		}
		st, _ := get(fs, kPrevState)
		return m.sched(c, a, b, st, e.ts, seq, lineNo)
	case actWake:
		if err := m.priority(a, fs, kPrio, e.ts, seq); err != nil {
			return err
		}
		if s, ok := get(fs, kSuccess); ok && string(s) == "0" {
			return nil // an old kernel's failed wakeup: the thread was running
		}
		return m.wake(a, e.ts, seq)
	case actExit:
		return m.exitCalls(a, e.ts, seq)
	case actFree:
		if a != nil {
			return m.endThread(a, e.ts, seq, false)
		}
	case actIrqEntry, actSoftEntry:
		return m.irqEntry(c, ir, e.ts, seq, lineNo)
	case actIrqExit, actSoftExit:
		return m.irqExit(c, act == actSoftExit, fs, e.ts, seq, lineNo)
	case actRawEnter, actRawExit, actSysEnter, actSysExit:
		if th != nil && th.tid > 0 {
			return m.syscall(act, th, fs, e, c, seq, lineNo)
		}
	}
	return nil
}

// eventFields reads the fields of an "EVENT: fields" line: the events
// the machine acts on are checked for the fields it needs.
func (m *machine) eventFields(e *eventLine, fs []field) ([]field, action, string) {
	switch string(e.name) {
	case "sched_switch":
		if bytes.Contains(e.body, []byte("prev_pid=")) {
			fs = splitFields(e.body, fs)
		} else {
			var ok bool
			if fs, ok = switchPlugin(e.body, fs); !ok {
				return fs, actNone, fmt.Sprintf("expected \"prev_comm=C prev_pid=N ... prev_state=S ==> next_comm=C next_pid=N ...\" or \"comm:pid [prio] S ==> comm:pid [prio]\", found %q", clip(e.body))
			}
		}
		for _, k := range [][]byte{kPrevPID, kNextPID} {
			if v, ok := getInt(fs, k); !ok || v < 0 {
				val, _ := get(fs, k)
				return fs, actNone, fmt.Sprintf("%s: expected a thread id, found %q", k, clip(val))
			}
		}
		if st, ok := get(fs, kPrevState); !ok || len(st) == 0 {
			return fs, actNone, fmt.Sprintf("prev_state: expected a state (R, S, D, ...), found %q", clip(st))
		}
		return fs, actSwitch, ""
	case "task_newtask":
		fs = splitFields(e.body, fs)
		if v, ok := getInt(fs, kPID); !ok || v < 0 {
			val, _ := get(fs, kPID)
			return fs, actNone, fmt.Sprintf("pid: expected a thread id, found %q", clip(val))
		}
		return fs, actWake, ""
	case "task_rename":
		fs = splitFields(e.body, fs)
		return fs, actRename, ""
	case "sched_wakeup", "sched_waking", "sched_wakeup_new":
		if bytes.Contains(e.body, []byte("pid=")) {
			fs = splitFields(e.body, fs)
		} else {
			var ok bool
			if fs, ok = wakeupPlugin(e.body, fs); !ok {
				return fs, actNone, fmt.Sprintf("expected \"comm=C pid=N ...\" or \"comm:pid [prio] ...\", found %q", clip(e.body))
			}
		}
		if v, ok := getInt(fs, kPID); !ok || v < 0 {
			val, _ := get(fs, kPID)
			return fs, actNone, fmt.Sprintf("pid: expected a thread id, found %q", clip(val))
		}
		return fs, actWake, ""
	case "sched_process_fork", "sched_process_exit", "sched_process_free":
		fs = splitFields(e.body, fs)
		keys := [][]byte{kPID}
		act := actExit
		switch string(e.name) {
		case "sched_process_fork":
			keys, act = [][]byte{kPID, kChildPID}, actFork
		case "sched_process_free":
			act = actFree
		}
		for _, k := range keys {
			if v, ok := getInt(fs, k); !ok || v < 0 {
				val, _ := get(fs, k)
				return fs, actNone, fmt.Sprintf("%s: expected a thread id, found %q", k, clip(val))
			}
		}
		return fs, act, ""
	case "irq_handler_entry", "irq_handler_exit", "softirq_entry", "softirq_exit":
		fs = splitFields(e.body, fs)
		key, act := kIrq, actIrqEntry
		switch string(e.name) {
		case "irq_handler_exit":
			act = actIrqExit
		case "softirq_entry":
			key, act = kVec, actSoftEntry
		case "softirq_exit":
			key, act = kVec, actSoftExit
		}
		if _, ok := getInt(fs, key); !ok {
			val, _ := get(fs, key)
			return fs, actNone, fmt.Sprintf("%s: expected a number, found %q", key, clip(val))
		}
		return fs, act, ""
	case "sys_enter", "sys_exit":
		var ok bool
		if fs, ok = rawSysFields(e.body, fs, &m.scratch); !ok {
			form := "NR n (args)"
			if string(e.name) == "sys_exit" {
				form = "NR n = ret"
			}
			return fs, actNone, fmt.Sprintf("expected %q, found %q", form, clip(e.body))
		}
		if string(e.name) == "sys_enter" {
			return fs, actRawEnter, ""
		}
		return fs, actRawExit, ""
	case "function":
		return functionFields(e.body, fs), actNone, ""
	}
	// trace-cmd prints the syscalls events by their names and print
	// formats: "sys_enter_read: fd: 0x00000003, ...", "sys_exit_read: 0x400"
	switch {
	case bytes.HasPrefix(e.name, []byte("sys_enter_")) && len(e.name) > 10:
		return sysEnterFields(e.body, fs), actSysEnter, ""
	case bytes.HasPrefix(e.name, []byte("sys_exit_")) && len(e.name) > 9:
		return append(fs, field{key: kRet, value: bytes.TrimSpace(e.body)}), actSysExit, ""
	}
	return splitFields(e.body, fs), actNone, ""
}

// classOf is an event's class: the ftrace subsystem when the name says
// it (raw_syscalls, syscalls, the tracer's own events), else the name up to its
// first underscore (sched, irq, softirq, hrtimer, signal: most events
// are named after their subsystem; the text does not say it).
func (m *machine) classOf(name []byte) schema.Sym {
	switch string(name) {
	case "sys_enter", "sys_exit":
		return m.syms.rawSyscalls
	}
	if bytes.HasPrefix(name, []byte("sys_enter_")) || bytes.HasPrefix(name, []byte("sys_exit_")) {
		return m.syms.syscalls
	}
	switch string(name) {
	case "function", "funcgraph_entry", "funcgraph_exit", "funcgraph_leaf", "kernel_stack", "user_stack", "print", "bprint", "bputs":
		return m.syms.ftrace
	}
	if i := bytes.IndexByte(name, '_'); i > 0 {
		return m.w.SymBytes(name[:i])
	}
	return m.w.SymBytes(name)
}

// sched applies sched_switch: prev leaves the CPU in prev_state, next
// (its idle task for pid 0) holds it. Before that, what the trace said ran
// there is checked:
//  1. the CPU ran another thread (or its idle task) than prev: that
//     thread's switch out was lost, its running interval is cut and its
//     state is unknown;
//  2. interrupts still open on the CPU (their exits lost) are cut;
//     in both cases the CPU's interval is cut;
//  3. prev was running on another CPU, or was not running at all (a
//     switch in was lost): its interval is cut before its new state, and
//     so is that other CPU's;
//  4. next was running on another CPU: that CPU's state is cut (Perfetto
//     closes next's interval there as it does any other).
func (m *machine) sched(c *cpu, prev, next *thread, prevState []byte, ts int64, seq schema.Seq, lineNo int64) error {
	cpuN := schema.CPU(c.n)
	prevID := schema.NoObject // prev as a holder: the thread, or the idle task
	switch {
	case prev != nil:
		prevID = prev.id
	case c.idle != nil:
		prevID = c.idle.id
	}
	base := m.cpuT.Base(cpuN)
	other := base != schema.NoObject && base != prevID
	if other {
		m.diagOnce(findSwitchOther, schema.Warning, lineNo, seq, func() string {
			return fmt.Sprintf("sched_switch on CPU %d switches out %s while %s ran there: a switch was lost; what ran is cut here and its state is unknown until its next event", c.n, nameOf(prev), m.holderName(base))
		})
		if err := m.cutRunning(base, ts, seq); err != nil {
			return err
		}
	}
	nested := m.cpuT.Nesting(cpuN) > 0
	if nested {
		m.diagOnce(findSwitchInts, schema.Warning, lineNo, seq, func() string {
			return fmt.Sprintf("sched_switch on CPU %d while %s has no exit there: the interrupt intervals and the CPU's are cut here", c.n, m.irqName(m.cpuT.Holder(cpuN)))
		})
	}
	if other || nested {
		if err := m.unknown(c.n, ts, seq); err != nil {
			return err
		}
	}
	if prev != nil {
		if o, ok := m.cpuT.On(prev.id); ok && o != cpuN {
			m.diagOnce(findRunningElsewhere, schema.Warning, lineNo, seq, func() string {
				return fmt.Sprintf("%s switches on CPU %d while the trace has it running on CPU %d: its switch there was lost; its interval and that CPU's are cut here", prev.name, c.n, o)
			})
			if err := m.forget(int64(o), ts, seq); err != nil {
				return err
			}
		}
		if prev.st != stUnknown && prev.st != stRunning {
			m.diagOnce(findOffNotRunning, schema.Warning, lineNo, seq, func() string {
				return fmt.Sprintf("%s switches out of CPU %d but was not running by the trace's account (its switch in was lost): its interval is cut here", prev.name, c.n)
			})
			if err := m.w.CloseCut(prev.id, instSched, ts, seq); err != nil {
				return err
			}
		}
		sym, kind := m.prevState(prevState)
		m.threadLevel(sym, kind)
		if err := m.w.Transition(prev.id, instSched, ts, sym, seq, schema.NoCPU); err != nil {
			return err
		}
		prev.st = kind
	}
	if next == nil {
		return m.cpuT.Run(cpuN, m.idleThread(c).id, ts, seq)
	}
	if o, ok := m.cpuT.On(next.id); ok && o != cpuN {
		m.diagOnce(findRunningElsewhere, schema.Warning, lineNo, seq, func() string {
			return fmt.Sprintf("%s switches in on CPU %d while the trace has it running on CPU %d: its switch out there was lost; that CPU's interval is cut here", next.name, c.n, o)
		})
		if err := m.unknown(int64(o), ts, seq); err != nil {
			return err
		}
	}
	m.threadLevel(m.syms.running, stRunning)
	if err := m.w.Transition(next.id, instSched, ts, m.syms.running, seq, cpuN); err != nil {
		return err
	}
	next.st = stRunning
	return m.cpuT.Run(cpuN, next.id, ts, seq)
}

// cutRunning cuts the running interval of holder h, when it is a thread
// (not an idle task): its state is unknown until its next event.
func (m *machine) cutRunning(h schema.ObjectID, ts int64, seq schema.Seq) error {
	t := m.byObject(h)
	if t == nil || t.tid <= 0 {
		return nil
	}
	t.st = stUnknown
	return m.w.CloseCut(t.id, instSched, ts, seq)
}

// forget makes what CPU n runs unknown: the thread the trace had there
// is cut and unknown too (see unknown for the rest).
func (m *machine) forget(n int64, ts int64, seq schema.Seq) error {
	if err := m.cutRunning(m.cpuT.Base(schema.CPU(n)), ts, seq); err != nil {
		return err
	}
	return m.unknown(n, ts, seq)
}

// unknown makes what CPU n runs unknown from ts: the intervals of the
// interrupts open there and the CPU's are cut; the CPU shows nothing
// until its next sched_switch or interrupt.
func (m *machine) unknown(n int64, ts int64, seq schema.Seq) error {
	cpuN := schema.CPU(n)
	for i := 0; ; i++ {
		id := m.cpuT.Interrupt(cpuN, i)
		if id == schema.NoObject {
			break
		}
		if err := m.w.CloseCut(id, n, ts, seq); err != nil {
			return err
		}
	}
	return m.cpuT.Unknown(cpuN, ts, seq)
}

// prevState names a thread's state after it leaves the CPU, and its
// kind: R and R+ (preempted) are runnable, S sleeping, D uninterruptible,
// anything else as the trace gives it (I, T, t, X, Z, P, D|K, ...).
func (m *machine) prevState(s []byte) (schema.Sym, stateKind) {
	switch string(s) {
	case "R", "R+":
		return m.syms.runnable, stRunnable
	case "S":
		return m.syms.sleeping, stBlocked
	case "D":
		return m.syms.uninterruptible, stBlocked
	}
	return m.w.SymBytes(s), stBlocked
}

// wake applies sched_waking, sched_wakeup, sched_wakeup_new and
// task_newtask as Perfetto applies sched_waking: a thread blocked, or not
// seen yet,
// becomes runnable; a wakeup of a thread running or runnable changes
// nothing (sched_wakeup after sched_waking, spurious wakeups).
func (m *machine) wake(t *thread, ts int64, seq schema.Seq) error {
	if t == nil || t.st == stRunning || t.st == stRunnable {
		return nil
	}
	m.threadLevel(m.syms.runnable, stRunnable)
	t.st = stRunnable
	return m.w.Transition(t.id, instSched, ts, m.syms.runnable, seq, schema.NoCPU)
}

// exitCalls applies sched_process_exit: the thread's system calls
// (exit, exit_group) never return; their intervals are cut.
func (m *machine) exitCalls(t *thread, ts int64, seq schema.Seq) error {
	if t == nil {
		return nil
	}
	for i := range t.sys {
		if t.sys[i].open {
			t.sys[i].open = false
			if err := m.w.CloseCut(t.id, instRawSys+int64(i), ts, seq); err != nil {
				return err
			}
		}
	}
	return nil
}

// endThread ends a thread: sched_process_free (its zombie state ends
// there) or a fork that reuses its tid (cut: the trace did not say when
// it ended). The tid's next use makes a new thread object.
func (m *machine) endThread(t *thread, ts int64, seq schema.Seq, cut bool) error {
	if err := m.exitCalls(t, ts, seq); err != nil {
		return err
	}
	if o, ok := m.cpuT.On(t.id); ok {
		if err := m.forget(int64(o), ts, seq); err != nil {
			return err
		}
	}
	t.ended, t.st = true, stUnknown
	if cut {
		return m.w.CloseCut(t.id, instSched, ts, seq)
	}
	return m.w.Close(t.id, instSched, ts, seq)
}

// interruptOf returns the interrupt an irq/softirq event names: a
// hardware interrupt handler is its irq number and handler name ("irq 28
// radeon"; the exit names only the number: the handler being run on the
// CPU), a softirq its vector ("softirq TIMER").
func (m *machine) interruptOf(act action, fs []field, cpuN schema.CPU) *interrupt {
	switch act {
	case actIrqEntry:
		n, _ := getInt(fs, kIrq)
		name, _ := get(fs, kName)
		return m.interrupt(false, n, name)
	case actIrqExit:
		n, _ := getInt(fs, kIrq)
		if ir, _ := m.handled(cpuN, false, n); ir != nil {
			return ir
		}
		return m.interrupt(false, n, nil)
	default:
		n, _ := getInt(fs, kVec)
		name, _ := get(fs, kAction)
		return m.interrupt(true, n, name)
	}
}

// handled finds the innermost interrupt of that kind and number being
// handled on the CPU, and how many are nested inside it; nil when none.
func (m *machine) handled(cpuN schema.CPU, soft bool, num int64) (*interrupt, int) {
	for i := 0; ; i++ {
		id := m.cpuT.Interrupt(cpuN, i)
		if id == schema.NoObject {
			return nil, 0
		}
		if ir := m.irqByID[id]; ir != nil && ir.soft == soft && ir.num == num {
			return ir, i
		}
	}
}

func (m *machine) interrupt(soft bool, num int64, name []byte) *interrupt {
	k := irqKey{soft, num}
	for _, ir := range m.irqs[k] {
		if ir.given == string(name) {
			return ir
		}
	}
	var label string
	switch {
	case soft && len(name) > 0:
		label = "softirq " + string(name)
	case soft:
		label = "softirq " + strconv.FormatInt(num, 10)
	case len(name) > 0:
		label = "irq " + strconv.FormatInt(num, 10) + " " + string(name)
	default:
		label = "irq " + strconv.FormatInt(num, 10)
	}
	ir := &interrupt{num: num, soft: soft, given: string(name), name: label}
	ir.id = m.w.NewObject("interrupt", label)
	m.w.SetNativeID(ir.id, num)
	spec := schema.HolderSpec{Role: schema.RoleInterrupt}
	if soft {
		m.w.SetAttr(ir.id, "softirq", true)
		spec.Group = "softirqs"
	}
	m.cpuT.Declare(ir.id, spec)
	m.irqs[k] = append(m.irqs[k], ir)
	m.irqByID[ir.id] = ir
	return ir
}

func (m *machine) irqName(id schema.ObjectID) string {
	if ir := m.irqByID[id]; ir != nil {
		return ir.name
	}
	return "an interrupt"
}

// irqEntry applies irq_handler_entry and softirq_entry: the interrupt's
// interval (instance = the CPU) opens and it holds the CPU until its
// exit. Interrupts nest (a hardirq inside a softirq).
func (m *machine) irqEntry(c *cpu, ir *interrupt, ts int64, seq schema.Seq, lineNo int64) error {
	cpuN := schema.CPU(c.n)
	ok, err := m.cpuT.Enter(cpuN, ir.id, ts, seq)
	if err != nil {
		return err
	}
	if !ok {
		m.diagOnce(findTooDeep, schema.Warning, lineNo, seq, func() string {
			return fmt.Sprintf("interrupts nested deeper than %d on CPU %d (entries without exits): the deeper ones are events only", maxInterrupts, c.n)
		})
		return nil
	}
	return m.w.Transition(ir.id, c.n, ts, m.syms.handler, seq, cpuN)
}

// irqExit applies irq_handler_exit and softirq_exit: the innermost open
// interrupt of that number on the CPU ends and the CPU goes back to what
// it interrupted; inner ones still open (their exits lost) are cut. An
// exit with no entry in the trace (it began inside the handler) is an
// event only. An interrupt entered while what the CPU ran was not known
// leaves it not known.
func (m *machine) irqExit(c *cpu, soft bool, fs []field, ts int64, seq schema.Seq, lineNo int64) error {
	cpuN := schema.CPU(c.n)
	key := kIrq
	if soft {
		key = kVec
	}
	n, _ := getInt(fs, key)
	ir, at := m.handled(cpuN, soft, n)
	if ir == nil {
		m.diagOnce(findIrqExitNoEntry, schema.Info, lineNo, seq, func() string {
			return fmt.Sprintf("an interrupt exit (%s %d on CPU %d) without its entry (the trace began inside the handler): event only", key, n, c.n)
		})
		return nil
	}
	if at > 0 {
		m.diagOnce(findIrqExitSkips, schema.Warning, lineNo, seq, func() string {
			return fmt.Sprintf("the exit of %s on CPU %d while %s inside it has no exit: the inner interval is cut here", ir.name, c.n, m.irqName(m.cpuT.Holder(cpuN)))
		})
		for i := 0; i < at; i++ {
			if err := m.w.CloseCut(m.cpuT.Interrupt(cpuN, i), c.n, ts, seq); err != nil {
				return err
			}
		}
	}
	if err := m.w.Close(ir.id, c.n, ts, seq); err != nil {
		return err
	}
	_, _, err := m.cpuT.Leave(cpuN, ir.id, ts, seq)
	return err
}

// syscall applies a system call's entry and exit on the line's thread:
// raw_syscalls (instance 1, state "NR n") and the syscalls events
// (instance 2, state = the call's name).
//   - an entry while a call of the same kind is open (its exit lost)
//     cuts that call;
//   - an exit of another call than the one open cuts the open one;
//   - an exit with no entry (the trace began inside the call) is an
//     event only.
func (m *machine) syscall(act action, t *thread, fs []field, e *eventLine, c *cpu, seq schema.Seq, lineNo int64) error {
	k := 0
	var state schema.Sym
	var id int64
	switch act {
	case actRawEnter, actRawExit:
		v, _ := get(fs, kID)
		id, _ = getSigned(v)
		state = m.nrSym(id)
	default:
		k = 1
		state = m.w.SymBytes(callOf(e))
	}
	inst := instRawSys + int64(k)
	oc := &t.sys[k]
	same := oc.open && ((k == 0 && oc.id == id) || (k == 1 && oc.name == state))
	switch act {
	case actRawEnter, actSysEnter:
		if oc.open {
			m.diagOnce(findSysReenter, schema.Warning, lineNo, seq, func() string {
				return fmt.Sprintf("%s enters %s while its %s has no exit: that call's interval is cut here", t.name, m.w.String(state), m.callName(k, oc))
			})
			if err := m.w.CloseCut(t.id, inst, e.ts, seq); err != nil {
				return err
			}
		}
		*oc = openCall{open: true, id: id, name: state}
		if !m.threadLevels[state] {
			m.threadLevels[state] = true
			m.w.StateLevel("thread", m.w.String(state), 0, "syscall")
		}
		return m.w.Transition(t.id, inst, e.ts, state, seq, schema.CPU(c.n))
	default:
		switch {
		case same:
			oc.open = false
			return m.w.Close(t.id, inst, e.ts, seq)
		case oc.open:
			m.diagOnce(findSysExitOther, schema.Warning, lineNo, seq, func() string {
				return fmt.Sprintf("%s returns from %s while its open call is %s: the open call's interval is cut here", t.name, m.w.String(state), m.callName(k, oc))
			})
			oc.open = false
			return m.w.CloseCut(t.id, inst, e.ts, seq)
		default:
			m.diagOnce(findSysExitNoEntry, schema.Info, lineNo, seq, func() string {
				return fmt.Sprintf("a system call exit (%s of %s) without its entry (the trace began inside the call): event only", m.w.String(state), t.name)
			})
		}
	}
	return nil
}

// callOf is the system call a syscalls event names: sys_read(...),
// sys_read -> ..., sys_enter_read: ..., sys_exit_read: ...
func callOf(e *eventLine) []byte {
	switch {
	case e.form != formEvent:
		return e.name[4:]
	case bytes.HasPrefix(e.name, []byte("sys_enter_")):
		return e.name[10:]
	}
	return e.name[9:]
}

func (m *machine) callName(k int, oc *openCall) string {
	if k == 0 {
		return m.w.String(m.nrSym(oc.id))
	}
	return m.w.String(oc.name)
}

// nrSym is the state of a raw system call: "NR n" as ftrace prints it
// (the number's name depends on the architecture, which the text does
// not give).
func (m *machine) nrSym(id int64) schema.Sym {
	if s, ok := m.nrSyms[id]; ok {
		return s
	}
	s := m.w.Sym("NR " + strconv.FormatInt(id, 10))
	m.nrSyms[id] = s
	return s
}

// lost applies a lost-events marker for CPU n: what ran there, its
// interrupts, and every thread not running on another CPU (a lost
// wakeup or switch on n could concern any of them) have unknown states
// until their next event; their intervals are cut here, at the last
// timestamp read.
func (m *machine) lost(n, count int64, lineNo int64) error {
	c := m.cpu(n)
	ts := m.lastTS
	what := "an unknown number of"
	if count >= 0 {
		what = strconv.FormatInt(count, 10)
		m.lostCount += count
	}
	m.diagOnce(findLost, schema.Warning, lineNo, schema.NoSeq, func() string {
		return fmt.Sprintf("CPU %d lost %s events: what ran on it, its interrupts and the states and system calls of the threads not running on another CPU are unknown until their next event; their intervals are cut at the marker (count = markers)", n, what)
	})
	for _, t := range m.list {
		if o, ok := m.cpuT.On(t.id); ok && o != schema.CPU(c.n) {
			continue
		}
		if t.st != stUnknown {
			if err := m.w.CloseCut(t.id, instSched, ts, schema.NoSeq); err != nil {
				return err
			}
		}
		t.st = stUnknown
		for i := range t.sys {
			if t.sys[i].open {
				t.sys[i].open = false
				if err := m.w.CloseCut(t.id, instRawSys+int64(i), ts, schema.NoSeq); err != nil {
					return err
				}
			}
		}
	}
	return m.unknown(c.n, ts, schema.NoSeq)
}

// cpu returns CPU n, making its object on first use.
func (m *machine) cpu(n int64) *cpu {
	for int64(len(m.cpus)) <= n {
		m.cpus = append(m.cpus, nil)
	}
	if c := m.cpus[n]; c != nil {
		return c
	}
	c := &cpu{n: n}
	m.cpuT.Object(schema.CPU(n)) // "cpu N"
	m.cpus[n] = c
	return c
}

// idleThread is the idle task of a CPU (pid 0, "swapper/N"): the context
// of the lines the kernel prints for it, and what holds the CPU when it
// idles (an idle holder: the CPU is idle). It has no states of its own:
// the CPU's intervals are its running time.
func (m *machine) idleThread(c *cpu) *thread {
	if c.idle == nil {
		name := "swapper/" + strconv.FormatInt(c.n, 10)
		t := &thread{tid: 0, name: name, named: true, comm: name}
		t.id = m.w.NewObject("thread", name)
		m.w.SetNativeID(t.id, 0)
		m.w.SetPID(t.id, 0)
		m.w.SetAttr(t.id, "idle", true)
		m.cpuT.Declare(t.id, schema.HolderSpec{Role: schema.RoleIdle})
		m.track(t)
		c.idle = t
	}
	return c.idle
}

// track files a thread by its object id.
func (m *machine) track(t *thread) {
	for int(t.id) >= len(m.byID) {
		m.byID = append(m.byID, nil)
	}
	m.byID[t.id] = t
}

// byObject returns the thread (or idle task) of an object id, nil for
// another object or none.
func (m *machine) byObject(id schema.ObjectID) *thread {
	if id <= 0 || int(id) >= len(m.byID) {
		return nil
	}
	return m.byID[id]
}

// isComm reports whether a comm is a real name: ftrace prints "<...>"
// when it has not kept the thread's name.
func isComm(b []byte) bool {
	return len(b) > 0 && string(b) != "<...>" && string(b) != "<idle>"
}

// thread returns the thread of a tid (nil for 0, the idle task, and for
// negative ids), making it on first use or after its end; comm, when it
// is a real name, names it (first) or updates attrs.comm (later).
func (m *machine) thread(tid int64, comm []byte) *thread {
	if tid <= 0 {
		return nil
	}
	t := m.threads[tid]
	if t == nil || t.ended {
		t = &thread{tid: tid}
		if isComm(comm) {
			t.comm, t.named = string(comm), true
			t.name = t.comm + "-" + strconv.FormatInt(tid, 10)
		} else {
			t.name = "<...>-" + strconv.FormatInt(tid, 10)
		}
		t.id = m.w.NewObject("thread", t.name)
		m.w.SetNativeID(t.id, tid)
		m.cpuT.Declare(t.id, schema.HolderSpec{Role: schema.RoleTask})
		m.threads[tid] = t
		m.list = append(m.list, t)
		m.track(t)
		return t
	}
	if !isComm(comm) || string(comm) == t.comm {
		return t
	}
	t.comm = string(comm)
	if !t.named {
		t.named = true
		t.name = t.comm + "-" + strconv.FormatInt(tid, 10)
		m.w.SetName(t.id, t.name) // the CPU tracker shows it under this name from now on
		if p := t.proc; p != nil && p.tgid == tid && !p.named {
			p.name, p.named = t.comm, true
			m.w.SetName(p.id, p.name)
		}
		return t
	}
	m.w.SetAttr(t.id, "comm", t.comm)
	return t
}

// setTGID gives a thread its process (the TGID column), the first time.
func (m *machine) setTGID(t *thread, tgid int64) {
	if t == nil || t.proc != nil || t.tid <= 0 {
		return
	}
	p := m.procs[tgid]
	if p == nil {
		p = &process{tgid: tgid}
		switch main := m.threads[tgid]; {
		case main != nil && main.named:
			p.name, p.named = main.comm, true
		case t.named:
			p.name = t.comm
		default:
			p.name = strconv.FormatInt(tgid, 10)
		}
		p.id = m.w.NewObject("process", p.name)
		m.w.SetNativeID(p.id, tgid)
		m.w.SetPID(p.id, tgid)
		m.procs[tgid] = p
	}
	if t.tid == tgid && t.named && !p.named {
		p.name, p.named = t.comm, true
		m.w.SetName(p.id, p.name)
	}
	t.proc = p
	m.w.SetPID(t.id, tgid)
	m.w.SetParent(t.id, p.id)
	m.cpuT.Declare(t.id, schema.HolderSpec{Role: schema.RoleTask, Process: p.id})
}

// threadLevel declares a thread state's aggregate the first time it is
// used: running → on_cpu, runnable → runnable, the others → blocked.
func (m *machine) threadLevel(s schema.Sym, k stateKind) {
	if m.threadLevels[s] {
		return
	}
	m.threadLevels[s] = true
	parent := "blocked"
	switch k {
	case stRunning:
		parent = "on_cpu"
	case stRunnable:
		parent = "runnable"
	}
	m.w.StateLevel("thread", m.w.String(s), 0, parent)
}

// finish reports what the header said was overwritten. (The CPU
// tracker declares the CPU states' levels: thread → its process (the
// TGID column's) → threads → busy, a thread without a known process keeps
// its name at level 1; interrupt handler → interrupts → busy, softirq →
// softirqs → busy; swapper/N → idle → idle.)
func (m *machine) finish() error {
	if m.entriesWritten > m.entriesInBuffer {
		latest, ok := int64(0), false
		for _, c := range m.cpus {
			if c != nil && c.seen && (!ok || c.firstTS > latest) {
				latest, ok = c.firstTS, true
			}
		}
		from := ""
		if ok {
			from = fmt.Sprintf("; every CPU's events are present from %s on (the latest first event of a CPU), states before it may miss events", fmtNS(latest))
		}
		m.w.Diagf(schema.Warning, m.entriesLine, schema.NoSeq,
			"the ring buffer held %d of the %d events written (entries-in-buffer/entries-written): the oldest %d were overwritten, so each CPU's events begin at its own time%s",
			m.entriesInBuffer, m.entriesWritten, m.entriesWritten-m.entriesInBuffer, from)
	}
	if m.lostCount > 0 {
		m.w.SetMeta("lost_events", m.lostCount)
	}
	m.w.SetTimeUnit("s", 1e9)
	return nil
}

func (m *machine) diagOnce(f finding, sev schema.Severity, line int64, seq schema.Seq, msg func() string) {
	if m.seen[f] {
		m.w.DiagRepeat(m.once[f])
		return
	}
	m.seen[f] = true
	m.once[f] = m.w.Diag(sev, line, seq, msg())
}

func nameOf(t *thread) string {
	if t == nil {
		return "the idle task"
	}
	return t.name
}

func (m *machine) holderName(h schema.ObjectID) string {
	t := m.byObject(h)
	if t == nil || t.tid <= 0 {
		return "the idle task"
	}
	return t.name
}

// fmtNS prints ns as ftrace prints time: seconds with 6 decimals, or 9
// when the ns are not whole µs.
func fmtNS(ns int64) string {
	if ns%1000 == 0 {
		return fmt.Sprintf("%d.%06d s", ns/1_000_000_000, ns%1_000_000_000/1000)
	}
	return fmt.Sprintf("%d.%09d s", ns/1_000_000_000, ns%1_000_000_000)
}
