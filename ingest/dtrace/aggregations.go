package dtrace

import (
	"bytes"
	"hash/maphash"
	"strconv"

	"github.com/traceduck/traceduck/schema"
)

// Aggregation output: what DTrace's printa (and its default output at
// exit) and bpftrace's map printing write, read among whatever else the
// file holds (prose, command lines, ^C, event lines). README.md,
// "Aggregation output", states the rules; the comments here say how they
// are carried out.

// Bounds on what one block may hold, so that bad input cannot grow memory
// without bound.
const (
	maxKeyLines   = 1024      // lines of one key (a stack of frames)
	maxTitleLines = 3         // heading lines above an aggregation
	maxDistRows   = 1<<16 + 2 // rows of one distribution: lquantize's 65535 levels, underflow, overflow
	maxParaLines  = 1 << 16   // lines of one paragraph held while it is classified
	maxParaBytes  = 16 << 20  // and their bytes
	maxHeldParas  = 4096      // paragraphs of scalar aggregations held until the end of the output
	maxGroupKeys  = 1 << 20   // keys remembered per aggregation to see one repeat; past it, forgotten
)

// DTrace's distribution bar: 40 characters, '@' and ' ', and one '|'.
const distBarWidth = 40

// ScalarsMode says when DTrace scalar aggregations (printa lines: keys
// then a number) are read.
type ScalarsMode uint8

const (
	// ScalarsAuto reads them after ^C, next to other aggregations, and at
	// the end of the output (README.md).
	ScalarsAuto ScalarsMode = iota
	// ScalarsOff reads none: only distributions and bpftrace maps.
	ScalarsOff
)

// heldLine is a line kept while its paragraph is classified; text is a
// buffer of its own, reused.
type heldLine struct {
	no   int64
	text []byte
}

// para is a paragraph: consecutive non-blank lines not yet classified.
type para struct {
	lines   []heldLine // lines[:n] in use
	n       int
	bytes   int
	dropped bool // lines were dropped from the front (too many held)
	closed  bool // a blank line followed it
	title   []byte
	hasPrev bool // title came from the paragraph before (held paragraphs)
}

func (p *para) add(no int64, line []byte) {
	if p.n == len(p.lines) {
		p.lines = append(p.lines, heldLine{})
	}
	h := &p.lines[p.n]
	h.no = no
	h.text = append(h.text[:0], line...)
	p.n++
	p.bytes += len(line)
}

func (p *para) reset() {
	p.n, p.bytes, p.dropped, p.closed, p.hasPrev = 0, 0, false, false, false
	p.title = p.title[:0]
}

// dropFront forgets the first k lines, keeping their buffers for reuse.
func (p *para) dropFront(k int) {
	saved := append([]heldLine(nil), p.lines[:k]...)
	copy(p.lines, p.lines[k:p.n])
	copy(p.lines[p.n-k:], saved)
	p.n -= k
	p.bytes = 0
	for i := 0; i < p.n; i++ {
		p.bytes += len(p.lines[i].text)
	}
	p.dropped = true
}

func (p *para) held() []heldLine { return p.lines[:p.n] }

// labelKind is the form of a distribution row's value.
type labelKind uint8

const (
	labelValue labelKind = iota // N
	labelUnder                  // < N
	labelOver                   // >= N
)

// distRow is one row of a DTrace distribution.
type distRow struct {
	kind  labelKind
	v     int64
	count int64
	ats   int // '@' in the bar
	left  int // of which left of the '|'
	pipe  int // where the '|' is in the bar field: 0, 20 or 40
	line  int64
	lab0  int // label in aggReader.labels
	lab1  int
}

// bpfRow is one row of a bpftrace hist or lhist.
type bpfRow struct {
	lo, hi       int64
	hasLo, hasHi bool
	single       bool // [N]
	count        int64
	ats, width   int
	line         int64
	lab0, lab1   int
}

// group is the DTrace aggregation being printed: consecutive blocks with
// only their keys and blank lines between them.
type group struct {
	open  bool
	kind  groupKind
	agg   schema.Sym
	title schema.Sym
	keys  map[uint64]struct{}
	end   int // alignment column of a scalar block
}

type groupKind uint8

