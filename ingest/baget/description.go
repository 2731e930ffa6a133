package baget

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/traceduck/traceduck/schema"
)

// Bounds of a description (docs/baget-format.md 3). A hostile description
// must not exhaust memory or time.
const (
	MaxDescriptionSize = 16 << 20
	maxXMLDepth        = 32
	maxElements        = 1 << 20
	maxEvents          = 1 << 16
	maxTypes           = 1 << 16
	maxFields          = 4096    // <field>s of one <event> or <dt>
	maxTypeDepth       = 16      // nesting of composite types
	maxTreeNodes       = 1 << 16 // nodes of one record's field tree
	maxAllNodes        = 1 << 20 // nodes of all field trees
	maxDim             = 1 << 20 // one array dimension
	maxSizeof          = 1 << 20 // sizeof of any type or record
	maxSyncRules       = 64      // <resource> and <message> rules of one <event>
	maxFormatNames     = 1 << 16 // <value>s of one enum, <bit>s of one flags
)

// Node is a descriptor of one field in a record's field tree (seed 3.4).
// Offsets count from the record's first byte; the children of an array of
// structs describe its element [0] (element i is ElemSize*i further on).
type Node struct {
	Name     string
	Path     string // member names from the root joined by ".", "[]" after arrays
	TypeName string
	Base     *BaseType // nil for a struct or union
	Union    bool
	Offset   int
	Size     int   // the whole field, all elements; 0 for a flexible array
	Align    int   // of the field (of its element)
	Dims     []int // nil: not an array; [0]: a flexible array member
	ElemSize int   // size of one element (of the innermost dimension's element type)
	Children []*Node
	Selector *Node   // for a union: the simple field before it that selects the member
	Case     int64   // for a member of a union: its selector value
	Format   *Format // its display format (format=, docs 2.11), or nil; of each element of an array
	Line     int

	inArray, inUnion bool
}

// Simple reports whether the node is a base-type field that is not an array.
func (n *Node) Simple() bool { return n.Base != nil && n.Dims == nil }

// Creates is an event type's <creates> (docs 2.6).
type Creates struct {
	Field, Name, Parent *Node
}

// StateRule is a <state> rule (docs 2.7): it moves the object in Field (or
// the event's context) to To when its state is in From (empty: any).
type StateRule struct {
	Field   *Node
	Context bool
	To      string
	From    []string
	Line    int
}

// CPURule is a <cpu> rule (docs 2.7).
type CPURule struct {
	To    string
	Field *Node
	From  []string
	Line  int
}

// Resource kinds: what a <id resource=> says the objects of its kind are
// (docs 2.8).
const (
	ResOwned   = "owned"   // a task owns it while it holds it: holds and waits (a mutex)
	ResUnowned = "unowned" // nobody owns it: waits only (a counting semaphore, an event flag)
	ResQueue   = "queue"   // a message queue: waits only, and messages (<message>)
)

// Verbs of <resource> and <message> rules (docs 2.8).
const (
	VerbRequest = "request"
	VerbWait    = "wait"
	VerbAssign  = "assign"
	VerbRelease = "release"
	VerbGiveUp  = "give_up"
	VerbWoken   = "woken"
	VerbSend    = "send"
	VerbReceive = "receive"
)

var (
	resourceVerbs = map[string]bool{VerbRequest: true, VerbWait: true, VerbAssign: true, VerbRelease: true, VerbGiveUp: true, VerbWoken: true}
	messageVerbs  = map[string]bool{VerbSend: true, VerbReceive: true}
	// verbs that end a wait: they may name no resource (the one the actor waits for)
	waitEnders = map[string]bool{VerbAssign: true, VerbGiveUp: true, VerbWoken: true}
	resKinds   = map[string]bool{ResOwned: true, ResUnowned: true, ResQueue: true}
)

// SyncRule is a <resource> or <message> rule (docs 2.8): Verb applied to
// the resource (queue) in Field by the actor in Actor (nil: the event's
// context), when the value of Test (if any) is within Min..Max. Field nil
// (a <resource> verb that ends a wait): the resource the actor waits for.
// ID: a <message>'s id field.
type SyncRule struct {
	Message  bool
	Verb     string
	Field    *Node
	Actor    *Node
	ID       *Node
	Test     *Node
	Min, Max int64
	Line     int
}

// Applies reports whether the rule's test admits the record.
func (r *SyncRule) Applies(d *Description, rec []byte) bool {
	if r.Test == nil {
		return true
	}
	v := d.Int(rec, r.Test)
	return v >= r.Min && v <= r.Max
}

// Event is one record type (<event>) with its field tree.
type Event struct {
	Name     string
	ID       uint64
	Kind     RecordKind
	Group    string
	Line     int
	Fields   []*Node // type_record, size_record, then the declared fields
	Size     int     // sizeof the record struct, tail padding included
	Align    int
	Flexible *Node // the dim="0" last field, or nil

	Time, CPU, Main, Pid, Number, Context *Node
	MainKind                              string // kind of the main object
	Creates                               *Creates
	States                                []StateRule
	CPURules                              []CPURule
	Syncs                                 []SyncRule // <resource> and <message> rules, in order

	args []argOp // the args program (compileArgs); nil: walk the tree
}

// Description is a parsed and validated XML description.
type Description struct {
	File       string
	OS, Arch   string
	TimeUnit   string // ns, us, ms, s
	ABI        ABI
	TypeRecord *BaseType
	SizeRecord *BaseType
	Objects    map[string]*BaseType // object-id types by name
	Resources  map[string]string    // object kind -> ResOwned, ResUnowned, ResQueue (<id resource=>)
	Formats    map[string]*Format   // the <enum>s and <flags> of <Formats> by Name
	Events     []*Event             // in document order
	ByID       map[uint64]*Event
	ByName     map[string]*Event
}

// elem is an XML element with the line of its start tag.
type elem struct {
	name  string
	attrs []xml.Attr
	line  int
	kids  []*elem
	used  map[string]bool
}

