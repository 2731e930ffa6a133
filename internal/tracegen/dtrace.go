package tracegen

import (
	"bufio"
	"container/heap"
	"fmt"
	"io"
	"math/rand"
	"sort"
	"strconv"
	"strings"
)

// DTraceConfig sets up WriteDTrace.
type DTraceConfig struct {
	Lines     int   // write at least this many event lines (then stop)
	CPUs      int   // 1..64
	Processes int   // 1..1000
	Threads   int   // per process, 1..100
	Seed      int64 // same seed, same output
	// Gap: the on-cpu line comes 1..50 ns after the off-cpu line, as
	// DTrace prints them (two probes); otherwise at the same instant, as
	// a bpftrace script prints both from one sched_switch.
	Gap bool
}

// DTraceInterval is one state interval as the simulator lived it, named
// as traceduck names objects and states (ingest/dtrace/README.md).
type DTraceInterval struct {
	Object     string // objects.name: "app 1[101]/2", "cpu 0", "e1000g0"
	Instance   int64  // 0 for a CPU's intervals (traceduck's is the holder's object: see Holder)
	State      string
	Start, End int64
	CPU        int // -1: none
	Truncated  bool
	// A CPU's interval: the name of the object that holds the CPU (the
	// state too), and whether it is an idle task or idle thread (the CPU
	// is idle); "" for the intervals of other objects.
	Holder string
	Idle   bool
}

// CPUSums is what a truth's CPU intervals add up to, counted as
// cpu_utilization counts (complete intervals only): per CPU name, the ns
// each holder held it, and the busy ns (held by anything but an idle
// task or thread).
type CPUSums struct {
	Held map[string]map[string]int64
	Busy map[string]int64
}

// Rows writes the sums, and the running ns per thread, as rows "cpu |
// holder | ns", "cpu | busy ns" and "thread | ns", the form of the views'
// rows they are compared with.
func (s CPUSums) Rows(running map[string]int64) (held, busy, runs []string) {
	for c, hs := range s.Held {
		for h, ns := range hs {
			held = append(held, fmt.Sprintf("%s | %s | %d", c, h, ns))
		}
		busy = append(busy, fmt.Sprintf("%s | %d", c, s.Busy[c]))
	}
	for th, ns := range running {
		runs = append(runs, fmt.Sprintf("%s | %d", th, ns))
	}
	return held, busy, runs
}

// SumCPUs adds up the CPU intervals of a truth.
func SumCPUs(ivs []DTraceInterval) CPUSums {
	s := CPUSums{Held: map[string]map[string]int64{}, Busy: map[string]int64{}}
	for _, iv := range ivs {
		if iv.Holder == "" || iv.Truncated {
			continue
		}
		if s.Held[iv.Object] == nil {
			s.Held[iv.Object] = map[string]int64{}
		}
		s.Held[iv.Object][iv.Holder] += iv.End - iv.Start
		if !iv.Idle {
			s.Busy[iv.Object] += iv.End - iv.Start
		}
	}
	return s
}

// SumRunning adds up, per thread, its complete running intervals
// (instance 0, state running).
func SumRunning(ivs []DTraceInterval) map[string]int64 {
	run := map[string]int64{}
	for _, iv := range ivs {
		if iv.Holder == "" && iv.Instance == 0 && iv.State == "running" && !iv.Truncated {
			run[iv.Object] += iv.End - iv.Start
		}
	}
	return run
}

// IntervalsText lists intervals one per line, as the truth tests compare
// them: object | instance (a CPU's: the holder's name) | state | start |
// end | cpu | truncated.
func IntervalsText(ivs []DTraceInterval) string {
	var b strings.Builder
	for _, iv := range ivs {
		inst := strconv.FormatInt(iv.Instance, 10)
		if iv.Holder != "" {
			inst = iv.Holder
		}
		fmt.Fprintf(&b, "%s | %s | %s | %d | %d | %d | %v\n", iv.Object, inst, iv.State, iv.Start, iv.End, iv.CPU, iv.Truncated)
	}
	return b.String()
}

// DTraceTruth is what WriteDTrace simulated.
type DTraceTruth struct {
	Lines     int              // event lines written after the header
	Intervals []DTraceInterval // every state interval, sorted by object, instance, start
	// Syscalls holds the durations (ns) of the completed system calls, by
	// name, in the order they returned.
	Syscalls map[string][]int64
	// CPUs: what the CPUs' complete intervals add up to (per CPU and
	// holder, busy per CPU); Running: per thread, its complete running
	// intervals.
	CPUs    CPUSums
	Running map[string]int64
}

