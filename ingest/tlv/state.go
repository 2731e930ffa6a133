package tlv

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// State is the value of every attribute of every resource over time: the
// resources of a resource file, typed by its resource headers, and the
// changes the trace (or the conversion, as it emits lines) made to them.
//
// Queries read the current value, or the value at an earlier time: each
// attribute keeps its last historyLen changes, so that a condition with a
// time (TLV's [TIME]Type(cond)) sees what held then when timestamps go
// backwards a little; what is older is not kept (memory does not grow with
// the trace) and a query beyond it reads the oldest change kept, counted
// in State.HistoryMisses.
type State struct {
	types  map[string]*typeInfo
	res    []*Res
	byName map[string]*Res
	byType map[string][]*Res

	// HistoryMisses counts queries for a time older than the history kept.
	HistoryMisses int64

	// ver counts the changes of the state (values set, attributes
	// declared): what a macro read is still so while it did not move.
	ver uint64

	base timeBase // how [TIME] in conditions is read
}

// SetTimeBase sets the radix and unit of the times of conditions.
func (s *State) SetTimeBase(radix int, u TimeUnit) { s.base = timeBase{radix, u} }

const historyLen = 16

// typeInfo is a resource type with its attributes numbered.
type typeInfo struct {
	index    int // among the state's types (their per-type tables elsewhere)
	def      *ResourceType
	attrs    []*attrInfo // declared first, in header order; then undeclared ones as the trace sets them
	attrIdx  map[string]int
	behavior map[string]*BehaviorDef
	res      []*Res // its resources, in resource file order
	// ver counts the changes of each attribute, on any resource of the
	// type: a selection that read attributes whose counts did not move
	// since is still the same (Select).
	ver []uint64
}

type attrInfo struct {
	name    string
	def     *AttributeDef // nil: not declared in the header
	static  bool
	numeric bool
}

// Res is a resource.
type Res struct {
	Name  string
	Type  *typeInfo
	Index int // position in the resource file
	vals  []attrValue
	src   *Resource
}

type attrValue struct {
	cur     string
	set     bool
	initial string
	hasInit bool
	hist    [historyLen]change
	n       int // changes made (the ring holds the last historyLen)
}

type change struct {
	ns    int64
	value string
}

// NewState builds the state of a resource file's resources, typed by
// types (the resource types of its headers). A resource whose type no
// header declares is an error.
func NewState(res *ResourceFile, types []*ResourceType) (*State, error) {
	s := &State{types: map[string]*typeInfo{}, byName: map[string]*Res{}, byType: map[string][]*Res{}}
	for _, t := range types {
		if _, dup := s.types[t.Name]; dup {
			continue // the first header that declares a type wins
		}
		ti := &typeInfo{index: len(s.types), def: t, attrIdx: map[string]int{}, behavior: map[string]*BehaviorDef{}}
		for i := range t.Attributes {
			a := &t.Attributes[i]
			ti.attrIdx[a.Name] = len(ti.attrs)
			ti.attrs = append(ti.attrs, &attrInfo{name: a.Name, def: a,
				static:  strings.EqualFold(a.AllocationType, "Static"),
				numeric: strings.EqualFold(a.VariableType, "Number")})
		}
		ti.ver = make([]uint64, len(ti.attrs))
		for i := range t.Behaviors {
			ti.behavior[t.Behaviors[i].Name] = &t.Behaviors[i]
		}
		s.types[t.Name] = ti
	}
	for i := range res.Resources {
		r := &res.Resources[i]
		ti := s.types[r.Type]
		if ti == nil {
			return nil, fmt.Errorf("%s: resource %q: unknown resource type %q (types: %s)", posString(r.Pos, res.Path), r.Name, r.Type, strings.Join(s.TypeNames(), ", "))
		}
		if _, dup := s.byName[r.Name]; dup {
			return nil, fmt.Errorf("%s: resource %q defined twice", posString(r.Pos, res.Path), r.Name)
		}
		x := &Res{Name: r.Name, Type: ti, Index: len(s.res), src: r, vals: make([]attrValue, len(ti.attrs))}
		for _, a := range ti.attrs {
			if a.def != nil && a.def.Default != nil && a.def.Default.Kind != KindNull {
				v := &x.vals[ti.attrIdx[a.name]]
				v.initial, v.hasInit = a.def.Default.Text, true
			}
		}
		for _, v := range r.Attributes {
			k, ok := ti.attrIdx[v.Name]
			if !ok {
				k = ti.addAttr(v.Name)
				x.grow()
			}
			if v.Kind == KindNull {
				continue
			}
			x.vals[k].initial, x.vals[k].hasInit = v.Text, true
		}
		for k := range x.vals {
			x.vals[k].cur, x.vals[k].set = x.vals[k].initial, x.vals[k].hasInit
		}
		s.res = append(s.res, x)
		s.byName[r.Name] = x
		s.byType[r.Type] = append(s.byType[r.Type], x)
		ti.res = append(ti.res, x)
	}
	for _, x := range s.res {
		x.grow() // attributes that later resources of the type declared
	}
	return s, nil
}

