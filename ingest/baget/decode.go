package baget

import (
	"github.com/traceduck/traceduck/ingest"
	"math"
	"strconv"
)

// Decoding one record through its field tree (seed 3.4). rec is the whole
// record, descriptor included, as Log.Record returns it; the reader has
// checked len(rec) >= Event.Size, and every accessor checks its bounds
// again so that a short slice reads as zeros instead of panicking.

// raw reads the n.Size-byte integer at n.Offset+delta, sign-extended when
// the type is signed. ok is false when the bytes are outside rec.
func (d *Description) raw(rec []byte, n *Node, delta int) (u uint64, signed bool, ok bool) {
	off := n.Offset + delta
	size := n.ElemSize
	if n.Dims == nil {
		size = n.Size
	}
	if n.Base != nil && n.Base.Kind == KindTimespec {
		size = n.Base.Size
	}
	if off < 0 || size <= 0 || size > 8 || off+size > len(rec) {
		return 0, false, false
	}
	u = readUint(rec[off:], size, d.ABI.BigEndian)
	signed = n.Base != nil && n.Base.Signed && n.Base.Kind != KindPointer
	if signed && size < 8 {
		shift := 64 - 8*uint(size)
		u = uint64(int64(u<<shift) >> shift)
	}
	return u, signed, true
}

// Int returns a simple integer field (an integer, char, bool, object id
// or pointer) as int64: signed types sign-extended, unsigned 64-bit
// values above MaxInt64 wrapped. 0 when n is nil.
func (d *Description) Int(rec []byte, n *Node) int64 {
	if n == nil {
		return 0
	}
	u, _, _ := d.raw(rec, n, 0)
	return int64(u)
}

// Uint returns a simple field's bits as an unsigned integer (the block
// number, a pointer).
func (d *Description) Uint(rec []byte, n *Node) uint64 {
	if n == nil {
		return 0
	}
	off := n.Offset
	if off < 0 || n.Size <= 0 || n.Size > 8 || off+n.Size > len(rec) {
		return 0
	}
	return readUint(rec[off:], n.Size, d.ABI.BigEndian)
}

// timespecNS reads a struct timespec at off as nanoseconds.
func (d *Description) timespecNS(rec []byte, off int) int64 {
	p := d.ABI.Pointer
	if off < 0 || off+2*p > len(rec) {
		return 0
	}
	sec := readUint(rec[off:], p, d.ABI.BigEndian)
	nsec := readUint(rec[off+p:], p, d.ABI.BigEndian)
	if p < 8 {
		sec = uint64(int64(int32(uint32(sec))))
		nsec = uint64(int64(int32(uint32(nsec))))
	}
	return int64(sec)*1e9 + int64(nsec)
}

// unitNS is the nanoseconds of one time_unit.
func unitNS(u string) int64 {
	switch u {
	case "us":
		return 1e3
	case "ms":
		return 1e6
	case "s":
		return 1e9
	}
	return 1
}

// Time returns the event time in ns (docs 2.5 time=): a struct timespec,
// or an integer in the description's time_unit. 0 when the record type has
// no time field.
func (d *Description) Time(ev *Event, rec []byte) int64 {
	n := ev.Time
	if n == nil {
		return 0
	}
	if n.Base.Kind == KindTimespec {
		return d.timespecNS(rec, n.Offset)
	}
	return d.Int(rec, n) * unitNS(d.TimeUnit)
}

// CPU returns the event's CPU number (0 without a cpu= field).
func (d *Description) CPU(ev *Event, rec []byte) int64 { return d.Int(rec, ev.CPU) }

// Pid returns the process id of the main object (0 without a pid= field).
func (d *Description) Pid(ev *Event, rec []byte) int64 { return d.Int(rec, ev.Pid) }

// BlockNumber returns a block record's number.
func (d *Description) BlockNumber(ev *Event, rec []byte) uint64 { return d.Uint(rec, ev.Number) }

// Main returns the main object's id (docs 2.5 main=). For a main field that
// is a char array (user objects named by text), text is its bytes up to the
// first NUL (a subslice of rec) and id is 0. ok is false without a main=
// field.
func (d *Description) Main(ev *Event, rec []byte) (id int64, text []byte, ok bool) {
	n := ev.Main
	if n == nil {
		return 0, nil, false
	}
	if n.Dims != nil {
		return 0, d.Text(rec, n), true
	}
	return d.Int(rec, n), nil, true
}

// Text returns a char array field's bytes up to the first NUL, a subslice
// of rec (for a flexible array: to the end of the record).
func (d *Description) Text(rec []byte, n *Node) []byte {
	if n == nil {
		return nil
	}
	return cText(rec, n.Offset, n.Size, n.Dims)
}