const (
	groupDist   groupKind = iota // distributions
	groupLines                   // one scalar per line
	groupStacks                  // stacks, each followed by its value
)

// bpfMap tracks the printouts of one bpftrace map: a map printed again
// (an interval print) is a new aggregation, @name#2, @name#3, ...
type bpfMap struct {
	printouts int
	agg       schema.Sym
	keys      map[uint64]struct{}
}

// aggReader recognizes aggregation blocks among the lines it is given
// and writes them to aggregations and histograms.
type aggReader struct {
	w       *schema.RunWriter
	file    string
	scalars ScalarsMode
	seed    maphash.Seed

	para      para
	spare     []*para // paragraphs for reuse
	lastProse []byte  // a short prose paragraph just before, a title candidate
	held      []*para // scalar paragraphs outside a region, waiting for the end of the output
	heldBytes int

	region bool // after ^C or an aggregation: scalar paragraphs are aggregations
	quiet  bool // only blank lines (and the next key) since the last block ended

	aggNo  int
	stored int64 // aggregation and histogram rows written
	marks  int64 // what only DTrace or bpftrace prints: ^C, "dtrace: " messages, distribution and histogram headers (stored or not)
	group  group
	cont   bool // the paragraph continues a scalar block emitted in part (too long to hold)

	// distributions: the block being read, and the blocks of the
	// current aggregation (aggdist.go)
	inDist     bool
	distHeader int64
	distBad    bool
	blockStart int // the block's first row in rows
	cur        distBlock
	blocks     []distBlock
	rows       []distRow
	labels     []byte
	blockText  []byte // keys of the blocks held

	key, keys []byte
	buckets   []schema.Bucket
	lineSeen  map[uint64]int // keys of the scalar paragraph being checked
	entries   []scalarEntry
	fieldsBuf [][2]int
	titleBuf  []byte
	symFunc   [5]schema.Sym

	// bpftrace
	bpfHist     bool
	bpfHeader   int64
	bpfBad      bool
	bpfRows     []bpfRow
	bpfKeyOpen  bool
	bpfKeyLine  int64
	bpfKeyLines int
	bpfName     []byte
	bpfKeyText  []byte
	maps        map[string]*bpfMap
	curMap      string
}

const (
	funcQuantize = iota
	funcLquantize
	funcLlquantize
	funcHist
	funcLhist
)

// scalarEntry is one key and value of a scalar block.
type scalarEntry struct {
	k0, k1 int // key lines: para lines [k0, k1)
	value  int64
	line   int64
	keyOff [2]int // single-line form: the key within its line
}

// newAggReader returns a reader of the aggregation blocks of one file;
// file names it in messages.
func newAggReader(w *schema.RunWriter, file string) *aggReader {
	r := &aggReader{w: w, file: file, seed: maphash.MakeSeed(), maps: map[string]*bpfMap{}, lineSeen: map[uint64]int{}}
	for i, name := range []string{"quantize", "lquantize", "llquantize", "hist", "lhist"} {
		r.symFunc[i] = w.Sym(name)
	}
	r.group.keys = map[uint64]struct{}{}
	return r
}

// Line reads one line that is not an event line.
func (r *aggReader) Line(no int64, line []byte) error {
	if r.inDist {
		if ended, err := r.distRowLine(no, line); err != nil || !ended {
			return err
		}
	}
	if r.bpfHist {
		if ended, err := r.bpfRowLine(no, line); err != nil || !ended {
			return err
		}
	}
	if r.bpfKeyOpen {
		return r.bpfKeyLineRead(no, line)
	}
	if blankLine(line) {
		if r.para.n > 0 {
			r.para.closed = true
		}
		return nil
	}
	if line[0] == '@' {
		if handled, err := r.bpfLine(no, line); handled || err != nil {
			return err
		}
	}
	if isDistHeader(line) {
		return r.startDist(no)
	}
	t := trimBlanks(line)
	if string(t) == "^C" || bytes.HasPrefix(t, []byte("dtrace: ")) {
		// ^C ends the tracing: what follows is the output printed at
		// exit, aggregations first of all. DTrace's own messages only
		// break paragraphs.
		if err := r.flushPara(); err != nil {
			return err
		}
		r.lastProse = r.lastProse[:0]
		r.quiet = false
		r.marks++
		if err := r.endGroup(); err != nil {
			return err
		}
		if string(t) == "^C" {
			r.dropHeld()
			r.region = true
		}
		return nil
	}
	if r.para.closed {
		if err := r.flushPara(); err != nil {
			return err
		}
	}
	r.para.add(no, line)
	if r.para.n >= maxParaLines || r.para.bytes >= maxParaBytes {
		return r.paraFull()
	}
	return nil
}

