package schema

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// DefaultBatchRows bounds the rows of one record batch: memory for a run
// is a few batches, whatever the length of the trace. Two of DuckDB's row
// groups (122,880 rows each): DuckDB writes and compresses a row group when
// it is full, and a batch that fills whole ones loaded the 10M-event BTF
// benchmark in 13.4 s against 15.3 s with batches of 65,536 rows.
const DefaultBatchRows = 2 * 122_880

// Sink receives the record batches of a run, table by table. Put must not
// keep rec after it returns; the writer releases it.
type Sink interface {
	Put(table string, rec arrow.Record) error
}

// RunInfo describes one run (one ingested trace).
type RunInfo struct {
	RunID   int32
	Name    string
	Source  string // path, "-" for standard input; used in error messages
	Format  string
	SHA256  string
	Tags    [][2]string // user --tag k=v, in the order given
	SkipBad bool        // bad lines go to diagnostics instead of stopping the ingest
	// IdleTasks are the user's --idle-task patterns (GlobRegexp): holders
	// of a CPU whose name matches one are idle tasks (docs/semantics.md).
	IdleTasks []string
	// Offsets: the format's src_line is a byte offset (binary formats,
	// Chrome JSON), so the writer's own errors read FILE@OFFSET.
	Offsets bool
}

// Event is one row of the events table as an ingester hands it over. The
// writer copies what it needs; the caller may reuse the struct and the
// byte slices it points to.
type Event struct {
	TS             int64 // ns
	TSRaw          int64 // source timestamp, stored when HasRaw
	HasRaw         bool
	CPU            CPU
	Class, Event   Sym
	Context        ObjectID
	Object         ObjectID
	SourceInstance int64  // NoInstance for NULL
	TargetInstance int64  // NoInstance for NULL
	Value          []byte // nil is NULL
	Args           []byte // JSON object, nil is NULL
	Line           int64  // src_line: line, or byte offset for binary formats
}

type objectRow struct {
	kind     Sym
	name     string
	nativeID int64
	pid      int64
	parent   ObjectID
	attrs    map[string]any
}

type ecoKey struct {
	class, event Sym
	ctx, obj     ObjectID
}

type ecoCached struct {
	k  ecoKey
	id int32 // 0: empty
}

type levelKey struct {
	kind  Sym
	state string
	level int32
}

// RunWriter is the one way into the tables for an ingester: it keeps the
// object registry, counts eco-triples, tracks open state intervals and
// collects diagnostics, and streams events and intervals to its Sink in
// bounded record batches.
type RunWriter struct {
	info      RunInfo
	mem       memory.Allocator
	syms      *symtab
	batchRows int
	out       *pipeline

	// events
	ev      *batch
	seq     Seq
	firstTS int64
	lastTS  int64
	haveTS  bool
	bounds  timeBounds // of every time, events' and intervals' (bounds.go)

	// objects, keyed by kind then name
	objects []objectRow
	byKind  map[Sym]map[string]ObjectID

	// eco-triples
	eco      map[ecoKey]int32
	ecoCache [256]ecoCached // in front of eco: a trace has few triples, met again and again
	ecoKeys  []ecoKey
	ecoN     []int64

	states    stateTracker
	sched     schedTracker
	cpus      CPUTracker
	resources ResourceTracker
	prios     PriorityTracker
	msgs      MessageTracker // made on first use (Messages)

	// aggregations and histograms (aggregations.go), made on first use
	aggs, hists *batch

	diags        []diagRow
	diagOverflow int64

	levels    []levelKey
	levelPar  []string
	levelAt   map[levelKey]int32 // index in levels
	kindDepth map[Sym]int32      // per kind, as state_level_depth: the highest level with a parent, plus 1
	levelGen  int64              // changes with kindDepth

	// the merged intervals of the levels above 0 (levels.go)
	lv levelMerger
	// the statistics of the state tree (statetree.go)
	tree stateTree

	meta      []metaEntry
	metaAt    map[string]int // key -> index in meta: a trace may set many keys
	timeUnit  string
	nsPerUnit float64

	finished bool
	lateSHA  func() string
	symsSent int // symbols already sent to TableSymbols

	// strings that were not UTF-8 and were repaired, and the first event
	// line that brought one
	badUTF8     int64
	badUTF8Line int64
	badUTF8Seq  Seq
	badName     bool
	badMeta     int64

	// object names longer than MaxName, kept cut (symbols count theirs),
	// and the first event line after a name was cut
	cutNames int64
	cutLine  int64
	cutSeq   Seq
}

