package tlv

// cpu.go drives traceduck's CPU model (schema.CPUTracker) from the
// standard-format stream, for any rule set: a resource holds its
// processor while an attribute of it (its state) has a running value.
// README.md, "The CPU model", says what the resource headers declare and
// how the processor of a change is found.

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/traceduck/traceduck/schema"
)

// cpuRole is what the resources of a type are to the processors.
type cpuRole uint8

const (
	roleNone      cpuRole = iota // never holds a processor
	roleTask                     // a base holder: runs or not (schema RoleTask)
	roleInterrupt                // nests over what runs (schema RoleInterrupt)
	roleIdle                     // an idle task (schema RoleIdle)
)

// cpuSpec is a type's CPU key resolved (defaults applied).
type cpuSpec struct {
	role    cpuRole
	attr    string   // the attribute that says whether it runs
	running []string // its running values, compared as written; nil: RUNNING or ACTIVE in any case
	proc    string   // the attribute that numbers its processor; "" none
	idle    []*regexp.Regexp
}

// Defaults by type name (case ignored), when the header has no CPU key:
// TLV's TOPPERS types and a few common names. The task exception routine
// is none: it runs in its task's context (a dispatch preempts it with its
// task, and a task that exits inside it never logs its end: asp_long.log),
// so its time is its task's.
var (
	defaultRoles = map[string]cpuRole{
		"task": roleTask, "thread": roleTask,
		"interrupthandler": roleInterrupt, "interruptserviceroutine": roleInterrupt,
		"cyclichandler": roleInterrupt, "alarmhandler": roleInterrupt,
		"cpuexceptionhandler": roleInterrupt,
		"isr":                 roleInterrupt, "irq": roleInterrupt, "interrupt": roleInterrupt,
	}
	// the attributes TLV's FMP resource files number processors with
	defaultProcessors = map[string]string{
		"task": "prcId", "interrupthandler": "prcIdI", "interruptserviceroutine": "prcIdR",
		"cyclichandler": "prcIdC", "alarmhandler": "prcIdA", "cpuexceptionhandler": "prcIdE",
		"taskexceptionroutine": "prcIdX",
	}
)

// newCPUSpec resolves the CPU key of a type; nil when its resources hold
// no processor.
func newCPUSpec(t *typeInfo) *cpuSpec {
	lname := strings.ToLower(t.def.Name)
	d := t.def.CPU
	sp := &cpuSpec{attr: "state"}
	if d == nil {
		sp.role = defaultRoles[lname]
	} else {
		switch d.Role {
		case "task":
			sp.role = roleTask
		case "interrupt":
			sp.role = roleInterrupt
		case "idle":
			sp.role = roleIdle
		}
		if d.Attribute != "" {
			sp.attr = d.Attribute
		}
		sp.running = d.Running
		sp.proc = d.Processor
		for _, p := range d.Idle {
			if re, err := schema.GlobRegexp(p); err == nil { // checked when the header was read
				sp.idle = append(sp.idle, re)
			}
		}
	}
	if sp.role == roleNone {
		return nil
	}
	if d == nil {
		// the default attribute must be one of the type
		if _, ok := t.attrIdx[sp.attr]; !ok {
			return nil
		}
	}
	if sp.proc == "" {
		if p := defaultProcessors[lname]; p != "" {
			if _, ok := t.attrIdx[p]; ok {
				sp.proc = p
			}
		}
	}
	return sp
}

func (sp *cpuSpec) isRunning(v string) bool {
	if sp.running == nil {
		return strings.EqualFold(v, "RUNNING") || strings.EqualFold(v, "ACTIVE")
	}
	for _, r := range sp.running {
		if v == r {
			return true
		}
	}
	return false
}

func (sp *cpuSpec) schemaRole(name string) schema.HolderRole {
	switch sp.role {
	case roleInterrupt:
		return schema.RoleInterrupt
	case roleIdle:
		return schema.RoleIdle
	}
	for _, re := range sp.idle {
		if re.MatchString(name) {
			return schema.RoleIdle
		}
	}
	return schema.RoleTask
}