func (e *elem) attr(name string) (string, bool) {
	if e.used == nil {
		e.used = map[string]bool{}
	}
	e.used[name] = true
	for _, a := range e.attrs {
		if a.Name.Space == "" && a.Name.Local == name {
			return a.Value, true
		}
	}
	return "", false
}

// parser carries the state of one Parse.
type parser struct {
	file  string
	d     *Description
	base  map[string]*BaseType
	dts   map[string]*dtype
	nodes int // all tree nodes so far
}

// dtype is a <dt> with its layout, computed once.
type dtype struct {
	el     *elem
	name   string
	union  bool
	state  int // 0 not laid out, 1 in progress, 2 done
	size   int
	align  int
	depth  int // nesting of composite types, 1 for a dt of base fields
	nodes  int // tree nodes below a field of this type
	fields []*fieldDecl
}

// fieldDecl is a <field> as declared.
type fieldDecl struct {
	el       *elem
	name     string
	typeName string
	dims     []int
	hasCase  bool
	cas      int64
	format   *Format // format=, or nil
}

func (p *parser) errf(line int, format string, args ...any) error {
	return &schema.InputError{File: p.file, Line: int64(line), Offset: -1, Msg: fmt.Sprintf(format, args...)}
}

// Parse reads and validates an XML description and computes the field tree
// of every record type. file names the description in errors.
//
//  1. Read the XML into elements with their lines (bounded in size, depth
//     and count); syntax errors carry encoding/xml's line.
//  2. The root, <abi> and <descriptor>: the ABI gives the base types.
//  3. <Objects>: object-identifier types over integer or pointer bases.
//  4. <Common>: every <dt> is laid out once (recursion found by the
//     in-progress mark), in document order so errors are deterministic.
//  5. Every <event>: its field tree, its field references, its rules.
func Parse(file string, data []byte) (*Description, error) {
	p := &parser{file: file}
	if len(data) > MaxDescriptionSize {
		return nil, p.errf(1, "a description of at most %d bytes expected, found %d bytes", MaxDescriptionSize, len(data))
	}
	root, err := p.readXML(data) // 1
	if err != nil {
		return nil, err
	}
	if err := p.root(root); err != nil { // 2, 3, 4, 5
		return nil, err
	}
	p.d.compileArgs()
	return p.d, nil
}

