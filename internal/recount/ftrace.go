package recount

import (
	"bufio"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// Ftrace is what a trace file's raw lines say of its CPUs, counted by
// ReadFtrace without the ingester's code. Of its Holds: Busy is the
// time held by a thread or an interrupt (not by the CPU's idle task, pid
// 0); Held names "tid N" (a thread), "swapper/N" (the idle task), "irq N
// NAME" and "softirq ACTION"; Running is per tid, from the sched_switch
// that names it next to the one that switches it out; Handlers from
// entry to exit on one CPU (what nests inside included); Unknown from a
// CPU's first event line to its first sched_switch, and between lost
// events and its next sched_switch. An interval where the trace
// contradicts itself or lost events is not counted.
type Ftrace struct {
	Holds
	// Lost: lost-events markers; Contradictions: sched_switch lines that
	// contradict what the trace said ran (a switch lost: another thread
	// ran, an interrupt has no exit, prev or next ran on another CPU),
	// after which the CPU's interval is not counted.
	Lost, Contradictions int
	// Threads: the threads' scheduling-state intervals by tid, classed
	// as sched_class does (running; runnable is ready; any other state
	// blocked), the ones open at the end truncated: sched_switch makes
	// next running and prev its prev_state (R, R+: ready); a switch out
	// of a thread not running cuts its state before; sched_waking,
	// sched_wakeup and sched_wakeup_new make a thread that is not
	// running or ready ready; sched_process_free ends its state. A
	// thread's first interval begins at its first such event; the idle
	// task (pid 0) has none. (ingest/ftrace/README.md, "State intervals".)
	Threads []Interval
}

// rawEvent is the line pattern of Perfetto's systrace tokenizer
// (eventLine in ingest/ftrace/external_test.go), with the rest of the line.
var rawEvent = regexp.MustCompile(`-(\d+)\s+\(?\s*(\d+|-+)?\)?\s?\[(\d+)\]\s*[a-zA-Z0-9.]{0,4}\s+(\d+)\.(\d+):\s+(\S+)(.*)$`)

var rawLost = regexp.MustCompile(`^CPU:(\d+) \[(LOST \d+ EVENTS|\d+ EVENTS DROPPED|EVENTS DROPPED)\]`)

// ReadFtrace reads a trace file's lines and recounts its CPUs the way
// the lines tell it:
//   - a CPU's holder is what the last sched_switch on it switched in (its
//     next_pid; pid 0 is the CPU's idle task swapper/N), under the
//     interrupts and softirqs entered on it and not exited (the innermost
//     holds it); an exit ends the innermost open one of its number, and
//     the ones entered inside it;
//   - before a CPU's first sched_switch, and after a lost-events marker
//     until its next one, nothing says what the CPU runs: only its
//     interrupts are known, while they last (that time goes to Unknown);
//   - a sched_switch that contradicts the lines before it (prev is not
//     what was switched in there; an interrupt there has no exit; prev or
//     next was switched in on another CPU and not out) means a switch or
//     an exit was lost: the interval of that CPU in which it happened has
//     no known end and is not counted, and that CPU is not known until
//     its next sched_switch;
//   - a lost-events marker ends its CPU's interval uncounted at the last
//     time read, and the run of the thread on it.
func ReadFtrace(path string) (*Ftrace, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rc := &Ftrace{Holds: newHolds()}
	type irq struct {
		soft      bool
		num, name string
		since     int64
	}
	type cpu struct {
		known    bool   // a sched_switch said what runs
		base     string // its tid ("0": the idle task)
		runSince int64  // when base was switched in
		ints     []irq
		holder   string // what holds it now, "" when not known
		since    int64
		seen     bool
		unknown  int64 // since when it is not known
	}
	cpus := map[int]*cpu{}
	where := map[string]int{} // tid -> the CPU it was switched in on
	get := func(n int) *cpu { return entry(cpus, n) }
	// show moves CPU n to what holds it now at ts, counting the interval
	// that ends.
	show := func(n int, ts int64) {
		c := get(n)
		h := ""
		switch {
		case len(c.ints) > 0:
			h = c.ints[len(c.ints)-1].name
		case c.known && c.base == "0":
			h = "swapper/" + strconv.Itoa(n)
		case c.known:
			h = "tid " + c.base
		}
		if h == c.holder {
			return
		}
		if c.holder != "" {
			hold(rc.Held, rc.Known, rc.Busy, n, c.holder, ts-c.since, !strings.HasPrefix(c.holder, "swapper/"))
		}
		c.holder, c.since = h, ts
	}
	// cut: CPU n's interval ends at ts uncounted, and what runs there is
	// not known any more.
	cut := func(n int, ts int64) {
		c := get(n)
		if c.known && c.base != "0" && where[c.base] == n {
			delete(where, c.base)
		}
		c.known, c.ints, c.holder, c.unknown = false, nil, "", ts
	}
	field := FtraceField
	// softirq_entry: "vec=1 [action=TIMER]"
	action := func(body string) string {
		i := strings.Index(body, "[action=")
		if i < 0 {
			return ""
		}
		v, _, _ := strings.Cut(body[i+8:], "]")
		return v
	}
	type thState struct {
		class string
		since int64
	}
	ths := map[string]*thState{}
	// thread moves tid to class at ts (class "" ends its state); cut:
	// the state before has no known end.
	thread := func(tid, class string, ts int64, cut bool) {
		if tid == "0" || tid == "" {
			return
		}
		if o := ths[tid]; o != nil {
			rc.Threads = append(rc.Threads, Interval{tid, o.class, o.since, ts, cut})
		}
		delete(ths, tid)
		if class != "" {
			ths[tid] = &thState{class, ts}
		}
	}
	var last int64
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := rawLost.FindStringSubmatch(line); m != nil {
			n, _ := strconv.Atoi(m[1])
			rc.Lost++
			c := get(n)
			if c.known && c.base != "0" {
				delete(where, c.base) // its run is cut
			}
			cut(n, last)
			continue
		}
		m := rawEvent.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[3])
		sec, _ := strconv.ParseInt(m[4], 10, 64)
		frac, _ := strconv.ParseInt((m[5] + "000000000")[:9], 10, 64)
		ts := sec*1_000_000_000 + frac
		last = max(last, ts)
		event, body := strings.TrimSuffix(m[6], ":"), " "+strings.TrimSpace(m[7])
		c := get(n)
		if !c.seen {
			c.seen, c.unknown = true, ts
		}
		switch event {
		case "sched_waking", "sched_wakeup", "sched_wakeup_new":
			if tid := field(body, "pid"); ths[tid] == nil || ths[tid].class == "blocked" {
				thread(tid, "ready", ts, false)
			}
		case "sched_process_free":
			thread(field(body, "pid"), "", ts, false)
		}
		switch event {
		case "sched_switch":
			prev, next := field(body, "prev_pid"), field(body, "next_pid")
			class := "blocked"
			if st := field(body, "prev_state"); st == "R" || st == "R+" {
				class = "ready"
			}
			thread(prev, class, ts, ths[prev] != nil && ths[prev].class != "running")
			thread(next, "running", ts, false)
			if !c.known {
				rc.Unknown[n] += ts - c.unknown
			}
			if c.known && c.base == prev && prev != "0" {
				rc.Running[prev] += ts - c.runSince
			}
			if (c.known && c.base != prev) || len(c.ints) > 0 {
				rc.Contradictions++
				cut(n, ts)
			}
			if o, ok := where[prev]; ok && prev != "0" && o != n {
				rc.Contradictions++
				cut(o, ts) // prev's run there is cut too
			}
			if o, ok := where[next]; ok && next != "0" && o != n {
				rc.Contradictions++
				rc.Running[next] += ts - get(o).runSince // its run there ends here
				cut(o, ts)
			}
			delete(where, prev)
			c.known, c.base, c.runSince = true, next, ts
			if next != "0" {
				where[next] = n
			}
			show(n, ts)
		case "irq_handler_entry", "softirq_entry":
			ir := irq{soft: event == "softirq_entry", since: ts}
			if ir.soft {
				ir.num = field(body, "vec")
				ir.name = "softirq " + ir.num
				if a := action(body); a != "" {
					ir.name = "softirq " + a
				}
			} else {
				ir.num = field(body, "irq")
				ir.name = "irq " + ir.num
				if nm := field(body, "name"); nm != "" {
					ir.name += " " + nm
				}
			}
			c.ints = append(c.ints, ir)
			show(n, ts)
		case "irq_handler_exit", "softirq_exit":
			soft, num := event == "softirq_exit", field(body, "irq")
			if soft {
				num = field(body, "vec")
			}
			for i := len(c.ints) - 1; i >= 0; i-- {
				if c.ints[i].soft == soft && c.ints[i].num == num {
					h := rc.Handlers[c.ints[i].name]
					rc.Handlers[c.ints[i].name] = [2]int64{h[0] + 1, h[1] + ts - c.ints[i].since}
					// The ones entered inside it end with it (their
					// exits are not in the trace): the CPU's interval
					// of the innermost ends here.
					c.ints = c.ints[:i]
					if len(c.ints) == 0 && !c.known {
						c.unknown = ts
					}
					show(n, ts)
					break
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	for n, c := range cpus {
		if !c.known {
			rc.Unknown[n] += last - c.unknown
		}
	}
	for tid, o := range ths {
		rc.Threads = append(rc.Threads, Interval{tid, o.class, o.since, last, true})
	}
	return rc, nil
}

// Answers are the recount's answers, keyed by CPU name ("cpu N"), the
// holders as Held names them and tid; the instances and waits by the
// definitions of every format but BTF (Sched) over Threads. After lost
// events the threads are not recounted (no answers to Q3..Q5).
func (rc *Ftrace) Answers() Answers {
	a := cpuAnswers("cpu ", rc.Busy, rc.Held, func(h string) bool { return !strings.HasPrefix(h, "swapper/") })
	if rc.Lost == 0 {
		_, a.Instances, a.Latency = Sched(rc.Threads)
		a.Running = rc.Running
	}
	return a
}

// FtraceField is the value of key in an event line's body (" key=value",
// up to the next blank); "" when it has none.
func FtraceField(body, key string) string {
	i := strings.Index(body, " "+key+"=")
	if i < 0 {
		return ""
	}
	v := body[i+len(key)+2:]
	if j := strings.IndexByte(v, ' '); j >= 0 {
		v = v[:j]
	}
	return v
}
