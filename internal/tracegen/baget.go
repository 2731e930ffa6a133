package tracegen

// GenerateBaget: a deterministic small-RTOS simulator that writes a binary
// log in the Baget-model container of docs/baget-format.md, laid out by the
// bundled minirtos description (ingest/baget/examples/minirtos.xml) adjusted
// to a chosen C ABI, and returns the ground truth of what it simulated.
//
// # Simulated system
//
//   - Processes pid 1..P (P = 1 + (Threads-1)/4, at most 4), threads
//     thr0..thr{Threads-1} (thread i in process 1 + i%P, oid a pointer-like
//     0x00100000 + 0x100*i), semaphores sem0, sem1 (initial 0 and 1),
//     mutexes mtx0, mtx1, message queues mq0, mq1, interrupts 3, 5, 11.
//   - Setup at the start of the data stream, on CPU 0: PROC_CREATE of every
//     process, THREAD_CREATE of every thread (-> thrReady), SEM_CREATE,
//     MUTEX_CREATE, MQ_CREATE; then CPU k gets THREAD_SWITCH prev=0 next=thr k
//     (Threads >= CPUs is required). The same creation records, byte for
//     byte, fill the service blocks.
//   - Then steps on a random CPU (one global clock; every record is 200 to
//     3199 ns after the previous one, so times strictly increase):
//     interrupts (INTR_ENTER, possibly SEM_GIVE / THREAD_WAKEUP inside the
//     handler, INTR_EXIT; never nested, also on idle CPUs), preemption
//     (THREAD_SWITCH prev=running next=first ready), sleeping (THREAD_BLOCK
//     reason 1, then THREAD_SWITCH or CPU_IDLE) and timer wake-ups
//     (THREAD_WAKEUP), SEM_TAKE (blocking with THREAD_BLOCK reason 2 when the
//     count is 0) and SEM_GIVE (handing the unit to the first waiter with
//     THREAD_WAKEUP), MUTEX_LOCK / MUTEX_UNLOCK (a contended lock blocks with
//     reason 3; an unlock with waiters logs MUTEX_LOCK of the new owner and
//     its THREAD_WAKEUP; a holder never blocks, so no deadlock), MQ_SEND /
//     MQ_RECEIVE (msg_kind cycles through the four union members),
//     USER_EVENT (objects probe0..probe2, a text payload in the flexible
//     array) and, rarely, the info record FLUSH. A thread made ready while a
//     CPU is idle (and not in an interrupt) is dispatched there at once
//     (THREAD_SWITCH prev=0).
//
// # Layout
//
// Every record is the C struct of docs 1.3, its fields written at the
// offsets of the field tree baget.Parse computes for the description;
// size_record = sizeof, plus the payload for USER_EVENT (whose data starts
// at the flexible member's offset, C style). Each block starts with a BLOCK
// record; a record that does not fit starts the next block, and the tail is
// one FILLER record (size_record = the tail) or, when shorter than a
// descriptor, zeros. The last data block is filled the same way.
//
// # Truth
//
// The simulator records, per record, the state transitions it made (thread
// and CPU), in the order of the description's rules, with each rule's
// from-condition. The truth replays those transitions over the records that
// remain in the log, as an observer that starts with every thread and CPU
// in an unknown state: a transition counts when its rule's condition admits
// the observer's state (unknown included), which is exactly when a reader
// that applies the description's rules learns it. In an unwrapped log every
// transition counts (checked: GenerateBaget fails otherwise). An interval
// is complete when both its start and its end are transitions that count.
//
// The observer holds each CPU as docs/baget-format.md 2.7 says (the CPU
// model of docs/semantics.md): a base thread (cpuThr runs it, replacing
// the one before; a thread that runs on one CPU leaves the CPU it ran on
// with none; cpuIdle runs none) under a stack of interrupts (cpuIntr
// enters one, return leaves the innermost); what holds the CPU is the
// innermost interrupt, else the thread, else nothing (cpuIdle). An
// interval is the time one holder holds the CPU: a transition that leaves
// the same holder continues it. The from= conditions test cpuIntr while an
// interrupt is handled, else cpuThr while a thread runs, else cpuIdle, or
// unknown. A return to the state before an interrupt entered while the CPU
// was unknown leaves it unknown. The context of an event (for eco-triples)
// is what holds the event's CPU just before it: the interrupt, the thread,
// or none (nothing, unknown).

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"sort"
	"strings"

	"github.com/traceduck/traceduck/ingest/baget"
)

// BagetConfig configures GenerateBaget.
type BagetConfig struct {
	Events     int    // number of event records to simulate (at least; a step may add a few more); > 0
	CPUs       int    // 1..64; default 2
	Threads    int    // >= CPUs; default 2*CPUs+2
	Seed       int64  // seed of math/rand; identical configs give identical logs
	ABI        string // "le32" (i386: little endian, 4-byte pointers, long long and double aligned to 4) or "be64" (ppc64: big endian, 8-byte pointers); default "be64"
	BlockSize  int    // bytes per block: a multiple of 8, 256..16 MiB; default 1024
	RingBlocks int    // 0: no wrap; else keep only the last RingBlocks data blocks (and set the wrapped flag when some were dropped)
	// GapNS spreads the records out in time: each comes 200..3200 ns
	// plus 0..GapNS after the previous one (a long trace of few records:
	// clock drift needs seconds to show against transit times). In a
	// system, the machine idles 0..GapNS before each step, and a message
	// that arrives meanwhile is received at once.
	GapNS int64
	// Clock is the machine's clock: the times its log gives are
	// Clock.Local(true time); the zero value reads true time.
	Clock BagetClock
}

// BagetEpochNS is the true time at which every simulated Baget machine
// starts (1000 s), the time a BagetClock's drift counts from.
const BagetEpochNS = 1000 * 1e9

// BagetClock is a machine's clock: at true time T it reads
// T + OffsetNS + round(DriftPPM * (T - BagetEpochNS) / 1e6): it is
// OffsetNS ahead at the start and gains DriftPPM microseconds per second
// (negative: behind, loses). |DriftPPM| <= 1000.
type BagetClock struct {
	OffsetNS int64
	DriftPPM float64
}

// Local is what the clock reads at true time t.
func (c BagetClock) Local(t int64) int64 {
	return t + c.OffsetNS + int64(math.Round(float64(t-BagetEpochNS)*c.DriftPPM/1e6))
}

// True is the true time at which the clock reads l (Local's inverse, to
// the nanosecond).
func (c BagetClock) True(l int64) int64 {
	return BagetEpochNS + int64(math.Round(float64(l-c.OffsetNS-BagetEpochNS)/(1+c.DriftPPM/1e6)))
}

// BagetObj identifies an object as traceduck does: (kind, pid, oid). OID is
// the numeric id (a thread's pointer, a semaphore's id, a process's pid, an
// interrupt number); Text the id of a user object (USER_EVENT's object).
// The zero value is "no object".
type BagetObj struct {
	Kind string // thread, process, semaphore, mutex, mqueue, interrupt, user
	Pid  int64
	OID  uint64
	Text string
}

// BagetEco is an eco-triple: (event type, context, main object).
type BagetEco struct {
	Event         string
	Context, Main BagetObj
}

