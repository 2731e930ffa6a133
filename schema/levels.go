package schema

import (
	"math"
	"strings"
	"unicode/utf8"
)

// levelMerger writes the state traces of the aggregation levels above 0
// (table state_level_intervals) while the run's intervals close, so that
// no query has to merge them: state_trace_levels in
// queries/state_aggregation.sql defines them, and its SQL stays as the
// reference (state_trace_levels_reference) that a test per format compares
// these rows with. The definition, as the merger follows it:
//
//  1. An interval's state is mapped up the levels of state_levels (a state
//     with no row at a level keeps its name); intervals of 0 ns are left
//     out.
//  2. An object's intervals are one sequence, unless two of them overlap
//     in time (and the object is not a processor): then each instance is
//     its own sequence.
//  3. In a sequence, in time order, intervals of the same state at the
//     level that meet (one starts where the one before ended) are one.
//
// Three things are not known while intervals close, and how the merger
// does without them:
//
//   - The names of the levels. The CPU model declares the processor states'
//     levels at the end (CPUTracker.finish: which holders are idle tasks, a
//     process's label); a format may declare a state's level after some of
//     its intervals closed. Intervals are merged under keys instead: for a
//     processor, what the CPU model knows of the holder (its process
//     object, its group, idle or not: CPUTracker.levelTokens); for other
//     objects, the name the levels declared so far give. A key is named at
//     the end, from the final levels, and its rows carry it as a late
//     symbol (see lateSymbol). The keys are right when every state merged
//     under a key has the key's name at the end, and no two keys of a kind
//     and level share a name (then merging by key is merging by name); a
//     kind whose keys are not right (or whose depth grew after some of its
//     intervals closed) is left to the reference SQL.
//   - Whether an object's intervals overlap, known only at its end. While
//     an object's intervals arrive in time order, none overlapping the
//     ones before (clean), they are merged as one sequence. The first
//     interval that starts before the end of one that came before turns
//     the object to one sequence per instance (instance mode): it is
//     proven overlapping when that interval overlaps, in another instance,
//     the one that ended last (else the proof may come later; without one
//     the object is left to the reference). For the switch, the last
//     merged interval of each instance is held back (in a few slots per
//     object: levelSlots), since in instance mode the instance's next
//     interval may continue it; a merged interval made of several
//     instances (never one in instance mode) makes a later switch leave the
//     object to the reference.
//   - The object's kind (a format may change it): an object whose
//     intervals closed under another kind than its last is left to the
//     reference.
//
// Objects left to the reference are listed in state_level_objects with
// materialized = false, and the views merge their intervals from
// state_intervals with the reference SQL; the rows written for them are
// not read. Memory: per object with levels, its pending merged interval
// per level and at most levelSlots held per level; nothing grows with the
// number of intervals.
type levelMerger struct {
	w       *RunWriter
	b       *batch
	kinds   map[Sym]*lvKind
	last    *lvKind
	keys    []lvKeyRef
	keyID   map[lvKeyRef]int32
	objs    []*lvObject // by ObjectID
	kindOf  []Sym       // by ObjectID: the kind its intervals closed under (NoSym: none yet, mixedKinds: several)
	heldAll int         // intervals held in all kinds (park)
	// the first object id that had intervals before it was registered
	// (or may have: 0, none): that object and those after it are left to
	// the reference
	unregFrom ObjectID
	// what the state tree (statetree.go) reads when the run ends: the
	// keys' names, whether every object's merged intervals are stored,
	// and whether a row was written that pruning may remove
	names     []lvName
	named     []bool
	allStored bool
	perOf     map[ObjectID]bool // the objects with tagged rows: per_instance
	// statistics for tests and benchmarks
	rows int64
	off  bool // benchmarks: merge nothing
}

// levelSlots is how many instances of an object hold their last merged
// interval back (see levelMerger). An instance whose slot is taken by
// another writes it; an interval that could continue one written so
// (an instance without a slot that starts at or before the end of one
// written) leaves the object to the reference.
const levelSlots = 16

