package tracegen

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
)

func gen(t testing.TB, cfg Config) ([]byte, Truth) {
	t.Helper()
	var buf bytes.Buffer
	tr, err := WriteBTF(&buf, cfg)
	if err != nil {
		t.Fatalf("WriteBTF(%+v): %v", cfg, err)
	}
	return buf.Bytes(), tr
}

func TestDeterminism(t *testing.T) {
	cfg := Config{Events: 50_000, Cores: 2, Seed: 42}
	a, ta := gen(t, cfg)
	b, tb := gen(t, cfg)
	if sha256.Sum256(a) != sha256.Sum256(b) {
		t.Fatal("same config produced different bytes")
	}
	if !reflect.DeepEqual(ta, tb) {
		t.Fatal("same config produced different truth")
	}
	cfg.Seed = 43
	c, _ := gen(t, cfg)
	if sha256.Sum256(a) == sha256.Sum256(c) {
		t.Fatal("different seeds produced identical bytes")
	}
}

func TestConfigErrors(t *testing.T) {
	for _, cfg := range []Config{
		{Events: 0, Cores: 1},
		{Events: 10, Cores: 0},
		{Events: 10, Cores: 1, Tasks: -1},
		{Events: 10, Cores: 1, TimeScale: "fortnights"},
	} {
		if _, err := WriteBTF(io.Discard, cfg); err == nil {
			t.Errorf("WriteBTF(%+v): expected an error", cfg)
		}
	}
}

func TestHeader(t *testing.T) {
	out, _ := gen(t, Config{Events: 100, Cores: 3, Seed: 1, TimeScale: "us"})
	want := "#version 2.2.0\n#creator traceduck tracegen\n#creationDate 2026-01-01T00:00:00Z\n#timeScale us\n" +
		"0,Core_0,0,C,Core_0,0,set_frequency,200000000\n" +
		"0,Core_1,0,C,Core_1,0,set_frequency,200000000\n" +
		"0,Core_2,0,C,Core_2,0,set_frequency,200000000\n" +
		"0,SEM_Shared,0,SEM,SEM_Shared,0,ready\n"
	if !bytes.HasPrefix(out, []byte(want)) {
		t.Fatalf("unexpected start of trace:\n%s", out[:min(len(out), 600)])
	}
}

func TestEventsCount(t *testing.T) {
	for _, n := range []int{1, 2, 5, 17, 100, 1000, 12345, 100_000} {
		for _, cores := range []int{1, 2, 4, 100} {
			out, tr := gen(t, Config{Events: n, Cores: cores, Seed: int64(n)})
			if tr.Lines < n || tr.Lines > n+50 {
				t.Errorf("Events=%d Cores=%d: Lines=%d, want within [%d,%d]", n, cores, tr.Lines, n, n+50)
			}
			got := 0
			for _, l := range strings.Split(string(out), "\n") {
				if l != "" && l[0] != '#' {
					got++
				}
			}
			if got != tr.Lines {
				t.Errorf("Events=%d: counted %d data lines, Truth.Lines=%d", n, got, tr.Lines)
			}
		}
	}
}

// ---- independent re-computation from the text ----

type procKey struct {
	name string
	inst int64
}

type checker struct {
	t        *testing.T
	toNS     func(int64) int64
	truth    Truth
	counts   map[string]int
	state    map[procKey]string
	since    map[procKey]int64
	procCor  map[procKey]string
	runState map[procKey]string
	running  map[string]int64
	ready    map[string]int64
	polling  map[string]int64
	insts    map[string]int
	terms    map[string]int
	busy     map[string]int64
	occ      map[string]procKey // core -> process running or polling on it
	occSince map[string]int64   // core -> when occ took it
	semSt    string
	semOwn   procKey
	lastTS   int64
	firstTS  int64
	lines    int
	errs     int
}

func (c *checker) fail(line int, l string, format string, args ...any) {
	c.errs++
	if c.errs <= 10 {
		c.t.Errorf("line %d %q: %s", line, l, fmt.Sprintf(format, args...))
	}
}

