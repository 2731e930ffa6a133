package tlv

import (
	"strconv"
	"strings"

	"github.com/traceduck/traceduck/schema"
)

// waitModel turns the calls in which resources wait for kernel objects
// (a type's key Waits, README.md "Waits for kernel objects") into the
// run's resource model (schema.ResourceTracker), the same for any rule
// set:
//
//  1. Enter of a call the key lists: the resource requests the object
//     the call's arguments number (OBJECT=N: the object "KIND N", made
//     on first use, with no owner: a TOPPERS semaphore, event flag or
//     data queue is given by whoever signals it).
//  2. The resource's attribute (state) takes a Blocked value during the
//     call: its request blocked, a wait starts at the request.
//  3. It leaves the Blocked values: the kernel woke it (Woken); the wait
//     ends there.
//  4. Leave of the call: its arguments say whether it got the object
//     (Granted, ercd=0: assigned) or not (gave up). A call that never
//     blocked is no wait.
//
// A wait whose call began before the log, or whose call's arguments name
// no object, is not known: no row (an info diagnostic for the second).
type waitModel struct {
	s        *tableSink
	res      *schema.ResourceTracker
	types    []*waitType // by type index
	haveType []bool
	objs     map[string]schema.ObjectID // "KIND N" -> object
	calls    map[*Res]*waitCall         // the call each resource is in
}

type waitType struct {
	def     *WaitsDef
	attr    int // the attribute that says blocked; -1 when the type has none
	blocked map[string]bool
	calls   map[string]*WaitCall
}

type waitCall struct {
	call    *WaitCall
	obj     schema.ObjectID
	blocked bool // the resource is blocked now
	waited  bool // it blocked during the call
}

// maxWaitObjects bounds the kernel objects the model makes from the
// numbers in a log: past it, calls on others are not followed (one
// warning). The resource model bounds its own tables.
const maxWaitObjects = 1 << 16

func newWaitModel(s *tableSink) *waitModel {
	return &waitModel{s: s, objs: map[string]schema.ObjectID{}, calls: map[*Res]*waitCall{}}
}

func (m *waitModel) typ(t *typeInfo) *waitType {
	for len(m.types) <= t.index {
		m.types, m.haveType = append(m.types, nil), append(m.haveType, false)
	}
	if m.haveType[t.index] {
		return m.types[t.index]
	}
	var wt *waitType
	if d := t.def.Waits; d != nil {
		wt = &waitType{def: d, attr: -1, blocked: map[string]bool{}, calls: map[string]*WaitCall{}}
		attr := d.Attribute
		if attr == "" {
			attr = "state"
		}
		if k, ok := t.attrIdx[attr]; ok {
			wt.attr = k
		}
		for _, v := range d.Blocked {
			wt.blocked[v] = true
		}
		for i := range d.Calls {
			wt.calls[d.Calls[i].Name] = &d.Calls[i]
		}
	}
	m.types[t.index], m.haveType[t.index] = wt, true
	return wt
}

// event applies one event of the standard format, written as seq.
func (m *waitModel) event(e *Event, seq schema.Seq) error {
	wt := m.typ(e.Res.Type)
	if wt == nil {
		return nil
	}
	if m.res == nil {
		m.res = m.s.w.Resources()
	}
	actor := m.s.objs[e.Res.Index]
	ts := e.Time.NS
	c := m.calls[e.Res]
	switch {
	case e.Attr >= 0:
		if e.Attr != wt.attr || c == nil {
			return nil
		}
		blocked := wt.blocked[e.Value]
		switch {
		case blocked && !c.blocked:
			c.blocked, c.waited = true, true
			return m.res.Wait(c.obj, actor, schema.NoInstance, ts, seq)
		case !blocked && c.blocked:
			c.blocked = false
			return m.res.Woken(c.obj, actor, ts, seq)
		}
	case e.Behavior == wt.def.Enter && len(e.Args) > 0:
		call := wt.calls[strings.TrimSpace(e.Args[0])]
		if call == nil {
			return nil
		}
		delete(m.calls, e.Res)
		var args string
		if len(e.Args) > 1 {
			args = strings.Join(e.Args[1:], " ")
		}
		id, ok := argValue(args, call.Object)
		if !ok {
			m.s.Note(schema.Info, "\x00waitnoobj "+call.Name, e.Src,
				"a call "+call.Name+" whose arguments name no "+call.Object+": no wait is followed (the object it waits for is not known)")
			return nil
		}
		obj := m.object(call.Kind, id, e.Src)
		if obj == schema.NoObject {
			return nil
		}
		m.calls[e.Res] = &waitCall{call: call, obj: obj}
		return m.res.Request(obj, actor, schema.NoInstance, ts, seq)
	case e.Behavior == wt.def.Leave && len(e.Args) > 0:
		if c == nil || strings.TrimSpace(e.Args[0]) != c.call.Name {
			return nil
		}
		delete(m.calls, e.Res)
		if !c.waited {
			return nil
		}
		var args string
		if len(e.Args) > 1 {
			args = strings.Join(e.Args[1:], " ")
		}
		if hasArg(args, wt.def.Granted) {
			return m.res.Assign(c.obj, actor, schema.NoInstance, ts, seq)
		}
		return m.res.GiveUp(c.obj, actor, schema.NoInstance, ts, seq)
	}
	return nil
}

// object is the kernel object KIND N, made (and declared unowned) on
// first use; NoObject past maxWaitObjects.
func (m *waitModel) object(kind, id string, src int64) schema.ObjectID {
	name := kind + " " + id
	if o, ok := m.objs[name]; ok {
		return o
	}
	if len(m.objs) >= maxWaitObjects {
		m.s.Note(schema.Warning, "\x00waitobjects", src, "more kernel objects named in waiting calls than traceduck follows ("+strconv.Itoa(maxWaitObjects)+"): the waits for the others are not")
		return schema.NoObject
	}
	o := m.s.w.Object(kind, name)
	if id, err := strconv.ParseInt(id, 10, 64); err == nil {
		m.s.w.SetNativeID(o, id)
	}
	m.res.Declare(o, schema.ResourceSpec{Kind: kind, Unowned: true})
	m.objs[name] = o
	return o
}

// argValue finds NAME=VALUE among a call's arguments as the kernel
// printed them ("semid=2.", "flgid=1 waiptn=1."): words split at blanks
// and commas, a final period dropped.
func argValue(args, name string) (string, bool) {
	for _, w := range strings.FieldsFunc(args, func(r rune) bool { return r == ' ' || r == '\t' || r == ',' }) {
		w = strings.TrimSuffix(w, ".")
		if k, v, ok := strings.Cut(w, "="); ok && k == name && v != "" {
			return v, true
		}
	}
	return "", false
}

// hasArg reports whether a call's arguments hold the word want
// ("ercd=0"), a final period dropped.
func hasArg(args, want string) bool {
	for _, w := range strings.FieldsFunc(args, func(r rune) bool { return r == ' ' || r == '\t' || r == ',' }) {
		if strings.TrimSuffix(w, ".") == want {
			return true
		}
	}
	return false
}
