package schema

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// The CPU model (docs/semantics.md, "Who holds a CPU"): one tracker, fed
// by every format with the same few verbs, decides what holds each
// processor and writes it as the state intervals of the processor's
// object (kind cpu), from which the view cpu_intervals and every CPU
// number (cpu_load, cpu_utilization, the report, the Chrome export) are
// computed.
//
//  1. A processor runs at most one *base* holder at a time: a task,
//     thread or idle task (Run; Stop or Idle leave it with none, and a
//     holder that runs on one processor stops on the one it ran on
//     before).
//  2. Interrupts nest over it (Enter, Leave): the innermost one holds the
//     processor; leaving gives it back to the one below, and finally to
//     the base holder. Leaving an interrupt that is not the innermost
//     leaves the inner ones too (their exits were not traced).
//  3. What the processor shows is the innermost interrupt, else the base
//     holder, else nothing ("idle"). Each change closes the processor's
//     interval and opens the next: instance = the holder's object_id (0
//     when nothing runs), state = the holder's name (the run's idle word
//     when nothing runs), so that two holders never share an interval.
//  4. A processor whose holder the trace does not tell (before its first
//     event, after lost events: Unknown; after a holder whose end it told
//     but not what came next: Forget) has no interval.
//  5. At the end, the tracker declares the processor states' levels, the
//     same four in every format: level 0 the holder; level 1 its process
//     (an interrupt, or a holder without a process, keeps its name; an
//     idle holder becomes the idle group); level 2 the group (the
//     format's words for tasks or threads, interrupts, idle); level 3
//     busy or idle. Idle holders are those the format declares idle, and
//     those whose name matches the format's idle-task names or the
//     user's --idle-task patterns; they get attrs.idle = true.

// HolderRole is what a holder is to its processor.
type HolderRole uint8

const (
	// RoleTask: a task, thread or process; the processor is busy.
	RoleTask HolderRole = iota
	// RoleInterrupt: an ISR, interrupt or handler; busy. It is entered
	// over what runs (Enter) rather than run (Run).
	RoleInterrupt
	// RoleIdle: the RTOS's idle task or idle thread: it holds the
	// processor, which is idle.
	RoleIdle
	// RoleKernel: kernel work of no thread (DTrace's dispatcher between
	// an off-cpu and the next on-cpu); busy.
	RoleKernel
)

// HolderSpec says how a holder aggregates (levels 1 and 2).
type HolderSpec struct {
	Role HolderRole
	// Process is the holder's process object, level 1 (0 or NoObject:
	// none, the holder keeps its name at level 1).
	Process ObjectID
	// Group overrides the run's word for the role at level 2 (ftrace's
	// "softirqs").
	Group string
}

// CPUWords are a format's names for the states of its processors. Empty
// fields keep the defaults: Idle "idle" (level 0 when nothing runs),
// Tasks "threads", Interrupts "interrupts", IdleGroup "idle", Kernel
// "kernel" (level 2). Level 3 is always "busy" or "idle".
type CPUWords struct {
	Idle       string
	Tasks      string
	Interrupts string
	IdleGroup  string
	Kernel     string
}

// maxNesting bounds the interrupts nested on one processor: entries
// without exits must not grow a stack without bound.
const maxNesting = 64

// maxCPUIndex bounds the processors kept in a slice; larger numbers (a
// trace's garbage) go to a map.
const maxCPUIndex = 1024

type cpuRow struct {
	n     CPU
	obj   ObjectID
	known bool // what holds it is known
	// baseKnown: what runs under the interrupts is known (false when
	// they were entered while the processor's holder was unknown)
	baseKnown bool
	base      ObjectID   // NoObject: no base holder
	stack     []ObjectID // interrupts, innermost last
	// the open interval: instance (holder, 0 for none), state; inst -1
	// when none is open
	inst  int64
	sym   Sym
	since int64 // when it opened
}