// End finishes what is open at the end of the file.
func (r *aggReader) End() error {
	if r.inDist {
		if err := r.finishDist(0, nil); err != nil {
			return err
		}
	}
	if r.bpfHist {
		if err := r.finishBpf(); err != nil {
			return err
		}
	}
	if r.bpfKeyOpen {
		r.bpfKeyOpen = false
		return r.w.BadLine(r.bpfKeyLine, "expected the key opened here to end with a line ']: VALUE', found the end of the file")
	}
	if err := r.flushPara(); err != nil {
		return err
	}
	if err := r.endGroup(); err != nil {
		return err
	}
	// Scalar paragraphs at the end of the output: the trailing run.
	return r.emitHeld()
}

// ---- paragraphs and scalar blocks ----

// flushPara classifies the paragraph just ended: a scalar block, or prose.
func (r *aggReader) flushPara() error {
	p := &r.para
	if p.n == 0 {
		return nil
	}
	cont := r.cont
	r.cont = false
	if r.scalars == ScalarsOff || p.dropped {
		return r.prose(p)
	}
	kind, ok, err := r.scalarBlock(p, cont)
	if err != nil {
		p.reset()
		return err
	}
	switch {
	case !ok:
		err = r.prose(p)
	case r.region || cont:
		err = r.emitScalars(p, kind, cont)
		p.reset()
	default:
		r.hold(kind)
	}
	return err
}

// prose is a paragraph that is no aggregation. It ends the aggregation
// being printed. A heading (at most three lines, the last ending with ','
// or ':', as the toolkit's scripts print "Elapsed times (us)," above an
// aggregation) is kept as the next aggregation's title; any other prose
// also ends the region where scalar blocks are read, and what was held is
// no trailing run.
func (r *aggReader) prose(p *para) error {
	err := r.endGroup()
	r.quiet = false
	r.lastProse = r.lastProse[:0]
	if isHeading(p) {
		r.lastProse = appendTitle(r.lastProse, p.held())
	} else {
		r.region = false
		r.dropHeld()
	}
	p.reset()
	return err
}

// isHeading reports whether a paragraph is a heading: at most three
// lines, the last ending with ',' or ':'.
func isHeading(p *para) bool {
	if p.n == 0 || p.n > maxTitleLines || p.dropped {
		return false
	}
	t := trimRight(p.lines[p.n-1].text)
	return len(t) > 0 && (t[len(t)-1] == ',' || t[len(t)-1] == ':')
}

// hold keeps a scalar paragraph read outside a region: it is an
// aggregation if nothing but aggregations follows it.
func (r *aggReader) hold(kind groupKind) {
	p := &r.para
	if len(r.held) >= maxHeldParas || r.heldBytes+p.bytes > maxParaBytes {
		// Too much to hold: this output is no short trailing run.
		r.dropHeld()
		p.reset()
		return
	}
	q := r.takeSpare()
	*q, *p = *p, *q // the held paragraph keeps its buffers; r.para gets fresh ones
	q.title = append(q.title[:0], r.lastProse...)
	q.hasPrev = len(r.lastProse) > 0
	r.held = append(r.held, q)
	r.heldBytes += q.bytes
	r.lastProse = r.lastProse[:0]
	r.quiet = true
	p.reset()
	_ = kind
}

func (r *aggReader) takeSpare() *para {
	if n := len(r.spare); n > 0 {
		q := r.spare[n-1]
		r.spare = r.spare[:n-1]
		q.reset()
		return q
	}
	return &para{}
}

func (r *aggReader) dropHeld() {
	for _, q := range r.held {
		q.reset()
		r.spare = append(r.spare, q)
	}
	r.held = r.held[:0]
	r.heldBytes = 0
}