const mixedKinds Sym = -2

// lvKeyRef is what a key stands for: a state at a level of a kind, as the
// merger knew it when an interval closed (token: "n" + the name the
// levels declared so far give; the CPU model's tokens, see levelTokens).
type lvKeyRef struct {
	kind  Sym
	level int32
	token string
}

// lvKind holds the keys of the states of one kind, per level.
type lvKind struct {
	kind   Sym
	cpu    bool      // the kind is "cpu": the CPU model's keys
	chains [][]int32 // by state sym: the keys at levels 1..depth; nil: not made yet
	null   []int32   // the chain of the NULL state
	used   []Sym     // the states whose chain was made, in order
	// the kind's depth (levels declared so far) and the writer's
	// levelGen it was read at
	depth int32
	gen   int64
	held  []lvHeld // intervals that closed while it had no levels (park)
	// an interval closed while the kind had no levels, and was not held
	depth0 bool
}

// lvPart is one interval, a part of a merged one.
type lvPart struct {
	inst       int64
	start, end int64
	cpu        CPU
	startSeq   Seq
	endSeq     Seq
	trunc      bool
}

// lvRun is a merged interval being made.
type lvRun struct {
	key       int32 // -1: none
	start     int64
	end       int64
	inst      int64
	multiInst bool
	cpu       CPU
	cpuMixed  bool // parts on several processors, or on one not known
	startSeq  Seq
	endSeq    Seq
	parts     int64
	trunc     bool
	// only: 0, a merged interval whatever the object's sequences; onlyOne,
	// only if the object is one sequence (one made of several instances);
	// onlyInstance, only if each instance is one (a part of such a one
	// from one instance)
	only uint8
}

const (
	onlyOne      uint8 = 1
	onlyInstance uint8 = 2
)

func (r *lvRun) begin(key int32, x *lvPart) {
	*r = lvRun{key: key, start: x.start, end: x.end, inst: x.inst, cpu: x.cpu, cpuMixed: x.cpu < 0,
		startSeq: x.startSeq, endSeq: x.endSeq, parts: 1, trunc: x.trunc}
}

func (r *lvRun) extend(x *lvPart) {
	r.end, r.endSeq = x.end, x.endSeq
	r.parts++
	r.trunc = r.trunc || x.trunc
	if x.inst != r.inst {
		r.multiInst = true
	}
	if x.cpu != r.cpu || x.cpu < 0 {
		r.cpuMixed = true
	}
}

// lvClock follows a clean object's intervals so that an interval put out
// of order only by intervals of 0 ns does not turn the object to
// instances. Intervals are written as their states end, not in time
// order: a QNX thread's THREAD_DESTROYALL of 0 ns (on instance 1) is
// written before the RUNNING of instance 0 that ends where it is (3
// threads in 17,880 of a 10M-event QNX run, which kept the run's whole
// state tree from being stored). The reference calls an
// object overlapping when, in time order (start, then end), an interval
// starts before the greatest end of those before it; an interval of 0 ns
// at t is so exactly when one starts before t and ends after it, and it
// never makes one after it so. Intervals of 0 ns are left out of the
// levels, so the merged rows are those of the other intervals in time
// order.
type lvClock struct {
	start, end int64 // the last interval that is not 0 ns (the latest: the object is clean)
	prevEnd    int64 // the greatest end of those before it
	zMin       int64 // the least time of the 0 ns intervals at or after end (MaxInt64: none)
}

// inOrder follows x, which starts at or after the end of every interval
// before it.
func (c *lvClock) inOrder(x *lvPart) {
	if x.end == x.start {
		c.zMin = min(c.zMin, x.start)
		return
	}
	c.start, c.end, c.prevEnd, c.zMin = x.start, x.end, c.end, math.MaxInt64
}