// readXML is step 1.
func (p *parser) readXML(data []byte) (*elem, error) {
	dec := xml.NewDecoder(bytes.NewReader(data))
	dec.Strict = true
	var stack []*elem
	var root *elem
	count := 0
	for {
		line, _ := dec.InputPos()
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			var se *xml.SyntaxError
			if errors.As(err, &se) {
				return nil, p.errf(se.Line, "well-formed XML expected, found: %s", se.Msg)
			}
			return nil, p.errf(line, "well-formed XML expected, found: %v", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			count++
			if count > maxElements {
				return nil, p.errf(line, "at most %d elements expected, found more", maxElements)
			}
			if len(stack) >= maxXMLDepth {
				return nil, p.errf(line, "elements nested at most %d deep expected, found <%s> deeper", maxXMLDepth, t.Name.Local)
			}
			if t.Name.Space != "" {
				return nil, p.errf(line, "an element without a namespace expected, found <%s:%s>", t.Name.Space, t.Name.Local)
			}
			// InputPos before the token: the line of its "<" (whitespace
			// before it is a CharData token of its own).
			e := &elem{name: t.Name.Local, attrs: t.Copy().Attr, line: line}
			if len(stack) == 0 {
				if root != nil {
					return nil, p.errf(line, "one root element expected, found a second <%s>", e.name)
				}
				root = e
			} else {
				parent := stack[len(stack)-1]
				parent.kids = append(parent.kids, e)
			}
			stack = append(stack, e)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(bytes.TrimSpace(t)) != 0 && len(stack) > 0 {
				return nil, p.errf(line, "only elements inside <%s> expected, found text %q", stack[len(stack)-1].name, clip(string(bytes.TrimSpace(t))))
			}
		}
	}
	if root == nil {
		return nil, p.errf(1, "a <description> element expected, found none")
	}
	return root, nil
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// checkAttrs refuses attributes the element does not take.
func (p *parser) checkAttrs(e *elem, allowed ...string) error {
	for _, a := range e.attrs {
		ok := a.Name.Space == ""
		if ok {
			ok = false
			for _, n := range allowed {
				if a.Name.Local == n {
					ok = true
					break
				}
			}
		}
		if !ok {
			name := a.Name.Local
			if a.Name.Space != "" {
				name = a.Name.Space + ":" + name
			}
			return p.errf(e.line, "<%s> attributes %s expected, found %s=%q", e.name, strings.Join(allowed, ", "), name, clip(a.Value))
		}
	}
	return nil
}

func (p *parser) need(e *elem, name string) (string, error) {
	v, ok := e.attr(name)
	if !ok {
		return "", p.errf(e.line, "<%s> with a %s attribute expected, found none", e.name, name)
	}
	return v, nil
}

// root is steps 2 to 5.
func (p *parser) root(r *elem) error {
	if r.name != "description" {
		return p.errf(r.line, "a <description> root element expected, found <%s>", r.name)
	}
	if err := p.checkAttrs(r, "os", "arch", "time_unit"); err != nil {
		return err
	}
	d := &Description{File: p.file, TimeUnit: "ns", Objects: map[string]*BaseType{}, Resources: map[string]string{}, Formats: map[string]*Format{},
		ByID: map[uint64]*Event{}, ByName: map[string]*Event{}}
	p.d = d
	var err error
	if d.OS, err = p.need(r, "os"); err != nil {
		return err
	}
	if d.Arch, err = p.need(r, "arch"); err != nil {
		return err
	}
	if v, ok := r.attr("time_unit"); ok {
		switch v {
		case "ns", "us", "ms", "s":
			d.TimeUnit = v
		default:
			return p.errf(r.line, "time_unit ns, us, ms or s expected, found %q", clip(v))
		}
	}
	var abi, desc, objects, common, formats *elem
	var events []*elem
	for _, k := range r.kids {
		var slot **elem
		switch k.name {
		case "abi":
			slot = &abi
		case "descriptor":
			slot = &desc
		case "Objects":
			slot = &objects
		case "Common":
			slot = &common
		case "Formats":
			slot = &formats
		case "event":
			if len(events) >= maxEvents {
				return p.errf(k.line, "at most %d <event> elements expected, found more", maxEvents)
			}
			events = append(events, k)
			continue
		default:
			return p.errf(k.line, "<abi>, <descriptor>, <Objects>, <Formats>, <Common> or <event> expected, found <%s>", k.name)
		}
		if *slot != nil {
			return p.errf(k.line, "one <%s> expected, found a second one", k.name)
		}
		*slot = k
	}
	if abi == nil {
		return p.errf(r.line, "an <abi> element expected, found none")
	}
	if desc == nil {
		return p.errf(r.line, "a <descriptor> element expected, found none")
	}
	if len(events) == 0 {
		return p.errf(r.line, "at least one <event> element expected, found none")
	}
	if err := p.abi(abi); err != nil { // 2
		return err
	}
	if err := p.descriptor(desc); err != nil {
		return err
	}
	if objects != nil { // 3
		if err := p.objects(objects); err != nil {
			return err
		}
	}
	if formats != nil { // 3
		if err := p.formats(formats); err != nil {
			return err
		}
	}
	if err := p.common(common); err != nil { // 4
		return err
	}
	for _, e := range events { // 5
		if err := p.event(e); err != nil {
			return err
		}
	}
	return nil
}

func (p *parser) abi(e *elem) error {
	if err := p.checkAttrs(e, "endian", "pointer", "long_long_align", "double_align"); err != nil {
		return err
	}
	if len(e.kids) > 0 {
		return p.errf(e.kids[0].line, "no elements inside <abi> expected, found <%s>", e.kids[0].name)
	}
	v, err := p.need(e, "endian")
	if err != nil {
		return err
	}
	switch v {
	case "little":
	case "big":
		p.d.ABI.BigEndian = true
	default:
		return p.errf(e.line, "endian little or big expected, found %q", clip(v))
	}
	for _, a := range []struct {
		name string
		dst  *int
	}{{"pointer", &p.d.ABI.Pointer}, {"long_long_align", &p.d.ABI.LongLongAlign}, {"double_align", &p.d.ABI.DoubleAlign}} {
		v, err := p.need(e, a.name)
		if err != nil {
			return err
		}
		switch v {
		case "4", "8":
			*a.dst = int(v[0] - '0')
		default:
			return p.errf(e.line, "%s 4 or 8 expected, found %q", a.name, clip(v))
		}
	}
	p.base = baseTypes(p.d.ABI)
	return nil
}

// lookupBase finds a base or object-id type.
func (p *parser) lookupBase(name string) *BaseType {
	if b := p.base[name]; b != nil {
		return b
	}
	if b := p.d.Objects[name]; b != nil {
		return b
	}
	if strings.HasSuffix(name, "*") && len(name) > 1 {
		return &BaseType{Name: name, Kind: KindPointer, Size: p.d.ABI.Pointer, Align: p.d.ABI.Pointer}
	}
	return nil
}

func (p *parser) descriptor(e *elem) error {
	if err := p.checkAttrs(e, "type", "size"); err != nil {
		return err
	}
	if len(e.kids) > 0 {
		return p.errf(e.kids[0].line, "no elements inside <descriptor> expected, found <%s>", e.kids[0].name)
	}
	for _, a := range []struct {
		name string
		dst  **BaseType
	}{{"type", &p.d.TypeRecord}, {"size", &p.d.SizeRecord}} {
		v, err := p.need(e, a.name)
		if err != nil {
			return err
		}
		b := p.base[v]
		if b == nil || (b.Kind != KindUint && b.Kind != KindInt) {
			return p.errf(e.line, "<descriptor %s=> an integer base type expected, found %q", a.name, clip(v))
		}
		*a.dst = b
	}
	return nil
}

// isIdent reports whether s is a C identifier.
func isIdent(s string) bool {
	if s == "" || len(s) > 255 {
		return false
	}
	for i, c := range s {
		if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9' {
			continue
		}
		return false
	}
	return true
}

func (p *parser) objects(o *elem) error {
	if err := p.checkAttrs(o); err != nil {
		return err
	}
	for _, e := range o.kids {
		if e.name != "id" {
			return p.errf(e.line, "<id> inside <Objects> expected, found <%s>", e.name)
		}
		if len(p.d.Objects) >= maxTypes {
			return p.errf(e.line, "at most %d <id> elements expected, found more", maxTypes)
		}
		if err := p.checkAttrs(e, "type_name", "base", "kind", "resource"); err != nil {
			return err
		}
		if len(e.kids) > 0 {
			return p.errf(e.kids[0].line, "no elements inside <id> expected, found <%s>", e.kids[0].name)
		}
		name, err := p.need(e, "type_name")
		if err != nil {
			return err
		}
		if !isIdent(name) {
			return p.errf(e.line, "an identifier as <id type_name=> expected, found %q", clip(name))
		}
		if p.lookupBase(name) != nil {
			return p.errf(e.line, "a new type name in <id type_name=> expected, found %q, already a type", name)
		}
		bn, err := p.need(e, "base")
		if err != nil {
			return err
		}
		b := p.lookupBase(bn)
		if b == nil || (b.Kind != KindInt && b.Kind != KindUint && b.Kind != KindPointer) {
			return p.errf(e.line, "<id base=> an integer or pointer base type expected, found %q", clip(bn))
		}
		kind, err := p.need(e, "kind")
		if err != nil {
			return err
		}
		if !isIdent(kind) {
			return p.errf(e.line, "an object kind (letters, digits, _) in <id kind=> expected, found %q", clip(kind))
		}
		if r, ok := e.attr("resource"); ok {
			switch {
			case !resKinds[r]:
				return p.errf(e.line, "<id resource=> one of %s expected, found %q", names(resKinds), clip(r))
			case kind == "thread" || kind == "process" || kind == "interrupt" || kind == "cpu":
				return p.errf(e.line, "<id resource=> on a kind of resource expected, found it on kind %q", kind)
			case p.d.Resources[kind] != "" && p.d.Resources[kind] != r:
				return p.errf(e.line, "one resource= for kind %q expected, found %q and %q", kind, p.d.Resources[kind], r)
			}
			p.d.Resources[kind] = r
		}
		p.d.Objects[name] = &BaseType{Name: name, Kind: KindObject, Size: b.Size, Align: b.Align, Signed: b.Kind == KindInt, ObjKind: kind}
	}
	return nil
}

