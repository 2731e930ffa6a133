package qnx_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/internal/qnxenc"
	"github.com/traceduck/traceduck/internal/tracegen"
	"github.com/traceduck/traceduck/schema"
)

// truthConfigs are the generated traces the ground-truth tests ingest.
var truthConfigs = []tracegen.QNXConfig{
	{Events: 20000, CPUs: 2, Seed: 1},
	{Events: 40000, CPUs: 4, Procs: 6, Seed: 7, CyclesPerSec: 1_999_999_999},
	{Events: 15000, CPUs: 1, Procs: 2, Seed: 3, CyclesPerSec: 33_333_333, StartCycles: 0x12_fff00000},
}

// writeTrace writes a generated trace as traceprinter text (or .kev with
// the kev writer) into dir.
func writeTrace(t *testing.T, dir, name string, h qnxenc.Header, events []qnxenc.Event, write func(*os.File, qnxenc.Header, []qnxenc.Event) error) string {
	t.Helper()
	path := filepath.Join(dir, name)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := write(f, h, events); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func intervalsText(in []tracegen.QNXInterval) string {
	rows := make([]string, len(in))
	for i, v := range in {
		rows[i] = fmt.Sprintf("%d | %d | %s | %d | %d | %d", v.Pid, v.Tid, v.State, v.StartNS, v.EndNS, v.CPU)
	}
	sort.Strings(rows)
	return strings.Join(rows, "\n")
}

func sortedRows(s string) string {
	rows := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	sort.Strings(rows)
	return strings.Join(rows, "\n")
}

// checkTruth compares a run with the generator's ground truth.
func checkTruth(t *testing.T, db *schema.DB, run int32, truth tracegen.QNXTruth) {
	t.Helper()
	q := func(sql string) string { return dbtest.Query(t, db.SQL(), sql, run) }
	const iv = `SELECT o.pid, o.native_id, s.state, s.start_ts, s.end_ts, s.cpu
		FROM state_intervals s JOIN objects o USING (run_id, object_id)
		WHERE s.run_id = ? AND o.kind = 'thread' AND NOT s.truncated AND s.instance = `
	if got, want := sortedRows(q(iv+"0")), intervalsText(truth.ThreadStates); got != want {
		t.Errorf("thread states differ (%d vs %d rows):\n%s", strings.Count(got, "\n")+1, len(truth.ThreadStates), firstDiff(got, want))
	}
	if got, want := sortedRows(q(iv+"1")), intervalsText(truth.KernelCalls); got != want {
		t.Errorf("kernel calls differ (%d vs %d rows):\n%s", strings.Count(got, "\n")+1, len(truth.KernelCalls), firstDiff(got, want))
	}
	checkSyncWaits(t, db, run, truth)
	var want []string
	for cpu, m := range truth.RunningPerCPU {
		for th, ns := range m {
			if ns > 0 {
				want = append(want, fmt.Sprintf("%d | %s | %d", cpu, th, ns))
			}
		}
	}
	sort.Strings(want)
	got := sortedRows(q(`SELECT s.cpu, o.pid || '/' || o.native_id, sum(s.dur) FROM state_intervals s JOIN objects o USING (run_id, object_id)
		WHERE s.run_id = ? AND o.kind = 'thread' AND s.instance = 0 AND s.state = 'RUNNING' AND NOT s.truncated GROUP BY ALL HAVING sum(s.dur) > 0`))
	if got != strings.Join(want, "\n") {
		t.Errorf("running per cpu differs:\n%s", firstDiff(got, strings.Join(want, "\n")))
	}
	want = want[:0]
	for v, ns := range truth.InterruptNS {
		want = append(want, fmt.Sprintf("%d | %d", v, ns))
	}
	sort.Strings(want)
	got = sortedRows(q(`SELECT o.native_id, sum(s.dur) FROM state_intervals s JOIN objects o USING (run_id, object_id)
		WHERE s.run_id = ? AND o.kind = 'interrupt' AND NOT s.truncated GROUP BY ALL`))
	if got != strings.Join(want, "\n") {
		t.Errorf("interrupt time differs:\n%s", firstDiff(got, strings.Join(want, "\n")))
	}
	checkCPUTruth(t, db, run, truth)
	checkMessages(t, db, run, truth)
	want = want[:0]
	for k, n := range truth.EventCounts {
		want = append(want, fmt.Sprintf("%s | %d", k, n))
	}
	sort.Strings(want)
	got = sortedRows(q(`SELECT class || '/' || event, count FROM event_counts WHERE run_id = ?`))
	if got != strings.Join(want, "\n") {
		t.Errorf("event counts differ:\n%s", firstDiff(got, strings.Join(want, "\n")))
	}
	if got, want := q(`SELECT event_count, first_ts, last_ts FROM runs WHERE run_id = ?`), fmt.Sprintf("%d | %d | %d\n", truth.Events, truth.FirstNS, truth.LastNS); got != want {
		t.Errorf("runs: got %s want %s", got, want)
	}
	if got := q(`SELECT severity, message, count FROM diagnostics WHERE run_id = ? AND severity <> 'info'`); got != "" {
		t.Errorf("warnings on a generated trace:\n%s", got)
	}
}

// checkCPUTruth compares the run's CPUs with what the simulator knows of
// who held them: the holds a later event ended (per CPU and holder, busy,
// idle-thread), the hold open at the end (cut), the idle threads, and the
// process level (level 1 of the CPU states): procnto's level has the time
// of its busy threads only, its idle threads' time is at level 1 "idle".
func checkCPUTruth(t *testing.T, db *schema.DB, run int32, truth tracegen.QNXTruth) {
	t.Helper()
	q := func(sql string) string { return dbtest.Query(t, db.SQL(), sql, run) }
	if got, want := dbCPUCount(t, db, run), truthCount(truth); got.Rows() != want.Rows() {
		t.Errorf("CPU holders differ from the truth:\n%s", dbtest.Diff(want.Rows(), got.Rows()))
	}
	var open []string
	for cpu, h := range truth.CPUOpen {
		if h.Holder == "" {
			h.Holder = "none"
		}
		open = append(open, fmt.Sprintf("%d | %s | %d | %d", cpu, h.Holder, h.StartNS, truth.LastNS))
	}
	sort.Strings(open)
	got := sortedRows(q(`SELECT c.native_id, CASE WHEN h.object_id IS NULL THEN 'none' WHEN h.kind = 'thread' THEN h.pid || '/' || h.native_id
			WHEN h.kind = 'interrupt' THEN 'irq ' || h.native_id ELSE h.kind END, i.start_ts, i.end_ts
		FROM cpu_intervals i JOIN objects c ON c.run_id = i.run_id AND c.object_id = i.cpu_id
		LEFT JOIN objects h ON h.run_id = i.run_id AND h.object_id = i.holder_id
		WHERE i.run_id = ? AND i.truncated`))
	if want := strings.Join(open, "\n"); got != want {
		t.Errorf("CPU holds open at the end:\n%s", firstDiff(got, want))
	}
	// the idle threads that ran are marked idle, no other object is
	ran := map[string]bool{}
	for _, m := range truth.CPUHolders {
		for h := range m {
			ran[h] = true
		}
	}
	for _, h := range truth.CPUOpen {
		ran[h.Holder] = true
	}
	var idle []string
	for _, th := range truth.IdleThreads {
		if ran[th] {
			idle = append(idle, th)
		}
	}
	sort.Strings(idle)
	if got, want := sortedRows(q(`SELECT pid || '/' || native_id FROM objects WHERE run_id = ? AND json_extract_string(attrs, '$.idle') = 'true'`)), strings.Join(idle, "\n"); got != want {
		t.Errorf("idle threads: got %q want %q", got, want)
	}
	// level 1: "idle" = the idle threads' and no holder's time, procnto's
	// process = its other threads' time (cut holds included: the level
	// trace ends at the last event)
	isIdle := map[string]bool{"": true}
	for _, th := range truth.IdleThreads {
		isIdle[th] = true
	}
	lv1 := map[string]int64{}
	add := func(cpu int, h string, ns int64) {
		switch {
		case isIdle[h]:
			lv1[fmt.Sprintf("%d | idle", cpu)] += ns
		case strings.HasPrefix(h, "1/"):
			lv1[fmt.Sprintf("%d | proc/boot/procnto-smp-instr", cpu)] += ns
		}
	}
	for cpu, m := range truth.CPUHolders {
		for h, ns := range m {
			add(cpu, h, ns)
		}
	}
	for cpu, h := range truth.CPUOpen {
		add(cpu, h.Holder, truth.LastNS-h.StartNS)
	}
	want := make([]string, 0, len(lv1))
	for k, ns := range lv1 {
		if ns > 0 {
			want = append(want, fmt.Sprintf("%s | %d", k, ns))
		}
	}
	sort.Strings(want)
	got = sortedRows(q(`SELECT c.native_id, t.state, sum(t.dur) FROM state_trace(1, run := ?, object_kind := 'cpu') t
		JOIN objects c ON c.run_id = t.run_id AND c.object_id = t.object_id
		WHERE t.state IN ('idle', 'proc/boot/procnto-smp-instr') GROUP BY ALL HAVING sum(t.dur) > 0`))
	if got != strings.Join(want, "\n") {
		t.Errorf("CPU level 1 (process):\n%s", firstDiff(got, strings.Join(want, "\n")))
	}
}

func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var a, b string
		if i < len(g) {
			a = g[i]
		}
		if i < len(w) {
			b = w[i]
		}
		if a != b {
			return fmt.Sprintf("row %d:\n   got %s\n  want %s", i+1, a, b)
		}
	}
	return ""
}

