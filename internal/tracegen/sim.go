package tracegen

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"math/rand"
	"sort"
	"strconv"
	"strings"
)

// kind is a BTF target type.
type kind uint8

const (
	kT kind = iota
	kI
	kR
	kSEM
	kSIG
	kEVENT
	kSTI
	kC
	numKinds
)

var kindNames = [numKinds]string{"T", "I", "R", "SEM", "SIG", "EVENT", "STI", "C"}

// act is a BTF action.
type act uint8

const (
	// process (T, I)
	aActivate act = iota
	aStart
	aPreempt
	aResume // also runnable
	aTerminate
	aPoll
	aRun
	aPark
	aPollParking
	aReleaseParking
	aWait
	aRelease
	aMTALimit
	// runnable
	aStartR // "start" for runnables; separate id only to keep code readable
	aSuspend
	// semaphore, process side
	aRequest
	aAssigned
	aWaiting
	aReleased
	// semaphore, semaphore side
	aReady
	aLock
	aUnlock
	aOverfull
	aFull
	aUsed
	aLockUsed
	aUnlockFull
	aFreed
	// signal
	aWrite
	aRead
	// event
	aSetEvent
	aWaitEvent
	aClearEvent
	// stimulus, core
	aTrigger
	aSetFrequency
	numActs
)

var actNames = [numActs]string{
	"activate", "start", "preempt", "resume", "terminate", "poll", "run", "park",
	"poll_parking", "release_parking", "wait", "release", "mtalimitexceeded",
	"start", "suspend",
	"requestsemaphore", "assigned", "waiting", "released",
	"ready", "lock", "unlock", "overfull", "full", "used", "lock_used", "unlock_full", "freed",
	"write", "read",
	"set_event", "wait_event", "clear_event",
	"trigger", "set_frequency",
}

// process states
type pstate uint8

const (
	sIdle pstate = iota // not initialized / terminated: no live instance
	sActive
	sRunning
	sReady
	sPolling
	sParking
	sWaiting
)

type opKind uint8

const (
	opCompute opKind = iota
	opRunStart
	opRunTerm
	opSemReq
	opSemRel
	opPoolReq
	opPoolRel
	opSigWrite
	opSigRead
	opWaitEvent
	opClearEvent
	opSetEvent
	opInvReq // SEM_Inv (Config.Inversion)
	opInvRel
)

type op struct {
	k   opKind
	arg int64
}

type runnable struct {
	name []byte
	next int64 // next instance number
}

type proc struct {
	name  []byte
	kind  kind // kT or kI
	core  int
	prio  int // base priority, higher is more important
	isr   bool
	stat  int // index into per-name statistics
	alive bool

	inst     int64
	nextInst *int64 // instance counter (shared by all ISR_Tick procs)
	state    pstate
	since    int64 // time the current running/ready interval began
	actAt    int64 // time the current instance was activated

	ops       []op
	pc        int
	remaining int64 // >0 while a compute op is in progress
	segEnd    int64 // end of the current compute op while running

	curRun  int // index into runs of the active runnable, -1 if none
	runInst int64
	runs    []runnable

	ownsSem   bool
	heldSince int64 // when it was assigned SEM_Shared
	waitSince int64 // when its request for SEM_Shared blocked

	evBlocked bool  // blocked in wait_event (truth of EvWaits)
	evStart   int64 // its wait_event
	evWoken   int64 // its release by set_event; -1 before

	ownsPool      bool // holds a unit of SEM_Pool
	poolUser      bool
	poolWaiting   bool // waits for SEM_Pool (not SEM_Shared)
	poolHeldSince int64

	// Config.Inversion
	invRole  int // 0: none; invLow, invMid, invHigh
	ownsInv  bool
	priShown int // the priority the trace said last (0: none yet)

	// stimulus
	sti     []byte
	stiInst int64
	nextAct int64
	period  int64

	// task behaviour
	execMax   int64 // per runnable upper bound of compute time
	semUser   bool
	semRun    int
	sigWriter bool
	sigReader bool
	evSetter  bool
	evEvery   int64 // the waiter waits for EV_Done in instances of activations n with n%evEvery == 0
	evWaiter  bool
}

type core struct {
	name  []byte
	occ   *proc // process running or polling on the core
	since int64 // when occ took the core, or (occ nil) when the core became idle
	procs []*proc
	dirty bool
	ceil  int // highest base priority of SEM_Shared (and SEM_Pool) users on this core
}

type semState uint8

const (
	semFree semState = iota
	semFull
	semOverfull
)

type sim struct {
	bw   *bufio.Writer // nil: write no BTF (another rendering observes the schedule)
	buf  []byte
	werr error

	// obs, when set, sees every event of the schedule as it is made (the
	// renderings of the same schedule in other formats, tlv.go); halt,
	// set by it, ends the simulation as the Events limit does.
	obs  scheduleObserver
	halt bool

	mul, div, q int64

	rng   *rand.Rand
	lines int
	limit int

	counts      [numKinds][numActs]int
	first, last int64

	procs []*proc // tasks first, then one ISR per core
	cores []core

	statNames []string
	runNs     []int64
	readyNs   []int64
	pollNs    []int64
	insts     []int
	terms     []int
	coreBusy  []int64
	coreHeld  [][]int64 // per core: ns held per process (stat index), the last one for none (idle)
	resp, lat []Sum     // per process: complete instances (response), waits for a core (latency)
	holds     []Sum     // per process: complete holds of SEM_Shared
	waits     []Sum     // per process: complete waits for SEM_Shared

	semName  []byte
	semOwner *proc
	semSt    semState
	waiters  []*proc

	// SEM_Pool (Config.PoolUnits >= 2)
	poolName    []byte
	poolUnits   int
	poolHolders int
	poolMax     int
	poolWaiters []*proc
	poolHolds   []Sum
	poolWaits   []Sum

	evWaits []Sum // per process: complete waits for EV_Done

	sigName  []byte
	sigValue int64
	sigNext  int64

	evName   []byte
	evSet    bool
	evWaiter *proc

	simName []byte

	// Config.Inversion: SEM_Inv, and the inversions open now (since when)
	inversion  bool
	invName    []byte
	invOwner   *proc
	invWaiters []*proc
	invOpen    map[invKey]int64
	inversions []Inversion
}

