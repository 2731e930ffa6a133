package btf_test

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/internal/recount"
	"github.com/traceduck/traceduck/internal/tracegen"
)

// truthConfigs are the generated traces TestGroundTruth checks: one to four
// cores, four or eight tasks, every time scale tracegen writes, a few seeds.
// Together they ingest about 240k events, a few seconds of test time.
var truthConfigs = []tracegen.Config{
	{Events: 20_000, Cores: 1, Tasks: 4, Seed: 1, TimeScale: "ns"},
	{Events: 40_000, Cores: 2, Tasks: 8, Seed: 2, TimeScale: "us"},
	{Events: 60_000, Cores: 4, Tasks: 8, Seed: 3, TimeScale: "ps"},
	{Events: 30_000, Cores: 2, Tasks: 4, Seed: 7, TimeScale: "ps"},
	{Events: 50_000, Cores: 4, Tasks: 4, Seed: 11, TimeScale: "ns"},
	{Events: 25_000, Cores: 1, Tasks: 8, Seed: 5, TimeScale: "us"},
	{Events: 20_000, Cores: 2, Tasks: 8, Seed: 42, TimeScale: "ns"},
	// with the counting semaphore SEM_Pool: several holders at once
	{Events: 60_000, Cores: 4, Tasks: 12, Seed: 5, TimeScale: "ns", PoolUnits: 2},
	{Events: 40_000, Cores: 3, Tasks: 9, Seed: 8, TimeScale: "us", PoolUnits: 2},
	// with the priority inversion scenario, its priorities and ceilings
	{Events: 40_000, Cores: 1, Tasks: 4, Seed: 1, TimeScale: "ns", Inversion: true},
	{Events: 60_000, Cores: 3, Tasks: 9, Seed: 8, TimeScale: "us", PoolUnits: 2, Inversion: true},
	{Events: 60_000, Cores: 2, Tasks: 8, Seed: 42, TimeScale: "ps", Inversion: true},
}

// TestGroundTruth generates traces with tracegen, ingests them, and checks
// the database against what the simulator knows it simulated (tracegen's
// Truth is computed from the simulator's state, never from the output).
func TestGroundTruth(t *testing.T) {
	for _, cfg := range truthConfigs {
		cfg := cfg
		name := fmt.Sprintf("cores%d_tasks%d_%s_seed%d_%dk", cfg.Cores, cfg.Tasks, cfg.TimeScale, cfg.Seed, cfg.Events/1000)
		if cfg.PoolUnits > 0 {
			name += fmt.Sprintf("_pool%d", cfg.PoolUnits)
		}
		if cfg.Inversion {
			name += "_inversion"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			checkTruth(t, cfg)
		})
	}
}