type metaEntry struct {
	key   string
	value any
}

// NewRunWriter returns a writer for one run that sends its batches to sink
// from a goroutine of its own, so that parsing and loading overlap.
func NewRunWriter(info RunInfo, sink Sink, mem memory.Allocator) *RunWriter {
	if mem == nil {
		mem = DefaultAllocator
	}
	w := &RunWriter{
		info:      info,
		mem:       mem,
		syms:      newSymtab(),
		batchRows: DefaultBatchRows,
		out:       newPipeline(sink),
		byKind:    make(map[Sym]map[string]ObjectID),
		eco:       make(map[ecoKey]int32),
		levelAt:   make(map[levelKey]int32),
		kindDepth: make(map[Sym]int32),
		timeUnit:  "ns",
		nsPerUnit: 1,
	}
	w.states.init(w)
	w.sched.init(w)
	w.cpus.init(w)
	w.lv.init(w)
	w.tree.init(w)
	// Nothing is reserved up front: a short trace (or a fuzzer's input)
	// pays only for the rows it has; after the first batch, each batch
	// reserves the size of the one before (see batch.flushed).
	w.ev = newBatchCounting(mem, TableEvents, w.syms, &w.badUTF8)
	return w
}

// SetBatchRows changes the batch size (tests use small batches to cross
// batch boundaries).
func (w *RunWriter) SetBatchRows(n int) {
	if n > 0 {
		w.batchRows = n
	}
}

// Info returns what the run was started with.
func (w *RunWriter) Info() RunInfo { return w.info }

// Sym interns s.
func (w *RunWriter) Sym(s string) Sym { return w.syms.intern(s) }

// SymBytes interns b; it allocates only the first time a value is seen.
func (w *RunWriter) SymBytes(b []byte) Sym { return w.syms.internBytes(b) }

// String returns the text of a symbol.
func (w *RunWriter) String(s Sym) string { return w.syms.str(s) }

// SetMeta records a header attribute of the trace in runs.meta. Setting a
// key again replaces its value and keeps its position.
func (w *RunWriter) SetMeta(key string, value any) {
	if s, ok := value.(string); ok && !utf8.ValidString(s) {
		w.badMeta++ // json.Marshal repairs it; counted, with no line to point at
	}
	if i, ok := w.metaAt[key]; ok {
		w.meta[i].value = value
		return
	}
	if w.metaAt == nil {
		w.metaAt = map[string]int{}
	}
	w.metaAt[key] = len(w.meta)
	w.meta = append(w.meta, metaEntry{key, value})
}

// SetTimeUnit records the source's time unit and its conversion to ns.
func (w *RunWriter) SetTimeUnit(unit string, nsPerUnit float64) {
	w.timeUnit, w.nsPerUnit = unit, nsPerUnit
}

// Object returns the id of the object of that kind and name, creating it
// on first use.
func (w *RunWriter) Object(kind, name string) ObjectID {
	k := w.syms.intern(kind)
	m := w.byKind[k]
	if m == nil {
		m = make(map[string]ObjectID)
		w.byKind[k] = m
	}
	if id, ok := m[name]; ok {
		return id
	}
	if n := nameLen(name); n < len(name) {
		if id, ok := m[name[:n]]; ok {
			return id
		}
	}
	return w.newObject(k, name)
}

// ObjectBytes is Object for a name in a byte slice; it does not allocate
// when the object exists.
func (w *RunWriter) ObjectBytes(kind Sym, name []byte) ObjectID {
	m := w.byKind[kind]
	if m == nil {
		m = make(map[string]ObjectID)
		w.byKind[kind] = m
	}
	if id, ok := m[string(name)]; ok {
		return id
	}
	if n := nameLen(name); n < len(name) {
		if id, ok := m[string(name[:n])]; ok {
			return id
		}
		name = name[:n]
	}
	return w.newObject(kind, string(name))
}

