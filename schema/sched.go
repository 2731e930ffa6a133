package schema

import (
	"sort"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
)

// Scheduling rows at ingest (issue 23): task_instances and sched_latency
// (queries/sched.sql) are windows over the state intervals of each task,
// ISR or thread in start order, which took longer than the ingest itself
// on large runs. The state intervals go through the schedTracker as the
// stateTracker closes them (one call in emit, states.go); it walks each
// object's intervals in the order of sched_neighbours and writes the rows
// of those views into TableSchedInstances and TableSchedWaits, which the
// views read, and each interval's class and length into
// TableSchedDurations, which sched_stats summarizes. The SQL definitions stay as the reference
// (task_instances_reference, sched_latency_reference), and a test per
// format proves the rows equal them.
//
// Where the stream cannot give the reference's answer for an object, the
// object is listed in TableSchedFallback and the views take its rows from
// the reference:
//   - its kind changed between its intervals, or after them, so that its
//     scheduling classes (sched_class, by kind) are not those the tracker
//     used (BTF retypes a source when it is first a target);
//   - an interval came that sorts before (or ties with) the one before it
//     of the same object and instance: intervals close in close order, and
//     the reference sorts them by start_ts, end_ts, start_seq (timestamps
//     that go backwards);
//   - a wait for a CPU whose first two intervals start at the same time,
//     where the reference's arg_min picks either (it is not deterministic);
//   - a BTF instance that comes again after it ended (an instance number
//     used twice), or whose object ended too many instances out of order
//     to keep track of (schedMaxClosed).
//
// A run without a row in TableSchedRuns (written by an older traceduck, or
// one whose intervals named an object not registered yet) is taken from
// the reference whole.

// SchedClass is a scheduling class (sched_class in queries/sched.sql).
type SchedClass int8

// The scheduling classes. SchedNone: not a scheduling state (NULL).
const (
	SchedNone SchedClass = iota
	SchedRunning
	SchedReady
	SchedWaiting
	SchedBlocked
)

func (c SchedClass) String() string {
	switch c {
	case SchedRunning:
		return "running"
	case SchedReady:
		return "ready"
	case SchedWaiting:
		return "waiting"
	case SchedBlocked:
		return "blocked"
	}
	return ""
}

// schedRule is sched_class for some formats: the one Go table of the
// macro of queries/sched.sql, which a test holds equal to it
// (TestSchedClassMatchesSQL in queries).
type schedRule struct {
	formats []string
	kinds   []string // the kinds whose states are scheduling states; nil: every kind
	// fold compares the state lowercased (SQL lower()); prefix: only
	// states that begin with it (after folding) are scheduling states.
	fold   bool
	prefix string
	states map[string]SchedClass
	other  SchedClass // every other state (SchedNone: none)
	// instance0: only instance 0 holds scheduling states (QNX kernel calls,
	// DTrace calls and ftrace system calls are instances >= 1).
	instance0 bool
	// byInstance: the format numbers its instances (BTF): a task instance
	// is the trace's (object, instance), not a run of intervals.
	byInstance bool
}

var schedRules = []schedRule{
	{formats: []string{"btf"}, kinds: []string{"task", "isr"}, byInstance: true, states: map[string]SchedClass{
		"running": SchedRunning, "active": SchedReady, "ready": SchedReady,
		"waiting": SchedWaiting, "polling": SchedWaiting, "parking": SchedWaiting}},
	{formats: []string{"qnx", "kev"}, kinds: []string{"thread"}, instance0: true, other: SchedBlocked, states: map[string]SchedClass{
		"RUNNING": SchedRunning, "READY": SchedReady}},
	{formats: []string{"dtrace", "ftrace"}, kinds: []string{"thread"}, instance0: true, other: SchedBlocked, states: map[string]SchedClass{
		"running": SchedRunning, "runnable": SchedReady}},
	{formats: []string{"baget"}, kinds: []string{"thread"}, states: map[string]SchedClass{
		"thrRun": SchedRunning, "thrReady": SchedReady, "thrInterrupted": SchedReady, "thrNotReady": SchedBlocked}},
	{formats: []string{"tlv", "toppers-asp", "toppers-fmp", "tlv-archive"}, fold: true, prefix: "state=", other: SchedBlocked, states: map[string]SchedClass{
		"state=running": SchedRunning, "state=active": SchedRunning,
		"state=runnable": SchedReady, "state=ready": SchedReady,
		"state=spinning": SchedWaiting, "state=parked": SchedWaiting}},
}