type holderRow struct {
	spec     HolderSpec
	declared bool
	on       *cpuRow // where it is the base holder
	name     string  // the object's name its sym was made from
	sym      Sym     // its state name
	syms     []Sym   // every state name it was shown under
	order    int     // first shown, 1-based; 0 never
}

// CPUTracker is the run's CPU model; RunWriter.CPUs returns it.
type CPUTracker struct {
	w       *RunWriter
	words   CPUWords
	idleSym Sym
	low     []*cpuRow
	high    map[CPU]*cpuRow
	list    []*cpuRow
	holders []holderRow // by ObjectID
	byName  map[Sym]ObjectID
	shown   int
	idleRE  []*regexp.Regexp
	userRE  []*regexp.Regexp
	badUser error
}

func (t *CPUTracker) init(w *RunWriter) {
	t.w = w
	t.words = CPUWords{Idle: "idle", Tasks: "threads", Interrupts: "interrupts", IdleGroup: "idle", Kernel: "kernel"}
	t.idleSym = NoSym
	for _, p := range w.info.IdleTasks {
		re, err := GlobRegexp(p)
		if err != nil {
			t.badUser = err
			continue
		}
		t.userRE = append(t.userRE, re)
	}
}

// CPUs returns the run's CPU tracker.
func (w *RunWriter) CPUs() *CPUTracker { return &w.cpus }

// SetWords sets the format's names for processor states (empty fields
// keep the defaults). Call it before the first Run.
func (t *CPUTracker) SetWords(words CPUWords) {
	set := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	set(&t.words.Idle, words.Idle)
	set(&t.words.Tasks, words.Tasks)
	set(&t.words.Interrupts, words.Interrupts)
	set(&t.words.IdleGroup, words.IdleGroup)
	set(&t.words.Kernel, words.Kernel)
	t.idleSym = NoSym
}

// IdleNames adds the names of the idle tasks of the RTOSes whose traces
// the format reads: regular expressions, matched against a whole holder
// name.
func (t *CPUTracker) IdleNames(patterns ...string) {
	for _, p := range patterns {
		t.idleRE = append(t.idleRE, regexp.MustCompile("^(?:"+p+")$"))
	}
}

// Add registers obj as the object of processor n (NoCPU: the one
// processor of a trace that does not number them). Its intervals carry
// cpu n.
func (t *CPUTracker) Add(n CPU, obj ObjectID) {
	c := t.row(n)
	c.obj = obj
}

// Object returns the object of processor n, making one (kind cpu, name
// "cpu N", or "cpu" for NoCPU) when none was added.
func (t *CPUTracker) Object(n CPU) ObjectID { return t.cpu(n).obj }

func (t *CPUTracker) row(n CPU) *cpuRow {
	if n >= 0 && n < maxCPUIndex {
		for int(n) >= len(t.low) {
			t.low = append(t.low, nil)
		}
		if c := t.low[n]; c != nil {
			return c
		}
	} else if c := t.high[n]; c != nil {
		return c
	}
	c := &cpuRow{n: n, obj: NoObject, base: NoObject, inst: -1}
	if n >= 0 && n < maxCPUIndex {
		t.low[n] = c
	} else {
		if t.high == nil {
			t.high = make(map[CPU]*cpuRow)
		}
		t.high[n] = c
	}
	t.list = append(t.list, c)
	return c
}

// cpu returns processor n, with an object.
func (t *CPUTracker) cpu(n CPU) *cpuRow {
	var c *cpuRow
	if n >= 0 && int(n) < len(t.low) && t.low[n] != nil {
		c = t.low[n]
	} else {
		c = t.row(n)
	}
	if c.obj == NoObject {
		name := "cpu"
		if n != NoCPU {
			name = "cpu " + strconv.Itoa(int(n))
		}
		c.obj = t.w.NewObject("cpu", name)
		if n != NoCPU {
			t.w.SetNativeID(c.obj, int64(n))
		}
	}
	return c
}

