package recount

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// ReadTOPPERS recounts the CPU truth of real TOPPERS/ASP logs from their
// raw lines by the small state machines below (not the ingester's code).
//
// Two definitions of "who holds the processor" are recounted:
//
//   - by dispatch (issue 19's): a task holds the processor from
//     "dispatch to task N." to "dispatch from task N."; from there to the
//     next "dispatch to" the processor is idle (the dispatcher). Handlers
//     ("enter to int handler", isr, cyclic, alarm and exc handlers) take
//     it from whatever held it and give it back on "leave from", nested;
//     leaving one cuts those entered after it.
//   - by task state (what TLV's rules and standard format say, and so
//     what traceduck computes): a task holds the processor while its
//     state is RUNNING, from "dispatch to task N." until "task N becomes
//     X." (X not RUNNING) or the next "dispatch to" (which preempts it);
//     handlers as above.
//
// The two differ in two kinds of windows (README.md, "Precision"): W1,
// from "task N becomes WAITING" (or DORMANT, ...) of the running task to
// its "dispatch from" (busy by dispatch, idle by state), and W2, from
// "dispatch from task M" of a task still RUNNING to the next "dispatch
// to" (idle by dispatch, M's by state); handlers that run inside a window
// hold the processor in both. A third recount measures the windows from
// the lines, and the test checks that the two definitions differ by
// exactly them, to the nanosecond.
//
// The task exception routine ("enter to tex") holds nothing of its own:
// it runs in its task's context (asp_long.log's "enter to tex 32768"
// never leaves: the task exits inside it); its state (RUNNING from "enter
// to tex" to "leave from tex", as the rules write it) is among States.

// TOPPERS is what the raw lines of a TOPPERS/ASP log say.
type TOPPERS struct {
	Start int64 // ns: the first line that tells what holds the processor

	ByState    CPUCount // by task state, intervals still open at the end left out
	ByDispatch CPUCount // by dispatch, the same
	// The same two up to Cut (the last "dispatch to", where both agree),
	// and the windows where they differ, closed by then.
	Cut                        int64
	ByStateCut, ByDispatchCut  CPUCount
	W1, W2                     map[string]int64 // per task: window time less the handlers' time in it
	W1Count, W2Count           int
	W1Len, W2Len               int64            // total length of the windows
	Running                    map[string]int64 // per task: ns RUNNING (complete intervals)
	Instances                  []string         // per task: "TASK activation start end exec preemptions" (complete instances)
	Latencies                  []string         // per task: "TASK ready_ts run_ts wakeup|preemption" (complete waits)
	Unknown, UnknownResources  int              // lines not read; lines naming no resource of the resource file
	HandlerLines, DispatchLine int
	// Waits: per "OBJECT TASK" (OBJECT "semaphore 1", "eventflag 2",
	// ...), the complete waits of a task for a kernel object: from its
	// call ("enter to wai_sem semid=1.") when the task becomes WAITING
	// (or WAITING-SUSPENDED) in it, to when it stops waiting ("task N
	// becomes RUNNABLE."), if the call then returns ercd=0 (GaveUp counts
	// the other returns). A call that does not block is no wait; one
	// still open at the end counts in OpenWaits.
	Waits     map[string]Sum
	GaveUp    int
	OpenWaits int
	// States: the TLV state intervals of the tasks (by task state), the
	// handlers (RUNNING from "enter to" to "leave from", then DORMANT)
	// and the task exception routine, classed as sched_class does; the
	// initial states and those open at the end truncated.
	States []Interval
}

// CPUCount accumulates time per holder of one processor ("" idle).
type CPUCount struct {
	Busy, Known int64
	Holders     map[string]int64 // busy holders

	known  bool
	holder string
	since  int64
	cutoff int64
}

func newCPUCount(cutoff int64) CPUCount {
	return CPUCount{Holders: map[string]int64{}, cutoff: cutoff}
}

// set says that from t the processor is held by h.
func (c *CPUCount) set(t int64, h string) {
	if c.known && h == c.holder {
		return
	}
	if c.known {
		if end := min(t, c.cutoff); end > c.since {
			d := end - c.since
			c.Known += d
			if c.holder != "" {
				c.Busy += d
				c.Holders[c.holder] += d
			}
		}
	}
	c.known, c.holder, c.since = true, h, t
}

// closeAt counts the open interval up to the cutoff (used only with one).
func (c *CPUCount) closeAt() {
	if c.cutoff != math.MaxInt64 {
		c.set(c.cutoff, "\x00end")
	}
}

