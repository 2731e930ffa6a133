package btf_test

import (
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

const externalDir = "../../../shared/testdata-external/btf"

// BTFRecount is what a BTF trace says, counted from its raw lines with
// plain string splitting and the seed's process table, independently of
// the ingester. Durations are in ns; only complete intervals count (one
// that is still open at the last line is left out, as the views leave out
// truncated ones).
type BTFRecount struct {
	Events  int64
	Actions map[string]int64 // "TYPE action" -> events
	// Running is the time each task (by name) spent running: from start,
	// resume or run until preempt, terminate, poll, wait or park.
	Running map[string]int64
	// Held is, per core, the time each holder held it ("idle": none),
	// from the core's first appearance: a process holds its core from
	// start, resume, run or poll_parking until preempt, terminate, wait or
	// park (a polling process keeps it: the seed's active waiting); an ISR
	// that starts over what runs nests over it until it ends.
	Held map[string]map[string]int64
	// Busy is, per core, the time a holder other than an idle task held it.
	Busy map[string]int64
	// Latency is, per task, the waits for a core (count, sum ns): from
	// activate, preempt, release or release_parking to start or resume.
	Latency map[string][2]int64
	// Response is, per task, the instances seen from activate to
	// terminate (count, sum ns of terminate - activate).
	Response map[string][2]int64
	// CoreSaysBusy is, per core, the busy time TA Simulator's own core
	// actions tell (empty when the trace has none): busy from execute,
	// execute_idle, execute_waiting, and through wait_postexecution (the
	// core waits actively), until idle or idle_execution.
	CoreSaysBusy map[string]int64
}

// recountIdle is the idle task of the RTOSes whose BTF traces we have:
// FreeRTOS's IDLE (IDLE<core> in an SMP build), with the BTF logger's
// "(number)" or "[core/number]" prefix.
var recountIdle = regexp.MustCompile(`^(\(\d+\)|\[\d+/\d+\])?IDLE\d*$`)

// recountCore is the core of a process event: its source when it is a core
// (the seed: cores act on processes), else the core the FreeRTOS logger's
// "[core/number]" prefix of the target names, else the only core of the
// trace.
var recountPrefix = regexp.MustCompile(`^\[(\d+)/\d+\]`)

// RecountBTF reads a BTF file's raw lines and returns its recount.
func RecountBTF(path string) (BTFRecount, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return BTFRecount{}, err
	}
	lines := strings.Split(strings.ReplaceAll(string(data), "\r", ""), "\n")
	r := BTFRecount{Actions: map[string]int64{}, Running: map[string]int64{}, Held: map[string]map[string]int64{},
		Busy: map[string]int64{}, Latency: map[string][2]int64{}, Response: map[string][2]int64{}, CoreSaysBusy: map[string]int64{}}

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
		if h != "idle" && !recountIdle.MatchString(h) {
			r.Busy[name] += ts - c.since
		}
		c.since = ts
	}

	mul := int64(1)
	coreBusySince := map[string]int64{} // by TA's core actions
	runSince := map[inst]int64{}
	readySince := map[inst]int64{}
	activated := map[inst]int64{}
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
		if typ != "T" && typ != "I" {
			continue
		}
		k := inst{tgt, tgtInst}

		// Running time, waits for a core, instances.
		switch act {
		case "start", "resume", "run":
			if s, ok := readySince[k]; ok && act != "run" && typ == "T" {
				lt := r.Latency[tgt]
				r.Latency[tgt] = [2]int64{lt[0] + 1, lt[1] + ts - s}
			}
			delete(readySince, k)
			runSince[k] = ts
		case "preempt", "terminate", "poll", "wait", "park":
			if s, ok := runSince[k]; ok && typ == "T" {
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
			if a, ok := activated[k]; ok && typ == "T" {
				rs := r.Response[tgt]
				r.Response[tgt] = [2]int64{rs[0] + 1, rs[1] + ts - a}
			}
			delete(activated, k)
		}

		// The core.
		if act == "activate" {
			continue
		}
		on := src
		if cores[on] == nil {
			if m := recountPrefix.FindStringSubmatch(tgt); m != nil && cores["Core_"+m[1]] != nil {
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
	return r, nil
}

// TestConformanceBTF ingests every real BTF trace and compares the
// database with the trace's recount from its raw lines: events per action,
// running time per task, what held each core and for how long (the idle
// task of FreeRTOS holds its core, which is not busy), the waits for a
// core, and the instances' response times.
func TestConformanceBTF(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(externalDir, "*.btf"))
	if len(files) == 0 {
		t.Skip("no ../shared/testdata-external/btf beside the repository")
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			raw, err := RecountBTF(path)
			if err != nil {
				t.Fatal(err)
			}
			db := dbtest.Open(t)
			res := dbtest.Ingest(t, db, path, ingest.Options{})
			if res.Format != "btf" {
				t.Fatalf("detected as %s", res.Format)
			}
			q := db.SQL()
			if res.Events != raw.Events {
				t.Errorf("events: ingested %d, raw lines %d", res.Events, raw.Events)
			}
			check := func(what, query string, want []string) {
				t.Helper()
				sort.Strings(want)
				if got := dbtest.Query(t, q, query); got != strings.Join(want, "") {
					t.Errorf("%s:\n got %s\nwant %s", what, got, strings.Join(want, ""))
				}
			}
			var want []string
			for k, v := range raw.Actions {
				want = append(want, fmt.Sprintf("%s | %d\n", k, v))
			}
			check("event counts", "SELECT class || ' ' || event, count FROM event_counts ORDER BY 1", want)

			want = nil
			for task, ns := range raw.Running {
				want = append(want, fmt.Sprintf("%s | %d\n", task, ns))
			}
			if len(want) < 2 {
				t.Fatalf("fewer than two tasks ran: %v", want)
			}
			check("running time per task", "SELECT object, total_ns FROM state_summary WHERE kind = 'task' AND state = 'running' ORDER BY object", want)

			want = nil
			for c, holders := range raw.Held {
				for h, ns := range holders {
					busy := h != "idle" && !recountIdle.MatchString(h)
					want = append(want, fmt.Sprintf("%s | %s | %t | %d\n", c, h, busy, ns))
				}
			}
			check("time per core and holder (cpu_utilization)", "SELECT cpu, holder, busy, ns FROM cpu_utilization ORDER BY cpu, holder", want)

			want = nil
			for c, ns := range raw.Busy {
				want = append(want, fmt.Sprintf("%s | %d\n", c, ns))
			}
			check("busy time per core (cpu_intervals)", "SELECT cpu, sum(dur) FROM cpu_intervals WHERE busy AND NOT truncated GROUP BY cpu ORDER BY cpu", want)
			if len(raw.CoreSaysBusy) > 0 {
				// TA Simulator's core actions, which the ingester keeps
				// as events only, tell the same busy time as the process
				// transitions it follows (the core is busy while its
				// process polls).
				want = nil
				for c, ns := range raw.CoreSaysBusy {
					want = append(want, fmt.Sprintf("%s | %d\n", c, ns))
				}
				check("busy time per core by the core's own actions (cpu_intervals)", "SELECT cpu, sum(dur) FROM cpu_intervals WHERE busy AND NOT truncated GROUP BY cpu ORDER BY cpu", want)
			}

			want = nil
			for task, n := range raw.Latency {
				want = append(want, fmt.Sprintf("%s | %d | %d\n", task, n[0], n[1]))
			}
			check("waits for a core per task (sched_latency)", "SELECT object, count(*), sum(latency) FROM sched_latency WHERE kind = 'task' AND NOT truncated GROUP BY object ORDER BY object", want)

			want = nil
			for task, n := range raw.Response {
				want = append(want, fmt.Sprintf("%s | %d | %d\n", task, n[0], n[1]))
			}
			check("complete instances per task (task_instances)", "SELECT object, count(*), sum(response) FROM task_instances WHERE kind = 'task' AND NOT truncated GROUP BY object ORDER BY object", want)

			t.Logf("diagnostics:\n%s", dbtest.Query(t, q, "SELECT severity, count, src_line, message FROM diagnostics ORDER BY src_line"))
		})
	}
}
