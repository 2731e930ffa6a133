package tracegen

import (
	"bufio"
	"container/heap"
	"fmt"
	"io"
	"math/rand"
)

// FtraceConfig sets up WriteFtrace.
type FtraceConfig struct {
	Lines     int   // write at least this many event lines (then stop)
	CPUs      int   // 1..64
	Processes int   // 1..100
	Threads   int   // per process, 1..50
	Seed      int64 // same seed, same output
	TGID      bool  // print the TGID column (options/record-tgid)
	Waking    bool  // print sched_waking before each sched_wakeup
}

// FtraceInterval is one state interval as the simulator lived it, named
// as traceduck names objects and states (ingest/ftrace/README.md): object
// "comm-tid", "cpu N", "irq N name", "softirq NAME"; CPU -1 for none. A
// CPU's intervals name their holder: a thread "comm-tid", the idle task
// "swapper/N", an interrupt.
type FtraceInterval = DTraceInterval

// FtraceTruth is what WriteFtrace simulated.
type FtraceTruth struct {
	Lines     int              // event lines written after the header
	Intervals []FtraceInterval // every state interval, sorted by object, instance, start
	// Syscalls holds the durations (ns) of the completed system calls,
	// by number, in the order they returned.
	Syscalls map[int][]int64
	// CPUs: what the CPUs' complete intervals add up to (per CPU and
	// holder, busy per CPU: not in swapper/N); Running: per thread, its
	// complete running intervals.
	CPUs    CPUSums
	Running map[string]int64
}

// WriteFtrace simulates threads of several processes scheduled on CPUs
// and writes what /sys/kernel/tracing/trace would show with the sched,
// irq and raw_syscalls events enabled: the header, then one line per
// event in time order (µs timestamps, as the kernel prints them). The
// truth is recorded from the simulator's own state as it acts, never by
// reading the output back.
//
// The simulated system:
//   - At the start, each CPU switches from its idle task to a thread
//     (while there are threads); the other threads sleep and are woken
//     at random times in the first 2 ms.
//   - A running thread acts every 5..500 µs: a system call that returns
//     without blocking; a system call that blocks (switch out in S, or
//     D one time in four, woken 100..5000 µs later, returns once it runs
//     again); an interrupt on its CPU, followed one time in three by a
//     TIMER softirq; a preemption (switch out in R+) when a thread waits
//     for a CPU; a sched_stat_runtime event; a fork of a short-lived
//     thread (sched_process_fork, sched_wakeup_new) that exits after a
//     few actions (sched_process_exit, switch out in Z, then
//     sched_process_free from another CPU); or computing.
//   - A wakeup comes from a timer interrupt on an idle CPU, which then
//     switches to the woken thread, else from a busy CPU (the thread waits
//     in the run queue, FIFO).
//
// A thread's states are what traceduck documents: running from its
// switch in, then the state it switched out in (sleeping,
// uninterruptible, runnable, Z) until its next event; runnable from a
// wakeup. Its first interval begins at its first scheduling event. A
// CPU's holder is known from its first switch: the thread, its idle task
// swapper/N, or the interrupt being handled; an interrupt on a CPU not
// known yet holds it while it lasts, then the CPU is not known again.
// When the simulation stops, what is open ends at the last line's time,
// truncated.
func WriteFtrace(w io.Writer, cfg FtraceConfig) (FtraceTruth, error) {
	if cfg.Lines < 1 || cfg.CPUs < 1 || cfg.CPUs > 64 || cfg.Processes < 1 || cfg.Processes > 100 || cfg.Threads < 1 || cfg.Threads > 50 {
		return FtraceTruth{}, fmt.Errorf("tracegen: FtraceConfig out of range: %+v", cfg)
	}
	s := &ftSim{cfg: cfg, rng: rand.New(rand.NewSource(cfg.Seed)), bw: bufio.NewWriterSize(w, 1<<16),
		truth: ivTracker{open: map[ivKey]*DTraceInterval{}}, syscalls: map[int][]int64{}, nextTID: 9000}
	s.run()
	if err := s.bw.Flush(); err != nil {
		return FtraceTruth{}, err
	}
	ivs := s.truth.done()
	return FtraceTruth{Lines: s.lines, Intervals: ivs, Syscalls: s.syscalls, CPUs: SumCPUs(ivs), Running: SumRunning(ivs)}, nil
}