// BagetThreadInterval is a complete interval of a thread in one atomic
// state (thrRun, thrReady, thrNotReady, thrInterrupted).
type BagetThreadInterval struct {
	Thread         BagetObj
	State          string
	StartNS, EndNS int64
}

// BagetCPUInterval is a complete interval of a CPU held by one holder: a
// thread (cpuThr of that thread), an interrupt (cpuIntr of it) or nothing
// (cpuIdle). State, Process and Group are its states at levels 0, 1 and 2
// as docs/baget-format.md 2.7 names them: the holder's name (a thread's
// from its creation record, an interrupt's "interrupt N") or cpuIdle; the
// thread's process's name, the interrupt's name or cpuIdle; cpuThreads,
// cpuInterrupts or cpuIdle. Level 3 is busy, except for cpuIdle.
type BagetCPUInterval struct {
	CPU            int
	State          string
	Obj            BagetObj // the holder; zero for cpuIdle
	Process        string
	Group          string
	StartNS, EndNS int64
}

// Busy reports whether the CPU was busy in the interval.
func (iv BagetCPUInterval) Busy() bool { return iv.Obj != (BagetObj{}) }

// BagetSpan is a hold or a wait of a resource (a semaphore or mutex) by a
// thread, from its start record to its end record.
type BagetSpan struct {
	Resource     BagetObj
	ResourceName string // as its creation record names it (sem0, mtx1)
	Thread       BagetObj
	StartNS      int64
	EndNS        int64
}

// BagetQueueMsg is a message sent to a queue by a thread and received from
// it by a thread (zero: the log does not tell who: the CPU state was not
// known yet in a wrapped log).
type BagetQueueMsg struct {
	Queue            BagetObj
	QueueName        string
	ID               int64 // msg_no
	Sender, Receiver BagetObj
	SendNS, RecvNS   int64
}

// BagetResState is an interval of a mutex in one state (docs/baget-format.md
// 2.8): free or held, with " (N waiting)" while N threads wait, and the
// thread that holds it.
type BagetResState struct {
	Resource       BagetObj
	Name           string
	State          string
	Holder         BagetObj // zero when free
	StartNS, EndNS int64
}

// BagetTruth is what the simulator knows about the log, for what remains in
// it (see the package comment of GenerateBaget for the rules).
type BagetTruth struct {
	Events        int              // event records (essential) in the data blocks
	EventCounts   map[string]int   // event type name -> records
	Ecos          map[BagetEco]int // eco-triple -> records
	ThreadStates  []BagetThreadInterval
	ThreadOpen    []BagetThreadInterval // the state each thread known at the end is in (truncated), EndNS = LastNS
	CPUStates     []BagetCPUInterval
	CPUKnownNS    map[int]int64      // per CPU: time in complete CPU intervals
	CPUBusyNS     map[int]int64      // per CPU: of it, the time a thread or interrupt held the CPU
	HeldNS        map[BagetObj]int64 // per thread or interrupt: time it held a CPU (complete intervals), on all CPUs
	Records       int                // all records in the data blocks: events, BLOCK, FLUSH, FILLER
	ServiceBlocks int
	DataBlocks    int // data blocks in the log
	FirstBlock    int // number of the first data block = blocks lost
	Wrapped       bool
	FirstNS       int64 // time of the first and last event in the log
	LastNS        int64
	Objects       int // objects registered by the service blocks

	// Holds and waits (of mutexes; semaphores have no owner, so waits
	// only) whose start and end are both in the log, in the order they
	// ended; HoldsOpen and WaitsOpen: those whose start is in the log and
	// that were still open at its end (EndNS = LastNS).
	Holds, Waits, HoldsOpen, WaitsOpen []BagetSpan
	// Messages through the queues whose send and receive are both in the
	// log, in the order received; MsgOpen: sent, not received by the end
	// (RecvNS 0); MsgNoSend: received, whose send is not in the log (a
	// wrapped log; SendNS 0).
	Messages, MsgOpen, MsgNoSend []BagetQueueMsg
	// The mutexes' state intervals, from the first lock or unlock in the
	// log (before it, who holds a mutex is not known): complete ones, and
	// those open at the end (EndNS = LastNS).
	ResStates, ResStatesOpen []BagetResState
}

// GenerateBaget simulates a small RTOS and returns its log, the description
// to read it with (the bundled minirtos example with its <abi> and arch set
// to the chosen ABI) and the ground truth.
func GenerateBaget(cfg BagetConfig) (log []byte, desc []byte, truth BagetTruth, err error) {
	if cfg.Events <= 0 {
		return nil, nil, BagetTruth{}, errors.New("tracegen: baget Events must be > 0")
	}
	cfg = bagetDefaults(cfg)
	if cfg.CPUs < 1 || cfg.CPUs > 64 {
		return nil, nil, BagetTruth{}, fmt.Errorf("tracegen: baget CPUs must be 1..64, got %d", cfg.CPUs)
	}
	if cfg.Threads < cfg.CPUs || cfg.Threads > 4096 {
		return nil, nil, BagetTruth{}, fmt.Errorf("tracegen: baget Threads must be CPUs..4096, got %d", cfg.Threads)
	}
	if cfg.BlockSize%8 != 0 || cfg.BlockSize < 256 || cfg.BlockSize > 16<<20 {
		return nil, nil, BagetTruth{}, fmt.Errorf("tracegen: baget BlockSize must be a multiple of 8 in 256..16 MiB, got %d", cfg.BlockSize)
	}
	if cfg.RingBlocks < 0 {
		return nil, nil, BagetTruth{}, errors.New("tracegen: baget RingBlocks must be >= 0")
	}
	if cfg.GapNS < 0 || cfg.GapNS > 1e12 {
		return nil, nil, BagetTruth{}, fmt.Errorf("tracegen: baget GapNS must be 0..1e12, got %d", cfg.GapNS)
	}
	if c := cfg.Clock; c.DriftPPM < -1000 || c.DriftPPM > 1000 || c.OffsetNS < -900*1e9 || c.OffsetNS > 1e15 {
		return nil, nil, BagetTruth{}, fmt.Errorf("tracegen: baget Clock must have a drift of -1000..1000 ppm and an offset of -900 s..1e15 ns, got %+v", c)
	}
	desc, err = BagetDescription(cfg.ABI)
	if err != nil {
		return nil, nil, BagetTruth{}, err
	}
	d, err := baget.Parse("minirtos-"+cfg.ABI+".xml", desc)
	if err != nil {
		return nil, nil, BagetTruth{}, fmt.Errorf("tracegen: baget description: %w", err)
	}
	s, err := newBSim(cfg, d)
	if err != nil {
		return nil, nil, BagetTruth{}, err
	}
	s.setup()
	for s.events < cfg.Events && s.err == nil {
		s.step()
	}
	if s.err != nil {
		return nil, nil, BagetTruth{}, s.err
	}
	log, truth, err = s.finish()
	if err != nil {
		return nil, nil, BagetTruth{}, err
	}
	return log, desc, truth, nil
}

// bagetABIs are the ABIs GenerateBaget knows: the <abi> element and arch.
var bagetABIs = map[string][2]string{
	"le32": {`<abi endian="little" pointer="4" long_long_align="4" double_align="4"/>`, "i386"},
	"be64": {`<abi endian="big" pointer="8" long_long_align="8" double_align="8"/>`, "ppc64"},
}

