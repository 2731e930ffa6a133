package dtrace

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/bits"
	"sort"
	"strconv"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/schema"
)

// EventsHeader begins the header line of event output: the line that
// names the columns of the event lines after it (README.md, "Event
// output"). The shipped D and bpftrace scripts print it first.
const EventsHeader = "#traceduck-events"

// eventsVersion is the layout version the header carries after the token.
const eventsVersion = "1"

// maxColumns bounds the columns a header may declare.
const maxColumns = 32

// maxDepth bounds the entry/return nesting tracked per thread: deeper
// entries are kept as events only, so a file of entries without returns
// cannot grow a stack without bound.
const maxDepth = 256

// maxInterrupts is the interrupt nesting the CPU tracker keeps per CPU:
// it refuses deeper ones, which are kept as events only.
const maxInterrupts = 64

// column is what a declared column holds.
type evColumn uint8

const (
	colTimestamp evColumn = iota
	colCPU
	colPID
	colTID
	colProbe
	colExecname
	colExtra // any other name: a positional value stored in args
)

var columnNames = map[string]evColumn{
	"timestamp": colTimestamp, "cpu": colCPU, "pid": colPID, "tid": colTID,
	"probe": colProbe, "execname": colExecname,
}

// layout is what a header declares.
type layout struct {
	valid  bool
	cols   []evColumn
	names  []string // the column names as declared
	nameBs [][]byte // the same, as bytes (args keys of extra columns)
	unit   ingest.TimeUnit
	tsCol  int // index of the timestamp column, for messages
	has    [colExtra]bool
}

// what a probe means to the state machine
type probeKind uint8

const (
	probeOther probeKind = iota
	probeOnCPU
	probeOffCPU
	probeExec
	probeThreadExit
	probeIntrStart
	probeIntrDone
	probeEntry
	probeReturn
)

// findings recorded once in diagnostics and counted after that
type finding uint8

const (
	findBackwards finding = iota
	findOffFirst
	findOffNotOn
	findOnBusy
	findOnElsewhere
	findReturnNoEntry
	findReturnSkips
	findTooDeep
	findNoOwner
	findNoCPU
	findIntrNotStarted
	findIntrSkips
	findDrops
	findHeaderChange
	nFindings
)

type threadKey struct{ pid, tid int64 }

// owner is what entry/return intervals belong to: a thread, or the
// process when the layout has no tid column.
type owner struct {
	id     schema.ObjectID
	frames []frame
}

// frame is a call entered and not yet returned.
type frame struct {
	key   schema.Sym // provider:module: and the name without entry/return
	state schema.Sym // the function (or the func key)
}

type process struct {
	owner
	pid     int64
	name    string // execname, or the pid until one is given
	label   string // name[pid] (the pid until named): its threads' names begin with it
	named   bool
	parent  bool
	threads []*thread
}

// A thread holds the CPU it runs on (the CPU tracker's holder) from its
// on-cpu to its off-cpu; where it runs is the tracker's (see where).
type thread struct {
	owner
	key    threadKey
	proc   *process
	name   string // label/tid
	exited bool   // proc:::lwp-exit seen: its next off-cpu ends it
	known  bool   // its scheduling state has been set once
}

type interrupt struct {
	id   schema.ObjectID
	name string
}

// A CPU: what holds it (a thread, its idle thread, its dispatcher, the
// interrupts nested over them) is the CPU tracker's, w.CPUs().
type cpuState struct {
	n int64
	// its idle thread ("idle/N", an idle holder) and its dispatcher
	// between an off-cpu and the next on-cpu ("switching/N", kernel
	// work), as holders; NoObject until needed
	idle, switching schema.ObjectID

	// The switching gap is written lazily: an off-cpu followed by an
	// on-cpu at the same timestamp (bpftrace prints both from one
	// sched_switch) must not leave a zero-length interval. While it is
	// pending, the tracker still has the thread that went off as the
	// CPU's holder: where and running know it is not.
	gapPending bool
	gapAt      int64
	gapSeq     schema.Seq
}

// eventReader reads event lines: the header line, then one event per line
// in the layout it declares. It builds the events, the process, thread,
// CPU and interrupt objects, and their state intervals.
type eventReader struct {
	w    *schema.RunWriter
	cpuT *schema.CPUTracker // what holds each CPU
	file string
	lay  layout

	procs   map[int64]*process
	threads map[threadKey]*thread
	byID    map[schema.ObjectID]*thread
	cpus    map[int64]*cpuState
	irqs    map[string]*interrupt
	irqByID map[schema.ObjectID]*interrupt

	syms struct {
		running, offCPU, handler schema.Sym
	}
	levelSeen map[levelKey]bool
	once      [nFindings]schema.DiagID
	seen      [nFindings]bool
	// the first header's layout: runs.meta and runs.time_unit describe it
	// (several scripts run together print one header each)
	first *layout

	haveTS bool
	prevTS int64
	lastTS int64

	// per-line scratch, reused
	ln   lineFields
	args []byte
	key  []byte
}

type levelKey struct {
	kind  uint8
	state schema.Sym
}

const (
	lvThread uint8 = iota
	lvCall
	lvProcCall
)

// lineFields is one event line, parsed; the slices point into the line.
type lineFields struct {
	tsRaw            uint64
	ts               int64
	cpu, pid, tid    int64
	hasCPU, hasPID   bool
	hasTID           bool
	probe            []byte
	provider, module []byte
	function, name   []byte
	execname         []byte
	hasExec          bool
	keys, vals       [][]byte
	quoted           []bool
	extraCols        []int // indexes of the extra columns given
	extraVals        [][]byte
	idle, hasIdle    bool
	state, fn, irq   []byte
	hasState, hasFn  bool
	hasIrq           bool
	ppid             int64
	hasPPID          bool
}

func newEventReader(w *schema.RunWriter, file string) *eventReader {
	r := &eventReader{
		w:         w,
		cpuT:      w.CPUs(),
		file:      file,
		procs:     make(map[int64]*process),
		threads:   make(map[threadKey]*thread),
		byID:      make(map[schema.ObjectID]*thread),
		cpus:      make(map[int64]*cpuState),
		irqs:      make(map[string]*interrupt),
		irqByID:   make(map[schema.ObjectID]*interrupt),
		levelSeen: make(map[levelKey]bool),
	}
	r.syms.running = w.Sym("running")
	r.syms.offCPU = w.Sym("off_cpu")
	r.syms.handler = w.Sym("handler")
	return r
}

