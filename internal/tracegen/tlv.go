package tracegen

// WriteTLV renders the schedule WriteBTF simulates (the same Config gives
// the same schedule) as a TraceLogVisualizer log, in one of three styles,
// with the resource file that declares its resources, and returns what the
// log says in TLV's terms: the time each resource spent in each value of
// its "state" attribute and its behaviors, and what held each processor
// (TLVTruth.CPUBusy, CPUHolders). The truth is kept by the renderer as it
// writes, never by reading the log back.
//
// # Resources (all styles)
//
//   - The tasks, in the order of the simulation, named as in BTF
//     (Task_5ms_0), type Task, id 1..Tasks, TOPPERS priority pri (1 is
//     the highest), FMP: prcId = core + 1.
//   - One interrupt handler per core, ISR_Tick_Core_<i> (the BTF ISR
//     ISR_Tick on core i), type InterruptHandler, id 5, FMP: prcIdI = i+1.
//   - The running context: CurrentContext (TOPPERS/ASP, one core) or one
//     CurrentContext_PRC<i+1> per core (standard format, TOPPERS/FMP).
//   - The signal SIG_Speed, type ApplogState (id SIG_Speed), whose state
//     is the value the signal writer writes.
//
// # Standard format (TLVStandard)
//
// Header "asp", no conversion rules. Each schedule event becomes:
//
//	activate X             [t]X.activate()  [t]X.state=RUNNABLE
//	start / resume X       [t]X.dispatch()  [t]X.state=RUNNING  [t]CurrentContext_PRCn.name=X
//	preempt X              [t]X.preempt()   [t]X.state=RUNNABLE
//	terminate X            [t]X.exit()      [t]X.state=DORMANT
//	wait X (event)         [t]X.wait()      [t]X.state=WAITING
//	release X              [t]X.releaseFromWaiting()  [t]X.state=RUNNABLE
//	poll X (spins on the semaphore)         [t]X.state=SPINNING
//	run X (gets it)                         [t]X.state=RUNNING
//	park X (preempted while spinning)       [t]X.preempt()  [t]X.state=PARKED
//	poll_parking X                          [t]X.dispatch() [t]X.state=SPINNING [t]CurrentContext_PRCn.name=X
//	release_parking X                       [t]X.state=RUNNABLE
//	ISR start / terminate  [t]ISR_Tick_Core_i.enter() / .leave(), state RUNNING / DORMANT (start: the context too)
//	semaphore              X.enterSVC(wai_sem, semid=1) at the request, X.leaveSVC(wai_sem, ercd=0) when assigned,
//	                       X.enterSVC(sig_sem, semid=1) X.leaveSVC(sig_sem, ercd=0) at the release
//	event EV_Done          X.enterSVC(wai_flg, flgid=1) at wait_event; at clear_event X.leaveSVC(wai_flg, ercd=0),
//	                       X.enterSVC(clr_flg, flgid=1) X.leaveSVC(clr_flg, ercd=0); set_event: X.enterSVC(set_flg, flgid=1) X.leaveSVC(set_flg, ercd=0)
//	signal write           [t]SIG_Speed.state=V (when V differs from the current value)
//
// So a task's RUNNING time is exactly its running time in BTF.
//
// # TOPPERS kernel logs (TOPPERSASP, TOPPERSFMP)
//
// The messages of TOPPERS's trace log ("[t] dispatch to task 2."; FMP:
// "[t]:[n]: dispatch to task 2.", n = core + 1), with what the kernel
// would log: a task preempted by an interrupt stays RUNNING (the kernel
// logs no dispatch when the interrupted task continues), and a task
// preempted by another task stops RUNNING at the next "dispatch to" of
// its processor, which the bundled rules turn into its preemption.
//
//	activate X             task N becomes RUNNABLE.
//	start / resume X       dispatch from task M. (when M was RUNNING there)  dispatch to task N.
//	                       (nothing when X is still RUNNING: only an interrupt ran)
//	terminate X            enter to ext_tsk.  task N becomes DORMANT.  dispatch from task N.
//	wait X                 task N becomes WAITING.  dispatch from task N.
//	release X              task N becomes RUNNABLE.
//	ISR start / terminate  enter to int handler 5. / leave from int handler 5.
//	semaphore (ASP)        enter to wai_sem semid=1. / leave from wai_sem ercd=0. / enter to sig_sem semid=1. leave from sig_sem ercd=0.
//	semaphore (FMP)        the same with loc_spn spnid=1 and unl_spn: the simulated tasks spin on it
//	event EV_Done          enter to wai_flg flgid=1 waiptn=1. (leave from wai_flg ercd=0. when it returns)
//	                       enter to clr_flg flgid=1 clrptn=0. leave from clr_flg ercd=0.
//	                       enter to set_flg flgid=1 setptn=1. [task N becomes RUNNABLE.] leave from set_flg ercd=0.
//	signal write           applog state : ID SIG_Speed : V.
//
// A service call returns ("leave from ...") when its task runs again: a
// task handed the semaphore while another task or an interrupt runs logs
// the return when it is next dispatched. Spinning and parking are not
// states a TOPPERS kernel logs: the task stays RUNNING. TOPPERS/ASP is a
// single-processor kernel: TOPPERSASP needs Cores = 1.
//
// Runnables, stimuli, signal reads, core frequencies and the
// semaphore's own states are not rendered in any style.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
)