// late says whether x, which starts before the end of an interval that
// came before it, overlaps none and comes in time order among those that
// are not 0 ns; if so, it follows x.
func (c *lvClock) late(x *lvPart) bool {
	if x.end == x.start {
		// inside none: after every one, or in the gap before the last
		if x.start >= c.end {
			c.zMin = min(c.zMin, x.start)
			return true
		}
		return x.start >= c.prevEnd && x.start <= c.start
	}
	// after every one that is not 0 ns, and ending by every 0 ns one after
	// those (none is inside it)
	if x.start < c.end || x.end > c.zMin {
		return false
	}
	c.start, c.end, c.prevEnd = x.start, x.end, c.end
	return true
}

// lvSlot holds an instance's last merged interval at each level.
type lvSlot struct {
	inst    int64
	lastEnd int64 // end of its last interval (not 0 ns)
	used    uint64
	runs    []lvRun
}

const (
	lvClean    uint8 = iota // one sequence; the intervals came in time order, none overlapping
	lvInstance              // one sequence per instance
	lvFallback              // left to the reference
)

// lvObject is the merging state of one object.
type lvObject struct {
	depth   int
	mode    uint8
	cpuKind bool // merged as a processor: one sequence, whatever its intervals
	proven  bool // two intervals of different instances overlap
	// the interval that ended last (of those that came so far)
	have                      bool
	maxStart, maxEnd, maxInst int64
	// clean: what a late interval is judged by (lvClock)
	nz lvClock
	// clean: the merged interval being made at each level, and its last
	// part of one instance (the whole of it while it has one instance)
	runs   []lvRun
	blocks []lvRun
	slots  []lvSlot
	last   int // the slot slot returned last
	tick   uint64
	tagged bool // a row was written with per_instance: prune the run
	// a slot was taken for another instance: its intervals were written
	// although the instance's next interval might have continued them (in
	// instance mode), the last of them ending at uncertainEnd at most
	uncertain    bool
	uncertainEnd int64
}

func (m *levelMerger) init(w *RunWriter) {
	m.w = w
	m.kinds = map[Sym]*lvKind{}
	m.keyID = map[lvKeyRef]int32{}
}

// interval merges one state interval as it is written to state_intervals.
func (m *levelMerger) interval(obj ObjectID, x *lvPart, state Sym) error {
	if m.off {
		return nil
	}
	w := m.w
	if obj < 1 {
		return nil // no object: in no view
	}
	if int(obj) > len(w.objects) {
		// an object id the run has not registered (yet): its kind is
		// unknown, so the levels of the objects registered from now on
		// (it may be one of them) are left to the reference; nothing is
		// allocated for the id
		if from := ObjectID(len(w.objects) + 1); m.unregFrom == 0 || from < m.unregFrom {
			m.unregFrom = from
		}
		return nil
	}
	o := &w.objects[obj-1]
	for int(obj) >= len(m.kindOf) {
		m.kindOf = append(m.kindOf, NoSym)
	}
	switch ku := m.kindOf[obj]; ku {
	case o.kind, mixedKinds:
	case NoSym:
		m.kindOf[obj] = o.kind
	default:
		m.kindOf[obj] = mixedKinds
	}
	k := m.last
	if k == nil || k.kind != o.kind {
		k = m.kinds[o.kind]
		if k == nil {
			k = &lvKind{kind: o.kind, cpu: w.syms.str(o.kind) == "cpu", gen: -1}
			m.kinds[o.kind] = k
		}
		m.last = k
	}
	return m.add(k, obj, x, state)
}