const (
	invLow = 1 + iota
	invMid
	invHigh
)

// invKey is one inversion: a semaphore, its waiter, its holder, the task
// on the holder's core.
type invKey struct{ res, high, low, middle, core string }

const (
	ms          = int64(1_000_000)
	isrPrio     = 1 << 20
	coreFreq    = 200_000_000
	coreBudget  = 0.72 // utilisation budget for tasks per core
	maxCritical = 150_000
)

var periodsMS = []int64{1, 2, 5, 10, 20, 50, 100}

// scheduleObserver receives each event of the schedule in BTF terms: the
// source and target entities and instances, the target's type, the
// action, and the note (a signal's value, the waiter named by set_event,
// a core's frequency; 0 / nil when the event has none).
type scheduleObserver interface {
	event(t int64, src []byte, srcInst int64, k kind, tgt []byte, tgtInst int64, a act, note int64, noteStr []byte)
}

// newSim sets up the simulation of cfg; w nil writes no BTF.
func newSim(w io.Writer, cfg Config) (*sim, error) {
	s := &sim{
		buf:     make([]byte, 0, 256),
		rng:     rand.New(rand.NewSource(cfg.Seed)),
		limit:   cfg.Events,
		semName: []byte("SEM_Shared"),
		sigName: []byte("SIG_Speed"),
		evName:  []byte("EV_Done"),
		simName: []byte("SIM"),
	}
	if w != nil {
		s.bw = bufio.NewWriterSize(w, 256<<10)
	}
	switch cfg.TimeScale {
	case "ns":
		s.mul, s.div, s.q = 1, 1, 1
	case "us":
		s.mul, s.div, s.q = 1, 1000, 1000
	case "ps":
		s.mul, s.div, s.q = 1000, 1, 1
	default:
		return nil, fmt.Errorf("tracegen: unsupported TimeScale %q (want ns, us or ps)", cfg.TimeScale)
	}
	rng := s.rng
	K, T := cfg.Cores, cfg.Tasks

	s.cores = make([]core, K)
	for i := range s.cores {
		s.cores[i].name = []byte("Core_" + strconv.Itoa(i))
	}

	// Periods: a seeded permutation of the period set, task n gets perm[n%7].
	perm := rng.Perm(len(periodsMS))
	tasks := make([]*proc, T)
	for n := 0; n < T; n++ {
		period := periodsMS[perm[n%len(periodsMS)]]
		name := fmt.Sprintf("Task_%dms_%d", period, n)
		p := &proc{
			name:     []byte(name),
			kind:     kT,
			core:     n % K,
			period:   period * ms,
			sti:      []byte("Timer_" + name),
			nextInst: new(int64),
			curRun:   -1,
		}
		nr := 1 + rng.Intn(3)
		for k := 0; k < nr; k++ {
			p.runs = append(p.runs, runnable{name: []byte(fmt.Sprintf("Run_%s_%d", name, k))})
		}
		p.semUser = n < 2 || rng.Intn(2) == 0
		p.semRun = rng.Intn(nr)
		tasks[n] = p
	}
	// Rate-monotonic unique priorities: shortest period gets the highest.
	order := make([]int, T)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return tasks[order[a]].period < tasks[order[b]].period })
	for rank, idx := range order {
		tasks[idx].prio = T - rank
	}
	// Execution budgets.
	perCore := make([]int, K)
	for _, p := range tasks {
		perCore[p.core]++
	}
	for _, p := range tasks {
		f := 0.6 + 0.4*rng.Float64()
		u := coreBudget / float64(perCore[p.core]) * f
		p.execMax = int64(u * float64(p.period) / float64(len(p.runs)))
	}
	// Slowed-down tasks (after every draw above, so that the rest of the
	// configuration is the same as without ExecScale).
	for name, f := range cfg.ExecScale {
		var p *proc
		for _, t := range tasks {
			if string(t.name) == name {
				p = t
			}
		}
		if p == nil || !(f > 0) {
			names := make([]string, len(tasks))
			for i, t := range tasks {
				names[i] = string(t.name)
			}
			return nil, fmt.Errorf("tracegen: ExecScale[%q] = %g: want a task of this configuration (%s) and a factor > 0", name, f, strings.Join(names, ", "))
		}
		p.execMax = int64(float64(p.execMax) * f)
	}
	// SEM_Pool's users, drawn after everything else (PoolUnits 0 draws
	// nothing: the simulation is the same as without it).
	if cfg.PoolUnits >= 2 {
		s.poolName, s.poolUnits = []byte("SEM_Pool"), cfg.PoolUnits
		for _, p := range tasks {
			p.poolUser = rng.Intn(3) != 0
		}
	}
	// Roles.
	tasks[0].sigWriter = true
	tasks[T-1].sigReader = true
	if T >= 2 {
		// Event pair: the waiter B has a higher priority than the setter A
		// and A's period is a multiple m of B's, preferably both on the same
		// core. A sets EV_Done at the end of every instance; B waits for it
		// at the start of the instances released by its activations n with
		// n%m == 0, which are released together with A's. B then starts
		// first, waits, A runs and sets the event, B is released.
		var tiers [3][][2]*proc // same core & multiple, multiple, any
		for _, b := range tasks {
			for _, a := range tasks {
				if b.prio <= a.prio {
					continue
				}
				pair := [2]*proc{b, a}
				switch {
				case a.period%b.period == 0 && a.core == b.core:
					tiers[0] = append(tiers[0], pair)
				case a.period%b.period == 0:
					tiers[1] = append(tiers[1], pair)
				default:
					tiers[2] = append(tiers[2], pair)
				}
			}
		}
		for _, cands := range tiers {
			if len(cands) == 0 {
				continue
			}
			pair := cands[rng.Intn(len(cands))]
			b, a := pair[0], pair[1]
			a.evSetter = true
			b.evWaiter = true
			b.evEvery = a.period / b.period
			if b.evEvery < 1 {
				b.evEvery = 1
			}
			s.evWaiter = b
			break
		}
	}
	// The inversion's tasks, above every other (no draw: the rest is the
	// same as without them).
	if cfg.Inversion {
		s.inversion, s.invName, s.invOpen = true, []byte("SEM_Inv"), map[invKey]int64{}
		for role, name := range []string{invLow: "Inv_Low", invMid: "Inv_Mid", invHigh: "Inv_High"} {
			if role == 0 {
				continue
			}
			tasks = append(tasks, &proc{
				name:     []byte(name),
				kind:     kT,
				core:     0,
				prio:     cfg.Tasks + role,
				period:   20 * ms,
				sti:      []byte("Timer_" + name),
				nextInst: new(int64),
				curRun:   -1,
				runs:     []runnable{{name: []byte("Run_" + name + "_0")}},
				nextAct:  []int64{invLow: 200_000, invMid: 800_000, invHigh: 500_000}[role],
				invRole:  role,
			})
		}
		T = len(tasks)
	}
	s.procs = append(s.procs, tasks...)

	// ISRs.
	isrCounter := new(int64)
	for i := 0; i < K; i++ {
		p := &proc{
			name:     []byte("ISR_Tick"),
			kind:     kI,
			core:     i,
			prio:     isrPrio,
			isr:      true,
			sti:      []byte("IRQ_Tick_Core_" + strconv.Itoa(i)),
			nextInst: isrCounter,
			curRun:   -1,
			period:   ms,
		}
		p.nextAct = s.qz(50_000 + rng.Int63n(ms-50_000))
		s.procs = append(s.procs, p)
	}

	for _, p := range s.procs {
		c := &s.cores[p.core]
		c.procs = append(c.procs, p)
		if (p.semUser || p.poolUser) && p.prio > c.ceil {
			c.ceil = p.prio
		}
	}
	// Statistics: one slot per task name, one shared slot for ISR_Tick.
	for i, p := range tasks {
		p.stat = i
		s.statNames = append(s.statNames, string(p.name))
	}
	for _, p := range s.procs[T:] {
		p.stat = T
	}
	s.statNames = append(s.statNames, "ISR_Tick")
	n := len(s.statNames)
	s.runNs = make([]int64, n)
	s.readyNs = make([]int64, n)
	s.pollNs = make([]int64, n)
	s.insts = make([]int, n)
	s.terms = make([]int, n)
	s.coreBusy = make([]int64, K)
	s.coreHeld = make([][]int64, K)
	for i := range s.coreHeld {
		s.coreHeld[i] = make([]int64, n+1)
	}
	s.resp, s.lat = make([]Sum, n), make([]Sum, n)
	s.holds, s.waits = make([]Sum, n), make([]Sum, n)
	s.poolHolds, s.poolWaits = make([]Sum, n), make([]Sum, n)
	s.evWaits = make([]Sum, n)
	s.sigNext = 3000
	return s, nil
}

