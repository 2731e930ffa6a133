package recount

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// BTF is what a BTF trace says, counted from its raw lines with
// plain string splitting and the seed's process table, independently of
// the ingester. Durations are in ns; only complete intervals count (one
// that is still open at the last line is left out, as the views leave out
// truncated ones).
type BTF struct {
	Events  int64
	Actions map[string]int64 // "TYPE action" -> events
	// Running is the time each process (task or ISR, by name) spent
	// running: from start, resume or run until preempt, terminate, poll,
	// wait or park.
	Running map[string]int64
	// Held is, per core, the time each holder held it ("idle": none),
	// from the core's first appearance: a process holds its core from
	// start, resume, run or poll_parking until preempt, terminate, wait or
	// park (a polling process keeps it: the seed's active waiting); an ISR
	// that starts over what runs nests over it until it ends.
	Held map[string]map[string]int64
	// Busy is, per core, the time a holder other than an idle task held it.
	Busy map[string]int64
	// Latency is, per process, the waits for a core (count, sum ns): from
	// activate, preempt, release or release_parking to start or resume.
	Latency map[string]Sum
	// Response is, per process, the instances seen from activate to
	// terminate (count, sum ns of terminate - activate).
	Response map[string]Sum
	// CoreSaysBusy is, per core, the busy time TA Simulator's own core
	// actions tell (empty when the trace has none): busy from execute,
	// execute_idle, execute_waiting, and through wait_postexecution (the
	// core waits actively), until idle or idle_execution.
	CoreSaysBusy map[string]int64
	// Holds and Waits are, per "semaphore process" pair, the complete
	// holds of a semaphore (from assigned to released) and the complete
	// waits for one (from the requestsemaphore or exclusivesemaphore
	// before a waiting, else the waiting, to the next assigned), counted
	// from the process-side semaphore lines (source: the process,
	// target: the semaphore). OpenHolds and OpenWaits count those cut by
	// the start or the end of the trace: a released with no assigned
	// before it, an assigned or waiting with no end after it. Waits also
	// holds, per "event process", the complete waits for an EVENT: from
	// the process's wait_event to the set_event naming it, when its wait
	// action (running -> waiting) came between them, counted at its
	// clear_event; OpenWaits counts those the end cuts.
	//
	// The FreeRTOS BTF logger's mutexes count too (key "mutex 0xADDR
	// task"): its kernel hooks are lines "t,Core_c,0,STI,mutex,0,trigger,
	// take|give 0xADDR" whose actor is the task running on core c; a hold
	// is from a take to the give of the same task, the give right after
	// "create" (the new mutex's initialisation) is none; a wait is from a
	// "STI,task,...,priority_inherit NAME[N] pri:P" (the running task
	// blocks on the mutex that task N holds) to the waiter's take.
	Holds, Waits         map[string]Sum
	OpenHolds, OpenWaits int64
	// Inherits counts the priority_inherit lines; MiddleRuns the times a
	// task other than the waiter and the holder, created with a priority
	// (create pri:N) strictly between the holder's and the waiter's,
	// started or resumed while a waiter waited for a mutex (the middle
	// task of a priority inversion), per "mutex waiter".
	Inherits   int64
	MiddleRuns map[string]int64
}

// freeRTOSTask is the logger's task prefix: "[core/number]NAME" or
// "(number)NAME".
var freeRTOSTask = regexp.MustCompile(`^(?:\[\d+/0*(\d+)\]|\(0*(\d+)\))(.*)$`)

// btfIdle is the idle task of the RTOSes whose BTF traces we have:
// FreeRTOS's IDLE (IDLE<core> in an SMP build), with the BTF logger's
// "(number)" or "[core/number]" prefix.
var btfIdle = regexp.MustCompile(`^(\(\d+\)|\[\d+/\d+\])?IDLE\d*$`)

// btfPrefix gives the core of a process event: its source when it is a core
// (the seed: cores act on processes), else the core the FreeRTOS logger's
// "[core/number]" prefix of the target names, else the only core of the
// trace.
var btfPrefix = regexp.MustCompile(`^\[(\d+)/\d+\]`)