func schedRuleOf(format string) *schedRule {
	for i := range schedRules {
		for _, f := range schedRules[i].formats {
			if f == format {
				return &schedRules[i]
			}
		}
	}
	return nil
}

func (r *schedRule) kindIsSched(kind string) bool {
	if r.kinds == nil {
		return true
	}
	for _, k := range r.kinds {
		if k == kind {
			return true
		}
	}
	return false
}

func (r *schedRule) class(state string, null bool) SchedClass {
	if null {
		// SQL: CASE NULL WHEN ... ELSE other END is other; lower(NULL)
		// LIKE 'state=%' is NULL, no class
		if r.prefix != "" {
			return SchedNone
		}
		return r.other
	}
	if r.fold {
		state = strings.ToLower(state)
	}
	if !strings.HasPrefix(state, r.prefix) {
		return SchedNone
	}
	if c, ok := r.states[state]; ok {
		return c
	}
	return r.other
}

// SchedClassOf is sched_class(format, kind, state) of queries/sched.sql
// (a NULL state when null), SchedNone for NULL.
func SchedClassOf(format, kind, state string, null bool) SchedClass {
	r := schedRuleOf(format)
	if r == nil || !r.kindIsSched(kind) {
		return SchedNone
	}
	return r.class(state, null)
}

// Why an object's scheduling rows are taken from the reference
// (TableSchedFallback.reason).
const (
	fallbackKind    = "kind changed"
	fallbackOrder   = "intervals out of order"
	fallbackTie     = "tie in a wait"
	fallbackReused  = "instance reused"
	fallbackTooMany = "too many instances ended out of order"
)

// schedMaxClosed bounds the ranges of ended instance numbers kept per
// object (BTF): instances that end in order keep one range.
const schedMaxClosed = 64

type schedIv struct {
	class SchedClass
	state Sym
	start int64
	end   int64
	seq   Seq
	cpu   CPU
	trunc bool
}

// before tells whether a sorts before b as sched_neighbours orders them:
// start_ts, end_ts, start_seq NULLS FIRST (NoSeq is NULL). Equal keys
// are not before each other.
func (a *schedIv) before(b *schedIv) bool {
	if a.start != b.start {
		return a.start < b.start
	}
	if a.end != b.end {
		return a.end < b.end
	}
	if (a.seq < 0) != (b.seq < 0) {
		return a.seq < 0
	}
	return a.seq >= 0 && a.seq < b.seq
}

// schedKey is what the tracker keeps of one (object, instance): its last
// interval, the task instance (job) and the wait for a CPU in progress.
type schedKey struct {
	have bool
	prev schedIv

	jobOpen    bool
	jobN       int64 // jobs so far (non-BTF: the instance column)
	woke       Sym
	activation int64
	ran        bool
	runStart   int64
	lastRunCPU CPU
	end        int64
	exec       int64
	ready      int64
	waiting    int64
	preempt    int64
	migrate    int64
	jobTrunc   bool

	waitOpen    bool
	waitStart   int64
	waitPreempt bool
	waitTrunc   bool
}

type schedObj struct {
	seen     bool
	kind     Sym    // its kind when its first interval closed
	sched    bool   // a kind with scheduling states (kindIsSched(kind))
	fallback string // why its rows come from the reference; "" none
	closed   [][2]int64
}