func (t *CPUTracker) holder(h ObjectID) *holderRow {
	if h <= 0 || int(h) > len(t.w.objects) {
		panic(fmt.Sprintf("schema: no object %d to hold a CPU", h))
	}
	for int(h) >= len(t.holders) {
		t.holders = append(t.holders, holderRow{})
	}
	return &t.holders[h]
}

// Declare says what holder h is and how it aggregates; it may be called
// again (a process learned later) until Finish.
func (t *CPUTracker) Declare(h ObjectID, spec HolderSpec) {
	r := t.holder(h)
	r.spec, r.declared = spec, true
}

// Run makes h the base holder of processor n from ts: it replaces the
// base holder n had; if h was the base holder of another processor, that
// one is left with none (h moved). Interrupts on n stay above it.
func (t *CPUTracker) Run(n CPU, h ObjectID, ts int64, seq Seq) error {
	c := t.cpu(n)
	r := t.holder(h)
	if r.on != nil && r.on != c {
		o := r.on
		o.base = NoObject
		if err := t.show(o, ts, seq); err != nil {
			return err
		}
	}
	if c.base != h && c.base != NoObject {
		t.holders[c.base].on = nil
	}
	c.base, c.known, c.baseKnown, r.on = h, true, true, c
	return t.show(c, ts, seq)
}

// Stop ends h's run at ts on the processor where it is the base holder,
// which is left with none; it reports whether h was running.
func (t *CPUTracker) Stop(h ObjectID, ts int64, seq Seq) (bool, error) {
	r := t.holder(h)
	c := r.on
	if c == nil {
		return false, nil
	}
	r.on, c.base = nil, NoObject
	return true, t.show(c, ts, seq)
}

// Idle says that processor n runs no base holder from ts (its state is
// known: it runs nothing, or only interrupts).
func (t *CPUTracker) Idle(n CPU, ts int64, seq Seq) error {
	c := t.cpu(n)
	if c.base != NoObject {
		t.holders[c.base].on = nil
		c.base = NoObject
	}
	c.known, c.baseKnown = true, true
	return t.show(c, ts, seq)
}

// Enter makes interrupt h the innermost one on processor n from ts. It
// reports false (and changes nothing) when n has maxNesting interrupts
// already. Entering on a processor whose holder was unknown makes it
// known while interrupts are handled there: when the last one leaves,
// the holder is unknown again (nothing below was ever told).
func (t *CPUTracker) Enter(n CPU, h ObjectID, ts int64, seq Seq) (bool, error) {
	c := t.cpu(n)
	if len(c.stack) >= maxNesting {
		return false, nil
	}
	if r := t.holder(h); !r.declared {
		r.spec.Role = RoleInterrupt
	}
	c.stack = append(c.stack, h)
	c.known = true
	return true, t.show(c, ts, seq)
}

// Leave ends interrupt h on processor n at ts: the processor goes back
// to what h interrupted. cut is how many interrupts entered after h were
// left with it (their exits missing); ok is false, and nothing changes,
// when h is not being handled on n.
func (t *CPUTracker) Leave(n CPU, h ObjectID, ts int64, seq Seq) (cut int, ok bool, err error) {
	c := t.cpu(n)
	for i := len(c.stack) - 1; i >= 0; i-- {
		if c.stack[i] == h {
			cut = len(c.stack) - 1 - i
			c.stack = c.stack[:i]
			if i == 0 && !c.baseKnown {
				// back to a holder the trace never told: the interrupt's
				// interval ends complete, then nothing is shown
				return cut, true, t.unknown(n, ts, seq, false)
			}
			return cut, true, t.show(c, ts, seq)
		}
	}
	return 0, false, nil
}

// Known reports whether what holds processor n is known: a Run or Idle
// told it, or interrupts entered while it was unknown are handled there.
func (t *CPUTracker) Known(n CPU) bool {
	c := t.lookup(n)
	return c != nil && c.known
}

// Nesting returns how many interrupts are being handled on processor n.
func (t *CPUTracker) Nesting(n CPU) int { return len(t.cpu(n).stack) }

