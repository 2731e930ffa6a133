package tracegen

// GenerateQNX: a deterministic QNX Neutrino system simulator that returns
// the events tracelogger would have logged (as internal/qnxenc events, to be
// printed as traceprinter text or encoded as .kev) and the ground truth of
// what it simulated, kept by the simulator itself, never by re-reading the
// events.
//
// # Simulated system
//
//   - procnto (pid 1, proc/boot/procnto-smp-instr): tids 1..CPUs are the idle
//     threads (tid k is CPU k-1's, it only ever runs there), then three kernel
//     worker threads that serve procnto's channel (messages from clients,
//     spawn requests, pulses from the kernel).
//   - Server processes (proc/boot/pci-bios 4099 and sbin/devc-pty 159762, as
//     many as Procs allows: none for Procs=1, one for 2..3, two for >=4):
//     worker threads blocked in RECEIVE; devc-pty has a second thread in
//     SIGWAITINFO that never wakes.
//   - Client processes usr/bin/app_N (the rest of Procs) with 1..3 threads
//     that compute, send messages and pulses to the servers, sleep, contend
//     for a mutex, wait on and post a semaphore and a condition variable,
//     create short-lived threads, and (app_1's thread 1 only) spawn
//     short-lived job processes (through a message to procnto) that exit
//     and are destroyed.
//   - One global FIFO ready queue, a 1 ms round-robin time slice, no
//     priorities. A thread that becomes READY goes to an idle CPU at once
//     (preferring the CPU it last ran on), else to the tail of the queue.
//   - A clock tick (vector 0) on CPU 0 every 2 ms wakes expired sleepers
//     (THREADY on CPU 0), sometimes re-emits THREADY for the head of the
//     ready queue (a priority adjustment: the same state again, on the same
//     or another CPU), and now and then sends a pulse to procnto; device
//     interrupts (vectors 4, 9, 11) arrive on random CPUs; vector 9 sometimes
//     nests inside vector 4's handler. Interrupts never change thread states
//     and no kernel call or thread event happens inside one.
//   - The first thread on CPU 0 (app_1's thread 1, which started the trace)
//     first logs KER_EXIT TRACE_EVENT/01 without its KER_CALL, and threads
//     blocked at the start (RECEIVE, NANOSLEEP) later log the KER_EXIT of a
//     call entered before the trace. THREAD_DESTROY (tid:-1) and
//     THREAD_DESTROYALL never exit: a short-lived thread ends with KER_CALL
//     THREAD_DESTROY, THDEAD, THDESTROY; a job process's last thread with
//     KER_CALL THREAD_DESTROYALL, THDESTROY, THDEAD (traceprinter's order),
//     after which procnto gets a pulse and logs PROCESS PROCDESTROY.
//   - User events are string events as traceprinter prints them:
//     USREVENT:EVENT:1 STR:"hello world 1" (then EVENT:2, rarely).
//
// # Event sequences (each line one event; CPU c is where the actor runs)
//
// Message pass, server thread S waiting in RECEIVE (client C on CPU c):
//
//	c KER_CALL:MSG_SENDV/11 coid:0x00000003 msg:"" (0x00040116)
//	c COMM    :SND_MESSAGE rcvid:0x00000052 pid:<server pid>
//	c THREAD  :THREPLY  C                 (C leaves RUNNING)
//	c THREAD  :THREADY  S                 (direct hand-off: S runs next on c)
//	c THREAD  :THRUNNING S
//	c COMM    :REC_MESSAGE rcvid:0x00000052 pid:<server pid>
//	c KER_EXIT:MSG_RECEIVEV/14 rcvid:0x00000052 rmsg:"" (0x00000000)
//	  ... S computes ...
//	d KER_CALL:MSG_REPLYV/15 rcvid:0x00000052 status:0x00000000
//	d COMM    :REPLY_MESSAGE tid:<C tid> pid:<C pid>
//	d THREAD  :THREADY  C
//	  (if some CPU e runs its idle thread I: e THREADY I, e THRUNNING C,
//	   e KER_EXIT:MSG_SENDV/11 status:0 rmsg:"" (0x00000000))
//	d KER_EXIT:MSG_REPLYV/15 ret_val:0 empty:0x00000000
//	d KER_CALL:MSG_RECEIVEV/14 chid:0x00000001 rparts:1
//	d THREAD  :THRECEIVE S               (or, with a queued client Q:
//	                                       THREPLY Q, REC_MESSAGE, KER_EXIT)
//	d THREAD  :THRUNNING <next>
//
// When no server thread waits, the client gets THSEND instead of THREPLY,
// is queued on the channel, and a server thread's later MSG_RECEIVEV emits
// "THREPLY C" (SEND -> REPLY) on the server's CPU. The client's KER_EXIT
// MSG_SENDV always comes on the CPU the client runs on when it resumes.
//
// Interrupt (on CPU c, while any thread, possibly idle, is RUNNING there):
//
//	c INT_ENTR:0x00000004 (4) IP:0xf0084a1c
//	c INT_HANDLER_ENTR:0x00000004 (4) PID:159762 IP:0x080b7334 AREA:0x0812a060
//	  [nested: c INT_ENTR:0x00000009 (9) ..., INT_HANDLER_ENTR, INT_HANDLER_EXIT, INT_EXIT 9]
//	c INT_HANDLER_EXIT:0x00000004 (4) SIGEVENT:NONE
//	c INT_EXIT:0x00000004 (4) inkernel:0x00000f01
//
// Kernel call numbers are those of QNX's <sys/kercalls.h> (6.x, 2007 public
// copy): TRACE_EVENT 1, MSG_SENDV 11, MSG_RECEIVEV 14, MSG_REPLYV 15,
// MSG_SEND_PULSE 20, CONNECT_SERVER_INFO 41, THREAD_CREATE 46,
// THREAD_DESTROY 47, THREAD_DESTROYALL 48, TIMER_TIMEOUT 75,
// SYNC_MUTEX_LOCK 80, SYNC_MUTEX_UNLOCK 81, SYNC_CONDVAR_WAIT 82,
// SYNC_CONDVAR_SIGNAL 83, SYNC_SEM_POST 84, SYNC_SEM_WAIT 85. Their
// arguments are the two "fast mode" words as traceprinter prints them for a
// simple event (the formats of internal/qnxenc's table of traceprinter.c,
// e.g. "fDstatus fSrmsg s s": status:0 rmsg:"" (0x00000000)), so every
// event can be encoded as .kev. traceprinter prints SYNC_CONDVAR_SIGNAL/83's
// exit as KER_EXIT:SYNC_CONDVAR_SIG/83: a KER_EXIT belongs to the KER_CALL
// with the same number.
//
// # Time
//
// Every event carries the full 64-bit cycle count; events are in
// non-decreasing cycle order. The trace starts with CONTROL BUFFER and
// CONTROL TIME (msb = high word, lsb(offset) = low word). Each time the low
// 32 bits wrap, a CONTROL TIME event (on the CPU of the next event, at
// exactly msb<<32, lsb(offset):0x00000000) precedes the first event of the
// new epoch, except for one wrap: the second one when there are two or more,
// else the only one, which a reader must detect from the low word going
// backwards.

import (
	"container/heap"
	"errors"
	"fmt"
	"math/bits"
	"math/rand"
	"slices"
	"strconv"
	"strings"

	"github.com/traceduck/traceduck/internal/qnxenc"
)

// QNXConfig configures GenerateQNX.
type QNXConfig struct {
	Events       int    // approximate number of events (the simulation stops once reached); > 0
	CPUs         int    // 1..32
	Procs        int    // user processes besides procnto (default 4 when 0)
	Seed         int64  // seed of math/rand; identical configs give identical traces
	CyclesPerSec uint64 // default 736629000 (the seed's value, which does not divide 1e9)
	StartCycles  uint64 // first cycle count; default 0x000037b0_f0000000, whose low word wraps about 0.36 s into the trace
}

// QNXInterval is one interval of a thread: a thread state or a kernel call.
// CPU is the CPU of the event that opened it.
type QNXInterval struct {
	Pid, Tid       int
	State          string
	StartNS, EndNS int64
	CPU            int
}

