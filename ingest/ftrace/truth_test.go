package ftrace

import (
	"bytes"
	"database/sql"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/internal/tracegen"
)

// TestTruth: traces of the simulator in internal/tracegen (threads of
// several processes on CPUs; system calls blocking in S or D and not;
// preemptions in R+; interrupts with softirqs after them; wakeups from
// idle CPUs' timer interrupts and from busy CPUs; short-lived threads
// forked, woken new, exiting through Z and freed) give exactly the state
// intervals the simulator lived (a CPU's: its holder over time, the
// thread, swapper/N or the interrupt), the system call latencies it
// timed, and what cpu_utilization adds up (per CPU and holder, busy per
// CPU) and the running time of each thread, with and without the TGID
// column and sched_waking.
func TestTruth(t *testing.T) {
	db := dbtest.Open(t)
	states := map[string]int{}
	for i, cfg := range []tracegen.FtraceConfig{
		{Lines: 3000, CPUs: 1, Processes: 2, Threads: 2, Seed: 1},
		{Lines: 5000, CPUs: 2, Processes: 3, Threads: 2, Seed: 2, TGID: true, Waking: true},
		{Lines: 20000, CPUs: 4, Processes: 5, Threads: 3, Seed: 3, Waking: true},
		{Lines: 20000, CPUs: 8, Processes: 2, Threads: 2, Seed: 4, TGID: true},
	} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			var buf bytes.Buffer
			truth, err := tracegen.WriteFtrace(&buf, cfg)
			if err != nil {
				t.Fatal(err)
			}
			run, err := ingestText(t, db, fmt.Sprintf("truth%d", i), buf.Bytes(), false, 4096)
			if err != nil {
				t.Fatal(err)
			}
			if n := dbtest.Query(t, db.SQL(), "SELECT count(*) FROM events WHERE run_id = $1", run); n != fmt.Sprintf("%d\n", truth.Lines) {
				t.Fatalf("events: %s, lines %d", n, truth.Lines)
			}
			if d := dbtest.Query(t, db.SQL(), "SELECT message FROM diagnostics WHERE run_id = $1", run); d != "" {
				t.Errorf("diagnostics on a consistent trace:\n%s", d)
			}
			want := tracegen.FtraceIntervalsText(truth.Intervals)
			for _, iv := range truth.Intervals {
				states[iv.State]++
			}
			if got := dbtest.Query(t, db.SQL(), intervalsSQL, run); got != want {
				t.Errorf("state intervals differ from the truth:\n%s", dbtest.Diff(want, got))
			}
			cpuTruth(t, db.SQL(), run, truth.CPUs, truth.Running)

			// System call latency straight from state_intervals: the
			// complete raw_syscalls intervals (instance 1).
			var wantLat strings.Builder
			var nrs []int
			for n := range truth.Syscalls {
				nrs = append(nrs, n)
			}
			sort.Ints(nrs)
			for _, n := range nrs {
				var sum, mx int64
				for _, d := range truth.Syscalls[n] {
					sum += d
					mx = max(mx, d)
				}
				fmt.Fprintf(&wantLat, "%d | %d | %d | %d\n", n, len(truth.Syscalls[n]), sum, mx)
			}
			gotLat := dbtest.Query(t, db.SQL(), `SELECT substr(state, 4)::INT AS nr, count(*), sum(dur), max(dur)
				FROM state_intervals WHERE run_id = $1 AND instance = 1 AND state LIKE 'NR %' AND NOT truncated GROUP BY state ORDER BY nr`, run)
			if gotLat != wantLat.String() {
				t.Errorf("syscall latencies:\n%s\nwant:\n%s", gotLat, wantLat.String())
			}
			if cfg.TGID {
				if p := dbtest.Query(t, db.SQL(), "SELECT count(*) FROM objects WHERE run_id = $1 AND kind = 'process'", run); p == "0\n" {
					t.Error("no process objects from the TGID column")
				}
			}
		})
	}
	// The runs exercise what they are meant to.
	for _, st := range []string{"running", "runnable", "sleeping", "uninterruptible", "Z", "swapper/0", "handler", "NR 63", "irq 27 arch_timer", "softirq TIMER"} {
		if states[st] == 0 {
			t.Errorf("no %s interval in the truth", st)
		}
	}
}

// cpuTruth compares what cpu_utilization adds up (per CPU and holder; busy
// per CPU) and the complete running intervals of each thread with the
// simulator's sums.
func cpuTruth(t *testing.T, db *sql.DB, run int32, sums tracegen.CPUSums, running map[string]int64) {
	t.Helper()
	var held, busy, runs []string
	for c, hs := range sums.Held {
		for h, ns := range hs {
			held = append(held, fmt.Sprintf("%s | %s | %d", c, h, ns))
		}
		busy = append(busy, fmt.Sprintf("%s | %d", c, sums.Busy[c]))
	}
	for th, ns := range running {
		runs = append(runs, fmt.Sprintf("%s | %d", th, ns))
	}
	for _, c := range []struct {
		what string
		want []string
		sql  string
	}{
		{"held per CPU and holder", held, `SELECT cpu, holder, ns FROM cpu_utilization WHERE run_id = $1`},
		{"busy per CPU", busy, `SELECT cpu, coalesce(sum(ns) FILTER (WHERE busy), 0) FROM cpu_utilization WHERE run_id = $1 GROUP BY cpu`},
		{"running per thread", runs, `SELECT o.name, sum(s.dur) FROM state_intervals s JOIN objects o USING (run_id, object_id)
			WHERE s.run_id = $1 AND o.kind = 'thread' AND s.instance = 0 AND s.state = 'running' AND NOT s.truncated GROUP BY o.name`},
	} {
		sort.Strings(c.want)
		got := strings.Split(strings.TrimSuffix(dbtest.Query(t, db, c.sql, run), "\n"), "\n")
		sort.Strings(got)
		if g, w := strings.Join(got, "\n"), strings.Join(c.want, "\n"); g != w {
			t.Errorf("%s:\n%s", c.what, dbtest.Diff(w+"\n", g+"\n"))
		}
	}
}