// emitHeld writes the held scalar paragraphs: the output went on with
// aggregations only (a distribution, or its end).
func (r *aggReader) emitHeld() error {
	if len(r.held) == 0 {
		return nil
	}
	err := r.endGroup()
	r.quiet = false
	for _, q := range r.held {
		if err == nil {
			kind, ok, e := r.scalarBlock(q, false)
			switch {
			case e != nil:
				err = e
			case ok:
				err = r.emitScalars(q, kind, false)
			}
		}
	}
	r.dropHeld()
	return err
}

// paraFull handles a paragraph grown to the bound: a scalar block that
// long, in a region, is written in parts; anything else loses its first
// half (it can then still give a key, not be an aggregation itself).
func (r *aggReader) paraFull() error {
	p := &r.para
	if r.scalars != ScalarsOff && (r.region || r.cont) && !p.dropped {
		kind, ok, err := r.scalarBlock(p, r.cont)
		if err != nil {
			p.reset()
			return err
		}
		if ok && kind == groupLines {
			err := r.emitScalars(p, kind, r.cont)
			p.reset()
			r.cont = true
			return err
		}
	}
	p.dropFront(p.n / 2)
	return nil
}

// scalarBlock reads a paragraph as a scalar aggregation:
//
//  1. lines: up to three heading lines, then one or more lines
//     KEY<two or more blanks, or a tab>INTEGER, the integers right-aligned
//     in one column, every key different; a key of several fields must
//     not end in a number (a table of numbers is no aggregation); or a
//     single line holding only an integer (an aggregation without key);
//  2. stacks: key lines (a stack, maybe under other keys), then a line
//     holding only the value.
//
// The entries found are left in r.entries.
func (r *aggReader) scalarBlock(p *para, cont bool) (groupKind, bool, error) {
	lines := p.held()
	n := len(lines)
	r.entries = r.entries[:0]
	if n == 0 {
		return 0, false, nil
	}
	lastKey, lastVal, lastEnd, lastOK := scalarLine(lines[n-1].text, &r.fieldsBuf)
	if !lastOK {
		return 0, false, nil
	}
	if len(lastKey) == 0 && n >= 2 && !cont {
		// 2. a stack and its value
		ks := keyStart(lines[:n-1])
		if n-1-ks > maxKeyLines || ks > maxTitleLines {
			return 0, false, nil
		}
		for i := ks; i < n-1; i++ {
			if k, _, _, ok := scalarLine(lines[i].text, &r.fieldsBuf); ok && len(k) > 0 {
				return 0, false, nil // key/value lines above a value: no stack
			}
		}
		r.entries = append(r.entries, scalarEntry{k0: ks, k1: n - 1, value: lastVal, line: lines[n-1].no})
		return groupStacks, true, nil
	}
	// 1. lines, from the last one up
	if !cont {
		clear(r.lineSeen)
	}
	if cont && lastEnd != r.group.end {
		return 0, false, nil
	}
	i := n - 1
	for ; i >= 0; i-- {
		k, v, end, ok := scalarLine(lines[i].text, &r.fieldsBuf)
		if !ok || end != lastEnd || (len(k) == 0) != (len(lastKey) == 0) {
			break
		}
		h := maphash.Bytes(r.seed, k)
		if j, dup := r.lineSeen[h]; dup && j < len(lines) {
			jk, _, _, _ := scalarLine(lines[j].text, &r.fieldsBuf)
			if bytes.Equal(jk, k) {
				return 0, false, nil // a key twice: no aggregation
			}
		}
		r.lineSeen[h] = i
		off := bytes.Index(lines[i].text, k)
		r.entries = append(r.entries, scalarEntry{k0: i, k1: i + 1, value: v, line: lines[i].no, keyOff: [2]int{off, off + len(k)}})
	}
	title := i + 1
	if title > maxTitleLines || (cont && title > 0) {
		return 0, false, nil
	}
	for j := 0; j < title; j++ {
		if k, _, _, ok := scalarLine(lines[j].text, &r.fieldsBuf); ok && len(k) > 0 {
			return 0, false, nil // an entry out of line with the others: no aligned column
		}
	}
	if len(lastKey) == 0 && len(r.entries) > 1 {
		return 0, false, nil // a column of bare numbers
	}
	// entries were collected bottom-up
	for a, b := 0, len(r.entries)-1; a < b; a, b = a+1, b-1 {
		r.entries[a], r.entries[b] = r.entries[b], r.entries[a]
	}
	if !cont {
		r.group.end = lastEnd
	}
	return groupLines, true, nil
}