// TLVStyle is how WriteTLV renders the schedule.
type TLVStyle uint8

const (
	TLVStandard TLVStyle = iota // TLV's standard format
	TOPPERSASP                  // a TOPPERS/ASP kernel log (one core), read with the bundled "asp" rules
	TOPPERSFMP                  // a TOPPERS/FMP kernel log, read with the bundled "fmp" rules
)

func (st TLVStyle) String() string {
	switch st {
	case TOPPERSASP:
		return "toppers-asp"
	case TOPPERSFMP:
		return "toppers-fmp"
	}
	return "tlv"
}

// TLVTruth is what a log WriteTLV wrote says, in the terms of traceduck's
// TLV tables (ingest/tlv/README.md).
type TLVTruth struct {
	Lines  int // log lines written
	Events int // standard-format lines the log stands for (the standard format: its lines; TOPPERS: the outputs of the bundled rules), the events an ingest makes
	// States: resource -> value of its "state" attribute -> ns, of the
	// complete intervals only (the initial value's interval, which starts
	// at an unknown time, and the intervals open at the end are
	// truncated). Tasks and interrupt handlers.
	States map[string]map[string]int64
	// Behaviors: resource -> behavior -> times (activate, dispatch,
	// preempt, exit, wait, releaseFromWaiting, enter, leave, enterSVC,
	// leaveSVC).
	Behaviors map[string]map[string]int
	// SignalNS is the time of SIG_Speed's complete state intervals,
	// SignalValueNS the sum of value × ns over them.
	SignalNS, SignalValueNS int64
	FirstNS, LastNS         int64 // ns, times of the first and last line
	// The processors as the log says who holds them (ingest/tlv/README.md,
	// "The CPU model"), kept as the log is written: a task holds its core
	// while its state is RUNNING, or SPINNING (the standard format's
	// polling: active waiting holds the core, as in the BTF seed's model;
	// PARKED does not); the core's interrupt handler takes it over while
	// it runs. In a TOPPERS log a task preempted by an interrupt stays
	// RUNNING and holds the core again when the handler leaves. Keys are
	// the processors as traceduck names them: "cpu" (TOPPERS/ASP, one
	// processor) or "cpu N", N = core + 1 (the standard format's
	// CurrentContext_PRC<N>, FMP's processor N). The processors are known
	// from the first line; the interval each one is in at the end is left
	// out (it is cut by the end of the log).
	CPUBusy    map[string]int64 // processor -> ns held by a task or handler
	CPUKnown   map[string]int64 // processor -> ns held or idle
	CPUHolders map[string]int64 // task or handler -> ns it held its core
	// CPUHeld: processor -> task or handler ("idle": none) -> ns it
	// held it, as CPUKnown counts.
	CPUHeld map[string]map[string]int64
	// Intervals: every interval of a task's or handler's "state"
	// attribute, in the order they began (of one resource); the initial
	// value's (from the first line) and those open at the end (to the
	// last line) truncated.
	Intervals []TLVInterval
	// Schedule is the simulator's own truth of the schedule rendered, in
	// BTF terms (its Lines count the BTF events the schedule is made of,
	// which were not written).
	Schedule Truth
}