// add merges an interval of an object of kind k.
func (m *levelMerger) add(k *lvKind, obj ObjectID, x *lvPart, state Sym) error {
	chain := m.chain(k, obj, x.inst, state)
	if len(chain) == 0 {
		m.park(k, obj, x, state)
		return nil
	}
	if len(k.held) > 0 {
		if err := m.replay(k); err != nil {
			return err
		}
	}
	for int(obj) >= len(m.objs) {
		m.objs = append(m.objs, nil)
	}
	om := m.objs[obj]
	if om == nil {
		om = &lvObject{depth: len(chain), cpuKind: k.cpu, runs: make([]lvRun, len(chain)), blocks: make([]lvRun, len(chain))}
		for i := range om.runs {
			om.runs[i].key, om.blocks[i].key = -1, -1
		}
		m.objs[obj] = om
	}
	if om.mode == lvFallback {
		return nil
	}
	if len(chain) != om.depth || k.cpu != om.cpuKind {
		m.fallback(om)
		return nil
	}
	// Is the object still clean: does this interval start at or after
	// the end of every interval before it?
	switch {
	case !om.have:
		om.have, om.maxStart, om.maxEnd, om.maxInst = true, x.start, x.end, x.inst
		om.nz = lvClock{start: math.MinInt64, end: math.MinInt64, prevEnd: math.MinInt64, zMin: math.MaxInt64}
		om.nz.inOrder(x)
	case x.start >= om.maxEnd:
		om.maxStart, om.maxEnd, om.maxInst = x.start, x.end, x.inst
		om.nz.inOrder(x)
	case om.mode == lvClean && om.nz.late(x):
		// late, but in time order among the intervals that are not 0 ns
		// and overlapping none: the object stays clean
	default:
		if om.cpuKind {
			m.fallback(om)
			return nil
		}
		if x.inst != om.maxInst && overlaps(om.maxStart, om.maxEnd, x.start, x.end) {
			om.proven = true
		}
		if om.mode == lvClean {
			if err := m.toInstances(obj, om); err != nil || om.mode == lvFallback {
				return err
			}
		}
		if x.end > om.maxEnd {
			om.maxStart, om.maxEnd, om.maxInst = x.start, x.end, x.inst
		}
	}
	if x.end == x.start {
		return nil // 0 ns: left out of the levels above 0
	}
	if om.mode == lvClean {
		for i, key := range chain {
			r := &om.runs[i]
			if om.cpuKind {
				if r.key == key && r.end == x.start {
					r.extend(x)
					continue
				}
				if r.key >= 0 {
					if err := m.emit(obj, i+1, r); err != nil {
						return err
					}
				}
				r.begin(key, x)
				continue
			}
			b := &om.blocks[i]
			if r.key == key && r.end == x.start {
				r.extend(x)
				if x.inst == b.inst {
					b.extend(x)
					continue
				}
				// another instance continues it: its part so far is one
				// only if each instance is a sequence
				b.only = onlyInstance
				if err := m.hold(obj, om, i, b); err != nil || om.mode == lvFallback {
					return err
				}
				b.begin(key, x)
				b.only = onlyInstance
				continue
			}
			if r.key >= 0 {
				if err := m.done(obj, om, i); err != nil || om.mode == lvFallback {
					return err
				}
			}
			r.begin(key, x)
			b.begin(key, x)
		}
		return nil
	}
	// instance mode
	s, err := m.slot(obj, om, x.inst, x.start, true)
	if s == nil {
		return err
	}
	if x.start < s.lastEnd {
		// the instance's own intervals overlap: not a sequence the
		// merge can follow
		m.fallback(om)
		return nil
	}
	for i, key := range chain {
		r := &s.runs[i]
		if r.key == key && r.end == x.start {
			r.extend(x)
			continue
		}
		if r.key >= 0 {
			if err := m.emit(obj, i+1, r); err != nil {
				return err
			}
		}
		r.begin(key, x)
	}
	s.lastEnd = x.end
	return nil
}

// park keeps an interval of a kind that has no levels yet, to be merged
// if it gets some (formats declare a state's level when they first meet
// the state, and some of the kind's intervals may have closed before):
// at most levelHeld per kind and levelHeldAll in all; past that, or once
// the kind has levels, the kind's intervals that closed without levels
// make the kind one the views leave to the reference (depth0).
func (m *levelMerger) park(k *lvKind, obj ObjectID, x *lvPart, state Sym) {
	if k.depth0 {
		return
	}
	if len(k.held) >= levelHeld || m.heldAll >= levelHeldAll {
		k.depth0 = true
		m.heldAll -= len(k.held)
		k.held = nil
		return
	}
	k.held = append(k.held, lvHeld{obj: obj, part: *x, state: state})
	m.heldAll++
}