// Line offers one line to the reader. It consumes the header line, the
// event lines after it, and DTrace's drop reports while events are being
// read; any other line (prose, aggregations, blank lines, lines before a
// header) is left to the caller (consumed=false). A malformed header or
// event line is reported through w.BadLine: err stops the ingest, or with
// --skip-bad the line goes to diagnostics and err is nil.
func (r *eventReader) Line(lineNo int64, line []byte) (consumed bool, err error) {
	if bytes.HasPrefix(line, []byte(EventsHeader)) && (len(line) == len(EventsHeader) || isBlank(line[len(EventsHeader)])) {
		return true, r.header(lineNo, line[len(EventsHeader):])
	}
	if !r.lay.valid || len(line) == 0 || isBlank(line[0]) {
		return false, nil
	}
	if bytes.HasPrefix(line, []byte("dtrace: ")) && bytes.Contains(line, []byte(" drops")) {
		r.diagOnce(findDrops, schema.Warning, lineNo, schema.NoSeq, func() string {
			return fmt.Sprintf("DTrace dropped records (%q; count = lines reporting drops): events are missing, so the intervals around them may be wrong; raise bufsize or switchrate", line)
		})
		return true, nil
	}
	if !r.isEventLine(line) {
		return false, nil
	}
	return true, r.event(lineNo, line)
}

// isEventLine reports whether a line (not starting with a blank) is an
// event line of the current layout: its first token is a value of the
// first column, digits for a number column, provider:module:function:name
// for a probe column.
func (r *eventReader) isEventLine(line []byte) bool {
	tok, _ := nextToken(line)
	if r.lay.cols[0] == colProbe {
		return bytes.Count(tok, []byte(":")) == 3
	}
	return ingest.IsDigits(tok)
}

// header reads "#traceduck-events 1 [name=value]... column...".
func (r *eventReader) header(lineNo int64, rest []byte) error {
	tok, rest := nextToken(rest)
	if string(tok) != eventsVersion {
		return r.w.BadLine(lineNo, "expected layout version %s after %s, found %s", eventsVersion, EventsHeader, quoteOrEnd(tok))
	}
	lay := layout{unit: ingest.TimeUnit{Name: "ns", Mul: 1, Div: 1}, tsCol: -1}
	var attrs [][2]string
	for {
		tok, rest = nextToken(rest)
		if len(tok) == 0 {
			break
		}
		if i := bytes.IndexByte(tok, '='); i >= 0 {
			name, value := string(tok[:i]), string(tok[i+1:])
			if name == "" {
				return r.w.BadLine(lineNo, "expected name=value in the header, found %q", tok)
			}
			if name == "unit" {
				u, ok := ingest.LookupTimeUnit(value)
				if !ok {
					return r.w.BadLine(lineNo, "expected unit=s, ms, us, ns, ps or fs in the header, found %q", tok)
				}
				lay.unit = u
			}
			attrs = append(attrs, [2]string{name, value})
			continue
		}
		if !isColumnName(tok) {
			return r.w.BadLine(lineNo, "expected a column name (lower case letters, digits, _) in the header, found %q", tok)
		}
		if len(lay.cols) == maxColumns {
			return r.w.BadLine(lineNo, "expected at most %d columns in the header, found more", maxColumns)
		}
		name := string(tok)
		for _, n := range lay.names {
			if n == name {
				return r.w.BadLine(lineNo, "expected each column once in the header, found %q twice", name)
			}
		}
		c, ok := columnNames[name]
		if !ok {
			c = colExtra
		} else {
			lay.has[c] = true
		}
		if c == colTimestamp {
			lay.tsCol = len(lay.cols)
		}
		lay.cols = append(lay.cols, c)
		lay.names = append(lay.names, name)
		lay.nameBs = append(lay.nameBs, []byte(name))
	}
	switch {
	case !lay.has[colTimestamp] || !lay.has[colProbe]:
		return r.w.BadLine(lineNo, "expected a timestamp and a probe column in the header, found %q", joinNames(lay.names))
	case lay.cols[0] > colProbe:
		return r.w.BadLine(lineNo, "expected the first column to be timestamp, cpu, pid, tid or probe, found %q", lay.names[0])
	}
	lay.valid = true
	r.lay = lay
	// runs.meta and runs.time_unit describe the first header; a later
	// one (outputs of two scripts, one after the other) rules the lines
	// after it.
	if r.first == nil {
		first := r.lay
		r.first = &first
		for _, a := range attrs {
			r.w.SetMeta(a[0], metaValue(a[1]))
		}
		r.w.SetMeta("columns", lay.names)
		r.w.SetTimeUnit(lay.unit.Name, lay.unit.NsPerUnit())
	} else if lay.unit != r.first.unit || joinNames(lay.names) != joinNames(r.first.names) {
		r.diagOnce(findHeaderChange, schema.Info, lineNo, schema.NoSeq, func() string {
			return "a header whose columns or unit differ from the first: they rule the lines after it; runs.meta and runs.time_unit describe the first (count = such headers)"
		})
	}
	return nil
}