// BagetDescription returns the bundled minirtos description adjusted to an
// ABI ("le32" or "be64"): its <abi> element and arch replaced.
func BagetDescription(abi string) ([]byte, error) {
	a, ok := bagetABIs[abi]
	if !ok {
		return nil, fmt.Errorf("tracegen: baget ABI must be le32 or be64, got %q", abi)
	}
	ex, err := baget.ExampleXML("minirtos.xml")
	if err != nil {
		return nil, err
	}
	x := string(ex)
	for _, r := range [][2]string{
		{`<abi endian="big" pointer="4" long_long_align="8" double_align="8"/>`, a[0]},
		{`arch="ppc32"`, `arch="` + a[1] + `"`},
		{"on 32-bit big-endian PowerPC", "adjusted by tracegen to " + a[1]},
	} {
		if !strings.Contains(x, r[0]) {
			return nil, fmt.Errorf("tracegen: baget: the example description has no %s", r[0])
		}
		x = strings.Replace(x, r[0], r[1], 1)
	}
	return []byte(x), nil
}

// Thread and CPU states and conditions, as the description's rules name
// them (ingest/baget/examples/minirtos.xml).
const (
	bRun   = baget.ThrRun
	bReady = baget.ThrReady
	bNotRd = baget.ThrNotReady
	bIntr  = baget.ThrInterrupted
	bUnk   = baget.StateUnknown
)

// btrans is one transition the simulator made, with its rule's condition.
type btrans struct {
	thread  int // thread index; -1: a CPU transition
	context bool
	to      string
	obj     BagetObj // CPU transitions: the thread or interrupt
	from    []string // nil: any
}

type brec struct {
	data   []byte
	ev     *baget.Event
	t      int64
	cpu    int
	main   BagetObj
	trans  []btrans
	create bool
	marks  []bmark
}

// bmark is what a record does to a resource or a queue, as the simulator
// did it: a hold or wait of a thread starts or ends, a message is sent or
// received. ctx: the record names the thread only as its context (the
// thread that runs), so a reader knows it when it knows the CPU's state.
type bmark struct {
	op  int
	obj BagetObj // the resource or queue
	th  int      // the thread
	ctx bool
	no  int64 // a message's msg_no
}

const (
	holdStart = iota
	holdEnd
	waitStart
	waitEnd
	msgSend
	msgRecv
)

type bthr struct {
	obj   BagetObj
	name  string
	prio  int
	st    string
	cpu   int // running on; -1
	holds int // mutex index; -1
}

type bcpu struct {
	cur int // running thread; -1: idle
	irq int // interrupt being handled; -1
}

type bsync struct {
	obj     BagetObj
	name    string
	count   int // semaphore count; message queue length
	max     int
	owner   int // mutex owner; -1
	waiters []int
	queued  []int64 // a queue's messages, by msg_no, oldest first
}

type bsim struct {
	cfg    BagetConfig
	d      *baget.Description
	paths  map[*baget.Event]map[string]*baget.Node
	ord    binary.ByteOrder
	rng    *rand.Rand
	now    int64
	recs   []brec
	events int
	procs  []BagetObj
	thr    []*bthr
	cpus   []bcpu
	sems   []*bsync
	muts   []*bsync
	mqs    []*bsync
	ready  []int
	sleep  []int
	irqs   []uint64
	mqKind int
	msgNo  int64  // the last msg_no sent
	net    *bnet  // nil: a machine on its own (GenerateBagetSystem sets it)
	netq   *bsync // the queue of network messages (with net)
	idle   int64  // with net: true time before its next step
	node   int    // this machine's index in net
	err    error
}

func newBSim(cfg BagetConfig, d *baget.Description) (*bsim, error) {
	s := &bsim{cfg: cfg, d: d, paths: map[*baget.Event]map[string]*baget.Node{},
		rng: rand.New(rand.NewSource(cfg.Seed)), now: BagetEpochNS, irqs: []uint64{3, 5, 11}}
	s.ord = binary.ByteOrder(binary.LittleEndian)
	if d.ABI.BigEndian {
		s.ord = binary.BigEndian
	}
	for _, ev := range d.Events {
		m := map[string]*baget.Node{}
		var walk func([]*baget.Node)
		walk = func(ns []*baget.Node) {
			for _, n := range ns {
				m[n.Path] = n
				walk(n.Children)
			}
		}
		walk(ev.Fields)
		s.paths[ev] = m
	}
	for _, name := range []string{"FILLER", "BLOCK", "FLUSH", "PROC_CREATE", "THREAD_CREATE", "THREAD_SWITCH", "CPU_IDLE",
		"THREAD_BLOCK", "THREAD_WAKEUP", "INTR_ENTER", "INTR_EXIT", "SEM_CREATE", "SEM_TAKE", "SEM_GIVE",
		"MUTEX_CREATE", "MUTEX_LOCK", "MUTEX_UNLOCK", "MUTEX_WAIT", "MQ_CREATE", "MQ_SEND", "MQ_RECEIVE", "USER_EVENT"} {
		if d.ByName[name] == nil {
			return nil, fmt.Errorf("tracegen: baget description has no event %s", name)
		}
	}
	return s, nil
}

// recb builds one record: a zeroed C struct with its descriptor written.
type recb struct {
	s   *bsim
	ev  *baget.Event
	buf []byte
}

func (s *bsim) rec(name string, extra int) *recb {
	ev := s.d.ByName[name]
	r := &recb{s: s, ev: ev, buf: make([]byte, ev.Size+extra)}
	r.u("type_record", ev.ID)
	r.u("size_record", uint64(len(r.buf)))
	if max := uint64(1)<<(8*s.d.SizeRecord.Size) - 1; s.d.SizeRecord.Size < 8 && uint64(len(r.buf)) > max {
		s.fail("record %s of %d bytes does not fit size_record", name, len(r.buf))
	}
	return r
}

func (s *bsim) fail(format string, args ...any) {
	if s.err == nil {
		s.err = fmt.Errorf("tracegen: baget: "+format, args...)
	}
}

func (r *recb) node(path string) *baget.Node {
	n := r.s.paths[r.ev][path]
	if n == nil {
		r.s.fail("event %s has no field %s", r.ev.Name, path)
	}
	return n
}

// putInt writes the low size bytes of v at off in the log's byte order.
func (r *recb) putInt(off, size int, v uint64) {
	b := r.buf[off : off+size]
	switch size {
	case 1:
		b[0] = byte(v)
	case 2:
		r.s.ord.PutUint16(b, uint16(v))
	case 4:
		r.s.ord.PutUint32(b, uint32(v))
	case 8:
		r.s.ord.PutUint64(b, v)
	default:
		r.s.fail("integer of %d bytes", size)
	}
}

// u writes an integer, object id or pointer field.
func (r *recb) u(path string, v uint64) *recb {
	if n := r.node(path); n != nil {
		if !n.Simple() || n.Base.Kind == baget.KindTimespec || n.Base.Kind == baget.KindFloat {
			r.s.fail("field %s.%s is not an integer", r.ev.Name, path)
			return r
		}
		r.putInt(n.Offset, n.Size, v)
	}
	return r
}