// fields reads the <field> children of an <event> or <dt>; other children
// are returned for the caller.
func (p *parser) fields(owner *elem, union, event bool) ([]*fieldDecl, []*elem, error) {
	var out []*fieldDecl
	var rest []*elem
	seen := map[string]bool{}
	cases := map[int64]bool{}
	for _, e := range owner.kids {
		if e.name != "field" {
			if !event {
				return nil, nil, p.errf(e.line, "<field> inside <dt> expected, found <%s>", e.name)
			}
			rest = append(rest, e)
			continue
		}
		if len(out) >= maxFields {
			return nil, nil, p.errf(e.line, "at most %d fields in <%s> expected, found more", maxFields, owner.name)
		}
		allowed := []string{"Name", "type_name", "dim", "format"}
		if union {
			allowed = append(allowed, "case")
		}
		if err := p.checkAttrs(e, allowed...); err != nil {
			return nil, nil, err
		}
		f := &fieldDecl{el: e}
		var err error
		if f.name, err = p.need(e, "Name"); err != nil {
			return nil, nil, err
		}
		if !isIdent(f.name) {
			return nil, nil, p.errf(e.line, "a C identifier as field Name expected, found %q", clip(f.name))
		}
		if v, ok := e.attr("format"); ok {
			if f.format, err = p.fieldFormat(e, f.name, v); err != nil {
				return nil, nil, err
			}
		} else if len(e.kids) > 0 {
			return nil, nil, p.errf(e.kids[0].line, "no elements inside <field> expected, found <%s>", e.kids[0].name)
		}
		if event && (f.name == "type_record" || f.name == "size_record") || seen[f.name] {
			return nil, nil, p.errf(e.line, "a field name unique in <%s> expected, found a second %q", owner.name, f.name)
		}
		seen[f.name] = true
		if f.typeName, err = p.need(e, "type_name"); err != nil {
			return nil, nil, err
		}
		if v, ok := e.attr("dim"); ok {
			if f.dims, err = p.dims(e, v); err != nil {
				return nil, nil, err
			}
		}
		if union {
			f.cas = int64(len(out))
			if v, ok := e.attr("case"); ok {
				c, err := strconv.ParseInt(v, 0, 64)
				if err != nil {
					return nil, nil, p.errf(e.line, "an integer as case expected, found %q", clip(v))
				}
				f.cas, f.hasCase = c, true
			}
			if cases[f.cas] {
				return nil, nil, p.errf(e.line, "a case value unique in the union expected, found a second %d", f.cas)
			}
			cases[f.cas] = true
		}
		out = append(out, f)
	}
	return out, rest, nil
}

// dims parses a dim attribute: "N" or "N,M,...", each 1..maxDim; "0" is a
// flexible array, checked by the caller.
func (p *parser) dims(e *elem, v string) ([]int, error) {
	if v == "0" {
		return []int{0}, nil
	}
	parts := strings.Split(v, ",")
	if len(parts) > 8 {
		return nil, p.errf(e.line, "dim: at most 8 dimensions expected, found %d", len(parts))
	}
	out := make([]int, len(parts))
	for i, s := range parts {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 || n > maxDim {
			return nil, p.errf(e.line, "dim: positive integers up to %d separated by \",\" expected, found %q", maxDim, clip(v))
		}
		out[i] = n
	}
	return out, nil
}

// common is step 4.
func (p *parser) common(c *elem) error {
	p.dts = map[string]*dtype{}
	if c == nil {
		return nil
	}
	if err := p.checkAttrs(c); err != nil {
		return err
	}
	var order []*dtype
	for _, e := range c.kids {
		if e.name != "dt" {
			return p.errf(e.line, "<dt> inside <Common> expected, found <%s>", e.name)
		}
		if len(order) >= maxTypes {
			return p.errf(e.line, "at most %d <dt> elements expected, found more", maxTypes)
		}
		if err := p.checkAttrs(e, "Name", "union"); err != nil {
			return err
		}
		name, err := p.need(e, "Name")
		if err != nil {
			return err
		}
		if name == "" || len(name) > 255 {
			return p.errf(e.line, "a type name of 1 to 255 bytes in <dt Name=> expected, found %q", clip(name))
		}
		if p.lookupBase(name) != nil {
			return p.errf(e.line, "a new type name in <dt Name=> expected, found %q, already a base or object-id type", clip(name))
		}
		if p.dts[name] != nil {
			return p.errf(e.line, "a <dt> name unique in <Common> expected, found a second %q", clip(name))
		}
		t := &dtype{el: e, name: name}
		if v, ok := e.attr("union"); ok {
			switch v {
			case "0":
			case "1":
				t.union = true
			default:
				return p.errf(e.line, "union 0 or 1 expected, found %q", clip(v))
			}
		}
		if t.fields, _, err = p.fields(e, t.union, false); err != nil {
			return err
		}
		if len(t.fields) == 0 {
			return p.errf(e.line, "<dt %q> with at least one <field> expected, found none", clip(name))
		}
		p.dts[name] = t
		order = append(order, t)
	}
	for _, t := range order {
		if err := p.layout(t, nil); err != nil {
			return err
		}
	}
	return nil
}