// event reads one event line and applies it:
//  1. The columns are read in the header's order, then key=value pairs.
//  2. The process, thread and CPU it names are looked up (created on
//     first sight); a switching gap left pending on its CPU is written
//     unless this is the on-cpu that ends it at the same instant.
//  3. The event row is written, in the context of what runs (the
//     innermost interrupt on its CPU, else its thread, else its process,
//     else the thread that holds its CPU).
//  4. The probe moves the state machines: on-cpu/off-cpu, exec, thread
//     exit, interrupt start/complete, entry/return.
func (r *eventReader) event(lineNo int64, line []byte) error {
	f := &r.ln
	msg := r.parse(line)
	if msg == "" {
		msg = r.w.TimeOutOfBounds(f.ts)
	}
	if msg != "" {
		return r.w.BadLine(lineNo, "%s", msg)
	}
	if r.haveTS && f.ts < r.prevTS {
		prev, ts, col := r.prevTS, f.ts, r.lay.tsCol+1
		r.diagOnce(findBackwards, schema.Warning, lineNo, schema.NoSeq, func() string {
			return fmt.Sprintf("timestamp %d ns is earlier than the line before (%d ns): the lines are not in time order (DTrace prints each CPU's buffer in turn; run the script with -x temporal, or sort the event lines of %s by column %d). Events keep file order; state intervals follow it, clamped where they would end before they start (count = lines going back)", ts, prev, r.file, col)
		})
	}
	r.prevTS, r.haveTS = f.ts, true
	r.lastTS = max(r.lastTS, f.ts)

	kind := classify(f.provider, f.name)

	// objects
	var p *process
	var th *thread
	if f.hasPID {
		p = r.process(f.pid)
		if f.hasTID {
			th = r.thread(p, f.tid)
		}
		if f.hasExec && (!p.named || kind == probeExec) {
			r.rename(p, f.execname)
		}
		if f.hasPPID && !p.parent && f.ppid != f.pid {
			p.parent = true
			r.w.SetParent(p.id, r.process(f.ppid).id)
		}
	}
	var c *cpuState
	cpuN := schema.NoCPU
	if f.hasCPU {
		c = r.cpu(f.cpu)
		cpuN = schema.CPU(f.cpu)
		if c.gapPending && !((kind == probeOnCPU) && f.ts == c.gapAt) {
			if err := r.writeGap(c); err != nil {
				return err
			}
		}
	}

	// the event row
	ctx := schema.NoObject
	switch {
	case c != nil && r.cpuT.Nesting(cpuN) > 0:
		ctx = r.cpuT.Holder(cpuN) // the innermost interrupt
	case th != nil:
		ctx = th.id
	case p != nil:
		ctx = p.id
	case c != nil:
		if t := r.running(c); t != nil {
			ctx = t.id
		}
	}
	obj := ctx
	var irq *interrupt
	switch {
	case kind == probeIntrStart || kind == probeIntrDone:
		irq = r.interrupt(f)
		obj = irq.id
	case th != nil:
		obj = th.id
	case p != nil:
		obj = p.id
	}
	ev := schema.Event{TS: f.ts, CPU: cpuN, Class: r.w.SymBytes(className(f.provider, f.pid, f.hasPID)), Event: r.w.SymBytes(f.probe[len(f.provider)+1+len(f.module)+1:]),
		Context: ctx, Object: obj, SourceInstance: schema.NoInstance, TargetInstance: schema.NoInstance, Line: lineNo}
	if r.lay.unit.Div > 1 {
		ev.TSRaw, ev.HasRaw = int64(f.tsRaw), f.tsRaw <= math.MaxInt64
	}
	r.args = r.appendArgs(r.args[:0])
	if len(r.args) > 0 {
		ev.Args = r.args
	}
	seq, err := r.w.Event(&ev)
	if err != nil {
		return err
	}

	// the state machines
	switch kind {
	case probeOnCPU:
		return r.onCPU(th, c, f, seq, lineNo)
	case probeOffCPU:
		return r.offCPU(th, c, f, seq, lineNo)
	case probeThreadExit:
		if th != nil {
			th.exited = true
			return r.unwind(&th.owner, f.ts, seq)
		}
	case probeIntrStart:
		return r.intrStart(c, irq, f, seq, lineNo)
	case probeIntrDone:
		return r.intrDone(c, irq, f, seq, lineNo)
	case probeEntry, probeReturn:
		o, kindName := r.ownerOf(th, p)
		if o == nil {
			r.diagOnce(findNoOwner, schema.Info, lineNo, seq, func() string {
				return fmt.Sprintf("%s without pid (and tid) columns: entry and return cannot be paired, kept as events", f.probe)
			})
			return nil
		}
		if kind == probeEntry {
			return r.entry(o, kindName, ev.Class, f, seq, cpuN, lineNo)
		}
		return r.ret(o, f, seq, lineNo)
	}
	return nil
}

// parse reads the line's columns and key=value pairs into r.ln; it
// returns what was expected and found when the line cannot be read.
func (r *eventReader) parse(line []byte) string {
	f := &r.ln
	*f = lineFields{keys: f.keys[:0], vals: f.vals[:0], quoted: f.quoted[:0], extraCols: f.extraCols[:0], extraVals: f.extraVals[:0]}
	lay := &r.lay
	rest := line
	for i, c := range lay.cols {
		var tok []byte
		tok, rest = nextToken(rest)
		if len(tok) == 0 {
			return fmt.Sprintf("expected %d columns (%s), found %d", len(lay.cols), joinNames(lay.names), i)
		}
		switch c {
		case colTimestamp:
			v, ok := ingest.ParseUint(tok)
			if !ok {
				return r.colErr(i, "an unsigned integer", tok)
			}
			ns, ok := toNS(v, lay.unit)
			if !ok {
				return fmt.Sprintf("column %d (%s): expected at most %d ns, found %s %s", i+1, lay.names[i], int64(math.MaxInt64), tok, lay.unit.Name)
			}
			f.tsRaw, f.ts = v, ns
		case colCPU:
			v, ok := ingest.ParseUint(tok)
			if !ok || v > math.MaxInt32 {
				return r.colErr(i, "a CPU number", tok)
			}
			f.cpu, f.hasCPU = int64(v), true
		case colPID, colTID:
			v, ok := ingest.ParseUint(tok)
			if !ok || v > math.MaxInt64 {
				return r.colErr(i, "an unsigned integer", tok)
			}
			if c == colPID {
				f.pid, f.hasPID = int64(v), true
			} else {
				f.tid, f.hasTID = int64(v), true
			}
		case colProbe:
			if !splitProbe(f, tok) {
				return r.colErr(i, "provider:module:function:name", tok)
			}
		case colExecname:
			f.execname, f.hasExec = tok, true
		default:
			f.extraCols = append(f.extraCols, i)
			f.extraVals = append(f.extraVals, tok)
		}
	}
	for {
		rest = skipBlanks(rest)
		if len(rest) == 0 {
			return ""
		}
		end := tokenEnd(rest)
		eq := bytes.IndexByte(rest[:end], '=')
		if eq <= 0 {
			return fmt.Sprintf("expected key=value after the %d columns, found %q", len(lay.cols), rest[:end])
		}
		key := rest[:eq]
		var val []byte
		quoted := len(rest) > eq+1 && rest[eq+1] == '"'
		if quoted {
			// The value runs to the first quote followed by a blank or
			// the end of the line: D's printf cannot escape a quote, so
			// there is no escape character.
			body := rest[eq+2:]
			k := closingQuote(body)
			if k < 0 {
				return fmt.Sprintf("key %q: expected a closing quote before a blank or the end of the line, found %q", key, rest[eq+1:])
			}
			val, rest = body[:k], body[k+1:]
		} else {
			val, rest = rest[eq+1:end], rest[end:]
		}
		if len(f.keys) == maxKeys {
			return fmt.Sprintf("expected at most %d key=value pairs, found more", maxKeys)
		}
		if dup := r.duplicate(key); dup {
			return fmt.Sprintf("expected each key once, found %q twice", key)
		}
		f.keys = append(f.keys, key)
		f.vals = append(f.vals, val)
		f.quoted = append(f.quoted, quoted)
		if msg := special(f, key, val); msg != "" {
			return msg
		}
	}
}