func cText(rec []byte, off, size int, dims []int) []byte {
	if len(dims) == 1 && dims[0] == 0 { // flexible: the rest of the record
		size = len(rec) - off
	}
	if off < 0 || off > len(rec) {
		return nil
	}
	end := min(off+size, len(rec))
	b := rec[off:end]
	for i, c := range b {
		if c == 0 {
			return b[:i]
		}
	}
	return b
}

// Field returns the simple field with a path (docs 2.5 references), or nil.
func (ev *Event) Field(path string) *Node {
	nodes := ev.Fields
	var n *Node
	for len(path) > 0 {
		name := path
		rest := ""
		for i := 0; i < len(path); i++ {
			if path[i] == '.' {
				name, rest = path[:i], path[i+1:]
				break
			}
		}
		n = nil
		for _, c := range nodes {
			if c.Name == name {
				n = c
				break
			}
		}
		if n == nil {
			return nil
		}
		nodes = n.Children
		path = rest
	}
	return n
}

// AppendArgs appends the fields of a record as a JSON object (events.args,
// docs 2.5 and issue 5): every declared field in order (the descriptor's
// two are left out), nested names a.b for struct members, a[i] (a[i][j])
// for array elements, only the selected member of a union (a selector
// value that matches no case: the union's bytes as a hex string). Values:
// integers and object ids as numbers, pointers as "0x..." strings, struct
// timespec as ns, char arrays as text up to the first NUL (for a 2-D char
// array, one text per row), floats as numbers ("NaN", "+Inf", "-Inf" as
// strings), _Bool as true/false. A field with a format (format=, docs
// 2.11) keeps its value under its name and adds its display string
// (Show) under the name followed by "#": {"reason":2,"reason#":"SEM"}.
// dst may be a reused buffer.
func (d *Description) AppendArgs(dst []byte, ev *Event, rec []byte) []byte {
	var a Args
	a.JSON = dst
	return a.append(d, ev, rec)
}

// Args is a reusable buffer for building args: with it, AppendArgs's
// work does not allocate once the buffers have grown.
type Args struct {
	JSON []byte // the last object built
	name []byte
}

// Build builds the args of a record into a.JSON (reused) and returns it.
func (a *Args) Build(d *Description, ev *Event, rec []byte) []byte {
	a.JSON = a.JSON[:0]
	return a.append(d, ev, rec)
}

func (a *Args) append(d *Description, ev *Event, rec []byte) []byte {
	if cap(a.name) < 256 {
		a.name = make([]byte, 0, 256)
	}
	if ev.args == nil {
		return a.walk(d, ev, rec)
	}
	dst := append(a.JSON, '{')
	start := len(dst)
	for i := range ev.args {
		op := &ev.args[i]
		switch op.kind {
		case opLeaf:
			dst = appendKey(dst, start, op.key)
			dst = d.appendScalar(dst, op.n, rec, op.delta)
		case opShow:
			dst = appendKey(dst, start, op.key)
			dst = d.appendShowJSON(dst, op.n, rec, op.delta)
		case opText:
			dst = appendKey(dst, start, op.key)
			dst = ingest.AppendJSONString(dst, cText(rec, op.n.Offset+op.delta, op.size, nil))
		case opElem:
			dst = d.appendElem(dst, start, append(a.name[:0], op.key...), op.n, rec, op.delta)
		default: // opNode
			dst = d.appendNode(dst, start, append(a.name[:0], op.key...), op.n, rec, op.delta)
		}
	}
	a.JSON = append(dst, '}')
	return a.JSON
}

// walk builds args by walking the field tree (the definition; append
// runs the same steps flattened when the event has a program).
func (a *Args) walk(d *Description, ev *Event, rec []byte) []byte {
	dst := append(a.JSON, '{')
	start := len(dst)
	name := a.name[:0]
	fields := ev.Fields
	if len(fields) >= 2 {
		fields = fields[2:]
	}
	dst = d.appendNodes(dst, start, name, fields, rec, 0)
	a.JSON = append(dst, '}')
	return a.JSON
}

// An args program is the field tree of an event flattened at Parse into
// one step per JSON member, names made: building an event's args then
// walks no tree and builds no names. What depends on the record (the
// member a union selects, the length of a flexible array) stays a step
// that walks its subtree.
type argOpKind uint8

const (
	opLeaf argOpKind = iota // a scalar at n.Offset+delta
	opShow                  // the display string of a scalar with a format (key NAME#)
	opText                  // a char array of size bytes at n.Offset+delta
	opElem                  // a union element: appendElem
	opNode                  // a flexible array: appendNode
)