func (s *sim) writeHeader(unit string) {
	if s.bw == nil {
		return
	}
	s.bw.WriteString("#version 2.2.0\n#creator traceduck tracegen\n#creationDate 2026-01-01T00:00:00Z\n#timeScale ")
	s.bw.WriteString(unit)
	s.bw.WriteByte('\n')
}

func (s *sim) qz(x int64) int64 { return x - x%s.q }

// randDur returns a quantised duration in [lo, hi], at least one quantum.
func (s *sim) randDur(lo, hi int64) int64 {
	if hi < lo {
		hi = lo
	}
	d := s.qz(lo + s.rng.Int63n(hi-lo+1))
	if d < s.q {
		d = s.q
	}
	return d
}

func (s *sim) done() bool { return s.lines >= s.limit || s.werr != nil || s.halt }

// ---- emission ----

func (s *sim) begin(t int64, src []byte, srcInst int64, k kind, tgt []byte, tgtInst int64, a act) {
	s.counts[k][a]++
	if s.lines == 0 {
		s.first = t
	}
	s.lines++
	s.last = t
	if s.bw == nil {
		return
	}
	b := s.buf[:0]
	if s.div > 1 {
		b = strconv.AppendInt(b, t/s.div, 10)
	} else {
		b = strconv.AppendInt(b, t*s.mul, 10)
	}
	b = append(b, ',')
	b = append(b, src...)
	b = append(b, ',')
	b = strconv.AppendInt(b, srcInst, 10)
	b = append(b, ',')
	b = append(b, kindNames[k]...)
	b = append(b, ',')
	b = append(b, tgt...)
	b = append(b, ',')
	b = strconv.AppendInt(b, tgtInst, 10)
	b = append(b, ',')
	b = append(b, actNames[a]...)
	s.buf = b
}