// maxKeys bounds the key=value pairs of a line (and the work of finding a
// repeated key).
const maxKeys = 64

// duplicate reports whether key was given before on the line, as a key
// or as an extra column (execname: as the execname column).
func (r *eventReader) duplicate(key []byte) bool {
	f := &r.ln
	for _, k := range f.keys {
		if bytes.Equal(k, key) {
			return true
		}
	}
	for _, i := range f.extraCols {
		if string(key) == r.lay.names[i] {
			return true
		}
	}
	return r.lay.has[colExecname] && string(key) == "execname"
}

// special reads the keys that mean something to the state machine.
func special(f *lineFields, key, val []byte) string {
	switch string(key) {
	case "execname":
		f.execname, f.hasExec = val, len(val) > 0
	case "idle":
		v, ok := parseInt(val)
		if !ok {
			return fmt.Sprintf("key \"idle\": expected an integer (1: the idle thread), found %q", val)
		}
		f.idle, f.hasIdle = v != 0, true
	case "ppid":
		v, ok := ingest.ParseUint(val)
		if !ok || v > math.MaxInt64 {
			return fmt.Sprintf("key \"ppid\": expected an unsigned integer, found %q", val)
		}
		f.ppid, f.hasPPID = int64(v), true
	case "state":
		f.state, f.hasState = val, len(val) > 0
	case "func":
		f.fn, f.hasFn = val, len(val) > 0
	case "irq":
		f.irq, f.hasIrq = val, len(val) > 0
	}
	return ""
}

func (r *eventReader) colErr(i int, want string, tok []byte) string {
	return fmt.Sprintf("column %d (%s): expected %s, found %q", i+1, r.lay.names[i], want, tok)
}

// splitProbe splits provider:module:function:name; provider and name must
// not be empty.
func splitProbe(f *lineFields, p []byte) bool {
	var parts [4][]byte
	rest := p
	for i := 0; i < 3; i++ {
		k := bytes.IndexByte(rest, ':')
		if k < 0 {
			return false
		}
		parts[i], rest = rest[:k], rest[k+1:]
	}
	if bytes.IndexByte(rest, ':') >= 0 || len(parts[0]) == 0 || len(rest) == 0 {
		return false
	}
	f.probe, f.provider, f.module, f.function, f.name = p, parts[0], parts[1], parts[2], rest
	return true
}

// classify tells what a probe means to the state machine.
func classify(provider, name []byte) probeKind {
	switch string(provider) {
	case "sched":
		switch string(name) {
		case "on-cpu":
			return probeOnCPU
		case "off-cpu":
			return probeOffCPU
		}
	case "proc":
		switch string(name) {
		case "exec-success":
			return probeExec
		case "lwp-exit", "exit":
			return probeThreadExit
		}
	}
	switch {
	case string(name) == "interrupt-start":
		return probeIntrStart
	case string(name) == "interrupt-complete":
		return probeIntrDone
	case string(name) == "entry" || bytes.HasSuffix(name, []byte("-entry")):
		return probeEntry
	case string(name) == "return" || bytes.HasSuffix(name, []byte("-return")):
		return probeReturn
	}
	return probeOther
}

// className is the events.class of a provider: the provider without the
// pid that DTrace appends to pid and USDT provider names (pid1234 → pid,
// python1234 → python), when that number is the line's pid.
func className(provider []byte, pid int64, hasPID bool) []byte {
	if !hasPID {
		return provider
	}
	i := len(provider)
	for i > 0 && provider[i-1] >= '0' && provider[i-1] <= '9' {
		i--
	}
	if i == 0 || i == len(provider) || (provider[i] == '0' && i < len(provider)-1) {
		return provider
	}
	if v, ok := ingest.ParseUint(provider[i:]); ok && v == uint64(pid) {
		return provider[:i]
	}
	return provider
}

// appendArgs writes the extra columns and the key=value pairs (but
// execname, which names the process) as a JSON object, in line order;
// nothing when there are none.
func (r *eventReader) appendArgs(dst []byte) []byte {
	f := &r.ln
	n := 0
	put := func(key, val []byte, quoted bool) {
		if n == 0 {
			dst = append(dst, '{')
		} else {
			dst = append(dst, ',')
		}
		n++
		dst = ingest.AppendJSONString(dst, key)
		dst = append(dst, ':')
		if !quoted && isJSONNumber(val) {
			dst = append(dst, val...)
		} else {
			dst = ingest.AppendJSONString(dst, val)
		}
	}
	for i, col := range f.extraCols {
		put(r.lay.nameBs[col], f.extraVals[i], false)
	}
	for i, k := range f.keys {
		if string(k) != "execname" {
			put(k, f.vals[i], f.quoted[i])
		}
	}
	if n > 0 {
		dst = append(dst, '}')
	}
	return dst
}

// process returns the process of a pid, creating it on first sight.
func (r *eventReader) process(pid int64) *process {
	if p := r.procs[pid]; p != nil {
		return p
	}
	name := strconv.FormatInt(pid, 10)
	p := &process{pid: pid, name: name, label: name}
	p.id = r.w.NewObject("process", name)
	r.w.SetNativeID(p.id, pid)
	r.w.SetPID(p.id, pid)
	r.procs[pid] = p
	return p
}