type ftThread struct {
	tid, tgid int64
	comm      string
	name      string // comm-tid
	cpu       int    // -1 when not running
	sys       int    // the open system call's number, -1 when none
	sysStart  int64
	plan      []ftStep
	runnable  bool
	shortLife int // actions left before a short-lived thread exits; 0: none
	gone      bool
}

type ftStep uint8

const (
	ftReturn ftStep = iota // sys_exit of the open call
	ftBlock                // switch out sleeping inside the call
	ftExit                 // sched_process_exit, then switch out in Z
)

type ftCPU struct {
	n     int
	run   *ftThread // nil: idle, or claimed by a wakeup in flight
	idle  bool
	known bool // a switch on it was written: the trace knows what it runs
}

type ftEvent struct {
	t, seq int64
	kind   uint8
	th     *ftThread
	c      int
	// interrupts
	irq  int
	name string
	soft bool      // a TIMER softirq follows the interrupt
	woke *ftThread // the thread an idle CPU's interrupt woke
}

const (
	ftAction     uint8 = iota
	ftWake             // a sleeping thread is woken
	ftIdleSwitch       // an idle CPU switches to the thread it woke
	ftFree             // sched_process_free of a dead thread
	ftZombie           // a thread that exited switches out in Z
	ftIrqExit          // the interrupt on CPU c ends
	ftSoftEntry        // the TIMER softirq on CPU c begins
	ftSoftExit         // and ends
)

type ftQueue []ftEvent