// member is a field resolved to its type: base or composite.
type member struct {
	base  *BaseType
	dt    *dtype
	size  int // whole field
	align int
	elem  int // element size
	depth int
	nodes int // nodes below the field
}

func (p *parser) resolve(f *fieldDecl, chain []string) (member, error) {
	var m member
	if b := p.lookupBase(f.typeName); b != nil {
		m.base, m.elem, m.align = b, b.Size, b.Align
		if b.Kind == KindTimespec {
			m.nodes = 2
		}
	} else if t := p.dts[f.typeName]; t != nil {
		if err := p.layout(t, chain); err != nil {
			return m, err
		}
		m.dt, m.elem, m.align, m.depth, m.nodes = t, t.size, t.align, t.depth, t.nodes
	} else {
		return m, p.errf(f.el.line, "field %q: a base type, object-id type or <dt> name expected, found unknown type %q", f.name, clip(f.typeName))
	}
	m.size = m.elem
	for _, n := range f.dims {
		if n == 0 {
			m.size = 0
			break
		}
		if m.size > maxSizeof/n {
			return m, p.errf(f.el.line, "field %q: a size of at most %d bytes expected, found a larger array", f.name, maxSizeof)
		}
		m.size *= n
	}
	return m, nil
}

// layout computes a <dt>'s size, alignment, depth and node count (C rules:
// docs 2.4). chain is the path of <dt>s being laid out, for the recursion
// error.
func (p *parser) layout(t *dtype, chain []string) error {
	switch t.state {
	case 2:
		return nil
	case 1:
		i := 0
		for i < len(chain) && chain[i] != t.name {
			i++
		}
		cyc := append(append([]string{}, chain[i:]...), t.name)
		return p.errf(t.el.line, "a <dt> that does not contain itself expected, found %q contains itself: %s", clip(t.name), strings.Join(cyc, " -> "))
	}
	t.state = 1
	chain = append(chain, t.name)
	off, align, nodes, depth := 0, 1, 0, 0
	for i, f := range t.fields {
		m, err := p.resolve(f, chain)
		if err != nil {
			return err
		}
		if err := p.checkFormat(f, m); err != nil {
			return err
		}
		if f.dims != nil && f.dims[0] == 0 {
			return p.errf(f.el.line, "dim: a flexible array (dim=\"0\") only as the last field of an <event> expected, found it in <dt %q>", clip(t.name))
		}
		if m.dt != nil && m.dt.union {
			if err := p.checkSelector(t.fields, i, f); err != nil {
				return err
			}
		}
		if m.depth+1 > maxTypeDepth {
			return p.errf(f.el.line, "types nested at most %d deep expected, found deeper through field %q", maxTypeDepth, f.name)
		}
		depth = max(depth, m.depth)
		align = max(align, m.align)
		if t.union {
			off = max(off, m.size)
		} else {
			off = alignUp(off, m.align) + m.size
		}
		if off > maxSizeof {
			return p.errf(f.el.line, "a size of at most %d bytes expected, found <dt %q> larger", maxSizeof, clip(t.name))
		}
		nodes = min(nodes+1+m.nodes, maxTreeNodes+1)
	}
	t.size, t.align, t.depth, t.nodes = alignUp(off, align), align, depth+1, nodes
	t.state = 2
	return nil
}

func alignUp(n, a int) int { return (n + a - 1) / a * a }

// checkSelector checks that the union field fs[i] follows a simple integer
// field (seed 3.2).
func (p *parser) checkSelector(fs []*fieldDecl, i int, f *fieldDecl) error {
	if f.dims != nil {
		return p.errf(f.el.line, "union field %q: a single union expected, found an array (dim=%q)", f.name, fs[i].el.attrOr("dim"))
	}
	if i == 0 {
		return p.errf(f.el.line, "union field %q: a selector (a simple integer field) right before it expected, found none", f.name)
	}
	prev := fs[i-1]
	b := p.lookupBase(prev.typeName)
	if b == nil || !b.Kind.integer() || prev.dims != nil {
		what := "type " + prev.typeName
		if prev.dims != nil {
			what = "an array"
		}
		return p.errf(f.el.line, "union field %q: a selector (a simple integer field) right before it expected, found field %q of %s", f.name, prev.name, clip(what))
	}
	return nil
}

func (e *elem) attrOr(name string) string {
	v, _ := e.attr(name)
	return v
}

// build makes the tree nodes of fields starting at base offset off.
func (p *parser) build(fs []*fieldDecl, prefix string, off int, union, inArray, inUnion bool, out *[]*Node) (size, align int, err error) {
	align = 1
	end := 0
	for i, f := range fs {
		m, err := p.resolve(f, nil)
		if err != nil {
			return 0, 0, err
		}
		if err := p.checkFormat(f, m); err != nil {
			return 0, 0, err
		}
		n := &Node{Name: f.name, TypeName: f.typeName, Base: m.base, Dims: f.dims, ElemSize: m.elem,
			Size: m.size, Align: m.align, Format: f.format, Line: f.el.line, inArray: inArray, inUnion: inUnion}
		n.Path = prefix + f.name
		if union {
			n.Offset = off
			n.Case = f.cas
		} else {
			end = alignUp(end, m.align)
			n.Offset = off + end
		}
		p.nodes++
		if p.nodes > maxAllNodes {
			return 0, 0, p.errf(f.el.line, "at most %d field nodes in all records expected, found more", maxAllNodes)
		}
		childPrefix := n.Path + "."
		if f.dims != nil {
			childPrefix = n.Path + "[]."
		}
		arr := inArray || f.dims != nil
		if m.dt != nil {
			n.Union = m.dt.union
			if n.Union && i > 0 {
				n.Selector = (*out)[len(*out)-1]
			}
			if _, _, err := p.build(m.dt.fields, childPrefix, n.Offset, m.dt.union, arr, inUnion || m.dt.union, &n.Children); err != nil {
				return 0, 0, err
			}
		} else if m.base.Kind == KindTimespec {
			lb := p.base["long"]
			for k, name := range []string{"tv_sec", "tv_nsec"} {
				n.Children = append(n.Children, &Node{Name: name, Path: childPrefix + name, TypeName: "long", Base: lb,
					Offset: n.Offset + k*lb.Size, Size: lb.Size, Align: lb.Align, ElemSize: lb.Size, Line: f.el.line, inArray: arr, inUnion: inUnion})
				p.nodes++
			}
		}
		*out = append(*out, n)
		if union {
			end = max(end, m.size)
		} else {
			end += m.size
		}
		align = max(align, m.align)
	}
	return alignUp(end, align), align, nil
}