// processTable is the BTF process state table: action -> (from, to).
var processTable = map[string][2]string{
	"activate":        {"notinit", "active"},
	"start":           {"active", "running"},
	"resume":          {"ready", "running"},
	"preempt":         {"running", "ready"},
	"terminate":       {"running", "terminated"},
	"poll":            {"running", "polling"},
	"wait":            {"running", "waiting"},
	"release":         {"waiting", "ready"},
	"run":             {"polling", "running"},
	"park":            {"polling", "parking"},
	"release_parking": {"parking", "ready"},
	"poll_parking":    {"parking", "polling"},
}

var runnableTable = map[string][2]string{
	"start":     {"notinit", "running"},
	"terminate": {"running", "terminated"},
	"suspend":   {"running", "suspended"},
	"resume":    {"suspended", "running"},
}

var semTable = map[string][2]string{
	"ready":    {"notinit", "free"},
	"lock":     {"free", "full"},
	"overfull": {"full|overfull", "overfull"},
	"full":     {"overfull", "full"},
	"unlock":   {"full", "free"},
}

func check(t *testing.T, out []byte, tr Truth, unit string) *checker {
	c := &checker{
		t: t, truth: tr,
		counts: map[string]int{}, state: map[procKey]string{}, since: map[procKey]int64{},
		procCor: map[procKey]string{}, runState: map[procKey]string{},
		running: map[string]int64{}, ready: map[string]int64{}, polling: map[string]int64{}, insts: map[string]int{},
		terms: map[string]int{}, busy: map[string]int64{}, occ: map[string]procKey{}, occSince: map[string]int64{},
		semSt: "notinit",
	}
	switch unit {
	case "ns":
		c.toNS = func(v int64) int64 { return v }
	case "us":
		c.toNS = func(v int64) int64 { return v * 1000 }
	case "ps":
		c.toNS = func(v int64) int64 {
			if v%1000 != 0 {
				t.Fatalf("ps timestamp %d is not a whole ns", v)
			}
			return v / 1000
		}
	}
	text := string(out)
	if !strings.HasSuffix(text, "\n") {
		t.Fatal("trace does not end with a newline")
	}
	for i, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if strings.HasPrefix(l, "#") {
			if c.lines > 0 {
				c.fail(i+1, l, "header line after data")
			}
			if strings.HasPrefix(l, "#timeScale ") && l != "#timeScale "+unit {
				c.fail(i+1, l, "want unit %s", unit)
			}
			continue
		}
		c.line(i+1, l)
	}
	return c
}