// thread returns the thread (pid, tid), creating it on first sight.
func (r *eventReader) thread(p *process, tid int64) *thread {
	k := threadKey{p.pid, tid}
	if th := r.threads[k]; th != nil {
		return th
	}
	th := &thread{key: k, proc: p}
	th.name = p.label + "/" + strconv.FormatInt(tid, 10)
	th.id = r.w.NewObject("thread", th.name)
	r.w.SetNativeID(th.id, tid)
	r.w.SetPID(th.id, p.pid)
	r.w.SetParent(th.id, p.id)
	r.cpuT.Declare(th.id, schema.HolderSpec{Role: schema.RoleTask, Process: p.id})
	r.threads[k] = th
	r.byID[th.id] = th
	p.threads = append(p.threads, th)
	return th
}

// rename names a process by its execname (its first one, then the one
// after each exec) and its threads after it. (The CPU tracker shows a
// thread under its new name from its next change of holder on, and
// aggregates all its names into its process, named as it is at the end.)
func (r *eventReader) rename(p *process, execname []byte) {
	if p.named && string(execname) == p.name {
		return
	}
	p.name, p.named = string(execname), true
	p.label = p.name + "[" + strconv.FormatInt(p.pid, 10) + "]"
	r.w.SetName(p.id, p.name)
	for _, th := range p.threads {
		th.name = p.label + "/" + strconv.FormatInt(th.key.tid, 10)
		r.w.SetName(th.id, th.name)
	}
}

// cpu returns the CPU of number n, creating it on first sight.
func (r *eventReader) cpu(n int64) *cpuState {
	if c := r.cpus[n]; c != nil {
		return c
	}
	c := &cpuState{n: n, idle: schema.NoObject, switching: schema.NoObject}
	r.cpuT.Object(schema.CPU(n)) // "cpu N"
	r.cpus[n] = c
	return c
}

// idleHolder is CPU c's idle thread as a holder: one object per CPU
// (every Linux CPU's idle task is pid 0, tid 0), "idle/N".
func (r *eventReader) idleHolder(c *cpuState) schema.ObjectID {
	if c.idle == schema.NoObject {
		c.idle = r.w.NewObject("thread", "idle/"+strconv.FormatInt(c.n, 10))
		r.w.SetPID(c.idle, 0)
		r.cpuT.Declare(c.idle, schema.HolderSpec{Role: schema.RoleIdle})
	}
	return c.idle
}

// switchingHolder is CPU c's dispatcher between a thread's off-cpu and the
// next on-cpu: kernel work of no thread, "switching/N".
func (r *eventReader) switchingHolder(c *cpuState) schema.ObjectID {
	if c.switching == schema.NoObject {
		c.switching = r.w.NewObject("system", "switching/"+strconv.FormatInt(c.n, 10))
		r.cpuT.Declare(c.switching, schema.HolderSpec{Role: schema.RoleKernel})
	}
	return c.switching
}

// running returns the thread that runs on CPU c by the trace's account:
// nil when its idle thread, its dispatcher or nothing known holds it, or
// when the thread the tracker has there went off it (a gap pending).
func (r *eventReader) running(c *cpuState) *thread {
	if c.gapPending {
		return nil
	}
	return r.byID[r.cpuT.Base(schema.CPU(c.n))]
}

// where returns the CPU th runs on by the trace's account: the tracker's,
// unless th went off it and the gap after is not written yet.
func (r *eventReader) where(th *thread) *cpuState {
	n, ok := r.cpuT.On(th.id)
	if !ok {
		return nil
	}
	if c := r.cpus[int64(n)]; c != nil && !c.gapPending {
		return c
	}
	return nil
}

// release takes th off the CPU it went off, whose gap is pending, before
// th holds another CPU (the tracker would leave that one with nothing):
// th's interval there ends at its off-cpu, and the CPU is not known until
// its next event writes the gap (or the end of the lines drops it).
// Under interrupts the gap is written now: they go on over it.
func (r *eventReader) release(th *thread, c *cpuState) error {
	n, ok := r.cpuT.On(th.id)
	if !ok {
		return nil
	}
	d := r.cpus[int64(n)]
	if d == nil || d == c || !d.gapPending {
		return nil
	}
	if r.cpuT.Nesting(n) > 0 {
		return r.writeGap(d)
	}
	return r.cpuT.Forget(n, d.gapAt, d.gapSeq)
}

// interrupt returns the interrupt an interrupt-start/complete line names
// by its irq key ("interrupt" without one).
func (r *eventReader) interrupt(f *lineFields) *interrupt {
	name := []byte("interrupt")
	if f.hasIrq {
		name = f.irq
	}
	if ir := r.irqs[string(name)]; ir != nil {
		return ir
	}
	ir := &interrupt{name: string(name)}
	ir.id = r.w.NewObject("interrupt", ir.name)
	r.cpuT.Declare(ir.id, schema.HolderSpec{Role: schema.RoleInterrupt})
	r.irqs[ir.name] = ir
	r.irqByID[ir.id] = ir
	return ir
}

func (r *eventReader) ownerOf(th *thread, p *process) (*owner, string) {
	switch {
	case th != nil:
		return &th.owner, "thread"
	case p != nil:
		return &p.owner, "process"
	}
	return nil, ""
}

