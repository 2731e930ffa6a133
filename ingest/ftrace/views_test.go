package ftrace

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/internal/tracegen"
)

// TestViews: the views every format answers (sched_stats, task_instances,
// sched_latency, cpu_load, state_stats) answer on an ftrace run, with the
// figures computed a second way from the simulator's truth: per thread,
// the running time, the number of activations (maximal runs of running
// and runnable intervals, as task_instances delimits them) with their
// running time, the waits for a CPU (a runnable interval followed at
// once by running); per CPU the busy time.
func TestViews(t *testing.T) {
	var buf bytes.Buffer
	truth, err := tracegen.WriteFtrace(&buf, tracegen.FtraceConfig{Lines: 6000, CPUs: 2, Processes: 3, Threads: 2, Seed: 21, TGID: true, Waking: true})
	if err != nil {
		t.Fatal(err)
	}
	db := dbtest.Open(t)
	run, err := ingestText(t, db, "views", buf.Bytes(), false, 1000)
	if err != nil {
		t.Fatal(err)
	}
	type figs struct{ running, runCount, jobs, jobExec, waits, waitNs int64 }
	threads := map[string]*figs{}
	busy := map[string]int64{}
	var prev *tracegen.FtraceInterval
	for i := range truth.Intervals {
		iv := &truth.Intervals[i]
		if strings.HasPrefix(iv.Object, "cpu ") {
			if !iv.Idle {
				busy[iv.Object] += iv.End - iv.Start
			}
			continue
		}
		if iv.Instance != 0 || strings.HasPrefix(iv.Object, "irq ") || strings.HasPrefix(iv.Object, "softirq ") {
			continue
		}
		f := threads[iv.Object]
		if f == nil {
			f = &figs{}
			threads[iv.Object] = f
			prev = nil
		}
		active := iv.State == "running" || iv.State == "runnable"
		if iv.State == "running" {
			if !iv.Truncated {
				f.running += iv.End - iv.Start
				f.runCount++
			}
		}
		if active && (prev == nil || !(prev.State == "running" || prev.State == "runnable") || prev.End != iv.Start) {
			f.jobs++
		}
		if iv.State == "running" {
			f.jobExec += iv.End - iv.Start
			if prev != nil && prev.State == "runnable" && prev.End == iv.Start {
				f.waits++
				f.waitNs += prev.End - prev.Start
			}
		}
		prev = iv
	}
	var names []string
	for n := range threads {
		names = append(names, n)
	}
	sort.Strings(names)
	var wantStats, wantJobs, wantWaits strings.Builder
	for _, n := range names {
		f := threads[n]
		if f.runCount > 0 {
			fmt.Fprintf(&wantStats, "%s | %d | %d\n", n, f.runCount, f.running)
		}
		if f.jobs > 0 {
			fmt.Fprintf(&wantJobs, "%s | %d | %d\n", n, f.jobs, f.jobExec)
		}
		if f.waits > 0 {
			fmt.Fprintf(&wantWaits, "%s | %d | %d\n", n, f.waits, f.waitNs)
		}
	}
	for _, c := range []struct{ name, sql, want string }{
		{"sched_stats", `SELECT object, count, total_ns FROM sched_stats WHERE run_id = $1 AND class = 'running' AND count > 0 ORDER BY object`, wantStats.String()},
		{"state_stats", `SELECT object, count, total_ns FROM state_stats WHERE run_id = $1 AND kind = 'thread' AND level = 0 AND state = 'running' AND count > 0 ORDER BY object`, wantStats.String()},
		{"task_instances", `SELECT object, count(*), sum(exec) FROM task_instances WHERE run_id = $1 GROUP BY object ORDER BY object`, wantJobs.String()},
		{"sched_latency", `SELECT object, count(*), sum(latency) FROM sched_latency WHERE run_id = $1 GROUP BY object ORDER BY object`, wantWaits.String()},
		{"cpu_load", `SELECT cpu, sum(busy_ns) FROM cpu_load(1000000) WHERE run_id = $1 GROUP BY cpu ORDER BY cpu`, fmt.Sprintf("cpu 0 | %d\ncpu 1 | %d\n", busy["cpu 0"], busy["cpu 1"])},
	} {
		got := dbtest.Query(t, db.SQL(), c.sql, run)
		if got != c.want {
			t.Errorf("%s:\n%s", c.name, dbtest.Diff(c.want, got))
		}
		if strings.Count(got, "\n") < 2 {
			t.Errorf("%s: %d rows", c.name, strings.Count(got, "\n"))
		}
	}
	// The CPU states aggregate to busy/idle at the top level, and a
	// thread's holder name finds its object.
	if got := dbtest.Query(t, db.SQL(), `SELECT DISTINCT state FROM state_stats WHERE run_id = $1 AND kind = 'cpu' AND level = 3 ORDER BY state`, run); got != "busy\nidle\n" {
		t.Errorf("cpu states at level 3: %q", got)
	}
	if got := dbtest.Query(t, db.SQL(), `SELECT count(*) FROM cpu_intervals WHERE run_id = $1 AND busy AND holder_id IS NULL`, run); got != "0\n" {
		t.Errorf("busy cpu intervals without a holder object: %s", got)
	}
}
