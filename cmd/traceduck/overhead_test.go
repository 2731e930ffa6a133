package main

import (
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// specPath is a spec of the queries package's tests, made absolute.
func specPath(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", "queries", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func samplePath(t *testing.T, rel string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", "samples", rel))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestOverheadTable7 prints the paper's table 7 sessions; the numbers are
// asserted against the paper in queries (TestOverheadTable7), this checks
// the command's output end to end.
func TestOverheadTable7(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := mustRun(t, dir, nil, "overhead", "--spec", specPath(t, "table7.spec"))
	golden(t, "overhead-table7.table.golden", out)
	out = mustRun(t, dir, nil, "overhead", "--spec", specPath(t, "composed.spec"), "--probes", "--cpu-hz", "2e9", "--output", "csv")
	golden(t, "overhead-composed-probes.csv.golden", out)
	// The spec from standard input is the same.
	spec := readFile(t, specPath(t, "table7.spec"))
	if again := mustRun(t, dir, spec, "overhead", "--spec", "-"); again != mustRun(t, dir, nil, "overhead", "--spec", specPath(t, "table7.spec")) {
		t.Errorf("--spec - differs from the file:\n%s", again)
	}
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if want := string(readFile(t, path)); got != want {
		t.Errorf("%s differs (run with -update to accept):\ngot\n%s\nwant\n%s", path, got, want)
	}
}

// TestOverheadRuns predicts ingested runs of two formats; the total of a
// run is the sum of its probes.
func TestOverheadRuns(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "t.duckdb")
	mustRun(t, dir, nil, "ingest", "--db", db, samplePath(t, "btf/rtos-2core.btf"), samplePath(t, "qnx/neutrino-2cpu.txt"))
	// Nothing loaded the parameters yet.
	expectExit(t, td(t, dir, "overhead", "--db", db, "--keep-params"), 1,
		db+" holds no overhead parameters: run without --keep-params to load them")
	rows := csvRows(t, mustRun(t, dir, nil, "overhead", "--db", db, "--output", "csv"))
	if len(rows) != 3 || strings.Join(rows[0][:4], ",") != "session,run_id,probes,unpriced" || rows[1][1] != "1" || rows[2][1] != "2" {
		t.Fatalf("every run: %q", rows)
	}
	for _, run := range []string{"1", "2"} {
		sum := csvRows(t, mustRun(t, dir, nil, "overhead", "--db", db, "--run", run, "--output", "csv"))
		probes := csvRows(t, mustRun(t, dir, nil, "overhead", "--db", db, "--run", run, "--probes", "--output", "csv"))
		if len(sum) != 2 || sum[1][1] != run {
			t.Fatalf("run %s: %q", run, sum)
		}
		total := 0.0
		for _, p := range probes[1:] {
			pct, err := strconv.ParseFloat(p[9], 64)
			if err != nil || p[8] != "3399" || p[4] != "sys" {
				t.Fatalf("run %s probe row %q", run, p)
			}
			total += pct
		}
		want, _ := strconv.ParseFloat(sum[1][4], 64) // sys_pct
		if n, _ := strconv.Atoi(sum[1][2]); n != len(probes)-1 || total < want-0.01 || total > want+0.01 || want <= 0 {
			t.Errorf("run %s: sys %g%% over %s probes, the %d probe rows sum to %g%%", run, want, sum[1][2], len(probes)-1, total)
		}
	}
	// Own parameters: a BTF tracer measured at 120 cycles per event.
	params := t.TempDir()
	pc := readFile(t, filepath.Join("..", "..", "queries", "overhead", "probe_costs.tsv"))
	writeFile(t, params, "probe_costs.tsv", append(pc, []byte("btf\t*\t*\t\t\t\t\t\t120\t\t\n")...))
	probes := csvRows(t, mustRun(t, dir, nil, "overhead", "--db", db, "--run", "1", "--probes", "--params", params, "--output", "csv"))
	if probes[1][8] != "120" || probes[1][10] != "btf * *" {
		t.Errorf("with --params: %q", probes[1])
	}
	// --keep-params uses what the database holds: the last parameters
	// loaded, here edited with SQL.
	mustRun(t, dir, nil, "query", "--db", db, "UPDATE probe_costs SET cycles = 240 WHERE format = 'btf'")
	probes = csvRows(t, mustRun(t, dir, nil, "overhead", "--db", db, "--run", "1", "--probes", "--keep-params", "--output", "csv"))
	if probes[1][8] != "240" {
		t.Errorf("with --keep-params: %q", probes[1])
	}
	r := td(t, dir, "overhead", "--db", db, "--run", "7")
	expectExit(t, r, 2, "traceduck: --run 7: no such run (the runs: ")
}