type argOp struct {
	kind  argOpKind
	key   string // opLeaf, opText: the member name; opElem, opNode: the path passed on
	n     *Node
	delta int
	size  int
}

// Bounds of the programs (about 64 bytes a step): an event beyond its
// bound, or beyond what is left of the description's, keeps walking its
// tree.
const (
	maxEventOps = 1 << 10
	maxDescOps  = 1 << 16
)

// compileArgs makes the args program of every event, within the bounds.
func (d *Description) compileArgs() {
	left := maxDescOps
	for _, ev := range d.Events {
		c := argCompiler{limit: min(maxEventOps, left)}
		fields := ev.Fields
		if len(fields) >= 2 {
			fields = fields[2:]
		}
		if c.nodes("", fields, 0) {
			ev.args = c.ops
			if ev.args == nil {
				ev.args = []argOp{}
			}
			left -= len(c.ops)
		}
	}
}

type argCompiler struct {
	ops   []argOp
	limit int
}

func (c *argCompiler) add(op argOp) bool {
	if len(c.ops) >= c.limit {
		return false
	}
	c.ops = append(c.ops, op)
	return true
}

// nodes, node, array and elem follow appendNodes, appendNode, appendArray
// and appendElem; false when the bound is reached.
func (c *argCompiler) nodes(prefix string, nodes []*Node, delta int) bool {
	for _, n := range nodes {
		if !c.node(prefix+n.Name, n, delta) {
			return false
		}
	}
	return true
}

func (c *argCompiler) node(name string, n *Node, delta int) bool {
	if n.Dims != nil {
		if len(n.Dims) == 1 && n.Dims[0] == 0 {
			return c.add(argOp{kind: opNode, key: name, n: n, delta: delta})
		}
		return c.array(name, n, n.Dims, delta)
	}
	return c.elem(name, n, delta)
}

func (c *argCompiler) array(name string, n *Node, dims []int, delta int) bool {
	if n.Base != nil && n.Base.Kind == KindChar && len(dims) == 1 {
		return c.add(argOp{kind: opText, key: name, n: n, delta: delta, size: dims[0] * n.ElemSize})
	}
	stride := n.ElemSize
	for _, k := range dims[1:] {
		stride *= k
	}
	for i := 0; i < dims[0]; i++ {
		sub := name + "[" + strconv.Itoa(i) + "]"
		ok := false
		if len(dims) > 1 {
			ok = c.array(sub, n, dims[1:], delta+i*stride)
		} else {
			ok = c.elem(sub, n, delta+i*stride)
		}
		if !ok {
			return false
		}
	}
	return true
}

func (c *argCompiler) elem(name string, n *Node, delta int) bool {
	if n.Base == nil {
		if !n.Union {
			return c.nodes(name+".", n.Children, delta)
		}
		return c.add(argOp{kind: opElem, key: name, n: n, delta: delta})
	}
	if !c.add(argOp{kind: opLeaf, key: name, n: n, delta: delta}) {
		return false
	}
	return n.Format == nil || c.add(argOp{kind: opShow, key: name + "#", n: n, delta: delta})
}

// appendKey is key for a name that is a string.
func appendKey(dst []byte, start int, name string) []byte {
	if len(dst) > start {
		dst = append(dst, ',')
	}
	dst = append(dst, '"')
	dst = append(dst, name...)
	return append(dst, '"', ':')
}

// appendNodes appends the nodes (offsets of element 0, shifted by delta)
// with their names under prefix.
func (d *Description) appendNodes(dst []byte, start int, prefix []byte, nodes []*Node, rec []byte, delta int) []byte {
	for _, n := range nodes {
		name := append(prefix, n.Name...)
		dst = d.appendNode(dst, start, name, n, rec, delta)
	}
	return dst
}

func key(dst []byte, start int, name []byte) []byte {
	if len(dst) > start {
		dst = append(dst, ',')
	}
	dst = append(dst, '"')
	dst = append(dst, name...)
	return append(dst, '"', ':')
}

// appendNode appends one field: an array element by element, a struct by
// members, a union by its selected member.
func (d *Description) appendNode(dst []byte, start int, name []byte, n *Node, rec []byte, delta int) []byte {
	if n.Dims != nil {
		dims := n.Dims
		if len(dims) == 1 && dims[0] == 0 { // flexible array: the rest of the record
			cnt := 0
			if n.ElemSize > 0 && len(rec) > n.Offset+delta {
				cnt = (len(rec) - n.Offset - delta) / n.ElemSize
			}
			if n.Base != nil && n.Base.Kind == KindChar {
				dst = key(dst, start, name)
				return ingest.AppendJSONString(dst, cText(rec, n.Offset+delta, cnt, nil))
			}
			dims = []int{cnt}
		}
		return d.appendArray(dst, start, name, n, dims, rec, delta)
	}
	return d.appendElem(dst, start, name, n, rec, delta)
}