// replay merges the intervals a kind held while it had no levels, in the
// order they closed.
func (m *levelMerger) replay(k *lvKind) error {
	held := k.held
	k.held = nil
	m.heldAll -= len(held)
	for i := range held {
		h := &held[i]
		if err := m.add(k, h.obj, &h.part, h.state); err != nil {
			return err
		}
	}
	return nil
}

const (
	levelHeld    = 1 << 14
	levelHeldAll = 1 << 16
)

// lvHeld is an interval kept by park.
type lvHeld struct {
	obj   ObjectID
	part  lvPart
	state Sym
}

// overlaps tells whether two intervals overlap as the reference finds it:
// in (start, end) order, the second starts before the first ends (so one
// of 0 ns overlaps only an interval it lies strictly inside).
func overlaps(as, ae, bs, be int64) bool {
	if bs < as || (bs == as && be < ae) {
		as, ae, bs, be = bs, be, as, ae
	}
	return bs < ae
}

// done takes the merged interval of level i of a clean object, which is
// complete: one of several instances is written (only if the object is one
// sequence), its last part held in its instance's slot (only if each
// instance is one); one of a single instance is held in its instance's
// slot (instance mode may continue it).
func (m *levelMerger) done(obj ObjectID, om *lvObject, i int) error {
	r, b := &om.runs[i], &om.blocks[i]
	if r.multiInst {
		r.only = onlyOne
		if err := m.emit(obj, i+1, r); err != nil {
			return err
		}
	}
	r.key = -1
	return m.hold(obj, om, i, b)
}

// hold keeps a merged interval of one instance (at level i) in the
// instance's slot, and writes the one held before: the instance's next
// interval came after another instance's, it cannot continue it.
func (m *levelMerger) hold(obj ObjectID, om *lvObject, i int, r *lvRun) error {
	s, err := m.slot(obj, om, r.inst, r.start, false)
	if s == nil {
		return err
	}
	if h := &s.runs[i]; h.key >= 0 {
		if err := m.emit(obj, i+1, h); err != nil {
			return err
		}
	}
	s.runs[i] = *r
	s.lastEnd = max(s.lastEnd, r.end)
	r.key = -1
	return nil
}

// slot returns the slot of an instance, making one (the least recently
// used one's intervals written) when it has none. With check (an interval
// of an object in instance mode), an instance without a slot whose
// interval starts at or before the end of an interval written so leaves
// the object to the reference (it might have continued it): slot returns
// nil then.
func (m *levelMerger) slot(obj ObjectID, om *lvObject, inst, start int64, check bool) (*lvSlot, error) {
	om.tick++
	if om.last < len(om.slots) && om.slots[om.last].inst == inst {
		s := &om.slots[om.last]
		s.used = om.tick
		return s, nil
	}
	for i := range om.slots {
		if s := &om.slots[i]; s.inst == inst {
			s.used, om.last = om.tick, i
			return s, nil
		}
	}
	if check && om.uncertain && start <= om.uncertainEnd {
		m.fallback(om)
		return nil, nil
	}
	var s *lvSlot
	if len(om.slots) < levelSlots {
		if om.slots == nil {
			om.slots = make([]lvSlot, 0, levelSlots) // never moves: callers hold a slot while making another
		}
		om.slots = append(om.slots, lvSlot{runs: make([]lvRun, om.depth)})
		om.last = len(om.slots) - 1
		s = &om.slots[om.last]
	} else {
		om.last = 0
		for i := range om.slots {
			if om.slots[i].used < om.slots[om.last].used {
				om.last = i
			}
		}
		s = &om.slots[om.last]
		for i := range s.runs {
			if s.runs[i].key >= 0 {
				if err := m.emit(obj, i+1, &s.runs[i]); err != nil {
					return nil, err
				}
			}
		}
		if !om.uncertain || s.lastEnd > om.uncertainEnd {
			om.uncertain, om.uncertainEnd = true, s.lastEnd
		}
	}
	s.inst, s.used, s.lastEnd = inst, om.tick, minTime
	for i := range s.runs {
		s.runs[i] = lvRun{key: -1}
	}
	return s, nil
}

