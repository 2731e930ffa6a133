package btf

import (
	"bytes"
	"strconv"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/schema"
)

// Priorities and the FreeRTOS BTF logger's kernel objects (README.md,
// "Priorities" and "FreeRTOS mutexes").
//
// A process event's note may carry its priority as a token pri:N (the
// FreeRTOS logger writes "create pri:N" when a task is created; traceduck's
// generator writes "pri:N" on a task's first activation): N is the task's
// base priority from then on. The logger writes its kernel hooks as
// triggers of stimuli named after the object's kind, from the core whose
// running task made the call:
//
//	t,Core_0,0,STI,task,0,trigger,set_priority PS[52] pri:4        base priority
//	t,Core_0,0,STI,task,0,trigger,priority_inherit Low[63] pri:4   the running task blocks on a mutex Low holds: Low runs at 4
//	t,Core_0,0,STI,task,0,trigger,priority_disinherit Low[63] pri:2 Low gave it back: it runs at 2
//	t,Core_0,0,STI,mutex,0,trigger,create|take|give|delete 0xADDR
//
// NAME[N] names the task numbered N (the logger's prefix "[c/000N]NAME" or
// "(000N)NAME"; a task with no such prefix by its name alone). FreeRTOS's
// numbers: larger is more urgent.

// freeRTOSKey is a task's name in the logger's kernel notes, NAME[N], from
// its entity name; "" when the name has no logger prefix.
func freeRTOSKey(name string) string {
	var num, rest string
	switch {
	case len(name) > 2 && name[0] == '[':
		slash, end := bytes.IndexByte([]byte(name), '/'), bytes.IndexByte([]byte(name), ']')
		if slash < 2 || end < slash+2 || !ingest.IsDigits([]byte(name[1:slash])) {
			return ""
		}
		num, rest = name[slash+1:end], name[end+1:]
	case len(name) > 2 && name[0] == '(':
		end := bytes.IndexByte([]byte(name), ')')
		if end < 2 {
			return ""
		}
		num, rest = name[1:end], name[end+1:]
	default:
		return ""
	}
	n, err := strconv.ParseUint(num, 10, 31)
	if err != nil || !ingest.IsDigits([]byte(num)) {
		return ""
	}
	return rest + "[" + strconv.FormatUint(n, 10) + "]"
}

// priToken finds "pri:N" (N a decimal integer, possibly negative) in a
// note, as a word of its own.
func priToken(note []byte) (int64, bool) {
	for i := 0; i+4 < len(note); i++ {
		if (i > 0 && note[i-1] != ' ') || !bytes.HasPrefix(note[i:], []byte("pri:")) {
			continue
		}
		j := i + 4
		k := j
		if k < len(note) && note[k] == '-' {
			k++
		}
		for k < len(note) && note[k] >= '0' && note[k] <= '9' {
			k++
		}
		if k == j || (note[j] == '-' && k == j+1) || (k < len(note) && note[k] != ' ') || k-j > 18 {
			continue
		}
		v, err := strconv.ParseInt(string(note[j:k]), 10, 64)
		if err == nil {
			return v, true
		}
	}
	return 0, false
}

// tasksNamed returns the process entities a kernel note's NAME[N] names.
func (p *parser) tasksNamed(key []byte) []*entity {
	if list := p.byKey[string(key)]; len(list) > 0 {
		return list
	}
	if i := bytes.LastIndexByte(key, '['); i > 0 && key[len(key)-1] == ']' {
		if e := p.ents[string(key[:i])]; e != nil && e.typ.isProcess() {
			return []*entity{e}
		}
	}
	if e := p.ents[string(key)]; e != nil && e.typ.isProcess() {
		return []*entity{e}
	}
	return nil
}

// mutexRow is what the reader knows of one FreeRTOS mutex.
type mutexRow struct {
	id     schema.ObjectID
	holder schema.ObjectID // NoObject: not held, as far as the trace told
	fresh  bool            // created, not taken since: its first give is the initialisation
}

