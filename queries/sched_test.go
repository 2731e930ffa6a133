package queries_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	_ "github.com/traceduck/traceduck/ingest/all"
	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/internal/qnxenc"
	"github.com/traceduck/traceduck/internal/tracegen"
)

func writeTemp(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// handBTF: task A is activated at 0 and starts at 10 on Core_0; B,
// activated at 30, preempts it there and runs until 50; A resumes at 55 on
// Core_1 and terminates at 70. By hand: A's response 70, start delay 10,
// exec 20+15 = 35, ready 10+25 = 35, 1 preemption, 1 migration; B's
// response 20, exec 20. Waits for a CPU: A 0..10 (wakeup), A 30..55 on
// Core_1 (preemption), B 30..30 (wakeup).
const handBTF = `#version 2.1.4
#timeScale ns
0,Sim,0,STI,S_A,0,trigger
0,S_A,0,T,A,0,activate
10,Core_0,0,T,A,0,start
30,Sim,0,STI,S_B,0,trigger
30,S_B,0,T,B,0,activate
30,Core_0,0,T,A,0,preempt
30,Core_0,0,T,B,0,start
50,Core_0,0,T,B,0,terminate
55,Core_1,0,T,A,0,resume
70,Core_1,0,T,A,0,terminate
`

func TestSchedViewsByHand(t *testing.T) {
	db := dbtest.Open(t)
	dbtest.Ingest(t, db, writeTemp(t, "hand.btf", []byte(handBTF)), ingest.Options{})
	got := dbtest.Query(t, db.SQL(), `SELECT object, instance, woke_from, activation_ts, start_ts, end_ts, response, start_delay,
		exec, ready, waiting, preemptions, migrations, truncated FROM task_instances ORDER BY object`)
	want := "A | 0 | NULL | 0 | 10 | 70 | 70 | 10 | 35 | 35 | 0 | 1 | 1 | false\n" +
		"B | 0 | NULL | 30 | 30 | 50 | 20 | 0 | 20 | 0 | 0 | 0 | 0 | false\n"
	if got != want {
		t.Errorf("task_instances:\n%s\nwant:\n%s", got, want)
	}
	// A ran 10..30 and 55..70, B 30..50: nearest-rank percentiles of 20
	// and 15 are 15 (p50) and 20 (p90, p99).
	got = dbtest.Query(t, db.SQL(), `SELECT object, class, count, total_ns, max_ns, p50_ns, p90_ns, p99_ns, share FROM sched_stats ORDER BY object, class`)
	want = "A | ready | 2 | 35 | 25 | 10 | 25 | 25 | 0.5\n" +
		"A | running | 2 | 35 | 20 | 15 | 20 | 20 | 0.5\n" +
		"B | ready | 1 | 0 | 0 | 0 | 0 | 0 | 0\n" +
		"B | running | 1 | 20 | 20 | 20 | 20 | 20 | 1\n"
	if got != want {
		t.Errorf("sched_stats:\n%s\nwant:\n%s", got, want)
	}
	got = dbtest.Query(t, db.SQL(), `SELECT object, ready_ts, run_ts, latency, cpu, after, truncated FROM sched_latency ORDER BY object, ready_ts`)
	want = "A | 0 | 10 | 10 | 0 | wakeup | false\n" +
		"A | 30 | 55 | 25 | 1 | preemption | false\n" +
		"B | 30 | 30 | 0 | 0 | wakeup | false\n"
	if got != want {
		t.Errorf("sched_latency:\n%s\nwant:\n%s", got, want)
	}
	// Windows of 50 ns from the first event at 0 to the last at 70. Core_0:
	// A 10..30 and B 30..50 in the first window, idle after; Core_1 idle
	// until A 55..70 in the second window, [50, 70).
	got = dbtest.Query(t, db.SQL(), `SELECT cpu, window_start, window_end, busy_ns, known_ns, load FROM cpu_load(50) ORDER BY ALL`)
	for _, line := range []string{
		"Core_0 | 0 | 50 | 40 | 40 | 0.8",
		"Core_1 | 50 | 70 | 15 | 15 | 0.75",
	} {
		if !strings.Contains(got, line+"\n") {
			t.Errorf("cpu_load(50) has no row %q:\n%s", line, got)
		}
	}
	got = dbtest.Query(t, db.SQL(), `SELECT cpu, holder, busy, ns FROM cpu_load_by_holder(50) WHERE window_start = 0 AND busy ORDER BY ALL`)
	if want := "Core_0 | A | true | 20\nCore_0 | B | true | 20\n"; got != want {
		t.Errorf("cpu_load_by_holder(50), first window:\n%s\nwant:\n%s", got, want)
	}
}

// TestTaskInstancesBTFTruth: over a generated 2-core BTF trace, the
// instances, their termination, running and ready time per task equal what
// the generator simulated, and the CPUs' busy time too.
func TestTaskInstancesBTFTruth(t *testing.T) {
	var buf bytes.Buffer
	truth, err := tracegen.WriteBTF(&buf, tracegen.Config{Events: 20000, Cores: 2, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	db := dbtest.Open(t)
	dbtest.Ingest(t, db, writeTemp(t, "gen.btf", buf.Bytes()), ingest.Options{})
	got := dbtest.Query(t, db.SQL(), `SELECT object, count(*), count(*) FILTER (WHERE NOT truncated),
		sum(exec) FILTER (WHERE NOT truncated), sum(ready - start_delay) FILTER (WHERE NOT truncated)
		FROM task_instances GROUP BY object ORDER BY object`)
	// Running and Ready of the truth count complete intervals of every
	// instance; an unterminated instance's complete intervals are added
	// from sched_intervals.
	open := dbtest.Query(t, db.SQL(), `SELECT i.object, coalesce(sum(s.dur) FILTER (WHERE s.class = 'running' AND NOT s.truncated), 0),
		coalesce(sum(s.dur) FILTER (WHERE s.state = 'ready' AND NOT s.truncated), 0)
		FROM task_instances i JOIN sched_intervals s ON s.run_id = i.run_id AND s.object_id = i.object_id AND s.instance = i.instance
		WHERE i.truncated GROUP BY i.object`)
	extra := map[string][2]int64{}
	for _, line := range strings.Split(strings.TrimSpace(open), "\n") {
		var name string
		var run, ready int64
		if line == "" {
			continue
		}
		if _, err := fmt.Sscanf(strings.ReplaceAll(line, " | ", " "), "%s %d %d", &name, &run, &ready); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		extra[name] = [2]int64{run, ready}
	}
	var want strings.Builder
	names := make([]string, 0, len(truth.Instances))
	for name := range truth.Instances {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		// A task ready at the start of its instance only by preemption:
		// ready minus start_delay is the time in state ready.
		fmt.Fprintf(&want, "%s | %d | %d | %d | %d\n", name, truth.Instances[name], truth.Terminated[name],
			truth.Running[name]-extra[name][0], truth.Ready[name]-extra[name][1])
	}
	if got != want.String() {
		t.Errorf("per task: instances, terminated, running, ready:\n%s\nwant:\n%s", got, want.String())
	}
	got = dbtest.Query(t, db.SQL(), `SELECT cpu, sum(ns) FROM cpu_utilization WHERE busy GROUP BY cpu ORDER BY cpu`)
	want.Reset()
	for _, core := range []string{"Core_0", "Core_1"} {
		fmt.Fprintf(&want, "%s | %d\n", core, truth.CoreBusy[core])
	}
	if got != want.String() {
		t.Errorf("busy per core:\n%s\nwant:\n%s", got, want.String())
	}
}

// truthInterval is a complete thread interval of a generator's truth.
type truthInterval struct {
	thread     string
	class      string
	start, end int64
	cpu        int
}

// jobsOf computes task_instances a second way, in Go, from complete
// intervals: maximal runs of contiguous running/ready intervals, each
// preceded and followed by a contiguous blocked interval (so that both
// ends are known from complete intervals). One line per job, as the SQL
// test query prints it.
func jobsOf(ivs []truthInterval, migrations bool) []string {
	by := map[string][]truthInterval{}
	for _, iv := range ivs {
		by[iv.thread] = append(by[iv.thread], iv)
	}
	var out []string
	for thread, list := range by {
		sort.Slice(list, func(i, j int) bool { return list[i].start < list[j].start })
		for i := 1; i < len(list); i++ {
			if list[i].class == "blocked" || list[i-1].class != "blocked" || list[i-1].end != list[i].start {
				continue
			}
			j := i
			for j+1 < len(list) && list[j+1].class != "blocked" && list[j+1].start == list[j].end {
				j++
			}
			if j+1 >= len(list) || list[j+1].class != "blocked" || list[j+1].start != list[j].end {
				continue
			}
			var exec, ready, pre, mig int64
			start, lastCPU := int64(-1), -1
			for k := i; k <= j; k++ {
				iv := list[k]
				switch iv.class {
				case "running":
					exec += iv.end - iv.start
					if start < 0 {
						start = iv.start
					}
					if lastCPU >= 0 && iv.cpu != lastCPU {
						mig++
					}
					lastCPU = iv.cpu
				case "ready":
					ready += iv.end - iv.start
					if k > i && list[k-1].class == "running" {
						pre++
					}
				}
			}
			if !migrations {
				mig = 0
			}
			out = append(out, fmt.Sprintf("%s | %d | %d | %d | %d | %d | %d | %d", thread, list[i].start, start, list[j].end, exec, ready, pre, mig))
		}
	}
	sort.Strings(out)
	return out
}

// interiorJobs is the SQL side of jobsOf: the instances whose both ends
// are inside the complete intervals of their object.
const interiorJobs = `WITH bounds AS (
	SELECT run_id, object_id, min(start_ts) FILTER (WHERE NOT truncated) AS lo, max(end_ts) FILTER (WHERE NOT truncated) AS hi
	FROM sched_intervals GROUP BY ALL)
SELECT %s, i.activation_ts, coalesce(i.start_ts, -1), i.end_ts, i.exec, i.ready, i.preemptions, %s
FROM task_instances i JOIN bounds b USING (run_id, object_id) JOIN objects o USING (run_id, object_id)
WHERE NOT i.truncated AND i.woke_from IS NOT NULL AND i.activation_ts > b.lo AND i.end_ts < b.hi`

func sqlLines(t *testing.T, s string) []string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	sort.Strings(lines)
	return lines
}

func compareJobs(t *testing.T, got, want []string) {
	t.Helper()
	if len(want) < 100 {
		t.Fatalf("only %d jobs to compare", len(want))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		n := 0
		for i := 0; i < len(got) || i < len(want); i++ {
			var g, w string
			if i < len(got) {
				g = got[i]
			}
			if i < len(want) {
				w = want[i]
			}
			if g != w && n < 5 {
				t.Errorf("job %d: got %q, want %q", i, g, w)
				n++
			}
		}
		t.Errorf("%d jobs, want %d", len(got), len(want))
	}
}

// TestTaskInstancesQNXTruth: task_instances of a generated QNX trace equal
// the jobs computed in Go from the generator's thread states.
func TestTaskInstancesQNXTruth(t *testing.T) {
	h, events, truth, err := tracegen.GenerateQNX(tracegen.QNXConfig{Events: 30000, CPUs: 2, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := qnxenc.WriteText(&buf, h, events); err != nil {
		t.Fatal(err)
	}
	db := dbtest.Open(t)
	dbtest.Ingest(t, db, writeTemp(t, "gen.txt", buf.Bytes()), ingest.Options{})
	var ivs []truthInterval
	for _, iv := range truth.ThreadStates {
		c := "blocked"
		switch iv.State {
		case "RUNNING":
			c = "running"
		case "READY":
			c = "ready"
		}
		ivs = append(ivs, truthInterval{fmt.Sprintf("%d/%d", iv.Pid, iv.Tid), c, iv.StartNS, iv.EndNS, iv.CPU})
	}
	got := sqlLines(t, dbtest.Query(t, db.SQL(), fmt.Sprintf(interiorJobs, "o.pid || '/' || o.native_id", "i.migrations")))
	compareJobs(t, got, jobsOf(ivs, true))
}

// TestTaskInstancesBagetTruth: the same for a generated Baget log.
func TestTaskInstancesBagetTruth(t *testing.T) {
	log, desc, truth, err := tracegen.GenerateBaget(tracegen.BagetConfig{Events: 20000, CPUs: 2, Seed: 6, ABI: "le32"})
	if err != nil {
		t.Fatal(err)
	}
	db := dbtest.Open(t)
	dbtest.Ingest(t, db, writeTemp(t, "gen.blog", log), ingest.Options{Params: map[string]string{"description": writeTemp(t, "d.xml", desc)}})
	var ivs []truthInterval
	for _, iv := range truth.ThreadStates {
		c := map[string]string{"thrRun": "running", "thrReady": "ready", "thrInterrupted": "ready", "thrNotReady": "blocked"}[iv.State]
		ivs = append(ivs, truthInterval{fmt.Sprintf("%d/%d", iv.Thread.Pid, iv.Thread.OID), c, iv.StartNS, iv.EndNS, 0})
	}
	got := sqlLines(t, dbtest.Query(t, db.SQL(), fmt.Sprintf(interiorJobs, "o.pid || '/' || o.native_id", "0")))
	compareJobs(t, got, jobsOf(ivs, false))
}

// TestSchedViewsTLV: the bundled tiny TLV sample, by hand from its log:
// the uart interrupt handler runs 950..970 µs; motor blocks at 190 µs, is
// woken at 962 µs and switched in at 975 µs (a wait of 13 µs), sensor
// preempts it from 1500 to 1800 µs (300 µs); the trace ends at 1800 µs.
func TestSchedViewsTLV(t *testing.T) {
	db := dbtest.Open(t)
	dbtest.Ingest(t, db, "../samples/tlv/tiny.log", ingest.Options{Format: "tlv", Params: map[string]string{"resources": "../samples/tlv/tiny.res", "headers": "../samples/tlv/tiny.resh", "rules": "../samples/tlv/tiny.cnv"}})
	got := dbtest.Query(t, db.SQL(), `SELECT object, woke_from, activation_ts, start_ts, end_ts, exec, ready, preemptions, truncated
		FROM task_instances WHERE object IN ('uart', 'motor') AND activation_ts > 200000 ORDER BY object`)
	want := "motor | state=blocked | 962000 | 975000 | 1800000 | 525000 | 313000 | 1 | true\n" +
		"uart | state=idle | 950000 | 950000 | 970000 | 20000 | 0 | 0 | false\n"
	if got != want {
		t.Errorf("task_instances:\n%s\nwant:\n%s", got, want)
	}
	got = dbtest.Query(t, db.SQL(), `SELECT ready_ts, run_ts, latency, after FROM sched_latency WHERE object = 'motor' AND NOT truncated ORDER BY ready_ts`)
	if want := "962000 | 975000 | 13000 | wakeup\n1500000 | 1800000 | 300000 | preemption\n"; got != want {
		t.Errorf("sched_latency of motor:\n%s\nwant:\n%s", got, want)
	}
	// The CPU model: motor 120..190 (it blocks), uart 950..970, motor
	// 975..1500, sensor 1500..1800: busy 70+20+525+300 = 915 µs of the
	// 1680 µs known; the idle thread (the header's CPU key Idle) and
	// nothing hold the rest, idle.
	got = dbtest.Query(t, db.SQL(), `SELECT cpu, busy_ns, known_ns FROM cpu_load(10000000)`)
	if want := "cpu 0 | 915000 | 1680000\n"; got != want {
		t.Errorf("cpu_load:\n%s\nwant:\n%s", got, want)
	}
	// Polling a spin lock holds the processor (the bundled headers' CPU
	// key) inside a task instance, as BTF's polling: waiting, not blocked.
	got = dbtest.Query(t, db.SQL(), `SELECT sched_class('tlv', 'Task', 'state=SPINNING'), sched_class('toppers-fmp', 'Task', 'state=PARKED'),
		sched_class('tlv', 'Task', 'state=RUNNING'), sched_class('tlv', 'Task', 'state=WAITING')`)
	if want := "waiting | waiting | running | blocked\n"; got != want {
		t.Errorf("sched_class: %s, want %s", got, want)
	}
}

// TestTaskInstancesDTraceTruth: the same for a generated DTrace event
// output (on-cpu/off-cpu; runnable after a preemption, sleeping after a
// block).
func TestTaskInstancesDTraceTruth(t *testing.T) {
	var buf bytes.Buffer
	truth, err := tracegen.WriteDTrace(&buf, tracegen.DTraceConfig{Lines: 30000, CPUs: 2, Processes: 3, Threads: 3, Seed: 8, Gap: true})
	if err != nil {
		t.Fatal(err)
	}
	db := dbtest.Open(t)
	dbtest.Ingest(t, db, writeTemp(t, "gen.d.txt", buf.Bytes()), ingest.Options{Format: "dtrace"})
	var ivs []truthInterval
	for _, iv := range truth.Intervals {
		if iv.Truncated || iv.Instance != 0 || strings.HasPrefix(iv.Object, "cpu ") || !strings.Contains(iv.Object, "/") {
			continue
		}
		c := map[string]string{"running": "running", "runnable": "ready"}[iv.State]
		if c == "" {
			c = "blocked"
		}
		ivs = append(ivs, truthInterval{iv.Object, c, iv.Start, iv.End, iv.CPU})
	}
	got := sqlLines(t, dbtest.Query(t, db.SQL(), fmt.Sprintf(interiorJobs, "o.name", "i.migrations")+" AND o.kind = 'thread'"))
	compareJobs(t, got, jobsOf(ivs, true))
}