const minTime = -1 << 63

// toInstances turns a clean object to one sequence per instance: the
// last part of the merged interval being made at each level joins its
// instance's slot (the merged interval, if made of several instances, is
// not one then).
func (m *levelMerger) toInstances(obj ObjectID, om *lvObject) error {
	for i := range om.runs {
		if om.runs[i].key < 0 {
			continue
		}
		om.runs[i].key = -1
		if err := m.hold(obj, om, i, &om.blocks[i]); err != nil || om.mode == lvFallback {
			return err
		}
	}
	om.mode = lvInstance
	return nil
}

// fallback leaves an object to the reference.
func (m *levelMerger) fallback(om *lvObject) {
	om.mode = lvFallback
	om.runs, om.blocks, om.slots = nil, nil, nil
}

// emit writes one merged interval.
func (m *levelMerger) emit(obj ObjectID, level int, r *lvRun) error {
	w := m.w
	if m.b == nil {
		m.b = newBatchCounting(w.mem, TableStateLevelIntervals, w.syms, &w.badUTF8)
	}
	b := m.b
	b.i32(0).Append(w.info.RunID)
	b.i32(1).Append(int32(obj))
	b.i64(2).put(r.inst, r.multiInst)
	b.i32(3).Append(int32(level))
	b.sym(4).put(Sym(r.key))
	b.i64(5).Append(r.start)
	b.i64(6).Append(r.end)
	b.i32(7).put(int32(r.cpu), r.cpuMixed || r.cpu < 0)
	b.i64(8).put(int64(r.startSeq), r.startSeq < 0)
	b.i64(9).put(int64(r.endSeq), r.endSeq < 0)
	b.i64(10).Append(r.parts)
	b.boolc(11).Append(r.trunc)
	b.boolc(12).put(r.only == onlyInstance, r.only == 0)
	if r.only != 0 {
		if om := m.objs[obj]; om != nil {
			om.tagged = true
		}
	}
	b.rows++
	m.rows++
	w.tree.add(obj, int32(level), r.key, r.only, r.end-r.start, r.trunc)
	r.key = -1
	if b.rows >= w.batchRows {
		return w.out.put(TableStateLevelIntervals, b.flushed())
	}
	return nil
}

// chain returns the keys of a state of kind k at levels 1..depth (none
// when the kind has no levels), made the first time the state closes an
// interval of the kind.
func (m *levelMerger) chain(k *lvKind, obj ObjectID, inst int64, state Sym) []int32 {
	if state < 0 {
		if len(k.null) == 0 {
			k.null = m.makeChain(k, obj, inst, state)
		}
		return k.null
	}
	if int(state) < len(k.chains) {
		if c := k.chains[state]; c != nil {
			return c
		}
	}
	c := m.makeChain(k, obj, inst, state)
	if len(c) == 0 {
		return c // not kept: the kind may get levels
	}
	for int(state) >= len(k.chains) {
		k.chains = append(k.chains, nil)
	}
	k.chains[state] = c
	k.used = append(k.used, state)
	return c
}

var noChain = []int32{}

// depth is the kind's depth as the levels declared so far make it.
func (m *levelMerger) depth(k *lvKind) int32 {
	if k.gen != m.w.levelGen {
		k.depth, k.gen = m.w.kindDepth[k.kind], m.w.levelGen
	}
	return k.depth
}