func (r *recb) i(path string, v int64) *recb { return r.u(path, uint64(v)) }

// ts writes a struct timespec field.
func (r *recb) ts(path string, ns int64) *recb {
	if n := r.node(path); n != nil {
		p := n.Size / 2
		r.putInt(n.Offset, p, uint64(ns/1e9))
		r.putInt(n.Offset+p, p, uint64(ns%1e9))
	}
	return r
}

// text writes a char (or unsigned char) array, NUL padded; for the
// flexible member it writes len(b) bytes from its offset.
func (r *recb) text(path string, b []byte) *recb {
	if n := r.node(path); n != nil {
		lim := n.Size
		if n.Dims != nil && n.Dims[0] == 0 {
			lim = len(r.buf) - n.Offset
		}
		if len(b) > lim {
			r.s.fail("field %s.%s: %d bytes do not fit %d", r.ev.Name, path, len(b), lim)
			return r
		}
		copy(r.buf[n.Offset:], b)
	}
	return r
}

func (r *recb) f64(path string, v float64) *recb {
	if n := r.node(path); n != nil {
		r.putInt(n.Offset, 8, math.Float64bits(v))
	}
	return r
}

// emit stamps a record with the next time and the CPU and appends it.
func (s *bsim) emit(r *recb, cpu int, main BagetObj, trans ...btrans) {
	s.now += 200 + int64(s.rng.Intn(3000))
	if s.cfg.GapNS > 0 && s.net == nil { // a system's machines idle between steps instead
		s.now += s.rng.Int63n(s.cfg.GapNS + 1)
	}
	local := s.cfg.Clock.Local(s.now) // what the machine's clock reads
	if r.ev.Time != nil {
		r.ts(r.ev.Time.Path, local)
	} else if n := s.paths[r.ev]["ts"]; n != nil && n.Simple() && n.Base.Kind == baget.KindTimespec {
		r.ts("ts", local) // FLUSH: an info record with a time that is not declared
	}
	if r.ev.CPU != nil {
		r.u(r.ev.CPU.Path, uint64(cpu))
	}
	s.recs = append(s.recs, brec{data: r.buf, ev: r.ev, t: local, cpu: cpu, main: main, trans: trans, create: r.ev.Creates != nil})
	if r.ev.Kind.Essential() {
		s.events++
	}
}

func (s *bsim) tr(th int, to string, from ...string) btrans {
	s.thr[th].st = to
	return btrans{thread: th, to: to, from: from}
}

func (s *bsim) trCtx(th int, to string, from ...string) btrans {
	s.thr[th].st = to
	return btrans{thread: th, context: true, to: to, from: from}
}

func cpuTr(to string, obj BagetObj, from ...string) btrans {
	return btrans{thread: -1, to: to, obj: obj, from: from}
}

// mark adds what the record just emitted does to a resource or queue.
func (s *bsim) mark(op int, obj BagetObj, th int, ctx bool, no int64) {
	r := &s.recs[len(s.recs)-1]
	r.marks = append(r.marks, bmark{op: op, obj: obj, th: th, ctx: ctx, no: no})
}

func name16(s string) []byte { return []byte(s) }

// bagetThreadOpts are the option bits of thread i (THREAD_CREATE's opts,
// the description's flags: bit 0 FPU, bit 1 STACK_CHECK, bit 2
// SUPERVISOR): even threads use the FPU, every third checks its stack,
// thread 0 runs in supervisor mode.
func bagetThreadOpts(i int) uint64 {
	var o uint64
	if i%2 == 0 {
		o |= 1
	}
	if i%3 == 0 {
		o |= 2
	}
	if i == 0 {
		o |= 4
	}
	return o
}

func (s *bsim) setup() {
	nproc := min(1+(s.cfg.Threads-1)/4, 4)
	for p := 1; p <= nproc; p++ {
		o := BagetObj{Kind: "process", OID: uint64(p)}
		s.procs = append(s.procs, o)
		s.emit(s.rec("PROC_CREATE", 0).i("proc", int64(p)).text("name", name16(fmt.Sprintf("proc%d", p))), 0, o)
	}
	for i := 0; i < s.cfg.Threads; i++ {
		th := &bthr{obj: BagetObj{Kind: "thread", Pid: int64(1 + i%nproc), OID: 0x00100000 + 0x100*uint64(i)},
			name: fmt.Sprintf("thr%d", i), prio: 10 + i%5, st: bUnk, cpu: -1, holds: -1}
		s.thr = append(s.thr, th)
		s.emit(s.rec("THREAD_CREATE", 0).i("pid", th.obj.Pid).u("thread", th.obj.OID).u("opts", bagetThreadOpts(i)).
			u("prio", uint64(th.prio)).text("name", name16(th.name)), 0, th.obj, s.tr(i, bReady, bUnk))
		s.ready = append(s.ready, i)
	}
	for k := 0; k < 2; k++ {
		pid := s.procs[k%nproc].OID
		sem := &bsync{obj: BagetObj{Kind: "semaphore", Pid: int64(pid), OID: uint64(k + 1)}, name: fmt.Sprintf("sem%d", k), count: k, max: 4, owner: -1}
		s.sems = append(s.sems, sem)
		s.emit(s.rec("SEM_CREATE", 0).i("pid", sem.obj.Pid).u("sem", sem.obj.OID).i("attr.initial", int64(sem.count)).
			i("attr.max", int64(sem.max)).text("name", name16(sem.name)), 0, sem.obj)
	}
	for k := 0; k < 2; k++ {
		pid := s.procs[(k+1)%nproc].OID
		m := &bsync{obj: BagetObj{Kind: "mutex", Pid: int64(pid), OID: uint64(k + 1)}, name: fmt.Sprintf("mtx%d", k), owner: -1}
		s.muts = append(s.muts, m)
		s.emit(s.rec("MUTEX_CREATE", 0).i("pid", m.obj.Pid).u("mutex", m.obj.OID).u("protocol", uint64(k)).
			text("name", name16(m.name)), 0, m.obj)
	}
	for k := 0; k < 2; k++ {
		pid := s.procs[0].OID
		q := &bsync{obj: BagetObj{Kind: "mqueue", Pid: int64(pid), OID: uint64(k + 1)}, name: fmt.Sprintf("mq%d", k), max: 8, owner: -1}
		s.mqs = append(s.mqs, q)
		s.emit(s.rec("MQ_CREATE", 0).i("pid", q.obj.Pid).u("mq", q.obj.OID).u("attr.maxmsg", uint64(q.max)).
			u("attr.msgsize", 64).text("name", name16(q.name)), 0, q.obj)
	}
	s.cpus = make([]bcpu, s.cfg.CPUs)
	for c := range s.cpus {
		s.cpus[c] = bcpu{cur: -1, irq: -1}
		s.dispatch(c)
	}
}

