package recount

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// DTrace is what the event lines of an output say of its CPUs,
// counted by ReadDTrace without the reader's code. Of its Holds: Busy
// is the time held by a thread, the dispatcher or an interrupt (not the
// idle thread); Held names "pid/tid" (a thread), "idle" (its idle
// thread), "switching" (its dispatcher between an off-cpu and the next
// on-cpu) and the interrupt's irq key; Running is per "pid/tid", from
// on-cpu to its off-cpu; Handlers from interrupt-start to -complete on
// one CPU; Unknown from a CPU's first event line to its first on-cpu or
// off-cpu.
type DTrace struct {
	Holds
	// EventLines: lines under a "#traceduck-events" header that begin
	// with a value of its first column.
	EventLines int
}

// ReadDTrace reads an output's event lines (the layout each
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
func ReadDTrace(path string) (*DTrace, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rc := &DTrace{Holds: newHolds()}
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
	get := func(n int) *cpu { return entry(cpus, n) }
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
			hold(rc.Held, rc.Known, rc.Busy, n, c.holder, d, c.holder != "idle")
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

// Answers are the recount's answers about the CPUs and running time,
// keyed by CPU name ("cpu N"), the holders as Held names them and
// "pid/tid". (The threads' other states are not recounted.)
func (rc *DTrace) Answers() Answers {
	a := cpuAnswers("cpu ", rc.Busy, rc.Held, func(h string) bool { return h != "idle" })
	a.Running = rc.Running
	return a
}