// pendingStop is a base holder's stop (or, holder NoObject, the
// processor's initial idleness) not yet told to the tracker: a dispatch
// stops one task and runs the next at the same time, and the next Run
// replaces it without an interval of no length between them.
type pendingStop struct {
	cpu    schema.CPU
	holder schema.ObjectID
	ts     int64
	seq    schema.Seq
}

// cpuModel is the CPU model of one run.
type cpuModel struct {
	s        *tableSink
	t        *schema.CPUTracker
	st       *State
	specs    []*cpuSpec // by type index
	haveSpec []bool

	// multi: the run has several processors (per-processor Context
	// resources, a rule group prc, FMP lines, or a processor attribute),
	// so a change whose processor is not known waits for it; else every
	// change is on the one processor (NoCPU).
	multi bool
	ctxs  []ctxRes // the per-processor Context resources

	running  []bool               // by resource index: its attribute has a running value
	entered  []schema.CPU         // by resource index: the processor an interrupt was entered on, or notEntered
	stacks   map[schema.CPU][]int // the interrupts entered on each processor (resource indices), innermost last
	unplaced []bool               // by resource index: running, processor not yet known
	pending  []pendingStop

	// now is the latest time told to the tracker: an event earlier than
	// one before it (timestamps going backwards) is told at now, so that
	// a processor's intervals never overlap (the state tracker clamps one
	// series, not the holders' series of a processor).
	now int64

	nUnplaced   int64
	firstUnpl   string
	firstUnplAt int64
}

// notEntered: an interrupt handled on no processor (NoCPU is the one
// processor of a run that does not number them).
const notEntered schema.CPU = math.MinInt32

type ctxRes struct {
	r    *Res
	name int // its attribute "name"
	cpu  schema.CPU
}

func newCPUModel(s *tableSink, rd *Reader, fmp bool) *cpuModel {
	m := &cpuModel{s: s, t: s.w.CPUs(), st: rd.St, stacks: map[schema.CPU][]int{}, multi: fmp, now: math.MinInt64}
	m.t.SetWords(schema.CPUWords{Tasks: "tasks", Interrupts: "handlers"})
	res := rd.St.Resources()
	m.running = make([]bool, len(res))
	m.entered = make([]schema.CPU, len(res))
	m.unplaced = make([]bool, len(res))
	for i := range m.entered {
		m.entered[i] = notEntered
	}
	if rd.Conv != nil {
		for _, r := range rd.Conv.rules {
			if r.prc >= 0 {
				m.multi = true
			}
		}
	}
	for i, r := range res {
		if isContext(r) {
			if n, ok := contextCPU(r); ok {
				m.ctxs = append(m.ctxs, ctxRes{r: r, name: r.Type.attrIdx["name"], cpu: n})
				m.multi = true
			}
		}
		sp := m.spec(r.Type)
		if sp == nil {
			continue
		}
		if sp.proc != "" {
			m.multi = true
		}
		m.t.Declare(s.objs[i], schema.HolderSpec{Role: sp.schemaRole(r.Name)})
	}
	return m
}

func (m *cpuModel) spec(t *typeInfo) *cpuSpec {
	for len(m.specs) <= t.index {
		m.specs, m.haveSpec = append(m.specs, nil), append(m.haveSpec, false)
	}
	if !m.haveSpec[t.index] {
		m.specs[t.index], m.haveSpec[t.index] = newCPUSpec(t), true
	}
	return m.specs[t.index]
}

// attrCPU is the processor an attribute of r numbers, now (initial: as
// the trace began).
func attrCPU(r *Res, name string, initial bool) (schema.CPU, bool) {
	if name == "" {
		return schema.NoCPU, false
	}
	k, ok := r.Type.attrIdx[name]
	if !ok {
		return schema.NoCPU, false
	}
	if initial {
		v, ok := r.Initial(k)
		if !ok {
			return schema.NoCPU, false
		}
		return parseCPU(v)
	}
	return parseCPU(r.Value(k))
}

func parseCPU(v string) (schema.CPU, bool) {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
	if err != nil || n < 0 {
		return schema.NoCPU, false
	}
	return schema.CPU(n), true
}