func (m *levelMerger) makeChain(k *lvKind, obj ObjectID, inst int64, state Sym) []int32 {
	var tokens []string
	if k.cpu && m.w.cpus.isObject(obj) {
		tokens = m.w.cpus.levelTokens(inst, state)
	} else if d := m.depth(k); d > 0 {
		// the name the levels declared so far give, level by level
		cur, null := m.w.syms.str(state), state < 0
		for l := int32(0); l < d; l++ {
			if !null {
				if i, ok := m.w.levelAt[levelKey{k.kind, cur, l}]; ok && m.w.levelPar[i] != "" {
					cur = m.w.levelPar[i]
				}
			}
			if null {
				tokens = append(tokens, "0")
			} else {
				tokens = append(tokens, "n"+cur)
			}
		}
	}
	if len(tokens) == 0 {
		return noChain
	}
	c := make([]int32, len(tokens))
	for i, t := range tokens {
		ref := lvKeyRef{kind: k.kind, level: int32(i + 1), token: t}
		id, ok := m.keyID[ref]
		if !ok {
			id = int32(len(m.keys))
			m.keys = append(m.keys, ref)
			m.keyID[ref] = id
		}
		c[i] = id
	}
	return c
}

// lvName is a state name at a level; NULL when !ok.
type lvName struct {
	s  string
	ok bool
}

// finalLevels is the level map of state_levels as the views read it: per
// kind name, (level, state) -> parent (the first declared; "" none), and
// the depth.
type finalLevels struct {
	up    map[string]map[levelKey2]string
	depth map[string]int32
}

type levelKey2 struct {
	level int32
	state string
}