func (c *checker) line(n int, l string) {
	if strings.ContainsAny(l, " \t\r") {
		c.fail(n, l, "whitespace in data line")
	}
	f := strings.Split(l, ",")
	if len(f) != 7 && len(f) != 8 {
		c.fail(n, l, "want 7 or 8 fields, got %d", len(f))
		return
	}
	ts, err1 := strconv.ParseInt(f[0], 10, 64)
	srcInst, err2 := strconv.ParseInt(f[2], 10, 64)
	tgtInst, err3 := strconv.ParseInt(f[5], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		c.fail(n, l, "bad integer field")
		return
	}
	t := c.toNS(ts)
	if c.lines == 0 {
		c.firstTS = t
	} else if t < c.lastTS {
		c.fail(n, l, "timestamp goes backwards")
	}
	c.lastTS = t
	c.lines++
	src, typ, tgt, action := f[1], f[3], f[4], f[6]
	c.counts[typ+"/"+action]++

	switch typ {
	case "T", "I":
		k := procKey{tgt, tgtInst}
		if action == "mtalimitexceeded" {
			if src != tgt || srcInst != tgtInst {
				c.fail(n, l, "mtalimitexceeded must be self-sourced")
			}
			if s := c.state[k]; s == "" || s == "terminated" {
				c.fail(n, l, "mtalimitexceeded for an instance that is not alive (%q)", s)
			}
			return
		}
		tr, ok := processTable[action]
		if !ok {
			c.fail(n, l, "unknown process action")
			return
		}
		from := c.state[k]
		if from == "" {
			from = "notinit"
		}
		if from != tr[0] {
			c.fail(n, l, "process action %s from state %s", action, from)
		}
		if action == "activate" {
			if !strings.HasPrefix(src, "Timer_") && !strings.HasPrefix(src, "IRQ_Tick_") {
				c.fail(n, l, "activate not by a stimulus")
			}
			c.insts[tgt]++
		} else {
			if !strings.HasPrefix(src, "Core_") || srcInst != 0 {
				c.fail(n, l, "transition not by a core")
			}
			if pc, ok := c.procCor[k]; ok && pc != src {
				c.fail(n, l, "instance migrated from %s", pc)
			}
			c.procCor[k] = src
		}
		// Intervals.
		switch from {
		case "running":
			c.running[tgt] += t - c.since[k]
		case "polling":
			c.polling[tgt] += t - c.since[k]
		case "ready":
			c.ready[tgt] += t - c.since[k]
		}
		c.since[k] = t
		c.state[k] = tr[1]
		if action == "terminate" {
			c.terms[tgt]++
		}
		// Core occupancy: running or polling (active waiting holds the
		// core); the core is busy from the hold to the release.
		switch action {
		case "start", "resume", "poll_parking":
			if o, busy := c.occ[src]; busy {
				c.fail(n, l, "core %s already occupied by %v", src, o)
			}
			c.occ[src] = k
			c.occSince[src] = t
		case "run", "poll":
			if c.occ[src] != k {
				c.fail(n, l, "core %s not occupied by this instance", src)
			}
		case "preempt", "terminate", "wait", "park":
			if c.occ[src] != k {
				c.fail(n, l, "core %s not occupied by this instance", src)
			}
			delete(c.occ, src)
			c.busy[src] += t - c.occSince[src]
		}
	case "R":
		k := procKey{tgt, tgtInst}
		tr, ok := runnableTable[action]
		if !ok {
			c.fail(n, l, "unknown runnable action")
			return
		}
		from := c.runState[k]
		if from == "" {
			from = "notinit"
		}
		if from != tr[0] {
			c.fail(n, l, "runnable action %s from state %s", action, from)
		}
		c.runState[k] = tr[1]
		ps := c.state[procKey{src, srcInst}]
		switch action {
		case "start", "terminate":
			if ps != "running" {
				c.fail(n, l, "runnable %s while its process is %s", action, ps)
			}
		case "suspend", "resume":
			if ps != "running" && ps != "polling" {
				c.fail(n, l, "runnable %s while its process is %s", action, ps)
			}
		}
	case "SEM":
		if tgt != "SEM_Shared" || tgtInst != 0 {
			c.fail(n, l, "unexpected semaphore target")
		}
		if src == "SEM_Shared" {
			tr, ok := semTable[action]
			if !ok {
				c.fail(n, l, "unknown semaphore action")
				return
			}
			if !strings.Contains("|"+tr[0]+"|", "|"+c.semSt+"|") {
				c.fail(n, l, "semaphore %s from state %s", action, c.semSt)
			}
			c.semSt = tr[1]
			return
		}
		p := procKey{src, srcInst}
		ps := c.state[p]
		switch action {
		case "requestsemaphore", "waiting", "released":
			if ps != "running" {
				c.fail(n, l, "semaphore %s while process is %s", action, ps)
			}
		case "assigned":
			// Immediately on request (running) or on hand-over to a
			// process that polls (polling) or was parked (parking).
			if ps != "running" && ps != "polling" && ps != "parking" {
				c.fail(n, l, "semaphore %s while process is %s", action, ps)
			}
		}
		switch action {
		case "requestsemaphore", "waiting":
		case "assigned":
			if c.semOwn != (procKey{}) {
				c.fail(n, l, "assigned while owned by %v", c.semOwn)
			}
			c.semOwn = p
		case "released":
			if c.semOwn != p {
				c.fail(n, l, "released by non-owner (owner %v)", c.semOwn)
			}
			c.semOwn = procKey{}
		default:
			c.fail(n, l, "unknown semaphore process action")
		}
	case "SIG":
		if (action != "read" && action != "write") || len(f) != 8 {
			c.fail(n, l, "bad signal event")
		}
	case "EVENT":
		switch action {
		case "set_event":
			if len(f) != 8 {
				c.fail(n, l, "set_event without target note")
			}
		case "wait_event", "clear_event":
		default:
			c.fail(n, l, "unknown event action")
		}
	case "STI":
		if action != "trigger" || src != "SIM" || srcInst != -1 {
			c.fail(n, l, "bad stimulus event")
		}
	case "C":
		if action != "set_frequency" {
			c.fail(n, l, "bad core event")
		}
	default:
		c.fail(n, l, "unknown type")
	}
}