func (s *sim) end() {
	if s.bw == nil {
		return
	}
	s.buf = append(s.buf, '\n')
	if _, err := s.bw.Write(s.buf); err != nil && s.werr == nil {
		s.werr = err
	}
}

func (s *sim) emit(t int64, src []byte, srcInst int64, k kind, tgt []byte, tgtInst int64, a act) {
	s.begin(t, src, srcInst, k, tgt, tgtInst, a)
	s.end()
	if s.obs != nil {
		s.obs.event(t, src, srcInst, k, tgt, tgtInst, a, 0, nil)
	}
}

func (s *sim) emitInt(t int64, src []byte, srcInst int64, k kind, tgt []byte, tgtInst int64, a act, note int64) {
	s.begin(t, src, srcInst, k, tgt, tgtInst, a)
	if s.bw != nil {
		s.buf = append(s.buf, ',')
		s.buf = strconv.AppendInt(s.buf, note, 10)
	}
	s.end()
	if s.obs != nil {
		s.obs.event(t, src, srcInst, k, tgt, tgtInst, a, note, nil)
	}
}

func (s *sim) emitStr(t int64, src []byte, srcInst int64, k kind, tgt []byte, tgtInst int64, a act, note []byte) {
	s.begin(t, src, srcInst, k, tgt, tgtInst, a)
	if s.bw != nil {
		s.buf = append(s.buf, ',')
		s.buf = append(s.buf, note...)
	}
	s.end()
	if s.obs != nil {
		s.obs.event(t, src, srcInst, k, tgt, tgtInst, a, 0, note)
	}
}

// coreAct emits a process state transition performed by the process's core.
func (s *sim) coreAct(t int64, p *proc, a act) {
	s.emit(t, s.cores[p.core].name, 0, p.kind, p.name, p.inst, a)
}

func (s *sim) runAct(t int64, p *proc, a act) {
	s.emit(t, p.name, p.inst, kR, p.runs[p.curRun].name, p.runInst, a)
}

// ---- state bookkeeping (Truth) ----

func (s *sim) enterRunning(p *proc, t int64) {
	p.state = sRunning
	p.since = t
}

func (s *sim) leaveRunning(p *proc, t int64) {
	s.runNs[p.stat] += t - p.since
}

// occupy: p takes its core at t (start, resume, poll_parking); it holds
// it while it runs and while it polls (active waiting).
func (s *sim) occupy(p *proc, t int64) {
	c := &s.cores[p.core]
	h := s.coreHeld[p.core]
	h[len(h)-1] += t - c.since
	c.occ, c.since = p, t
}

// vacate: the process on core ci leaves it at t (preempt, terminate, wait,
// park): the time it held the core is busy time.
func (s *sim) vacate(ci int, t int64) {
	c := &s.cores[ci]
	s.coreHeld[ci][c.occ.stat] += t - c.since
	s.coreBusy[ci] += t - c.since
	c.occ, c.since = nil, t
}

func (s *sim) enterPolling(p *proc, t int64) {
	p.state = sPolling
	p.since = t
}

func (s *sim) leavePolling(p *proc, t int64) {
	s.pollNs[p.stat] += t - p.since
}

func (s *sim) enterReady(p *proc, t int64) {
	p.state = sReady
	p.since = t
}

func (s *sim) leaveReady(p *proc, t int64) {
	s.readyNs[p.stat] += t - p.since
	s.lat[p.stat].add(t - p.since)
}

func (s *sim) eff(p *proc) int {
	if p.isr {
		return 4 * isrPrio
	}
	if p.ownsSem || p.ownsPool {
		return 2*s.cores[p.core].ceil + 1
	}
	return 2 * p.prio
}

// ---- simulation ----

func (s *sim) run() {
	s.writeHeader(s.unit())
	for i := range s.cores {
		c := &s.cores[i]
		s.emitInt(0, c.name, 0, kC, c.name, 0, aSetFrequency, coreFreq)
		if s.done() {
			return
		}
	}
	s.emit(0, s.semName, 0, kSEM, s.semName, 0, aReady)
	if s.poolUnits > 0 {
		s.emit(0, s.poolName, 0, kSEM, s.poolName, 0, aReady)
	}
	if s.inversion {
		s.emit(0, s.invName, 0, kSEM, s.invName, 0, aReady)
	}
	for !s.done() {
		t := int64(math.MaxInt64)
		for i := range s.cores {
			if p := s.cores[i].occ; p != nil && p.state == sRunning && p.remaining > 0 && p.segEnd < t {
				t = p.segEnd
			}
		}
		for _, p := range s.procs {
			if p.nextAct < t {
				t = p.nextAct
			}
		}
		for i := range s.cores {
			if p := s.cores[i].occ; p != nil && p.state == sRunning && p.remaining > 0 && p.segEnd == t {
				s.complete(p, t)
				if s.done() {
					return
				}
			}
		}
		for _, p := range s.procs {
			if p.nextAct == t {
				s.activate(p, t)
				if s.done() {
					return
				}
			}
		}
		s.dispatchAll(t)
		if s.inversion && !s.done() {
			s.checkInversions(t)
		}
	}
}