var (
	aspLineRe  = regexp.MustCompile(`^\[(\d+)\] (.*?)\s*$`)
	dispToRe   = regexp.MustCompile(`^dispatch to task (\d+)\.?$`)
	dispFromRe = regexp.MustCompile(`^dispatch from task (\d+)\.?$`)
	becomesRe  = regexp.MustCompile(`^task (\d+) becomes ([^.]+)\.?$`)
	texRe      = regexp.MustCompile(`^(enter to|leave from) tex \S+?\.?$`)
	handlerRe  = regexp.MustCompile(`^(enter to|leave from) (int handler|isr|cyclic handler|alarm handler|exc handler) ([^.\s]+)\.?$`)
	// a task's service call on a kernel object it may wait for, and its
	// return: "enter to wai_sem semid=1.", "leave from wai_sem ercd=0."
	svcEnterRe = regexp.MustCompile(`^enter to (t?wai_sem|t?wai_flg|t?snd_dtq|t?rcv_dtq|t?rcv_mbx|t?loc_mtx|t?get_mpf) (semid|flgid|dtqid|mbxid|mtxid|mpfid)=(\d+)`)
	svcLeaveRe = regexp.MustCompile(`^leave from (t?wai_sem|t?wai_flg|t?snd_dtq|t?rcv_dtq|t?rcv_mbx|t?loc_mtx|t?get_mpf) ercd=([^.\s]+)`)
)

var handlerTypes = map[string]string{
	"int handler": "InterruptHandler", "isr": "InterruptServiceRoutine", "cyclic handler": "CyclicHandler",
	"alarm handler": "AlarmHandler", "exc handler": "CPUExceptionHandler",
}