// emitScalars writes the entries scalarBlock found in p.
func (r *aggReader) emitScalars(p *para, kind groupKind, cont bool) error {
	lines := p.held()
	first := 0
	if len(r.entries) > 0 {
		first = r.entries[0].k0
	}
	if !cont {
		// Stacks printed one after the other are one aggregation, even
		// when two print alike (frames that differ only in offsets).
		continues := kind == groupStacks && r.group.open && r.group.kind == groupStacks && r.quiet && first == 0
		if !continues {
			end := r.group.end
			title := r.titleBuf[:0]
			if first > 0 {
				title = appendTitle(title, lines[max(0, first-maxTitleLines):first])
			} else if p.hasPrev {
				title = append(title, p.title...)
			} else {
				title = append(title, r.lastProse...)
			}
			r.titleBuf = title
			if err := r.newGroup(kind, title); err != nil {
				return err
			}
			r.group.end = end
		}
	}
	row := schema.Aggregation{Agg: r.group.agg, Title: r.group.title}
	for i := range r.entries {
		e := &r.entries[i]
		if kind == groupLines {
			r.keyText1(lines[e.k0].text[e.keyOff[0]:e.keyOff[1]])
		} else {
			r.keyText(lines[e.k0:e.k1])
		}
		row.Key, row.Keys, row.Value, row.Line = r.key, r.keys, e.value, e.line
		r.stored++
		if err := r.w.Aggregation(&row); err != nil {
			return err
		}
	}
	r.lastProse = r.lastProse[:0]
	r.quiet = true
	return nil
}

// endGroup ends the DTrace aggregation being printed: its distributions
// are written.
func (r *aggReader) endGroup() error {
	r.group.open = false
	if len(r.blocks) == 0 {
		return nil
	}
	return r.flushDists()
}

// newGroup starts the next DTrace aggregation, #N.
func (r *aggReader) newGroup(kind groupKind, title []byte) error {
	if err := r.endGroup(); err != nil {
		return err
	}
	r.aggNo++
	r.group.open = true
	r.group.kind = kind
	r.group.agg = r.w.Sym("#" + strconv.Itoa(r.aggNo))
	r.group.title = schema.NoSym
	if len(title) > 0 {
		r.group.title = r.w.SymBytes(title)
	}
	clear(r.group.keys)
	return nil
}

// hashKey hashes r.key, to tell whether a key repeats.
func (r *aggReader) hashKey() uint64 { return maphash.Bytes(r.seed, r.key) }

// scalarLine splits a line KEY<2+ blanks or a tab>INTEGER, or INTEGER
// alone (key empty), trailing blanks allowed. end is the column after the
// integer (tabs expanded to 8). A key of several fields whose last field is
// a number makes ok false: that is a table of numbers, not printa output.
func scalarLine(line []byte, fields *[][2]int) (key []byte, value int64, end int, ok bool) {
	t := trimRight(line)
	j := len(t)
	for j > 0 && t[j-1] >= '0' && t[j-1] <= '9' {
		j--
	}
	if j == len(t) {
		return nil, 0, 0, false
	}
	if j > 0 && t[j-1] == '-' {
		j--
	}
	v, vok := parseDecimal(t[j:])
	if !vok {
		return nil, 0, 0, false
	}
	end = column(t, len(t))
	before := t[:j]
	if j > 0 && before[j-1] != ' ' && before[j-1] != '\t' {
		return nil, 0, 0, false
	}
	k := trimBlanks(before)
	if len(k) == 0 {
		return nil, v, end, true
	}
	// the separator: two blanks at least, or a tab
	gap := before[len(trimRight(before)):]
	if len(gap) < 2 && bytes.IndexByte(gap, '\t') < 0 {
		return nil, 0, 0, false
	}
	*fields = splitFields(k, (*fields)[:0])
	if fs := *fields; len(fs) > 1 {
		last := k[fs[len(fs)-1][0]:fs[len(fs)-1][1]]
		if _, num := parseDecimal(last); num {
			return nil, 0, 0, false
		}
	}
	return k, v, end, true
}