// WriteDTrace simulates threads of several processes scheduled on CPUs
// and writes what the shipped D scripts (sched.d, syscalls.d,
// interrupts.d, userfuncs.d) would print: the #traceduck-events header,
// then one event line per probe firing, in time order. The truth is
// recorded from the simulator's own state as it acts, never by reading
// the output back.
//
// The simulated system:
//   - Each CPU starts at time 0 running its idle thread (pid 0, tid
//     1000+cpu) or a thread from the run queue. Dispatching: the next
//     thread of a FIFO run queue, else the idle thread.
//   - A running thread acts every 1..2000 ns: a system call that returns
//     without blocking; a system call that blocks (off-cpu
//     state=sleeping inside it, woken 100..20000 ns later, returns once it
//     runs again); malloc (pid provider) wrapping an mmap system call; an
//     interrupt on its CPU (nested one in three); a preemption when the
//     run queue is not empty (off-cpu state=runnable); or computing.
//   - A thread woken while a CPU is idle takes that CPU (the idle
//     thread's off-cpu, then a dispatch).
//   - Between a thread's off-cpu and the next on-cpu on that CPU the CPU
//     is switching (Gap), or the two come at the same instant.
//
// What holds a CPU (traceduck's CPU model): the thread on it; its idle
// thread, object "idle/N" (an idle holder); the dispatcher between an
// off-cpu and the next on-cpu, object "switching/N" (kernel work, busy);
// the interrupt being handled, nested ones over the outer one.
//
// A thread's state intervals are what the trace says: running from its
// on-cpu, sleeping or runnable from its off-cpu to its next on-cpu (the
// trace has no wakeup probe). When the simulation stops, the intervals
// still open end at the last line's time, truncated; a CPU in the middle
// of a switch ends at its off-cpu.
func WriteDTrace(w io.Writer, cfg DTraceConfig) (DTraceTruth, error) {
	if cfg.Lines < 1 || cfg.CPUs < 1 || cfg.CPUs > 64 || cfg.Processes < 1 || cfg.Processes > 1000 || cfg.Threads < 1 || cfg.Threads > 100 {
		return DTraceTruth{}, fmt.Errorf("tracegen: DTraceConfig out of range: %+v", cfg)
	}
	s := &dtSim{cfg: cfg, rng: rand.New(rand.NewSource(cfg.Seed)), bw: bufio.NewWriterSize(w, 1<<16),
		truth: ivTracker{open: map[ivKey]*DTraceInterval{}}, syscalls: map[string][]int64{}}
	s.run()
	if err := s.bw.Flush(); err != nil {
		return DTraceTruth{}, err
	}
	ivs := s.truth.done()
	return DTraceTruth{Lines: s.lines, Intervals: ivs, Syscalls: s.syscalls, CPUs: SumCPUs(ivs), Running: SumRunning(ivs)}, nil
}

type dtThread struct {
	pid, tid int64
	exec     string // execname: "app N" (a blank, so it is quoted)
	name     string // traceduck's name: exec[pid]/tid
	cpu      int    // -1 when not running
	calls    []dtCall
	plan     []dtStep // what the next actions do
	runnable bool     // in the run queue
}

type dtCall struct {
	probe string // provider:module:function: (the name follows)
	name  string // the function
	start int64
	sys   bool
}

type dtStep uint8

const (
	stepReturn    dtStep = iota // return from the innermost call
	stepBlock                   // go off CPU sleeping, inside the call
	stepSyscallIn               // enter mmap (inside malloc)
)

type dtCPU struct {
	n         int
	run       *dtThread // nil: idle (or switching when switching is set)
	idle      bool
	claim     bool // its idle thread left for a woken thread; a dispatch is due
	switching bool
	offAt     int64
	ints      []string // interrupts being handled, innermost last
}

type dtEvent struct {
	t, seq int64
	kind   uint8
	th     *dtThread
	c      int
	irq    string
}

const (
	evAction uint8 = iota
	evWake
	evDispatch
	evIntrStart
	evIntrEnd
)

type dtQueue []dtEvent