// schedTracker writes the rows of TableSchedInstances and TableSchedWaits
// (see the top of this file).
type schedTracker struct {
	w     *RunWriter
	rule  *schedRule
	kinds []int8       // by kind symbol: 0 not looked up, 1 not a scheduling kind, 2 one
	class []SchedClass // by state symbol, +1 (0: not looked up)
	objs  []schedObj   // by object id - 1
	keys  map[stateKey]*schedKey
	spare []*schedKey

	inst, waits, durs *batch
	nIntervals        int64
	nInst             int64
	nWaits            int64
	fallbacks         []ObjectID
	runWide           bool // an interval of an object not registered: the whole run from the reference
}

func (s *schedTracker) init(w *RunWriter) {
	s.w = w
	s.rule = schedRuleOf(w.info.Format)
	s.keys = make(map[stateKey]*schedKey)
}

func (s *schedTracker) kindIsSched(k Sym) bool {
	if k < 0 {
		return s.rule.kinds == nil // a NULL kind is in no list
	}
	for int(k) >= len(s.kinds) {
		s.kinds = append(s.kinds, 0)
	}
	if s.kinds[k] == 0 {
		s.kinds[k] = 1
		if s.rule.kindIsSched(s.w.syms.str(k)) {
			s.kinds[k] = 2
		}
	}
	return s.kinds[k] == 2
}

func (s *schedTracker) classOf(state Sym) SchedClass {
	if state < 0 {
		return s.rule.class("", true)
	}
	for int(state) >= len(s.class) {
		s.class = append(s.class, 0)
	}
	if s.class[state] == 0 {
		s.class[state] = s.rule.class(s.w.syms.str(state), false) + 1
	}
	return s.class[state] - 1
}

// interval takes one state interval as the stateTracker writes it (end
// already clamped).
func (s *schedTracker) interval(obj ObjectID, inst int64, o *openInterval, end int64, trunc bool) error {
	if s.rule == nil || s.runWide {
		return nil
	}
	i := int(obj) - 1
	if i < 0 {
		return nil // no object: in no view
	}
	if i >= len(s.w.objects) {
		s.runWide = true
		s.release()
		return nil
	}
	if i >= len(s.objs) {
		s.objs = append(s.objs, make([]schedObj, len(s.w.objects)-len(s.objs))...)
	}
	so := &s.objs[i]
	if kind := s.w.objects[i].kind; !so.seen {
		so.seen, so.kind, so.sched = true, kind, s.kindIsSched(kind)
	} else if kind != so.kind && s.kindIsSched(kind) != so.sched {
		s.fallback(obj, fallbackKind)
	}
	if so.fallback != "" || !so.sched || (s.rule.instance0 && inst != 0) {
		return nil
	}
	c := s.classOf(o.state)
	if c == SchedNone {
		return nil
	}
	s.nIntervals++
	s.putDuration(obj, c, end-o.start, trunc)
	k := stateKey{obj, inst}
	ks := s.keys[k]
	if ks == nil {
		if s.rule.byInstance && so.hasClosed(inst) {
			s.fallback(obj, fallbackReused)
			return nil
		}
		if n := len(s.spare); n > 0 {
			ks = s.spare[n-1]
			s.spare = s.spare[:n-1]
			*ks = schedKey{}
		} else {
			ks = new(schedKey)
		}
		s.keys[k] = ks
	}
	x := schedIv{class: c, state: o.state, start: o.start, end: end, seq: o.startSeq, cpu: o.cpu, trunc: trunc}
	if why := s.step(obj, inst, ks, &x); why != "" {
		s.fallback(obj, why)
		return s.w.out.err()
	}
	if s.rule.byInstance && s.w.states.open[k] == nil {
		// the instance ended (terminate): its row is complete
		if ks.jobOpen {
			s.putJob(obj, ks)
		}
		delete(s.keys, k)
		s.spare = append(s.spare, ks)
		if !so.addClosed(inst) {
			s.fallback(obj, fallbackTooMany)
		}
	}
	return s.flush(false)
}