// Unknown says that from ts the trace does not tell what holds processor
// n (lost events): its interval ends there, marked truncated, its base
// holder and interrupts are forgotten, and it has no interval until the
// next Run, Idle or Enter. An interval that opened at ts itself is
// dropped: it showed its holder for no time (a format told two things at
// one instant, the second being that it cannot tell).
func (t *CPUTracker) Unknown(n CPU, ts int64, seq Seq) error {
	return t.unknown(n, ts, seq, true)
}

// Forget is Unknown for a holder whose end the trace did tell: its
// interval ends at ts complete (not truncated), and from ts the trace
// does not tell what holds processor n (the last interrupt entered while
// its holder was unknown leaves; a thread's last off-cpu before the end
// of the trace).
func (t *CPUTracker) Forget(n CPU, ts int64, seq Seq) error {
	return t.unknown(n, ts, seq, false)
}

func (t *CPUTracker) unknown(n CPU, ts int64, seq Seq, cut bool) error {
	c := t.cpu(n)
	if c.base != NoObject {
		t.holders[c.base].on = nil
		c.base = NoObject
	}
	c.stack = c.stack[:0]
	c.known, c.baseKnown = false, false
	if c.inst < 0 {
		return nil
	}
	inst := c.inst
	c.inst, c.sym = -1, NoSym
	if _, since, ok := t.w.Current(c.obj, inst); ok && since == ts {
		t.w.states.take(stateKey{c.obj, inst})
		return nil
	}
	if !cut {
		return t.w.Close(c.obj, inst, ts, seq)
	}
	return t.w.CloseCut(c.obj, inst, ts, seq)
}

// Holder returns what holds processor n: the innermost interrupt, else
// the base holder; NoObject when nothing runs or it is not known. It is
// the context of the events that happen there.
func (t *CPUTracker) Holder(n CPU) ObjectID {
	c := t.lookup(n)
	if c == nil || !c.known {
		return NoObject
	}
	if k := len(c.stack); k > 0 {
		return c.stack[k-1]
	}
	return c.base
}

// Base returns the base holder of processor n (what runs under its
// interrupts): NoObject when none runs or it is not known.
func (t *CPUTracker) Base(n CPU) ObjectID {
	if c := t.lookup(n); c != nil && c.known {
		return c.base
	}
	return NoObject
}

// Interrupt returns the i-th interrupt being handled on processor n,
// counting from the innermost (0) outwards; NoObject when i is not below
// Nesting(n).
func (t *CPUTracker) Interrupt(n CPU, i int) ObjectID {
	c := t.lookup(n)
	if c == nil || i < 0 || i >= len(c.stack) {
		return NoObject
	}
	return c.stack[len(c.stack)-1-i]
}

// lookup returns processor n's row, nil when it has none (no object is
// made).
func (t *CPUTracker) lookup(n CPU) *cpuRow {
	if n >= 0 && int(n) < len(t.low) {
		return t.low[n]
	}
	return t.high[n]
}

// On returns the processor on which h is the base holder.
func (t *CPUTracker) On(h ObjectID) (CPU, bool) {
	if h <= 0 || int(h) >= len(t.holders) || t.holders[h].on == nil {
		return NoCPU, false
	}
	return t.holders[h].on.n, true
}

// show moves processor c's interval to what holds it now.
func (t *CPUTracker) show(c *cpuRow, ts int64, seq Seq) error {
	if !c.known {
		return nil
	}
	h := c.base
	if k := len(c.stack); k > 0 {
		h = c.stack[k-1]
	}
	var inst int64
	var sym Sym
	if h == NoObject {
		if t.idleSym == NoSym {
			t.idleSym = t.w.Sym(t.words.Idle)
		}
		sym = t.idleSym
	} else {
		inst, sym = int64(h), t.stateSym(h)
	}
	if c.inst == inst && c.sym == sym {
		return nil
	}
	if c.inst >= 0 {
		// Timestamps that go backwards: the next interval starts where
		// the one it replaces started, never before (the state tracker
		// clamps the end of that one and says so), so that a processor's
		// intervals never overlap.
		ts = max(ts, c.since)
		if c.inst != inst {
			if err := t.w.Close(c.obj, c.inst, ts, seq); err != nil {
				return err
			}
		}
	}
	c.inst, c.sym, c.since = inst, sym, ts
	return t.w.states.transition(c.obj, inst, ts, sym, seq, c.n, false)
}