// onCPU: a thread begins to run on a CPU and holds it. The idle thread
// (idle=1, or pid 0 without an idle key) makes its CPU's idle holder hold
// it and has no scheduling states of its own (on Linux every CPU's idle
// task is pid 0, tid 0). A switching gap still pending on the CPU is
// dropped: the on-cpu came at the instant of the off-cpu.
func (r *eventReader) onCPU(th *thread, c *cpuState, f *lineFields, seq schema.Seq, lineNo int64) error {
	var cur *thread // what ran there without an off-cpu
	cpuN := schema.NoCPU
	if c != nil {
		cur = r.running(c)
		c.gapPending = false
		cpuN = schema.CPU(c.n)
	}
	if isIdle(f) {
		if c == nil {
			return nil
		}
		if cur != nil {
			if err := r.busy(c, cur, nil, f, seq, lineNo); err != nil {
				return err
			}
		}
		return r.cpuT.Run(cpuN, r.idleHolder(c), f.ts, seq)
	}
	if th == nil {
		return nil
	}
	if cur != nil && cur != th {
		if err := r.busy(c, cur, th, f, seq, lineNo); err != nil {
			return err
		}
	}
	if d := r.where(th); d != nil && d != c {
		// It went off CPU d without an off-cpu line: its interval there
		// and d's are cut.
		r.diagOnce(findOnElsewhere, schema.Warning, lineNo, seq, func() string {
			return fmt.Sprintf("on-cpu of %s on CPU %s while it runs on CPU %d (no off-cpu there): its running interval and CPU %d's are cut here", th.name, cpuText(c), d.n, d.n)
		})
		if err := r.w.CloseCut(th.id, 0, f.ts, seq); err != nil {
			return err
		}
		if err := r.leave(d, f.ts, seq); err != nil {
			return err
		}
	} else if err := r.release(th, c); err != nil {
		return err
	}
	th.exited, th.known = false, true
	r.threadLevel(r.syms.running, "on_cpu")
	if err := r.w.Transition(th.id, 0, f.ts, r.syms.running, seq, cpuN); err != nil {
		return err
	}
	if c == nil {
		return nil
	}
	return r.cpuT.Run(cpuN, th.id, f.ts, seq)
}

// busy handles an on-cpu on a CPU where another thread runs without its
// off-cpu: that thread's running interval is cut (the CPU goes to the
// thread switched in).
func (r *eventReader) busy(c *cpuState, prev, next *thread, f *lineFields, seq schema.Seq, lineNo int64) error {
	r.diagOnce(findOnBusy, schema.Warning, lineNo, seq, func() string {
		who := "the idle thread"
		if next != nil {
			who = next.name
		}
		return fmt.Sprintf("on-cpu of %s on CPU %d while %s runs there (no off-cpu): %s's running interval is cut here", who, c.n, prev.name, prev.name)
	})
	return r.w.CloseCut(prev.id, 0, f.ts, seq)
}

// leave makes what holds CPU d unknown: its interval is cut, unless an
// interrupt holds it, which ends on its own (what it interrupted is then
// not known).
func (r *eventReader) leave(d *cpuState, ts int64, seq schema.Seq) error {
	d.gapPending = false
	n := schema.CPU(d.n)
	if r.cpuT.Nesting(n) > 0 {
		if b := r.cpuT.Base(n); b != schema.NoObject {
			_, err := r.cpuT.Stop(b, ts, seq)
			return err
		}
		return nil
	}
	return r.cpuT.Unknown(n, ts, seq)
}

// offCPU: a thread stops running. It goes to the state the line's state
// key names, off_cpu without one; an exited thread's state ends. The CPU
// is switching until the next on-cpu there.
func (r *eventReader) offCPU(th *thread, c *cpuState, f *lineFields, seq schema.Seq, lineNo int64) error {
	if isIdle(f) {
		if c == nil {
			return nil
		}
		if prev := r.running(c); prev != nil {
			r.diagOnce(findOffNotOn, schema.Warning, lineNo, seq, func() string {
				return fmt.Sprintf("off-cpu of the idle thread on CPU %d while %s runs there: %s's running interval is cut here", c.n, prev.name, prev.name)
			})
			if err := r.w.CloseCut(prev.id, 0, f.ts, seq); err != nil {
				return err
			}
		}
		c.switchAt(f.ts, seq)
		return nil
	}
	if th == nil {
		return nil
	}
	cpuN := schema.NoCPU
	if c != nil {
		cpuN = schema.CPU(c.n)
		if r.running(c) != th {
			if err := r.offNotOn(th, c, f, seq, lineNo); err != nil {
				return err
			}
		}
		c.switchAt(f.ts, seq)
	} else if d := r.where(th); d != nil {
		if err := r.leave(d, f.ts, seq); err != nil {
			return err
		}
	}
	th.known = true
	if th.exited {
		return r.w.Close(th.id, 0, f.ts, seq)
	}
	state := r.syms.offCPU
	if f.hasState {
		state = r.w.SymBytes(f.state)
	}
	r.threadLevel(state, "off_cpu")
	return r.w.Transition(th.id, 0, f.ts, state, seq, cpuN)
}

// offNotOn handles an off-cpu of a thread that was not known to run on
// that CPU. The first off-cpu of a thread on a CPU whose holder is not
// known yet is what a trace that begins while threads run looks like
// (info); otherwise the trace contradicts itself (warning) and what it
// contradicts is cut.
func (r *eventReader) offNotOn(th *thread, c *cpuState, f *lineFields, seq schema.Seq, lineNo int64) error {
	cpuN := schema.CPU(c.n)
	base := r.cpuT.Base(cpuN)
	if base == schema.NoObject && r.where(th) == nil && !th.known {
		r.diagOnce(findOffFirst, schema.Info, lineNo, seq, func() string {
			return fmt.Sprintf("off-cpu of %s on CPU %d before any on-cpu of it (the trace began while it ran): its off-CPU state starts here, its running interval is not known (count = threads)", th.name, c.n)
		})
		return nil
	}
	prev := r.running(c)
	r.diagOnce(findOffNotOn, schema.Warning, lineNo, seq, func() string {
		where := "nothing known"
		switch {
		case prev != nil:
			where = prev.name
		case base == schema.NoObject:
		case base == c.idle:
			where = "the idle thread"
		case base == c.switching:
			where = "no thread (after an off-cpu)"
		}
		return fmt.Sprintf("off-cpu of %s on CPU %d, where %s runs: what the trace said runs there, and where it ran, is cut here", th.name, c.n, where)
	})
	if prev != nil {
		if err := r.w.CloseCut(prev.id, 0, f.ts, seq); err != nil {
			return err
		}
	}
	if d := r.where(th); d != nil && d != c {
		if err := r.w.CloseCut(th.id, 0, f.ts, seq); err != nil {
			return err
		}
		return r.leave(d, f.ts, seq)
	}
	return nil
}