// TLVInterval is an interval of a resource's "state" attribute.
type TLVInterval struct {
	Resource, State string
	Start, End      int64
	Truncated       bool
}

// TOPPERS task states, and the standard format's two more.
const (
	tDormant uint8 = iota
	tRunnable
	tRunning
	tWaiting
	tSpinning
	tParked
	numTStates
)

var tStateNames = [numTStates]string{"DORMANT", "RUNNABLE", "RUNNING", "WAITING", "SPINNING", "PARKED"}

var sigSpeed = []byte("SIG_Speed")

// tlvRes is a task or an interrupt handler as the log shows it.
type tlvRes struct {
	name  []byte
	id    int
	core  int
	prio  int // TOPPERS priority
	state uint8
	since int64 // when state began; -1: the initial value (truncated)
	ns    [numTStates]int64
	n     [numTStates]int // complete intervals
	beh   map[string]int
	isr   bool // an interrupt handler

	pendingLeave string // TOPPERS: a service call that returns when the task runs again
	inWaiFlg     bool   // TOPPERS: in wai_flg
}

type tlvRenderer struct {
	style TLVStyle
	sim   *sim
	bw    *bufio.Writer
	werr  error
	buf   []byte
	limit int

	lines, events int
	first, last   int64

	tasks    []*tlvRes
	byName   map[string]*tlvRes
	handlers []*tlvRes // per core
	coreIdx  map[string]int
	ctxNames [][]byte // per core
	cur      []*tlvRes
	isrOn    []bool

	// the CPU truth: per core, the task holding it as the log says (base),
	// what holds it now (held: the handler or base; nil idle), since when
	base, held        []*tlvRes
	heldSince         []int64
	cpuBusy, cpuKnown []int64
	cpuHolders        map[string]int64
	cpuHeld           []map[string]int64
	intervals         []TLVInterval

	sigVal, sigSince, sigNS, sigValNS int64
	setFlgLeave                       *tlvRes // TOPPERS: set_flg returns after the waiter's release
}

// WriteTLV simulates cfg's schedule and writes it to log in the given
// style, and the resource file that declares its resources to res.
// cfg.Events is the number of log lines to write (the simulation stops
// once reached); cfg.TimeScale is the unit of the log's times.
func WriteTLV(log, res io.Writer, cfg Config, style TLVStyle) (TLVTruth, error) {
	if cfg.Events <= 0 {
		return TLVTruth{}, errors.New("tracegen: Events must be > 0")
	}
	if cfg.Cores < 1 {
		return TLVTruth{}, errors.New("tracegen: Cores must be >= 1")
	}
	if style == TOPPERSASP && cfg.Cores != 1 {
		return TLVTruth{}, fmt.Errorf("tracegen: a TOPPERS/ASP log has one processor, not %d (TOPPERS/FMP has several)", cfg.Cores)
	}
	if cfg.PoolUnits != 0 {
		return TLVTruth{}, errors.New("tracegen: PoolUnits is for BTF only: the TLV renderings know SEM_Shared alone")
	}
	if cfg.Inversion {
		return TLVTruth{}, errors.New("tracegen: Inversion is for BTF only: the TLV renderings know SEM_Shared alone")
	}
	if style > TOPPERSFMP {
		return TLVTruth{}, fmt.Errorf("tracegen: unknown TLV style %d", style)
	}
	if cfg.Tasks < 0 {
		return TLVTruth{}, errors.New("tracegen: Tasks must be >= 0")
	}
	if cfg.Tasks == 0 {
		cfg.Tasks = 6
	}
	if cfg.TimeScale == "" {
		cfg.TimeScale = "ns"
	}
	s, err := newSim(nil, cfg)
	if err != nil {
		return TLVTruth{}, err
	}
	s.limit = math.MaxInt
	r := newTLVRenderer(s, log, style, cfg.Events)
	if err := r.writeResources(res, cfg.TimeScale); err != nil {
		return TLVTruth{}, fmt.Errorf("tracegen: write resources: %w", err)
	}
	s.obs = r
	s.run()
	if err := r.bw.Flush(); err != nil && r.werr == nil {
		r.werr = err
	}
	if r.werr != nil {
		return TLVTruth{}, fmt.Errorf("tracegen: write: %w", r.werr)
	}
	return r.truth(), nil
}