func checkTruth(t *testing.T, cfg tracegen.Config) {
	path := filepath.Join(t.TempDir(), "gen.btf")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	truth, err := tracegen.WriteBTF(f, cfg)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	db := dbtest.Open(t)
	res := dbtest.Ingest(t, db, path, ingest.Options{Format: "btf"})
	q := db.SQL()

	if res.Events != int64(truth.Lines) {
		t.Errorf("ingest result: %d events, truth %d lines", res.Events, truth.Lines)
	}

	// The run.
	var evCount, first, last int64
	var unit string
	if err := q.QueryRow("SELECT event_count, first_ts, last_ts, time_unit FROM runs WHERE run_id = ?", res.RunID).Scan(&evCount, &first, &last, &unit); err != nil {
		t.Fatal(err)
	}
	if evCount != int64(truth.Lines) || first != truth.FirstTS || last != truth.LastTS || unit != cfg.TimeScale {
		t.Errorf("runs: event_count %d first_ts %d last_ts %d time_unit %s; truth: %d lines, %d .. %d, %s",
			evCount, first, last, unit, truth.Lines, truth.FirstTS, truth.LastTS, cfg.TimeScale)
	}

	// Events per (class, event).
	want := map[string]int64{}
	for k, n := range truth.ActionCounts {
		want[k] = int64(n)
	}
	compare(t, "events per class/event", dbtest.QueryCounts(t, q, `
		SELECT class || '/' || event, count FROM event_counts WHERE run_id = ?`, res.RunID), want)

	// Running and ready time per process (task or ISR), complete intervals
	// only: tracegen counts an interval when the process leaves the state,
	// the ingester marks the ones still open at the end as truncated.
	for _, st := range []struct {
		state string
		truth map[string]int64
	}{{"running", truth.Running}, {"ready", truth.Ready}, {"polling", truth.Polling}} {
		compare(t, st.state+" ns per process", dbtest.QueryCounts(t, q, `
			SELECT o.name, sum(s.dur)
			FROM state_intervals s JOIN objects o USING (run_id, object_id)
			WHERE s.run_id = ? AND o.kind IN ('task', 'isr') AND s.state = ? AND NOT s.truncated
			GROUP BY o.name`, res.RunID, st.state), st.truth)
	}
	// The same figures from the view, for tasks.
	taskRunning := map[string]int64{}
	for name, ns := range truth.Running {
		if name != "ISR_Tick" {
			taskRunning[name] = ns
		}
	}
	compare(t, "state_summary: running ns per task", dbtest.QueryCounts(t, q, `
		SELECT object, total_ns FROM state_summary WHERE run_id = ? AND kind = 'task' AND state = 'running'`, res.RunID), taskRunning)

	// Core busy time: the time a task or ISR held the core, running or
	// polling (active waiting keeps the core, the seed's process states),
	// from the core's intervals, from cpu_intervals and from
	// cpu_utilization.
	compare(t, "busy ns per core (state intervals)", dbtest.QueryCounts(t, q, `
		SELECT o.name, sum(s.dur)
		FROM state_intervals s JOIN objects o USING (run_id, object_id)
		WHERE s.run_id = ? AND o.kind = 'cpu' AND s.instance <> 0 AND NOT s.truncated
		GROUP BY o.name`, res.RunID), truth.CoreBusy)
	compare(t, "busy ns per core (cpu_intervals)", dbtest.QueryCounts(t, q, `
		SELECT cpu, sum(dur) FROM cpu_intervals WHERE run_id = ? AND busy AND NOT truncated GROUP BY cpu`, res.RunID), truth.CoreBusy)
	compare(t, "busy ns per core (cpu_utilization)", dbtest.QueryCounts(t, q, `
		SELECT cpu, sum(ns) FROM cpu_utilization WHERE run_id = ? AND busy GROUP BY cpu`, res.RunID), truth.CoreBusy)

	// Each core's intervals tile the trace from its announcement at 0 to
	// the last timestamp, without gap or overlap.
	tiling := queryText(t, q, `
		SELECT o.name, min(s.start_ts), max(s.end_ts), sum(s.dur),
		       count(*) FILTER (WHERE s.truncated),
		       count(*) FILTER (WHERE s.start_ts <> s.prev_end)
		FROM (SELECT *, lag(end_ts, 1, start_ts) OVER (PARTITION BY object_id ORDER BY start_ts, start_seq) AS prev_end
		      FROM state_intervals WHERE run_id = ?) s
		JOIN objects o USING (run_id, object_id)
		WHERE o.kind = 'cpu'
		GROUP BY o.name ORDER BY o.name`, res.RunID)
	var wantTiling strings.Builder
	for c := 0; c < cfg.Cores; c++ {
		fmt.Fprintf(&wantTiling, "Core_%d | 0 | %d | %d | 1 | 0\n", c, truth.LastTS, truth.LastTS)
	}
	if tiling != wantTiling.String() {
		t.Errorf("core intervals (name | first start | last end | total ns | truncated | gaps):\n got %s\nwant %s", tiling, wantTiling.String())
	}

	// Only the end of the trace truncates: a truncated interval ends at the
	// last timestamp without an event that closes it, and every other
	// interval has both ends from events.
	var badTrunc, nTrunc int64
	if err := q.QueryRow(`
		SELECT count(*) FILTER (WHERE truncated AND (end_ts <> ? OR end_seq IS NOT NULL) OR NOT truncated AND (end_seq IS NULL OR start_seq IS NULL)),
		       count(*) FILTER (WHERE truncated)
		FROM state_intervals WHERE run_id = ?`, truth.LastTS, res.RunID).Scan(&badTrunc, &nTrunc); err != nil {
		t.Fatal(err)
	}
	if badTrunc != 0 || nTrunc == 0 {
		t.Errorf("%d intervals truncated elsewhere than at the end (of %d truncated)", badTrunc, nTrunc)
	}

	// Instances activated: activate events, and instances that have an
	// 'active' interval.
	instances := map[string]int64{}
	for name, n := range truth.Instances {
		instances[name] = int64(n)
	}
	compare(t, "activate events per process", dbtest.QueryCounts(t, q, `
		SELECT o.name, count(*)
		FROM events e JOIN objects o ON o.run_id = e.run_id AND o.object_id = e.object_id
		WHERE e.run_id = ? AND e.class IN ('T', 'I') AND e.event = 'activate'
		GROUP BY o.name`, res.RunID), instances)
	compare(t, "instances with an active interval", dbtest.QueryCounts(t, q, `
		SELECT o.name, count(DISTINCT s.instance)
		FROM state_intervals s JOIN objects o USING (run_id, object_id)
		WHERE s.run_id = ? AND o.kind IN ('task', 'isr') AND s.state = 'active'
		GROUP BY o.name`, res.RunID), instances)

	// Instances terminated: terminate events, and running intervals that a
	// terminate event closes.
	terminated := map[string]int64{}
	for name, n := range truth.Terminated {
		terminated[name] = int64(n)
	}
	compare(t, "terminate events per process", dbtest.QueryCounts(t, q, `
		SELECT o.name, count(*)
		FROM events e JOIN objects o ON o.run_id = e.run_id AND o.object_id = e.object_id
		WHERE e.run_id = ? AND e.class IN ('T', 'I') AND e.event = 'terminate'
		GROUP BY o.name`, res.RunID), terminated)
	compare(t, "running intervals ended by terminate", dbtest.QueryCounts(t, q, `
		SELECT o.name, count(*)
		FROM state_intervals s
		JOIN objects o USING (run_id, object_id)
		JOIN events e ON e.run_id = s.run_id AND e.seq = s.end_seq
		WHERE s.run_id = ? AND o.kind IN ('task', 'isr') AND s.state = 'running' AND e.event = 'terminate'
		GROUP BY o.name`, res.RunID), terminated)

	// Holds of SEM_Shared and waits for it (resource_holds,
	// resource_waits): complete ones per task, count and ns; and how many
	// the end of the trace cut.
	type semTruth struct {
		view, who, sem, kind string
		truth                map[string]tracegen.Sum
		open                 int
	}
	// And the waits for the event EV_Done (no holds: an event has no
	// owner), from the wait_event that blocks to the set_event that wakes.
	sems := []semTruth{{"resource_holds", "holder", "SEM_Shared", "semaphore", truth.Holds, truth.OpenHolds}, {"resource_waits", "waiter", "SEM_Shared", "semaphore", truth.Waits, truth.OpenWaits},
		{"resource_waits", "waiter", "EV_Done", "event", truth.EvWaits, truth.EvOpenWaits}}
	if cfg.PoolUnits > 0 {
		sems = append(sems, semTruth{"resource_holds", "holder", "SEM_Pool", "semaphore", truth.PoolHolds, truth.PoolOpenHolds}, semTruth{"resource_waits", "waiter", "SEM_Pool", "semaphore", truth.PoolWaits, truth.PoolOpenWaits})
		// several holders at once, as many as the simulator had
		if truth.PoolMaxHolders < 2 {
			t.Errorf("SEM_Pool: at most %d holder at once in the simulation", truth.PoolMaxHolders)
		}
		got := queryText(t, q, `SELECT max(n) FROM (SELECT count(*) AS n FROM resource_holds a JOIN resource_holds b
			ON b.run_id = a.run_id AND b.resource_id = a.resource_id AND b.start_ts <= a.start_ts AND b.end_ts > a.start_ts
			WHERE a.run_id = ? AND a.resource = 'SEM_Pool' GROUP BY a.resource_id, a.holder_id, a.start_ts)`, res.RunID)
		if want := fmt.Sprintf("%d\n", truth.PoolMaxHolders); got != want {
			t.Errorf("SEM_Pool: most holds open at once %s, want %s", got, want)
		}
		var holds, waits int64
		for _, h := range truth.PoolHolds {
			holds += h.N
		}
		for _, w := range truth.PoolWaits {
			waits += w.N
		}
		t.Logf("SEM_Pool (%d units): %d complete holds, %d complete waits, at most %d holders at once", cfg.PoolUnits, holds, waits, truth.PoolMaxHolders)
	}
	for _, v := range sems {
		n, ns := map[string]int64{}, map[string]int64{}
		var total int64
		for name, sum := range v.truth {
			n[name], ns[name] = sum.N, sum.NS
			total += sum.N
		}
		if total == 0 && (v.who == "holder" || cfg.Cores > 1) && v.kind == "semaphore" {
			// (on one core the priority ceiling leaves no contention)
			t.Errorf("%s %s: the generator made none", v.sem, v.view)
		}
		sel := "SELECT " + v.who + ", %s FROM " + v.view + " WHERE run_id = ? AND resource = '" + v.sem + "' AND resource_kind = '" + v.kind + "' AND NOT truncated GROUP BY ALL"
		compare(t, v.sem+" "+v.view+": complete ones per task", dbtest.QueryCounts(t, q, fmt.Sprintf(sel, "count(*)"), res.RunID), n)
		compare(t, v.sem+" "+v.view+": ns per task", dbtest.QueryCounts(t, q, fmt.Sprintf(sel, "sum(dur)"), res.RunID), ns)
		if got := queryText(t, q, "SELECT count(*) FILTER (WHERE truncated), count(*) FILTER (WHERE truncated AND end_ts <> ?) FROM "+v.view+" WHERE run_id = ? AND resource = '"+v.sem+"'", truth.LastTS, res.RunID); got != fmt.Sprintf("%d | 0\n", v.open) {
			t.Errorf("%s %s: truncated ones, and those that do not end at the last event: %s, want %d | 0", v.sem, v.view, got, v.open)
		}
	}

	// The recount of the raw lines (internal/recount, the truth of the
	// real traces' conformance) counts the same holds and waits of
	// SEM_Shared, SEM_Pool and EV_Done as the simulator, and as many cut
	// by the end; SEM_Inv's (the inversion scenario), for which the
	// simulator keeps no sums, as the database has them.
	if cfg.TimeScale != "ps" {
		rc, err := recount.ReadBTF(path)
		if err != nil {
			t.Fatal(err)
		}
		// fromDB adds SEM_Inv's complete holds or waits to want and
		// returns how many were cut.
		fromDB := func(view, who string, want map[string]int64) int64 {
			rows, err := q.Query(`SELECT `+who+`, count(*), sum(dur) FROM `+view+` WHERE run_id = ? AND resource = 'SEM_Inv' AND NOT truncated GROUP BY ALL`, res.RunID)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			for rows.Next() {
				var name string
				var n, ns int64
				if err := rows.Scan(&name, &n, &ns); err != nil {
					t.Fatal(err)
				}
				want["SEM_Inv "+name+" n"], want["SEM_Inv "+name+" ns"] = n, ns
			}
			var cut int64
			if err := q.QueryRow(`SELECT count(*) FROM `+view+` WHERE run_id = ? AND resource = 'SEM_Inv' AND truncated`, res.RunID).Scan(&cut); err != nil {
				t.Fatal(err)
			}
			return cut
		}
		got, want := map[string]int64{}, map[string]int64{}
		for key, s := range rc.Waits {
			got[key+" n"], got[key+" ns"] = s.N, s.NS
		}
		for prefix, m := range map[string]map[string]tracegen.Sum{"SEM_Shared ": truth.Waits, "EV_Done ": truth.EvWaits, "SEM_Pool ": truth.PoolWaits} {
			for name, s := range m {
				want[prefix+name+" n"], want[prefix+name+" ns"] = s.N, s.NS
			}
		}
		invCut := fromDB("resource_waits", "waiter", want)
		compare(t, "recount of the raw lines: waits", got, want)
		if open := int64(truth.OpenWaits+truth.EvOpenWaits+truth.PoolOpenWaits) + invCut; rc.OpenWaits != open {
			t.Errorf("recount of the raw lines: %d waits cut, the simulator %d", rc.OpenWaits, open)
		}
		got, want = map[string]int64{}, map[string]int64{}
		for key, s := range rc.Holds {
			got[key+" n"], got[key+" ns"] = s.N, s.NS
		}
		for prefix, m := range map[string]map[string]tracegen.Sum{"SEM_Shared ": truth.Holds, "SEM_Pool ": truth.PoolHolds} {
			for name, s := range m {
				want[prefix+name+" n"], want[prefix+name+" ns"] = s.N, s.NS
			}
		}
		invCut = fromDB("resource_holds", "holder", want)
		compare(t, "recount of the raw lines: holds", got, want)
		if open := int64(truth.OpenHolds+truth.PoolOpenHolds) + invCut; rc.OpenHolds != open {
			t.Errorf("recount of the raw lines: %d holds cut, the simulator %d", rc.OpenHolds, open)
		}
	}
	// Priority inversions: exactly the simulator's, interval by interval;
	// without the scenario the trace tells no priority, and there is none.
	var wantInv strings.Builder
	inv := append([]tracegen.Inversion(nil), truth.Inversions...)
	sort.Slice(inv, func(i, j int) bool {
		a, b := inv[i], inv[j]
		if a.Start != b.Start {
			return a.Start < b.Start
		}
		for _, f := range [][2]string{{a.Resource, b.Resource}, {a.High, b.High}, {a.Low, b.Low}, {a.Middle, b.Middle}, {a.Core, b.Core}} {
			if f[0] != f[1] {
				return f[0] < f[1]
			}
		}
		return false
	})
	scenario := 0
	for _, x := range inv {
		fmt.Fprintf(&wantInv, "%s | %s | %s | %s | %s | %d | %d | %d\n", x.Resource, x.High, x.Low, x.Middle, x.Core, x.Start, x.End, x.End-x.Start)
		if x.Resource == "SEM_Inv" && x.Middle == "Inv_Mid" {
			scenario++
		}
	}
	if cfg.Inversion && scenario == 0 {
		t.Errorf("the inversion scenario made no inversion: %v", inv)
	}
	if got := queryText(t, q, `SELECT resource, high, low, middle, cpu, start_ts, end_ts, dur FROM priority_inversions
		WHERE run_id = ? ORDER BY start_ts, resource, high, low, middle, cpu`, res.RunID); got != wantInv.String() {
		t.Errorf("priority_inversions:\n got %s\nwant %s", got, wantInv.String())
	}
	if cfg.Inversion {
		t.Logf("%d priority inversions, %d of the scenario", len(inv), scenario)
	}

	// Time: ps keeps the raw value (ts_raw = ts*1000 exactly, tracegen
	// writes whole ns); ns and us lose nothing, so there is no raw value.
	var bad, rows int64
	switch cfg.TimeScale {
	case "ps":
		err = q.QueryRow("SELECT count(*) FILTER (WHERE ts_raw IS DISTINCT FROM ts * 1000), count(*) FROM events WHERE run_id = ?", res.RunID).Scan(&bad, &rows)
	case "us":
		err = q.QueryRow("SELECT count(*) FILTER (WHERE ts_raw IS NOT NULL OR ts % 1000 <> 0), count(*) FROM events WHERE run_id = ?", res.RunID).Scan(&bad, &rows)
	default:
		err = q.QueryRow("SELECT count(*) FILTER (WHERE ts_raw IS NOT NULL), count(*) FROM events WHERE run_id = ?", res.RunID).Scan(&bad, &rows)
	}
	if err != nil {
		t.Fatal(err)
	}
	if bad != 0 || rows != int64(truth.Lines) {
		t.Errorf("timestamps (%s): %d of %d events have an unexpected ts/ts_raw", cfg.TimeScale, bad, rows)
	}

	// Events keep file order: seq and src_line grow together, and the
	// header (4 lines) is the only offset between them.
	var disorder int64
	if err := q.QueryRow("SELECT count(*) FILTER (WHERE src_line <> seq + 4) FROM events WHERE run_id = ?", res.RunID).Scan(&disorder); err != nil {
		t.Fatal(err)
	}
	if disorder != 0 {
		t.Errorf("%d events whose src_line is not seq + 4 (the header)", disorder)
	}

	// Every event a core performs happens on that core.
	var wrongCPU int64
	if err := q.QueryRow(`
		SELECT count(*) FROM events e JOIN objects c ON c.run_id = e.run_id AND c.object_id = e.context_id
		WHERE e.run_id = ? AND c.kind = 'cpu' AND e.cpu IS DISTINCT FROM c.native_id`, res.RunID).Scan(&wrongCPU); err != nil {
		t.Fatal(err)
	}
	if wrongCPU != 0 {
		t.Errorf("%d events of a core not on that core's cpu", wrongCPU)
	}

	// A generated trace follows the BTF definition: nothing to diagnose.
	if d := queryText(t, q, "SELECT severity, count, src_line, message FROM diagnostics WHERE run_id = ? ORDER BY src_line", res.RunID); d != "" {
		t.Errorf("diagnostics on a trace that follows the BTF definition:\n%s", d)
	}
}

func queryText(t *testing.T, q *sql.DB, query string, args ...any) string {
	t.Helper()
	return dbtest.Query(t, q, query, args...)
}

// compare reports the keys whose values differ; a key missing on one side
// counts as 0 (the truth lists every process, possibly with 0).
func compare[V int64 | int](t *testing.T, what string, got map[string]int64, want map[string]V) {
	t.Helper()
	keys := map[string]bool{}
	for k := range got {
		keys[k] = true
	}
	for k := range want {
		keys[k] = true
	}
	var diffs []string
	for k := range keys {
		if g, w := got[k], int64(want[k]); g != w {
			diffs = append(diffs, fmt.Sprintf("%s: got %d, want %d (diff %+d)", k, g, w, g-w))
		}
	}
	if len(diffs) > 0 {
		sort.Strings(diffs)
		t.Errorf("%s: %d differ:\n  %s", what, len(diffs), strings.Join(diffs, "\n  "))
	}
}