// NewObject creates an object that the registry does not find by name:
// for formats whose entities are identified by numbers (a QNX thread is a
// pid and a tid) and whose names need not be unique.
func (w *RunWriter) NewObject(kind, name string) ObjectID {
	name = w.boundName(name)
	if !utf8.ValidString(name) {
		w.badName = true
	}
	w.objects = append(w.objects, objectRow{kind: w.syms.intern(kind), name: name, nativeID: NoInstance, pid: NoInstance, parent: NoObject})
	return ObjectID(len(w.objects))
}

// SetName renames an object (a name the trace gives after the object
// appeared). Objects created by Object keep being found by their first
// name.
func (w *RunWriter) SetName(id ObjectID, name string) {
	name = w.boundName(name)
	if !utf8.ValidString(name) {
		w.badName = true
	}
	w.obj(id).name = name
}

// boundName is name cut to MaxName (see nameLen), counted.
func (w *RunWriter) boundName(name string) string {
	if n := nameLen(name); n < len(name) {
		w.cutNames++
		return strings.Clone(name[:n])
	}
	return name
}

func (w *RunWriter) newObject(kind Sym, name string) ObjectID {
	name = w.boundName(name)
	if !utf8.ValidString(name) {
		w.badName = true
	}
	w.objects = append(w.objects, objectRow{kind: kind, name: name, nativeID: NoInstance, pid: NoInstance, parent: NoObject})
	id := ObjectID(len(w.objects)) // ids from 1
	w.byKind[kind][name] = id
	return id
}

func (w *RunWriter) obj(id ObjectID) *objectRow {
	if id <= 0 || int(id) > len(w.objects) {
		panic(fmt.Sprintf("schema: no object %d", id))
	}
	return &w.objects[id-1]
}

// ObjectName returns the name of an object.
func (w *RunWriter) ObjectName(id ObjectID) string { return w.obj(id).name }

// ObjectKind returns the kind of an object.
func (w *RunWriter) ObjectKind(id ObjectID) string { return w.syms.str(w.obj(id).kind) }

// SetKind changes the kind of an object, for formats that learn an
// entity's kind after its first appearance (a BTF source is typed only
// when it is some event's target).
func (w *RunWriter) SetKind(id ObjectID, kind string) {
	o := w.obj(id)
	k := w.syms.intern(kind)
	if o.kind == k {
		return
	}
	delete(w.byKind[o.kind], o.name)
	o.kind = k
	m := w.byKind[k]
	if m == nil {
		m = make(map[string]ObjectID)
		w.byKind[k] = m
	}
	if _, taken := m[o.name]; !taken {
		m[o.name] = id
	}
}

// SetNativeID sets the trace's own numeric id of an object.
func (w *RunWriter) SetNativeID(id ObjectID, v int64) { w.obj(id).nativeID = v }

// SetPID sets the owning process id of an object.
func (w *RunWriter) SetPID(id ObjectID, v int64) { w.obj(id).pid = v }

// SetParent sets the owner of an object.
func (w *RunWriter) SetParent(id, parent ObjectID) { w.obj(id).parent = parent }

// SetAttr sets one attribute in objects.attrs.
func (w *RunWriter) SetAttr(id ObjectID, key string, value any) {
	o := w.obj(id)
	if o.attrs == nil {
		o.attrs = make(map[string]any)
	}
	o.attrs[key] = value
}

// Attr returns an attribute of an object.
func (w *RunWriter) Attr(id ObjectID, key string) (any, bool) {
	v, ok := w.obj(id).attrs[key]
	return v, ok
}