func newTLVRenderer(s *sim, w io.Writer, style TLVStyle, limit int) *tlvRenderer {
	r := &tlvRenderer{
		style:    style,
		sim:      s,
		bw:       bufio.NewWriterSize(w, 256<<10),
		buf:      make([]byte, 0, 256),
		limit:    limit,
		byName:   map[string]*tlvRes{},
		coreIdx:  map[string]int{},
		cur:      make([]*tlvRes, len(s.cores)),
		isrOn:    make([]bool, len(s.cores)),
		sigSince: -1,

		base:       make([]*tlvRes, len(s.cores)),
		held:       make([]*tlvRes, len(s.cores)),
		heldSince:  make([]int64, len(s.cores)),
		cpuBusy:    make([]int64, len(s.cores)),
		cpuKnown:   make([]int64, len(s.cores)),
		cpuHolders: map[string]int64{},
		cpuHeld:    make([]map[string]int64, len(s.cores)),
	}
	for c := range r.cpuHeld {
		r.cpuHeld[c] = map[string]int64{}
	}
	ntasks := 0
	for _, p := range s.procs {
		if !p.isr {
			ntasks++
		}
	}
	for _, p := range s.procs {
		if p.isr {
			continue
		}
		t := &tlvRes{name: p.name, id: len(r.tasks) + 1, core: p.core, prio: ntasks + 1 - p.prio, since: -1, beh: map[string]int{}}
		r.tasks = append(r.tasks, t)
		r.byName[string(p.name)] = t
	}
	for i := range s.cores {
		r.coreIdx[string(s.cores[i].name)] = i
		r.handlers = append(r.handlers, &tlvRes{name: []byte("ISR_Tick_Core_" + strconv.Itoa(i)), id: 5, core: i, since: -1, beh: map[string]int{}, isr: true})
		if style == TOPPERSASP {
			r.ctxNames = append(r.ctxNames, []byte("CurrentContext"))
		} else {
			r.ctxNames = append(r.ctxNames, []byte("CurrentContext_PRC"+strconv.Itoa(i+1)))
		}
	}
	return r
}

// writeResources writes the resource file (JSON, in the resources' order).
func (r *tlvRenderer) writeResources(w io.Writer, unit string) error {
	bw := bufio.NewWriter(w)
	set := "asp"
	if r.style == TOPPERSFMP {
		set = "fmp"
	}
	rules := `"ConvertRules": ["` + set + `"], `
	if r.style == TLVStandard {
		rules = ""
	}
	fmt.Fprintf(bw, "{\n\t\"TimeScale\": %q, \"TimeRadix\": 10, %s\"ResourceHeaders\": [%q],\n\t\"Resources\": {\n", unit, rules, set)
	for _, c := range r.ctxNames {
		fmt.Fprintf(bw, "\t\t%q: {\"Type\": \"Context\", \"Attributes\": {\"name\": \"None\"}},\n", c)
	}
	for _, t := range r.tasks {
		prc := ""
		if r.style == TOPPERSFMP {
			prc = fmt.Sprintf(", \"prcId\": %d", t.core+1)
		}
		fmt.Fprintf(bw, "\t\t%q: {\"Type\": \"Task\", \"Attributes\": {\"id\": %d, \"atr\": \"TA_NULL\", \"pri\": %d%s, \"state\": \"DORMANT\"}},\n", t.name, t.id, t.prio, prc)
	}
	for _, h := range r.handlers {
		prc := ""
		if r.style == TOPPERSFMP {
			prc = fmt.Sprintf(", \"prcIdI\": %d", h.core+1)
		}
		fmt.Fprintf(bw, "\t\t%q: {\"Type\": \"InterruptHandler\", \"Attributes\": {\"id\": %d%s, \"state\": \"DORMANT\"}},\n", h.name, h.id, prc)
	}
	fmt.Fprintf(bw, "\t\t\"SIG_Speed\": {\"Type\": \"ApplogState\", \"Attributes\": {\"id\": \"SIG_Speed\", \"state\": 0}}\n\t}\n}\n")
	return bw.Flush()
}