func repaired(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

func (w *RunWriter) finalLevels() finalLevels {
	f := finalLevels{up: map[string]map[levelKey2]string{}, depth: map[string]int32{}}
	for i, k := range w.levels {
		kn := w.syms.str(k.kind)
		m := f.up[kn]
		if m == nil {
			m = map[levelKey2]string{}
			f.up[kn] = m
		}
		key := levelKey2{k.level, repaired(k.state)}
		par := repaired(w.levelPar[i])
		if _, ok := m[key]; !ok {
			m[key] = par
		}
		if par != "" && k.level+1 > f.depth[kn] {
			f.depth[kn] = k.level + 1
		}
	}
	return f
}

// at is state's name at level l+1 of kind kn, state being its name at l.
func (f *finalLevels) at(kn string, l int32, state lvName) lvName {
	if !state.ok {
		return state
	}
	if p, ok := f.up[kn][levelKey2{l, state.s}]; ok && p != "" {
		return lvName{p, true}
	}
	return state
}

// finish writes the merged intervals still being made, checks the keys
// against the final levels, names them (TableLateSymbols) and writes
// state_level_objects. The levels must all be declared.
func (m *levelMerger) finish() error {
	w := m.w
	for _, k := range m.kinds {
		if len(k.held) > 0 && m.depth(k) > 0 {
			if err := m.replay(k); err != nil {
				return err
			}
		}
	}
	for obj, om := range m.objs {
		if om == nil || om.mode == lvFallback {
			continue
		}
		if om.mode == lvClean {
			for i := range om.runs {
				r, b := &om.runs[i], &om.blocks[i]
				if r.key < 0 {
					continue
				}
				if om.cpuKind || !r.multiInst {
					if err := m.emit(ObjectID(obj), i+1, r); err != nil {
						return err
					}
					continue
				}
				r.only = onlyOne
				if err := m.emit(ObjectID(obj), i+1, r); err != nil {
					return err
				}
				if err := m.emit(ObjectID(obj), i+1, b); err != nil {
					return err
				}
			}
		}
		for si := range om.slots {
			s := &om.slots[si]
			for i := range s.runs {
				if s.runs[i].key >= 0 {
					if err := m.emit(ObjectID(obj), i+1, &s.runs[i]); err != nil {
						return err
					}
				}
			}
		}
		om.runs, om.blocks, om.slots = nil, nil, nil
	}
	if m.b != nil && m.b.rows > 0 {
		if err := w.out.put(TableStateLevelIntervals, m.b.record()); err != nil {
			return err
		}
	}

	f := w.finalLevels()
	bad := map[string]bool{}
	names := make([]lvName, len(m.keys))
	named := make([]bool, len(m.keys))
	m.names, m.named, m.allStored = names, named, true
	check := func(kn string, c []int32, state lvName) {
		if int32(len(c)) != f.depth[kn] {
			bad[kn] = true
			return
		}
		for i, key := range c {
			state = f.at(kn, int32(i), state)
			if !named[key] {
				names[key], named[key] = state, true
			} else if names[key] != state {
				bad[kn] = true
			}
		}
	}
	for _, k := range m.kinds {
		kn := w.syms.str(k.kind)
		if k.depth0 && f.depth[kn] > 0 {
			bad[kn] = true
		}
		if k.null != nil {
			check(kn, k.null, lvName{})
		}
		for _, s := range k.used {
			check(kn, k.chains[s], lvName{w.syms.str(s), true})
		}
	}
	type nameAt struct {
		kind  string
		level int32
		name  lvName
	}
	owner := map[nameAt]int32{}
	for id, ref := range m.keys {
		if !named[id] {
			continue
		}
		kn := w.syms.str(ref.kind)
		at := nameAt{kn, ref.level, names[id]}
		if other, ok := owner[at]; ok && other != int32(id) {
			bad[kn] = true
		} else {
			owner[at] = int32(id)
		}
	}
	if len(m.keys) > 0 {
		b := newBatchCounting(w.mem, TableLateSymbols, w.syms, &w.badUTF8)
		b.reserve(len(m.keys))
		for id, ref := range m.keys {
			b.i32(0).Append(int32(id))
			switch {
			case named[id] && names[id].ok:
				b.str(1).add(names[id].s)
			case named[id]:
				b.str(1).AppendNull()
			default:
				b.str(1).add(ref.token) // not read: its kind is left to the reference
			}
			b.rows++
		}
		err := w.out.put(TableLateSymbols, b.record())
		b.release()
		if err != nil {
			return err
		}
	}

	b := newBatchCounting(w.mem, TableStateLevelObjects, w.syms, &w.badUTF8)
	defer b.release()
	prune := false
	for i := range w.objects {
		obj := ObjectID(i + 1)
		kn := w.syms.str(w.objects[i].kind)
		if f.depth[kn] <= 0 {
			continue
		}
		b.i32(0).Append(w.info.RunID)
		b.i32(1).Append(int32(obj))
		mat, per := m.materialized(obj, kn, bad)
		if !mat {
			m.allStored = false
		}
		b.boolc(2).Append(mat)
		b.boolc(3).put(per, !mat)
		b.rows++
		if int(obj) < len(m.objs) && m.objs[obj] != nil && (!mat || m.objs[obj].tagged) {
			prune = true
			if mat {
				if m.perOf == nil {
					m.perOf = map[ObjectID]bool{}
				}
				m.perOf[obj] = per
			}
		}
		if b.rows >= w.batchRows {
			if err := w.out.put(TableStateLevelObjects, b.record()); err != nil {
				return err
			}
		}
	}
	if b.rows > 0 {
		if err := w.out.put(TableStateLevelObjects, b.record()); err != nil {
			return err
		}
	}
	if !prune {
		return nil
	}
	p := newBatch(w.mem, TablePruneLevels, w.syms)
	defer p.release()
	p.i32(0).Append(w.info.RunID)
	p.rows++
	return w.out.put(TablePruneLevels, p.record())
}

// materialized tells whether the rows written for obj, of final kind kn,
// are its merged intervals, and if so whether each of its instances is a
// sequence of its own.
func (m *levelMerger) materialized(obj ObjectID, kn string, bad map[string]bool) (mat, perInstance bool) {
	if m.unregFrom > 0 && obj >= m.unregFrom {
		return false, false
	}
	if int(obj) >= len(m.kindOf) || m.kindOf[obj] == NoSym {
		return true, false // no interval
	}
	if ku := m.kindOf[obj]; ku == mixedKinds || m.w.syms.str(ku) != kn || bad[kn] {
		return false, false
	}
	if int(obj) >= len(m.objs) || m.objs[obj] == nil {
		return false, false
	}
	switch om := m.objs[obj]; om.mode {
	case lvClean:
		return true, false
	case lvInstance:
		return om.proven && kn != "cpu", true
	}
	return false, false
}

func (m *levelMerger) release() {
	if m.b != nil {
		m.b.release()
		m.b = nil
	}
	m.objs = nil
}