func csvRows(t *testing.T, out string) [][]string {
	t.Helper()
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return rows
}

func TestOverheadErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "t.duckdb")
	spec := specPath(t, "table7.spec")
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"overhead"}, 2, "give --db FILE (predict its runs) or --spec FILE (predict a probe spec)"},
		{[]string{"overhead", "--db", db, "--run", "1", "--spec", spec}, 2, "--run and --spec: give one of them"},
		{[]string{"overhead", "--db", db, "--run", "0"}, 2, "--run: expected a run number from 1, found 0"},
		{[]string{"overhead", "--spec", spec, "--cpu-hz", "0"}, 2, "--cpu-hz: expected a finite clock rate > 0 in Hz, found 0"},
		{[]string{"overhead", "--spec", spec, "--keep-params"}, 2, "--keep-params needs --db"},
		{[]string{"overhead", "--spec", spec, "--output", "xml"}, 2, `"xml" is not one of table, csv, json, markdown`},
		{[]string{"overhead", "--db", db}, 1, db + ": no such database"},
		{[]string{"overhead", "--spec", filepath.Join(dir, "none.spec")}, 1, filepath.Join(dir, "none.spec") + ": no such spec file"},
		{[]string{"overhead", "--spec", writeFile(t, dir, "bad.spec", []byte("probe a provider=fbt\n"))}, 1,
			"traceduck: " + filepath.Join(dir, "bad.spec") + ":1: expected rate=HZ, found none\n"},
		{[]string{"overhead", "--spec", writeFile(t, dir, "item.spec", []byte("probe a provider=fbt rate=1\necb action=cnt\n"))}, 1,
			`item.spec:2: action: expected an item of bundled overhead/items.tsv (or NAME@CYCLES), found "cnt"`},
		{[]string{"overhead", "--spec", spec, "--params", dir}, 1, dir + ": expected one or more of items.tsv"},
	} {
		r := td(t, dir, tc.args...)
		expectExit(t, r, tc.code, tc.want)
	}
	if _, err := os.Stat(db); err == nil {
		t.Errorf("a failed overhead created %s", db)
	}
	if out := mustRun(t, dir, nil, "overhead", "--help"); !strings.Contains(out, "\nExamples:\n  traceduck overhead ") {
		t.Errorf("overhead --help has no examples:\n%s", out)
	}
}