// ReadBTF reads a BTF file's raw lines and returns its recount.
func ReadBTF(path string) (BTF, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return BTF{}, err
	}
	lines := strings.Split(strings.ReplaceAll(string(data), "\r", ""), "\n")
	r := BTF{Actions: map[string]int64{}, Running: map[string]int64{}, Held: map[string]map[string]int64{},
		Busy: map[string]int64{}, Latency: map[string]Sum{}, Response: map[string]Sum{}, CoreSaysBusy: map[string]int64{},
		Holds: map[string]Sum{}, Waits: map[string]Sum{}, MiddleRuns: map[string]int64{}}

	type inst struct{ name, n string }
	type core struct {
		known  bool
		since  int64
		holder *inst  // the task that holds it
		isrs   []inst // ISRs nested over it, innermost last
	}
	cores := map[string]*core{}
	var coreNames []string
	// Pass 1: the cores (names Core_<n>, as all our traces write them).
	for _, l := range lines {
		if l == "" || l[0] == '#' {
			continue
		}
		f := strings.Split(l, ",")
		for _, i := range []int{1, 4} {
			if i < len(f) {
				name := strings.TrimSpace(f[i])
				if strings.HasPrefix(name, "Core_") && cores[name] == nil {
					cores[name] = &core{}
					coreNames = append(coreNames, name)
				}
			}
		}
	}
	shown := func(c *core) string {
		switch {
		case len(c.isrs) > 0:
			return c.isrs[len(c.isrs)-1].name
		case c.holder != nil:
			return c.holder.name
		}
		return "idle"
	}
	// account closes core c's current interval at ts.
	account := func(name string, c *core, ts int64) {
		if !c.known {
			c.known, c.since = true, ts
			return
		}
		h := shown(c)
		if r.Held[name] == nil {
			r.Held[name] = map[string]int64{}
		}
		r.Held[name][h] += ts - c.since
		if h != "idle" && !btfIdle.MatchString(h) {
			r.Busy[name] += ts - c.since
		}
		c.since = ts
	}

	mul := int64(1)
	coreBusySince := map[string]int64{} // by TA's core actions
	runSince := map[inst]int64{}
	readySince := map[inst]int64{}
	activated := map[inst]int64{}
	// the semaphores: per "semaphore process", since when it holds (and
	// how many assignments), since when it waits, its pending request
	type semUse struct {
		holds            int
		heldSince        int64
		waiting          bool
		waitSince        int64
		requested        bool
		requestedAt      int64
		seenHold, seenWt bool
	}
	sems := map[string]*semUse{}
	// the events: per process instance ("name instance"), the event it
	// asked for, when, whether its wait action blocked it, when it was set
	type evUse struct {
		event, process string
		at             int64
		blocked, woken bool
		wokenAt        int64
	}
	evs := map[string]*evUse{}
	freshMutex := map[string]bool{}
	created := map[string]int64{} // a task's priority from its create note
	type waitOn struct{ key, waiter, holder string }
	var mutexWaits []waitOn // open waits for a mutex
	// running is the task or ISR on core c, "" for none.
	running := func(c string) string {
		if o := cores[c]; o != nil {
			if len(o.isrs) > 0 {
				return o.isrs[len(o.isrs)-1].name
			}
			if o.holder != nil {
				return o.holder.name
			}
		}
		return ""
	}
	use := func(key string) *semUse {
		u := sems[key]
		if u == nil {
			u = &semUse{}
			sems[key] = u
		}
		return u
	}
	var last int64
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "#timeScale") {
			switch u := strings.TrimSpace(strings.TrimPrefix(l, "#timeScale")); u {
			case "ns":
				mul = 1
			case "us":
				mul = 1000
			case "ms":
				mul = 1000000
			default:
				return r, fmt.Errorf("%s: time scale %q: the recount knows ns, us, ms", path, u)
			}
		}
		if l == "" || l[0] == '#' {
			continue
		}
		f := strings.SplitN(l, ",", 8)
		if len(f) < 7 {
			return r, fmt.Errorf("%s: %q: fewer than 7 fields", path, l)
		}
		for i := range f {
			f[i] = strings.TrimSpace(f[i])
		}
		ts, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return r, fmt.Errorf("%s: %q: %v", path, l, err)
		}
		ts *= mul
		if ts < last {
			return r, fmt.Errorf("%s: %q: time goes backwards, which the recount does not follow", path, l)
		}
		last = ts
		src, typ, tgt, tgtInst, act := f[1], f[3], f[4], f[5], f[6]
		r.Events++
		r.Actions[typ+" "+act]++
		for _, name := range []string{src, tgt} {
			if c := cores[name]; c != nil && !c.known {
				account(name, c, ts)
			}
		}
		if typ == "C" && src == tgt {
			switch act {
			case "execute", "execute_idle", "execute_waiting":
				if _, busy := coreBusySince[tgt]; !busy {
					coreBusySince[tgt] = ts
				}
			case "idle", "idle_execution":
				if s, busy := coreBusySince[tgt]; busy {
					r.CoreSaysBusy[tgt] += ts - s
					delete(coreBusySince, tgt)
				}
			}
		}
		if typ == "EVENT" {
			srcKey := src + " " + f[2]
			switch act {
			case "wait_event":
				evs[srcKey] = &evUse{event: tgt, process: src, at: ts}
			case "set_event":
				if len(f) == 8 {
					for _, u := range evs {
						if u.process == f[7] && u.event == tgt && u.blocked && !u.woken {
							u.woken, u.wokenAt = true, ts
						}
					}
				}
			case "clear_event":
				if u := evs[srcKey]; u != nil {
					if u.blocked {
						end := ts // not woken in the trace: it ends here
						if u.woken {
							end = u.wokenAt
						}
						addSum(r.Waits, tgt+" "+src, end-u.at)
					}
					delete(evs, srcKey)
				}
			}
		}
		if typ == "T" && act == "wait" {
			if u := evs[tgt+" "+tgtInst]; u != nil {
				u.blocked = true
			}
		}
		if typ == "SEM" && src != tgt {
			key := tgt + " " + src
			u := sems[key]
			if u == nil {
				u = &semUse{}
				sems[key] = u
			}
			switch act {
			case "requestsemaphore", "exclusivesemaphore":
				if !u.waiting {
					u.requested, u.requestedAt = true, ts
				}
			case "waiting":
				if !u.waiting {
					u.waiting, u.seenWt, u.waitSince = true, true, ts
					if u.requested {
						u.waitSince = u.requestedAt
					}
					u.requested = false
				}
			case "assigned":
				u.requested = false
				if u.waiting {
					addSum(r.Waits, key, ts-u.waitSince)
					u.waiting = false
				}
				u.seenHold, u.seenWt = true, true
				if u.holds == 0 {
					u.heldSince = ts
				}
				u.holds++
			case "released":
				switch {
				case u.holds == 1:
					addSum(r.Holds, key, ts-u.heldSince)
					u.holds = 0
				case u.holds > 1:
					u.holds--
				case !u.seenHold:
					u.seenHold = true
					r.OpenHolds++
				}
			}
		}
		note := ""
		if len(f) > 7 {
			note = f[7]
		}
		if typ == "STI" && act == "trigger" && (tgt == "mutex" || tgt == "task") {
			w := strings.Fields(note)
			actor := running(src)
			switch {
			case tgt == "mutex" && len(w) == 2 && w[0] == "create":
				freshMutex[w[1]] = true
			case tgt == "mutex" && len(w) == 2 && w[0] == "take" && actor != "":
				delete(freshMutex, w[1])
				key := "mutex " + w[1] + " " + actor
				u := use(key)
				if u.waiting {
					addSum(r.Waits, key, ts-u.waitSince)
					u.waiting = false
					for i, mw := range mutexWaits {
						if mw.key == key {
							mutexWaits = append(mutexWaits[:i], mutexWaits[i+1:]...)
							break
						}
					}
				}
				u.seenHold, u.seenWt = true, true
				if u.holds == 0 {
					u.heldSince = ts
				}
				u.holds++
			case tgt == "mutex" && len(w) == 2 && w[0] == "give" && actor != "":
				if freshMutex[w[1]] {
					delete(freshMutex, w[1]) // the create's own give
					break
				}
				key := "mutex " + w[1] + " " + actor
				u := use(key)
				switch {
				case u.holds == 1:
					addSum(r.Holds, key, ts-u.heldSince)
					u.holds = 0
				case u.holds > 1:
					u.holds--
				case !u.seenHold:
					u.seenHold = true
					r.OpenHolds++
				}
			case tgt == "task" && len(w) == 3 && w[0] == "priority_inherit" && actor != "":
				r.Inherits++
				// the mutex the named task holds
				var held []string
				for key, u := range sems {
					parts := strings.SplitN(key, " ", 3)
					if parts[0] != "mutex" || u.holds == 0 {
						continue
					}
					if m := freeRTOSTask.FindStringSubmatch(parts[2]); m != nil && m[3]+"["+m[1]+m[2]+"]" == w[1] {
						held = append(held, parts[1]+" "+parts[2])
					}
				}
				if len(held) == 1 {
					addr, holder := strings.SplitN(held[0], " ", 2)[0], strings.SplitN(held[0], " ", 2)[1]
					key := "mutex " + addr + " " + actor
					u := use(key)
					if !u.waiting {
						u.waiting, u.seenWt, u.waitSince = true, true, ts
						mutexWaits = append(mutexWaits, waitOn{key, actor, holder})
					}
				}
			}
		}
		if typ != "T" && typ != "I" {
			continue
		}
		k := inst{tgt, tgtInst}
		if typ == "T" && strings.HasPrefix(note, "create pri:") {
			if p, err := strconv.ParseInt(strings.TrimPrefix(note, "create pri:"), 10, 64); err == nil {
				created[tgt] = p
			}
		}
		if act == "start" || act == "resume" {
			for _, mw := range mutexWaits {
				lo, okL := created[mw.holder]
				hi, okH := created[mw.waiter]
				if p, ok := created[tgt]; ok && okL && okH && tgt != mw.waiter && tgt != mw.holder && p > lo && p < hi {
					r.MiddleRuns[mw.key]++
				}
			}
		}

		// Running time, waits for a core, instances.
		switch act {
		case "start", "resume", "run":
			if s, ok := readySince[k]; ok && act != "run" {
				addSum(r.Latency, tgt, ts-s)
			}
			delete(readySince, k)
			runSince[k] = ts
		case "preempt", "terminate", "poll", "wait", "park":
			if s, ok := runSince[k]; ok {
				r.Running[tgt] += ts - s
			}
			delete(runSince, k)
		}
		switch act {
		case "activate", "preempt", "release", "release_parking":
			if _, ok := readySince[k]; !ok {
				readySince[k] = ts
			}
		case "poll_parking", "wait", "poll", "park", "terminate":
			delete(readySince, k)
		}
		switch act {
		case "activate":
			activated[k] = ts
		case "terminate":
			if a, ok := activated[k]; ok {
				addSum(r.Response, tgt, ts-a)
			}
			delete(activated, k)
		}

		// The core: only the actions that take or leave one need it.
		switch act {
		case "start", "resume", "run", "poll_parking", "preempt", "terminate", "wait", "park":
		default:
			continue
		}
		on := src
		if cores[on] == nil {
			if m := btfPrefix.FindStringSubmatch(tgt); m != nil && cores["Core_"+m[1]] != nil {
				on = "Core_" + m[1]
			} else if len(coreNames) == 1 {
				on = coreNames[0]
			} else {
				return r, fmt.Errorf("%s: %q: the recount cannot tell the core", path, l)
			}
		}
		switch act {
		case "start", "resume", "run", "poll_parking":
			c := cores[on]
			if typ == "I" {
				nested := false
				for _, i := range c.isrs {
					nested = nested || i == k
				}
				if !nested {
					account(on, c, ts)
					c.isrs = append(c.isrs, k)
				}
				continue
			}
			if c.holder != nil && *c.holder == k {
				continue
			}
			for _, name := range coreNames { // a task holds one core
				if o := cores[name]; o != c && o.holder != nil && *o.holder == k {
					account(name, o, ts)
					o.holder = nil
				}
			}
			account(on, c, ts)
			c.holder = &k
		case "preempt", "terminate", "wait", "park":
			for _, name := range coreNames { // it leaves the core it holds
				o := cores[name]
				if typ == "T" && o.holder != nil && *o.holder == k {
					account(name, o, ts)
					o.holder = nil
				}
				for i := len(o.isrs) - 1; typ == "I" && i >= 0; i-- {
					if o.isrs[i] == k {
						account(name, o, ts)
						o.isrs = o.isrs[:i]
						break
					}
				}
			}
		}
	}
	for _, u := range evs {
		if u.blocked {
			r.OpenWaits++
		}
	}
	for _, u := range sems {
		if u.holds > 0 {
			r.OpenHolds++
		}
		if u.waiting {
			r.OpenWaits++
		}
	}
	return r, nil
}

// BTFIdle tells the idle tasks of the RTOSes whose BTF traces we have.
func BTFIdle(holder string) bool { return btfIdle.MatchString(holder) }

// Answers are the recount's answers: BTF numbers its instances, so they
// are the recount's activate..terminate.
func (r BTF) Answers() Answers {
	a := Answers{CPUBusy: r.Busy, CPUHeld: map[Held]int64{}, Running: r.Running, Instances: r.Response, Latency: r.Latency, Holds: r.Holds, Waits: r.Waits}
	for c, hs := range r.Held {
		for h, ns := range hs {
			a.CPUHeld[Held{c, h, h != "idle" && !BTFIdle(h)}] += ns
		}
	}
	return a
}