// switchAt starts the gap between an off-cpu and the next on-cpu.
func (c *cpuState) switchAt(ts int64, seq schema.Seq) {
	c.gapPending, c.gapAt, c.gapSeq = true, ts, seq
}

// writeGap writes a pending switching gap from its off-cpu on: the CPU's
// dispatcher holds it (under the interrupts being handled, if any).
func (r *eventReader) writeGap(c *cpuState) error {
	c.gapPending = false
	return r.cpuT.Run(schema.CPU(c.n), r.switchingHolder(c), c.gapAt, c.gapSeq)
}

// intrStart: an interrupt is handled on a CPU (its interval: instance =
// the CPU's number) and holds it; it is the context of the CPU's events
// until its interrupt-complete. Interrupts nest.
func (r *eventReader) intrStart(c *cpuState, ir *interrupt, f *lineFields, seq schema.Seq, lineNo int64) error {
	if c == nil {
		r.diagOnce(findNoCPU, schema.Info, lineNo, seq, func() string {
			return fmt.Sprintf("%s without a cpu column: the interrupt has no interval, kept as an event", f.probe)
		})
		return nil
	}
	cpuN := schema.CPU(c.n)
	ok, err := r.cpuT.Enter(cpuN, ir.id, f.ts, seq)
	if err != nil {
		return err
	}
	if !ok {
		r.diagOnce(findTooDeep, schema.Warning, lineNo, seq, func() string {
			return fmt.Sprintf("interrupts nested deeper than %d on CPU %d: kept as events", maxInterrupts, c.n)
		})
		return nil
	}
	return r.w.Transition(ir.id, c.n, f.ts, r.syms.handler, seq, cpuN)
}

// intrDone ends the interrupt's handling on the CPU, which goes back to
// what it interrupted; inner interrupts still open (their complete
// missing) are cut. An interrupt that started while what the CPU ran was
// not known leaves it not known.
func (r *eventReader) intrDone(c *cpuState, ir *interrupt, f *lineFields, seq schema.Seq, lineNo int64) error {
	if c == nil {
		r.diagOnce(findNoCPU, schema.Info, lineNo, seq, func() string {
			return fmt.Sprintf("%s without a cpu column: the interrupt has no interval, kept as an event", f.probe)
		})
		return nil
	}
	cpuN := schema.CPU(c.n)
	at := 0
	for ; ; at++ {
		id := r.cpuT.Interrupt(cpuN, at)
		if id == ir.id {
			break
		}
		if id == schema.NoObject {
			r.diagOnce(findIntrNotStarted, schema.Info, lineNo, seq, func() string {
				return fmt.Sprintf("interrupt-complete of %s on CPU %d without its interrupt-start (the trace began inside it): kept as an event", ir.name, c.n)
			})
			return nil
		}
	}
	for j := 0; j < at; j++ {
		inner := r.irqByID[r.cpuT.Interrupt(cpuN, j)]
		r.diagOnce(findIntrSkips, schema.Warning, lineNo, seq, func() string {
			return fmt.Sprintf("interrupt-complete of %s on CPU %d while %s, started after it, has not completed: that interval is cut here", ir.name, c.n, inner.name)
		})
		if err := r.w.CloseCut(inner.id, c.n, f.ts, seq); err != nil {
			return err
		}
	}
	if err := r.w.Close(ir.id, c.n, f.ts, seq); err != nil {
		return err
	}
	_, _, err := r.cpuT.Leave(cpuN, ir.id, f.ts, seq)
	return err
}

// entry opens the interval of a call at the next nesting depth of its
// thread (instance = depth, from 1; instance 0 is the scheduling state).
func (r *eventReader) entry(o *owner, kindName string, class schema.Sym, f *lineFields, seq schema.Seq, cpuN schema.CPU, lineNo int64) error {
	if len(o.frames) >= maxDepth {
		r.diagOnce(findTooDeep, schema.Warning, lineNo, seq, func() string {
			return fmt.Sprintf("calls nested deeper than %d on %s: the deeper entries are kept as events", maxDepth, r.w.ObjectName(o.id))
		})
		return nil
	}
	state := r.callState(f)
	key := r.pairKey(f, len("entry"))
	o.frames = append(o.frames, frame{key: key, state: state})
	lk := levelKey{lvCall, state}
	if kindName == "process" {
		lk.kind = lvProcCall
	}
	if !r.levelSeen[lk] {
		r.levelSeen[lk] = true
		r.w.StateLevel(kindName, r.w.String(state), 0, r.w.String(class))
	}
	return r.w.Transition(o.id, int64(len(o.frames)), f.ts, state, seq, cpuN)
}

// ret closes the interval of the innermost open call it returns from;
// calls entered after it and not returned (a return the trace lacks) are
// cut. A return without its entry is an event only.
func (r *eventReader) ret(o *owner, f *lineFields, seq schema.Seq, lineNo int64) error {
	state := r.callState(f)
	key := r.pairKey(f, len("return"))
	i := len(o.frames) - 1
	for i >= 0 && (o.frames[i].key != key || o.frames[i].state != state) {
		i--
	}
	if i < 0 {
		r.diagOnce(findReturnNoEntry, schema.Info, lineNo, seq, func() string {
			return fmt.Sprintf("%s on %s without its entry (the trace began inside the call): kept as an event", f.probe, r.w.ObjectName(o.id))
		})
		return nil
	}
	for j := len(o.frames) - 1; j > i; j-- {
		inner := o.frames[j].state
		r.diagOnce(findReturnSkips, schema.Warning, lineNo, seq, func() string {
			return fmt.Sprintf("%s on %s while %s, entered after it, has not returned: that interval is cut here", f.probe, r.w.ObjectName(o.id), r.w.String(inner))
		})
		if err := r.w.CloseCut(o.id, int64(j+1), f.ts, seq); err != nil {
			return err
		}
	}
	o.frames = o.frames[:i]
	return r.w.Close(o.id, int64(i+1), f.ts, seq)
}

// pairKey is what an entry and its return share besides the state:
// provider:module: and the probe name without its entry/return suffix
// (syscall::, pid7:libc.so.1:, python7:libpython.so:function-). The
// function is left out: USDT entry and return probes may sit in
// different C functions (CPython's function-entry and function-return).
func (r *eventReader) pairKey(f *lineFields, suffix int) schema.Sym {
	r.key = append(r.key[:0], f.probe[:len(f.provider)+1+len(f.module)+1]...)
	r.key = append(r.key, f.name[:len(f.name)-suffix]...)
	return r.w.SymBytes(r.key)
}