// stateSym is the state naming holder h: its name, made unique among the
// holders (and apart from the idle word) with "#object_id".
func (t *CPUTracker) stateSym(h ObjectID) Sym {
	r := &t.holders[h]
	name := t.w.objects[h-1].name
	if r.order > 0 && name == r.name {
		return r.sym
	}
	if r.order == 0 {
		t.shown++
		r.order = t.shown
	}
	r.name = name
	sym := t.w.Sym(name)
	if t.byName == nil {
		t.byName = make(map[Sym]ObjectID)
	}
	// the idle word names nothing running; an idle task of that name
	// (TLV's example RTOS calls its idle thread "idle") may share it
	if other, taken := t.byName[sym]; (taken && other != h) || (name == t.words.Idle && !t.isIdle(h, r)) {
		sym = t.w.Sym(name + "#" + strconv.Itoa(int(h)))
	}
	t.byName[sym] = h
	r.sym = sym
	for _, s := range r.syms {
		if s == sym {
			return sym
		}
	}
	r.syms = append(r.syms, sym)
	return sym
}

// isIdle reports whether a holder is an idle task.
func (t *CPUTracker) isIdle(h ObjectID, r *holderRow) bool {
	if r.spec.Role == RoleIdle {
		return true
	}
	if r.spec.Role != RoleTask || len(t.idleRE)+len(t.userRE) == 0 {
		return false
	}
	names := []string{t.w.objects[h-1].name}
	for _, s := range r.syms {
		names = append(names, t.w.String(s))
	}
	for _, re := range append(t.idleRE[:len(t.idleRE):len(t.idleRE)], t.userRE...) {
		for _, nm := range names {
			if re.MatchString(nm) {
				return true
			}
		}
	}
	return false
}

// finish declares the levels of the processor states shown (step 5) and
// marks the idle holders.
func (t *CPUTracker) finish() error {
	if len(t.w.info.IdleTasks) > 0 {
		t.w.SetMeta("idle_tasks", t.w.info.IdleTasks)
	}
	if t.badUser != nil {
		return t.badUser
	}
	if len(t.list) == 0 {
		return nil
	}
	// holders in the order they were first shown: deterministic rows
	var order []ObjectID
	for h := range t.holders {
		if t.holders[h].order > 0 {
			order = append(order, ObjectID(h))
		}
	}
	sort.Slice(order, func(i, j int) bool { return t.holders[order[i]].order < t.holders[order[j]].order })
	labels := t.processLabels(order)
	w := t.words
	lv := func(state string, level int, parent string) { t.w.StateLevel("cpu", state, level, parent) }
	if t.idleSym != NoSym {
		lv(w.Idle, 0, w.IdleGroup)
		lv(w.IdleGroup, 1, w.IdleGroup)
		lv(w.IdleGroup, 2, "idle")
	}
	for _, h := range order {
		r := &t.holders[h]
		if t.isIdle(h, r) {
			t.w.SetAttr(h, "idle", true)
			for _, s := range r.syms {
				lv(t.w.String(s), 0, w.IdleGroup)
			}
			lv(w.IdleGroup, 1, w.IdleGroup)
			lv(w.IdleGroup, 2, "idle")
			continue
		}
		group := t.groupOf(r)
		if r.spec.Role == RoleTask && r.spec.Process > 0 {
			label := labels[r.spec.Process]
			for _, s := range r.syms {
				lv(t.w.String(s), 0, label)
			}
			lv(label, 1, group)
		} else {
			for _, s := range r.syms {
				lv(t.w.String(s), 1, group)
			}
		}
		lv(group, 2, "busy")
	}
	return nil
}

