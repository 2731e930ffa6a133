package qnx_test

import (
	"bufio"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/internal/qnxenc"
	"github.com/traceduck/traceduck/internal/tracegen"
	"github.com/traceduck/traceduck/schema"
)

// qnxCPUCount is what held the CPUs of a QNX trace, in ns, counting the
// holds that a later event ended (the one open at the end is cut):
// Busy and Idle per CPU (held by interrupts and threads; by procnto's
// idle threads), Holders per CPU ("pid/tid", "irq V", "none"), Running
// per thread ("pid/tid": its complete RUNNING intervals on any CPU).
// Entries of 0 ns are left out.
type qnxCPUCount struct {
	Busy, Idle map[int]int64
	Holders    map[int]map[string]int64
	Running    map[string]int64
}

func newCPUCount() qnxCPUCount {
	return qnxCPUCount{Busy: map[int]int64{}, Idle: map[int]int64{}, Holders: map[int]map[string]int64{}, Running: map[string]int64{}}
}

func (c qnxCPUCount) hold(cpu int, holder string, ns int64) {
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

// rows prints a count as sorted lines, for comparisons and messages.
func (c qnxCPUCount) rows() string {
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

// truthCount is the generator's truth as a qnxCPUCount.
func truthCount(tr tracegen.QNXTruth) qnxCPUCount {
	c := newCPUCount()
	for cpu, ns := range tr.CPUBusyNS {
		c.Busy[cpu] = ns
	}
	for cpu, ns := range tr.CPUIdleNS {
		c.Idle[cpu] = ns
	}
	for cpu, m := range tr.CPUHolders {
		for h, ns := range m {
			if h == "" {
				h = "none"
			}
			c.hold(cpu, h, ns)
		}
	}
	for _, m := range tr.RunningPerCPU {
		for th, ns := range m {
			c.Running[th] += ns
		}
	}
	return c
}

// dbCPUCount is what traceduck computed for run: the CPU intervals
// (cpu_intervals, the CPU model's view) and the threads' RUNNING
// intervals.
func dbCPUCount(t *testing.T, db *schema.DB, run int32) qnxCPUCount {
	t.Helper()
	c := newCPUCount()
	const from = ` FROM cpu_intervals i JOIN objects c ON c.run_id = i.run_id AND c.object_id = i.cpu_id
		LEFT JOIN objects h ON h.run_id = i.run_id AND h.object_id = i.holder_id
		WHERE i.run_id = ? AND NOT i.truncated `
	cpuOf := func(k string) int {
		n, err := strconv.Atoi(k)
		if err != nil {
			t.Fatalf("cpu %q", k)
		}
		return n
	}
	for k, ns := range dbtest.QueryCounts(t, db.SQL(), `SELECT c.native_id::VARCHAR, sum(i.dur)`+from+`AND i.busy GROUP BY ALL`, run) {
		c.Busy[cpuOf(k)] = ns
	}
	for k, ns := range dbtest.QueryCounts(t, db.SQL(), `SELECT c.native_id::VARCHAR, sum(i.dur)`+from+`AND NOT i.busy AND i.holder_id IS NOT NULL GROUP BY ALL`, run) {
		c.Idle[cpuOf(k)] = ns
	}
	for k, ns := range dbtest.QueryCounts(t, db.SQL(), `SELECT c.native_id || '|' || CASE WHEN h.object_id IS NULL THEN 'none' WHEN h.kind = 'thread' THEN h.pid || '/' || h.native_id
			WHEN h.kind = 'interrupt' THEN 'irq ' || h.native_id ELSE h.kind END, sum(i.dur)`+from+`GROUP BY ALL`, run) {
		cpu, h, _ := strings.Cut(k, "|")
		c.hold(cpuOf(cpu), h, ns)
	}
	for k, ns := range dbtest.QueryCounts(t, db.SQL(), `SELECT o.pid || '/' || o.native_id, sum(s.dur) FROM state_intervals s JOIN objects o USING (run_id, object_id)
		WHERE s.run_id = ? AND o.kind = 'thread' AND s.instance = 0 AND s.state = 'RUNNING' AND NOT s.truncated GROUP BY ALL`, run) {
		c.Running[k] = ns
	}
	return c
}

// recountQNXText recounts a traceprinter listing from its raw lines, the
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
// and THDESTROY end it).
func recountQNXText(path string) (qnxCPUCount, error) {
	f, err := os.Open(path)
	if err != nil {
		return qnxCPUCount{}, err
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		return qnxCPUCount{}, err
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
	c := newCPUCount()
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
			c.hold(n, cs.held, d)
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
		if s, ok := states[th]; ok && s.name == "RUNNING" {
			c.Running[th] += now - s.start
		}
		delete(states, th)
	}
	var last uint32
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
		n, _ := strconv.Atoi(m[2])
		if cpus[n] == nil {
			cpus[n] = &cpuState{}
		}
		switch {
		case m[3] == "THREAD":
			p, tm := pidRE.FindStringSubmatch(m[5]), tidRE.FindStringSubmatch(m[5])
			if p == nil || tm == nil {
				continue
			}
			th := p[1] + "/" + tm[1]
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
	return c, nil
}

// qnxRealTraces are the real traceprinter listings beside the repository.
func qnxRealTraces(t *testing.T) []string {
	files, _ := filepath.Glob(filepath.Join(shared, "testdata-external", "qnx", "*.txt"))
	if len(files) == 0 {
		t.Skip("no ../shared/testdata-external/qnx beside the repository")
	}
	return files
}

// TestCPUTruthQNX compares what traceduck makes of QNX traces' CPUs with
// counts it did not compute: the real traceprinter excerpt and the
// seed's listing recounted from their raw lines (recountQNXText), and
// generated traces against the simulator's truth and the recount of their
// text (the .kev renderings: checkTruth, from TestKevSameAsText). Exact: the listing gives every change of holder
// with its cycle count, and both sides floor the same 64-bit count to ns.
func TestCPUTruthQNX(t *testing.T) {
	check := func(t *testing.T, db *schema.DB, run int32, want qnxCPUCount) {
		t.Helper()
		if got := dbCPUCount(t, db, run); got.rows() != want.rows() {
			t.Errorf("traceduck's counts differ from the recount:\n%s", dbtest.Diff(want.rows(), got.rows()))
		}
	}
	t.Run("real-excerpt", func(t *testing.T) {
		for _, path := range qnxRealTraces(t) {
			want, err := recountQNXText(path)
			if err != nil {
				t.Fatal(err)
			}
			// Counted by hand too: the excerpt's 10 events are CONTROL
			// BUFFER and TIME, procnto's PROCCREATE_NAME, THCREATE of pid 1
			// tids 1..4, THREADY of tid 1 and THRECEIVE of tids 2 and 3. No
			// THRUNNING and no INT_ENTR: no CPU is ever known to be held
			// (no CPU interval, 0 ns busy, no holder) and no thread runs;
			// the three thread states are open at the end (cut).
			if rows := want.rows(); rows != "" {
				t.Fatalf("the recount of the excerpt finds holds:\n%s", rows)
			}
			db := dbtest.Open(t)
			res := dbtest.Ingest(t, db, path, ingest.Options{})
			check(t, db, res.RunID, want)
			if got := dbtest.Query(t, db.SQL(), `SELECT count(*) FROM cpu_intervals WHERE run_id = ?`, res.RunID); got != "0\n" {
				t.Errorf("CPU intervals: %s", got)
			}
			if got := dbtest.Query(t, db.SQL(), `SELECT count(*) FILTER (truncated), count(*) FROM state_intervals s JOIN objects o USING (run_id, object_id)
				WHERE s.run_id = ? AND o.kind = 'thread'`, res.RunID); got != "3 | 3\n" {
				t.Errorf("thread states (cut, all): %s", got)
			}
		}
	})
	t.Run("seed-listing", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "seed-listing.txt")
		if err := os.WriteFile(path, []byte(seedListing(t)), 0o644); err != nil {
			t.Fatal(err)
		}
		want, err := recountQNXText(path)
		if err != nil {
			t.Fatal(err)
		}
		if want.Busy[0] == 0 || want.Idle[0] == 0 || want.Holders[0]["irq 0"] == 0 || want.Holders[0]["none"] == 0 {
			t.Fatalf("the seed's listing should have busy, idle-thread, interrupt and no-holder time:\n%s", want.rows())
		}
		db := dbtest.Open(t)
		res := dbtest.Ingest(t, db, path, ingest.Options{})
		check(t, db, res.RunID, want)
	})
	t.Run("generated", func(t *testing.T) {
		for _, cfg := range truthConfigs {
			h, events, truth, err := tracegen.GenerateQNX(cfg)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			text := writeTrace(t, dir, "trace.txt", h, events, func(f *os.File, h qnxenc.Header, ev []qnxenc.Event) error { return qnxenc.WriteText(f, h, ev) })
			recount, err := recountQNXText(text)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := recount.rows(), truthCount(truth).rows(); got != want {
				t.Fatalf("%+v: the recount differs from the simulator's truth:\n%s", cfg, dbtest.Diff(want, got))
			}
			db := dbtest.Open(t)
			res := dbtest.Ingest(t, db, text, ingest.Options{})
			check(t, db, res.RunID, recount)
		}
	})
}