// step walks one interval of a key: the wait for a CPU and the task
// instance it belongs to, as the windows of task_instances and
// sched_latency do. It returns why the object must come from the
// reference, or "".
func (s *schedTracker) step(obj ObjectID, inst int64, ks *schedKey, x *schedIv) string {
	prevClass := SchedNone
	contiguous := false
	if ks.have {
		if !ks.prev.before(x) {
			return fallbackOrder
		}
		prevClass = ks.prev.class
		contiguous = ks.prev.end == x.start
	}

	// sched_latency: runs of contiguous ready intervals, kept when the
	// next interval is running and starts where the last ready one ends.
	joined := false
	if ks.waitOpen {
		if x.class == SchedReady && prevClass == SchedReady && contiguous {
			if x.start == ks.waitStart && ks.waitPreempt {
				return fallbackTie
			}
			ks.waitTrunc = ks.waitTrunc || x.trunc
			joined = true
		} else {
			if x.class == SchedRunning && contiguous {
				s.putWait(obj, ks.waitStart, x.start, x.cpu, ks.waitPreempt, ks.waitTrunc)
			}
			ks.waitOpen = false
		}
	}
	if x.class == SchedReady && !joined {
		ks.waitOpen, ks.waitStart, ks.waitTrunc = true, x.start, x.trunc
		ks.waitPreempt = prevClass == SchedRunning && contiguous
	}

	// task_instances
	switch {
	case s.rule.byInstance:
		if !ks.jobOpen {
			s.openJob(ks, inst, NoSym, x)
		}
		s.addToJob(ks, x, prevClass, contiguous)
	case x.class == SchedBlocked:
		if ks.jobOpen {
			s.putJob(obj, ks)
		}
	default:
		if !ks.have || prevClass == SchedBlocked || !contiguous {
			if ks.jobOpen {
				s.putJob(obj, ks)
			}
			woke := NoSym
			if prevClass == SchedBlocked && contiguous {
				woke = ks.prev.state
			}
			ks.jobN++
			s.openJob(ks, ks.jobN, woke, x)
		}
		s.addToJob(ks, x, prevClass, contiguous)
	}
	ks.have, ks.prev = true, *x
	return ""
}

func (s *schedTracker) openJob(ks *schedKey, n int64, woke Sym, x *schedIv) {
	ks.jobOpen, ks.jobN, ks.woke = true, n, woke
	ks.activation, ks.end = x.start, x.end
	ks.ran, ks.runStart, ks.lastRunCPU = false, 0, NoCPU
	ks.exec, ks.ready, ks.waiting, ks.preempt, ks.migrate = 0, 0, 0, 0, 0
	ks.jobTrunc = false
}

func (s *schedTracker) addToJob(ks *schedKey, x *schedIv, prevClass SchedClass, contiguous bool) {
	ks.end = max(ks.end, x.end)
	ks.jobTrunc = ks.jobTrunc || x.trunc
	dur := x.end - x.start
	switch x.class {
	case SchedRunning:
		if ks.ran && x.cpu >= 0 && ks.lastRunCPU >= 0 && x.cpu != ks.lastRunCPU {
			ks.migrate++
		}
		if !ks.ran {
			ks.ran, ks.runStart = true, x.start
		}
		ks.lastRunCPU = x.cpu
		ks.exec += dur
	case SchedReady:
		ks.ready += dur
		if prevClass == SchedRunning && contiguous {
			ks.preempt++
		}
	case SchedWaiting:
		ks.waiting += dur
	}
}