// TestOverheadMeasured: --measured FILE puts a user's measurements beside
// the prediction of their runs, with the errors and a total row computed
// here from the prediction printed without them; the measurements stay
// in the database.
func TestOverheadMeasured(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "t.duckdb")
	mustRun(t, dir, nil, "ingest", "--db", db, samplePath(t, "btf/rtos-2core.btf"), samplePath(t, "qnx/neutrino-2cpu.txt"))
	plain := csvRows(t, mustRun(t, dir, nil, "overhead", "--db", db, "--output", "csv"))
	if strings.Join(plain[0][4:9], ",") != "sys_pct,usr_pct,total_pct,low_pct,high_pct" || len(plain) != 3 {
		t.Fatalf("plain: %q", plain)
	}
	num := func(s string) float64 {
		t.Helper()
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		return f
	}
	measured := map[string]float64{"1": 5.5, "2": 3.1}
	csvFile := writeFile(t, dir, "m.csv", []byte("session,measured_pct\nrtos-2core,5.5\n2,3.1%\n"))
	rows := csvRows(t, mustRun(t, dir, nil, "overhead", "--db", db, "--measured", csvFile, "--output", "csv"))
	if got := strings.Join(rows[0], ","); got != "session,run_id,sys_pct,usr_pct,predicted_pct,low_pct,high_pct,measured_pct,error_pct,rel_error_pct,in_band" || len(rows) != 4 {
		t.Fatalf("header %s, %d rows", got, len(rows))
	}
	var sumP, sumM, sumLo, sumHi float64
	for i, p := range plain[1:] {
		r := rows[i+1]
		pred, lo, hi, m := num(p[6]), num(p[7]), num(p[8]), measured[p[1]]
		sumP, sumM, sumLo, sumHi = sumP+pred, sumM+m, sumLo+lo, sumHi+hi
		if r[0] != p[0] || r[1] != p[1] || r[4] != p[6] || r[5] != p[7] || r[6] != p[8] || num(r[7]) != m ||
			!near(num(r[8]), pred-m, 0.00011) || !near(num(r[9]), (pred-m)/m*100, 0.006) || r[10] != strconv.FormatBool(lo <= m && m <= hi) {
			t.Errorf("run %s: %q, predicted %q, measured %g", p[1], r, p, m)
		}
	}
	tot := rows[3]
	if tot[0] != "total" || tot[1] != "" || !near(num(tot[4]), sumP, 0.00011) || !near(num(tot[5]), sumLo, 0.00011) ||
		!near(num(tot[6]), sumHi, 0.00011) || !near(num(tot[7]), sumM, 1e-9) || !near(num(tot[8]), sumP-sumM, 0.00021) ||
		!near(num(tot[9]), (sumP-sumM)/sumM*100, 0.006) {
		t.Errorf("total %q, want predicted %g measured %g", tot, sumP, sumM)
	}
	// The measurements stay: the next prediction shows them again.
	again := mustRun(t, dir, nil, "overhead", "--db", db, "--output", "csv")
	if again != mustRun(t, dir, nil, "overhead", "--db", db, "--measured", csvFile, "--output", "csv") {
		t.Errorf("without --measured:\n%s", again)
	}
	// One run: its row and a total of it alone.
	one := csvRows(t, mustRun(t, dir, nil, "overhead", "--db", db, "--run", "2", "--output", "csv"))
	if len(one) != 3 || one[1][1] != "2" || one[2][0] != "total" || one[2][4] != one[1][4] || one[2][7] != "3.1" {
		t.Errorf("--run 2: %q", one)
	}
	// Standard input.
	stdin := mustRun(t, dir, []byte("rtos-2core,4\n"), "overhead", "--db", db, "--run", "1", "--measured", "-", "--output", "csv")
	if r := csvRows(t, stdin); r[1][7] != "4" {
		t.Errorf("--measured -: %q", r)
	}

	for _, tc := range []struct {
		args []string
		csv  string
		code int
		want string
	}{
		{[]string{"--db", db}, "rtos-2core,1,2\n", 1, "bad.csv:1: expected 2 fields (session,measured_pct), found 3"},
		{[]string{"--db", db}, "rtos-2core,x\n", 1, `bad.csv:1: measured_pct: expected a number >= 0 (percent of one CPU), found "x"`},
		{[]string{"--db", db}, "rtos-2core,1\nnone,2\n", 1, `bad.csv:2: expected a session or run of the prediction (rtos-2core, neutrino-2cpu), found "none"`},
		{[]string{"--db", db}, "rtos-2core,1\n1,2\n", 1, "bad.csv:2: expected a new session, found run 1 again (first on line 1)"},
		{[]string{"--db", db, "--run", "1"}, "neutrino-2cpu,1\n", 1, `bad.csv:1: expected a session or run of the prediction (rtos-2core), found "neutrino-2cpu"`},
		{[]string{"--db", db, "--probes"}, "rtos-2core,1\n", 2, "--measured and --probes: a measurement is per session, give one of them"},
		{[]string{"--spec", specPath(t, "table7.spec")}, "sys,7\nrtos-2core,1\n", 1, `bad.csv:2: expected a session or run of the prediction (sys, fbt, sys10, fbt10, pid, profile), found "rtos-2core"`},
	} {
		args := append(append([]string{"overhead"}, tc.args...), "--measured", writeFile(t, dir, "bad.csv", []byte(tc.csv)))
		expectExit(t, td(t, dir, args...), tc.code, tc.want)
	}
	expectExit(t, td(t, dir, "overhead", "--db", db, "--measured", filepath.Join(dir, "none.csv")), 1, filepath.Join(dir, "none.csv")+": no such measured file")
	expectExit(t, td(t, dir, "overhead", "--spec", "-", "--measured", "-"), 2, "--measured - and --spec -: only one of them can read standard input")
	// A failed --measured changed nothing: run 1 still has what stdin gave.
	if r := csvRows(t, mustRun(t, dir, nil, "overhead", "--db", db, "--run", "1", "--output", "csv")); r[1][7] != "4" {
		t.Errorf("after the failures: %q", r)
	}
}

