package dtrace

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/internal/tracegen"
)

// DTraceRecount is what the event lines of an output say of its CPUs,
// counted by RecountDTrace without the reader's code.
type DTraceRecount struct {
	// EventLines: lines under a "#traceduck-events" header that begin
	// with a value of its first column.
	EventLines int
	// Busy, Known: per CPU, the ns held by a thread, the dispatcher or an
	// interrupt (not the idle thread), and by anything; complete
	// intervals only (one open at the last line is not counted).
	Busy, Known map[int]int64
	// Held: per CPU, the ns each holder held it: "pid/tid" (a thread),
	// "idle" (its idle thread), "switching" (its dispatcher between an
	// off-cpu and the next on-cpu), the interrupt's irq key.
	Held map[int]map[string]int64
	// Running: per "pid/tid", the ns of its complete runs (on-cpu to its
	// off-cpu).
	Running map[string]int64
	// Handlers: per interrupt, the count and ns of its complete handler
	// intervals (interrupt-start to -complete on one CPU).
	Handlers map[string][2]int64
	// Unknown: per CPU, the ns from its first event line to its first
	// on-cpu or off-cpu, in which nothing says what it runs (interrupts
	// aside).
	Unknown map[int]int64
}

// RecountDTrace reads an output's event lines (the layout each
// "#traceduck-events 1 ... columns" header declares) and recounts its
// CPUs the way the lines tell it, for outputs that do not contradict
// themselves (every on-cpu of a thread after its off-cpu, interrupts
// completed innermost first):
//   - sched:::on-cpu: the line's thread (idle=1, or pid 0 without an idle
//     key: the CPU's idle thread) holds its CPU;
//   - sched:::off-cpu: the CPU's dispatcher holds it until the next
//     on-cpu there (nothing when that comes at the same timestamp);
//   - interrupt-start/-complete (irq key): the interrupt holds its CPU
//     over what runs, the innermost one;
//   - before a CPU's first on-cpu or off-cpu only its interrupts are
//     known.
func RecountDTrace(path string) (*DTraceRecount, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rc := &DTraceRecount{Busy: map[int]int64{}, Known: map[int]int64{}, Held: map[int]map[string]int64{},
		Running: map[string]int64{}, Handlers: map[string][2]int64{}, Unknown: map[int]int64{}}
	type irq struct {
		name  string
		since int64
	}
	type cpu struct {
		known    bool
		base     string // "pid/tid", "idle", "switching"
		runSince int64
		offAt    int64 // the off-cpu of a switching base
		ints     []irq
		holder   string
		since    int64
		seen     bool
		unknown  int64
	}
	cpus := map[int]*cpu{}
	get := func(n int) *cpu {
		c := cpus[n]
		if c == nil {
			c = &cpu{}
			cpus[n] = c
		}
		return c
	}
	show := func(n int, ts int64) {
		c := get(n)
		h := ""
		switch {
		case len(c.ints) > 0:
			h = c.ints[len(c.ints)-1].name
		case c.known:
			h = c.base
		}
		if h == c.holder {
			return
		}
		// (an off-cpu and an on-cpu at one instant: no dispatcher)
		if d := ts - c.since; c.holder != "" && !(c.holder == "switching" && d == 0) {
			if rc.Held[n] == nil {
				rc.Held[n] = map[string]int64{}
			}
			rc.Held[n][c.holder] += d
			rc.Known[n] += d
			if c.holder != "idle" {
				rc.Busy[n] += d
			}
		}
		c.holder, c.since = h, ts
	}
	var cols []string
	var unit int64 = 1 // ns per unit
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#traceduck-events ") {
			cols, unit = nil, 1
			for _, tok := range strings.Fields(line)[2:] {
				if k, v, ok := strings.Cut(tok, "="); ok {
					if k == "unit" {
						unit = map[string]int64{"s": 1e9, "ms": 1e6, "us": 1e3, "ns": 1}[v]
					}
					continue
				}
				cols = append(cols, tok)
			}
			continue
		}
		fs := strings.Fields(line)
		if len(cols) == 0 || len(fs) < len(cols) || line[0] == ' ' || line[0] == '\t' {
			continue
		}
		val := map[string]string{}
		for i, c := range cols {
			val[c] = fs[i]
		}
		if _, err := strconv.ParseUint(fs[0], 10, 64); err != nil && cols[0] != "probe" {
			continue
		}
		keys := map[string]string{}
		for _, kv := range fs[len(cols):] {
			if k, v, ok := strings.Cut(kv, "="); ok {
				keys[k] = strings.Trim(v, `"`)
			}
		}
		rc.EventLines++
		raw, _ := strconv.ParseInt(val["timestamp"], 10, 64)
		ts := raw * max(unit, 1)
		cpuCol, hasCPU := val["cpu"]
		if !hasCPU {
			continue
		}
		n, _ := strconv.Atoi(cpuCol)
		probe := strings.Split(val["probe"], ":")
		if len(probe) != 4 {
			continue
		}
		c := get(n)
		if !c.seen {
			c.seen, c.unknown = true, ts
		}
		thread := val["pid"] + "/" + val["tid"]
		idle := keys["idle"] == "1" || keys["idle"] == "" && val["pid"] == "0"
		switch {
		case probe[0] == "sched" && probe[3] == "on-cpu":
			if !c.known {
				rc.Unknown[n] += ts - c.unknown
			}
			c.known, c.base, c.runSince = true, thread, ts
			if idle {
				c.base = "idle"
			}
			show(n, ts)
		case probe[0] == "sched" && probe[3] == "off-cpu":
			if !c.known {
				rc.Unknown[n] += ts - c.unknown
			}
			if c.known && c.base == thread && !idle {
				rc.Running[thread] += ts - c.runSince
			}
			c.known, c.base, c.offAt = true, "switching", ts
			show(n, ts)
		case probe[3] == "interrupt-start":
			name := keys["irq"]
			if name == "" {
				name = "interrupt"
			}
			c.ints = append(c.ints, irq{name, ts})
			show(n, ts)
		case probe[3] == "interrupt-complete":
			name := keys["irq"]
			if name == "" {
				name = "interrupt"
			}
			if k := len(c.ints) - 1; k >= 0 && c.ints[k].name == name {
				h := rc.Handlers[name]
				rc.Handlers[name] = [2]int64{h[0] + 1, h[1] + ts - c.ints[k].since}
				c.ints = c.ints[:k]
				if k == 0 && !c.known {
					c.unknown = ts
				}
				show(n, ts)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	// What holds a CPU at the last line is not counted: its interval has
	// no end in the lines (after a last off-cpu, the dispatcher's).
	return rc, nil
}

// TestCPUTruthDTrace: what traceduck says of the CPUs of DTrace event
// output (cpu_utilization: busy and known ns per CPU, ns per holder; the
// interrupts' handler intervals; the threads' running time) is what
// RecountDTrace counts from the raw lines, exactly: on generated outputs
// (switches at one instant as bpftrace prints them, and with a gap as
// DTrace does; nested interrupts; idle CPUs) and on every real DTrace
// output of the collection. Those (the DTraceToolkit's examples) hold
// printed aggregations and tool output, no event lines: there both sides
// are empty, and the generated outputs are the only ones with CPU
// intervals.
func TestCPUTruthDTrace(t *testing.T) {
	var paths []string
	dir := t.TempDir()
	for i, cfg := range []tracegen.DTraceConfig{
		{Lines: 5000, CPUs: 2, Processes: 3, Threads: 2, Seed: 31, Gap: true},
		{Lines: 8000, CPUs: 4, Processes: 2, Threads: 2, Seed: 32},
		{Lines: 8000, CPUs: 3, Processes: 4, Threads: 3, Seed: 33, Gap: true},
	} {
		var buf bytes.Buffer
		if _, err := tracegen.WriteDTrace(&buf, cfg); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, fmt.Sprintf("gen%d.d.txt", i))
		if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	real, _ := filepath.Glob(filepath.Join(externalDir, "dtrace", "*"))
	if len(real) == 0 {
		t.Log("no ../shared/testdata-external/dtrace beside the repository: generated outputs only")
	}
	db := dbtest.Open(t)
	withLines := 0
	for _, path := range append(paths, real...) {
		rc, err := RecountDTrace(path)
		if err != nil {
			t.Fatal(err)
		}
		res, err := ingest.Path(context.Background(), db, path, ingest.Options{Format: "dtrace"})
		if err != nil {
			// an example of prose and a command's output with nothing
			// DTrace in it is refused (docs/bad-input.md): no events
			if rc.EventLines != 0 || !strings.Contains(err.Error(), "expected DTrace or bpftrace output") {
				t.Fatalf("ingest %s: %v", path, err)
			}
			continue
		}
		if rc.EventLines != int(res.Events) {
			t.Errorf("%s: %d events, %d event lines", filepath.Base(path), res.Events, rc.EventLines)
		}
		if rc.EventLines > 0 {
			withLines++
		}
		var busy, held, running, handlers []string
		for n, k := range rc.Known {
			busy = append(busy, fmt.Sprintf("cpu %d | %d | %d", n, rc.Busy[n], k))
		}
		for n, hs := range rc.Held {
			for h, ns := range hs {
				held = append(held, fmt.Sprintf("cpu %d | %s | %d", n, h, ns))
			}
		}
		for th, ns := range rc.Running {
			running = append(running, fmt.Sprintf("%s | %d", th, ns))
		}
		for ir, h := range rc.Handlers {
			handlers = append(handlers, fmt.Sprintf("%s | %d | %d", ir, h[0], h[1]))
		}
		for _, c := range []struct {
			what string
			want []string
			sql  string
		}{
			{"busy and known ns per CPU", busy, `SELECT cpu, coalesce(sum(ns) FILTER (WHERE busy), 0), sum(ns) FROM cpu_utilization WHERE run_id = $1 GROUP BY cpu`},
			{"ns per CPU and holder", held, `SELECT i.cpu, CASE WHEN o.kind = 'thread' AND o.native_id IS NOT NULL THEN o.pid || '/' || o.native_id
					WHEN o.kind = 'thread' THEN 'idle' WHEN o.kind = 'system' THEN 'switching' ELSE o.name END, sum(i.dur)
				FROM cpu_intervals i JOIN objects o ON o.run_id = i.run_id AND o.object_id = i.holder_id WHERE i.run_id = $1 AND NOT i.truncated GROUP BY ALL`},
			{"running ns per thread", running, `SELECT o.pid || '/' || o.native_id, sum(s.dur) FROM state_intervals s JOIN objects o USING (run_id, object_id)
				WHERE s.run_id = $1 AND o.kind = 'thread' AND s.instance = 0 AND s.state = 'running' AND NOT s.truncated GROUP BY ALL`},
			{"handler intervals per interrupt", handlers, `SELECT o.name, count(*), sum(s.dur) FROM state_intervals s JOIN objects o USING (run_id, object_id)
				WHERE s.run_id = $1 AND o.kind = 'interrupt' AND NOT s.truncated GROUP BY ALL`},
		} {
			sort.Strings(c.want)
			got := strings.Split(strings.TrimSuffix(dbtest.Query(t, db.SQL(), c.sql, res.RunID), "\n"), "\n")
			if len(got) == 1 && got[0] == "" {
				got = nil
			}
			sort.Strings(got)
			if g, w := strings.Join(got, "\n"), strings.Join(c.want, "\n"); g != w {
				t.Errorf("%s: %s:\n%s", filepath.Base(path), c.what, dbtest.Diff(w+"\n", g+"\n"))
			}
		}
		if rc.EventLines > 0 {
			t.Logf("%s: busy/known per CPU %v/%v, unknown %v", filepath.Base(path), rc.Busy, rc.Known, rc.Unknown)
		}
	}
	if withLines != len(paths) {
		t.Errorf("%d outputs with event lines, want the %d generated ones (a real one has them now: look at it)", withLines, len(paths))
	}
}