// processor is the processor of a change of r that makes it run: the
// line's (a rule's group prc, FMP's prefix), else what r's processor
// attribute says, else the per-processor Context that names r, else the
// one processor of a run that has one. initial: r's processor as the
// trace began (the values of the resource file).
func (m *cpuModel) processor(r *Res, sp *cpuSpec, lineCPU schema.CPU, initial bool) (schema.CPU, bool) {
	if lineCPU != schema.NoCPU {
		return lineCPU, true
	}
	if n, ok := attrCPU(r, sp.proc, initial); ok {
		return n, true
	}
	for _, c := range m.ctxs {
		v := c.r.Value(c.name)
		if initial {
			v, _ = c.r.Initial(c.name)
		}
		if v == r.Name {
			return c.cpu, true
		}
	}
	if !m.multi {
		return schema.NoCPU, true
	}
	return schema.NoCPU, false
}

// eventCPU is the processor an event happens on, for its context: the
// line's, else where its resource runs, else what its processor
// attribute says, else the processor of a per-processor Context, else the
// one processor of a run that has one.
func (m *cpuModel) eventCPU(e *Event) (schema.CPU, bool) {
	if e.CPU != schema.NoCPU {
		return e.CPU, true
	}
	r := e.Res
	if sp := m.spec(r.Type); sp != nil {
		if n := m.entered[r.Index]; n != notEntered {
			return n, true
		}
		if n, ok := m.t.On(m.s.objs[r.Index]); ok {
			return n, true
		}
		if n, ok := attrCPU(r, sp.proc, false); ok {
			return n, true
		}
	}
	for _, c := range m.ctxs {
		if c.r == r {
			return c.cpu, true
		}
	}
	if !m.multi {
		return schema.NoCPU, true
	}
	return schema.NoCPU, false
}

// context is what holds the processor of e before e changes anything.
func (m *cpuModel) context(e *Event) (schema.ObjectID, error) {
	if err := m.flushBefore(e.Time.NS); err != nil {
		return schema.NoObject, err
	}
	n, ok := m.eventCPU(e)
	if !ok {
		return schema.NoObject, nil
	}
	return m.t.Holder(n), nil
}

// open starts the model at the first event (its change is made in the
// state already: open reads the initial values): the resources whose
// initial values say they run hold their processors, and the processors the run
// names (per-processor Contexts, processor attributes; the one processor
// of a run that has one) are idle otherwise.
func (m *cpuModel) open(ts int64) error {
	known := map[schema.CPU]bool{}
	var order []schema.CPU
	note := func(n schema.CPU) {
		if !known[n] {
			known[n] = true
			order = append(order, n)
		}
	}
	for _, c := range m.ctxs {
		note(c.cpu)
	}
	res := m.st.Resources()
	for _, r := range res {
		if sp := m.spec(r.Type); sp != nil {
			if n, ok := attrCPU(r, sp.proc, true); ok {
				note(n)
			}
		}
	}
	if len(order) == 0 && !m.multi {
		note(schema.NoCPU)
	}
	sort.Slice(order, func(i, j int) bool { return order[i] < order[j] })
	for _, n := range order {
		m.t.Object(n) // the processors' objects in their order
	}
	held := map[schema.CPU]bool{}
	for _, r := range res {
		sp := m.spec(r.Type)
		if sp == nil {
			continue
		}
		k, ok := r.Type.attrIdx[sp.attr]
		if !ok {
			continue
		}
		v, ok := r.Initial(k)
		if !ok || !sp.isRunning(v) {
			continue
		}
		m.running[r.Index] = true
		n, ok := m.processor(r, sp, schema.NoCPU, true)
		if !ok {
			m.unplaced[r.Index] = true
			continue
		}
		held[n] = true
		if err := m.start(r, sp, n, ts, schema.NoSeq, 0); err != nil {
			return err
		}
	}
	for _, n := range order {
		if !held[n] {
			m.pending = append(m.pending, pendingStop{cpu: n, holder: schema.NoObject, ts: ts, seq: schema.NoSeq})
		}
	}
	return nil
}