// ---- writing lines ----

// stamp starts a line at time t: "[t]", TOPPERS "[t] ", FMP "[t]:[n]: ".
func (r *tlvRenderer) stamp(t int64, core int) {
	s := r.sim
	b := append(r.buf[:0], '[')
	if s.div > 1 {
		b = strconv.AppendInt(b, t/s.div, 10)
	} else {
		b = strconv.AppendInt(b, t*s.mul, 10)
	}
	b = append(b, ']')
	switch r.style {
	case TOPPERSASP:
		b = append(b, ' ')
	case TOPPERSFMP:
		b = append(b, ":["...)
		b = strconv.AppendInt(b, int64(core+1), 10)
		b = append(b, "]: "...)
	}
	r.buf = b
	if r.lines == 0 {
		r.first = t
		for c := range r.heldSince {
			r.heldSince[c] = t // every processor is known from the first line
		}
	}
	r.last = t
}

// line ends the line begun by stamp; it stands for outputs standard-format lines.
func (r *tlvRenderer) line(outputs int) {
	r.buf = append(r.buf, '\n')
	if _, err := r.bw.Write(r.buf); err != nil && r.werr == nil {
		r.werr = err
		r.sim.halt = true
	}
	r.lines++
	r.events += outputs
	if r.lines >= r.limit {
		r.sim.halt = true
	}
}

// std writes "[t]NAME.rest" (standard format).
func (r *tlvRenderer) std(t int64, name []byte, rest string) {
	r.stamp(t, 0)
	r.buf = append(append(append(r.buf, name...), '.'), rest...)
	r.line(1)
}

// behavior writes a standard-format behavior and counts it.
func (r *tlvRenderer) behavior(t int64, x *tlvRes, name, args string) {
	x.beh[name]++
	r.std(t, x.name, name+"("+args+")")
}

// msg writes a TOPPERS log line "[t] text" standing for outputs lines.
func (r *tlvRenderer) msg(t int64, core int, outputs int, parts ...string) {
	r.stamp(t, core)
	for _, p := range parts {
		r.buf = append(r.buf, p...)
	}
	r.line(outputs)
}

// taskMsg writes "[t] <pre><id><post>".
func (r *tlvRenderer) taskMsg(t int64, x *tlvRes, outputs int, pre, post string) {
	r.stamp(t, x.core)
	r.buf = append(r.buf, pre...)
	r.buf = strconv.AppendInt(r.buf, int64(x.id), 10)
	r.buf = append(r.buf, post...)
	r.line(outputs)
}

// setState records x entering state st at t (and writes it in the
// standard format). The same state again writes nothing.
func (r *tlvRenderer) setState(t int64, x *tlvRes, st uint8) {
	if x.state == st {
		return
	}
	if x.since >= 0 {
		x.ns[x.state] += t - x.since
		x.n[x.state]++
	}
	r.intervals = append(r.intervals, TLVInterval{string(x.name), tStateNames[x.state], max(x.since, r.first), t, x.since < 0})
	x.state, x.since = st, t
	if r.style == TLVStandard {
		r.std(t, x.name, "state="+tStateNames[st])
	}
	if !x.isr {
		if st == tRunning || st == tSpinning {
			r.base[x.core] = x
		} else if r.base[x.core] == x {
			r.base[x.core] = nil
		}
	}
	r.cpuUpdate(t, x.core) // a handler: isrOn says whether it runs
}