// TestOverheadMeasuredAmbiguous: a name two runs share must be given as a
// run number.
func TestOverheadMeasuredAmbiguous(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "t.duckdb")
	btf := readFile(t, samplePath(t, "btf/rtos-2core.btf"))
	for _, d := range []string{"a", "b"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	a := writeFile(t, filepath.Join(dir, "a"), "x.btf", btf)
	b := writeFile(t, filepath.Join(dir, "b"), "x.btf", append(btf, []byte("# another file\n")...))
	mustRun(t, dir, nil, "ingest", "--db", db, a, b)
	m := writeFile(t, dir, "m.csv", []byte("x,1\n"))
	expectExit(t, td(t, dir, "overhead", "--db", db, "--measured", m), 1,
		`m.csv:1: expected a name of one session or run, found "x" naming run 1 and run 2: give the run number`)
	rows := csvRows(t, mustRun(t, dir, nil, "overhead", "--db", db, "--measured", writeFile(t, dir, "n.csv", []byte("2,1\n")), "--output", "csv"))
	if len(rows) != 4 || rows[1][7] != "" || rows[2][7] != "1" || rows[3][7] != "1" {
		t.Errorf("by number: %q", rows)
	}
}

func near(got, want, tol float64) bool { return math.Abs(got-want) <= tol }

// TestOverheadMeasuredSameFile: a run's measurement is kept by its trace's
// sha256, so it holds for every run of the same file, and two lines for
// runs of one file are refused.
func TestOverheadMeasuredSameFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "t.duckdb")
	btf := samplePath(t, "btf/rtos-2core.btf")
	mustRun(t, dir, nil, "ingest", "--db", db, btf)
	mustRun(t, dir, nil, "ingest", "--db", db, "--force", btf)
	expectExit(t, td(t, dir, "overhead", "--db", db, "--measured", writeFile(t, dir, "m.csv", []byte("1,1\n2,2\n"))), 1,
		"m.csv:2: expected one measurement per traced file, found run 2, the same file as run 1 (line 1)")
	rows := csvRows(t, mustRun(t, dir, nil, "overhead", "--db", db, "--measured", writeFile(t, dir, "n.csv", []byte("2,2\n")), "--output", "csv"))
	if len(rows) != 4 || rows[1][7] != "2" || rows[2][7] != "2" || rows[3][7] != "4" {
		t.Errorf("one file, two runs: %q", rows)
	}
}

// TestOverheadMeasuredExported: a Parquet dataset that renumbers a run
// keeps its measurement on it (the measurement follows the trace's
// sha256, not the run number).
func TestOverheadMeasuredExported(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.duckdb"), filepath.Join(dir, "b.duckdb")
	mustRun(t, dir, nil, "ingest", "--db", a, "--name", "first", seedSample)
	mustRun(t, dir, nil, "ingest", "--db", b, "--name", "second", samplePath(t, "btf/rtos-2core.btf"))
	mustRun(t, dir, nil, "overhead", "--db", b, "--measured", writeFile(t, dir, "m.csv", []byte("second,7.5\n")))
	ds := filepath.Join(dir, "ds")
	mustRun(t, dir, nil, "export", "--db", a, "--parquet", ds)
	mustRun(t, dir, nil, "export", "--db", b, "--parquet", ds) // its run 1 becomes the dataset's run 2
	got := datasetQuery(t, ds, "SELECT session, run_id, measured_pct FROM overhead_vs_measured(1.7e9) ORDER BY run_id")
	if want := "first | 1 | NULL\nsecond | 2 | 7.5\n"; got != want {
		t.Errorf("the dataset's measurements:\n%s\nwant\n%s", got, want)
	}
}