func TestTextTruth(t *testing.T) {
	for _, cfg := range truthConfigs {
		t.Run(fmt.Sprintf("cpus%d-seed%d", cfg.CPUs, cfg.Seed), func(t *testing.T) {
			h, events, truth, err := tracegen.GenerateQNX(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if truth.Wraps < 1 {
				t.Fatalf("the trace does not wrap")
			}
			path := writeTrace(t, t.TempDir(), "trace.txt", h, events, func(f *os.File, h qnxenc.Header, ev []qnxenc.Event) error { return qnxenc.WriteText(f, h, ev) })
			db := dbtest.Open(t)
			res := dbtest.Ingest(t, db, path, ingest.Options{Format: "qnx"})
			checkTruth(t, db, res.RunID, truth)
		})
	}
}

// checkSyncWaits compares resource_waits with the generator's waits in
// sync calls: complete ones per object and thread, the ones the end cut,
// and no holds.
func checkSyncWaits(t *testing.T, db *schema.DB, run int32, truth tracegen.QNXTruth) {
	t.Helper()
	var want []string
	n := int64(0)
	for k, w := range truth.SyncWaits {
		want = append(want, fmt.Sprintf("%s | %d | %d", k, w.N, w.NS))
		n += w.N
	}
	if n == 0 {
		t.Errorf("the generator made no wait in a sync call")
	}
	sort.Strings(want)
	got := sortedRows(dbtest.Query(t, db.SQL(), `SELECT w.resource || '|' || a.pid || '/' || a.native_id, count(*), sum(w.dur)
		FROM resource_waits w JOIN objects a ON a.run_id = w.run_id AND a.object_id = w.waiter_id
		WHERE w.run_id = ? AND NOT w.truncated AND w.resource_kind = split_part(w.resource, ' ', 1) GROUP BY ALL`, run))
	if got != strings.Join(want, "\n") {
		t.Errorf("waits in sync calls differ:\n%s", firstDiff(got, strings.Join(want, "\n")))
	}
	got = dbtest.Query(t, db.SQL(), `SELECT count(*) FILTER (WHERE truncated), count(*) FILTER (WHERE relation = 'hold' OR ended = 'gave_up')
		FROM resource_intervals WHERE run_id = ?`, run)
	if w := fmt.Sprintf("%d | 0\n", truth.SyncOpen); got != w {
		t.Errorf("waits cut by the end, holds or waits given up: got %s, want %s", got, w)
	}
}