// QNXTruth is what the simulator knows, in the terms traceduck computes.
//
// Thread states: every THREAD state event (THRUNNING -> RUNNING, THREADY ->
// READY, ... the event name without "TH") of a thread closes that thread's
// open interval and opens one in the new state with CPU = the event's CPU,
// except that an event with the same state and the same CPU as the open
// interval continues it. THCREATE opens nothing; THDESTROY closes without
// opening. Intervals opened by the initial-state section count from that
// event. Only intervals closed by a later event are listed (those still open
// at the end are truncated), in the order of the events that opened them.
//
// Kernel calls: a KER_CALL opens a call on the thread running on its CPU; a
// KER_EXIT of the same call (the same number NN of NAME/NN) on that thread,
// while it is running on the CPU of the KER_EXIT, closes it, and the
// interval is named by the KER_CALL's name without "/NN". Exits without a
// matching call (calls entered before the trace started) give nothing;
// calls never exited (THREAD_DESTROY, THREAD_DESTROYALL, or open at the end)
// are not listed. Listed in the order of their KER_CALL events.
//
// CPUs, as traceduck's CPU model has them (docs/semantics.md, "Who holds
// a CPU"; kept by the simulator as it schedules, never read back from the
// events): THRUNNING of a thread on CPU c makes it c's thread, and leaves
// the CPU it was the thread of before, if another, with none; a thread
// leaving RUNNING for another state keeps its CPU until the next
// THRUNNING there; THDESTROY of a CPU's thread leaves the CPU with none.
// An interrupt holds its CPU from INT_ENTR to INT_EXIT, over what runs
// (nested ones over the outer one). What holds a CPU is the innermost
// interrupt, else its thread, else none. A CPU is unknown until its
// first THRUNNING or INT_ENTR; each change of what holds a CPU ends a
// hold, and only holds ended by a change are counted (the one open at
// the end is CPUOpen). procnto's idle threads (pid 1, tid 1..CPUs) hold
// their CPU idle; interrupts and every other thread hold it busy; none
// is idle.
//
// Messages, as the simulator passes them (docs/semantics.md, "Messages:
// round trips"): every message a client thread sends (SND_MESSAGE), the
// worker thread that receives it (REC_MESSAGE) and the reply delivered to
// the client (REPLY_MESSAGE); every pulse a thread (SND_PULSE) or the
// kernel (SND_PULSE_EXE: a process's death, the periodic timer) sends, and
// the worker that receives it (REC_PULSE). Listed in the order of their
// sends; what had not happened at the end of the trace is -1.
//
// All times are ns = floor(cycles * 1e9 / CyclesPerSec) of the full 64-bit
// cycle count (QNXCyclesToNS); durations are differences of those.
type QNXTruth struct {
	Events        int
	EventCounts   map[string]int           // "CLASS/EVENT": KER_CALL/MSG_SENDV, KER_EXIT/SYNC_CONDVAR_SIG, INT/INT_ENTR, THREAD/THRUNNING, CONTROL/TIME, USREVENT/EVENT:1, ...
	ThreadStates  []QNXInterval            // complete thread-state intervals
	ThreadOpen    []QNXInterval            // the thread-state intervals open at the end (truncated), EndNS = LastNS, in the order of the events that opened them
	KernelCalls   []QNXInterval            // complete KER_CALL..KER_EXIT intervals, State = call name (MSG_SENDV)
	RunningPerCPU map[int]map[string]int64 // cpu -> "pid/tid" -> ns RUNNING (complete intervals; a key exists for every complete RUNNING interval, even of 0 ns)
	InterruptNS   map[int]int64            // vector -> summed INT_ENTR..INT_EXIT ns (complete; key exists once one completed)
	CPUHolders    map[int]map[string]int64 // cpu -> holder -> ns held (ended holds): "pid/tid" (a thread), "irq V" (an interrupt, V its vector), "" (none); a key exists for every ended hold, even of 0 ns
	CPUBusyNS     map[int]int64            // cpu -> ns held by interrupts and threads other than the idle threads (ended holds)
	CPUIdleNS     map[int]int64            // cpu -> ns held by procnto's idle threads (ended holds)
	CPUOpen       map[int]QNXHold          // cpu -> what holds it at the end of the trace, and since when
	IdleThreads   []string                 // procnto's idle threads, "1/1".."1/CPUs"
	// SyncWaits are the complete waits of threads in SYNC_MUTEX_LOCK,
	// SYNC_SEM_WAIT and SYNC_CONDVAR_WAIT, per "KIND ADDR pid PID|PID/TID"
	// (KIND mutex, semaphore or condvar; ADDR the call's sync_p as
	// printed): from the KER_CALL of a call that blocks (THMUTEX, THSEM,
	// THCONDVAR) to the THREADY that wakes the thread, counted when its
	// KER_EXIT (ret_val 0) comes. SyncOpen counts the waits the end of the
	// trace cuts: threads still blocked, or woken and not yet returned.
	SyncWaits map[string]Sum
	SyncOpen  int
	FirstNS   int64
	LastNS    int64
	Wraps     int // times the low 32 bits wrapped
	Messages  []QNXMessage
}

// QNXMessage is one message or pulse the simulator passed.
type QNXMessage struct {
	Client    string // the sending thread, "pid/tid"; "" for a pulse the kernel sent
	Server    string // the receiving thread, "pid/tid"; "pid P" (its process) until one receives it
	ID        uint32 // a message's rcvid, a pulse's scoid
	OneWay    bool   // a pulse
	SendNS    int64
	ReceiveNS int64 // -1: not received in the trace
	ReplyNS   int64 // -1: a pulse, or no reply in the trace
}

// QNXHold is what holds a CPU ("pid/tid", "irq V" or "" for none) since
// StartNS.
type QNXHold struct {
	Holder  string
	StartNS int64
}

const (
	qnxDefaultCPS   = 736629000
	qnxDefaultStart = 0x000037b0_f0000000
	qnxDefaultProcs = 4
	qnxMaxCPUs      = 32
)

// QNXCyclesToNS converts a 64-bit cycle count to ns: floor(cycles * 1e9 /
// cps), computed exactly. It panics when the result does not fit in 64 bits;
// QNXCyclesToNSOK tells whether it does and fits in an int64.
func QNXCyclesToNS(cycles, cps uint64) int64 {
	hi, lo := bits.Mul64(cycles, 1_000_000_000)
	q, _ := bits.Div64(hi, lo, cps)
	return int64(q)
}

// QNXCyclesToNSOK reports whether QNXCyclesToNS(cycles, cps) is defined.
func QNXCyclesToNSOK(cycles, cps uint64) bool {
	if cps == 0 {
		return false
	}
	hi, lo := bits.Mul64(cycles, 1_000_000_000)
	if hi >= cps {
		return false
	}
	q, _ := bits.Div64(hi, lo, cps)
	return q <= 1<<63-1
}

// GenerateQNX simulates a QNX Neutrino system and returns the trace's
// header, its events in non-decreasing cycle order, and the truth.
func GenerateQNX(cfg QNXConfig) (qnxenc.Header, []qnxenc.Event, QNXTruth, error) {
	if cfg.Events <= 0 {
		return qnxenc.Header{}, nil, QNXTruth{}, errors.New("tracegen: QNX Events must be > 0")
	}
	if cfg.CPUs < 1 || cfg.CPUs > qnxMaxCPUs {
		return qnxenc.Header{}, nil, QNXTruth{}, fmt.Errorf("tracegen: QNX CPUs must be 1..%d, got %d", qnxMaxCPUs, cfg.CPUs)
	}
	if cfg.Procs < 0 {
		return qnxenc.Header{}, nil, QNXTruth{}, errors.New("tracegen: QNX Procs must be >= 0")
	}
	if cfg.Procs == 0 {
		cfg.Procs = qnxDefaultProcs
	}
	if cfg.CyclesPerSec == 0 {
		cfg.CyclesPerSec = qnxDefaultCPS
	}
	if cfg.CyclesPerSec < 1_000_000 {
		return qnxenc.Header{}, nil, QNXTruth{}, errors.New("tracegen: QNX CyclesPerSec must be >= 1000000")
	}
	if cfg.StartCycles == 0 {
		cfg.StartCycles = qnxDefaultStart
	}
	if !QNXCyclesToNSOK(cfg.StartCycles, cfg.CyclesPerSec) {
		return qnxenc.Header{}, nil, QNXTruth{}, errors.New("tracegen: QNX StartCycles too large for ns conversion")
	}
	s := newQSim(cfg)
	s.run()
	events, truth := s.finish()
	last := events[len(events)-1].Cycles
	if last < cfg.StartCycles || !QNXCyclesToNSOK(last, cfg.CyclesPerSec) {
		return qnxenc.Header{}, nil, QNXTruth{}, errors.New("tracegen: QNX cycle count overflows (StartCycles too large)")
	}
	return s.header(), events, truth, nil
}