// ReadTOPPERS recounts a TOPPERS/ASP log (one processor) with the
// resource file that names its tasks and handlers; tasks are the ones
// whose instances and waits are listed.
func ReadTOPPERS(logPath, resPath string) (*TOPPERS, error) {
	names, initial, scale, err := readRes(resPath)
	if err != nil {
		return nil, err
	}
	lines, err := readLogLines(logPath)
	if err != nil {
		return nil, err
	}

	// The last "dispatch to": there both definitions agree.
	cut := int64(math.MaxInt64)
	for _, l := range lines {
		if dispToRe.MatchString(l.msg) {
			cut = l.ns * scale
		}
	}
	var first int64 // the first line's time: the initial states' start
	if len(lines) > 0 {
		first = lines[0].ns * scale
	}
	rc := &TOPPERS{
		Start: -1, ByState: newCPUCount(math.MaxInt64), ByDispatch: newCPUCount(math.MaxInt64),
		Cut: cut, ByStateCut: newCPUCount(cut), ByDispatchCut: newCPUCount(cut),
		W1: map[string]int64{}, W2: map[string]int64{}, Running: map[string]int64{},
		Waits: map[string]Sum{},
	}
	// the kernel-object call each task is in
	type svcCall struct {
		call, object  string
		start, woken  int64
		blocked, wait bool
	}
	calls := map[string]*svcCall{}
	objKind := map[string]string{"semid": "semaphore", "flgid": "eventflag", "dtqid": "dataqueue", "mbxid": "mailbox", "mtxid": "mutex", "mpfid": "memorypool"}

	var (
		stack    []string // handlers entered, innermost last
		dispBase string   // by dispatch
		running  string   // by state: the task RUNNING
		state    = map[string]string{}
		since    = map[string]int64{} // when the task's state began; -1: initial (truncated)
		known    bool
		// the window open (by line), its task and kind (1, 2), its start
		// and the handlers' time in it so far
		win       int
		winTask   string
		winStart  int64
		winIrq    int64
		irqSince  int64
		instStart = map[string]int64{} // open instance: activation; -1 truncated
		instFirst = map[string]int64{} // first RUNNING in it; -1 none
		instExec  = map[string]int64{}
		instPre   = map[string]int{}
		readySnc  = map[string]int64{} // a wait: since; -1 truncated
		readyWhy  = map[string]string{}
	)
	for name, st := range initial {
		state[name] = st
		since[name] = -1
		switch class(st) {
		case "ready":
			readySnc[name], readyWhy[name] = -1, "wakeup"
			fallthrough
		case "running":
			instStart[name], instFirst[name] = -1, -1
		}
		if st == "RUNNING" {
			return nil, fmt.Errorf("%s: task %s is RUNNING initially: not recounted", resPath, name)
		}
	}
	holder := func(base string) string {
		if len(stack) > 0 {
			return stack[len(stack)-1]
		}
		return base
	}
	// setState changes a task's TLV state at ts (what the rules write).
	setState := func(ts int64, name, st string) {
		old := state[name]
		if old == "RUNNING" && since[name] >= 0 {
			rc.Running[name] += ts - since[name]
		}
		oc, nc := class(old), class(st)
		if _, open := instStart[name]; open {
			if oc == "running" {
				instExec[name] += ts - since[name]
			}
			if oc == "running" && nc == "ready" {
				instPre[name]++
			}
			if nc == "running" && instFirst[name] < 0 {
				instFirst[name] = ts
			}
			if nc == "blocked" {
				if instStart[name] >= 0 {
					rc.Instances = append(rc.Instances, fmt.Sprintf("%s %d %d %d %d %d", name, instStart[name], instFirst[name], ts, instExec[name], instPre[name]))
				}
				delete(instStart, name)
			}
		} else if oc == "blocked" && nc != "blocked" {
			instStart[name], instFirst[name], instExec[name], instPre[name] = ts, -1, 0, 0
			if nc == "running" {
				instFirst[name] = ts
			}
		}
		if s, waiting := readySnc[name]; waiting && nc != "ready" {
			if nc == "running" && s >= 0 {
				rc.Latencies = append(rc.Latencies, fmt.Sprintf("%s %d %d %s", name, s, ts, readyWhy[name]))
			}
			delete(readySnc, name)
		}
		if nc == "ready" && oc != "ready" {
			readySnc[name], readyWhy[name] = ts, "wakeup"
			if oc == "running" {
				readyWhy[name] = "preemption"
			}
		}
		rc.States = append(rc.States, Interval{name, oc, max(since[name], first), ts, since[name] < 0})
		state[name], since[name] = st, ts
	}
	// setOther changes a handler's or the task exception routine's state.
	other, otherSince := map[string]string{}, map[string]int64{}
	setOther := func(ts int64, name, st string) {
		if o, ok := other[name]; ok && o != st {
			rc.States = append(rc.States, Interval{name, class(o), otherSince[name], ts, false})
		}
		if other[name] != st {
			other[name], otherSince[name] = st, ts
		}
	}
	update := func(ts int64) {
		if !known {
			return
		}
		stateBase := ""
		if running != "" {
			stateBase = running
		}
		rc.ByState.set(ts, holder(stateBase))
		rc.ByStateCut.set(ts, holder(stateBase))
		rc.ByDispatch.set(ts, holder(dispBase))
		rc.ByDispatchCut.set(ts, holder(dispBase))
	}
	closeWindow := func(ts int64) {
		if win == 0 || ts > cut {
			win = 0
			return
		}
		if len(stack) > 0 {
			winIrq += ts - max(irqSince, winStart)
		}
		d := ts - winStart - winIrq
		if win == 1 {
			rc.W1[winTask] += d
			rc.W1Count++
			rc.W1Len += ts - winStart
		} else {
			rc.W2[winTask] += d
			rc.W2Count++
			rc.W2Len += ts - winStart
		}
		win = 0
	}
	openWindow := func(kind int, task string, ts int64) {
		win, winTask, winStart, winIrq = kind, task, ts, 0
	}

	// dispatched is the task a dispatch line names (counted), or not ok
	// when the resource file has no such task.
	dispatched := func(re *regexp.Regexp, msg string) (string, bool) {
		name, ok := names["Task "+re.FindStringSubmatch(msg)[1]]
		if !ok {
			rc.UnknownResources++
			return "", false
		}
		rc.DispatchLine++
		return name, true
	}
	for _, l := range lines {
		ts := l.ns * scale
		// waits for kernel objects, beside the rest
		if m := svcEnterRe.FindStringSubmatch(l.msg); m != nil && running != "" {
			calls[running] = &svcCall{call: m[1], object: objKind[m[2]] + " " + m[3], start: ts}
		} else if m := svcLeaveRe.FindStringSubmatch(l.msg); m != nil && running != "" {
			if c := calls[running]; c != nil && c.call == m[1] {
				if c.wait && m[2] == "0" {
					addSum(rc.Waits, c.object+" "+running, c.woken-c.start)
				} else if c.wait {
					rc.GaveUp++
				}
				delete(calls, running)
			}
		} else if m := becomesRe.FindStringSubmatch(l.msg); m != nil {
			if c := calls[names["Task "+m[1]]]; c != nil {
				blocked := m[2] == "WAITING" || m[2] == "WAITING-SUSPENDED"
				if blocked && !c.blocked {
					c.blocked, c.wait = true, true
				} else if !blocked && c.blocked {
					c.blocked, c.woken = false, ts
				}
			}
		}
		switch {
		case dispToRe.MatchString(l.msg):
			name, ok := dispatched(dispToRe, l.msg)
			if !ok {
				continue
			}
			closeWindow(ts)
			if running != "" {
				setState(ts, running, "RUNNABLE")
			}
			setState(ts, name, "RUNNING")
			running = name
			dispBase = name
			if !known {
				known, rc.Start = true, ts
			}
			update(ts)
		case dispFromRe.MatchString(l.msg):
			name, ok := dispatched(dispFromRe, l.msg)
			if !ok {
				continue
			}
			if win == 1 && winTask == name {
				closeWindow(ts)
			} else if running == name {
				openWindow(2, name, ts)
			}
			dispBase = ""
			if !known {
				known, rc.Start = true, ts
			}
			update(ts)
		case becomesRe.MatchString(l.msg):
			m := becomesRe.FindStringSubmatch(l.msg)
			name, ok := names["Task "+m[1]]
			if !ok {
				rc.UnknownResources++
				continue
			}
			st := m[2]
			if st == "RUNNING" {
				return nil, fmt.Errorf("%s:%d: a task becomes RUNNING: not recounted", logPath, l.n)
			}
			if running == name {
				running = ""
				openWindow(1, name, ts)
			}
			setState(ts, name, st)
			update(ts)
		case handlerRe.MatchString(l.msg):
			m := handlerRe.FindStringSubmatch(l.msg)
			name, ok := names[handlerTypes[m[2]]+" "+m[3]]
			if !ok {
				rc.UnknownResources++
				continue
			}
			rc.HandlerLines++
			if m[1] == "enter to" {
				setOther(ts, name, "RUNNING")
			} else {
				setOther(ts, name, "DORMANT")
			}
			if m[1] == "enter to" {
				if len(stack) == 0 {
					irqSince = ts
				}
				stack = append(stack, name)
				if !known {
					known, rc.Start = true, ts
				}
			} else {
				for i := len(stack) - 1; i >= 0; i-- {
					if stack[i] == name {
						stack = stack[:i]
						break
					}
				}
				if len(stack) == 0 && win != 0 {
					winIrq += ts - max(irqSince, winStart)
				}
			}
			update(ts)
		case texRe.MatchString(l.msg):
			if name, ok := names["TaskExceptionRoutine"]; ok {
				st := "RUNNING"
				if strings.HasPrefix(l.msg, "leave") {
					st = "DORMANT"
				}
				setOther(ts, name, st)
			}
			rc.Unknown++
		default:
			rc.Unknown++
		}
	}
	if n := len(lines); n > 0 {
		last := lines[n-1].ns * scale
		for name, st := range state {
			rc.States = append(rc.States, Interval{name, class(st), max(since[name], first), last, true})
		}
		for name, st := range other {
			rc.States = append(rc.States, Interval{name, class(st), otherSince[name], last, true})
		}
	}
	for _, c := range calls {
		if c.wait {
			rc.OpenWaits++
		}
	}
	rc.ByStateCut.closeAt()
	rc.ByDispatchCut.closeAt()
	sort.Strings(rc.Instances)
	sort.Strings(rc.Latencies)
	return rc, nil
}