// Event appends one event and returns its seq. The error is that of a
// batch that could not be loaded; the ingest must stop then.
func (w *RunWriter) Event(e *Event) (Seq, error) {
	w.bounds.line = e.Line
	if err := w.checkTime(e.Line, e.TS); err != nil {
		return NoSeq, err
	}
	w.seq++
	k := ecoKey{e.Class, e.Event, e.Context, e.Object}
	slot := &w.ecoCache[(uint32(k.class)*0x9E3779B1^uint32(k.event)*0x85EBCA77^uint32(k.ctx)*0xC2B2AE3D^uint32(k.obj)*0x27D4EB2F)>>24]
	eco := slot.id
	if eco == 0 || slot.k != k {
		var ok bool
		if eco, ok = w.eco[k]; !ok {
			w.ecoKeys = append(w.ecoKeys, k)
			w.ecoN = append(w.ecoN, 0)
			eco = int32(len(w.ecoKeys)) // ids from 1
			w.eco[k] = eco
		}
		*slot = ecoCached{k, eco}
	}
	w.ecoN[eco-1]++
	if !w.haveTS {
		w.firstTS, w.lastTS, w.haveTS = e.TS, e.TS, true
	} else {
		w.firstTS = min(w.firstTS, e.TS)
		w.lastTS = max(w.lastTS, e.TS)
	}

	b := w.ev
	b.i32(0).Append(w.info.RunID)
	b.i64(1).Append(int64(w.seq))
	b.i64(2).Append(e.TS)
	b.i64(3).put(e.TSRaw, !e.HasRaw)
	b.i32(4).put(int32(e.CPU), e.CPU < 0)
	b.sym(5).put(e.Class)
	b.sym(6).put(e.Event)
	b.i32(7).put(int32(e.Context), e.Context < 0)
	b.i32(8).put(int32(e.Object), e.Object < 0)
	b.i64(9).put(e.SourceInstance, e.SourceInstance == NoInstance)
	b.i64(10).put(e.TargetInstance, e.TargetInstance == NoInstance)
	b.str(11).putBytes(e.Value)
	b.str(12).putBytes(e.Args)
	b.i32(13).Append(eco)
	b.i64(14).Append(e.Line)
	b.rows++
	if w.badUTF8Line == 0 && (w.badUTF8 > 0 || w.syms.bad > 0 || w.badName) {
		// the first event whose text needed repair (the columns count it)
		w.badUTF8Line, w.badUTF8Seq = max(e.Line, 1), w.seq
	}
	if w.cutLine == 0 && (w.cutNames > 0 || w.syms.cut > 0) {
		w.cutLine, w.cutSeq = max(e.Line, 1), w.seq
	}
	if b.rows >= w.batchRows {
		return w.seq, w.flushEvents()
	}
	return w.seq, nil
}

// LastTS returns the largest timestamp seen so far.
func (w *RunWriter) LastTS() int64 { return w.lastTS }

// Events returns how many events were written.
func (w *RunWriter) Events() int64 { return int64(w.seq) }

func (w *RunWriter) flushEvents() error {
	if w.ev.rows == 0 {
		return w.out.err()
	}
	return w.putWithSymbols(TableEvents, w.ev.flushed())
}

// putWithSymbols sends a batch of a table with symbol columns, after the
// symbols that are new since the last one: the sink always holds the
// names of the ids it is given.
func (w *RunWriter) putWithSymbols(table string, rec arrow.Record) error {
	if n := len(w.syms.names); n > w.symsSent {
		b := newBatch(w.mem, TableSymbols, w.syms)
		b.reserve(n - w.symsSent)
		for i := w.symsSent; i < n; i++ {
			b.i32(0).Append(int32(i))
			b.str(1).add(w.syms.names[i])
			b.rows++
		}
		w.symsSent = n
		err := w.out.put(TableSymbols, b.record())
		b.release()
		if err != nil {
			rec.Release()
			return err
		}
	}
	return w.out.put(table, rec)
}

// StateLevel declares that, for objects of kind, state at level aggregates
// into parent at level+1 (level 0 is the atomic state of state_intervals).
func (w *RunWriter) StateLevel(kind, state string, level int, parent string) {
	k := levelKey{w.syms.intern(kind), state, int32(level)}
	if _, ok := w.levelAt[k]; ok {
		return
	}
	w.levelAt[k] = int32(len(w.levels))
	w.levels = append(w.levels, k)
	w.levelPar = append(w.levelPar, parent)
	if parent != "" && int32(level)+1 > w.kindDepth[k.kind] {
		w.kindDepth[k.kind] = int32(level) + 1
		w.levelGen++
	}
}