func (c *checker) compare() {
	t, tr := c.t, c.truth
	if c.lines != tr.Lines {
		t.Errorf("Lines: parsed %d, truth %d", c.lines, tr.Lines)
	}
	if c.firstTS != tr.FirstTS || c.lastTS != tr.LastTS {
		t.Errorf("FirstTS/LastTS: parsed %d/%d, truth %d/%d", c.firstTS, c.lastTS, tr.FirstTS, tr.LastTS)
	}
	if !reflect.DeepEqual(c.counts, tr.ActionCounts) {
		t.Errorf("ActionCounts differ:\nparsed %v\ntruth  %v", c.counts, tr.ActionCounts)
	}
	cmp64 := func(what string, got, want map[string]int64) {
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s[%s]: parsed %d, truth %d", what, k, got[k], v)
			}
		}
		for k, v := range got {
			if _, ok := want[k]; !ok {
				t.Errorf("%s[%s]: parsed %d, missing from truth", what, k, v)
			}
		}
	}
	cmpInt := func(what string, got, want map[string]int) {
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s[%s]: parsed %d, truth %d", what, k, got[k], v)
			}
		}
		for k, v := range got {
			if _, ok := want[k]; !ok {
				t.Errorf("%s[%s]: parsed %d, missing from truth", what, k, v)
			}
		}
	}
	cmp64("Running", c.running, tr.Running)
	cmp64("Ready", c.ready, tr.Ready)
	cmp64("Polling", c.polling, tr.Polling)
	cmp64("CoreBusy", c.busy, tr.CoreBusy)
	cmpInt("Instances", c.insts, tr.Instances)
	cmpInt("Terminated", c.terms, tr.Terminated)
	// A core is held while its process runs or polls: the busy time is the
	// running and polling time, less what of it lies in the holds still
	// open at the end (their running or polling intervals may have ended,
	// the hold has not).
	var sumHeld, sumBusy, open int64
	for name := range tr.Running {
		sumHeld += tr.Running[name] + tr.Polling[name]
	}
	for _, v := range tr.CoreBusy {
		sumBusy += v
	}
	for core := range c.occ {
		open += c.lastTS - c.occSince[core]
	}
	if d := sumHeld - sumBusy; d < 0 || d > open {
		t.Errorf("sum of Running and Polling %d - sum of CoreBusy %d = %d, want within [0, %d] (the holds open at the end)", sumHeld, sumBusy, d, open)
	}
}

var checkConfigs = []Config{
	{Events: 200_000, Cores: 1, Seed: 1},
	{Events: 200_000, Cores: 2, Seed: 2},
	{Events: 200_000, Cores: 2, Tasks: 2, Seed: 3},
	{Events: 200_000, Cores: 3, Tasks: 9, Seed: 4, TimeScale: "us"},
	{Events: 200_000, Cores: 4, Tasks: 12, Seed: 5, TimeScale: "ps"},
	{Events: 100_000, Cores: 8, Tasks: 20, Seed: 6},
	{Events: 50_000, Cores: 1, Tasks: 1, Seed: 7},
	{Events: 50_000, Cores: 5, Tasks: 3, Seed: 8, TimeScale: "us"},
	{Events: 100_000, Cores: 1, Tasks: 40, Seed: 9},
	{Events: 100_000, Cores: 64, Tasks: 7, Seed: 10},
	{Events: 37, Cores: 2, Seed: 11},
}

func TestTruthAndStateMachine(t *testing.T) {
	for _, cfg := range checkConfigs {
		t.Run(fmt.Sprintf("K%d_T%d_s%d", cfg.Cores, cfg.Tasks, cfg.Seed), func(t *testing.T) {
			out, tr := gen(t, cfg)
			unit := cfg.TimeScale
			if unit == "" {
				unit = "ns"
			}
			c := check(t, out, tr, unit)
			c.compare()
			if tr.FirstTS != 0 || tr.LastTS <= 0 {
				t.Errorf("FirstTS=%d LastTS=%d", tr.FirstTS, tr.LastTS)
			}
			for name, v := range tr.Running {
				if v <= 0 && tr.Instances[name] > 2 {
					t.Errorf("%s: no running time over %d instances", name, tr.Instances[name])
				}
			}
		})
	}
}