// class is sched_class of a TOPPERS task state.
func class(st string) string {
	switch st {
	case "RUNNING":
		return "running"
	case "RUNNABLE":
		return "ready"
	}
	return "blocked"
}

type logLine struct {
	n   int
	ns  int64 // in the log's unit
	msg string
}

func readLogLines(path string) ([]logLine, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []logLine
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		m := aspLineRe.FindStringSubmatch(strings.TrimRight(sc.Text(), "\r"))
		if m == nil {
			continue
		}
		v, err := strconv.ParseInt(m[1], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, n, err)
		}
		out = append(out, logLine{n, v, m[2]})
	}
	return out, sc.Err()
}

// readRes reads a resource file (JSON; TLV's have a byte order mark):
// "Type id" → resource name, the tasks' initial states, ns per time unit.
func readRes(path string) (names map[string]string, initial map[string]string, scale int64, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, 0, err
	}
	var rf struct {
		TimeScale string
		TimeRadix int
		Resources map[string]struct {
			Type       string
			Attributes map[string]any
		}
	}
	if err := json.Unmarshal([]byte(strings.TrimPrefix(string(b), "\uFEFF")), &rf); err != nil {
		return nil, nil, 0, fmt.Errorf("%s: %v", path, err)
	}
	if rf.TimeRadix != 10 {
		return nil, nil, 0, fmt.Errorf("%s: radix %d", path, rf.TimeRadix)
	}
	scale = map[string]int64{"s": 1e9, "ms": 1e6, "us": 1e3, "ns": 1}[rf.TimeScale]
	if scale == 0 {
		return nil, nil, 0, fmt.Errorf("%s: TimeScale %q", path, rf.TimeScale)
	}
	names, initial = map[string]string{}, map[string]string{}
	for name, r := range rf.Resources {
		if id, ok := r.Attributes["id"]; ok {
			names[fmt.Sprintf("%s %v", r.Type, id)] = name
		}
		if r.Type == "TaskExceptionRoutine" {
			names[r.Type] = name
		}
		if r.Type == "Task" {
			st, _ := r.Attributes["state"].(string)
			if st == "" {
				st = "DORMANT"
			}
			initial[name] = st
		}
	}
	return names, initial, scale, nil
}