// appendArray appends the elements of an array with dimensions dims whose
// element 0 is at n.Offset+delta.
func (d *Description) appendArray(dst []byte, start int, name []byte, n *Node, dims []int, rec []byte, delta int) []byte {
	if n.Base != nil && n.Base.Kind == KindChar && len(dims) == 1 {
		dst = key(dst, start, name)
		return ingest.AppendJSONString(dst, cText(rec, n.Offset+delta, dims[0]*n.ElemSize, nil))
	}
	stride := n.ElemSize
	for _, k := range dims[1:] {
		stride *= k
	}
	for i := 0; i < dims[0]; i++ {
		sub := append(name, '[')
		sub = strconv.AppendInt(sub, int64(i), 10)
		sub = append(sub, ']')
		if len(dims) > 1 {
			dst = d.appendArray(dst, start, sub, n, dims[1:], rec, delta+i*stride)
		} else {
			dst = d.appendElem(dst, start, sub, n, rec, delta+i*stride)
		}
	}
	return dst
}

// appendElem appends one element (not an array) of n's type at
// n.Offset+delta.
func (d *Description) appendElem(dst []byte, start int, name []byte, n *Node, rec []byte, delta int) []byte {
	if n.Base == nil {
		prefix := append(name, '.')
		if !n.Union {
			return d.appendNodes(dst, start, prefix, n.Children, rec, delta)
		}
		if n.Selector != nil {
			sel, _, ok := d.raw(rec, n.Selector, delta)
			if ok {
				for _, c := range n.Children {
					if uint64(c.Case) == sel {
						return d.appendNode(dst, start, append(prefix, c.Name...), c, rec, delta)
					}
				}
			}
		}
		dst = key(dst, start, name)
		return appendHex(dst, rec, n.Offset+delta, n.Size)
	}
	dst = key(dst, start, name)
	dst = d.appendScalar(dst, n, rec, delta)
	if n.Format != nil { // its display string beside it (docs 2.11)
		dst = key(dst, start, append(name, '#'))
		dst = d.appendShowJSON(dst, n, rec, delta)
	}
	return dst
}

// appendScalar appends the value of a scalar (n.Base set) at
// n.Offset+delta.
func (d *Description) appendScalar(dst []byte, n *Node, rec []byte, delta int) []byte {
	off := n.Offset + delta
	switch n.Base.Kind {
	case KindTimespec:
		return strconv.AppendInt(dst, d.timespecNS(rec, off), 10)
	case KindFloat:
		u, _, ok := d.raw(rec, n, delta)
		if !ok {
			return append(dst, "null"...)
		}
		var f float64
		if n.Base.Size == 4 {
			f = float64(math.Float32frombits(uint32(u)))
		} else {
			f = math.Float64frombits(u)
		}
		switch {
		case math.IsNaN(f):
			return append(dst, `"NaN"`...)
		case math.IsInf(f, 1):
			return append(dst, `"+Inf"`...)
		case math.IsInf(f, -1):
			return append(dst, `"-Inf"`...)
		}
		bits := 64
		if n.Base.Size == 4 {
			bits = 32
		}
		return strconv.AppendFloat(dst, f, 'g', -1, bits)
	}
	u, signed, ok := d.raw(rec, n, delta)
	switch {
	case !ok:
		return append(dst, "null"...)
	case n.Base.Kind == KindPointer:
		dst = append(dst, `"0x`...)
		dst = strconv.AppendUint(dst, u, 16)
		return append(dst, '"')
	case n.Base.Kind == KindBool:
		return strconv.AppendBool(dst, u != 0)
	case signed:
		return strconv.AppendInt(dst, int64(u), 10)
	}
	return strconv.AppendUint(dst, u, 10)
}

// appendHex appends bytes as a JSON string of hex digits.
func appendHex(dst []byte, rec []byte, off, size int) []byte {
	const digits = "0123456789abcdef"
	dst = append(dst, '"')
	if off >= 0 && off <= len(rec) {
		for _, c := range rec[off:min(off+size, len(rec))] {
			dst = append(dst, digits[c>>4], digits[c&15])
		}
	}
	return append(dst, '"')
}