// ---- model ----

type qState uint8

const (
	stNone qState = iota // created, no state event yet
	stDead
	stRunning
	stReady
	stSend
	stReceive
	stReply
	stNanosleep
	stMutex
	stCondvar
	stSem
	stSigwaitinfo
	stDestroyed
)

var qStateEvent = [...]string{
	stDead: "THDEAD", stRunning: "THRUNNING", stReady: "THREADY", stSend: "THSEND",
	stReceive: "THRECEIVE", stReply: "THREPLY", stNanosleep: "THNANOSLEEP", stMutex: "THMUTEX",
	stCondvar: "THCONDVAR", stSem: "THSEM", stSigwaitinfo: "THSIGWAITINFO",
}

var qStateName = [...]string{
	stDead: "DEAD", stRunning: "RUNNING", stReady: "READY", stSend: "SEND",
	stReceive: "RECEIVE", stReply: "REPLY", stNanosleep: "NANOSLEEP", stMutex: "MUTEX",
	stCondvar: "CONDVAR", stSem: "SEM", stSigwaitinfo: "SIGWAITINFO",
}

// qkc is a kernel call: the printed names of its KER_CALL and KER_EXIT
// (MSG_SENDV/11; traceprinter prints one exit under a shorter name), the
// call's name and its <sys/kercalls.h> number.
type qkc struct {
	full, exit, name string
	num              int
}

func newKC(name string, num int) qkc {
	n := strconv.Itoa(num)
	if num < 10 {
		n = "0" + n
	}
	return qkc{name + "/" + n, name + "/" + n, name, num}
}

var (
	kcTraceEvent   = newKC("TRACE_EVENT", 1)
	kcSendv        = newKC("MSG_SENDV", 11)
	kcReceivev     = newKC("MSG_RECEIVEV", 14)
	kcReplyv       = newKC("MSG_REPLYV", 15)
	kcSendPulse    = newKC("MSG_SEND_PULSE", 20)
	kcSrvInfo      = newKC("CONNECT_SERVER_INFO", 41)
	kcThCreate     = newKC("THREAD_CREATE", 46)
	kcThDestroy    = newKC("THREAD_DESTROY", 47)
	kcThDestroyAll = newKC("THREAD_DESTROYALL", 48)
	kcTimeout      = newKC("TIMER_TIMEOUT", 75)
	kcMutexLock    = newKC("SYNC_MUTEX_LOCK", 80)
	kcMutexUnlock  = newKC("SYNC_MUTEX_UNLOCK", 81)
	kcCvWait       = newKC("SYNC_CONDVAR_WAIT", 82)
	kcCvSignal     = qkc{"SYNC_CONDVAR_SIGNAL/83", "SYNC_CONDVAR_SIG/83", "SYNC_CONDVAR_SIGNAL", 83} // traceprinter's exit name
	kcSemPost      = newKC("SYNC_SEM_POST", 84)
	kcSemWait      = newKC("SYNC_SEM_WAIT", 85)
)

type qRole uint8

const (
	roleIdle qRole = iota
	roleWorker
	roleClient
	roleSigwait
)

// what a running thread does when its current compute burst ends
type qAct uint8

const (
	qaNone qAct = iota // pick the next action
	qaSend
	qaSleep
	qaLock
	qaUnlock
	qaSemWait
	qaSemPost
	qaCvWait
	qaCvSignal
	qaPulse
	qaSrvInfo
	qaCreate
	qaSpawn
	qaUser
	qaExitThread
	qaExitProc
	qaReply     // worker: reply to the message being handled
	qaPulseDone // worker: finish handling a pulse
	qaReceive   // worker: MsgReceivev
)

type qItemKind uint8

const (
	itMsg   qItemKind = iota
	itSpawn           // a message to procnto asking it to spawn a job process
	itPulse
	itDeath // kernel pulse to procnto: a process has no threads left
)

type qItem struct {
	kind   qItemKind
	client *qthread // itMsg, itSpawn
	rcvid  uint32
	scoid  uint32
	dead   *qproc // itDeath
	msg    int    // its index in the truth's messages
}

type qchan struct {
	chid  int
	recv  []*qthread // threads blocked in RECEIVE, FIFO
	queue []qItem    // messages from SEND-blocked clients and pulses, FIFO
}

type qsync struct {
	addr    uint32
	owner   *qthread // mutex
	count   int      // semaphore
	waiters []*qthread
}

type qproc struct {
	idx     int
	pid     int
	ppid    int
	name    string
	pidStr  string
	threads []*qthread
	live    int
	nextTid int
	ch      *qchan // servers
	coid    uint32 // connection id clients use for this server
	mutex   qsync
	sem     qsync
	cv      qsync
	job     bool
	dead    bool
}

type qthread struct {
	p      *qproc
	tid    int
	tidStr string
	key    string // "pid/tid"
	role   qRole
	st     qState
	cpu    int // CPU it runs on while RUNNING
	holdOn int // CPU whose thread it is in the CPU model (truth), or -1
	last   int // CPU it last ran on
	idleOf int // CPU whose idle thread this is, or -1

	rem     uint64 // cycles of compute left before next
	runFrom uint64
	next    qAct
	target  *qproc // server of qaSend / qaPulse
	life    int    // actions left for short-lived threads (-1: forever)
	holds   bool   // owns its process's mutex
	wake    uint64 // nanosleep deadline
	item    qItem  // worker: the item being handled
	resume  func(s *qsim, c int)

	// truth of a wait in a sync call: the object's key ("" when none),
	// the KER_CALL's time and the wake-up's (-1 before it)
	syncKey   string
	syncStart int64
	syncWoken int64

	// truth
	ivOpen  bool
	ivState qState
	ivCPU   int
	ivStart int64
	ivSeq   int
	kOpen   bool
	kName   string
	kNum    int
	kCPU    int
	kStart  int64
	kSeq    int
}

type qcpu struct {
	cur  *qthread
	idle *qthread
	gen  uint64
	ints []qint // interrupts in progress (nesting)

	// truth: what holds the CPU in the CPU model
	thread    *qthread // its thread (the last THRUNNING there), nil for none
	known     bool     // since its first THRUNNING or INT_ENTR
	held      string   // what holds it: "pid/tid", "irq V", "" (none)
	heldKind  uint8    // holdNone, holdBusy, holdIdle
	heldSince int64
}

const (
	holdNone uint8 = iota
	holdBusy
	holdIdle
)

type qint struct {
	vec   int
	start int64
}

// timers
const (
	tStep uint8 = iota
	tTick
	tDev
)

type qtimer struct {
	at   uint64
	seq  uint64
	kind uint8
	cpu  int
	gen  uint64
}

type qheap []qtimer