// event tells the model what e changed (e is written already, as seq).
func (m *cpuModel) event(e *Event, seq schema.Seq) error {
	r := e.Res
	ts := e.Time.NS
	if e.Attr >= 0 {
		name := r.AttrName(e.Attr)
		for _, c := range m.ctxs {
			if c.r == r && e.Attr == c.name {
				// A per-processor Context names what runs there: the
				// processor of a resource that runs and had none.
				if x := m.st.Lookup(e.Value); x != nil && m.unplaced[x.Index] {
					return m.start(x, m.spec(x.Type), c.cpu, ts, seq, e.Src)
				}
				return nil
			}
		}
		sp := m.spec(r.Type)
		if sp == nil {
			return nil
		}
		obj := m.s.objs[r.Index]
		switch name {
		case sp.attr:
			run, was := sp.isRunning(e.Value), m.running[r.Index]
			m.running[r.Index] = run
			switch {
			case run && !was:
				n, ok := m.processor(r, sp, e.CPU, false)
				if !ok {
					m.unplaced[r.Index] = true
					return nil
				}
				return m.start(r, sp, n, ts, seq, e.Src)
			case !run && was:
				return m.stop(r, sp, ts, seq, e)
			}
		case sp.proc:
			// The processor attribute changes: a task that runs moves
			// there (FMP's migration), one that waited for it starts.
			n, ok := parseCPU(e.Value)
			if !ok {
				return nil
			}
			if m.unplaced[r.Index] {
				return m.start(r, sp, n, ts, seq, e.Src)
			}
			if cur, on := m.t.On(obj); on && cur != n && sp.role != roleInterrupt && m.running[r.Index] {
				return m.run(n, obj, ts, seq)
			}
			return nil
		}
	}
	// An event on a processor the line names: a resource that runs there
	// and had no processor gets it; a task that runs elsewhere moved.
	if e.CPU == schema.NoCPU {
		return nil
	}
	sp := m.spec(r.Type)
	if sp == nil || !m.running[r.Index] {
		return nil
	}
	if m.unplaced[r.Index] {
		return m.start(r, sp, e.CPU, ts, seq, e.Src)
	}
	if sp.role != roleInterrupt {
		obj := m.s.objs[r.Index]
		if cur, on := m.t.On(obj); on && cur != e.CPU && e.Attr >= 0 && r.AttrName(e.Attr) == sp.attr {
			return m.run(e.CPU, obj, ts, seq)
		}
	}
	return nil
}

// clock is ts, or the latest time told to the tracker when ts is earlier.
func (m *cpuModel) clock(ts int64) int64 {
	if ts < m.now {
		return m.now
	}
	m.now = ts
	return ts
}

// start makes r hold processor n from ts.
func (m *cpuModel) start(r *Res, sp *cpuSpec, n schema.CPU, ts int64, seq schema.Seq, src int64) error {
	m.unplaced[r.Index] = false
	obj := m.s.objs[r.Index]
	if sp.role != roleInterrupt {
		return m.run(n, obj, ts, seq)
	}
	if m.entered[r.Index] != notEntered {
		return nil
	}
	m.take(n, ts, true)
	if err := m.flush(n); err != nil {
		return err
	}
	ok, err := m.t.Enter(n, obj, m.clock(ts), seq)
	if err != nil {
		return err
	}
	if !ok {
		m.s.Note(schema.Warning, "\x00cpu-nesting", src, fmt.Sprintf(
			"more than 64 handlers nested on one processor: %s is not counted as holding it (first at line %d)", r.Name, src))
		return nil
	}
	m.entered[r.Index] = n
	m.stacks[n] = append(m.stacks[n], r.Index)
	return nil
}