// Finish closes the intervals still open at the last timestamp (marked
// truncated), writes objects, eco-triples, state levels, diagnostics and
// the runs row, and waits until the sink has every batch. The run is
// complete only when Finish returns nil.
func (w *RunWriter) Finish(ingestedAt time.Time) error {
	if w.finished {
		return fmt.Errorf("schema: run %d finished twice", w.info.RunID)
	}
	w.finished = true
	defer w.ev.release()
	defer w.releaseAggregations()
	defer w.msgs.release()
	defer w.prios.release()
	if err := w.cpus.finish(); err != nil {
		w.states.release()
		w.lv.release()
		w.sched.release()
		w.resources.release()
		return w.out.close(err)
	}
	if err := w.states.finish(w.lastTS); err != nil {
		w.lv.release()
		w.sched.release()
		w.resources.release()
		return w.out.close(err)
	}
	if err := w.sched.finish(); err != nil {
		w.lv.release()
		w.resources.release()
		return w.out.close(err)
	}
	err := w.lv.finish()
	w.lv.release()
	if err != nil {
		w.resources.release()
		return w.out.close(err)
	}
	err = w.resources.finish(w.lastTS)
	w.resources.release()
	if err != nil {
		return w.out.close(err)
	}
	err = w.prios.finish(w.lastTS)
	w.prios.release()
	if err != nil {
		return w.out.close(err)
	}
	if err := w.flushEvents(); err != nil {
		return w.out.close(err)
	}
	if err := w.flushAggregations(); err != nil {
		return w.out.close(err)
	}
	if err := w.msgs.finish(); err != nil {
		return w.out.close(err)
	}
	for _, put := range []func() error{w.putObjects, w.putEco, w.putEcoTree, w.putLevels, w.putLevelPaths, w.putStateTree, func() error { return w.putRun(ingestedAt) }, w.putDiagnostics} {
		if err := put(); err != nil {
			return w.out.close(err)
		}
	}
	return w.out.close(nil)
}

// Abort stops the pipeline without writing anything more.
func (w *RunWriter) Abort() {
	if w.finished {
		return
	}
	w.finished = true
	w.states.release()
	w.lv.release()
	w.tree.stop()
	w.sched.release()
	w.resources.release()
	w.prios.release()
	w.ev.release()
	w.releaseAggregations()
	w.msgs.release()
	w.out.close(fmt.Errorf("aborted"))
}

func (w *RunWriter) putObjects() error {
	b := newBatchCounting(w.mem, TableObjects, w.syms, &w.badUTF8)
	defer b.release()
	for start := 0; start < len(w.objects); start += w.batchRows {
		end := min(start+w.batchRows, len(w.objects))
		b.reserve(end - start)
		for i := start; i < end; i++ {
			o := &w.objects[i]
			b.i32(0).Append(w.info.RunID)
			b.i32(1).Append(int32(i + 1))
			b.dict(2).put(o.kind)
			b.str(3).add(o.name)
			b.i64(4).put(o.nativeID, o.nativeID == NoInstance)
			b.i64(5).put(o.pid, o.pid == NoInstance)
			b.i32(6).put(int32(o.parent), o.parent < 0)
			if o.attrs == nil {
				b.str(7).AppendNull()
			} else {
				js, err := json.Marshal(o.attrs) // map keys come out sorted
				if err != nil {
					return fmt.Errorf("schema: attrs of %q: %w", o.name, err)
				}
				b.str(7).putBytes(js)
			}
			b.rows++
		}
		if err := w.out.put(TableObjects, b.record()); err != nil {
			return err
		}
	}
	return nil
}

func (w *RunWriter) putEco() error {
	b := newBatchCounting(w.mem, TableEcoTriples, w.syms, &w.badUTF8)
	defer b.release()
	for start := 0; start < len(w.ecoKeys); start += w.batchRows {
		end := min(start+w.batchRows, len(w.ecoKeys))
		b.reserve(end - start)
		for i := start; i < end; i++ {
			k := w.ecoKeys[i]
			b.i32(0).Append(w.info.RunID)
			b.i32(1).Append(int32(i + 1))
			b.dict(2).put(k.class)
			b.dict(3).put(k.event)
			b.i32(4).put(int32(k.ctx), k.ctx < 0)
			b.i32(5).put(int32(k.obj), k.obj < 0)
			b.i64(6).Append(w.ecoN[i])
			b.rows++
		}
		if err := w.out.put(TableEcoTriples, b.record()); err != nil {
			return err
		}
	}
	return nil
}