// The default 2-core system must exercise every modelled feature.
func TestFeatureCoverage(t *testing.T) {
	_, tr := gen(t, Config{Events: 500_000, Cores: 2, Seed: 1})
	for _, k := range []string{
		"STI/trigger", "T/activate", "T/start", "T/preempt", "T/resume", "T/terminate",
		"T/poll", "T/run", "T/wait", "T/release", "T/park", "T/poll_parking",
		"I/activate", "I/start", "I/terminate",
		"R/start", "R/terminate", "R/suspend", "R/resume",
		"SEM/ready", "SEM/requestsemaphore", "SEM/lock", "SEM/assigned", "SEM/released",
		"SEM/unlock", "SEM/overfull", "SEM/waiting", "SEM/full",
		"SIG/write", "SIG/read", "EVENT/set_event", "EVENT/wait_event", "EVENT/clear_event",
		"C/set_frequency",
	} {
		if tr.ActionCounts[k] == 0 {
			t.Errorf("%s never emitted", k)
		}
	}
	var polling int64
	for _, v := range tr.Polling {
		polling += v
	}
	if polling == 0 {
		t.Error("no process polled")
	}
	t.Logf("action counts: %v", tr.ActionCounts)
	t.Logf("simulated span: %d ns", tr.LastTS-tr.FirstTS)
}

func TestMicrosecondsExact(t *testing.T) {
	out, trUS := gen(t, Config{Events: 20_000, Cores: 2, Seed: 9, TimeScale: "us"})
	if len(out) == 0 || trUS.LastTS%1000 != 0 {
		t.Fatalf("LastTS %d not a whole microsecond", trUS.LastTS)
	}
	// ps output is the ns output with timestamps multiplied by 1000.
	ns, trNS := gen(t, Config{Events: 20_000, Cores: 2, Seed: 9})
	ps, trPS := gen(t, Config{Events: 20_000, Cores: 2, Seed: 9, TimeScale: "ps"})
	if !reflect.DeepEqual(trNS, trPS) {
		t.Fatal("ns and ps truths differ")
	}
	nl := strings.Split(string(ns), "\n")
	pl := strings.Split(string(ps), "\n")
	if len(nl) != len(pl) {
		t.Fatal("ns and ps traces differ in length")
	}
	for i := range nl {
		if strings.HasPrefix(nl[i], "#") || nl[i] == "" {
			continue
		}
		a, b, _ := strings.Cut(nl[i], ",")
		c, d, _ := strings.Cut(pl[i], ",")
		if c != a+"000" && !(a == "0" && c == "0") || b != d {
			t.Fatalf("line %d: ns %q vs ps %q", i, nl[i], pl[i])
		}
	}
}

func TestAllocationsDoNotScale(t *testing.T) {
	small := testing.AllocsPerRun(3, func() { WriteBTF(io.Discard, Config{Events: 10_000, Cores: 2, Seed: 1}) })
	large := testing.AllocsPerRun(3, func() { WriteBTF(io.Discard, Config{Events: 200_000, Cores: 2, Seed: 1}) })
	if large > small+50 {
		t.Errorf("allocations grow with Events: %v for 10k lines, %v for 200k lines", small, large)
	}
}

