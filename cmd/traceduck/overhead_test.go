package main

import (
	"encoding/csv"
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
	expectExit(t, r, 1, "traceduck: run 7: no such run in "+db)
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