// dispatch runs the first ready thread on CPU c, preempting what runs there
// (prev=0 when the CPU is idle).
func (s *bsim) dispatch(c int) {
	if len(s.ready) == 0 {
		return
	}
	next := s.ready[0]
	s.ready = s.ready[1:]
	cu := &s.cpus[c]
	var trans []btrans
	var prevOID uint64
	if p := cu.cur; p >= 0 {
		prevOID = s.thr[p].obj.OID
		s.thr[p].cpu = -1
		if s.thr[p].st == bRun {
			trans = append(trans, s.tr(p, bReady, bRun))
			s.ready = append(s.ready, p)
		}
	}
	n := s.thr[next]
	trans = append(trans, s.tr(next, bRun), cpuTr(baget.CPUThr, n.obj))
	cu.cur, n.cpu = next, c
	s.emit(s.rec("THREAD_SWITCH", 0).i("pid", n.obj.Pid).u("prev", prevOID).u("next", n.obj.OID), c, n.obj, trans...)
}

// away takes the (blocked) thread running on CPU c off it.
func (s *bsim) away(c int) {
	cu := &s.cpus[c]
	if len(s.ready) > 0 {
		s.dispatch(c)
		return
	}
	p := s.thr[cu.cur]
	p.cpu, cu.cur = -1, -1
	s.emit(s.rec("CPU_IDLE", 0).i("pid", p.obj.Pid).u("prev", p.obj.OID), c, p.obj, cpuTr(baget.CPUIdle, BagetObj{}))
}

// block blocks the thread running on CPU c.
func (s *bsim) block(c int, reason uint64) int {
	th := s.cpus[c].cur
	t := s.thr[th]
	s.emit(s.rec("THREAD_BLOCK", 0).i("pid", t.obj.Pid).u("thread", t.obj.OID).u("reason", reason), c, t.obj,
		s.tr(th, bNotRd, bRun, bUnk))
	s.away(c)
	return th
}

// wake makes thread w ready (an event on CPU c) and dispatches it on an
// idle CPU if there is one.
//
// got: the semaphore whose unit it was handed (its wait ends), if any.
func (s *bsim) wake(c, w int, got ...BagetObj) {
	t := s.thr[w]
	s.emit(s.rec("THREAD_WAKEUP", 0).i("pid", t.obj.Pid).u("thread", t.obj.OID), c, t.obj, s.tr(w, bReady, bNotRd, bUnk))
	for _, o := range got {
		s.mark(waitEnd, o, w, false, 0)
	}
	s.ready = append(s.ready, w)
	for d := range s.cpus {
		if s.cpus[d].cur < 0 && s.cpus[d].irq < 0 {
			s.dispatch(d)
			return
		}
	}
}

func (s *bsim) irqObj(k int) BagetObj { return BagetObj{Kind: "interrupt", OID: s.irqs[k]} }

func (s *bsim) interrupt(c int) {
	cu := &s.cpus[c]
	k := s.rng.Intn(len(s.irqs))
	o := s.irqObj(k)
	var trans []btrans
	if cu.cur >= 0 {
		trans = append(trans, s.trCtx(cu.cur, bIntr, bRun))
	}
	trans = append(trans, cpuTr(baget.CPUIntr, o))
	cu.irq = k
	s.emit(s.rec("INTR_ENTER", 0).u("irq", o.OID), c, o, trans...)
	switch r := s.rng.Intn(10); {
	case r < 5:
		s.semGive(c, s.rng.Intn(len(s.sems)))
	case r < 8 && len(s.sleep) > 0:
		w := s.sleep[0]
		s.sleep = s.sleep[1:]
		s.wake(c, w)
	}
	trans = []btrans{cpuTr(baget.CPUReturn, BagetObj{}, baget.CPUIntr)}
	if cu.cur >= 0 {
		trans = append(trans, s.trCtx(cu.cur, bRun, bIntr))
	}
	cu.irq = -1
	s.emit(s.rec("INTR_EXIT", 0).u("irq", o.OID), c, o, trans...)
	if cu.cur < 0 {
		s.dispatch(c)
	}
}

func (s *bsim) semGive(c, k int) {
	sem := s.sems[k]
	if len(sem.waiters) == 0 && sem.count >= sem.max {
		return
	}
	if len(sem.waiters) > 0 {
		w := sem.waiters[0]
		sem.waiters = sem.waiters[1:]
		s.emit(s.rec("SEM_GIVE", 0).i("pid", sem.obj.Pid).u("sem", sem.obj.OID).i("count", 0), c, sem.obj)
		s.wake(c, w, sem.obj) // the THREAD_WAKEUP ends its wait: it has the unit
		return
	}
	sem.count++
	s.emit(s.rec("SEM_GIVE", 0).i("pid", sem.obj.Pid).u("sem", sem.obj.OID).i("count", int64(sem.count)), c, sem.obj)
}

func (s *bsim) user(c int) {
	t := s.thr[s.cpus[c].cur]
	k := s.rng.Intn(3)
	o := BagetObj{Kind: "user", Pid: t.obj.Pid, Text: fmt.Sprintf("probe%d", k)}
	data := []byte(fmt.Sprintf("n=%d", s.rng.Intn(100000)))
	s.emit(s.rec("USER_EVENT", len(data)).i("pid", o.Pid).text("object", []byte(o.Text)).
		i("value", s.rng.Int63n(1<<40)-1<<39).u("len", uint64(len(data))).text("data", data), c, o)
}

func (s *bsim) mq(c int) {
	q := s.mqs[s.rng.Intn(len(s.mqs))]
	kind := s.mqKind % 4
	s.mqKind++
	name, op := "MQ_SEND", msgSend
	var no int64
	if q.count > 0 && (q.count >= q.max || s.rng.Intn(2) == 0) {
		name, op = "MQ_RECEIVE", msgRecv
		q.count--
		no, q.queued = q.queued[0], q.queued[1:]
	} else {
		q.count++
		s.msgNo++
		no = s.msgNo
		q.queued = append(q.queued, no)
	}
	r := s.rec(name, 0).i("pid", q.obj.Pid).u("mq", q.obj.OID).i("msg_no", no).u("len", uint64(4+s.rng.Intn(60))).u("msg_kind", uint64(kind))
	if name == "MQ_SEND" {
		r.u("prio", uint64(s.rng.Intn(32)))
	}
	switch kind {
	case 0:
		r.text("head.raw", []byte{1, 2, 3, 4, 5, 6, 7, 8})
	case 1:
		r.u("head.code", uint64(s.rng.Uint32()))
	case 2:
		r.text("head.text", []byte("msg"))
	case 3:
		r.f64("head.value", float64(s.rng.Intn(1000))/8)
	}
	s.emit(r, c, q.obj)
	s.mark(op, q.obj, s.cpus[c].cur, true, no)
}