func BenchmarkWriteBTF(b *testing.B) {
	const n = 1_000_000
	lines := 0
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		tr, err := WriteBTF(io.Discard, Config{Events: n, Cores: 2, Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		lines += tr.Lines
	}
	b.ReportMetric(float64(lines)/b.Elapsed().Seconds(), "lines/s")
}

// ExecScale makes one task slower by a known factor and leaves the
// system otherwise the same; a name that is no task is refused.
func TestExecScale(t *testing.T) {
	cfg := Config{Events: 60_000, Cores: 2, Tasks: 5, Seed: 7}
	_, base := gen(t, cfg)
	slow := "Task_10ms_3" // a task of this seed
	if _, ok := base.Running[slow]; !ok {
		t.Fatalf("%s is not a task of %+v: %v", slow, cfg, base.Running)
	}
	cfg.ExecScale = map[string]float64{slow: 1.5}
	out, scaled := gen(t, cfg)
	check(t, out, scaled, "ns").compare()
	if !reflect.DeepEqual(keys(base.Running), keys(scaled.Running)) {
		t.Errorf("the tasks changed: %v, then %v", keys(base.Running), keys(scaled.Running))
	}
	// Mean running time per terminated instance grows by about the factor
	// (execution times are drawn from [0.35, 1] x the scaled budget).
	perInst := func(tr Truth, name string) float64 {
		return float64(tr.Running[name]) / float64(tr.Terminated[name])
	}
	if r := perInst(scaled, slow) / perInst(base, slow); r < 1.35 || r > 1.65 {
		t.Errorf("%s: running time per instance x%.3f, want about x1.5", slow, r)
	}
	for name := range base.Running {
		if name == slow || name == "ISR_Tick" || base.Terminated[name] < 20 {
			continue
		}
		if r := perInst(scaled, name) / perInst(base, name); r < 0.85 || r > 1.15 {
			t.Errorf("%s: running time per instance x%.3f, want about the same", name, r)
		}
	}

	for _, tc := range []struct {
		scale map[string]float64
		want  string
	}{
		{map[string]float64{"Task_nope": 2}, `tracegen: ExecScale["Task_nope"] = 2: want a task of this configuration (Task_5ms_0, Task_1ms_1, Task_50ms_2, Task_10ms_3, Task_2ms_4) and a factor > 0`},
		{map[string]float64{slow: 0}, `tracegen: ExecScale["Task_10ms_3"] = 0: want a task of this configuration (Task_5ms_0, Task_1ms_1, Task_50ms_2, Task_10ms_3, Task_2ms_4) and a factor > 0`},
	} {
		c := cfg
		c.ExecScale = tc.scale
		if _, err := WriteBTF(io.Discard, c); err == nil || err.Error() != tc.want {
			t.Errorf("ExecScale %v: got error %v, want %s", tc.scale, err, tc.want)
		}
	}
}

func keys(m map[string]int64) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// TestInversionScenario: with Config.Inversion the simulator makes the
// inversion it is built for (Inv_High waits for SEM_Inv held by Inv_Low
// while Inv_Mid holds Core_0), once per 20 ms period at most, each at
// most Inv_Mid's 500 us of computing; its trace tells the priorities.
// Without it, the trace tells none and there is no inversion truth.
// (ingest/btf's TestGroundTruth checks priority_inversions against this
// truth.)
func TestInversionScenario(t *testing.T) {
	out, tr := gen(t, Config{Events: 100_000, Cores: 2, Seed: 12, Inversion: true})
	periods := tr.LastTS/(20*ms) + 1
	var n, ns int64
	perPeriod := map[int64]int64{}
	for _, x := range tr.Inversions {
		if x.End <= x.Start || x.End > tr.LastTS {
			t.Errorf("inversion %+v: not within the trace (last %d)", x, tr.LastTS)
		}
		if x.Resource != "SEM_Inv" {
			continue
		}
		if x.High != "Inv_High" || x.Low != "Inv_Low" || x.Middle != "Inv_Mid" || x.Core != "Core_0" {
			t.Errorf("inversion %+v: not the scenario's tasks", x)
		}
		n++
		ns += x.End - x.Start
		perPeriod[x.Start/(20*ms)] += x.End - x.Start
	}
	for p, d := range perPeriod {
		if d > 500_000 {
			t.Errorf("period %d: %d ns of inversion, more than Inv_Mid's 500 us", p, d)
		}
	}
	if n == 0 || int64(len(perPeriod)) < periods/2 {
		t.Errorf("%d inversions of the scenario in %d of %d periods", n, len(perPeriod), periods)
	}
	for _, want := range []string{",T,Inv_Low,0,activate,pri:", ",STI,task,0,trigger,priority_inherit ", ",SEM_Inv,0,waiting\n"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the trace has no %q", want)
		}
	}
	t.Logf("%d inversions of the scenario, %d ns, in %d periods", n, ns, len(perPeriod))

	out, tr = gen(t, Config{Events: 100_000, Cores: 2, Seed: 12})
	if tr.Inversions != nil || strings.Contains(string(out), "pri:") || strings.Contains(string(out), "Inv_") {
		t.Errorf("without Inversion: %d inversions, priorities or the scenario's tasks in the trace", len(tr.Inversions))
	}
}
