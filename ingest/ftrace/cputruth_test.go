package ftrace_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/dbtest"
)

// FtraceRecount is what a trace file's raw lines say of its CPUs,
// counted by RecountFtrace without the ingester's code.
type FtraceRecount struct {
	// Busy: per CPU, the ns held by a thread or an interrupt (not by the
	// CPU's idle task, pid 0); Known: the ns held by anything. Complete
	// intervals only: one that ends at the end of the trace, or where the
	// trace contradicts itself or lost events, is not counted.
	Busy, Known map[int]int64
	// Held: per CPU, the ns each holder held it: "tid N" (a thread),
	// "swapper/N" (the idle task), "irq N NAME", "softirq ACTION".
	Held map[int]map[string]int64
	// Running: per tid, the ns of its complete runs (sched_switch that
	// names it next to the one that switches it out).
	Running map[string]int64
	// Handlers: per interrupt, the count and ns of its complete handler
	// intervals (entry to exit on one CPU, what nests inside included).
	Handlers map[string][2]int64
	// Unknown: per CPU, the ns from its first event line to its first
	// sched_switch, and between lost events and its next sched_switch,
	// in which the trace does not say what ran (interrupts aside).
	Unknown map[int]int64
	// Lost: lost-events markers; Contradictions: sched_switch lines that
	// contradict what the trace said ran (a switch lost: another thread
	// ran, an interrupt has no exit, prev or next ran on another CPU),
	// after which the CPU's interval is not counted.
	Lost, Contradictions int
}

// rawEvent is the line pattern of Perfetto's systrace tokenizer
// (eventLine in external_test.go), with the rest of the line.
var rawEvent = regexp.MustCompile(`-(\d+)\s+\(?\s*(\d+|-+)?\)?\s?\[(\d+)\]\s*[a-zA-Z0-9.]{0,4}\s+(\d+)\.(\d+):\s+(\S+)(.*)$`)

var rawLost = regexp.MustCompile(`^CPU:(\d+) \[(LOST \d+ EVENTS|\d+ EVENTS DROPPED|EVENTS DROPPED)\]`)

// RecountFtrace reads a trace file's lines and recounts its CPUs the way
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
func RecountFtrace(path string) (*FtraceRecount, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rc := &FtraceRecount{Busy: map[int]int64{}, Known: map[int]int64{}, Held: map[int]map[string]int64{},
		Running: map[string]int64{}, Handlers: map[string][2]int64{}, Unknown: map[int]int64{}}
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
	get := func(n int) *cpu {
		c := cpus[n]
		if c == nil {
			c = &cpu{}
			cpus[n] = c
		}
		return c
	}
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
			d := ts - c.since
			if rc.Held[n] == nil {
				rc.Held[n] = map[string]int64{}
			}
			rc.Held[n][c.holder] += d
			rc.Known[n] += d
			if !strings.HasPrefix(c.holder, "swapper/") {
				rc.Busy[n] += d
			}
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
	field := func(body, key string) string {
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
	// softirq_entry: "vec=1 [action=TIMER]"
	action := func(body string) string {
		i := strings.Index(body, "[action=")
		if i < 0 {
			return ""
		}
		v, _, _ := strings.Cut(body[i+8:], "]")
		return v
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
		case "sched_switch":
			prev, next := field(body, "prev_pid"), field(body, "next_pid")
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
	return rc, nil
}

// TestCPUTruthFtrace: on every real ftrace file, what traceduck says of the
// CPUs (cpu_utilization: busy and known ns per CPU, ns per holder; the
// interrupts' handler intervals; the threads' running time) is what
// RecountFtrace counts from the raw lines, exactly. Where the trace cannot
// tell (a CPU before its first sched_switch; after lost events; a
// contradiction) neither counts: traceduck has no CPU interval there (or
// a truncated one), the recount's Unknown holds that time.
func TestCPUTruthFtrace(t *testing.T) {
	for _, path := range externalFiles(t) {
		t.Run(filepath.Base(path)[max(0, len(filepath.Base(path))-40):], func(t *testing.T) {
			rc, err := RecountFtrace(path)
			if err != nil {
				t.Fatal(err)
			}
			db := dbtest.Open(t)
			dbtest.Ingest(t, db, path, ingest.Options{})
			var busy, held, running, handlers []string
			for n, k := range rc.Known {
				busy = append(busy, fmt.Sprintf("cpu %d | %d | %d", n, rc.Busy[n], k))
			}
			for n, hs := range rc.Held {
				for h, ns := range hs {
					held = append(held, fmt.Sprintf("cpu %d | %s | %d", n, h, ns))
				}
			}
			for tid, ns := range rc.Running {
				running = append(running, fmt.Sprintf("%s | %d", tid, ns))
			}
			for ir, h := range rc.Handlers {
				handlers = append(handlers, fmt.Sprintf("%s | %d | %d", ir, h[0], h[1]))
			}
			for _, c := range []struct {
				what string
				want []string
				sql  string
			}{
				{"busy and known ns per CPU", busy, `SELECT cpu, coalesce(sum(ns) FILTER (WHERE busy), 0), sum(ns) FROM cpu_utilization GROUP BY cpu`},
				{"ns per CPU and holder", held, `SELECT i.cpu, CASE WHEN o.kind = 'thread' AND o.native_id > 0 THEN 'tid ' || o.native_id ELSE o.name END, sum(i.dur)
					FROM cpu_intervals i JOIN objects o ON o.run_id = i.run_id AND o.object_id = i.holder_id WHERE NOT i.truncated GROUP BY ALL`},
				{"running ns per thread", running, `SELECT o.native_id::VARCHAR, sum(s.dur) FROM state_intervals s JOIN objects o USING (run_id, object_id)
					WHERE o.kind = 'thread' AND s.instance = 0 AND s.state = 'running' AND NOT s.truncated GROUP BY ALL`},
				{"handler intervals per interrupt", handlers, `SELECT o.name, count(*), sum(s.dur) FROM state_intervals s JOIN objects o USING (run_id, object_id)
					WHERE o.kind = 'interrupt' AND NOT s.truncated GROUP BY ALL`},
			} {
				sort.Strings(c.want)
				got := strings.Split(strings.TrimSuffix(dbtest.Query(t, db.SQL(), c.sql), "\n"), "\n")
				if len(got) == 1 && got[0] == "" {
					got = nil
				}
				sort.Strings(got)
				if g, w := strings.Join(got, "\n"), strings.Join(c.want, "\n"); g != w {
					t.Errorf("%s:\n%s", c.what, dbtest.Diff(w+"\n", g+"\n"))
				}
			}
			t.Logf("busy/known per CPU %v/%v; unknown ns per CPU %v; %d lost-events markers, %d contradictions", rc.Busy, rc.Known, rc.Unknown, rc.Lost, rc.Contradictions)
		})
	}
}