func (s *sim) unit() string {
	switch {
	case s.div == 1000:
		return "us"
	case s.mul == 1000:
		return "ps"
	}
	return "ns"
}

func (s *sim) activate(p *proc, t int64) {
	n := p.stiInst
	p.stiInst++
	if p.isr {
		p.nextAct = t + ms + s.qz(s.rng.Int63n(40_001)-20_000)
	} else {
		p.nextAct = t + p.period
	}
	s.emit(t, s.simName, -1, kSTI, p.sti, n, aTrigger)
	if p.alive {
		s.emit(t, p.name, p.inst, p.kind, p.name, p.inst, aMTALimit)
		return
	}
	p.inst = *p.nextInst
	*p.nextInst++
	p.alive = true
	p.state = sActive
	p.actAt = t
	p.pc = 0
	p.remaining = 0
	p.curRun = -1
	s.buildOps(p, n)
	s.insts[p.stat]++
	if s.inversion && !p.isr && p.priShown == 0 {
		p.priShown = 2 * p.prio
		s.emitStr(t, p.sti, n, p.kind, p.name, p.inst, aActivate, []byte("pri:"+strconv.Itoa(p.priShown)))
	} else {
		s.emit(t, p.sti, n, p.kind, p.name, p.inst, aActivate)
	}
	s.cores[p.core].dirty = true
}

// buildOps draws the program of a new instance released by activation n.
func (s *sim) buildOps(p *proc, n int64) {
	ops := p.ops[:0]
	if p.isr {
		ops = append(ops, op{opCompute, s.randDur(2_000, 12_000)})
		p.ops = ops
		return
	}
	switch p.invRole {
	case invLow: // holds SEM_Inv for 1.5 ms of computing
		p.ops = append(ops, op{k: opInvReq}, op{opRunStart, 0}, op{opCompute, s.qz(1_500_000)}, op{opRunTerm, 0}, op{k: opInvRel})
		return
	case invMid:
		p.ops = append(ops, op{opRunStart, 0}, op{opCompute, s.qz(500_000)}, op{opRunTerm, 0})
		return
	case invHigh: // asks for SEM_Inv first
		p.ops = append(ops, op{k: opInvReq}, op{opRunStart, 0}, op{opCompute, s.qz(100_000)}, op{opRunTerm, 0}, op{k: opInvRel})
		return
	}
	if p.evWaiter && n%p.evEvery == 0 {
		ops = append(ops, op{k: opWaitEvent}, op{k: opClearEvent})
	}
	last := len(p.runs) - 1
	for k := range p.runs {
		ops = append(ops, op{opRunStart, int64(k)})
		if p.sigReader && k == 0 {
			ops = append(ops, op{k: opSigRead})
		}
		if p.poolUser && k == 0 {
			ops = append(ops, op{k: opPoolReq}, op{opCompute, s.randDur(maxCritical/2, 3*maxCritical)}, op{k: opPoolRel})
		}
		d := s.randDur(p.execMax*35/100, p.execMax)
		if p.semUser && k == p.semRun {
			// Critical section: 30..70% of the runnable, at most 150us.
			a := s.qz(d * int64(s.rng.Intn(30)) / 100)
			b := s.qz(d * int64(30+s.rng.Intn(40)) / 100)
			if b > maxCritical {
				b = s.randDur(maxCritical/4, maxCritical)
			}
			if b < s.q {
				b = s.q
			}
			c := d - a - b
			if c < 0 {
				c = 0
			}
			if a > 0 {
				ops = append(ops, op{opCompute, a})
			}
			ops = append(ops, op{k: opSemReq}, op{opCompute, b}, op{k: opSemRel})
			if c > 0 {
				ops = append(ops, op{opCompute, c})
			}
		} else {
			ops = append(ops, op{opCompute, d})
		}
		if p.sigWriter && k == last {
			v := s.sigNext + int64(s.rng.Intn(401)) - 200
			if v < 0 {
				v = -v
			}
			s.sigNext = v
			ops = append(ops, op{opSigWrite, v})
		}
		ops = append(ops, op{opRunTerm, int64(k)})
	}
	if p.evSetter {
		ops = append(ops, op{k: opSetEvent})
	}
	p.ops = ops
}

// complete handles the end of the current compute op of a running process.
func (s *sim) complete(p *proc, t int64) {
	p.remaining = 0
	p.pc++
	s.runOps(p, t)
}

