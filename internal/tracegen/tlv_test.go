package tracegen_test

import (
	"bytes"
	"database/sql"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	_ "github.com/traceduck/traceduck/ingest/all"
	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/internal/tracegen"
)

// writeTLV writes a log and its resource file into dir.
func writeTLV(t testing.TB, dir string, cfg tracegen.Config, style tracegen.TLVStyle) (logPath, resPath string, tr tracegen.TLVTruth) {
	t.Helper()
	var log, res bytes.Buffer
	tr, err := tracegen.WriteTLV(&log, &res, cfg, style)
	if err != nil {
		t.Fatalf("WriteTLV(%+v, %s): %v", cfg, style, err)
	}
	logPath = filepath.Join(dir, "gen.log")
	resPath = filepath.Join(dir, "gen.res")
	if err := os.WriteFile(logPath, log.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(resPath, res.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return logPath, resPath, tr
}

// TestTLVIngested ingests generated logs of each style with the real TLV
// ingester (the bundled ASP and FMP rules for the TOPPERS logs) and
// compares the tables with what the renderer says it wrote: the events,
// each task's and handler's time in each state, the behaviors, the
// signal's values, and no diagnostics.
func TestTLVIngested(t *testing.T) {
	for _, tc := range []struct {
		style tracegen.TLVStyle
		cfg   tracegen.Config
	}{
		{tracegen.TLVStandard, tracegen.Config{Events: 30_000, Cores: 2, Tasks: 6, Seed: 1}},
		{tracegen.TLVStandard, tracegen.Config{Events: 20_000, Cores: 4, Tasks: 8, Seed: 3, TimeScale: "us"}},
		{tracegen.TOPPERSASP, tracegen.Config{Events: 20_000, Cores: 1, Tasks: 5, Seed: 2}},
		{tracegen.TOPPERSASP, tracegen.Config{Events: 10_000, Cores: 1, Tasks: 8, Seed: 9, TimeScale: "us"}},
		{tracegen.TOPPERSFMP, tracegen.Config{Events: 20_000, Cores: 2, Tasks: 8, Seed: 3}},
		{tracegen.TOPPERSFMP, tracegen.Config{Events: 15_000, Cores: 3, Tasks: 6, Seed: 4, TimeScale: "ps"}},
	} {
		tc := tc
		t.Run(fmt.Sprintf("%s_cores%d_seed%d", tc.style, tc.cfg.Cores, tc.cfg.Seed), func(t *testing.T) {
			t.Parallel()
			logPath, resPath, tr := writeTLV(t, t.TempDir(), tc.cfg, tc.style)
			if tr.Lines < tc.cfg.Events {
				t.Errorf("%d lines written, want at least %d", tr.Lines, tc.cfg.Events)
			}
			db := dbtest.Open(t)
			res := dbtest.Ingest(t, db, logPath, ingest.Options{Format: tc.style.String(), Params: map[string]string{"resources": resPath}})
			checkTLV(t, db.SQL(), res, tr)
		})
	}
}

func checkTLV(t *testing.T, q *sql.DB, res ingest.Result, tr tracegen.TLVTruth) {
	t.Helper()
	if res.Events != int64(tr.Events) {
		t.Errorf("%d events ingested, the log stands for %d", res.Events, tr.Events)
	}
	var first, last, diags int64
	if err := q.QueryRow("SELECT first_ts, last_ts, (SELECT count(*) FROM diagnostics WHERE run_id = ?) FROM runs WHERE run_id = ?", res.RunID, res.RunID).Scan(&first, &last, &diags); err != nil {
		t.Fatal(err)
	}
	if first != tr.FirstNS || last != tr.LastNS {
		t.Errorf("runs: first_ts %d last_ts %d, the log %d .. %d", first, last, tr.FirstNS, tr.LastNS)
	}
	if diags != 0 {
		t.Errorf("%d diagnostics:\n%s", diags, dbtest.Query(t, q, "SELECT severity, message FROM diagnostics WHERE run_id = ? LIMIT 10", res.RunID))
	}

	// Time per state of tasks and handlers, complete intervals only.
	want := map[string]int64{}
	for name, states := range tr.States {
		for st, ns := range states {
			want[name+" "+st] = ns
		}
	}
	compareTLV(t, "ns per resource and state", dbtest.QueryCounts(t, q, `
		SELECT o.name || ' ' || split_part(s.state, '=', 2), sum(s.dur)
		FROM state_intervals s JOIN objects o USING (run_id, object_id)
		WHERE s.run_id = ? AND o.kind IN ('Task', 'InterruptHandler') AND s.state LIKE 'state=%' AND NOT s.truncated
		GROUP BY ALL`, res.RunID), want)

	// The CPU model: what holds each processor (ingest/tlv/README.md).
	compareTLV(t, "busy ns per processor", dbtest.QueryCounts(t, q, `
		SELECT cpu, sum(ns) FILTER (WHERE busy) FROM cpu_utilization WHERE run_id = ? GROUP BY ALL`, res.RunID), tr.CPUBusy)
	compareTLV(t, "known ns per processor", dbtest.QueryCounts(t, q, `
		SELECT cpu, sum(ns) FROM cpu_utilization WHERE run_id = ? GROUP BY ALL`, res.RunID), tr.CPUKnown)
	compareTLV(t, "ns per holder", dbtest.QueryCounts(t, q, `
		SELECT holder, sum(ns) FROM cpu_utilization WHERE run_id = ? AND busy GROUP BY ALL`, res.RunID), tr.CPUHolders)

	// Behaviors per resource.
	want = map[string]int64{}
	for name, bs := range tr.Behaviors {
		for b, n := range bs {
			want[name+" "+b] = int64(n)
		}
	}
	compareTLV(t, "behaviors per resource", dbtest.QueryCounts(t, q, `
		SELECT o.name || ' ' || e.event, count(*)
		FROM events e JOIN objects o ON o.run_id = e.run_id AND o.object_id = e.object_id
		WHERE e.run_id = ? AND e.event NOT LIKE '%=' AND o.kind IN ('Task', 'InterruptHandler')
		GROUP BY ALL`, res.RunID), want)

	// The signal: its time and value-weighted time.
	var ns, valueNS sql.NullInt64
	if err := q.QueryRow(`
		SELECT sum(s.dur), sum(CAST(split_part(s.state, '=', 2) AS BIGINT) * s.dur)
		FROM state_intervals s JOIN objects o USING (run_id, object_id)
		WHERE s.run_id = ? AND o.name = 'SIG_Speed' AND NOT s.truncated`, res.RunID).Scan(&ns, &valueNS); err != nil {
		t.Fatal(err)
	}
	if ns.Int64 != tr.SignalNS || valueNS.Int64 != tr.SignalValueNS || tr.SignalNS == 0 {
		t.Errorf("SIG_Speed: %d ns, %d value×ns; the log %d, %d", ns.Int64, valueNS.Int64, tr.SignalNS, tr.SignalValueNS)
	}
}

func compareTLV(t *testing.T, what string, got, want map[string]int64) {
	t.Helper()
	if len(want) == 0 {
		t.Errorf("%s: the truth is empty", what)
	}
	if reflect.DeepEqual(got, want) {
		return
	}
	var keys []string
	for k := range want {
		keys = append(keys, k)
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		g, gok := got[k]
		w, wok := want[k]
		if g != w || gok != wok {
			fmt.Fprintf(&b, "  %s: got %d (%v), want %d (%v)\n", k, g, gok, w, wok)
		}
	}
	t.Errorf("%s differ:\n%s", what, b.String())
}

// TestTLVSameSchedule checks each rendering against the simulator's own
// BTF truth of the schedule it rendered (TLVTruth.Schedule, the same cut):
// every style activates and ends the same instances and runs the same
// interrupts; in the standard format a task's RUNNING time is its BTF
// running time and the handlers' RUNNING time is ISR_Tick's; in a TOPPERS
// log an interrupt does not stop the task it interrupts, so the tasks'
// RUNNING time is at most their BTF running time plus the interrupts'.
// The CPU truth: the handlers hold their cores exactly while ISR_Tick
// runs, a task at least while BTF says it runs.
func TestTLVSameSchedule(t *testing.T) {
	for _, tc := range []struct {
		style tracegen.TLVStyle
		cfg   tracegen.Config
	}{
		{tracegen.TLVStandard, tracegen.Config{Events: 40_000, Cores: 2, Tasks: 6, Seed: 5}},
		{tracegen.TOPPERSASP, tracegen.Config{Events: 40_000, Cores: 1, Tasks: 6, Seed: 5}},
		{tracegen.TOPPERSFMP, tracegen.Config{Events: 40_000, Cores: 3, Tasks: 7, Seed: 6}},
	} {
		tr, err := tracegen.WriteTLV(io.Discard, io.Discard, tc.cfg, tc.style)
		if err != nil {
			t.Fatal(err)
		}
		sched := tr.Schedule
		var isrRunning, isrEnter, tasksRunning, btfTasksRunning int64
		for name, states := range tr.States {
			b := tr.Behaviors[name]
			if strings.HasPrefix(name, "ISR_Tick_Core_") {
				isrRunning += states["RUNNING"]
				isrEnter += int64(b["enter"])
				continue
			}
			tasksRunning += states["RUNNING"]
			btfTasksRunning += sched.Running[name]
			if tc.style == tracegen.TLVStandard && states["RUNNING"] != sched.Running[name] {
				t.Errorf("%s %s: RUNNING %d ns, BTF running %d ns", tc.style, name, states["RUNNING"], sched.Running[name])
			}
			if b["activate"] != sched.Instances[name] || b["exit"] != sched.Terminated[name] {
				t.Errorf("%s %s: %d activations, %d exits; BTF %d instances, %d terminated", tc.style, name, b["activate"], b["exit"], sched.Instances[name], sched.Terminated[name])
			}
		}
		// The CPU truth against the schedule's: the handlers hold their
		// cores exactly while ISR_Tick runs; a task holds its core at
		// least while BTF says it runs (more: polling, and in TOPPERS logs
		// nothing else).
		var isrHeld int64
		for name, ns := range tr.CPUHolders {
			if strings.HasPrefix(name, "ISR_Tick_Core_") {
				isrHeld += ns
			} else if ns < sched.Running[name] {
				t.Errorf("%s %s: holds its core %d ns, BTF running %d ns", tc.style, name, ns, sched.Running[name])
			}
		}
		if isrHeld != sched.Running["ISR_Tick"] {
			t.Errorf("%s: handlers hold their cores %d ns, BTF ISR_Tick running %d ns", tc.style, isrHeld, sched.Running["ISR_Tick"])
		}
		if isrEnter != int64(sched.ActionCounts["I/start"]) || isrEnter == 0 {
			t.Errorf("%s: %d handler entries, BTF %d ISR starts", tc.style, isrEnter, sched.ActionCounts["I/start"])
		}
		if isrRunning != sched.Running["ISR_Tick"] {
			t.Errorf("%s: handlers RUNNING %d ns, BTF ISR_Tick running %d ns", tc.style, isrRunning, sched.Running["ISR_Tick"])
		}
		if tc.style != tracegen.TLVStandard && (tasksRunning > btfTasksRunning+isrRunning || tasksRunning < btfTasksRunning/2) {
			t.Errorf("%s: tasks RUNNING %d ns; BTF running %d ns, interrupts %d ns", tc.style, tasksRunning, btfTasksRunning, isrRunning)
		}
	}
}

// TestTLVDeterminism: the same configuration writes the same bytes.
func TestTLVDeterminism(t *testing.T) {
	cfg := tracegen.Config{Events: 5000, Cores: 2, Seed: 8}
	var a, b, ra, rb bytes.Buffer
	ta, err := tracegen.WriteTLV(&a, &ra, cfg, tracegen.TOPPERSFMP)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := tracegen.WriteTLV(&b, &rb, cfg, tracegen.TOPPERSFMP)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) || !bytes.Equal(ra.Bytes(), rb.Bytes()) || !reflect.DeepEqual(ta, tb) {
		t.Error("the same configuration wrote different logs")
	}
}

func TestTLVConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		cfg   tracegen.Config
		style tracegen.TLVStyle
		want  string
	}{
		{tracegen.Config{Events: 10, Cores: 2}, tracegen.TOPPERSASP, "tracegen: a TOPPERS/ASP log has one processor, not 2 (TOPPERS/FMP has several)"},
		{tracegen.Config{Events: 0, Cores: 1}, tracegen.TLVStandard, "tracegen: Events must be > 0"},
		{tracegen.Config{Events: 10, Cores: 0}, tracegen.TOPPERSFMP, "tracegen: Cores must be >= 1"},
		{tracegen.Config{Events: 10, Cores: 1}, tracegen.TLVStyle(9), "tracegen: unknown TLV style 9"},
		{tracegen.Config{Events: 10, Cores: 1, TimeScale: "ms"}, tracegen.TLVStandard, `tracegen: unsupported TimeScale "ms" (want ns, us or ps)`},
	} {
		if _, err := tracegen.WriteTLV(io.Discard, io.Discard, tc.cfg, tc.style); err == nil || err.Error() != tc.want {
			t.Errorf("WriteTLV(%+v, %d): error %v, want %s", tc.cfg, tc.style, err, tc.want)
		}
	}
}

func BenchmarkWriteTLV(b *testing.B) {
	for _, style := range []tracegen.TLVStyle{tracegen.TLVStandard, tracegen.TOPPERSASP} {
		b.Run(style.String(), func(b *testing.B) {
			b.ReportAllocs()
			lines := 0
			for i := 0; i < b.N; i++ {
				tr, err := tracegen.WriteTLV(io.Discard, io.Discard, tracegen.Config{Events: 1_000_000, Cores: 1, Seed: 1}, style)
				if err != nil {
					b.Fatal(err)
				}
				lines += tr.Lines
			}
			b.ReportMetric(float64(lines)/b.Elapsed().Seconds(), "lines/s")
		})
	}
}