// event is step 5.
//
//  1. Attributes: name, id (unique, fits type_record), kind, group.
//  2. Fields: the descriptor's two, then the declared ones, laid out as one
//     C struct; a dim="0" is allowed on the last field only.
//  3. Field references (time, cpu, main, pid, number, context) resolve to
//     simple fields outside arrays and unions, of fitting kinds.
//  4. <creates>, <state> and <cpu> children.
func (p *parser) event(e *elem) error {
	if err := p.checkAttrs(e, "Name", "id", "kind", "number", "group", "time", "cpu", "main", "main_kind", "pid", "context"); err != nil {
		return err
	}
	ev := &Event{Line: e.line, Group: "other"}
	var err error
	if ev.Name, err = p.need(e, "Name"); err != nil { // 1
		return err
	}
	if ev.Name == "" || len(ev.Name) > 255 {
		return p.errf(e.line, "an event Name of 1 to 255 bytes expected, found %q", clip(ev.Name))
	}
	if prev := p.d.ByName[ev.Name]; prev != nil {
		return p.errf(e.line, "an event Name unique in the description expected, found a second %q (first at line %d)", clip(ev.Name), prev.Line)
	}
	idv, err := p.need(e, "id")
	if err != nil {
		return err
	}
	if ev.ID, err = strconv.ParseUint(idv, 0, 64); err != nil {
		return p.errf(e.line, "event %q: a non-negative integer id expected, found %q", clip(ev.Name), clip(idv))
	}
	if bits := 8 * p.d.TypeRecord.Size; bits < 64 && ev.ID >= 1<<bits {
		return p.errf(e.line, "event %q: an id that fits type_record (%s) expected, found %d", clip(ev.Name), p.d.TypeRecord.Name, ev.ID)
	}
	if prev := p.d.ByID[ev.ID]; prev != nil {
		return p.errf(e.line, "an event id unique in the description expected, found %d again (event %q at line %d)", ev.ID, prev.Name, prev.Line)
	}
	if v, ok := e.attr("kind"); ok {
		k, known := recordKinds[v]
		if !known {
			return p.errf(e.line, "event %q: kind event, filler, block or info expected, found %q", clip(ev.Name), clip(v))
		}
		ev.Kind = k
	}
	if v, ok := e.attr("group"); ok {
		if v == "" || len(v) > 255 {
			return p.errf(e.line, "event %q: a group name of 1 to 255 bytes expected, found %q", clip(ev.Name), clip(v))
		}
		ev.Group = v
	}

	decls, rest, err := p.fields(e, false, true) // 2
	if err != nil {
		return err
	}
	for i, f := range decls {
		if f.dims != nil && f.dims[0] == 0 && i != len(decls)-1 {
			return p.errf(f.el.line, "dim: a flexible array (dim=\"0\") only as the last field of an <event> expected, found it on %q", f.name)
		}
		if t := p.dts[f.typeName]; t != nil && t.union {
			if err := p.checkSelector(decls, i, f); err != nil {
				return err
			}
		}
		if t := p.dts[f.typeName]; t != nil && t.nodes > maxTreeNodes {
			return p.errf(f.el.line, "at most %d nodes in a record's field tree expected, found more through field %q", maxTreeNodes, f.name)
		}
	}
	all := append([]*fieldDecl{
		{el: e, name: "type_record", typeName: p.d.TypeRecord.Name},
		{el: e, name: "size_record", typeName: p.d.SizeRecord.Name},
	}, decls...)
	before := p.nodes
	if ev.Size, ev.Align, err = p.build(all, "", 0, false, false, false, &ev.Fields); err != nil {
		return err
	}
	if p.nodes-before > maxTreeNodes {
		return p.errf(e.line, "event %q: at most %d nodes in a record's field tree expected, found %d", clip(ev.Name), maxTreeNodes, p.nodes-before)
	}
	if ev.Size > maxSizeof {
		return p.errf(e.line, "event %q: a record of at most %d bytes expected, found %d", clip(ev.Name), maxSizeof, ev.Size)
	}
	if last := ev.Fields[len(ev.Fields)-1]; last.Dims != nil && last.Dims[0] == 0 {
		ev.Flexible = last
	}

	ref := func(attr string, required bool, ok func(*Node) bool, want string) (*Node, error) { // 3
		v, has := e.attr(attr)
		if !has {
			if required {
				return nil, p.errf(e.line, "event %q: a %s attribute expected, found none", clip(ev.Name), attr)
			}
			return nil, nil
		}
		n, err := p.lookupField(e.line, ev, attr, v)
		if err != nil {
			return nil, err
		}
		if ok != nil && !ok(n) {
			return nil, p.errf(e.line, "event %q: %s field %q of %s expected, found type %s", clip(ev.Name), attr, clip(v), want, n.TypeName)
		}
		return n, nil
	}
	isInt := func(n *Node) bool { return n.Simple() && n.Base.Kind.integer() }
	isTime := func(n *Node) bool { return isInt(n) || n.Simple() && n.Base.Kind == KindTimespec }
	if ev.Time, err = ref("time", ev.Kind == RecEvent, isTime, "an integer or struct timespec type"); err != nil {
		return err
	}
	if ev.CPU, err = ref("cpu", false, isInt, "an integer type"); err != nil {
		return err
	}
	if ev.Pid, err = ref("pid", false, isInt, "an integer or object-id type"); err != nil {
		return err
	}
	if ev.Number, err = ref("number", ev.Kind == RecBlock, isInt, "an integer type"); err != nil {
		return err
	}
	if ev.Context, err = ref("context", false, isObj, "an object-id type"); err != nil {
		return err
	}
	mk, hasMK := e.attr("main_kind")
	if hasMK && !isIdent(mk) {
		return p.errf(e.line, "event %q: an object kind (letters, digits, _) in main_kind expected, found %q", clip(ev.Name), clip(mk))
	}
	if v, has := e.attr("main"); has {
		n, err := p.lookupField(e.line, ev, "main", v, true)
		if err != nil {
			return err
		}
		switch {
		case isObj(n) && !hasMK:
			ev.MainKind = n.Base.ObjKind
		case hasMK && (isInt(n) || n.Base != nil && n.Base.Kind == KindChar && len(n.Dims) == 1):
			ev.MainKind = mk
		case hasMK:
			return p.errf(e.line, "event %q: main field %q of an integer or char array type expected, found type %s", clip(ev.Name), clip(v), n.TypeName)
		default:
			return p.errf(e.line, "event %q: main field %q of an object-id type (or main_kind) expected, found type %s", clip(ev.Name), clip(v), n.TypeName)
		}
		ev.Main = n
	} else if hasMK {
		return p.errf(e.line, "event %q: main_kind only with main expected, found main_kind without main", clip(ev.Name))
	}

	for _, k := range rest { // 4
		if err := p.rule(ev, k); err != nil {
			return err
		}
	}
	p.d.Events = append(p.d.Events, ev)
	p.d.ByID[ev.ID] = ev
	p.d.ByName[ev.Name] = ev
	return nil
}