func (s *bsim) step() {
	c := s.rng.Intn(len(s.cpus))
	cu := &s.cpus[c]
	if cu.cur < 0 {
		if len(s.ready) > 0 {
			s.dispatch(c)
		} else {
			s.interrupt(c)
		}
		return
	}
	th := cu.cur
	t := s.thr[th]
	switch r := s.rng.Intn(100); {
	case r < 12:
		s.interrupt(c)
	case r < 24 && len(s.ready) > 0:
		s.dispatch(c)
	case r < 32 && t.holds < 0:
		s.sleep = append(s.sleep, s.block(c, 1))
	case r < 40 && len(s.sleep) > 0:
		w := s.sleep[0]
		s.sleep = s.sleep[1:]
		s.wake(c, w)
	case r < 52 && t.holds < 0:
		sem := s.sems[s.rng.Intn(len(s.sems))]
		if sem.count > 0 {
			sem.count--
			s.emit(s.rec("SEM_TAKE", 0).i("pid", sem.obj.Pid).u("sem", sem.obj.OID).i("count", int64(sem.count)), c, sem.obj)
			return
		}
		s.emit(s.rec("SEM_TAKE", 0).i("pid", sem.obj.Pid).u("sem", sem.obj.OID).i("count", -1), c, sem.obj)
		s.mark(waitStart, sem.obj, th, true, 0)
		sem.waiters = append(sem.waiters, s.block(c, 2))
	case r < 60:
		s.semGive(c, s.rng.Intn(len(s.sems)))
	case r < 72:
		s.mutex(c, th)
	case r < 82:
		s.mq(c)
	case r < 97:
		if s.net != nil && s.rng.Intn(3) == 0 {
			s.netSend(c)
			return
		}
		s.user(c)
	default:
		s.emit(s.rec("FLUSH", 0).u("lost", 0), c, BagetObj{})
	}
}

func (s *bsim) mutex(c, th int) {
	t := s.thr[th]
	if k := t.holds; k >= 0 {
		m := s.muts[k]
		t.holds = -1
		s.emit(s.rec("MUTEX_UNLOCK", 0).i("pid", m.obj.Pid).u("mutex", m.obj.OID).u("owner", t.obj.OID), c, m.obj)
		s.mark(holdEnd, m.obj, th, false, 0)
		m.owner = -1
		if len(m.waiters) > 0 {
			w := m.waiters[0]
			m.waiters = m.waiters[1:]
			m.owner, s.thr[w].holds = w, k
			s.emit(s.rec("MUTEX_LOCK", 0).i("pid", m.obj.Pid).u("mutex", m.obj.OID).u("owner", s.thr[w].obj.OID), c, m.obj)
			s.mark(waitEnd, m.obj, w, false, 0)
			s.mark(holdStart, m.obj, w, false, 0)
			s.wake(c, w)
		}
		return
	}
	k := s.rng.Intn(len(s.muts))
	m := s.muts[k]
	if m.owner < 0 {
		m.owner, t.holds = th, k
		s.emit(s.rec("MUTEX_LOCK", 0).i("pid", m.obj.Pid).u("mutex", m.obj.OID).u("owner", t.obj.OID), c, m.obj)
		s.mark(holdStart, m.obj, th, false, 0)
		return
	}
	s.emit(s.rec("MUTEX_WAIT", 0).i("pid", m.obj.Pid).u("mutex", m.obj.OID).u("thread", t.obj.OID).u("owner", s.thr[m.owner].obj.OID), c, m.obj)
	s.mark(waitStart, m.obj, th, false, 0)
	m.waiters = append(m.waiters, s.block(c, 3))
}

// pack lays records out in blocks (docs 1.2, 1.4): a BLOCK record first,
// numbered from first, records back to back, the tail filled. where[i] is
// the block of record i.
func (s *bsim) pack(recs [][]byte, first int) (blocks [][]byte, where []int) {
	bs := s.cfg.BlockSize
	var cur []byte
	finish := func() {
		if cur == nil {
			return
		}
		blk := make([]byte, bs)
		copy(blk, cur)
		desc := s.d.TypeRecord.Size + s.d.SizeRecord.Size
		if rem := bs - len(cur); rem >= desc {
			size := uint64(rem)
			if s.d.SizeRecord.Size < 8 {
				size = min(size, uint64(1)<<(8*s.d.SizeRecord.Size)-1)
			}
			f := s.rec("FILLER", 0)
			f.u("size_record", size)
			copy(blk[len(cur):], f.buf[:desc])
		}
		blocks = append(blocks, blk)
		cur = nil
	}
	start := func() {
		b := s.rec("BLOCK", 0)
		b.u(s.d.ByName["BLOCK"].Number.Path, uint64(first+len(blocks)))
		cur = append(make([]byte, 0, bs), b.buf...)
	}
	for _, r := range recs {
		if cur != nil && len(cur)+len(r) > bs {
			finish()
		}
		if cur == nil {
			start()
			if len(cur)+len(r) > bs {
				s.fail("a record of %d bytes does not fit a block of %d", len(r), bs)
				return nil, nil
			}
		}
		cur = append(cur, r...)
		where = append(where, len(blocks))
	}
	finish()
	return blocks, where
}

func (s *bsim) header(service int, wrapped bool) []byte {
	h := make([]byte, 80)
	copy(h, "BAGETTRC")
	h[8] = 'L'
	if s.d.ABI.BigEndian {
		h[8] = 'B'
	}
	h[9] = 1
	s.ord.PutUint16(h[10:], 80)
	s.ord.PutUint32(h[12:], uint32(s.cfg.BlockSize))
	s.ord.PutUint32(h[16:], uint32(service))
	if wrapped {
		s.ord.PutUint32(h[20:], 1)
	}
	copy(h[24:56], s.d.OS)
	copy(h[56:72], s.d.Arch)
	return h
}

func (s *bsim) finish() ([]byte, BagetTruth, error) {
	var creates, data [][]byte
	for _, r := range s.recs {
		if r.create {
			creates = append(creates, r.data)
		}
		data = append(data, r.data)
	}
	svc, _ := s.pack(creates, 0)
	blocks, where := s.pack(data, 0)
	if s.err != nil {
		return nil, BagetTruth{}, s.err
	}
	drop := 0
	if s.cfg.RingBlocks > 0 && len(blocks) > s.cfg.RingBlocks {
		drop = len(blocks) - s.cfg.RingBlocks
	}
	out := s.header(len(svc), drop > 0)
	for _, b := range svc {
		out = append(out, b...)
	}
	for _, b := range blocks[drop:] {
		out = append(out, b...)
	}
	tr := BagetTruth{EventCounts: map[string]int{}, Ecos: map[BagetEco]int{}, ServiceBlocks: len(svc),
		CPUKnownNS: map[int]int64{}, CPUBusyNS: map[int]int64{}, HeldNS: map[BagetObj]int64{},
		DataBlocks: len(blocks) - drop, FirstBlock: drop, Wrapped: drop > 0, Objects: len(creates)}
	tr.Records = len(blocks) - drop // BLOCK records
	for _, b := range blocks[drop:] {
		if used := s.used(b); s.cfg.BlockSize-used >= s.d.TypeRecord.Size+s.d.SizeRecord.Size {
			tr.Records++ // its FILLER
		}
	}
	var kept []brec
	for i, r := range s.recs {
		if where[i] >= drop {
			kept = append(kept, r)
		}
	}
	tr.Records += len(kept)
	if err := s.replay(kept, &tr, drop == 0); err != nil {
		return nil, BagetTruth{}, err
	}
	return out, tr, nil
}

// used returns the bytes of a block before its tail: the records laid out
// by pack, found by walking the sizes pack wrote (only to count fillers).
func (s *bsim) used(b []byte) int {
	off := 0
	desc := s.d.TypeRecord.Size + s.d.SizeRecord.Size
	filler := s.d.ByName["FILLER"].ID
	for off+desc <= len(b) {
		typ := s.readUint(b[off:], s.d.TypeRecord.Size)
		size := int(s.readUint(b[off+s.d.TypeRecord.Size:], s.d.SizeRecord.Size))
		if typ == filler || size == 0 {
			break
		}
		off += size
	}
	return off
}

