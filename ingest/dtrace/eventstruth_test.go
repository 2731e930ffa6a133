package dtrace

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/internal/tracegen"
)

// TestEventsTruth: traces of the simulator in internal/tracegen (threads
// on CPUs, system calls blocking and not, pid-provider calls around
// system calls, nested interrupts, idle CPUs; switches at one instant as
// bpftrace prints them, or with a gap as DTrace does) give exactly the
// state intervals the simulator lived (a CPU's: its holder over time, the
// thread, idle/N, switching/N or the interrupt), the system call latencies
// it timed, and what cpu_utilization adds up (per CPU and holder, busy per
// CPU) and the running time of each thread.
func TestEventsTruth(t *testing.T) {
	db := dbtest.Open(t)
	kinds := map[string]int{}
	for i, cfg := range []tracegen.DTraceConfig{
		{Lines: 3000, CPUs: 1, Processes: 2, Threads: 2, Seed: 1},
		{Lines: 5000, CPUs: 2, Processes: 3, Threads: 2, Seed: 2, Gap: true},
		{Lines: 20000, CPUs: 4, Processes: 5, Threads: 3, Seed: 3, Gap: true},
		{Lines: 20000, CPUs: 8, Processes: 2, Threads: 2, Seed: 4},
	} {
		t.Run(fmt.Sprintf("%d", i), func(t *testing.T) {
			var buf bytes.Buffer
			truth, err := tracegen.WriteDTrace(&buf, cfg)
			if err != nil {
				t.Fatal(err)
			}
			left, err := ingestEventsBatch(t, db, fmt.Sprintf("truth%d", i), buf.Bytes(), false, 4096)
			if err != nil {
				t.Fatal(err)
			}
			if len(left) != 0 {
				t.Fatalf("lines left: %v", left[:min(len(left), 10)])
			}
			run := i + 1
			if n := dbtest.Query(t, db.SQL(), "SELECT count(*) FROM events WHERE run_id = $1", run); n != fmt.Sprintf("%d\n", truth.Lines) {
				t.Fatalf("events: %s, lines %d", n, truth.Lines)
			}
			if d := dbtest.Query(t, db.SQL(), "SELECT message FROM diagnostics WHERE run_id = $1", run); d != "" {
				t.Errorf("diagnostics on a consistent trace:\n%s", d)
			}
			want := tracegen.IntervalsText(truth.Intervals)
			switching := 0
			for _, iv := range truth.Intervals {
				st := iv.State
				if i := strings.IndexByte(st, '/'); iv.Holder != "" && i > 0 {
					st = st[:i] // idle/N, switching/N
				}
				kinds[st]++
				if st == "switching" {
					switching++
				}
			}
			got := dbtest.Query(t, db.SQL(), `SELECT o.name, CASE WHEN o.kind = 'cpu' THEN coalesce(h.name, '-') ELSE s.instance::VARCHAR END,
				s.state, s.start_ts, s.end_ts, coalesce(s.cpu, -1), s.truncated
				FROM state_intervals s JOIN objects o USING (run_id, object_id)
				LEFT JOIN objects h ON h.run_id = s.run_id AND h.object_id = s.instance AND o.kind = 'cpu'
				WHERE s.run_id = $1
				ORDER BY o.name, CASE WHEN o.kind = 'cpu' THEN 0 ELSE s.instance END, s.start_ts, s.end_ts`, run)
			if got != want {
				t.Errorf("state intervals differ from the truth:\n%s", dbtest.Diff(want, got))
			}
			held, busy, runs := truth.CPUs.Rows(truth.Running)
			dbtest.SameCPURows(t, db.SQL(), int32(run), held, busy, runs)
			if cfg.Gap && switching == 0 || !cfg.Gap && switching > 0 {
				t.Errorf("%d switching intervals with Gap=%v", switching, cfg.Gap)
			}

			// System call latency straight from state_intervals: the
			// intervals opened by a syscall entry, complete ones.
			var wantLat strings.Builder
			names := make([]string, 0, len(truth.Syscalls))
			for n := range truth.Syscalls {
				names = append(names, n)
			}
			sort.Strings(names)
			for _, n := range names {
				var sum, mx int64
				for _, d := range truth.Syscalls[n] {
					sum += d
					mx = max(mx, d)
				}
				fmt.Fprintf(&wantLat, "%s | %d | %d | %d\n", n, len(truth.Syscalls[n]), sum, mx)
			}
			gotLat := dbtest.Query(t, db.SQL(), `SELECT s.state, count(*), sum(s.dur), max(s.dur)
				FROM state_intervals s JOIN events e ON e.run_id = s.run_id AND e.seq = s.start_seq
				WHERE s.run_id = $1 AND e.class = 'syscall' AND NOT s.truncated GROUP BY s.state ORDER BY s.state`, run)
			if gotLat != wantLat.String() {
				t.Errorf("syscall latencies:\n%s\nwant:\n%s", gotLat, wantLat.String())
			}
		})
	}
	// The runs exercise what they are meant to.
	for _, st := range []string{"running", "sleeping", "runnable", "idle", "switching", "handler", "malloc", "mmap", "read", "write"} {
		if kinds[st] == 0 {
			t.Errorf("no %s interval in the truth", st)
		}
	}
}