// FullLogResources is a resource file for TOPPERS's sample full.log (it
// has none): its tasks 1..5 and the handlers it enters.
func FullLogResources() string {
	var b strings.Builder
	b.WriteString(`{"TimeScale": "us", "TimeRadix": 10, "ResourceHeaders": ["asp"], "Resources": {` + "\n")
	b.WriteString(`"CurrentContext": {"Type": "Context", "Attributes": {"name": "None"}}`)
	for i := 1; i <= 5; i++ {
		fmt.Fprintf(&b, ",\n\"TASK_%d\": {\"Type\": \"Task\", \"Attributes\": {\"id\": %d, \"state\": \"DORMANT\"}}", i, i)
	}
	for _, h := range []string{`"INH_2": {"Type": "InterruptHandler", "Attributes": {"id": 2}}`, `"INH_5": {"Type": "InterruptHandler", "Attributes": {"id": 5}}`,
		`"CYC_1": {"Type": "CyclicHandler", "Attributes": {"id": 1}}`, `"ALM_1": {"Type": "AlarmHandler", "Attributes": {"id": 1}}`} {
		b.WriteString(",\n" + h)
	}
	b.WriteString("}}\n")
	return b.String()
}

// Answers are the recount's answers by task state (what traceduck
// computes: the processor "cpu", the holders by name, "idle" when nothing
// holds it), the tasks' and handlers' running time, instances and waits
// by the definitions of every format but BTF (Sched) over States.
func (rc *TOPPERS) Answers() Answers {
	a := Answers{CPUBusy: map[string]int64{"cpu": rc.ByState.Busy}, CPUHeld: map[Held]int64{{"cpu", "idle", false}: rc.ByState.Known - rc.ByState.Busy}}
	for h, ns := range rc.ByState.Holders {
		a.CPUHeld[Held{"cpu", h, true}] += ns
	}
	a.Running, a.Instances, a.Latency = Sched(rc.States)
	a.Waits = rc.Waits
	return a
}

// TOPPERSLogs are the real TOPPERS/ASP sample logs of the external
// collection (shared/testdata-external/toppers, after the prefix
// "YixiaoLi__tlv4mc__") and their resource files; full.log has none
// (FullLogResources stands for it).
var TOPPERSLogs = []struct{ Log, Res string }{
	{"sampleFiles__SampleLog__asp__asp_short.log", "sampleFiles__SampleLog__asp__asp_short.res"},
	{"sampleFiles__SampleLog__asp__asp_long.log", "sampleFiles__SampleLog__asp__asp_long.res"},
	{"sampleFiles__SampleLog__asp__asp_app.log", "sampleFiles__SampleLog__asp__asp_app.res"},
	{"sampleFiles__SampleLog__asp__test_short.log", "sampleFiles__SampleLog__asp__test_short.res"},
	{"sampleFiles__SampleLog__asp__asp_stats.log", "sampleFiles__SampleLog__asp__asp_stats.res"},
	{"HIST-2bd24ffe__branches__goto__sampleFiles__asp__full.log", ""},
}