// kernelNote applies a FreeRTOS logger note (a trigger of the stimulus
// task, mutex, sem or queue) on core c.
func (p *parser) kernelNote(stim *entity, note []byte, ts int64, seq schema.Seq, c *core, n int64) error {
	verb, arg := cutSpace(note)
	switch p.w.String(stim.name) {
	case "task":
		var pri int64
		key, rest := cutSpace(arg)
		if v, ok := priToken(rest); ok {
			pri = v
		} else {
			return nil
		}
		switch string(verb) {
		case "set_priority", "priority_inherit", "priority_disinherit":
		default:
			return nil
		}
		tasks := p.tasksNamed(key)
		if len(tasks) == 0 {
			p.findOnce(onceKey{kind: findNoTask, detail: p.w.SymBytes(verb)}, schema.Info, n, seq,
				"STI task %s names %s, a task the trace has not named: no priority", verb, key)
			return nil
		}
		pt := p.w.Priorities()
		for _, e := range tasks {
			var err error
			if string(verb) == "set_priority" {
				err = pt.Base(e.id, pri, ts, seq)
			} else {
				err = pt.Effective(e.id, pri, ts, seq)
			}
			if err != nil {
				return err
			}
		}
		if string(verb) == "priority_inherit" && len(p.mutexList) > 0 {
			return p.inheritWait(tasks, ts, seq, c, n)
		}
	case "mutex":
		if !isAddr(arg) {
			return nil
		}
		switch string(verb) {
		case "create":
			m := p.mutex(arg)
			m.fresh = true
		case "delete":
			if m := p.mutexes[string(arg)]; m != nil {
				m.fresh = false
			}
		case "take", "give":
			m := p.mutex(arg)
			actor := p.runningOn(c, n, seq, verb)
			if actor == schema.NoObject {
				return nil
			}
			res, inst := p.w.Resources(), p.instOf(actor)
			if string(verb) == "take" {
				m.fresh = false
				m.holder = actor
				return res.Assign(m.id, actor, inst, ts, seq)
			}
			if m.fresh && m.holder == schema.NoObject {
				m.fresh = false // xSemaphoreCreateMutex gives the new mutex once
				return nil
			}
			if err := res.Release(m.id, actor, inst, ts, seq); err != nil {
				return err
			}
			if m.holder == actor && res.Holds(m.id, actor) == 0 {
				m.holder = schema.NoObject
			}
		}
	}
	return nil
}

// inheritWait: the task running on c blocks on a mutex that the task
// priority_inherit names holds (FreeRTOS raises the holder's priority only
// then): its wait for that mutex starts; its take ends it. Not known when
// the holder holds no mutex or several, as far as the trace told.
func (p *parser) inheritWait(holders []*entity, ts int64, seq schema.Seq, c *core, n int64) error {
	waiter := p.runningOn(c, n, seq, []byte("priority_inherit"))
	if waiter == schema.NoObject {
		return nil
	}
	var found *mutexRow
	count := 0
	for _, m := range p.mutexList {
		for _, h := range holders {
			if m.holder == h.id {
				found = m
				count++
			}
		}
	}
	if count != 1 {
		p.findOnce(onceKey{kind: findInheritMutex}, schema.Info, n, seq,
			"priority_inherit names a task that holds %d mutexes as far as the trace told: the wait of the task that blocks is not known", count)
		return nil
	}
	return p.w.Resources().Wait(found.id, waiter, p.instOf(waiter), ts, seq)
}

// runningOn is the task or ISR that holds core c: the actor of a kernel
// hook the logger writes from the core.
func (p *parser) runningOn(c *core, n int64, seq schema.Seq, verb []byte) schema.ObjectID {
	var h schema.ObjectID = schema.NoObject
	if c != nil {
		h = p.cpus.Holder(c.cpu)
	}
	if h == schema.NoObject {
		p.findOnce(onceKey{kind: findNoActor, detail: p.w.SymBytes(verb)}, schema.Info, n, seq,
			"%s on a core that runs no task as far as the trace told: no actor, no hold or wait", verb)
	}
	return h
}

func (p *parser) instOf(o schema.ObjectID) int64 {
	if inst, ok := p.holding[o]; ok {
		return inst
	}
	return schema.NoInstance
}

func (p *parser) mutex(addr []byte) *mutexRow {
	if m := p.mutexes[string(addr)]; m != nil {
		return m
	}
	name := "mutex " + string(addr)
	m := &mutexRow{id: p.w.Object("mutex", name), holder: schema.NoObject}
	p.w.Resources().Declare(m.id, schema.ResourceSpec{Kind: "mutex"})
	p.mutexes[string(addr)] = m
	p.mutexList = append(p.mutexList, m)
	return m
}

// isAddr: 0x and 1 to 16 hex digits.
func isAddr(b []byte) bool {
	if len(b) < 3 || len(b) > 18 || b[0] != '0' || (b[1] != 'x' && b[1] != 'X') {
		return false
	}
	for _, c := range b[2:] {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// copyPriority gives the task entities first named by this event the
// priority their twins have: the SMP logger names a task that migrates
// with the other core's prefix ("[1/0078]PS" after "[0/0078]PS"), one
// task and so one priority.
func (p *parser) copyPriority(ts int64, seq schema.Seq) error {
	pt := p.w.Priorities()
	for _, e := range p.twins {
		for _, o := range p.byKey[freeRTOSKey(p.w.String(e.name))] {
			base, eff, hasBase, ok := pt.Priority(o.id)
			if o == e || !ok {
				continue
			}
			if hasBase {
				if err := pt.Base(e.id, base, ts, seq); err != nil {
					return err
				}
			}
			if err := pt.Effective(e.id, eff, ts, seq); err != nil {
				return err
			}
			break
		}
	}
	p.twins = p.twins[:0]
	return nil
}