// runOps executes the zero-time ops of a running process starting at p.pc
// until it starts a compute op, blocks, or terminates.
func (s *sim) runOps(p *proc, t int64) {
	for p.pc < len(p.ops) {
		o := p.ops[p.pc]
		switch o.k {
		case opCompute:
			p.remaining = o.arg
			p.segEnd = t + o.arg
			return
		case opRunStart:
			r := &p.runs[o.arg]
			p.curRun = int(o.arg)
			p.runInst = r.next
			r.next++
			s.runAct(t, p, aStartR)
		case opRunTerm:
			s.runAct(t, p, aTerminate)
			p.curRun = -1
		case opSigWrite:
			s.sigValue = o.arg
			s.emitInt(t, p.name, p.inst, kSIG, s.sigName, 0, aWrite, o.arg)
		case opSigRead:
			s.emitInt(t, p.name, p.inst, kSIG, s.sigName, 0, aRead, s.sigValue)
		case opSemReq:
			s.emit(t, p.name, p.inst, kSEM, s.semName, 0, aRequest)
			if s.semSt == semFree {
				s.semSt = semFull
				s.semOwner = p
				p.ownsSem = true
				p.heldSince = t
				s.emit(t, s.semName, 0, kSEM, s.semName, 0, aLock)
				s.emit(t, p.name, p.inst, kSEM, s.semName, 0, aAssigned)
				s.ceilingNote(t, p)
			} else {
				s.semSt = semOverfull
				s.waiters = append(s.waiters, p)
				p.waitSince = t
				s.emit(t, s.semName, 0, kSEM, s.semName, 0, aOverfull)
				s.emit(t, p.name, p.inst, kSEM, s.semName, 0, aWaiting)
				s.leaveRunning(p, t)
				s.enterPolling(p, t)
				s.coreAct(t, p, aPoll)
				p.pc++
				return
			}
		case opSemRel:
			s.semRelease(p, t)
		case opPoolReq:
			s.emit(t, p.name, p.inst, kSEM, s.poolName, 0, aRequest)
			if s.poolHolders < s.poolUnits {
				s.poolHolders++
				s.poolMax = max(s.poolMax, s.poolHolders)
				p.ownsPool, p.poolHeldSince = true, t
				a := aUsed
				if s.poolHolders == s.poolUnits {
					a = aLockUsed
				}
				s.emit(t, s.poolName, 0, kSEM, s.poolName, 0, a)
				s.emit(t, p.name, p.inst, kSEM, s.poolName, 0, aAssigned)
				s.ceilingNote(t, p)
			} else {
				s.poolWaiters = append(s.poolWaiters, p)
				p.poolWaiting, p.waitSince = true, t
				s.emit(t, s.poolName, 0, kSEM, s.poolName, 0, aOverfull)
				s.emit(t, p.name, p.inst, kSEM, s.poolName, 0, aWaiting)
				s.leaveRunning(p, t)
				s.enterPolling(p, t)
				s.coreAct(t, p, aPoll)
				p.pc++
				return
			}
		case opPoolRel:
			s.poolRelease(p, t)
		case opInvReq:
			s.emit(t, p.name, p.inst, kSEM, s.invName, 0, aRequest)
			if s.invOwner == nil {
				s.invOwner, p.ownsInv = p, true
				s.emit(t, s.invName, 0, kSEM, s.invName, 0, aLock)
				s.emit(t, p.name, p.inst, kSEM, s.invName, 0, aAssigned)
			} else {
				// no ceiling: it blocks, off the core
				s.invWaiters = append(s.invWaiters, p)
				s.emit(t, s.invName, 0, kSEM, s.invName, 0, aOverfull)
				s.emit(t, p.name, p.inst, kSEM, s.invName, 0, aWaiting)
				if p.curRun >= 0 {
					s.runAct(t, p, aSuspend)
				}
				s.leaveRunning(p, t)
				p.state = sWaiting
				s.coreAct(t, p, aWait)
				s.vacate(p.core, t)
				s.cores[p.core].dirty = true
				p.pc++
				return
			}
		case opInvRel:
			s.emit(t, p.name, p.inst, kSEM, s.invName, 0, aReleased)
			p.ownsInv = false
			if len(s.invWaiters) == 0 {
				s.invOwner = nil
				s.emit(t, s.invName, 0, kSEM, s.invName, 0, aUnlock)
				break
			}
			w := s.invWaiters[0]
			s.invWaiters = s.invWaiters[1:]
			s.invOwner, w.ownsInv = w, true
			s.emit(t, w.name, w.inst, kSEM, s.invName, 0, aAssigned)
			s.coreAct(t, w, aRelease)
			s.enterReady(w, t)
			s.cores[w.core].dirty = true
			if len(s.invWaiters) == 0 {
				s.emit(t, s.invName, 0, kSEM, s.invName, 0, aFull)
			}
		case opWaitEvent:
			s.emit(t, p.name, p.inst, kEVENT, s.evName, 0, aWaitEvent)
			if !s.evSet {
				p.evBlocked, p.evStart, p.evWoken = true, t, -1
				s.leaveRunning(p, t)
				p.state = sWaiting
				s.coreAct(t, p, aWait)
				s.vacate(p.core, t)
				s.cores[p.core].dirty = true
				p.pc++
				return
			}
		case opClearEvent:
			s.evSet = false
			s.emit(t, p.name, p.inst, kEVENT, s.evName, 0, aClearEvent)
			if p.evBlocked {
				s.evWaits[p.stat].add(p.evWoken - p.evStart)
				p.evBlocked = false
			}
		case opSetEvent:
			w := s.evWaiter
			s.evSet = true
			s.emitStr(t, p.name, p.inst, kEVENT, s.evName, 0, aSetEvent, w.name)
			if w.alive && w.state == sWaiting {
				w.evWoken = t
				s.coreAct(t, w, aRelease)
				s.enterReady(w, t)
				s.cores[w.core].dirty = true
			}
		}
		p.pc++
	}
	// End of program: terminate.
	s.leaveRunning(p, t)
	s.coreAct(t, p, aTerminate)
	s.terms[p.stat]++
	s.resp[p.stat].add(t - p.actAt)
	p.state = sIdle
	p.alive = false
	s.vacate(p.core, t)
	s.cores[p.core].dirty = true
}

