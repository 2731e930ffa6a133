package queries_test

import (
	"context"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/queries"
)

// table7Row is one row of the paper's table 7, as printed: the script,
// cycles per firing, frequency, sys%, theoretical sys%, measured sys%,
// usr%, theoretical usr%, measured usr%; NaN for "-".
type table7Row struct {
	cycles, hz, sys, thSys, meSys, usr, thUsr, meUsr float64
}

// seedTable7 reads table 7 out of the seed text, so that the bundled
// measured column is checked against the paper, not against itself.
func seedTable7(t *testing.T) map[string]table7Row {
	t.Helper()
	data, err := os.ReadFile(seedPath)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	start := strings.Index(text, "表 7 各不同事件下不同跟踪脚本的实测数据与理论数据")
	if start < 0 {
		t.Fatal("table 7 not found in the seed")
	}
	out := map[string]table7Row{}
	for _, line := range strings.Split(text[start:], "\n")[1:] {
		f := strings.Split(line, "\t")
		if len(f) != 9 {
			if len(out) > 0 && strings.TrimSpace(line) != "" {
				break
			}
			continue
		}
		name := strings.TrimSuffix(strings.TrimPrefix(f[0], "<i>"), "</i>")
		if name == "测试量" { // the header
			continue
		}
		var v [8]float64
		for i, s := range f[1:] {
			s = strings.ReplaceAll(strings.TrimSpace(s), " ", "") // "6.825 0": digit groups
			if s == "-" {
				v[i] = math.NaN()
				continue
			}
			if v[i], err = strconv.ParseFloat(s, 64); err != nil {
				t.Fatalf("table 7 row %s: %q", name, s)
			}
		}
		out[name] = table7Row{v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]}
	}
	return out
}

