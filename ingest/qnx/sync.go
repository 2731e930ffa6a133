package qnx

import (
	"strconv"

	"github.com/traceduck/traceduck/schema"
)

// Waits for sync objects (docs/semantics.md, "Resources: holds and
// waits"): a thread that blocks in SYNC_MUTEX_LOCK, SYNC_SEM_WAIT or
// SYNC_CONDVAR_WAIT waits for the mutex, semaphore or condition variable
// the call's sync_p names, and the run's resource model
// (schema.ResourceTracker) gets the same verbs as from any format:
//
//  1. KER_CALL of one of them by the CPU's thread: the thread requests the
//     object (the object "KIND ADDR pid PID": sync_p is an address in the
//     thread's process, so objects are per process; kind mutex, semaphore
//     or condvar; native_id the address, pid and parent the process).
//  2. The thread's state becomes the call's blocked state (THMUTEX,
//     THSEM, THCONDVAR): its request blocked, the wait starts at the call.
//  3. It leaves that state (THREADY, ...): the kernel woke it, the wait
//     ends there.
//  4. KER_EXIT of the call: ret_val 0 (or none printed) says it got the
//     object (assigned), another value that it did not (gave up: a
//     timeout, an interrupted wait). A call that did not block is no wait.
//  5. THDESTROY of a thread that waits: its wait ends there, given up.
//
// A QNX mutex is locked in user space while nobody contends for it: the
// trace shows a lock only when it blocks, so no hold is known (the objects
// are declared unowned: waits, no holds). After a condition variable's
// wait is woken, the kernel takes the mutex again for the thread (a
// MUTEX state inside SYNC_CONDVAR_WAIT): that is not followed as a wait
// of its own.
type syncCall struct {
	num     int
	state   string // the blocked state, THMUTEX ...
	obj     schema.ObjectID
	blocked bool
	waited  bool
}

type syncKey struct {
	pid  int64
	addr uint64
}

var syncCalls = map[string]struct{ kind, state string }{
	"SYNC_MUTEX_LOCK":   {"mutex", "THMUTEX"},
	"SYNC_SEM_WAIT":     {"semaphore", "THSEM"},
	"SYNC_CONDVAR_WAIT": {"condvar", "THCONDVAR"},
}

// maxSyncObjects bounds the sync objects made from the addresses of one
// trace: past it, waits on others are not followed (one warning).
const maxSyncObjects = 1 << 16

// syncKernel applies a KER_CALL or KER_EXIT of thread th (the CPU's
// thread) to its waits.
func (m *machine) syncKernel(e *event, th *thread, class, call []byte, num int, ts int64, seq schema.Seq) error {
	if th == nil {
		return nil
	}
	res := m.w.Resources()
	switch string(class) {
	case "KER_CALL":
		if th.sync != nil && th.sync.waited {
			// a call before the last returned (its KER_EXIT lost)
			if err := res.GiveUp(th.sync.obj, th.id, schema.NoInstance, ts, seq); err != nil {
				return err
			}
		}
		th.sync = nil
		c, ok := syncCalls[string(call)]
		if !ok {
			return nil
		}
		addr, ok := hexField(e, "sync_p")
		if !ok {
			m.diagOnce("sync-noaddr", schema.Info, e.pos, "%s without sync_p: the object it waits for is not known, no wait is followed", call)
			return nil
		}
		obj := m.syncObject(c.kind, th.key.pid, addr, e.pos)
		if obj == schema.NoObject {
			return nil
		}
		th.sync = &syncCall{num: num, state: c.state, obj: obj}
		return res.Request(obj, th.id, schema.NoInstance, ts, seq)
	case "KER_EXIT":
		sc := th.sync
		if sc == nil || sc.num != num {
			return nil
		}
		th.sync = nil
		if !sc.waited {
			return nil
		}
		if v, ok := intField(e, "ret_val"); ok && v != 0 {
			return res.GiveUp(sc.obj, th.id, schema.NoInstance, ts, seq)
		}
		return res.Assign(sc.obj, th.id, schema.NoInstance, ts, seq)
	}
	return nil
}

// syncState applies a THREAD event of th to its wait.
func (m *machine) syncState(th *thread, name []byte, ts int64, seq schema.Seq) error {
	sc := th.sync
	if sc == nil {
		return nil
	}
	res := m.w.Resources()
	switch {
	case string(name) == "THDESTROY":
		th.sync = nil
		if sc.waited {
			return res.GiveUp(sc.obj, th.id, schema.NoInstance, ts, seq)
		}
	case string(name) == "THCREATE":
	case string(name) == sc.state:
		if !sc.blocked {
			sc.blocked, sc.waited = true, true
			return res.Wait(sc.obj, th.id, schema.NoInstance, ts, seq)
		}
	case sc.blocked:
		sc.blocked = false
		return res.Woken(sc.obj, th.id, ts, seq)
	}
	return nil
}

// syncObject is the sync object at addr in process pid, made on first
// use (NoObject past maxSyncObjects).
func (m *machine) syncObject(kind string, pid int64, addr uint64, pos int64) schema.ObjectID {
	k := syncKey{pid, addr}
	if o, ok := m.syncObjs[k]; ok {
		return o
	}
	if len(m.syncObjs) >= maxSyncObjects {
		m.diagOnce("sync-many", schema.Warning, pos, "more than %d sync objects: the waits for the others are not followed", maxSyncObjects)
		return schema.NoObject
	}
	o := m.w.NewObject(kind, kind+" "+strconv.FormatUint(addr, 16)+" pid "+strconv.FormatInt(pid, 10))
	m.w.SetNativeID(o, int64(addr))
	m.w.SetPID(o, pid)
	m.w.SetParent(o, m.process(pid).id)
	m.w.Resources().Declare(o, schema.ResourceSpec{Kind: kind, Unowned: true})
	if m.syncObjs == nil {
		m.syncObjs = make(map[syncKey]schema.ObjectID)
	}
	m.syncObjs[k] = o
	return o
}