func (s *schedTracker) putJob(obj ObjectID, ks *schedKey) {
	ks.jobOpen = false
	if s.inst == nil {
		s.inst = newBatchCounting(s.w.mem, TableSchedInstances, s.w.syms, &s.w.badUTF8)
	}
	b := s.inst
	b.i32(0).Append(s.w.info.RunID)
	b.i32(1).Append(int32(obj))
	b.i64(2).Append(ks.jobN)
	b.sym(3).put(ks.woke)
	b.i64(4).Append(ks.activation)
	b.i64(5).put(ks.runStart, !ks.ran)
	b.i64(6).Append(ks.end)
	b.i64(7).Append(ks.exec)
	b.i64(8).Append(ks.ready)
	b.i64(9).Append(ks.waiting)
	b.i64(10).Append(ks.preempt)
	b.i64(11).Append(ks.migrate)
	b.boolc(12).Append(ks.jobTrunc)
	b.rows++
	s.nInst++
}

func (s *schedTracker) putWait(obj ObjectID, ready, run int64, cpu CPU, preempted, trunc bool) {
	if s.waits == nil {
		s.waits = newBatchCounting(s.w.mem, TableSchedWaits, s.w.syms, &s.w.badUTF8)
	}
	b := s.waits
	b.i32(0).Append(s.w.info.RunID)
	b.i32(1).Append(int32(obj))
	b.i64(2).Append(ready)
	b.i64(3).Append(run)
	b.i32(4).put(int32(cpu), cpu < 0)
	b.boolc(5).Append(preempted)
	b.boolc(6).Append(trunc)
	b.rows++
	s.nWaits++
}

func (s *schedTracker) putDuration(obj ObjectID, c SchedClass, dur int64, trunc bool) {
	if s.durs == nil {
		s.durs = newBatchCounting(s.w.mem, TableSchedDurations, s.w.syms, &s.w.badUTF8)
	}
	b := s.durs
	b.i32(0).Append(s.w.info.RunID)
	b.i32(1).Append(int32(obj))
	b.i32(2).Append(int32(c))
	b.i64(3).Append(dur)
	b.boolc(4).Append(trunc)
	b.rows++
}

// schedBatchShare: the scheduling tables are sent in batches of a quarter
// of the others' rows. Their three batches grow together, beside those of
// events and state_intervals: at the full size they added 35-40 MB to the
// peak RSS of a 10M-event BTF ingest; smaller, DuckDB fills its row groups
// across them all the same, for a few more INSERTs (about 60 more at 10M
// events).
const schedBatchShare = 4

// flush sends the batches that are full (all when force).
func (s *schedTracker) flush(force bool) error {
	full := max(1, s.w.batchRows/schedBatchShare)
	if b := s.inst; b != nil && b.rows > 0 && (force || b.rows >= full) {
		if err := s.w.putWithSymbols(TableSchedInstances, s.record(b, force)); err != nil {
			return err
		}
	}
	if b := s.waits; b != nil && b.rows > 0 && (force || b.rows >= full) {
		if err := s.w.out.put(TableSchedWaits, s.record(b, force)); err != nil {
			return err
		}
	}
	if b := s.durs; b != nil && b.rows > 0 && (force || b.rows >= full) {
		if err := s.w.out.put(TableSchedDurations, s.record(b, force)); err != nil {
			return err
		}
	}
	return nil
}

// record is a full batch's record, ready for the next rows; the last one
// (at the end of the run) reserves nothing more.
func (s *schedTracker) record(b *batch, last bool) arrow.Record {
	if last {
		return b.record()
	}
	return b.flushed()
}

// fallback leaves obj to the reference and forgets what is kept of it.
func (s *schedTracker) fallback(obj ObjectID, why string) {
	so := &s.objs[obj-1]
	if so.fallback != "" {
		return
	}
	so.fallback = why
	so.closed = nil
	s.fallbacks = append(s.fallbacks, obj)
	for k, ks := range s.keys {
		if k.obj == obj {
			delete(s.keys, k)
			s.spare = append(s.spare, ks)
		}
	}
}

func (so *schedObj) hasClosed(inst int64) bool {
	i := sort.Search(len(so.closed), func(i int) bool { return so.closed[i][1] >= inst })
	return i < len(so.closed) && so.closed[i][0] <= inst
}