// groupOf is the level-2 group of a holder: the one its spec names, else
// the words' group of its role.
func (t *CPUTracker) groupOf(r *holderRow) string {
	if r.spec.Group != "" {
		return r.spec.Group
	}
	switch r.spec.Role {
	case RoleInterrupt:
		return t.words.Interrupts
	case RoleKernel:
		return t.words.Kernel
	default:
		return t.words.Tasks
	}
}

// isObject tells whether obj is a processor's object (its intervals are
// the CPU model's).
func (t *CPUTracker) isObject(obj ObjectID) bool {
	for _, c := range t.list {
		if c.obj == obj {
			return true
		}
	}
	return false
}

// levelTokens is what an interval of a processor showing state (holder
// inst, 0 when nothing runs) is at levels 1, 2 and 3 as far as the model
// knows when it closes, before finish names the levels: the merged
// intervals of those levels are made under these keys (levels.go) and
// named at the end, where finish's levels must give every state of a key
// one name, and two keys never the same one. Level 1: the idle group (an
// idle holder, or nothing), the holder's process object (a task of a
// process), else the state itself; level 2: the group; level 3: busy or
// idle.
func (t *CPUTracker) levelTokens(inst int64, state Sym) []string {
	h := ObjectID(inst)
	w := t.words
	if inst <= 0 || int(h) >= len(t.holders) || t.holders[h].order == 0 || t.isIdle(h, &t.holders[h]) {
		return []string{"g" + w.IdleGroup, "g" + w.IdleGroup, "tidle"}
	}
	r := &t.holders[h]
	group := t.groupOf(r)
	l1 := "s" + strconv.Itoa(int(state))
	if r.spec.Role == RoleTask && r.spec.Process > 0 {
		l1 = "p" + strconv.Itoa(int(r.spec.Process))
	}
	return []string{l1, "g" + group, "tbusy"}
}

// processLabels names the processes of the holders at level 1: the
// process's name, with [native_id] (else #object_id) when two processes
// share it.
func (t *CPUTracker) processLabels(order []ObjectID) map[ObjectID]string {
	labels := map[ObjectID]string{}
	count := map[string]int{}
	for _, h := range order {
		p := t.holders[h].spec.Process
		if p <= 0 || int(p) > len(t.w.objects) {
			continue
		}
		if _, ok := labels[p]; !ok {
			labels[p] = t.w.objects[p-1].name
			count[labels[p]]++
		}
	}
	for p, l := range labels {
		if count[l] > 1 {
			if id := t.w.objects[p-1].nativeID; id != NoInstance {
				labels[p] = l + "[" + strconv.FormatInt(id, 10) + "]"
			} else {
				labels[p] = l + "#" + strconv.Itoa(int(p))
			}
		}
	}
	return labels
}

// GlobRegexp compiles a --idle-task pattern: * is any text (a '/'
// included), ? one character, [...] a class as in Go's regexp; the whole
// name must match.
func GlobRegexp(glob string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString("^(?:")
	for i := 0; i < len(glob); i++ {
		switch ch := glob[i]; ch {
		case '*':
			b.WriteString(".*")
		case '?':
			b.WriteString(".")
		case '[':
			j := strings.IndexByte(glob[i+1:], ']')
			if j < 0 {
				return nil, fmt.Errorf("idle-task pattern %q: expected ] to close the [ at column %d, found the end of the pattern", glob, i+1)
			}
			class := glob[i+1 : i+1+j]
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:] // a glob's negation
			}
			b.WriteString("[" + class + "]")
			i += j + 1
		default:
			b.WriteString(regexp.QuoteMeta(string(ch)))
		}
	}
	b.WriteString(")$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, fmt.Errorf("idle-task pattern %q: %v", glob, err)
	}
	return re, nil
}