func (q ftQueue) Len() int { return len(q) }
func (q ftQueue) Less(i, j int) bool {
	if q[i].t != q[j].t {
		return q[i].t < q[j].t
	}
	return q[i].seq < q[j].seq
}
func (q ftQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *ftQueue) Push(x any)   { *q = append(*q, x.(ftEvent)) }
func (q *ftQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

type ftSim struct {
	cfg      FtraceConfig
	rng      *rand.Rand
	bw       *bufio.Writer
	q        ftQueue
	seq      int64
	threads  []*ftThread
	runq     []*ftThread
	cpus     []*ftCPU
	lines    int
	lastT    int64
	truth    ivTracker
	syscalls map[int][]int64
	nextTID  int64
	short    int // short-lived threads alive
}

// the start of the trace, in µs (4321 s after boot)
const ftStart = 4321_000_000

var (
	ftComms       = []string{"Web Content", "compositor", "audiod", "logger", "sshd", "make", "cc1", "kworker/u8:2"}
	ftNonBlocking = []int{64, 57, 29, 80, 172} // write, close, ioctl, fstat, getpid (arm64 numbers)
	ftBlocking    = []int{63, 73, 101, 98}     // read, ppoll, nanosleep, futex
)

func (s *ftSim) push(e ftEvent) {
	s.seq++
	e.seq = s.seq
	heap.Push(&s.q, e)
}

func (s *ftSim) between(lo, hi int) int64 { return int64(lo + s.rng.Intn(hi-lo+1)) }

// line writes one event line at time t (µs) on CPU c in the context of
// thread th (nil: the idle task).
func (s *ftSim) line(t int64, c int, th *ftThread, flags, event, fields string) {
	comm, pid, tgid := "<idle>", int64(0), "-------"
	if th != nil {
		comm, pid, tgid = th.comm, th.tid, fmt.Sprint(th.tgid)
	}
	task := fmt.Sprintf("%16s-%-7d", comm, pid)
	if s.cfg.TGID {
		task += fmt.Sprintf(" (%7s)", tgid)
	}
	fmt.Fprintf(s.bw, "%s [%03d] %s %5d.%06d: %s: %s\n", task, c, flags, t/1_000_000, t%1_000_000, event, fields)
	s.lines++
	s.lastT = t
}

func ns(us int64) int64 { return us * 1000 }

func (s *ftSim) set(obj string, inst int64, t int64, state string, cpu int) {
	s.truth.set(obj, inst, ns(t), state, cpu)
}

func (s *ftSim) end(obj string, inst int64, t int64) {
	s.truth.end(obj, inst, ns(t), false)
}

// hold records what holds CPU c from t: a thread, an interrupt, or (th
// nil, holder "") its idle task.
func (s *ftSim) hold(c int, t int64, holder string) {
	idle := holder == ""
	if idle {
		holder = fmt.Sprintf("swapper/%d", c)
	}
	s.truth.hold(cpuLabel(c), ns(t), holder, idle, c)
}

// run plays the simulation:
//  1. The header; processes and threads are made; each CPU switches to
//     a thread at the start while there are threads, the others are
//     woken in the first 2 ms.
//  2. Events are taken in time order (a thread's action, a wakeup, an
//     idle CPU's switch, a free); each writes its lines and records the
//     truth.
//  3. Once enough lines are written, the intervals still open end at the
//     last line's time, truncated.
func (s *ftSim) run() {
	s.header()
	for p := 0; p < s.cfg.Processes; p++ {
		tgid := int64(1000 + 100*p)
		comm := ftComms[p%len(ftComms)]
		if p >= len(ftComms) {
			comm = fmt.Sprintf("app%d", p)
		}
		for k := 0; k < s.cfg.Threads; k++ {
			th := &ftThread{tid: tgid + int64(k), tgid: tgid, comm: comm, cpu: -1, sys: -1}
			if k > 0 {
				th.comm = fmt.Sprintf("%.12s:%d", comm, k)
			}
			th.name = fmt.Sprintf("%s-%d", th.comm, th.tid)
			s.threads = append(s.threads, th)
		}
	}
	for c := 0; c < s.cfg.CPUs; c++ {
		// idle, unknown to the trace until its first switch
		s.cpus = append(s.cpus, &ftCPU{n: c, idle: true})
	}
	for i, th := range s.threads {
		if i < len(s.cpus) {
			s.switchTo(s.cpus[i], nil, "", th, ftStart)
			continue
		}
		s.push(ftEvent{t: ftStart + s.between(1, 2000), kind: ftWake, th: th})
	}
	for s.lines < s.cfg.Lines && s.q.Len() > 0 {
		e := heap.Pop(&s.q).(ftEvent)
		switch e.kind {
		case ftAction:
			if !e.th.gone && e.th.cpu >= 0 {
				s.action(e.th, e.t)
			}
		case ftWake:
			s.wake(e.th, e.t)
		case ftIdleSwitch:
			c := s.cpus[e.c]
			s.switchTo(c, nil, "", e.th, e.t)
		case ftFree:
			s.free(e.th, e.t, e.c)
		case ftZombie:
			s.leave(e.th, e.t, "Z")
		case ftIrqExit:
			s.irqExit(e)
		case ftSoftEntry:
			c := s.cpus[e.c]
			s.line(e.t, c.n, e.th, "..s1", "softirq_entry", "vec=1 [action=TIMER]")
			s.set("softirq TIMER", int64(c.n), e.t, "handler", c.n)
			s.hold(c.n, e.t, "softirq TIMER")
			s.push(ftEvent{t: e.t + s.between(1, 30), kind: ftSoftExit, th: e.th, c: c.n})
		case ftSoftExit:
			c := s.cpus[e.c]
			s.line(e.t, c.n, e.th, "..s1", "softirq_exit", "vec=1 [action=TIMER]")
			s.end("softirq TIMER", int64(c.n), e.t)
			s.hold(c.n, e.t, e.th.name)
			s.push(ftEvent{t: e.t + s.between(5, 500), kind: ftAction, th: e.th})
		}
	}
	s.truth.finish(ns(s.lastT))
}

func (s *ftSim) header() {
	b := s.bw
	fmt.Fprintf(b, "# tracer: nop\n#\n# entries-in-buffer/entries-written: %d/%d   #P:%d\n#\n", s.cfg.Lines, s.cfg.Lines, s.cfg.CPUs)
	pad := ""
	if s.cfg.TGID {
		pad = "          "
	}
	fmt.Fprintf(b, "#                          %s    _-----=> irqs-off\n", pad)
	fmt.Fprintf(b, "#                          %s   / _----=> need-resched\n", pad)
	fmt.Fprintf(b, "#                          %s  | / _---=> hardirq/softirq\n", pad)
	fmt.Fprintf(b, "#                          %s  || / _--=> preempt-depth\n", pad)
	fmt.Fprintf(b, "#                          %s  ||| /     delay\n", pad)
	if s.cfg.TGID {
		fmt.Fprintf(b, "#           TASK-PID      TGID     CPU#  ||||   TIMESTAMP  FUNCTION\n")
		fmt.Fprintf(b, "#              | |          |        |   ||||      |         |\n")
	} else {
		fmt.Fprintf(b, "#           TASK-PID     CPU#  ||||   TIMESTAMP  FUNCTION\n")
		fmt.Fprintf(b, "#              | |         |   ||||      |         |\n")
	}
}

func cpuLabel(n int) string { return fmt.Sprintf("cpu %d", n) }

func commOf(th *ftThread, c *ftCPU) string {
	if th == nil {
		return fmt.Sprintf("swapper/%d", c.n)
	}
	return th.comm
}

func pidOf(th *ftThread) int64 {
	if th == nil {
		return 0
	}
	return th.tid
}

// switchTo writes the sched_switch on CPU c from prev (nil: the idle
// task) leaving in prevState (the letter printed) to next (nil: idle).
func (s *ftSim) switchTo(c *ftCPU, prev *ftThread, prevState string, next *ftThread, t int64) {
	if prevState == "" {
		prevState = "R" // the idle task
	}
	c.known = true
	s.line(t, c.n, prev, "d..2", "sched_switch", fmt.Sprintf("prev_comm=%s prev_pid=%d prev_prio=120 prev_state=%s ==> next_comm=%s next_pid=%d next_prio=120",
		commOf(prev, c), pidOf(prev), prevState, commOf(next, c), pidOf(next)))
	if prev != nil {
		state := map[string]string{"S": "sleeping", "D": "uninterruptible", "R+": "runnable"}[prevState]
		if state == "" {
			state = prevState
		}
		s.set(prev.name, 0, t, state, -1)
		prev.cpu = -1
	}
	if next == nil {
		c.run, c.idle = nil, true
		s.hold(c.n, t, "")
		return
	}
	next.runnable = false
	c.run, c.idle = next, false
	next.cpu = c.n
	s.set(next.name, 0, t, "running", c.n)
	s.hold(c.n, t, next.name)
	s.push(ftEvent{t: t + s.between(5, 500), kind: ftAction, th: next})
}

// leave takes a running thread off its CPU in state and switches the CPU
// to the next runnable thread, or idle.
func (s *ftSim) leave(th *ftThread, t int64, state string) {
	c := s.cpus[th.cpu]
	var next *ftThread
	if len(s.runq) > 0 {
		next = s.runq[0]
		s.runq = s.runq[1:]
	}
	if state == "R+" {
		th.runnable = true
		s.runq = append(s.runq, th)
	}
	s.switchTo(c, th, state, next, t)
}

// action is a running thread's next step: its plan's, else one drawn at
// random.
func (s *ftSim) action(th *ftThread, t int64) {
	c := s.cpus[th.cpu]
	next := func() { s.push(ftEvent{t: t + s.between(5, 500), kind: ftAction, th: th}) }
	if len(th.plan) > 0 {
		step := th.plan[0]
		th.plan = th.plan[1:]
		switch step {
		case ftReturn:
			s.sysExit(th, c, t)
			next()
		case ftBlock:
			state := "S"
			if s.rng.Intn(4) == 0 {
				state = "D"
			}
			s.leave(th, t, state)
			s.push(ftEvent{t: t + s.between(100, 5000), kind: ftWake, th: th})
		case ftExit:
			s.line(t, c.n, th, "....", "sched_process_exit", fmt.Sprintf("comm=%s pid=%d prio=120", th.comm, th.tid))
			s.push(ftEvent{t: t + s.between(1, 20), kind: ftZombie, th: th})
			th.gone = true
			s.short--
			s.push(ftEvent{t: t + s.between(50, 500), kind: ftFree, th: th, c: s.rng.Intn(len(s.cpus))})
		}
		return
	}
	if th.shortLife > 0 {
		th.shortLife--
		if th.shortLife == 0 {
			th.plan = append(th.plan, ftExit)
			next()
			return
		}
	}
	switch r := s.rng.Intn(100); {
	case r < 30:
		s.sysEnter(th, c, t, ftNonBlocking[s.rng.Intn(len(ftNonBlocking))])
		th.plan = append(th.plan, ftReturn)
		s.push(ftEvent{t: t + s.between(1, 20), kind: ftAction, th: th})
	case r < 50:
		s.sysEnter(th, c, t, ftBlocking[s.rng.Intn(len(ftBlocking))])
		th.plan = append(th.plan, ftBlock, ftReturn)
		s.push(ftEvent{t: t + s.between(1, 20), kind: ftAction, th: th})
	case r < 60:
		s.interrupt(c, th, t)
	case r < 75 && len(s.runq) > 0:
		s.leave(th, t, "R+")
	case r < 80:
		s.line(t, c.n, th, "d..3", "sched_stat_runtime", fmt.Sprintf("comm=%s pid=%d runtime=%d [ns] vruntime=%d [ns]", th.comm, th.tid, s.between(1000, 900000), 100000000+t))
		next()
	case r < 82 && s.short < 2 && th.shortLife == 0:
		s.fork(th, c, t)
		next()
	default:
		next()
	}
}

func (s *ftSim) sysEnter(th *ftThread, c *ftCPU, t int64, nr int) {
	s.line(t, c.n, th, "....", "sys_enter", fmt.Sprintf("NR %d (%x, %x, %x, 0, 0, 0)", nr, s.rng.Intn(64), 0x7ffd0000+s.rng.Intn(0xffff), s.rng.Intn(4096)))
	th.sys, th.sysStart = nr, t
	s.set(th.name, 1, t, fmt.Sprintf("NR %d", nr), c.n)
}

func (s *ftSim) sysExit(th *ftThread, c *ftCPU, t int64) {
	s.line(t, c.n, th, "....", "sys_exit", fmt.Sprintf("NR %d = %d", th.sys, s.rng.Intn(512)))
	s.end(th.name, 1, t)
	s.syscalls[th.sys] = append(s.syscalls[th.sys], ns(t-th.sysStart))
	th.sys = -1
}

// interrupt runs a device interrupt on a running thread's CPU, and one
// time in three the TIMER softirq after it (at the interrupt's exit, as
// the kernel runs them); the thread acts again after them.
func (s *ftSim) interrupt(c *ftCPU, th *ftThread, t int64) {
	irq := []struct {
		n    int
		name string
	}{{27, "arch_timer"}, {45, "eth0"}, {62, "mmc0"}}[s.rng.Intn(3)]
	s.irqEntry(c, th, t, irq.n, irq.name, "d.h1")
	s.push(ftEvent{t: t + s.between(2, 50), kind: ftIrqExit, th: th, c: c.n, irq: irq.n, name: irq.name, soft: s.rng.Intn(3) == 0})
}

func (s *ftSim) irqEntry(c *ftCPU, th *ftThread, t int64, n int, name, flags string) {
	label := fmt.Sprintf("irq %d %s", n, name)
	s.line(t, c.n, th, flags, "irq_handler_entry", fmt.Sprintf("irq=%d name=%s", n, name))
	s.set(label, int64(c.n), t, "handler", c.n)
	s.hold(c.n, t, label)
}

// irqExit ends an interrupt: the CPU shows its thread again (then the
// softirq, or the thread's next action), or, on an idle CPU that woke a
// thread, idle until it switches to that thread.
func (s *ftSim) irqExit(e ftEvent) {
	c := s.cpus[e.c]
	label := fmt.Sprintf("irq %d %s", e.irq, e.name)
	flags := "d.h1"
	if e.th == nil {
		flags = "dnh1"
	}
	s.line(e.t, c.n, e.th, flags, "irq_handler_exit", fmt.Sprintf("irq=%d ret=handled", e.irq))
	s.end(label, int64(c.n), e.t)
	if e.th == nil {
		if c.known {
			s.hold(c.n, e.t, "")
		} else {
			s.end(cpuLabel(c.n), 0, e.t) // the trace has not said what it runs
		}
		s.push(ftEvent{t: e.t + s.between(1, 10), kind: ftIdleSwitch, th: e.woke, c: c.n})
		return
	}
	s.hold(c.n, e.t, e.th.name)
	if e.soft {
		s.push(ftEvent{t: e.t + s.between(0, 2), kind: ftSoftEntry, th: e.th, c: c.n})
		return
	}
	s.push(ftEvent{t: e.t + s.between(5, 500), kind: ftAction, th: e.th})
}

// wake makes a sleeping thread runnable: an idle CPU takes the wakeup in
// a timer interrupt and then switches to the thread; otherwise a busy
// CPU wakes it and it waits in the run queue.
func (s *ftSim) wake(th *ftThread, t int64) {
	for _, c := range s.cpus {
		if c.idle {
			c.idle = false // claimed until it switches to th
			s.irqEntry(c, nil, t, 27, "arch_timer", "d.h1")
			s.wakeLines(c, nil, th, t, "dnh2")
			s.push(ftEvent{t: t + s.between(1, 5), kind: ftIrqExit, c: c.n, irq: 27, name: "arch_timer", woke: th})
			return
		}
	}
	var busy []*ftCPU
	for _, c := range s.cpus {
		if c.run != nil {
			busy = append(busy, c)
		}
	}
	if len(busy) == 0 {
		// every CPU is claimed by a wakeup in flight: try again shortly
		s.push(ftEvent{t: t + s.between(1, 20), kind: ftWake, th: th})
		return
	}
	c := busy[s.rng.Intn(len(busy))]
	s.wakeLines(c, c.run, th, t, "d..3")
	th.runnable = true
	s.runq = append(s.runq, th)
}

func (s *ftSim) wakeLines(c *ftCPU, ctx, th *ftThread, t int64, flags string) {
	if s.cfg.Waking {
		s.line(t, c.n, ctx, flags, "sched_waking", fmt.Sprintf("comm=%s pid=%d prio=120 target_cpu=%03d", th.comm, th.tid, c.n))
	}
	s.line(t, c.n, ctx, flags, "sched_wakeup", fmt.Sprintf("comm=%s pid=%d prio=120 target_cpu=%03d", th.comm, th.tid, c.n))
	s.set(th.name, 0, t, "runnable", -1)
}

// fork makes a short-lived thread of th's process: it is woken new, runs
// a few actions and exits.
func (s *ftSim) fork(th *ftThread, c *ftCPU, t int64) {
	child := &ftThread{tid: s.nextTID, tgid: s.nextTID, comm: "sh", cpu: -1, sys: -1, shortLife: 3 + s.rng.Intn(5)}
	s.nextTID++
	child.name = fmt.Sprintf("%s-%d", child.comm, child.tid)
	s.short++
	s.line(t, c.n, th, "....", "sched_process_fork", fmt.Sprintf("comm=%s pid=%d child_comm=%s child_pid=%d", th.comm, th.tid, child.comm, child.tid))
	s.line(t, c.n, th, "d..4", "sched_wakeup_new", fmt.Sprintf("comm=%s pid=%d prio=120 target_cpu=%03d", child.comm, child.tid, c.n))
	s.set(child.name, 0, t, "runnable", -1)
	child.runnable = true
	s.runq = append(s.runq, child)
}

// free writes sched_process_free of a dead thread on some CPU (the RCU
// callback): its Z interval ends.
func (s *ftSim) free(th *ftThread, t int64, n int) {
	c := s.cpus[n]
	if c.run == nil && !c.idle {
		// that CPU is claimed by a wakeup in flight: use a busy one
		for _, d := range s.cpus {
			if d.run != nil {
				c = d
				break
			}
		}
	}
	s.line(t, c.n, c.run, "....", "sched_process_free", fmt.Sprintf("comm=%s pid=%d prio=120", th.comm, th.tid))
	s.end(th.name, 0, t)
}

// FtraceIntervalsText lists intervals one per line, as the ftrace truth
// test compares them (IntervalsText).
func FtraceIntervalsText(ivs []FtraceInterval) string { return IntervalsText(ivs) }