func (s *bsim) readUint(b []byte, size int) uint64 {
	switch size {
	case 1:
		return uint64(b[0])
	case 2:
		return uint64(s.ord.Uint16(b))
	case 4:
		return uint64(s.ord.Uint32(b))
	}
	return s.ord.Uint64(b)
}

type bobs struct {
	known bool
	st    string
	since int64
}

// bcpuObs is the observer's CPU: what it knows of who holds it, and the
// interval open.
type bcpuObs struct {
	known   bool
	unkBase bool       // the interrupts were entered while the state was unknown
	base    int        // thread index; -1: none
	stack   []BagetObj // interrupts, innermost last
	open    bool       // an interval is open: held by holder since since
	holder  BagetObj
	since   int64
}

// bagetMaxNesting bounds the interrupts nested on a CPU (docs 2.7).
const bagetMaxNesting = 64

// word is the CPU's state as from= conditions name it.
func (c *bcpuObs) word() string {
	switch {
	case !c.known:
		return bUnk
	case len(c.stack) > 0:
		return baget.CPUIntr
	case c.base >= 0:
		return baget.CPUThr
	}
	return baget.CPUIdle
}

// holder is what holds the CPU; known is false when that is unknown.
func (s *bsim) holder(c *bcpuObs) (h BagetObj, known bool) {
	switch {
	case !c.known:
		return BagetObj{}, false
	case len(c.stack) > 0:
		return c.stack[len(c.stack)-1], true
	case c.base >= 0:
		return s.thr[c.base].obj, true
	}
	return BagetObj{}, true
}

// replay computes the truth from the simulator's transitions over the
// records kept in the log (see GenerateBaget's comment). all: every record
// was kept, so every transition must apply.
func (s *bsim) replay(kept []brec, tr *BagetTruth, all bool) error {
	thr := make([]bobs, len(s.thr))
	cpus := make([]bcpuObs, len(s.cpus))
	for i := range cpus {
		cpus[i].base = -1
	}
	thrIndex := map[BagetObj]int{}
	for i, th := range s.thr {
		thrIndex[th.obj] = i
	}
	admits := func(from []string, st string) bool {
		if from == nil {
			return true
		}
		for _, f := range from {
			if f == st {
				return true
			}
		}
		return false
	}
	obsState := func(o bobs) string {
		if o.known {
			return o.st
		}
		return bUnk
	}
	// end ends CPU n's open interval at t: a complete one unless cut.
	end := func(n int, t int64, cut bool) {
		c := &cpus[n]
		if !c.open {
			return
		}
		c.open = false
		if cut {
			return
		}
		iv := BagetCPUInterval{CPU: n, State: baget.CPUIdle, Obj: c.holder, Process: baget.CPUIdle, Group: baget.CPUIdle, StartNS: c.since, EndNS: t}
		switch {
		case c.holder.Kind == "interrupt":
			iv.State = fmt.Sprintf("interrupt %d", c.holder.OID)
			iv.Process, iv.Group = iv.State, baget.CPUInterrupts
		case c.holder != BagetObj{}:
			iv.State = s.thr[thrIndex[c.holder]].name
			iv.Process, iv.Group = fmt.Sprintf("proc%d", c.holder.Pid), baget.CPUThreads
		}
		if iv.Busy() {
			tr.CPUBusyNS[n] += t - c.since
			tr.HeldNS[c.holder] += t - c.since
		}
		tr.CPUKnownNS[n] += t - c.since
		tr.CPUStates = append(tr.CPUStates, iv)
	}
	// show moves CPU n's interval to what holds it now.
	show := func(n int, t int64) {
		c := &cpus[n]
		h, known := s.holder(c)
		if !known || (c.open && c.holder == h) {
			return
		}
		end(n, t, false)
		c.open, c.holder, c.since = true, h, t
	}
	unknown := func(n int, t int64) {
		end(n, t, true)
		c := &cpus[n]
		c.known, c.unkBase, c.base, c.stack = false, false, -1, nil
	}
	sync := newBSyncObs(s, tr, all)
	first := true
	for _, r := range kept {
		if !r.ev.Kind.Essential() {
			continue
		}
		if first {
			tr.FirstNS, first = r.t, false
		}
		tr.LastNS = r.t
		tr.Events++
		tr.EventCounts[r.ev.Name]++
		ctx, ctxKnown := s.holder(&cpus[r.cpu])
		tr.Ecos[BagetEco{Event: r.ev.Name, Context: ctx, Main: r.main}]++
		for _, mk := range r.marks {
			if err := sync.mark(r, mk, ctx, ctxKnown); err != nil {
				return err
			}
		}
		sync.states(r.t)
		for _, t := range r.trans {
			if t.thread < 0 {
				c := &cpus[r.cpu]
				if !admits(t.from, c.word()) || (t.to == baget.CPUReturn && !c.known) {
					if all {
						return fmt.Errorf("tracegen: baget: internal: %s at %d: CPU %d %s not applied", r.ev.Name, r.t, r.cpu, t.to)
					}
					continue
				}
				switch t.to {
				case baget.CPUReturn:
					if len(c.stack) == 0 {
						unknown(r.cpu, r.t)
						continue
					}
					c.stack = c.stack[:len(c.stack)-1]
					show(r.cpu, r.t)
					if c.unkBase && len(c.stack) == 0 {
						unknown(r.cpu, r.t) // back to before the interrupts: unknown
					}
				case baget.CPUIdle:
					c.known, c.unkBase, c.base = true, false, -1
					show(r.cpu, r.t)
				case baget.CPUIntr:
					if len(c.stack) >= bagetMaxNesting {
						unknown(r.cpu, r.t)
						continue
					}
					if !c.known {
						c.known, c.unkBase = true, true
					}
					c.stack = append(c.stack, t.obj)
					show(r.cpu, r.t)
				case baget.CPUThr:
					th := thrIndex[t.obj]
					for d := range cpus {
						if d != r.cpu && cpus[d].base == th {
							cpus[d].base = -1 // it moved: that CPU runs none
							show(d, r.t)
						}
					}
					c.known, c.unkBase, c.base = true, false, th
					show(r.cpu, r.t)
				}
				continue
			}
			o := &thr[t.thread]
			ok := admits(t.from, obsState(*o))
			if t.context {
				c := &cpus[r.cpu]
				ok = ok && c.word() == baget.CPUThr && c.base == t.thread
			}
			if !ok {
				if all || o.known {
					return fmt.Errorf("tracegen: baget: internal: %s at %d: transition of %s to %s not applied", r.ev.Name, r.t, s.thr[t.thread].name, t.to)
				}
				continue
			}
			if o.known {
				tr.ThreadStates = append(tr.ThreadStates, BagetThreadInterval{Thread: s.thr[t.thread].obj, State: o.st, StartNS: o.since, EndNS: r.t})
			}
			*o = bobs{known: true, st: t.to, since: r.t}
		}
	}
	for i, o := range thr {
		if o.known {
			tr.ThreadOpen = append(tr.ThreadOpen, BagetThreadInterval{Thread: s.thr[i].obj, State: o.st, StartNS: o.since, EndNS: tr.LastNS})
		}
	}
	sync.finish()
	return nil
}