func isObj(n *Node) bool { return n.Simple() && n.Base.Kind == KindObject }

// lookupField resolves a field reference: member names joined by ".".
// charArray allows the last member to be a char array (a main object that
// is text).
func (p *parser) lookupField(line int, ev *Event, attr, path string, charArray ...bool) (*Node, error) {
	nodes := ev.Fields
	var n *Node
	for _, name := range strings.Split(path, ".") {
		n = nil
		for _, c := range nodes {
			if c.Name == name {
				n = c
				break
			}
		}
		if n == nil {
			return nil, p.errf(line, "event %q: %s: an existing field expected, found no field %q", clip(ev.Name), attr, clip(path))
		}
		nodes = n.Children
	}
	arrOK := len(charArray) > 0 && charArray[0] && n.Base != nil && n.Base.Kind == KindChar && len(n.Dims) == 1 && !n.inArray
	switch {
	case n.inArray || n.Dims != nil && !arrOK:
		return nil, p.errf(line, "event %q: %s: a field outside arrays expected, found %q in an array", clip(ev.Name), attr, clip(path))
	case n.inUnion:
		return nil, p.errf(line, "event %q: %s: a field outside unions expected, found %q in a union", clip(ev.Name), attr, clip(path))
	case n.Base == nil:
		return nil, p.errf(line, "event %q: %s: a simple field expected, found %q of composite type %s", clip(ev.Name), attr, clip(path), clip(n.TypeName))
	}
	return n, nil
}

// rule reads a <creates>, <state> or <cpu> child of an <event>.
func (p *parser) rule(ev *Event, k *elem) error {
	if len(k.kids) > 0 {
		return p.errf(k.kids[0].line, "no elements inside <%s> expected, found <%s>", k.name, k.kids[0].name)
	}
	field := func(attr string, required bool) (*Node, error) {
		v, ok := k.attr(attr)
		if !ok {
			if required {
				return nil, p.errf(k.line, "<%s> with a %s attribute expected, found none", k.name, attr)
			}
			return nil, nil
		}
		return p.lookupField(k.line, ev, k.name+" "+attr, v, attr == "name")
	}
	from := func(allowed map[string]bool) ([]string, error) {
		v, ok := k.attr("from")
		if !ok {
			return nil, nil
		}
		fs := strings.Fields(v)
		if len(fs) == 0 || len(fs) > 16 {
			return nil, p.errf(k.line, "<%s from=> 1 to 16 states expected, found %q", k.name, clip(v))
		}
		for _, s := range fs {
			if !allowed[s] {
				return nil, p.errf(k.line, "<%s from=> states %s expected, found %q", k.name, names(allowed), clip(s))
			}
		}
		return fs, nil
	}
	switch k.name {
	case "creates":
		if err := p.checkAttrs(k, "field", "name", "parent"); err != nil {
			return err
		}
		if ev.Creates != nil {
			return p.errf(k.line, "event %q: one <creates> expected, found a second one", clip(ev.Name))
		}
		c := &Creates{}
		var err error
		if c.Field, err = field("field", true); err != nil {
			return err
		}
		if !isObj(c.Field) {
			return p.errf(k.line, "<creates field=> a field of an object-id type expected, found type %s", c.Field.TypeName)
		}
		if c.Name, err = field("name", false); err != nil {
			return err
		}
		if c.Name != nil && (c.Name.Base.Kind != KindChar || c.Name.Dims == nil) {
			return p.errf(k.line, "<creates name=> a char array field expected, found type %s", c.Name.TypeName)
		}
		if c.Parent, err = field("parent", false); err != nil {
			return err
		}
		if c.Parent != nil && !c.Parent.Base.Kind.integer() {
			return p.errf(k.line, "<creates parent=> an integer or object-id field expected, found type %s", c.Parent.TypeName)
		}
		ev.Creates = c
	case "state":
		if err := p.checkAttrs(k, "field", "context", "to", "from"); err != nil {
			return err
		}
		r := StateRule{Line: k.line}
		var err error
		if r.Field, err = field("field", false); err != nil {
			return err
		}
		if v, ok := k.attr("context"); ok {
			if v != "1" {
				return p.errf(k.line, "<state context=> 1 expected, found %q", clip(v))
			}
			r.Context = true
		}
		if (r.Field == nil) == !r.Context {
			return p.errf(k.line, "<state> with one of field= or context=\"1\" expected, found %s", map[bool]string{true: "both", false: "neither"}[r.Context])
		}
		if r.Field != nil && !isObj(r.Field) {
			return p.errf(k.line, "<state field=> a field of an object-id type expected, found type %s", r.Field.TypeName)
		}
		if r.To, err = p.need(k, "to"); err != nil {
			return err
		}
		if !threadTargets[r.To] {
			return p.errf(k.line, "<state to=> one of %s expected, found %q", names(threadTargets), clip(r.To))
		}
		if r.From, err = from(threadFrom); err != nil {
			return err
		}
		ev.States = append(ev.States, r)
	case "cpu":
		if err := p.checkAttrs(k, "to", "field", "from"); err != nil {
			return err
		}
		r := CPURule{Line: k.line}
		var err error
		if r.To, err = p.need(k, "to"); err != nil {
			return err
		}
		if !cpuTargets[r.To] {
			return p.errf(k.line, "<cpu to=> one of %s expected, found %q", names(cpuTargets), clip(r.To))
		}
		needField := r.To == CPUThr || r.To == CPUIntr
		if r.Field, err = field("field", needField); err != nil {
			return err
		}
		if r.Field != nil && !needField {
			return p.errf(k.line, "<cpu to=%q> without field= expected, found field=", r.To)
		}
		if r.Field != nil && !isObj(r.Field) {
			return p.errf(k.line, "<cpu field=> a field of an object-id type expected, found type %s", r.Field.TypeName)
		}
		if r.From, err = from(cpuFrom); err != nil {
			return err
		}
		ev.CPURules = append(ev.CPURules, r)
	case "resource", "message":
		return p.syncRule(ev, k, field)
	default:
		return p.errf(k.line, "<field>, <creates>, <state>, <cpu>, <resource> or <message> inside <event> expected, found <%s>", k.name)
	}
	return nil
}