// semRelease releases SEM_Shared held by p and hands it over to the first
// waiter, if any.
func (s *sim) semRelease(p *proc, t int64) {
	s.emit(t, p.name, p.inst, kSEM, s.semName, 0, aReleased)
	p.ownsSem = false
	s.ceilingNote(t, p)
	s.holds[p.stat].add(t - p.heldSince)
	s.cores[p.core].dirty = true // p's effective priority dropped
	if len(s.waiters) == 0 {
		s.semSt = semFree
		s.semOwner = nil
		s.emit(t, s.semName, 0, kSEM, s.semName, 0, aUnlock)
		return
	}
	w := s.waiters[0]
	copy(s.waiters, s.waiters[1:])
	s.waiters = s.waiters[:len(s.waiters)-1]
	s.semOwner = w
	w.ownsSem = true
	s.waits[w.stat].add(t - w.waitSince)
	w.heldSince = t
	s.emit(t, w.name, w.inst, kSEM, s.semName, 0, aAssigned)
	s.ceilingNote(t, w)
	s.wakeWaiter(w, t)
	if len(s.waiters) == 0 {
		s.semSt = semFull
		s.emit(t, s.semName, 0, kSEM, s.semName, 0, aFull)
	}
	if w.state == sRunning {
		// The next op of w is its critical section compute.
		s.runOps(w, t)
	}
}

// poolRelease gives back p's unit of SEM_Pool and hands it to the first
// waiter, if any.
func (s *sim) poolRelease(p *proc, t int64) {
	s.emit(t, p.name, p.inst, kSEM, s.poolName, 0, aReleased)
	p.ownsPool = false
	s.ceilingNote(t, p)
	s.poolHolds[p.stat].add(t - p.poolHeldSince)
	s.cores[p.core].dirty = true // p's effective priority dropped
	if len(s.poolWaiters) == 0 {
		s.poolHolders--
		a := aUsed
		switch {
		case s.poolHolders == 0:
			a = aFreed
		case s.poolHolders == s.poolUnits-1:
			a = aUnlockFull
		}
		s.emit(t, s.poolName, 0, kSEM, s.poolName, 0, a)
		return
	}
	w := s.poolWaiters[0]
	copy(s.poolWaiters, s.poolWaiters[1:])
	s.poolWaiters = s.poolWaiters[:len(s.poolWaiters)-1]
	w.ownsPool, w.poolWaiting, w.poolHeldSince = true, false, t
	s.poolWaits[w.stat].add(t - w.waitSince)
	s.emit(t, w.name, w.inst, kSEM, s.poolName, 0, aAssigned)
	s.ceilingNote(t, w)
	s.wakeWaiter(w, t)
	if len(s.poolWaiters) == 0 {
		s.emit(t, s.poolName, 0, kSEM, s.poolName, 0, aFull)
	}
	if w.state == sRunning {
		s.runOps(w, t)
	}
}

// wakeWaiter moves a task handed a semaphore out of its wait: a polling
// task runs on, a parked one becomes ready.
func (s *sim) wakeWaiter(w *proc, t int64) {
	switch w.state {
	case sPolling:
		s.leavePolling(w, t)
		s.coreAct(t, w, aRun)
		s.enterRunning(w, t)
	case sParking:
		s.coreAct(t, w, aReleaseParking)
		s.enterReady(w, t)
		s.cores[w.core].dirty = true
	default:
		panic("tracegen: semaphore waiter in unexpected state")
	}
}

func (s *sim) dispatchAll(t int64) {
	for {
		any := false
		for i := range s.cores {
			if s.cores[i].dirty {
				s.cores[i].dirty = false
				any = true
				s.dispatch(i, t)
				if s.done() {
					return
				}
			}
		}
		if !any {
			return
		}
	}
}

// dispatch applies fixed-priority preemptive scheduling on core ci.
func (s *sim) dispatch(ci int, t int64) {
	c := &s.cores[ci]
	var best *proc
	be := -1
	for _, p := range c.procs {
		if p.state == sActive || p.state == sReady || p.state == sParking {
			if e := s.eff(p); e > be {
				best, be = p, e
			}
		}
	}
	if best == nil {
		return
	}
	if cur := c.occ; cur != nil {
		if be <= s.eff(cur) {
			return
		}
		if cur.curRun >= 0 {
			s.runAct(t, cur, aSuspend)
		}
		if cur.state == sRunning {
			s.leaveRunning(cur, t)
			if cur.remaining <= 0 || cur.segEnd <= t {
				panic("tracegen: preempting a process that is not computing")
			}
			cur.remaining = cur.segEnd - t
			s.coreAct(t, cur, aPreempt)
			s.enterReady(cur, t)
		} else { // polling
			s.leavePolling(cur, t)
			s.coreAct(t, cur, aPark)
			cur.state = sParking
		}
		s.vacate(ci, t)
	}
	s.occupy(best, t)
	switch best.state {
	case sActive:
		s.lat[best.stat].add(t - best.actAt)
		s.coreAct(t, best, aStart)
		s.enterRunning(best, t)
		s.runOps(best, t)
	case sReady:
		s.leaveReady(best, t)
		s.coreAct(t, best, aResume)
		s.enterRunning(best, t)
		if best.curRun >= 0 {
			s.runAct(t, best, aResume)
		}
		if best.remaining > 0 {
			best.segEnd = t + best.remaining
		} else {
			s.runOps(best, t)
		}
	case sParking:
		s.coreAct(t, best, aPollParking)
		s.enterPolling(best, t)
		if best.curRun >= 0 {
			s.runAct(t, best, aResume)
		}
	}
}

// ceilingNote says p's effective priority when it changed (Config.Inversion):
// a holder of SEM_Shared or SEM_Pool runs at the ceiling, 2*ceil+1.
func (s *sim) ceilingNote(t int64, p *proc) {
	if !s.inversion || p.priShown == 0 {
		return
	}
	e := s.eff(p)
	if e == p.priShown {
		return
	}
	verb := "priority_disinherit "
	if e > 2*p.prio {
		verb = "priority_inherit "
	}
	p.priShown = e
	s.emitStr(t, s.cores[p.core].name, 0, kSTI, []byte("task"), 0, aTrigger, []byte(verb+string(p.name)+" pri:"+strconv.Itoa(e)))
}