// cpuUpdate moves core c's CPU truth to what holds it now: its handler
// while it runs, else the task holding it.
func (r *tlvRenderer) cpuUpdate(t int64, c int) {
	h := r.base[c]
	if r.isrOn[c] {
		h = r.handlers[c]
	}
	if h == r.held[c] {
		return
	}
	d := t - r.heldSince[c]
	r.cpuKnown[c] += d
	if x := r.held[c]; x != nil {
		r.cpuBusy[c] += d
		r.cpuHolders[string(x.name)] += d
		r.cpuHeld[c][string(x.name)] += d
	} else {
		r.cpuHeld[c]["idle"] += d
	}
	r.held[c], r.heldSince[c] = h, t
}

// context writes the running context of core c (standard format).
func (r *tlvRenderer) context(t int64, c int, x *tlvRes) {
	r.stamp(t, c)
	r.buf = append(append(append(r.buf, r.ctxNames[c]...), ".name="...), x.name...)
	r.line(1)
}

// ---- the schedule ----

func (r *tlvRenderer) event(t int64, src []byte, srcInst int64, k kind, tgt []byte, tgtInst int64, a act, note int64, noteStr []byte) {
	switch k {
	case kT:
		x := r.byName[string(tgt)]
		c := x.core
		if r.style == TLVStandard {
			r.stdTask(t, c, x, a)
		} else {
			r.toppersTask(t, c, x, a)
		}
	case kI:
		c, ok := r.coreIdx[string(src)]
		if !ok { // the stimulus's activate: nothing until it starts
			return
		}
		h := r.handlers[c]
		switch a {
		case aStart:
			r.isrOn[c] = true
			h.beh["enter"]++
			if r.style == TLVStandard {
				r.std(t, h.name, "enter()")
				r.setState(t, h, tRunning)
				r.context(t, c, h)
			} else {
				r.msg(t, c, 3, "enter to int handler 5.")
				r.setState(t, h, tRunning)
			}
		case aTerminate:
			r.isrOn[c] = false
			h.beh["leave"]++
			if r.style == TLVStandard {
				r.std(t, h.name, "leave()")
			} else {
				r.msg(t, c, 2, "leave from int handler 5.")
			}
			r.setState(t, h, tDormant)
		}
	case kSEM:
		x, ok := r.byName[string(src)]
		if !ok { // the semaphore's own states
			return
		}
		r.semaphore(t, x, a)
	case kEVENT:
		r.eventFlag(t, r.byName[string(src)], a, noteStr)
	case kSIG:
		if a != aWrite || note == r.sigVal {
			return
		}
		if r.sigSince >= 0 {
			r.sigNS += t - r.sigSince
			r.sigValNS += r.sigVal * (t - r.sigSince)
		}
		r.sigVal, r.sigSince = note, t
		x := r.byName[string(src)]
		if r.style == TLVStandard {
			r.std(t, sigSpeed, "state="+strconv.FormatInt(note, 10))
		} else {
			r.msg(t, x.core, 1, "applog state : ID SIG_Speed : ", strconv.FormatInt(note, 10), ".")
		}
	}
}

// stdTask renders a task's state change in the standard format.
func (r *tlvRenderer) stdTask(t int64, c int, x *tlvRes, a act) {
	switch a {
	case aActivate:
		r.behavior(t, x, "activate", "")
		r.setState(t, x, tRunnable)
	case aStart, aResume:
		r.behavior(t, x, "dispatch", "")
		r.setState(t, x, tRunning)
		r.context(t, c, x)
	case aPreempt:
		r.behavior(t, x, "preempt", "")
		r.setState(t, x, tRunnable)
	case aTerminate:
		r.behavior(t, x, "exit", "")
		r.setState(t, x, tDormant)
	case aWait:
		r.behavior(t, x, "wait", "")
		r.setState(t, x, tWaiting)
	case aRelease:
		r.behavior(t, x, "releaseFromWaiting", "")
		r.setState(t, x, tRunnable)
	case aPoll:
		r.setState(t, x, tSpinning)
	case aRun:
		r.setState(t, x, tRunning)
	case aPark:
		r.behavior(t, x, "preempt", "")
		r.setState(t, x, tParked)
	case aPollParking:
		r.behavior(t, x, "dispatch", "")
		r.setState(t, x, tSpinning)
		r.context(t, c, x)
	case aReleaseParking:
		r.setState(t, x, tRunnable)
	}
}