// stop ends r's hold on its processor at ts (e is the change).
func (m *cpuModel) stop(r *Res, sp *cpuSpec, ts int64, seq schema.Seq, e *Event) error {
	src := e.Src
	if m.unplaced[r.Index] {
		// It ran on a processor never named: on the one this line names,
		// when it names one (an initial value the log did not place:
		// that processor's state was not known before).
		m.unplaced[r.Index] = false
		if e.CPU == schema.NoCPU {
			m.nUnplaced++
			if m.nUnplaced == 1 {
				m.firstUnpl, m.firstUnplAt = r.Name, src
			}
		}
		return nil
	}
	obj := m.s.objs[r.Index]
	if sp.role != roleInterrupt {
		n, on := m.t.On(obj)
		if !on {
			return nil
		}
		if err := m.flush(n); err != nil {
			return err
		}
		m.pending = append(m.pending, pendingStop{cpu: n, holder: obj, ts: ts, seq: seq})
		return nil
	}
	n := m.entered[r.Index]
	if n == notEntered {
		return nil
	}
	m.entered[r.Index] = notEntered
	if err := m.flush(n); err != nil {
		return err
	}
	cut, _, err := m.t.Leave(n, obj, m.clock(ts), seq)
	if err != nil {
		return err
	}
	// the handlers entered after r that had not left: their exits were
	// not logged, they end with r (as the tracker did)
	st := m.stacks[n]
	for i := len(st) - 1; i >= 0; i-- {
		x := st[i]
		if x == r.Index {
			m.stacks[n] = st[:i]
			break
		}
		m.entered[x] = notEntered
	}
	if cut > 0 {
		m.s.Note(schema.Warning, "\x00cpu-cut", src, fmt.Sprintf(
			"a handler left while handlers that interrupted it had not logged their end: they end with it (first at line %d, %s)", src, r.Name))
	}
	return nil
}

// run makes obj the base holder of n from ts.
func (m *cpuModel) run(n schema.CPU, obj schema.ObjectID, ts int64, seq schema.Seq) error {
	m.take(n, ts, false)
	if err := m.flush(n); err != nil {
		return err
	}
	return m.t.Run(n, obj, m.clock(ts), seq)
}

// take drops what is pending on n at ts that the next verb replaces: a
// Run replaces a stop or the initial idleness, an Enter the initial
// idleness (entering on a processor not yet known leaves nothing below).
func (m *cpuModel) take(n schema.CPU, ts int64, enter bool) {
	for i, p := range m.pending {
		if p.cpu == n && p.ts == ts && (!enter || p.holder == schema.NoObject) {
			m.pending = append(m.pending[:i], m.pending[i+1:]...)
			return
		}
	}
}

// flush tells the tracker what is pending on n.
func (m *cpuModel) flush(n schema.CPU) error {
	for i, p := range m.pending {
		if p.cpu == n {
			m.pending = append(m.pending[:i], m.pending[i+1:]...)
			return m.apply(p)
		}
	}
	return nil
}

// flushBefore tells the tracker what is pending from before ts.
func (m *cpuModel) flushBefore(ts int64) error {
	if len(m.pending) == 0 {
		return nil
	}
	keep := m.pending[:0]
	var due []pendingStop
	for _, p := range m.pending {
		if p.ts < ts {
			due = append(due, p)
		} else {
			keep = append(keep, p)
		}
	}
	m.pending = keep
	for _, p := range due {
		if err := m.apply(p); err != nil {
			return err
		}
	}
	return nil
}

func (m *cpuModel) apply(p pendingStop) error {
	if p.holder == schema.NoObject {
		return m.t.Idle(p.cpu, m.clock(p.ts), p.seq)
	}
	if n, on := m.t.On(p.holder); on && n == p.cpu {
		_, err := m.t.Stop(p.holder, m.clock(p.ts), p.seq)
		return err
	}
	return nil
}

// finish tells the tracker what is still pending and reports the
// resources that ran on no processor the log named.
func (m *cpuModel) finish() error {
	for _, r := range m.st.Resources() {
		if m.unplaced[r.Index] {
			m.nUnplaced++
			if m.nUnplaced == 1 {
				m.firstUnpl = r.Name
			}
		}
	}
	if m.nUnplaced > 0 {
		m.s.Count(schema.Warning, m.firstUnplAt, fmt.Sprintf(
			"resources that ran on a processor the log does not name (no prc group, processor attribute or per-processor Context names it): not in the CPU model (count = such runs; first: %s)", m.firstUnpl), m.nUnplaced)
	}
	p := m.pending
	m.pending = nil
	for _, x := range p {
		if err := m.apply(x); err != nil {
			return err
		}
	}
	return nil
}