// addClosed records that instance inst ended: closed holds sorted,
// disjoint ranges that do not touch. False when the object would have more
// than schedMaxClosed of them.
func (so *schedObj) addClosed(inst int64) bool {
	c := so.closed
	// the first range that holds inst or ends just below it, or lies above
	i := sort.Search(len(c), func(i int) bool { return c[i][1] >= inst || c[i][1]+1 == inst })
	switch {
	case i < len(c) && c[i][0] <= inst && inst <= c[i][1]:
		return true
	case i < len(c) && c[i][1] < inst: // ends at inst-1
		c[i][1] = inst
		if i+1 < len(c) && c[i+1][0]-1 == inst {
			c[i][1] = c[i+1][1]
			c = append(c[:i+1], c[i+2:]...)
		}
	case i < len(c) && c[i][0]-1 == inst:
		c[i][0] = inst
	default:
		if len(c) >= schedMaxClosed {
			return false
		}
		c = append(c, [2]int64{})
		copy(c[i+1:], c[i:])
		c[i] = [2]int64{inst, inst}
	}
	so.closed = c
	return true
}

// finish writes the rows still open at the end of the run, the objects
// left to the reference and the run's row of TableSchedRuns.
func (s *schedTracker) finish() error {
	if s.runWide {
		s.release()
		return s.w.out.err()
	}
	// an object whose kind changed after its last interval (a format
	// without scheduling states has none: its run has its row, of zeros)
	for i := 0; s.rule != nil && i < len(s.objs); i++ {
		so := &s.objs[i]
		if so.seen && so.fallback == "" && s.w.objects[i].kind != so.kind &&
			s.kindIsSched(s.w.objects[i].kind) != so.sched {
			s.fallback(ObjectID(i+1), fallbackKind)
		}
	}
	keys := make([]stateKey, 0, len(s.keys))
	for k := range s.keys {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].obj != keys[j].obj {
			return keys[i].obj < keys[j].obj
		}
		return keys[i].inst < keys[j].inst
	})
	for _, k := range keys {
		ks := s.keys[k]
		if ks.jobOpen {
			s.putJob(k.obj, ks)
		}
		if err := s.flush(false); err != nil {
			s.release()
			return err
		}
	}
	clear(s.keys)
	if err := s.flush(true); err != nil {
		s.release()
		return err
	}
	s.release()
	if len(s.fallbacks) > 0 {
		sort.Slice(s.fallbacks, func(i, j int) bool { return s.fallbacks[i] < s.fallbacks[j] })
		b := newBatchCounting(s.w.mem, TableSchedFallback, s.w.syms, &s.w.badUTF8)
		defer b.release()
		for start := 0; start < len(s.fallbacks); start += s.w.batchRows {
			end := min(start+s.w.batchRows, len(s.fallbacks))
			b.reserve(end - start)
			for _, obj := range s.fallbacks[start:end] {
				b.i32(0).Append(s.w.info.RunID)
				b.i32(1).Append(int32(obj))
				b.dict(2).put(s.w.syms.intern(s.objs[obj-1].fallback))
				b.rows++
			}
			if err := s.w.out.put(TableSchedFallback, b.record()); err != nil {
				return err
			}
		}
	}
	b := newBatchCounting(s.w.mem, TableSchedRuns, s.w.syms, &s.w.badUTF8)
	defer b.release()
	b.reserve(1)
	b.i32(0).Append(s.w.info.RunID)
	b.i64(1).Append(s.nIntervals)
	b.i64(2).Append(s.nInst)
	b.i64(3).Append(s.nWaits)
	b.i64(4).Append(int64(len(s.fallbacks)))
	b.rows++
	return s.w.out.put(TableSchedRuns, b.record())
}

func (s *schedTracker) release() {
	if s.inst != nil {
		s.inst.release()
		s.inst = nil
	}
	if s.waits != nil {
		s.waits.release()
		s.waits = nil
	}
	if s.durs != nil {
		s.durs.release()
		s.durs = nil
	}
	s.keys = nil
	s.spare = nil
}