// callState names a call's interval: the func key, else the probe's
// function, else its provider.
func (r *eventReader) callState(f *lineFields) schema.Sym {
	switch {
	case f.hasFn:
		return r.w.SymBytes(f.fn)
	case len(f.function) > 0:
		return r.w.SymBytes(f.function)
	}
	return r.w.SymBytes(f.provider)
}

// unwind cuts every open call of an exiting thread.
func (r *eventReader) unwind(o *owner, ts int64, seq schema.Seq) error {
	for j := len(o.frames); j >= 1; j-- {
		if err := r.w.CloseCut(o.id, int64(j), ts, seq); err != nil {
			return err
		}
	}
	o.frames = o.frames[:0]
	return nil
}

// End closes what is open at the last timestamp of the event lines: a CPU
// whose last event was an off-cpu ends there (what it ran after is not
// known), then every open interval of the threads and processes (states,
// calls) is closed and marked truncated; the CPUs' and interrupts' are
// closed so by the run's end.
func (r *eventReader) End() error {
	if !r.haveTS {
		return nil
	}
	cpus := make([]*cpuState, 0, len(r.cpus))
	for _, c := range r.cpus {
		cpus = append(cpus, c)
	}
	sort.Slice(cpus, func(i, j int) bool { return cpus[i].n < cpus[j].n })
	for _, c := range cpus {
		if !c.gapPending {
			continue
		}
		cpuN := schema.CPU(c.n)
		if r.cpuT.Nesting(cpuN) > 0 {
			// the interrupts go on to the end, the dispatcher under them
			if err := r.writeGap(c); err != nil {
				return err
			}
			continue
		}
		c.gapPending = false
		if err := r.cpuT.Forget(cpuN, c.gapAt, c.gapSeq); err != nil {
			return err
		}
	}
	end, seq := r.lastTS, schema.NoSeq
	owners := make([]*owner, 0, len(r.threads)+len(r.procs))
	for _, th := range r.threads {
		owners = append(owners, &th.owner)
	}
	for _, p := range r.procs {
		owners = append(owners, &p.owner)
	}
	sort.Slice(owners, func(i, j int) bool { return owners[i].id < owners[j].id })
	for _, o := range owners {
		if err := r.unwind(o, end, seq); err != nil {
			return err
		}
		if err := r.w.CloseCut(o.id, 0, end, seq); err != nil {
			return err
		}
	}
	return nil
}

func (r *eventReader) threadLevel(state schema.Sym, parent string) {
	k := levelKey{lvThread, state}
	if !r.levelSeen[k] {
		r.levelSeen[k] = true
		r.w.StateLevel("thread", r.w.String(state), 0, parent)
	}
}

// diagOnce records a finding the first time and counts it after that; msg
// is only built the first time.
func (r *eventReader) diagOnce(f finding, sev schema.Severity, line int64, seq schema.Seq, msg func() string) {
	if r.seen[f] {
		r.w.DiagRepeat(r.once[f])
		return
	}
	r.seen[f] = true
	r.once[f] = r.w.Diag(sev, line, seq, msg())
}

// isIdle tells whether an on-cpu/off-cpu line is about the idle thread:
// idle=1, or pid 0 when the line has no idle key.
func isIdle(f *lineFields) bool {
	if f.hasIdle {
		return f.idle
	}
	return f.hasPID && f.pid == 0
}

func cpuText(c *cpuState) string {
	if c == nil {
		return "(none)"
	}
	return strconv.FormatInt(c.n, 10)
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' }

func skipBlanks(b []byte) []byte {
	i := 0
	for i < len(b) && isBlank(b[i]) {
		i++
	}
	return b[i:]
}

func tokenEnd(b []byte) int {
	i := 0
	for i < len(b) && !isBlank(b[i]) {
		i++
	}
	return i
}

// nextToken returns the next blank-separated token and what follows it.
func nextToken(b []byte) (tok, rest []byte) {
	b = skipBlanks(b)
	i := tokenEnd(b)
	return b[:i], b[i:]
}

// closingQuote is the index of the first '"' followed by a blank or the
// end of b, -1 when there is none.
func closingQuote(b []byte) int {
	for i := 0; i < len(b); i++ {
		if b[i] == '"' && (i+1 == len(b) || isBlank(b[i+1])) {
			return i
		}
	}
	return -1
}

// parseInt reads a decimal integer with an optional sign.
func parseInt(b []byte) (int64, bool) {
	neg := false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg, b = b[0] == '-', b[1:]
	}
	v, ok := ingest.ParseUint(b)
	if !ok || v > math.MaxInt64 {
		return 0, false
	}
	if neg {
		return -int64(v), true
	}
	return int64(v), true
}

// toNS converts a timestamp in unit u to ns (floor), exactly.
func toNS(v uint64, u ingest.TimeUnit) (int64, bool) {
	hi, lo := bits.Mul64(v, u.Mul)
	if hi >= u.Div {
		return 0, false
	}
	q, _ := bits.Div64(hi, lo, u.Div)
	if q > math.MaxInt64 {
		return 0, false
	}
	return int64(q), true
}

// isJSONNumber reports whether b is a number as JSON writes one.
func isJSONNumber(b []byte) bool {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		j := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == j {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == j {
			return false
		}
	}
	return i == len(b)
}

func isColumnName(b []byte) bool {
	if len(b) == 0 || len(b) > 64 || !(b[0] >= 'a' && b[0] <= 'z' || b[0] == '_') {
		return false
	}
	for _, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

func joinNames(names []string) string {
	var b []byte
	for i, n := range names {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, n...)
	}
	return string(b)
}

func quoteOrEnd(b []byte) string {
	if len(b) == 0 {
		return "the end of the line"
	}
	return strconv.Quote(string(b))
}

// metaValue is a header attribute's value for runs.meta: a JSON number
// when it is one, else the text.
func metaValue(s string) any {
	if isJSONNumber([]byte(s)) {
		return json.Number(s)
	}
	return s
}