func (h qheap) Len() int { return len(h) }
func (h qheap) Less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].seq < h[j].seq
}
func (h qheap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *qheap) Push(x any)   { *h = append(*h, x.(qtimer)) }
func (h *qheap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

type qiv struct {
	iv  QNXInterval
	seq int
}

type qsim struct {
	cfg   QNXConfig
	rng   *rand.Rand
	cps   uint64
	now   uint64
	ev    []qnxenc.Event
	arena []qnxenc.Field

	lastNS int64

	syncWaits map[string]Sum // truth: complete waits in sync calls (QNXTruth.SyncWaits)
	hi        uint64         // high word of the last event
	wrapAt    []int          // index in ev of the first event (or the CONTROL TIME) of each new epoch
	keys      map[[2]string]string
	counts    map[string]int
	states    []qiv
	calls     []qiv
	msgs      []QNXMessage
	runNS     map[int]map[string]int64
	intNS     map[int]int64
	heldNS    map[int]map[string]int64
	busyNS    map[int]int64
	idleNS    map[int]int64

	cpus     []*qcpu
	ready    []*qthread
	sleepers []*qthread
	timers   qheap
	tseq     uint64

	procnto *qproc
	servers []*qproc // procnto first, then the user servers
	apps    []*qproc
	procs   []*qproc
	jobLive bool
	jobs    int
	userID  int
	ticks   int

	slice, tick uint64
	target      int
}

func newQSim(cfg QNXConfig) *qsim {
	s := &qsim{
		cfg:    cfg,
		rng:    rand.New(rand.NewSource(cfg.Seed)),
		cps:    cfg.CyclesPerSec,
		now:    cfg.StartCycles,
		hi:     cfg.StartCycles >> 32,
		keys:   make(map[[2]string]string),
		counts: make(map[string]int),
		runNS:  make(map[int]map[string]int64),
		intNS:  make(map[int]int64),
		heldNS: make(map[int]map[string]int64),
		busyNS: make(map[int]int64),
		idleNS: make(map[int]int64),
		target: cfg.Events,
	}
	n := min(cfg.Events+256, 1<<24)
	s.ev = make([]qnxenc.Event, 0, n)
	s.states = make([]qiv, 0, n*2/5)
	s.calls = make([]qiv, 0, n/6)
	s.slice = s.us(1000)
	s.tick = s.us(2000)
	return s
}

// us converts microseconds to cycles.
func (s *qsim) us(v uint64) uint64 { return v * s.cps / 1_000_000 }

// uspan draws a duration in [lo, hi) microseconds, skewed to short ones.
func (s *qsim) uspan(lo, hi int) uint64 {
	f := s.rng.Float64()
	return max(1, s.us(uint64(lo))+uint64(f*f*float64(s.us(uint64(hi-lo)))))
}

// ---- emitting ----

func (s *qsim) emit(c int, class, name string, fs ...qnxenc.Field) {
	if hi := s.now >> 32; hi != s.hi {
		// the low word wraps: CONTROL TIME, except at the second wrap (and
		// at the only one, which finish removes)
		s.hi = hi
		s.wrapAt = append(s.wrapAt, len(s.ev))
		if len(s.wrapAt) != 2 {
			s.add(c, hi<<32, "CONTROL", "TIME", qf("msb", qhex8(uint32(hi))), qf("lsb(offset)", "0x00000000"))
		}
	}
	s.add(c, s.now, class, name, fs...)
	s.lastNS = QNXCyclesToNS(s.now, s.cps)
	// the kernel takes a little time between two events; now and then none
	if s.rng.Intn(48) != 0 {
		s.now += uint64(150+s.rng.Intn(1450)) * s.cps / 1_000_000_000
	}
}

func (s *qsim) add(c int, cycles uint64, class, name string, fs ...qnxenc.Field) {
	n := len(fs)
	if len(s.arena)+n > cap(s.arena) {
		s.arena = make([]qnxenc.Field, 0, 1<<14)
	}
	a := len(s.arena)
	s.arena = append(s.arena, fs...)
	s.ev = append(s.ev, qnxenc.Event{CPU: c, Cycles: cycles, Class: class, Name: name, Fields: s.arena[a : a+n : a+n]})
	k, ok := s.keys[[2]string{class, name}]
	if !ok {
		k = qnxEventKey(class, name)
		s.keys[[2]string{class, name}] = k
	}
	s.counts[k]++
}

// qnxEventKey is the EventCounts key of an event.
func qnxEventKey(class, name string) string {
	switch {
	case class == "KER_CALL" || class == "KER_EXIT":
		if i := strings.LastIndexByte(name, '/'); i >= 0 {
			name = name[:i]
		}
		return class + "/" + name
	case strings.HasPrefix(class, "INT_"):
		return "INT/" + class
	}
	return class + "/" + name
}

func qf(k, v string) qnxenc.Field { return qnxenc.Field{Key: k, Value: v} }

func qhex8(v uint32) string {
	const digits = "0123456789abcdef"
	var b [10]byte
	b[0], b[1] = '0', 'x'
	for i := 9; i >= 2; i-- {
		b[i] = digits[v&0xf]
		v >>= 4
	}
	return string(b[:])
}

func qitoa(v int) string { return strconv.Itoa(v) }

// qptr prints a pointer as QNX's %p does: lowercase hex without 0x.
func qptr(v uint32) string { return strconv.FormatUint(uint64(v), 16) }

func (s *qsim) thEvent(c int, name string, th *qthread) {
	s.emit(c, "THREAD", name, qf("pid", th.p.pidStr), qf("tid", th.tidStr))
}

// setState emits th's state event on CPU c and keeps the truth.
func (s *qsim) setState(th *qthread, st qState, c int) {
	s.thEvent(c, qStateEvent[st], th)
	seq := len(s.ev) - 1
	th.st = st
	if st == stRunning {
		s.hold(th, c)
	}
	if th.ivOpen && th.ivState == st && th.ivCPU == c {
		return
	}
	s.closeIv(th)
	th.ivOpen, th.ivState, th.ivCPU, th.ivStart, th.ivSeq = true, st, c, s.lastNS, seq
}

func (s *qsim) closeIv(th *qthread) {
	if !th.ivOpen {
		return
	}
	th.ivOpen = false
	s.states = append(s.states, qiv{QNXInterval{th.p.pid, th.tid, qStateName[th.ivState], th.ivStart, s.lastNS, th.ivCPU}, th.ivSeq})
	if th.ivState == stRunning {
		m := s.runNS[th.ivCPU]
		if m == nil {
			m = make(map[string]int64)
			s.runNS[th.ivCPU] = m
		}
		m[th.key] += s.lastNS - th.ivStart
	}
}

func (s *qsim) destroy(th *qthread, c int) {
	s.thEvent(c, "THDESTROY", th)
	s.closeIv(th)
	th.st = stDestroyed
	s.hold(th, -1)
}

// hold makes th the thread of CPU c in the CPU model (c = -1: of none),
// leaving the CPU it was the thread of, if another, with none (truth).
func (s *qsim) hold(th *qthread, c int) {
	if d := th.holdOn; d >= 0 && d != c {
		s.cpus[d].thread = nil
		s.cpuShow(d)
	}
	th.holdOn = c
	if c < 0 {
		return
	}
	if prev := s.cpus[c].thread; prev != nil && prev != th {
		prev.holdOn = -1 // replaced
	}
	s.cpus[c].thread = th
	s.cpuShow(c)
}

// cpuShow accounts what held CPU c until the last event, if it changes
// (truth): the innermost interrupt, else the CPU's thread, else none.
func (s *qsim) cpuShow(c int) {
	cpu := s.cpus[c]
	h, kind := "", holdNone
	if n := len(cpu.ints); n > 0 {
		h, kind = "irq "+qitoa(cpu.ints[n-1].vec), holdBusy
	} else if th := cpu.thread; th != nil {
		h, kind = th.key, holdBusy
		if th.role == roleIdle {
			kind = holdIdle
		}
	}
	if cpu.known && h == cpu.held {
		return
	}
	if cpu.known {
		d := s.lastNS - cpu.heldSince
		m := s.heldNS[c]
		if m == nil {
			m = make(map[string]int64)
			s.heldNS[c] = m
		}
		m[cpu.held] += d
		switch cpu.heldKind {
		case holdBusy:
			s.busyNS[c] += d
		case holdIdle:
			s.idleNS[c] += d
		}
	}
	cpu.known, cpu.held, cpu.heldKind, cpu.heldSince = true, h, kind, s.lastNS
}

func (s *qsim) kcall(c int, th *qthread, k qkc, f1, f2 qnxenc.Field, more ...qnxenc.Field) {
	if len(more) > 0 {
		s.emit(c, "KER_CALL", k.full, f1, f2, more[0])
	} else {
		s.emit(c, "KER_CALL", k.full, f1, f2)
	}
	th.kOpen, th.kName, th.kNum, th.kCPU, th.kStart, th.kSeq = true, k.name, k.num, c, s.lastNS, len(s.ev)-1
}

func (s *qsim) kexit(c int, th *qthread, k qkc, f1, f2 qnxenc.Field, more ...qnxenc.Field) {
	if len(more) > 0 {
		s.emit(c, "KER_EXIT", k.exit, f1, f2, more[0])
	} else {
		s.emit(c, "KER_EXIT", k.exit, f1, f2)
	}
	if th.kOpen && th.kNum == k.num {
		s.calls = append(s.calls, qiv{QNXInterval{th.p.pid, th.tid, th.kName, th.kStart, s.lastNS, th.kCPU}, th.kSeq})
		th.kOpen = false
	}
}

var (
	fEmpty0  = qf("empty", "0x00000000")
	fRetVal0 = qf("ret_val", "0x00000000") // "fHret_val"
	fRetD0   = qf("ret_val", "0")          // "fDret_val"
	fMsgStr  = qnxenc.Field{Key: "msg", Quoted: true}
	fRmsgStr = qnxenc.Field{Key: "rmsg", Quoted: true}
)

// ---- processes and threads ----

func (s *qsim) newProc(pid, ppid int, name string) *qproc {
	p := &qproc{idx: len(s.procs), pid: pid, ppid: ppid, name: name, pidStr: qitoa(pid), nextTid: 1}
	a := uint32(0x08050000 + 0x100*len(s.procs))
	p.mutex.addr, p.sem.addr, p.cv.addr = a+0x10, a+0x20, a+0x30
	s.procs = append(s.procs, p)
	return p
}

func (s *qsim) newThread(p *qproc, tid int, role qRole) *qthread {
	th := &qthread{p: p, tid: tid, tidStr: qitoa(tid), key: p.pidStr + "/" + qitoa(tid), role: role, idleOf: -1, cpu: -1, holdOn: -1, life: -1}
	if tid >= p.nextTid {
		p.nextTid = tid + 1
	}
	p.threads = append(p.threads, th)
	p.live++
	return th
}

func (s *qsim) procCreate(c int, p *qproc) {
	s.emit(c, "PROCESS", "PROCCREATE_NAME", qf("ppid", qitoa(p.ppid)), qf("pid", p.pidStr), qf("name", p.name))
}

func (s *qsim) header() qnxenc.Header {
	return qnxenc.Header{LittleEndian: true, Attrs: [][2]string{
		{"FILE_NAME", "tracegen.kev"},
		{"DATE", "Wed Jun 24 10:52:58 2009"},
		{"VER_MAJOR", "1"},
		{"VER_MINOR", "01"},
		{"LITTLE_ENDIAN", "TRUE"},
		{"ENCODING", "16 byte events"},
		{"BOOT_DATE", "Tue Jun 23 11:47:46 2009"},
		{"CYCLES_PER_SEC", strconv.FormatUint(s.cps, 10)},
		{"CPU_NUM", qitoa(s.cfg.CPUs)},
		{"SYSNAME", "QNX"},
		{"NODENAME", "localhost"},
		{"SYS_RELEASE", "6.4.1"},
		{"SYS_VERSION", "2009/05/20-17:35:56EDT"},
		{"MACHINE", "x86pc"},
		{"SYSPAGE_LEN", "0"},
	}}
}

// ---- the initial state ----

func (s *qsim) setup() {
	cfg := s.cfg
	s.cpus = make([]*qcpu, cfg.CPUs)
	for i := range s.cpus {
		s.cpus[i] = &qcpu{}
	}
	servers := 0
	switch {
	case cfg.Procs >= 4:
		servers = 2
	case cfg.Procs >= 2:
		servers = 1
	}

	s.emit(0, "CONTROL", "BUFFER", qf("sequence", qitoa(1+s.rng.Intn(64))), qf("num_events", "0")) // num_events filled in at the end
	// CONTROL TIME at the buffer's time, as tracelogger writes them
	s.now = s.cfg.StartCycles
	s.emit(0, "CONTROL", "TIME", qf("msb", qhex8(uint32(s.now>>32))), qf("lsb(offset)", qhex8(uint32(s.now))))

	// procnto
	pn := s.newProc(1, 0, "proc/boot/procnto-smp-instr")
	pn.ch = &qchan{chid: 1}
	pn.coid = 0x40000001
	s.procnto = pn
	s.servers = append(s.servers, pn)
	for k := 0; k < cfg.CPUs; k++ {
		th := s.newThread(pn, k+1, roleIdle)
		th.idleOf = k
		s.cpus[k].idle = th
	}
	tid := cfg.CPUs + 1
	for i := 0; i < 3; i++ {
		s.newThread(pn, tid, roleWorker)
		tid += 1 + i
	}
	// user servers
	type pdesc struct {
		pid  int
		name string
	}
	srv := []pdesc{{4099, "proc/boot/pci-bios"}, {159762, "sbin/devc-pty"}}
	for i := 0; i < servers; i++ {
		p := s.newProc(srv[i].pid, 1, srv[i].name)
		p.ch = &qchan{chid: 1}
		p.coid = uint32(3 + i)
		s.newThread(p, 1, roleWorker)
		if i == 1 {
			s.newThread(p, 2, roleSigwait)
		}
		s.servers = append(s.servers, p)
	}
	// clients; app_1 is listed last, its thread 1 runs on CPU 0 (it started the trace)
	napps := cfg.Procs - servers
	for i := napps; i >= 1; i-- {
		p := s.newProc(1511472+(i-1)*4099, 426022, "usr/bin/app_"+qitoa(i))
		nth := 1 + s.rng.Intn(3)
		if i == 1 && nth < 2 {
			nth = 2
		}
		for t := 1; t <= nth; t++ {
			s.newThread(p, t, roleClient)
		}
		s.apps = append(s.apps, p)
	}
	// emit the initial-state section
	for _, p := range s.procs {
		s.procCreate(0, p)
		for _, th := range p.threads {
			s.thEvent(0, "THCREATE", th)
			switch {
			case th.role == roleIdle && th.idleOf != 0:
				s.setState(th, stRunning, th.idleOf)
				s.cpus[th.idleOf].cur = th
				th.cpu, th.last = th.idleOf, th.idleOf
			case th.role == roleIdle:
				s.setState(th, stReady, 0)
			case th.role == roleWorker:
				s.setState(th, stReceive, 0)
				p.ch.recv = append(p.ch.recv, th)
			case th.role == roleSigwait:
				s.setState(th, stSigwaitinfo, 0)
			case p == s.apps[len(s.apps)-1] && th.tid == 1:
				s.setState(th, stRunning, 0)
				s.cpus[0].cur = th
				th.cpu, th.last = 0, 0
			case s.rng.Intn(3) == 0:
				s.setState(th, stReady, 0)
				s.ready = append(s.ready, th)
			default:
				s.setState(th, stNanosleep, 0)
				th.wake = s.now + s.uspan(100, 10000)
				th.resume = resumeTimeout
				s.sleepers = append(s.sleepers, th)
			}
		}
	}
}

// resumeTimeout is how a thread woken from a nanosleep continues.
func resumeTimeout(s *qsim, c int) {
	th := s.cpus[c].cur
	s.kexit(c, th, kcTimeout, qf("prev_timeout_flags", "0x00000000"), qf("otime(sec)", "0"))
}

// ---- scheduling ----

func (s *qsim) push(at uint64, kind uint8, cpu int, gen uint64) {
	s.tseq++
	heap.Push(&s.timers, qtimer{at: at, seq: s.tseq, kind: kind, cpu: cpu, gen: gen})
}

// schedStep schedules the end of the current compute burst (or time slice)
// of the thread running on c.
func (s *qsim) schedStep(c int) {
	cpu := s.cpus[c]
	th := cpu.cur
	th.runFrom = s.now
	cpu.gen++
	s.push(s.now+min(th.rem, s.slice), tStep, c, cpu.gen)
}

// dispatch makes th RUNNING on c (whose previous thread has left RUNNING).
func (s *qsim) dispatch(c int, th *qthread) {
	cpu := s.cpus[c]
	cpu.gen++
	cpu.cur = th
	th.cpu, th.last = c, c
	s.setState(th, stRunning, c)
	if th.role == roleIdle {
		return
	}
	if r := th.resume; r != nil {
		th.resume = nil
		r(s, c)
	}
	if th.rem == 0 && th.next == qaNone {
		s.pickNext(th)
	}
	s.schedStep(c)
}

// resched runs the next thread on c: the head of the ready queue, else c's
// idle thread.
func (s *qsim) resched(c int) {
	s.cpus[c].cur = nil
	if len(s.ready) > 0 {
		th := s.ready[0]
		s.ready[0] = nil
		s.ready = s.ready[1:]
		s.dispatch(c, th)
		return
	}
	s.dispatch(c, s.cpus[c].idle)
}

// block puts the running thread of c into state st and runs another.
func (s *qsim) block(c int, st qState) {
	th := s.cpus[c].cur
	s.setState(th, st, c)
	s.resched(c)
}

// makeReady makes the blocked thread th READY (event on CPU c). With
// handoff it goes to the head of the queue for c to run next (c's thread is
// about to block); otherwise it runs at once on an idle CPU, preferring the
// one it last ran on, or waits at the tail of the queue.
func (s *qsim) makeReady(th *qthread, c int, handoff bool, resume func(*qsim, int)) {
	th.resume = resume
	s.setState(th, stReady, c)
	if th.syncKey != "" {
		th.syncWoken = s.lastNS
	}
	if handoff {
		s.ready = append([]*qthread{th}, s.ready...)
		return
	}
	d := -1
	if th.last >= 0 && th.last < len(s.cpus) && s.cpus[th.last].cur == s.cpus[th.last].idle {
		d = th.last
	} else {
		for i, cpu := range s.cpus {
			if cpu.cur == cpu.idle {
				d = i
				break
			}
		}
	}
	if d < 0 {
		s.ready = append(s.ready, th)
		return
	}
	idle := s.cpus[d].cur
	s.setState(idle, stReady, d)
	s.dispatch(d, th)
}

// ---- the main loop ----

func (s *qsim) run() {
	s.setup()
	// app_1's thread 1 returns from the TraceEvent() that started the trace
	c0 := s.cpus[0].cur
	s.kexit(0, c0, kcTraceEvent, fRetVal0, fEmpty0)
	s.user(0)
	s.pickNext(c0)
	s.schedStep(0)
	for c := 1; c < len(s.cpus) && len(s.ready) > 0; c++ {
		th := s.ready[0]
		s.ready = s.ready[1:]
		s.setState(s.cpus[c].cur, stReady, c)
		s.dispatch(c, th)
	}
	s.push(s.now+s.tick/2, tTick, 0, 0)
	for c := range s.cpus {
		s.push(s.now+s.uspan(100, 8000), tDev, c, 0)
	}
	for len(s.ev) < s.target || len(s.ev) == s.target && len(s.wrapAt) == 1 {
		t := heap.Pop(&s.timers).(qtimer)
		if t.at > s.now {
			s.now = t.at
		}
		switch t.kind {
		case tStep:
			if t.gen == s.cpus[t.cpu].gen {
				s.step(t.cpu)
			}
		case tTick:
			s.clockTick()
			s.push(t.at+s.tick, tTick, 0, 0)
		case tDev:
			s.devInt(t.cpu)
			s.push(s.now+s.uspan(300, 12000), tDev, t.cpu, 0)
		}
	}
}

func (s *qsim) step(c int) {
	cpu := s.cpus[c]
	th := cpu.cur
	if el := s.now - th.runFrom; el >= th.rem {
		th.rem = 0
	} else {
		th.rem -= el
	}
	if th.rem > 0 { // time slice used up
		if len(s.ready) > 0 {
			th.resume = nil
			s.setState(th, stReady, c)
			s.ready = append(s.ready, th)
			s.resched(c)
			return
		}
		s.schedStep(c)
		return
	}
	a := th.next
	th.next = qaNone
	s.act(c, th, a)
}

// pickNext chooses the next compute burst and action of a thread.
func (s *qsim) pickNext(th *qthread) {
	p := th.p
	th.rem = s.uspan(20, 1500)
	if th.life == 0 {
		if p.job {
			th.next = qaExitProc
		} else {
			th.next = qaExitThread
		}
		return
	}
	if th.life > 0 {
		th.life--
	}
	multi := p.live >= 2
	r := s.rng.Intn(1000)
	if p.job {
		switch {
		case r < 500:
			th.next, th.target = qaSend, s.servers[len(s.servers)-1]
		case r < 800:
			th.next = qaSleep
		default:
			th.next = qaNone
		}
		return
	}
	switch {
	case r < 300:
		th.next, th.target = qaSend, s.pickServer()
	case r < 480:
		th.next = qaSleep
	case r < 560:
		if multi {
			th.next = qaLock
		}
	case r < 610:
		if multi && th.tid != 1 {
			th.next = qaSemWait
		}
	case r < 660:
		if multi {
			th.next = qaSemPost
		}
	case r < 700:
		if multi && th.tid != 1 {
			th.next = qaCvWait
		}
	case r < 750:
		if multi {
			th.next = qaCvSignal
		}
	case r < 810:
		th.next, th.target = qaPulse, s.pickServer()
	case r < 850:
		th.next, th.target = qaSrvInfo, s.pickServer()
	case r < 870:
		if th.tid == 1 && p.live < 4 {
			th.next = qaCreate
		}
	case r < 885:
		if th.tid == 1 && p == s.apps[len(s.apps)-1] && !s.jobLive {
			th.next, th.target = qaSpawn, s.procnto
		}
	case r < 886:
		th.next = qaUser
	}
}

func (s *qsim) pickServer() *qproc {
	if len(s.servers) == 1 || s.rng.Intn(3) == 0 {
		return s.procnto
	}
	return s.servers[1+s.rng.Intn(len(s.servers)-1)]
}

// cont lets the running thread of c go on with its next burst.
func (s *qsim) cont(c int, th *qthread) {
	if th.rem == 0 && th.next == qaNone {
		s.pickNext(th)
	}
	s.schedStep(c)
}

func (s *qsim) rcvid(client *qthread, srv *qproc) uint32 {
	return uint32(client.tid-1)<<16 | s.scoid(client.p, srv)
}

func (s *qsim) scoid(client, srv *qproc) uint32 {
	return uint32(0x40 + 8*client.idx + srv.idx)
}

// sent records a message or pulse sent to srv by the last event (truth).
func (s *qsim) sent(client string, srv *qproc, id uint32, oneWay bool) int {
	s.msgs = append(s.msgs, QNXMessage{Client: client, Server: "pid " + srv.pidStr, ID: id, OneWay: oneWay, SendNS: s.lastNS, ReceiveNS: -1, ReplyNS: -1})
	return len(s.msgs) - 1
}

func (s *qsim) act(c int, th *qthread, a qAct) {
	p := th.p
	switch a {
	case qaNone:
	case qaSend, qaSpawn:
		srv := th.target
		if s.rng.Intn(3) == 0 {
			s.kcall(c, th, kcTimeout, qf("timeout_flags", "0x00000050"), qf("ntime(sec)", "30"))
			s.kexit(c, th, kcTimeout, qf("prev_timeout_flags", "0x00000000"), qf("otime(sec)", "0"))
		}
		kind := itMsg
		if a == qaSpawn {
			kind = itSpawn
			s.jobLive = true
		}
		it := qItem{kind: kind, client: th, rcvid: s.rcvid(th, srv), scoid: s.scoid(p, srv)}
		s.kcall(c, th, kcSendv, qf("coid", qhex8(srv.coid)), fMsgStr, qf("", "("+qhex8(0x00040100|uint32(s.rng.Intn(64)))+")"))
		s.emit(c, "COMM", "SND_MESSAGE", qf("rcvid", qhex8(it.rcvid)), qf("pid", srv.pidStr))
		it.msg = s.sent(th.key, srv, it.rcvid, false)
		th.resume = resumeSendv
		if ch := srv.ch; len(ch.recv) > 0 {
			w := ch.recv[0]
			ch.recv = ch.recv[1:]
			s.setState(th, stReply, c)
			w.item = it
			s.makeReady(w, c, true, resumeReceive)
			s.resched(c)
			return
		}
		srv.ch.queue = append(srv.ch.queue, it)
		s.block(c, stSend)
		return
	case qaSleep:
		s.kcall(c, th, kcTimeout, qf("timeout_flags", "0x00001000"), qf("ntime(sec)", "0"))
		th.wake = s.now + s.uspan(500, 20000)
		th.resume = resumeTimeout
		s.sleepers = append(s.sleepers, th)
		s.block(c, stNanosleep)
		return
	case qaLock:
		m := &p.mutex
		if m.owner == nil {
			m.owner, th.holds = th, true
			th.rem, th.next = s.uspan(100, 2000), qaUnlock
			break
		}
		s.kcall(c, th, kcMutexLock, qf("sync_p", qptr(m.addr)), qf("owner", qitoa(int(qowner(m.owner)))))
		s.syncWait(th, "mutex", m.addr)
		m.waiters = append(m.waiters, th)
		s.block(c, stMutex)
		return
	case qaUnlock:
		m := &p.mutex
		m.owner, th.holds = nil, false
		if len(m.waiters) > 0 {
			s.kcall(c, th, kcMutexUnlock, qf("sync_p", qptr(m.addr)), qf("owner", qitoa(int(qowner(th)))))
			w := m.waiters[0]
			m.waiters = m.waiters[1:]
			m.owner, w.holds = w, true
			w.rem, w.next = s.uspan(100, 2000), qaUnlock
			s.makeReady(w, c, false, resumeMutex)
			s.kexit(c, th, kcMutexUnlock, fRetD0, fEmpty0)
		}
	case qaSemWait:
		m := &p.sem
		if m.count == 0 && !s.canWait(th) {
			break
		}
		s.kcall(c, th, kcSemWait, qf("sync_p", qptr(m.addr)), qf("count", qitoa(m.count)))
		if m.count > 0 {
			m.count--
			s.kexit(c, th, kcSemWait, fRetD0, fEmpty0)
			break
		}
		s.syncWait(th, "semaphore", m.addr)
		m.waiters = append(m.waiters, th)
		s.block(c, stSem)
		return
	case qaSemPost:
		m := &p.sem
		s.kcall(c, th, kcSemPost, qf("sync_p", qptr(m.addr)), qf("count", qitoa(m.count)))
		if len(m.waiters) > 0 {
			w := m.waiters[0]
			m.waiters = m.waiters[1:]
			s.makeReady(w, c, false, resumeSem)
		} else if m.count < 2 {
			m.count++
		}
		s.kexit(c, th, kcSemPost, fRetVal0, fEmpty0)
	case qaCvWait:
		if !s.canWait(th) {
			break
		}
		m := &p.cv
		s.kcall(c, th, kcCvWait, qf("sync_p", qptr(m.addr)), qf("mutex_p", qptr(p.mutex.addr)))
		s.syncWait(th, "condvar", m.addr)
		m.waiters = append(m.waiters, th)
		s.block(c, stCondvar)
		return
	case qaCvSignal:
		m := &p.cv
		s.kcall(c, th, kcCvSignal, qf("sync_p", qptr(m.addr)), qf("all", "0"))
		if len(m.waiters) > 0 {
			w := m.waiters[0]
			m.waiters = m.waiters[1:]
			s.makeReady(w, c, false, resumeCv)
		}
		s.kexit(c, th, kcCvSignal, fRetD0, fEmpty0)
	case qaPulse:
		srv := th.target
		s.kcall(c, th, kcSendPulse, qf("coid", qhex8(srv.coid)), qf("code", qhex8(uint32(1+s.rng.Intn(8)))))
		sc := s.scoid(p, srv)
		s.emit(c, "COMM", "SND_PULSE", qf("scoid", qhex8(sc)), qf("pid", srv.pidStr))
		s.deliver(c, srv, qItem{kind: itPulse, scoid: sc, msg: s.sent(th.key, srv, sc, true)})
		s.kexit(c, th, kcSendPulse, qf("status", "0"), fEmpty0)
	case qaSrvInfo:
		s.kcall(c, th, kcSrvInfo, qf("pid", "0"), qf("coid", qhex8(th.target.coid)))
		s.kexit(c, th, kcSrvInfo, qf("coid", qhex8(th.target.coid)), qf("info->nd", "0"))
	case qaCreate:
		nt := s.newThread(p, p.nextTid, roleClient)
		nt.life = 2 + s.rng.Intn(8)
		s.kcall(c, th, kcThCreate, qf("func_p", qptr(0xf0023170+uint32(s.rng.Intn(16))*0x40)), qf("arg_p", qptr(0xeff6e000-uint32(nt.tid)*0x1000)))
		s.thEvent(c, "THCREATE", nt)
		s.makeReady(nt, c, false, nil)
		s.kexit(c, th, kcThCreate, qf("thread_id", qhex8(uint32(nt.tid))), qf("owner", "0x00000000"))
	case qaUser:
		s.user(c)
	case qaExitThread:
		s.kcall(c, th, kcThDestroy, qf("tid", "-1"), qf("status_p", "0"))
		s.setState(th, stDead, c)
		s.destroy(th, c)
		p.live--
		s.resched(c)
		return
	case qaExitProc:
		s.kcall(c, th, kcThDestroyAll, fEmpty0, fEmpty0)
		s.destroy(th, c)
		s.setState(th, stDead, c) // traceprinter's order for the last thread of a process
		p.live--
		s.resched(c)
		s.emit(c, "COMM", "SND_PULSE_EXE", qf("scoid", qhex8(0x40000002)), qf("pid", "1"))
		s.deliver(c, s.procnto, qItem{kind: itDeath, scoid: 0x40000002, dead: p, msg: s.sent("", s.procnto, 0x40000002, true)})
		return
	case qaReply:
		it := th.item
		cl := it.client
		if it.kind == itSpawn {
			s.spawnJob(c, cl.p)
		}
		s.kcall(c, th, kcReplyv, qf("rcvid", qhex8(it.rcvid)), qf("status", "0x00000000"))
		s.emit(c, "COMM", "REPLY_MESSAGE", qf("tid", cl.tidStr), qf("pid", cl.p.pidStr))
		s.msgs[it.msg].ReplyNS = s.lastNS
		s.makeReady(cl, c, false, cl.resume)
		s.kexit(c, th, kcReplyv, fRetD0, fEmpty0)
		th.rem, th.next = s.uspan(5, 40), qaReceive
	case qaPulseDone:
		if th.item.kind == itDeath {
			d := th.item.dead
			s.emit(c, "PROCESS", "PROCDESTROY", qf("ppid", qitoa(d.ppid)), qf("pid", d.pidStr))
			d.dead = true
			s.jobLive = false
		}
		th.rem, th.next = s.uspan(5, 40), qaReceive
	case qaReceive:
		ch := p.ch
		s.kcall(c, th, kcReceivev, qf("chid", qhex8(uint32(ch.chid))), qf("rparts", "1"))
		if len(ch.queue) > 0 {
			it := ch.queue[0]
			ch.queue = ch.queue[1:]
			if it.kind == itMsg || it.kind == itSpawn {
				s.setState(it.client, stReply, c)
			}
			th.item = it
			resumeReceive(s, c)
			break
		}
		ch.recv = append(ch.recv, th)
		s.block(c, stReceive)
		return
	}
	s.cont(c, th)
}

// canWait tells whether th may block on its process's semaphore or
// condition variable: thread 1 never does, so that somebody always posts.
func (s *qsim) canWait(th *qthread) bool { return th.tid != 1 && th.life != 0 }

func qowner(th *qthread) uint32 { return (uint32(th.p.pid)<<16 | uint32(th.tid)) & 0x7fffffff }

func resumeSendv(s *qsim, c int) {
	s.kexit(c, s.cpus[c].cur, kcSendv, qf("status", "0"), fRmsgStr, qf("", "(0x00000000)"))
}

func resumeMutex(s *qsim, c int) {
	s.kexit(c, s.cpus[c].cur, kcMutexLock, fRetD0, fEmpty0)
	s.syncDone(c)
}
func resumeSem(s *qsim, c int) { s.kexit(c, s.cpus[c].cur, kcSemWait, fRetD0, fEmpty0); s.syncDone(c) }
func resumeCv(s *qsim, c int)  { s.kexit(c, s.cpus[c].cur, kcCvWait, fRetD0, fEmpty0); s.syncDone(c) }

// syncWait starts the truth of th's wait for its process's sync object
// at addr, at the KER_CALL just emitted (the call blocks).
func (s *qsim) syncWait(th *qthread, kind string, addr uint32) {
	th.syncKey = kind + " " + qptr(addr) + " pid " + th.p.pidStr + "|" + th.key
	th.syncStart, th.syncWoken = s.lastNS, -1
}

// syncDone counts the wait of CPU c's thread, whose call just returned.
func (s *qsim) syncDone(c int) {
	th := s.cpus[c].cur
	if th.syncKey == "" {
		return
	}
	if s.syncWaits == nil {
		s.syncWaits = make(map[string]Sum)
	}
	w := s.syncWaits[th.syncKey]
	w.add(th.syncWoken - th.syncStart)
	s.syncWaits[th.syncKey] = w
	th.syncKey = ""
}

// resumeReceive: the worker running on c got th.item from MsgReceivev.
func resumeReceive(s *qsim, c int) {
	th := s.cpus[c].cur
	it := th.item
	switch it.kind {
	case itMsg, itSpawn:
		s.emit(c, "COMM", "REC_MESSAGE", qf("rcvid", qhex8(it.rcvid)), qf("pid", th.p.pidStr))
		s.received(it, th)
		s.kexit(c, th, kcReceivev, qf("rcvid", qhex8(it.rcvid)), fRmsgStr, qf("", "(0x00000000)"))
		th.rem, th.next = s.uspan(10, 400), qaReply
	default:
		s.emit(c, "COMM", "REC_PULSE", qf("scoid", qhex8(it.scoid)), qf("pid", th.p.pidStr))
		s.received(it, th)
		s.kexit(c, th, kcReceivev, qf("rcvid", "0x00000000"), fRmsgStr, qf("", "(0x00000000)"))
		th.rem, th.next = s.uspan(10, 200), qaPulseDone
	}
}

// received records that th received it by the last event (truth).
func (s *qsim) received(it qItem, th *qthread) {
	m := &s.msgs[it.msg]
	m.ReceiveNS, m.Server = s.lastNS, th.key
}

// deliver queues a pulse on a server's channel, waking a receiving thread.
func (s *qsim) deliver(c int, srv *qproc, it qItem) {
	ch := srv.ch
	if len(ch.recv) > 0 {
		w := ch.recv[0]
		ch.recv = ch.recv[1:]
		w.item = it
		s.makeReady(w, c, false, resumeReceive)
		return
	}
	ch.queue = append(ch.queue, it)
}

// spawnJob: procnto (running on c) creates a short-lived job process.
func (s *qsim) spawnJob(c int, parent *qproc) {
	s.jobs++
	names := []string{"bin/ls", "bin/cat", "usr/bin/date", "bin/sleep"}
	p := s.newProc(2007100+4096*s.jobs+s.rng.Intn(64), parent.pid, names[s.jobs%len(names)])
	p.job = true
	s.procCreate(c, p)
	th := s.newThread(p, 1, roleClient)
	th.life = 1 + s.rng.Intn(4)
	s.thEvent(c, "THCREATE", th)
	s.makeReady(th, c, false, nil)
}

// user logs a user string event (TraceEvent(_NTO_TRACE_INSERTUSRSTREVENT)),
// as traceprinter prints it: USREVENT:EVENT:<code> STR:"...".
func (s *qsim) user(c int) {
	s.userID++
	code := 1
	if s.userID > 1 {
		code = 2
	}
	s.emit(c, "USREVENT", "EVENT:"+qitoa(code), qnxenc.Field{Key: "STR", Value: "hello world " + qitoa(s.userID), Quoted: true})
}

// ---- interrupts ----

func (s *qsim) intEnter(c, vec, pid int) {
	name := qhex8(uint32(vec))
	pos := "(" + qitoa(vec) + ")"
	s.emit(c, "INT_ENTR", name, qf("", pos), qf("IP", qhex8(0xf0084000|uint32(s.rng.Intn(0x1000)))))
	s.cpus[c].ints = append(s.cpus[c].ints, qint{vec, s.lastNS})
	s.cpuShow(c)
	s.emit(c, "INT_HANDLER_ENTR", name, qf("", pos), qf("PID", qitoa(pid)), qf("IP", qhex8(0x080b7334+uint32(vec)*0x100)), qf("AREA", qhex8(0x0812a060+uint32(vec)*0x40)))
}

func (s *qsim) intExit(c, vec int) {
	name := qhex8(uint32(vec))
	pos := "(" + qitoa(vec) + ")"
	s.emit(c, "INT_HANDLER_EXIT", name, qf("", pos), qf("SIGEVENT", "NONE"))
	inkernel := "0x00000000"
	if s.rng.Intn(2) == 0 {
		inkernel = "0x00000f01"
	}
	s.emit(c, "INT_EXIT", name, qf("", pos), qf("inkernel", inkernel))
	cpu := s.cpus[c]
	top := cpu.ints[len(cpu.ints)-1]
	cpu.ints = cpu.ints[:len(cpu.ints)-1]
	s.intNS[top.vec] += s.lastNS - top.start
	s.cpuShow(c)
}

func (s *qsim) handlerPid(i int) int {
	if i < len(s.servers) {
		return s.servers[i].pid
	}
	return 1
}

func (s *qsim) clockTick() {
	s.ticks++
	name := qhex8(0)
	s.intEnter(0, 0, 1)
	if s.rng.Intn(4) == 0 { // a second handler attached to the clock
		s.emit(0, "INT_HANDLER_EXIT", name, qf("", "(0)"), qf("SIGEVENT", "NONE"))
		s.emit(0, "INT_HANDLER_ENTR", name, qf("", "(0)"), qf("PID", qitoa(s.handlerPid(2))), qf("IP", "0xf0056570"), qf("AREA", "0x00000000"))
	}
	s.intExit(0, 0)
	// timers: wake the expired sleepers
	kept := s.sleepers[:0]
	var woken []*qthread
	for _, th := range s.sleepers {
		if th.wake <= s.now {
			woken = append(woken, th)
		} else {
			kept = append(kept, th)
		}
	}
	for i := len(kept); i < len(s.sleepers); i++ {
		s.sleepers[i] = nil
	}
	s.sleepers = kept
	for _, th := range woken {
		s.makeReady(th, 0, false, resumeTimeout)
	}
	if len(s.ready) > 0 && s.rng.Intn(8) == 0 {
		// the scheduler adjusts the priority of the thread at the head of
		// the ready queue: one more THREADY, which continues its READY
		// interval when that was opened on CPU 0, else opens one on CPU 0
		s.setState(s.ready[0], stReady, 0)
	}
	if s.ticks%50 == 0 { // a periodic timer pulse to procnto
		s.emit(0, "COMM", "SND_PULSE_EXE", qf("scoid", qhex8(0x40000002)), qf("pid", "1"))
		s.deliver(0, s.procnto, qItem{kind: itPulse, scoid: 0x40000002, msg: s.sent("", s.procnto, 0x40000002, true)})
	}
}

func (s *qsim) devInt(c int) {
	vecs := [...]int{4, 9, 11}
	i := s.rng.Intn(len(vecs))
	vec := vecs[i]
	s.intEnter(c, vec, s.handlerPid(2-i))
	if vec == 4 && s.rng.Intn(4) == 0 {
		s.intEnter(c, 9, s.handlerPid(1))
		s.intExit(c, 9)
	}
	s.intExit(c, vec)
}

// ---- the end ----

// finish inserts the CONTROL TIME events of the wraps, and returns the
// events and the truth.
func (s *qsim) finish() ([]qnxenc.Event, QNXTruth) {
	ev := s.ev
	if len(s.wrapAt) == 1 { // the only wrap goes without CONTROL TIME
		i := s.wrapAt[0]
		ev = append(ev[:i], ev[i+1:]...)
		s.counts["CONTROL/TIME"]--
	}
	ev[0].Fields = []qnxenc.Field{ev[0].Fields[0], qf("num_events", qitoa(len(ev)))}

	bySeq := func(a, b qiv) int { return a.seq - b.seq } // seqs are unique
	slices.SortFunc(s.states, bySeq)
	slices.SortFunc(s.calls, bySeq)
	tr := QNXTruth{
		Events:        len(ev),
		EventCounts:   s.counts,
		ThreadStates:  make([]QNXInterval, len(s.states)),
		KernelCalls:   make([]QNXInterval, len(s.calls)),
		RunningPerCPU: s.runNS,
		InterruptNS:   s.intNS,
		CPUHolders:    s.heldNS,
		CPUBusyNS:     s.busyNS,
		CPUIdleNS:     s.idleNS,
		CPUOpen:       make(map[int]QNXHold),
		FirstNS:       QNXCyclesToNS(ev[0].Cycles, s.cps),
		LastNS:        QNXCyclesToNS(ev[len(ev)-1].Cycles, s.cps),
		Wraps:         len(s.wrapAt),
		Messages:      s.msgs,
	}
	for i, v := range s.states {
		tr.ThreadStates[i] = v.iv
	}
	var open []qiv
	for _, p := range s.procs {
		for _, th := range p.threads {
			if th.ivOpen {
				open = append(open, qiv{QNXInterval{th.p.pid, th.tid, qStateName[th.ivState], th.ivStart, tr.LastNS, th.ivCPU}, th.ivSeq})
			}
		}
	}
	slices.SortFunc(open, bySeq)
	for _, v := range open {
		tr.ThreadOpen = append(tr.ThreadOpen, v.iv)
	}
	for c, cpu := range s.cpus {
		if cpu.known {
			tr.CPUOpen[c] = QNXHold{cpu.held, cpu.heldSince}
		}
		tr.IdleThreads = append(tr.IdleThreads, cpu.idle.key)
	}
	for i, v := range s.calls {
		tr.KernelCalls[i] = v.iv
	}
	tr.SyncWaits = s.syncWaits
	for _, p := range s.procs {
		for _, th := range p.threads {
			if th.syncKey != "" {
				tr.SyncOpen++
			}
		}
	}
	return ev, tr
}
