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
			held, busy, runs := truth.CPUs.Rows(truth.Running)
			dbtest.SameCPURows(t, db.SQL(), run, held, busy, runs)

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