// syncRule reads a <resource> or <message> rule (docs 2.8).
func (p *parser) syncRule(ev *Event, k *elem, field func(string, bool) (*Node, error)) error {
	msg := k.name == "message"
	attrs := []string{"verb", "field", "actor", "test", "min", "max"}
	verbs := resourceVerbs
	if msg {
		attrs, verbs = append(attrs, "id"), messageVerbs
	}
	if err := p.checkAttrs(k, attrs...); err != nil {
		return err
	}
	if len(ev.Syncs) >= maxSyncRules {
		return p.errf(k.line, "event %q: at most %d <resource> and <message> rules expected, found more", clip(ev.Name), maxSyncRules)
	}
	r := SyncRule{Message: msg, Line: k.line, Min: math.MinInt64, Max: math.MaxInt64}
	var err error
	if r.Verb, err = p.need(k, "verb"); err != nil {
		return err
	}
	if !verbs[r.Verb] {
		return p.errf(k.line, "<%s verb=> one of %s expected, found %q", k.name, names(verbs), clip(r.Verb))
	}
	if r.Field, err = field("field", msg || !waitEnders[r.Verb]); err != nil {
		return err
	}
	if r.Field != nil {
		if !isObj(r.Field) {
			return p.errf(k.line, "<%s field=> a field of an object-id type expected, found type %s", k.name, r.Field.TypeName)
		}
		res := p.d.Resources[r.Field.Base.ObjKind]
		switch {
		case res == "":
			return p.errf(k.line, "<%s field=> a field of a resource kind (<id resource=>) expected, found %q of kind %s", k.name, r.Field.Path, r.Field.Base.ObjKind)
		case msg && res != ResQueue:
			return p.errf(k.line, "<message field=> a field of a queue kind (<id resource=\"queue\">) expected, found %q of kind %s (%s)", r.Field.Path, r.Field.Base.ObjKind, res)
		}
	}
	if r.Actor, err = field("actor", false); err != nil {
		return err
	}
	if r.Actor != nil && !isObj(r.Actor) {
		return p.errf(k.line, "<%s actor=> a field of an object-id type expected, found type %s", k.name, r.Actor.TypeName)
	}
	if msg {
		if r.ID, err = field("id", false); err != nil {
			return err
		}
		if r.ID != nil && !r.ID.Base.Kind.integer() {
			return p.errf(k.line, "<message id=> an integer field expected, found type %s", r.ID.TypeName)
		}
	}
	if r.Test, err = field("test", false); err != nil {
		return err
	}
	if r.Test != nil && !r.Test.Base.Kind.integer() {
		return p.errf(k.line, "<%s test=> an integer field expected, found type %s", k.name, r.Test.TypeName)
	}
	for _, b := range []struct {
		name string
		dst  *int64
	}{{"min", &r.Min}, {"max", &r.Max}} {
		v, ok := k.attr(b.name)
		if !ok {
			continue
		}
		if r.Test == nil {
			return p.errf(k.line, "<%s %s=> only with test= expected, found %s= without test=", k.name, b.name, b.name)
		}
		if *b.dst, err = strconv.ParseInt(v, 0, 64); err != nil {
			return p.errf(k.line, "<%s %s=> an integer expected, found %q", k.name, b.name, clip(v))
		}
	}
	if r.Test != nil {
		_, hasMin := k.attr("min")
		_, hasMax := k.attr("max")
		if !hasMin && !hasMax {
			return p.errf(k.line, "<%s test=> with min= or max= expected, found neither", k.name)
		}
		if r.Min > r.Max {
			return p.errf(k.line, "<%s> min <= max expected, found min=%d > max=%d", k.name, r.Min, r.Max)
		}
	}
	ev.Syncs = append(ev.Syncs, r)
	return nil
}

func names(m map[string]bool) string {
	var s []string
	for k := range m {
		s = append(s, k)
	}
	sort.Strings(s)
	return strings.Join(s, ", ")
}