// checkInversions keeps the truth of the priority inversions: after the
// events of time t, the inversions now (a waiter of a semaphore, a holder
// of a lower effective priority that is ready, a task of a priority
// between them on the holder's core) continue, begin at t, or end at t.
func (s *sim) checkInversions(t int64) {
	now := map[invKey]bool{}
	look := func(res []byte, holders, waiters []*proc) {
		for _, h := range waiters {
			for _, l := range holders {
				if l == h || l.state != sReady || s.eff(l) >= s.eff(h) {
					continue
				}
				c := &s.cores[l.core]
				if m := c.occ; m != nil && !m.isr && m != l && m != h && s.eff(m) > s.eff(l) && s.eff(m) < s.eff(h) {
					now[invKey{string(res), string(h.name), string(l.name), string(m.name), string(c.name)}] = true
				}
			}
		}
	}
	if s.semOwner != nil {
		look(s.semName, []*proc{s.semOwner}, s.waiters)
	}
	if len(s.poolWaiters) > 0 {
		var holders []*proc
		for _, p := range s.procs {
			if p.ownsPool {
				holders = append(holders, p)
			}
		}
		look(s.poolName, holders, s.poolWaiters)
	}
	if s.invOwner != nil {
		look(s.invName, []*proc{s.invOwner}, s.invWaiters)
	}
	var ended []invKey
	for k := range s.invOpen {
		if !now[k] {
			ended = append(ended, k)
		}
	}
	s.endInversions(ended, t)
	for k := range now {
		if _, ok := s.invOpen[k]; !ok {
			s.invOpen[k] = t
		}
	}
}

// endInversions ends the open inversions ks at t, in a fixed order.
func (s *sim) endInversions(ks []invKey, t int64) {
	sort.Slice(ks, func(i, j int) bool {
		a, b := ks[i], ks[j]
		return fmt.Sprint(s.invOpen[a], a) < fmt.Sprint(s.invOpen[b], b)
	})
	for _, k := range ks {
		if start := s.invOpen[k]; t > start {
			s.inversions = append(s.inversions, Inversion{k.res, k.high, k.low, k.middle, k.core, start, t})
		}
		delete(s.invOpen, k)
	}
}

func (s *sim) truth() Truth {
	tr := Truth{
		Lines:        s.lines,
		ActionCounts: make(map[string]int),
		Running:      make(map[string]int64, len(s.statNames)),
		Ready:        make(map[string]int64, len(s.statNames)),
		Polling:      make(map[string]int64, len(s.statNames)),
		Instances:    make(map[string]int, len(s.statNames)),
		Terminated:   make(map[string]int, len(s.statNames)),
		CoreBusy:     make(map[string]int64, len(s.cores)),
		CoreHeld:     make(map[string]map[string]int64, len(s.cores)),
		Response:     make(map[string]Sum, len(s.statNames)),
		Latency:      make(map[string]Sum, len(s.statNames)),
		EvWaits:      make(map[string]Sum, len(s.statNames)),
		Holds:        make(map[string]Sum, len(s.statNames)),
		Waits:        make(map[string]Sum, len(s.statNames)),
		OpenWaits:    len(s.waiters),
		FirstTS:      s.first,
		LastTS:       s.last,
	}
	if s.semOwner != nil {
		tr.OpenHolds = 1
	}
	if s.inversion {
		var open []invKey
		for k := range s.invOpen {
			open = append(open, k)
		}
		s.endInversions(open, s.last)
		tr.Inversions = s.inversions
	}
	if s.poolUnits > 0 {
		tr.PoolHolds, tr.PoolWaits = map[string]Sum{}, map[string]Sum{}
		tr.PoolOpenHolds, tr.PoolOpenWaits, tr.PoolMaxHolders = s.poolHolders, len(s.poolWaiters), s.poolMax
		for i, name := range s.statNames {
			tr.PoolHolds[name], tr.PoolWaits[name] = s.poolHolds[i], s.poolWaits[i]
		}
	}
	for k := range s.counts {
		for a, n := range s.counts[k] {
			if n > 0 {
				tr.ActionCounts[kindNames[k]+"/"+actNames[a]] += n
			}
		}
	}
	for i, name := range s.statNames {
		tr.Running[name] = s.runNs[i]
		tr.Ready[name] = s.readyNs[i]
		tr.Polling[name] = s.pollNs[i]
		tr.Instances[name] = s.insts[i]
		tr.Terminated[name] = s.terms[i]
		tr.Response[name] = s.resp[i]
		tr.Latency[name] = s.lat[i]
		tr.Holds[name] = s.holds[i]
		tr.Waits[name] = s.waits[i]
		tr.EvWaits[name] = s.evWaits[i]
	}
	for _, p := range s.procs {
		if p.evBlocked {
			tr.EvOpenWaits++
		}
	}
	for i := range s.cores {
		tr.CoreBusy[string(s.cores[i].name)] = s.coreBusy[i]
		held := map[string]int64{"idle": s.coreHeld[i][len(s.statNames)]}
		for j, name := range s.statNames {
			if ns := s.coreHeld[i][j]; ns != 0 {
				held[name] = ns
			}
		}
		tr.CoreHeld[string(s.cores[i].name)] = held
	}
	return tr
}