func (q dtQueue) Len() int { return len(q) }
func (q dtQueue) Less(i, j int) bool {
	if q[i].t != q[j].t {
		return q[i].t < q[j].t
	}
	return q[i].seq < q[j].seq
}
func (q dtQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *dtQueue) Push(x any)   { *q = append(*q, x.(dtEvent)) }
func (q *dtQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

type dtSim struct {
	cfg      DTraceConfig
	rng      *rand.Rand
	bw       *bufio.Writer
	q        dtQueue
	seq      int64
	threads  []*dtThread
	runq     []*dtThread
	cpus     []*dtCPU
	lines    int
	lastT    int64
	truth    ivTracker
	syscalls map[string][]int64
}

var (
	dtNonBlocking = []string{"write", "close", "ioctl", "fstat", "lseek"}
	dtBlocking    = []string{"read", "pollsys", "nanosleep", "lwp_park"}
	dtIrqs        = []string{"e1000g0", "ahci0", "uhci1"}
)

func (s *dtSim) push(e dtEvent) {
	s.seq++
	e.seq = s.seq
	heap.Push(&s.q, e)
}

func (s *dtSim) between(lo, hi int) int64 { return int64(lo + s.rng.Intn(hi-lo+1)) }

func (s *dtSim) gap() int64 {
	if s.cfg.Gap {
		return s.between(1, 50)
	}
	return 0
}

// line writes one event line at time t.
func (s *dtSim) line(t int64, cpu int, pid, tid int64, probe, keys string) {
	fmt.Fprintf(s.bw, "%d %d %d %d %s%s\n", t, cpu, pid, tid, probe, keys)
	s.lines++
	s.lastT = t
}

// run plays the simulation:
//  1. Processes and threads are made, every thread runnable; each CPU is
//     dispatched at time 0 (its idle thread when the queue is empty).
//  2. Events are taken in time order: a thread's action, a wakeup, a
//     dispatch, an interrupt's start or end; each writes its lines and
//     records the truth.
//  3. Once enough lines are written, the intervals still open are ended.
func (s *dtSim) run() {
	fmt.Fprintf(s.bw, "#traceduck-events 1 unit=ns script=tracegen timestamp cpu pid tid probe\n")
	for p := 0; p < s.cfg.Processes; p++ {
		pid := int64(101 + p)
		exec := fmt.Sprintf("app %d", p+1)
		for k := 0; k < s.cfg.Threads; k++ {
			th := &dtThread{pid: pid, tid: int64(k + 1), exec: exec, cpu: -1}
			th.name = fmt.Sprintf("%s[%d]/%d", exec, pid, th.tid)
			th.runnable = true
			s.threads = append(s.threads, th)
			s.runq = append(s.runq, th)
		}
	}
	for c := 0; c < s.cfg.CPUs; c++ {
		s.cpus = append(s.cpus, &dtCPU{n: c})
		s.push(dtEvent{t: 0, kind: evDispatch, c: c})
	}
	for s.lines < s.cfg.Lines && s.q.Len() > 0 {
		e := heap.Pop(&s.q).(dtEvent)
		switch e.kind {
		case evAction:
			s.action(e.th, e.t)
		case evWake:
			s.wake(e.th, e.t)
		case evDispatch:
			s.dispatch(s.cpus[e.c], e.t)
		case evIntrStart:
			s.intrStart(s.cpus[e.c], e.irq, e.t)
		case evIntrEnd:
			s.intrEnd(s.cpus[e.c], e.th, e.t)
		}
	}
	for _, c := range s.cpus {
		if c.switching {
			s.truth.end("cpu "+fmt.Sprint(c.n), 0, c.offAt, false)
		}
	}
	s.truth.finish(s.lastT)
}

func cpuName(n int) string { return fmt.Sprintf("cpu %d", n) }

// dispatch puts the next runnable thread (or the idle thread) on a CPU.
func (s *dtSim) dispatch(c *dtCPU, t int64) {
	c.claim = false
	// The CPU's switching interval, known now that it ends: none when the
	// next thread comes at the same instant.
	var next string
	var th *dtThread
	if len(s.runq) > 0 {
		th = s.runq[0]
		s.runq = s.runq[1:]
		th.runnable = false
		next = th.name
	}
	if c.switching && t > c.offAt {
		s.truth.hold(cpuName(c.n), c.offAt, fmt.Sprintf("switching/%d", c.n), false, c.n)
	}
	c.switching = false
	if th == nil {
		c.run, c.idle = nil, true
		s.line(t, c.n, 0, int64(1000+c.n), "sched:unix:resume:on-cpu", ` idle=1 execname="sched"`)
		s.truth.hold(cpuName(c.n), t, fmt.Sprintf("idle/%d", c.n), true, c.n)
		return
	}
	c.run, c.idle = th, false
	th.cpu = c.n
	s.line(t, c.n, th.pid, th.tid, "sched:unix:resume:on-cpu", ` idle=0 execname="`+th.exec+`"`)
	s.truth.set(th.name, 0, t, "running", c.n)
	s.truth.hold(cpuName(c.n), t, next, false, c.n)
	s.push(dtEvent{t: t + s.between(1, 2000), kind: evAction, th: th})
}

// off takes a thread off its CPU in state, and dispatches the CPU.
func (s *dtSim) off(th *dtThread, t int64, state string) {
	c := s.cpus[th.cpu]
	s.line(t, c.n, th.pid, th.tid, "sched:unix:swtch:off-cpu", ` idle=0 state=`+state+` execname="`+th.exec+`"`)
	s.truth.set(th.name, 0, t, state, c.n)
	th.cpu = -1
	c.run = nil
	c.switching, c.offAt = true, t
	s.push(dtEvent{t: t + s.gap(), kind: evDispatch, c: c.n})
}

// action is a running thread's next step: the one its plan holds, else a
// new one drawn at random.
func (s *dtSim) action(th *dtThread, t int64) {
	c := s.cpus[th.cpu]
	next := func() { s.push(dtEvent{t: t + s.between(1, 2000), kind: evAction, th: th}) }
	if len(th.plan) > 0 {
		step := th.plan[0]
		th.plan = th.plan[1:]
		switch step {
		case stepReturn:
			s.ret(th, c, t)
			next()
		case stepBlock:
			s.off(th, t, "sleeping")
			s.push(dtEvent{t: t + s.between(100, 20000), kind: evWake, th: th})
		case stepSyscallIn:
			s.enter(th, c, t, "syscall::", "mmap", true)
			next()
		}
		return
	}
	switch r := s.rng.Intn(100); {
	case r < 30:
		s.enter(th, c, t, "syscall::", dtNonBlocking[s.rng.Intn(len(dtNonBlocking))], true)
		th.plan = append(th.plan, stepReturn)
		next()
	case r < 50:
		s.enter(th, c, t, "syscall::", dtBlocking[s.rng.Intn(len(dtBlocking))], true)
		th.plan = append(th.plan, stepBlock, stepReturn)
		next()
	case r < 58:
		s.enter(th, c, t, fmt.Sprintf("pid%d:libc.so.1:", th.pid), "malloc", false)
		th.plan = append(th.plan, stepSyscallIn, stepReturn, stepReturn)
		next()
	case r < 66:
		s.intr(c, th, t)
	case r < 80 && len(s.runq) > 0:
		s.off(th, t, "runnable")
		th.runnable = true
		s.runq = append(s.runq, th)
	default:
		next()
	}
}

func (s *dtSim) enter(th *dtThread, c *dtCPU, t int64, probe, name string, sys bool) {
	keys := ` execname="` + th.exec + `"`
	if sys {
		keys = fmt.Sprintf(" arg0=%d", s.rng.Intn(64)) + keys
	}
	s.line(t, c.n, th.pid, th.tid, probe+name+":entry", keys)
	th.calls = append(th.calls, dtCall{probe: probe, name: name, start: t, sys: sys})
	s.truth.set(th.name, int64(len(th.calls)), t, name, c.n)
}

func (s *dtSim) ret(th *dtThread, c *dtCPU, t int64) {
	k := len(th.calls) - 1
	call := th.calls[k]
	th.calls = th.calls[:k]
	keys := fmt.Sprintf(" ret=%d", s.rng.Intn(4096))
	if call.sys {
		keys += " errno=0"
		s.syscalls[call.name] = append(s.syscalls[call.name], t-call.start)
	}
	s.line(t, c.n, th.pid, th.tid, call.probe+call.name+":return", keys+` execname="`+th.exec+`"`)
	s.truth.end(th.name, int64(k+1), t, false)
}

// intr starts an interrupt on a running thread's CPU; one in three has
// another nested inside it. The thread acts again after it completes.
func (s *dtSim) intr(c *dtCPU, th *dtThread, t int64) {
	outer := dtIrqs[s.rng.Intn(len(dtIrqs))]
	s.intrStart(c, outer, t)
	end := t + s.between(5, 500)
	if s.rng.Intn(3) == 0 {
		inner := dtIrqs[s.rng.Intn(len(dtIrqs))]
		if inner == outer {
			inner = "uhci1"
			if outer == inner {
				inner = "ahci0"
			}
		}
		in := t + s.between(1, 20)
		inEnd := in + s.between(1, 100)
		end = inEnd + s.between(1, 100)
		s.push(dtEvent{t: in, kind: evIntrStart, c: c.n, irq: inner})
		s.push(dtEvent{t: inEnd, kind: evIntrEnd, c: c.n})
	}
	s.push(dtEvent{t: end, kind: evIntrEnd, c: c.n, th: th})
}

func (s *dtSim) intrStart(c *dtCPU, irq string, t int64) {
	s.line(t, c.n, 0, int64(500+len(c.ints)), "sdt:unix:av_dispatch_autovect:interrupt-start", " irq="+irq)
	c.ints = append(c.ints, irq)
	s.truth.set(irq, int64(c.n), t, "handler", c.n)
	s.truth.hold(cpuName(c.n), t, irq, false, c.n)
}

// intrEnd completes the innermost interrupt; after the outer one, the
// CPU shows its thread again and the thread acts (th).
func (s *dtSim) intrEnd(c *dtCPU, th *dtThread, t int64) {
	k := len(c.ints) - 1
	irq := c.ints[k]
	c.ints = c.ints[:k]
	s.line(t, c.n, 0, int64(500+k), "sdt:unix:av_dispatch_autovect:interrupt-complete", " irq="+irq)
	s.truth.end(irq, int64(c.n), t, false)
	if k > 0 {
		s.truth.hold(cpuName(c.n), t, c.ints[k-1], false, c.n)
		return
	}
	s.truth.hold(cpuName(c.n), t, c.run.name, false, c.n)
	if th != nil {
		s.push(dtEvent{t: t + s.between(1, 2000), kind: evAction, th: th})
	}
}

// wake makes a sleeping thread runnable; an idle CPU not yet claimed
// leaves its idle thread for it.
func (s *dtSim) wake(th *dtThread, t int64) {
	th.runnable = true
	s.runq = append(s.runq, th)
	for _, c := range s.cpus {
		if c.idle && !c.claim {
			c.claim, c.idle = true, false
			s.line(t, c.n, 0, int64(1000+c.n), "sched:unix:swtch:off-cpu", ` idle=1 state=runnable execname="sched"`)
			c.switching, c.offAt = true, t
			s.push(dtEvent{t: t + s.gap(), kind: evDispatch, c: c.n})
			return
		}
	}
}

// ivTracker records intervals as a state machine lives them: a new state
// ends the open interval of the (object, instance) and opens the next;
// the state already open on the same CPU goes on.
type ivTracker struct {
	open map[ivKey]*DTraceInterval
	out  []DTraceInterval
}

type ivKey struct {
	obj  string
	inst int64
}

func (k *ivTracker) set(obj string, inst int64, t int64, state string, cpu int) {
	key := ivKey{obj, inst}
	if o := k.open[key]; o != nil {
		if o.State == state && o.CPU == cpu {
			return
		}
		o.End = t
		k.out = append(k.out, *o)
	}
	k.open[key] = &DTraceInterval{Object: obj, Instance: inst, State: state, Start: t, CPU: cpu}
}

// hold records that holder holds the CPU whose object is cpu from t on:
// its interval, state = holder = the holder's name (traceduck's CPU
// model, docs in schema/cpus.go).
func (k *ivTracker) hold(cpu string, t int64, holder string, idle bool, n int) {
	key := ivKey{cpu, 0}
	if o := k.open[key]; o != nil {
		if o.Holder == holder && o.CPU == n {
			return
		}
		o.End = t
		k.out = append(k.out, *o)
	}
	k.open[key] = &DTraceInterval{Object: cpu, State: holder, Start: t, CPU: n, Holder: holder, Idle: idle}
}

func (k *ivTracker) end(obj string, inst int64, t int64, truncated bool) {
	key := ivKey{obj, inst}
	if o := k.open[key]; o != nil {
		o.End, o.Truncated = t, truncated
		k.out = append(k.out, *o)
		delete(k.open, key)
	}
}

// finish ends what is open at the trace's last time, truncated.
func (k *ivTracker) finish(last int64) {
	for key, o := range k.open {
		o.End, o.Truncated = last, true
		k.out = append(k.out, *o)
		delete(k.open, key)
	}
}

func (k *ivTracker) done() []DTraceInterval {
	sort.Slice(k.out, func(i, j int) bool {
		a, b := k.out[i], k.out[j]
		if a.Object != b.Object {
			return a.Object < b.Object
		}
		if a.Instance != b.Instance {
			return a.Instance < b.Instance
		}
		return a.Start < b.Start || a.Start == b.Start && a.End < b.End
	})
	return k.out
}