// TestOverheadTable7Measured checks the measured column bundled in
// testdata/table7.spec against the paper's table 7 (read from the seed,
// and as the issue quotes it), recomputes it from the table's raw sys%
// and usr% columns the way section 4 says it was derived, and checks the
// comparison the command prints against errors computed by hand and the
// paper's own claims (CPU error within ±2%, probe cost error within ±800
// cycles).
func TestOverheadTable7Measured(t *testing.T) {
	seed := seedTable7(t)
	if len(seed) != 9 {
		t.Fatalf("table 7: %d rows read from the seed, want 9 (read, sys, fbt, sys10, fbt10, func, pid, 空闲, profile)", len(seed))
	}
	f, err := os.Open("testdata/table7.spec")
	if err != nil {
		t.Fatal(err)
	}
	spec, err := queries.ParseOverheadSpec("testdata/table7.spec", f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	nan := math.NaN()
	// The measured column as the issue quotes it, with the pid row's
	// measured sys beside its usr.
	issue := map[string][2]float64{
		"sys": {6.8250, nan}, "fbt": {11.8094, nan}, "sys10": {21.4128, nan},
		"fbt10": {26.1280, nan}, "pid": {0.0537, 11.6553}, "profile": {9.1941, nan},
	}
	same := func(p *float64, want float64) bool {
		if math.IsNaN(want) {
			return p == nil
		}
		return p != nil && *p == want
	}
	for _, s := range spec.Sessions {
		row, ok := seed[s.Name]
		m := s.Measured
		if !ok || m == nil || len(s.Probes) != 1 {
			t.Fatalf("session %s: seed row %v, measured %+v", s.Name, ok, m)
		}
		if !same(m.Sys, row.meSys) || !same(m.Usr, row.meUsr) {
			t.Errorf("%s: measured sys %s usr %s, table 7 says %v %v", s.Name, show(m.Sys), show(m.Usr), row.meSys, row.meUsr)
		}
		if want := issue[s.Name]; !same(m.Sys, want[0]) || !same(m.Usr, want[1]) {
			t.Errorf("%s: measured sys %s usr %s, the issue quotes %v", s.Name, show(m.Sys), show(m.Usr), want)
		}
		p := s.Probes[0]
		if p.RateHz != row.hz || *p.Cycles != row.cycles {
			t.Errorf("%s: rate %g cycles %g, table 7 says %g %g", s.Name, p.RateHz, *p.Cycles, row.hz, row.cycles)
		}
		if !near(p.RateSpreadHz, row.hz/100, 1e-9) {
			t.Errorf("%s: rate spread %g Hz, want section 4's 1%% of %g", s.Name, p.RateSpreadHz, row.hz)
		}
	}

	// Section 4: untraced, an event at frequency f costs T each (sys% =
	// f T); traced, f' (T + C); the measured column is f' C = sys'% -
	// f' T = sys'% - (f'/f) sys%, with read (or func) the untraced row.
	read, fn, idle := seed["read"], seed["func"], seed["空闲"]
	for _, name := range []string{"sys", "fbt", "sys10", "fbt10"} {
		r := seed[name]
		if got := r.sys - r.hz/read.hz*read.sys; !near(got, r.meSys, 0.0001) {
			t.Errorf("%s: %.4f - %g/%g x %.4f = %.5f, table 7 measured %.4f", name, r.sys, r.hz, read.hz, read.sys, got, r.meSys)
		}
	}
	// profile needs no event: its untraced row is the idle machine's.
	if prof := seed["profile"]; !near(prof.sys-idle.sys, prof.meSys, 1e-9) {
		t.Errorf("profile: %.4f - idle %.4f != measured %.4f", prof.sys, idle.sys, prof.meSys)
	}
	// pid does not follow: func's row gives f' C = 11.5962% usr and
	// 0.0844% sys, where table 7 has 11.6553 and 0.0537. The bundled
	// column is the paper's; this pins the discrepancy down.
	pid := seed["pid"]
	usr := pid.usr - pid.hz/fn.hz*fn.usr
	sys := pid.sys - pid.hz/fn.hz*fn.sys
	if !near(usr, 11.5962, 0.0001) || !near(sys, 0.0844, 0.0001) || near(usr, pid.meUsr, 0.01) || near(sys, pid.meSys, 0.01) {
		t.Errorf("pid from func's row: usr %.4f sys %.4f (table 7: %.4f, %.4f)", usr, sys, pid.meUsr, pid.meSys)
	}

	// The comparison, against the errors worked out by hand: predicted =
	// rate x cycles / 1.7 GHz + Cost_C 0.049541%, the band the rate +-1%.
	db := dbtest.Open(t)
	p := loadParams(t, db.SQL())
	loadSpec(t, db.SQL(), p, "testdata/table7.spec")
	const costC = 0.049541
	type want struct {
		predicted, low, high, measured, errPct, relPct float64
		inBand                                         bool
	}
	hand := map[string]want{}
	var tot want
	for _, s := range spec.Sessions {
		r := seed[s.Name]
		b := r.hz * r.cycles / 1.7e9 * 100
		w := want{predicted: b + costC, low: 0.99*b + costC, high: 1.01*b + costC, measured: r.meSys}
		if !math.IsNaN(r.meUsr) {
			w.measured += r.meUsr
		}
		w.errPct = w.predicted - w.measured
		w.relPct = w.errPct / w.measured * 100
		w.inBand = w.low <= w.measured && w.measured <= w.high
		hand[s.Name] = w
		tot.predicted += w.predicted
		tot.low += w.low
		tot.high += w.high
		tot.measured += w.measured
	}
	tot.errPct = tot.predicted - tot.measured
	tot.relPct = tot.errPct / tot.measured * 100
	tot.inBand = tot.low <= tot.measured && tot.measured <= tot.high
	hand["total"] = tot
	// The same, as numbers: the relative errors of table 7's rows.
	for name, rel := range map[string]float64{
		"sys": -7.60, "fbt": 11.75, "sys10": -3.85, "fbt10": -2.80, "pid": 2.32, "profile": -0.61, "total": -0.54,
	} {
		if !near(hand[name].relPct, rel, 0.005) {
			t.Errorf("%s: relative error %.4f%%, worked out as %.2f%%", name, hand[name].relPct, rel)
		}
	}

	rows, err := db.SQL().QueryContext(context.Background(), queries.OverheadCompareSQL(queries.PaperCPUHz, queries.OverheadFilter{Sessions: spec.SessionNames()}))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var order []string
	for rows.Next() {
		var name string
		var g want
		var sys, usr float64
		if err := rows.Scan(&name, &sys, &usr, &g.predicted, &g.low, &g.high, &g.measured, &g.errPct, &g.relPct, &g.inBand); err != nil {
			t.Fatal(err)
		}
		order = append(order, name)
		if !near(sys+usr, g.predicted, 0.0002) {
			t.Errorf("%s: sys %.4f + usr %.4f != %.4f", name, sys, usr, g.predicted)
		}
		w, ok := hand[name]
		if !ok || !near(g.predicted, w.predicted, 0.00006) || !near(g.low, w.low, 0.00006) || !near(g.high, w.high, 0.00006) ||
			!near(g.measured, w.measured, 1e-9) || !near(g.errPct, w.errPct, 0.00006) || !near(g.relPct, w.relPct, 0.006) || g.inBand != w.inBand {
			t.Errorf("%s: %+v, by hand %+v", name, g, w)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(order, " "); got != "sys fbt sys10 fbt10 pid profile total" {
		t.Errorf("rows %s", got)
	}

	// The paper's claims (section 4): the CPU error is within +-2% (the
	// theoretical against the measured column, sys and usr apart), and
	// the per-firing cost the measurement implies (f' C / f') within +-800
	// cycles of column 2.
	for _, s := range spec.Sessions {
		r := seed[s.Name]
		for _, c := range [][2]float64{{r.thSys, r.meSys}, {r.thUsr, r.meUsr}} {
			if !math.IsNaN(c[1]) && math.Abs(c[0]-c[1]) > 2 {
				t.Errorf("%s: theoretical %.4f%%, measured %.4f%%: more than the paper's 2%%", s.Name, c[0], c[1])
			}
		}
		me := r.meSys
		if s.Name == "pid" {
			me = r.meUsr // the firings are usr time
		}
		if d := me/100*1.7e9/r.hz - r.cycles; math.Abs(d) > 800 {
			t.Errorf("%s: the measurement implies %.0f cycles per firing, %.0f from table 7's %g", s.Name, me/100*1.7e9/r.hz, d, r.cycles)
		}
	}
}

func show(p *float64) string {
	if p == nil {
		return "none"
	}
	return strconv.FormatFloat(*p, 'f', -1, 64)
}

// TestOverheadBand checks the error band of a composed spec against the
// spreads summed by hand from tables 1, 2 and 4.
func TestOverheadBand(t *testing.T) {
	db := dbtest.Open(t)
	p := loadParams(t, db.SQL())
	loadSpec(t, db.SQL(), p, "testdata/composed.spec")
	// entry: 9 predicates arg 46±3 + setx 31±1 + cmp 60±0 + branch 37±13 +
	// ret 28±0, never true (their actions count 0), and one action
	// timestamp 239±0 + stta 1562±0 + ret + count 1402±353; the flow
	// (table 6, DVM, ECB preparation) has no spread.
	entry := 9*(3+1+0+13+0) + 353
	// return: predicate ldta 982±0 + tst 38±0 + branch ±13 + ret, always
	// true; action timestamp + ldta + addsub 41±2 + ret + quantize 2418±126.
	ret := 13 + (2 + 126)
	got := dbtest.Query(t, db.SQL(), "SELECT probe, cycles_spread, rate_spread_hz FROM overhead_spec_probe_costs ORDER BY probe")
	if want := "syscall::read:entry | " + strconv.Itoa(entry) + " | 0\nsyscall::read:return | " + strconv.Itoa(ret) + " | 0\n"; got != want {
		t.Errorf("spreads:\n%s\nwant\n%s", got, want)
	}
	s := predict(t, db.SQL(), 2e9, queries.OverheadFilter{Sessions: []string{"read-latency"}})["read-latency"]
	if d := float64(entry+ret) * 39389 / 2e9 * 100; !near(s.High-s.Total, d, 1e-9) || !near(s.Total-s.Low, d, 1e-9) {
		t.Errorf("band %.6f .. %.6f around %.6f, want +-%.6f", s.Low, s.High, s.Total, d)
	}
	if n := dbtest.Query(t, db.SQL(), "SELECT overhead_cycles_spread('count:2+printf@7+arg'), overhead_cycles_spread(''), overhead_cycles_spread('nothing')"); n != "709 | 0 | NULL\n" {
		t.Errorf("overhead_cycles_spread: %s", n)
	}
}

// TestOverheadOldDatabase: a database made before the spreads and the
// measured table existed gets them when the queries are installed, and
// its spec probes keep working (no spread).
func TestOverheadOldDatabase(t *testing.T) {
	db := dbtest.Open(t)
	if _, err := db.SQL().Exec(`DROP TABLE overhead_measured;
DROP TABLE overhead_spec_probes;
CREATE TABLE overhead_spec_probes (
    session VARCHAR, probe VARCHAR, provider VARCHAR, rate_hz DOUBLE, cycles DOUBLE, context VARCHAR);
INSERT INTO overhead_spec_probes VALUES ('old', 'p', 'fbt', 1000, 1700, NULL);
INSERT INTO overhead_spec_sessions VALUES ('old', 0, 0, false, NULL, NULL);`); err != nil {
		t.Fatal(err)
	}
	if err := queries.Install(context.Background(), db.SQL()); err != nil {
		t.Fatal(err)
	}
	loadParams(t, db.SQL())
	s := predict(t, db.SQL(), 1.7e9, queries.OverheadFilter{Sessions: []string{"old"}})["old"]
	if s.Total != 0.1 || s.Low != 0.1 || s.High != 0.1 {
		t.Errorf("old spec probe: %+v, want 0.1%% with no band", s)
	}
	if got := dbtest.Query(t, db.SQL(), "SELECT count(*) FROM overhead_measured"); got != "0\n" {
		t.Errorf("overhead_measured: %q", got)
	}
}

// TestMeasuredCSVErrors: every mistake in a --measured file reads
// FILE:LINE: what was expected, what was found.
func TestMeasuredCSVErrors(t *testing.T) {
	for _, tc := range []struct{ csv, want string }{
		{"", "m.csv: expected session,measured_pct lines, found none"},
		{"session,measured_pct\n# nothing measured\n\n", "m.csv: expected session,measured_pct lines, found none"},
		{"a,1,2\n", "m.csv:1: expected 2 fields (session,measured_pct), found 3"},
		{"\n\na\n", "m.csv:3: expected 2 fields (session,measured_pct), found 1"},
		{"session,pct\n", `m.csv:1: measured_pct: expected a number >= 0 (percent of one CPU), found "pct"`},
		{"a,1\nb,-2\n", `m.csv:2: measured_pct: expected a number >= 0 (percent of one CPU), found "-2"`},
		{"a,1\nb,\n", `m.csv:2: measured_pct: expected a number >= 0 (percent of one CPU), found ""`},
		{"a,1\n,2\n", "m.csv:2: session: expected a session or run name or a run number, found an empty field"},
		{"a,1\n# b,2\na,3\n", `m.csv:3: expected a new session, found "a" again (first on line 1)`},
		{"a,1\nb\"c,2\n", `m.csv:2: expected CSV fields (session,measured_pct), found bare " in non-quoted-field`},
		{"a,1\nsession,measured_pct\n", `m.csv:2: measured_pct: expected a number >= 0 (percent of one CPU), found "measured_pct"`},
	} {
		_, err := queries.ParseMeasuredCSV("m.csv", strings.NewReader(tc.csv))
		if err == nil || err.Error() != tc.want {
			t.Errorf("%q:\n got %v\nwant %s", tc.csv, err, tc.want)
		}
	}
	m, err := queries.ParseMeasuredCSV("m.csv", strings.NewReader("Session, Measured_Pct\n\"a, b\",1.5\n  c , 2%\n7,0\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Rows) != 3 || m.Rows[0] != (queries.MeasuredRow{Line: 2, Session: "a, b", Pct: 1.5}) ||
		m.Rows[1] != (queries.MeasuredRow{Line: 3, Session: "c", Pct: 2}) || m.Rows[2] != (queries.MeasuredRow{Line: 4, Session: "7", Pct: 0}) {
		t.Errorf("rows %+v", m.Rows)
	}
}

// TestOverheadBandRealTraces predicts real traces of three formats
// (../shared/testdata-external), read in place: every event is priced by
// the default row, an SDT probe whose action printf+timestamp+ret has
// table 4's printf spread of ±2 cycles (timestamp and ret have none), so
// each run's band is its event count / duration x 2 cycles either side;
// then each run's prediction goes back in as its measurement, with error 0.
func TestOverheadBandRealTraces(t *testing.T) {
	const ext = "../../shared/testdata-external/"
	db := dbtest.Open(t)
	for _, f := range []struct{ path, format string }{
		{"btf/kuopinghsu__FreeRTOS-BTF-Trace__tracedata__example-2cores.btf", "btf"},
		{"ftrace/eclipse-tracecompass-incubator__org.eclipse.tracecompass.incubator__tracetypes__org.eclipse.tracecompass.incubator.ftrace.core.tests__res__ftrace_syscalls.txt", "ftrace"},
		{"btf/eclipse-tracecompass__org.eclipse.tracecompass__btf__org.eclipse.tracecompass.btf.core.tests__testfiles__20140219-123819.btf", "btf"},
	} {
		if _, err := os.Stat(ext + f.path); err != nil {
			t.Skipf("real traces not here: %v", err)
		}
		dbtest.Ingest(t, db, ext+f.path, ingest.Options{Format: f.format})
	}
	loadParams(t, db.SQL())
	shares, err := queries.PredictOverhead(context.Background(), db.SQL(), queries.PaperCPUHz, queries.OverheadFilter{AllRuns: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(shares) != 3 {
		t.Fatalf("%d runs predicted", len(shares))
	}
	var csv strings.Builder
	for _, s := range shares {
		var n, first, last int64
		if err := db.SQL().QueryRow("SELECT (SELECT count(*) FROM events WHERE run_id = ?), first_ts, last_ts FROM runs WHERE run_id = ?",
			s.RunID, s.RunID).Scan(&n, &first, &last); err != nil {
			t.Fatal(err)
		}
		half := float64(n) / (float64(last-first) / 1e9) * 2 / queries.PaperCPUHz * 100
		if n == 0 || s.Unpriced != 0 || !near(s.High-s.Total, half, 1e-9*s.Total) || !near(s.Total-s.Low, half, 1e-9*s.Total) {
			t.Errorf("run %d: %d events, %.6f%% in %.6f .. %.6f, want +-%.6f", s.RunID, n, s.Total, s.Low, s.High, half)
		}
		csv.WriteString(strconv.Itoa(int(s.RunID)) + "," + strconv.FormatFloat(s.Total, 'f', -1, 64) + "\n")
	}
	m, err := queries.ParseMeasuredCSV("m.csv", strings.NewReader(csv.String()))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Load(context.Background(), db.SQL(), queries.OverheadFilter{AllRuns: true}); err != nil {
		t.Fatal(err)
	}
	got := dbtest.Query(t, db.SQL(), "SELECT run_id, abs(error_pct) < 1e-9, abs(rel_error_pct) < 1e-9, in_band, source FROM overhead_vs_measured(1.7e9) ORDER BY run_id")
	if want := "1 | true | true | true | m.csv:1\n2 | true | true | true | m.csv:2\n3 | true | true | true | m.csv:3\n"; got != want {
		t.Errorf("against themselves:\n%s\nwant\n%s", got, want)
	}
}