// toppersTask renders a task's state change as a TOPPERS kernel logs it.
func (r *tlvRenderer) toppersTask(t int64, c int, x *tlvRes, a act) {
	switch a {
	case aActivate:
		x.beh["activate"]++
		r.taskMsg(t, x, 2, "task ", " becomes RUNNABLE.")
		r.setState(t, x, tRunnable)
	case aStart, aResume, aPollParking, aRun:
		if r.cur[c] != x {
			r.dispatchTo(t, c, x)
		}
		if x.pendingLeave != "" {
			x.beh["leaveSVC"]++
			r.msg(t, c, 1, "leave from ", x.pendingLeave, " ercd=0.")
			x.pendingLeave = ""
		}
	case aTerminate:
		x.beh["enterSVC"]++
		r.msg(t, c, 1, "enter to ext_tsk.")
		x.beh["exit"]++
		r.taskMsg(t, x, 2, "task ", " becomes DORMANT.")
		r.setState(t, x, tDormant)
		r.taskMsg(t, x, 0, "dispatch from task ", ".")
		r.cur[c] = nil
	case aWait:
		x.beh["wait"]++
		r.taskMsg(t, x, 2, "task ", " becomes WAITING.")
		r.setState(t, x, tWaiting)
		r.taskMsg(t, x, 0, "dispatch from task ", ".")
		r.cur[c] = nil
	case aRelease:
		x.beh["releaseFromWaiting"]++
		if a := r.setFlgLeave; a != nil {
			// the setter's processor logs the release
			r.stamp(t, a.core)
		} else {
			r.stamp(t, c)
		}
		r.buf = append(r.buf, "task "...)
		r.buf = strconv.AppendInt(r.buf, int64(x.id), 10)
		r.buf = append(r.buf, " becomes RUNNABLE."...)
		r.line(2)
		r.setState(t, x, tRunnable)
		if a := r.setFlgLeave; a != nil {
			a.beh["leaveSVC"]++
			r.msg(t, a.core, 1, "leave from set_flg ercd=0.")
			r.setFlgLeave = nil
		}
	}
	// preempt, poll, park, release_parking: the task stays RUNNING or
	// RUNNABLE as the kernel sees it.
}

// dispatchTo writes the dispatch of x on core c, which preempts the task
// RUNNING there.
func (r *tlvRenderer) dispatchTo(t int64, c int, x *tlvRes) {
	out := 3
	if y := r.cur[c]; y != nil {
		r.taskMsg(t, y, 0, "dispatch from task ", ".")
		y.beh["preempt"]++
		r.setState(t, y, tRunnable)
		out += 2
	}
	x.beh["dispatch"]++
	r.stamp(t, c)
	r.buf = append(r.buf, "dispatch to task "...)
	r.buf = strconv.AppendInt(r.buf, int64(x.id), 10)
	r.buf = append(r.buf, '.')
	r.line(out)
	r.setState(t, x, tRunning)
	r.cur[c] = x
}

// semaphore renders a task's use of SEM_Shared.
func (r *tlvRenderer) semaphore(t int64, x *tlvRes, a act) {
	get, put := "wai_sem", "sig_sem"
	if r.style == TOPPERSFMP {
		get, put = "loc_spn", "unl_spn"
	}
	switch a {
	case aRequest:
		x.beh["enterSVC"]++
		if r.style == TLVStandard {
			r.std(t, x.name, "enterSVC(wai_sem, semid=1)")
		} else {
			r.msg(t, x.core, 1, "enter to ", get, " ", get[4:], "id=1.")
		}
	case aAssigned:
		switch {
		case r.style == TLVStandard:
			x.beh["leaveSVC"]++
			r.std(t, x.name, "leaveSVC(wai_sem, ercd=0)")
		case r.cur[x.core] == x && !r.isrOn[x.core]:
			x.beh["leaveSVC"]++
			r.msg(t, x.core, 1, "leave from ", get, " ercd=0.")
		default:
			x.pendingLeave = get
		}
	case aReleased:
		x.beh["enterSVC"]++
		x.beh["leaveSVC"]++
		if r.style == TLVStandard {
			r.std(t, x.name, "enterSVC(sig_sem, semid=1)")
			r.std(t, x.name, "leaveSVC(sig_sem, ercd=0)")
		} else {
			r.msg(t, x.core, 1, "enter to ", put, " ", put[4:], "id=1.")
			r.msg(t, x.core, 1, "leave from ", put, " ercd=0.")
		}
	}
}