func posString(p Pos, file string) string {
	if p.File != "" {
		file = p.File
	}
	if p.Line > 0 {
		return fmt.Sprintf("%s:%d:%d", file, p.Line, p.Col)
	}
	return file
}

// addAttr declares an attribute the header does not (the trace sets it).
func (t *typeInfo) addAttr(name string) int {
	t.attrIdx[name] = len(t.attrs)
	t.attrs = append(t.attrs, &attrInfo{name: name})
	t.ver = append(t.ver, 0)
	return len(t.attrs) - 1
}

func (r *Res) grow() {
	for len(r.vals) < len(r.Type.attrs) {
		r.vals = append(r.vals, attrValue{})
	}
}

// TypeNames lists the resource types, sorted.
func (s *State) TypeNames() []string {
	names := make([]string, 0, len(s.types))
	for n := range s.types {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Resources returns every resource in resource file order.
func (s *State) Resources() []*Res { return s.res }

// Lookup returns a resource by name.
func (s *State) Lookup(name string) *Res { return s.byName[name] }

// Type returns a resource type by name.
func (s *State) Type(name string) *typeInfo { return s.types[name] }

// IsType reports whether name is a resource type.
func (s *State) IsType(name string) bool { return s.types[name] != nil }

// Attr returns the number of an attribute of r's type, declaring it when
// the header does not (declared reports whether the header did).
func (s *State) Attr(r *Res, name string) (k int, declared bool) {
	k, ok := r.Type.attrIdx[name]
	if !ok {
		s.ver++
		k = r.Type.addAttr(name)
		for _, x := range s.byType[r.Type.def.Name] {
			x.grow()
		}
		return k, false
	}
	return k, r.Type.attrs[k].def != nil
}

// AttrName returns the name of attribute k of r's type.
func (r *Res) AttrName(k int) string { return r.Type.attrs[k].name }

// Static reports whether attribute k is Static (fixed by the resource
// file).
func (r *Res) Static(k int) bool { return r.Type.attrs[k].static }

// Initial returns the value of attribute k before the trace changed it:
// the resource file's, else the header's Default.
func (r *Res) Initial(k int) (string, bool) { return r.vals[k].initial, r.vals[k].hasInit }

// Value returns the current value of attribute k ("null" when it has
// none, as TLV reads it).
func (r *Res) Value(k int) string {
	if !r.vals[k].set {
		return "null"
	}
	return r.vals[k].cur
}

// ValueAt returns the value attribute k had at ns: the last change made
// (in line order) whose time is not after ns.
func (s *State) ValueAt(r *Res, k int, ns int64) string {
	v := &r.vals[k]
	if v.n == 0 {
		return r.Value(k)
	}
	last := v.hist[(v.n-1)%historyLen]
	if last.ns <= ns {
		return v.cur
	}
	kept := min(v.n, historyLen)
	for i := 2; i <= kept; i++ {
		c := v.hist[(v.n-i)%historyLen]
		if c.ns <= ns {
			return c.value
		}
	}
	if v.n > historyLen {
		s.HistoryMisses++
		return v.hist[(v.n-kept)%historyLen].value
	}
	if !v.hasInit {
		return "null"
	}
	return v.initial
}

// Set changes attribute k of r at ns.
func (s *State) Set(r *Res, k int, ns int64, value string) {
	v := &r.vals[k]
	v.cur, v.set = value, true
	v.hist[v.n%historyLen] = change{ns, value}
	v.n++
	r.Type.ver[k]++
	s.ver++
}

// AttrValue returns an attribute by name: the special names _name and
// _type, or an attribute of the type (at ns when at is true).
func (s *State) AttrValue(r *Res, name string, ns int64, at bool) (string, error) {
	switch name {
	case "_name", "_displayName":
		return r.Name, nil
	case "_type":
		return r.Type.def.Name, nil
	}
	k, ok := r.Type.attrIdx[name]
	if !ok {
		return "", fmt.Errorf("resource type %s has no attribute %q", r.Type.def.Name, name)
	}
	if at {
		return s.ValueAt(r, k, ns), nil
	}
	return r.Value(k), nil
}

// Select returns the resources a standard-format resource designates:
// a resource by name; every resource of a type; or, with a condition,
// every resource of the type whose attributes satisfy it (at ns when at
// is true, else now). The result is in resource file order; buf is reused.
func (s *State) Select(buf []*Res, name string, cond *Expr, ns int64, at bool) ([]*Res, error) {
	buf = buf[:0]
	if cond == nil {
		if r := s.byName[name]; r != nil {
			return append(buf, r), nil
		}
		if t := s.types[name]; t != nil {
			return append(buf, s.byType[name]...), nil
		}
		return buf, fmt.Errorf("no resource or resource type named %q", name)
	}
	// A condition is parsed from one text: it is always of the same
	// name, whose type it keeps.
	t := cond.selT
	if t == nil || cond.selName != name {
		if t = s.types[name]; t != nil {
			cond.selT, cond.selName = t, name
		}
	}
	if t == nil {
		if s.byName[name] != nil {
			return buf, fmt.Errorf("%q is a resource, not a resource type: a condition selects resources of a type", name)
		}
		return buf, fmt.Errorf("unknown resource type %q", name)
	}
	if cond.checkedT != t { // a type's attributes are only ever added to: checked once
		for _, a := range cond.Attributes() {
			if _, ok := t.attrIdx[a]; !ok && a != "_name" && a != "_type" {
				return buf, fmt.Errorf("resource type %s has no attribute %q", name, a)
			}
		}
		cond.checkedT = t
	}
	if !at && cond.sel.valid(t) {
		return append(buf, cond.sel.res...), nil
	}
	for _, r := range t.res {
		if cond.evalRes(s, r, ns, at) {
			buf = append(buf, r)
		}
	}
	if !at {
		cond.sel.keep(cond, t, buf)
	}
	return buf, nil
}

// selMemo is the last selection of the resources of a type that satisfy
// a condition now (not at a time): still the same while none of the
// attributes the condition reads changed on a resource of the type.
// Type(id==3) reads a Static attribute: it is selected once;
// Task(state==RUNNING) again after each change of a task's state.
type selMemo struct {
	t    *typeInfo
	deps []int    // the attributes read
	ver  []uint64 // their change counts then
	res  []*Res
}

func (m *selMemo) valid(t *typeInfo) bool {
	if m.t != t {
		return false
	}
	for i, k := range m.deps {
		if t.ver[k] != m.ver[i] {
			return false
		}
	}
	return true
}

func (m *selMemo) keep(cond *Expr, t *typeInfo, res []*Res) {
	if m.t != t {
		m.t, m.deps = t, m.deps[:0]
		var walk func(*Expr)
		walk = func(e *Expr) {
			switch e.kind {
			case exCmp:
				if k := e.attrIndex(t); k >= 0 && !slices.Contains(m.deps, k) {
					m.deps = append(m.deps, k)
				}
			case exNot:
				walk(e.x)
			case exAnd, exOr:
				walk(e.x)
				walk(e.y)
			}
		}
		walk(cond)
		m.ver = make([]uint64, len(m.deps))
	}
	for i, k := range m.deps {
		m.ver[i] = t.ver[k]
	}
	m.res = append(m.res[:0], res...)
}