// bsyncObs is the truth of the holds, waits and messages a reader of the
// log can know: the simulator's marks over the records kept. A hold or
// wait is complete when its start and its end are in the log and a reader
// knows the thread at its start (a mark that names the thread only as
// the context needs the CPU's state known: always, in an unwrapped log);
// its end then names the thread or the resource it waits for. A message
// pairs by (queue, msg_no).
type bsyncObs struct {
	s     *bsim
	tr    *BagetTruth
	all   bool
	names map[BagetObj]string
	holds map[bspanKey]int64 // open holds: their start
	waits map[bspanKey]int64
	msgs  map[bmsgKey]BagetQueueMsg // sent, not received
	order []bmsgKey                 // sends, in order
	mutex map[BagetObj]*bmutexObs
	dirty []BagetObj
}

// bmutexObs is a mutex as a reader of the log knows it.
type bmutexObs struct {
	known            bool
	holders, waiters int
	holder           int // thread index; -1
	open             bool
	st               BagetResState // the interval open
}

type bspanKey struct {
	r  BagetObj
	th int
}

type bmsgKey struct {
	q  BagetObj
	no int64
}

func newBSyncObs(s *bsim, tr *BagetTruth, all bool) *bsyncObs {
	o := &bsyncObs{s: s, tr: tr, all: all, names: map[BagetObj]string{},
		holds: map[bspanKey]int64{}, waits: map[bspanKey]int64{}, msgs: map[bmsgKey]BagetQueueMsg{}, mutex: map[BagetObj]*bmutexObs{}}
	for _, l := range [][]*bsync{s.sems, s.muts, s.mqs} {
		for _, x := range l {
			o.names[x.obj] = x.name
		}
	}
	if s.netq != nil {
		o.names[s.netq.obj] = s.netq.name
	}
	return o
}

func (o *bsyncObs) mark(r brec, mk bmark, ctx BagetObj, ctxKnown bool) error {
	thr := BagetObj{}
	if mk.th >= 0 {
		thr = o.s.thr[mk.th].obj
	}
	if mk.ctx && (!ctxKnown || ctx != thr) {
		if o.all {
			return fmt.Errorf("tracegen: baget: internal: %s at %d: the context is not the thread that acts", r.ev.Name, r.t)
		}
		thr = BagetObj{} // not known to a reader
	}
	k := bspanKey{mk.obj, mk.th}
	mu := o.mutex[mk.obj]
	if mk.obj.Kind == "mutex" {
		if mu == nil {
			mu = &bmutexObs{holder: -1}
			o.mutex[mk.obj] = mu
		}
		if mk.op == holdStart || mk.op == holdEnd {
			mu.known = true // the reader's assign or release
		}
		o.dirty = append(o.dirty, mk.obj)
	}
	span := func(start int64) BagetSpan {
		return BagetSpan{Resource: mk.obj, ResourceName: o.names[mk.obj], Thread: o.s.thr[mk.th].obj, StartNS: start, EndNS: r.t}
	}
	switch mk.op {
	case holdStart, waitStart:
		if thr == (BagetObj{}) {
			return nil // a reader does not know who
		}
		m := o.holds
		if mk.op == waitStart {
			m = o.waits
		}
		m[k] = r.t
		if mu != nil && mk.op == holdStart {
			mu.holders++
			mu.holder = mk.th
		} else if mu != nil {
			mu.waiters++
		}
	case holdEnd:
		if start, ok := o.holds[k]; ok {
			delete(o.holds, k)
			o.tr.Holds = append(o.tr.Holds, span(start))
			if mu != nil {
				mu.holders--
				mu.holder = -1
			}
		}
	case waitEnd:
		if start, ok := o.waits[k]; ok {
			delete(o.waits, k)
			o.tr.Waits = append(o.tr.Waits, span(start))
			if mu != nil {
				mu.waiters--
			}
		}
	case msgSend:
		mk := bmsgKey{mk.obj, mk.no}
		o.msgs[mk] = BagetQueueMsg{Queue: mk.q, QueueName: o.names[mk.q], ID: mk.no, Sender: thr, SendNS: r.t}
		o.order = append(o.order, mk)
	case msgRecv:
		key := bmsgKey{mk.obj, mk.no}
		m, ok := o.msgs[key]
		if !ok {
			o.tr.MsgNoSend = append(o.tr.MsgNoSend, BagetQueueMsg{Queue: mk.obj, QueueName: o.names[mk.obj], ID: mk.no, Receiver: thr, RecvNS: r.t})
			return nil
		}
		delete(o.msgs, key)
		m.Receiver, m.RecvNS = thr, r.t
		o.tr.Messages = append(o.tr.Messages, m)
	}
	return nil
}

// states moves the mutexes a record acted on to their new states.
func (o *bsyncObs) states(t int64) {
	for _, obj := range o.dirty {
		mu := o.mutex[obj]
		if !mu.known {
			continue
		}
		st := BagetResState{Resource: obj, Name: o.names[obj], State: baget.ResFree}
		if mu.holders > 0 {
			st.State = baget.ResHeld
			st.Holder = o.s.thr[mu.holder].obj
		}
		if mu.waiters > 0 {
			st.State += fmt.Sprintf(" (%d waiting)", mu.waiters)
		}
		if mu.open && mu.st.State == st.State && mu.st.Holder == st.Holder {
			continue
		}
		if mu.open {
			mu.st.EndNS = t
			o.tr.ResStates = append(o.tr.ResStates, mu.st)
		}
		st.StartNS = t
		mu.open, mu.st = true, st
	}
	o.dirty = o.dirty[:0]
}

// finish lists what is still open at the end of the log, in the order it
// began.
func (o *bsyncObs) finish() {
	for _, mu := range o.mutex {
		if mu.open {
			st := mu.st
			st.EndNS = o.tr.LastNS
			o.tr.ResStatesOpen = append(o.tr.ResStatesOpen, st)
		}
	}
	sort.Slice(o.tr.ResStatesOpen, func(i, j int) bool { return o.tr.ResStatesOpen[i].Resource.OID < o.tr.ResStatesOpen[j].Resource.OID })
	open := func(m map[bspanKey]int64) []BagetSpan {
		var out []BagetSpan
		for k, start := range m {
			out = append(out, BagetSpan{Resource: k.r, ResourceName: o.names[k.r], Thread: o.s.thr[k.th].obj, StartNS: start, EndNS: o.tr.LastNS})
		}
		sort.Slice(out, func(i, j int) bool {
			if out[i].StartNS != out[j].StartNS {
				return out[i].StartNS < out[j].StartNS
			}
			return out[i].Resource.OID < out[j].Resource.OID
		})
		return out
	}
	o.tr.HoldsOpen, o.tr.WaitsOpen = open(o.holds), open(o.waits)
	for _, k := range o.order {
		if m, ok := o.msgs[k]; ok {
			o.tr.MsgOpen = append(o.tr.MsgOpen, m)
		}
	}
}