func (w *RunWriter) putLevels() error {
	if len(w.levels) == 0 {
		return nil
	}
	b := newBatchCounting(w.mem, TableStateLevels, w.syms, &w.badUTF8)
	defer b.release()
	b.reserve(len(w.levels))
	for i, k := range w.levels {
		b.i32(0).Append(w.info.RunID)
		b.dict(1).put(k.kind)
		b.str(2).add(k.state)
		b.i32(3).Append(k.level)
		b.str(4).add(w.levelPar[i])
		b.rows++
	}
	return w.out.put(TableStateLevels, b.record())
}

func (w *RunWriter) putDiagnostics() error {
	if n := w.badUTF8 + w.syms.bad + w.badMeta; n > 0 {
		// Counted while the other tables' batches were built (this table
		// goes last for that): the repaired values are already in the
		// tables, this row says so.
		line := w.badUTF8Line
		w.diags = append(w.diags, diagRow{line: line, seq: w.badUTF8Seq, severity: Warning, count: n,
			message: "text that is not UTF-8: the bytes that are not were replaced by U+FFFD (count = values repaired)"})
	}
	if n := w.cutNames + w.syms.cut; n > 0 {
		w.diags = append(w.diags, diagRow{line: w.cutLine, seq: w.cutSeq, severity: Warning, count: n,
			message: fmt.Sprintf("a name longer than %d bytes: kept cut to its first %d (count = names cut, as object names and as class, event or state names)", MaxName, MaxName)})
	}
	rows := w.diags
	if w.diagOverflow > 0 {
		rows = append(rows, diagRow{line: 0, seq: NoSeq, severity: Warning,
			message: fmt.Sprintf("more than %d distinct diagnostics: the rest were counted, not recorded", maxDiagnostics),
			count:   w.diagOverflow})
	}
	if len(rows) == 0 {
		return nil
	}
	b := newBatchCounting(w.mem, TableDiagnostics, w.syms, &w.badUTF8)
	defer b.release()
	b.reserve(len(rows))
	for _, d := range rows {
		b.i32(0).Append(w.info.RunID)
		b.i64(1).put(d.line, d.line <= 0)
		b.i64(2).put(int64(d.seq), d.seq < 0)
		b.dict(3).put(w.syms.intern(string(d.severity)))
		b.str(4).add(d.message)
		b.i64(5).Append(d.count)
		b.rows++
	}
	return w.out.put(TableDiagnostics, b.record())
}

func (w *RunWriter) putRun(at time.Time) error {
	if w.lateSHA != nil {
		w.info.SHA256 = w.lateSHA()
	}
	b := newBatchCounting(w.mem, TableRuns, w.syms, &w.badUTF8)
	defer b.release()
	b.reserve(1)
	meta, err := orderedJSON(w.meta)
	if err != nil {
		return fmt.Errorf("schema: run meta: %w", err)
	}
	tags := make([]metaEntry, len(w.info.Tags))
	for i, t := range w.info.Tags {
		tags[i] = metaEntry{t[0], t[1]}
	}
	tagJS, err := orderedJSON(tags)
	if err != nil {
		return err
	}
	b.i32(0).Append(w.info.RunID)
	b.str(1).add(w.info.Name)
	b.str(2).add(w.info.Source)
	b.str(3).add(w.info.Format)
	b.str(4).putString(w.info.SHA256, w.info.SHA256 == "")
	b.ts(5).Append(arrow.Timestamp(at.UnixMicro()))
	b.str(6).add(w.timeUnit)
	b.f64(7).Append(w.nsPerUnit)
	b.i64(8).Append(int64(w.seq))
	b.i64(9).put(w.firstTS, !w.haveTS)
	b.i64(10).put(w.lastTS, !w.haveTS)
	b.str(11).add(meta)
	b.str(12).add(tagJS)
	b.rows++
	return w.out.put(TableRuns, b.record())
}

// orderedJSON writes entries as a JSON object in their order (the order of
// a trace's header is information; a Go map would sort it).
func orderedJSON(entries []metaEntry) (string, error) {
	buf := []byte{'{'}
	for i, e := range entries {
		if i > 0 {
			buf = append(buf, ',')
		}
		k, err := json.Marshal(e.key)
		if err != nil {
			return "", err
		}
		v, err := json.Marshal(e.value)
		if err != nil {
			return "", err
		}
		buf = append(buf, k...)
		buf = append(buf, ':')
		buf = append(buf, v...)
	}
	buf = append(buf, '}')
	return string(buf), nil
}