// eventFlag renders EV_Done as an event flag.
func (r *tlvRenderer) eventFlag(t int64, x *tlvRes, a act, waiter []byte) {
	std := r.style == TLVStandard
	switch a {
	case aWaitEvent:
		x.beh["enterSVC"]++
		if std {
			r.std(t, x.name, "enterSVC(wai_flg, flgid=1)")
		} else {
			r.msg(t, x.core, 1, "enter to wai_flg flgid=1 waiptn=1.")
		}
		x.inWaiFlg = true
	case aClearEvent:
		if x.inWaiFlg {
			x.beh["leaveSVC"]++
			if std {
				r.std(t, x.name, "leaveSVC(wai_flg, ercd=0)")
			} else {
				r.msg(t, x.core, 1, "leave from wai_flg ercd=0.")
			}
			x.inWaiFlg = false
		}
		x.beh["enterSVC"]++
		x.beh["leaveSVC"]++
		if std {
			r.std(t, x.name, "enterSVC(clr_flg, flgid=1)")
			r.std(t, x.name, "leaveSVC(clr_flg, ercd=0)")
		} else {
			r.msg(t, x.core, 1, "enter to clr_flg flgid=1 clrptn=0.")
			r.msg(t, x.core, 1, "leave from clr_flg ercd=0.")
		}
	case aSetEvent:
		x.beh["enterSVC"]++
		if std {
			x.beh["leaveSVC"]++
			r.std(t, x.name, "enterSVC(set_flg, flgid=1)")
			r.std(t, x.name, "leaveSVC(set_flg, ercd=0)")
			return
		}
		r.msg(t, x.core, 1, "enter to set_flg flgid=1 setptn=1.")
		if w := r.byName[string(waiter)]; w != nil && w.state == tWaiting {
			r.setFlgLeave = x // the release follows; then set_flg returns
			return
		}
		x.beh["leaveSVC"]++
		r.msg(t, x.core, 1, "leave from set_flg ercd=0.")
	}
}

func (r *tlvRenderer) truth() TLVTruth {
	tr := TLVTruth{
		Lines:         r.lines,
		Events:        r.events,
		States:        map[string]map[string]int64{},
		Behaviors:     map[string]map[string]int{},
		SignalNS:      r.sigNS,
		SignalValueNS: r.sigValNS,
		FirstNS:       r.first,
		LastNS:        r.last,
		Schedule:      r.sim.truth(),
		CPUBusy:       map[string]int64{},
		CPUKnown:      map[string]int64{},
		CPUHolders:    r.cpuHolders,
		CPUHeld:       map[string]map[string]int64{},
		Intervals:     r.intervals,
	}
	for c := range r.cpuBusy {
		name := "cpu " + strconv.Itoa(c+1)
		if r.style == TOPPERSASP {
			name = "cpu"
		}
		tr.CPUBusy[name], tr.CPUKnown[name] = r.cpuBusy[c], r.cpuKnown[c]
		tr.CPUHeld[name] = r.cpuHeld[c]
	}
	if r.style == TLVStandard {
		tr.Events = r.lines
	}
	for _, x := range append(append([]*tlvRes(nil), r.tasks...), r.handlers...) {
		st := map[string]int64{}
		for i, ns := range x.ns {
			if x.n[i] > 0 {
				st[tStateNames[i]] = ns
			}
		}
		tr.States[string(x.name)] = st
		tr.Intervals = append(tr.Intervals, TLVInterval{string(x.name), tStateNames[x.state], max(x.since, r.first), r.last, true})
		tr.Behaviors[string(x.name)] = x.beh
	}
	return tr
}
