package recount

import (
	"bufio"
	"fmt"
	"math/big"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// QNX is what held the CPUs of a QNX trace, in ns, counting the
// holds that a later event ended (the one open at the end is cut):
// Busy and Idle per CPU (held by interrupts and threads; by procnto's
// idle threads), Holders per CPU ("pid/tid", "irq V", "none"), Running
// per thread ("pid/tid": its complete RUNNING intervals on any CPU).
// Entries of 0 ns are left out. Threads: every thread-state interval
// (those still open at the end truncated), IdleThreads: procnto's idle
// threads.
type QNX struct {
	Busy, Idle  map[int]int64
	Holders     map[int]map[string]int64
	Running     map[string]int64
	Threads     []Interval
	IdleThreads map[string]bool
	// Waits are the complete waits in SYNC_MUTEX_LOCK, SYNC_SEM_WAIT and
	// SYNC_CONDVAR_WAIT, per "KIND ADDR pid PID PID/TID" (KIND mutex,
	// semaphore, condvar; ADDR the call's sync_p in lowercase hex): from
	// the KER_CALL of a call in which the thread then blocks (THMUTEX,
	// THSEM, THCONDVAR) to the thread state event that ends the block,
	// when the call's KER_EXIT returns 0. OpenWaits counts those the end
	// of the trace cuts.
	Waits     map[string]Sum
	OpenWaits int
}

// NewQNX returns an empty count.
func NewQNX() QNX {
	return QNX{Busy: map[int]int64{}, Idle: map[int]int64{}, Holders: map[int]map[string]int64{}, Running: map[string]int64{}, IdleThreads: map[string]bool{},
		Waits: map[string]Sum{}}
}

// Hold counts ns of holder on cpu.
func (c QNX) Hold(cpu int, holder string, ns int64) {
	if ns == 0 {
		return
	}
	m := c.Holders[cpu]
	if m == nil {
		m = map[string]int64{}
		c.Holders[cpu] = m
	}
	m[holder] += ns
}

// Rows prints a count as sorted lines, for comparisons and messages.
func (c QNX) Rows() string {
	var out []string
	for cpu, ns := range c.Busy {
		if ns != 0 {
			out = append(out, fmt.Sprintf("busy cpu %d: %d", cpu, ns))
		}
	}
	for cpu, ns := range c.Idle {
		if ns != 0 {
			out = append(out, fmt.Sprintf("idle-thread cpu %d: %d", cpu, ns))
		}
	}
	for cpu, m := range c.Holders {
		for h, ns := range m {
			if ns != 0 {
				out = append(out, fmt.Sprintf("held cpu %d %s: %d", cpu, h, ns))
			}
		}
	}
	for th, ns := range c.Running {
		if ns != 0 {
			out = append(out, fmt.Sprintf("running %s: %d", th, ns))
		}
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// ReadQNXText recounts a traceprinter listing from its raw lines, the
// way docs/semantics.md says QNX's CPUs are held, without traceduck's
// code: the cycle count's high word from CONTROL TIME (and a low word
// going back by more than half its range as a wrap), ns =
// floor(cycles*1e9/TRACE_CYCLES_PER_SEC); THRUNNING makes the thread its
// CPU's (and leaves the CPU it held before, if another, with none), a
// thread leaving RUNNING keeps its CPU, THDESTROY leaves it with none;
// INT_ENTR..INT_EXIT nest over that; procnto's idle threads (pid 1, tid
// 1..TRACE_CPU_NUM) hold their CPU idle; a CPU is unknown until its first
// THRUNNING or INT_ENTR. A thread's state lasts from one TH<state> event
// to its next one (the same state on the same CPU continues it; THCREATE
// and THDESTROY end it; RUNNING is class running, READY ready, any
// other state blocked).
func ReadQNXText(path string) (QNX, error) {
	f, err := os.Open(path)
	if err != nil {
		return QNX{}, err
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		return QNX{}, err
	}
	evRE := regexp.MustCompile(`^t:0x([0-9a-fA-F]+)\s+CPU:(\d+)\s+([A-Z_]+)\s*:\s*(\S+)(.*)$`)
	hdrRE := regexp.MustCompile(`^\s*(TRACE_[A-Z_]+):: (.*)$`)
	fieldRE := func(k string) *regexp.Regexp { return regexp.MustCompile(`\b` + k + `:(0x[0-9a-fA-F]+|\d+)`) }
	pidRE, tidRE, msbRE := fieldRE("pid"), fieldRE("tid"), fieldRE("msb")
	cps, ncpu := big.NewInt(1_000_000_000), 0
	var hi uint64
	for _, l := range lines {
		if m := hdrRE.FindStringSubmatch(l); m != nil {
			switch m[1] {
			case "TRACE_CYCLES_PER_SEC":
				cps.SetString(m[2], 10)
			case "TRACE_CPU_NUM":
				ncpu, _ = strconv.Atoi(m[2])
			}
		}
		if m := evRE.FindStringSubmatch(l); m != nil && m[3] == "CONTROL" && m[4] == "TIME" {
			v, _ := strconv.ParseUint(strings.TrimPrefix(msbRE.FindStringSubmatch(m[5])[1], "0x"), 16, 64)
			hi = v
			break
		}
	}
	type state struct {
		name  string
		cpu   int
		start int64
	}
	type cpuState struct {
		known    bool
		thread   string
		ints     []string
		held     string
		since    int64
		heldIdle bool
	}
	c := NewQNX()
	cpus := map[int]*cpuState{}
	threadCPU := map[string]int{}
	states := map[string]state{}
	idle := func(th string) bool {
		pid, tid, _ := strings.Cut(th, "/")
		n, _ := strconv.Atoi(tid)
		return pid == "1" && n >= 1 && n <= max(ncpu, 1)
	}
	show := func(n int, now int64) {
		cs := cpus[n]
		h := cs.thread
		if k := len(cs.ints); k > 0 {
			h = cs.ints[k-1]
		}
		if h == "" {
			h = "none"
		}
		if cs.known && h == cs.held {
			return
		}
		if cs.known {
			d := now - cs.since
			c.Hold(n, cs.held, d)
			switch {
			case cs.held == "none":
			case idle(cs.held):
				c.Idle[n] += d
			default:
				c.Busy[n] += d
			}
		}
		cs.known, cs.held, cs.since = true, h, now
	}
	leave := func(th string, now int64) {
		if d, ok := threadCPU[th]; ok {
			delete(threadCPU, th)
			cpus[d].thread = ""
			show(d, now)
		}
	}
	endState := func(th string, now int64) {
		if s, ok := states[th]; ok {
			if s.name == "RUNNING" {
				c.Running[th] += now - s.start
			}
			c.Threads = append(c.Threads, Interval{th, qnxClass(s.name), s.start, now, false})
		}
		delete(states, th)
	}
	// the sync call each thread is in
	type syncWait struct {
		key, state, num string
		start, woken    int64
		blocked, waited bool
	}
	syncKinds := map[string][2]string{"SYNC_MUTEX_LOCK": {"mutex", "MUTEX"}, "SYNC_SEM_WAIT": {"semaphore", "SEM"}, "SYNC_CONDVAR_WAIT": {"condvar", "CONDVAR"}}
	syncRE, retRE := regexp.MustCompile(`\bsync_p:(?:0x)?([0-9a-fA-F]+)`), regexp.MustCompile(`\bret_val:(0x[0-9a-fA-F]+|-?\d+)`)
	syncs := map[string]*syncWait{}
	var last uint32
	var lastNow int64
	for k := 1; k <= max(ncpu, 1); k++ {
		c.IdleThreads["1/"+strconv.Itoa(k)] = true
	}
	for _, l := range lines {
		m := evRE.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		lo64, _ := strconv.ParseUint(m[1], 16, 64)
		lo := uint32(lo64)
		if m[3] == "CONTROL" && m[4] == "TIME" {
			v, _ := strconv.ParseUint(strings.TrimPrefix(msbRE.FindStringSubmatch(m[5])[1], "0x"), 16, 64)
			hi = v
		} else if lo < last && last-lo > 1<<31 {
			hi++
		}
		last = lo
		x := new(big.Int).SetUint64(hi<<32 | uint64(lo))
		now := x.Quo(x.Mul(x, big.NewInt(1_000_000_000)), cps).Int64()
		lastNow = now
		n, _ := strconv.Atoi(m[2])
		if cpus[n] == nil {
			cpus[n] = &cpuState{}
		}
		if th := cpus[n].thread; (m[3] == "KER_CALL" || m[3] == "KER_EXIT") && th != "" {
			call, num, _ := strings.Cut(m[4], "/")
			w := syncs[th]
			switch {
			case m[3] == "KER_CALL":
				delete(syncs, th)
				if k, ok := syncKinds[call]; ok {
					if a := syncRE.FindStringSubmatch(m[5]); a != nil {
						pid, _, _ := strings.Cut(th, "/")
						addr, _ := strconv.ParseUint(a[1], 16, 64)
						syncs[th] = &syncWait{key: k[0] + " " + strconv.FormatUint(addr, 16) + " pid " + pid + " " + th, state: k[1], num: num, start: now}
					}
				}
			case w != nil && w.num == num:
				delete(syncs, th)
				ret := retRE.FindStringSubmatch(m[5])
				ok := ret == nil
				if ret != nil {
					v, _ := strconv.ParseInt(ret[1], 0, 64)
					ok = v == 0
				}
				if w.waited && ok {
					s := c.Waits[w.key]
					s.N, s.NS = s.N+1, s.NS+w.woken-w.start
					c.Waits[w.key] = s
				}
			}
		}
		switch {
		case m[3] == "THREAD":
			p, tm := pidRE.FindStringSubmatch(m[5]), tidRE.FindStringSubmatch(m[5])
			if p == nil || tm == nil {
				continue
			}
			th := p[1] + "/" + tm[1]
			if w := syncs[th]; w != nil {
				st := strings.TrimPrefix(m[4], "TH")
				switch {
				case m[4] == "THDESTROY":
					delete(syncs, th)
				case st == w.state && !w.blocked:
					w.blocked, w.waited = true, true
				case st != w.state && w.blocked && m[4] != "THCREATE":
					w.blocked, w.woken = false, now
				}
			}
			switch ev := m[4]; ev {
			case "THCREATE":
				endState(th, now)
			case "THDESTROY":
				endState(th, now)
				leave(th, now)
			default:
				st := strings.TrimPrefix(ev, "TH")
				if s, ok := states[th]; !ok || s.name != st || s.cpu != n {
					endState(th, now)
					states[th] = state{st, n, now}
				}
				if ev == "THRUNNING" {
					if threadCPU[th] != n {
						leave(th, now)
					}
					if prev := cpus[n].thread; prev != "" && prev != th {
						delete(threadCPU, prev)
					}
					threadCPU[th], cpus[n].thread = n, th
					show(n, now)
				}
			}
		case m[3] == "INT_ENTR" || m[3] == "INT_EXIT":
			v, _ := strconv.ParseUint(strings.TrimPrefix(m[4], "0x"), 16, 64)
			irq := "irq " + strconv.FormatUint(v, 10)
			cs := cpus[n]
			if m[3] == "INT_ENTR" {
				cs.ints = append(cs.ints, irq)
			} else if k := len(cs.ints); k > 0 && cs.ints[k-1] == irq {
				cs.ints = cs.ints[:k-1]
			} else {
				return c, fmt.Errorf("%s: INT_EXIT of %s not innermost on CPU %d: the recount does not handle lost exits", l, irq, n)
			}
			show(n, now)
		}
	}
	for th, s := range states { // open at the end: cut
		c.Threads = append(c.Threads, Interval{th, qnxClass(s.name), s.start, lastNow, true})
	}
	for _, w := range syncs {
		if w.waited {
			c.OpenWaits++
		}
	}
	return c, nil
}

// qnxClass is sched_class of a QNX thread state.
func qnxClass(state string) string {
	switch state {
	case "RUNNING":
		return "running"
	case "READY":
		return "ready"
	}
	return "blocked"
}

// Answers are the recount's answers, keyed by CPU number, "pid/tid",
// "irq V" and "none" (nothing holds the CPU); instances and waits by
// the definitions of every format but BTF (Sched) over the threads'
// states.
func (c QNX) Answers() Answers {
	a := cpuAnswers("", c.Busy, c.Holders, func(h string) bool { return h != "none" && !c.IdleThreads[h] })
	_, a.Instances, a.Latency = Sched(c.Threads)
	a.Running = c.Running
	a.Waits = c.Waits
	return a
}

// QNXSeedListing extracts the traceprinter listing from the QNX seed
// document (shared/seeds/qnx-neutrino-trace-interpretation.ru.txt): its
// header block and event lines, with the continuation lines of the
// multi-line events, leaving the prose between the fragments out.
func QNXSeedListing(seedPath string) (string, error) {
	f, err := os.Open(seedPath)
	if err != nil {
		return "", err
	}
	defer f.Close()
	listing := regexp.MustCompile(`^(TRACEPRINTER version|TRACEPARSER LIBRARY version|-- [A-Z ]+ --$|TRACE_[A-Z_]+::|t:0x[0-9a-f]+ CPU:)`)
	continuation := regexp.MustCompile(`^(ppid|pid|name):\S+$`)
	var b strings.Builder
	sc := bufio.NewScanner(f)
	inEvent := false
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), " \r")
		switch {
		case listing.MatchString(line):
			inEvent = strings.HasPrefix(line, "t:")
		case inEvent && continuation.MatchString(line):
		default:
			inEvent = false
			continue
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String(), sc.Err()
}
