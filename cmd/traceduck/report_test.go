package main

import (
	"context"
	"encoding/json"
	"github.com/traceduck/traceduck/internal/clitest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/queries/report"
	"github.com/traceduck/traceduck/schema"
)

// reportDB follows docs/report.md: three runs of one generated system
// written by queries/report/internal/demoruns/gen (v3 with Task_10ms_3
// 40% slower), ingested as v1, v2 and v3. It returns the database.
func reportDB(t *testing.T, dir string) string {
	t.Helper()
	runs := filepath.Join(dir, "runs")
	gen := exec.Command("go", "run", "./queries/report/internal/demoruns/gen", runs)
	gen.Dir = filepath.Join("..", "..")
	if out, err := gen.CombinedOutput(); err != nil {
		t.Fatalf("go run ./queries/report/internal/demoruns/gen: %v\n%s", err, out)
	}
	db := filepath.Join(dir, "runs.duckdb")
	for _, v := range []string{"v1", "v2", "v3"} {
		mustRun(t, dir, nil, "ingest", "--db", db, "--name", v, filepath.Join(runs, v+".btf"))
	}
	return db
}

func TestReport(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := reportDB(t, dir)

	// The command of docs/report.md: the page is written and the job
	// fails with exit code 3, naming what got slower.
	html := filepath.Join(dir, "r.html")
	r := td(t, dir, "report", "--db", db, "--baseline", "v1", "--html", html, "--fail-on", "response_p99 > +10%")
	expectExit(t, r, 3, "traceduck: 1 value beyond a threshold:\n  response_p99 > +10%: response_p99 of Task_10ms_3 in v3: 2.659 ms -> 3.672 ms, +1.013 ms (+38.1%)\n")
	if r.stdout != "" {
		t.Errorf("stdout with --html: %q", r.stdout)
	}
	if page := string(readFile(t, html)); !strings.Contains(page, "<svg") || !strings.Contains(page, "1 value crossed a threshold") {
		t.Errorf("%s is not the report", html)
	}

	// Markdown on standard output, JSON to a file; a threshold on a key
	// glob, by the change in ms.
	js := filepath.Join(dir, "r.json")
	r = td(t, dir, "report", "--db", db, "--json", js, "--markdown", "-", "--fail-on", "response_p99[Task_10ms_*] > +1ms", "--fail-on", "cpu_load > 0.99")
	expectExit(t, r, 3, "1 value beyond a threshold:\n  response_p99[Task_10ms_*] > +1ms: response_p99 of Task_10ms_3 in v3")
	if want := "| `response_p99[Task_10ms_*] > +1ms` | v3 | response_p99 | Task_10ms_3 | 2.659 ms | 3.672 ms | +1.013 ms (+38.1%) |"; !strings.Contains(r.stdout, want) {
		t.Errorf("the Markdown lacks %s:\n%s", want, r.stdout)
	}
	var doc struct {
		Crossings []struct {
			Threshold, Metric, Key, Run string
		} `json:"crossings"`
	}
	if err := json.Unmarshal(readFile(t, js), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Crossings) != 1 || doc.Crossings[0].Run != "v3" || doc.Crossings[0].Key != "Task_10ms_3" {
		t.Errorf("crossings %+v", doc.Crossings)
	}

	// No threshold crossed: exit code 0, and without an output flag the
	// Markdown goes to standard output.
	out := mustRun(t, dir, nil, "report", "--db", db, "--fail-on", "response_p99 > +50%", "--runs", "v1,v3")
	for _, want := range []string{"## traceduck report: 2 runs, baseline v1", "**No threshold crossed** (1 threshold: `response_p99 > +50%`).", "| response_p99 | Task_10ms_3 | 2.659 ms | 3.672 ms (+38.1%) |"} {
		if !strings.Contains(out, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, out)
		}
	}

	// A metric of one's own, checked by its value.
	metrics := writeFile(t, dir, "mine.sql", []byte("-- metric: run_number\n-- unit: count\nSELECT run_id, '' AS key, run_id AS value FROM runs\n"))
	r = td(t, dir, "report", "--db", db, "--metrics", metrics, "--fail-on", "run_number > 2")
	expectExit(t, r, 3, "traceduck: 1 value beyond a threshold:\n  run_number > 2: run_number of (run) in v3: 1 -> 3, +2 (+200%)\n")
}

func TestReportErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "t.duckdb")
	mustRun(t, dir, nil, "ingest", "--db", db, "--name", "a", seedSample)
	bad := writeFile(t, dir, "bad.sql", []byte("-- metric: x\n-- unit: ms\nSELECT 1\n"))
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"threshold", []string{"--fail-on", "response_p99 >> 10%"}, 2, `--fail-on "response_p99 >> 10%": column 15: expected a number, found ">"`},
		{"unknown metric", []string{"--fail-on", "p99 > +1%"}, 2, `--fail-on "p99 > +1%": no metric p99 (the metrics: running_share,`},
		{"hist", []string{"--hist", "latency"}, 2, `--hist "latency": expected response, start_delay, sched_latency, running, ready, waiting, blocked, found "latency"`},
		{"runs", []string{"--runs", "b"}, 2, `--runs: runs selector "b": "b" selects no run`},
		{"baseline", []string{"--baseline", "b"}, 2, "--baseline b: no run has this name or run_id (the runs: 1 a)"},
		{"order", []string{"--order", "time"}, 2, `--order "time": expected ingest, name or tag:KEY`},
		{"top", []string{"--top", "0"}, 2, "--top: expected a number of objects >= 1, found 0"},
		{"two stdouts", []string{"--json", "-", "--markdown", "-"}, 2, "--html, --json and --markdown: only one of them can be - (standard output)"},
		{"metrics file", []string{"--metrics", bad}, 1, bad + `:2: metric x: expected a unit (ns, ratio, count, per_s, number), found "ms"`},
		{"no metrics file", []string{"--metrics", filepath.Join(dir, "none.sql")}, 1, "none.sql: no such file or directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := td(t, dir, append([]string{"report", "--db", db}, tc.args...)...)
			expectExit(t, r, tc.code, tc.want)
		})
	}
	r := td(t, dir, "report", "--db", filepath.Join(dir, "none.duckdb"))
	expectExit(t, r, 1, "none.duckdb: no such database")
	if _, err := os.Stat(filepath.Join(dir, "none.duckdb")); err == nil {
		t.Error("report created a database")
	}
}

// TestReportWindowSeed is the example through the command: in the
// BTF seed example T_1MS_0 runs 100..25100, so in the window
// [1000, 11000) it runs the whole 10000 ns of it (running_share 1), and
// its one instance, which the window cuts, has no response there.
func TestReportWindowSeed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "t.duckdb")
	mustRun(t, dir, nil, "ingest", "--db", db, "--name", "seed", seedSample)
	type doc struct {
		Runs []struct {
			Events   int64 `json:"events"`
			FirstTS  int64 `json:"first_ts"`
			LastTS   int64 `json:"last_ts"`
			Duration int64 `json:"duration_ns"`
		} `json:"runs"`
		Values []struct {
			Metric, Key string
			Value       float64
		} `json:"values"`
		Window *struct {
			From     *int64 `json:"from_ns"`
			To       *int64 `json:"to_ns"`
			Relative bool   `json:"relative"`
		} `json:"window"`
	}
	read := func(args ...string) (doc, map[string]float64) {
		t.Helper()
		var d doc
		out := mustRun(t, dir, nil, append([]string{"report", "--db", db, "--json", "-"}, args...)...)
		if err := json.Unmarshal([]byte(out), &d); err != nil {
			t.Fatal(err)
		}
		vals := map[string]float64{}
		for _, v := range d.Values {
			vals[v.Metric+"/"+v.Key] = v.Value
		}
		return d, vals
	}
	d, vals := read()
	if d.Window != nil || vals["running_share/T_1MS_0"] != 25000.0/25100 || vals["response_max/T_1MS_0"] != 25100 {
		t.Errorf("without a window: %+v %v", d.Window, vals)
	}
	for _, args := range [][]string{{"--from", "1000", "--to", "11000"}, {"--from", "1us", "--to", "11us", "--relative"}} {
		d, vals = read(args...)
		if r := d.Runs[0]; r.Events != 0 || r.FirstTS != 1000 || r.LastTS != 11000 || r.Duration != 10000 {
			t.Errorf("%v: run %+v", args, r)
		}
		if d.Window == nil || *d.Window.From != 1000 || *d.Window.To != 11000 || d.Window.Relative != (len(args) == 5) {
			t.Errorf("%v: window %+v", args, d.Window)
		}
		if vals["running_share/T_1MS_0"] != 1 || vals["cpu_load/Core_0"] != 1 {
			t.Errorf("%v: %v, want running_share and cpu_load 1", args, vals)
		}
		if _, ok := vals["response_max/T_1MS_0"]; ok {
			t.Errorf("%v: the instance the window cuts has a response: %v", args, vals)
		}
	}
	out := mustRun(t, dir, nil, "report", "--db", db, "--from", "1us", "--to", "11us")
	if want := "Window [1 us, 11 us) on the trace's time base: each run's events"; !strings.Contains(out, want) {
		t.Errorf("the Markdown lacks %q:\n%s", want, out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--from", "5ms", "--to", "1ms"}, "--from 5ms --to 1ms: the window is empty (want from < to)"},
		{[]string{"--relative"}, "--relative: give --from or --to"},
		{[]string{"--to", "soon"}, "--to soon:"},
	} {
		expectExit(t, td(t, dir, append([]string{"report", "--db", db}, tc.args...)...), 2, tc.want)
	}
}

// TestReportParquet: parallel CI jobs each ingest a run into one Parquet
// dataset (ingest --parquet), and report --parquet over the dataset says
// what report --db says over a database holding the same runs: the same
// JSON, the database's name aside. The runs' summaries are in the
// dataset (report_summaries, ...) and the report reads them; a dataset
// of an older traceduck, without them, gives the same report too.
func TestReportParquet(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	runs := filepath.Join(dir, "runs")
	gen := exec.Command("go", "run", "./queries/report/internal/demoruns/gen", runs)
	gen.Dir = filepath.Join("..", "..")
	if out, err := gen.CombinedOutput(); err != nil {
		t.Fatalf("go run ./queries/report/internal/demoruns/gen: %v\n%s", err, out)
	}
	dataset := filepath.Join(dir, "dataset")
	names := []string{"v1", "v2", "v3"}
	var wg sync.WaitGroup
	results := make([]result, len(names))
	for i, v := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = runIn(t, dir, nil, "ingest", "--parquet", dataset, "--name", v, "--tag", "build="+v, filepath.Join(runs, v+".btf"))
		}()
	}
	wg.Wait()
	for i, r := range results {
		if r.code != 0 {
			t.Fatalf("job %s: %s", names[i], r)
		}
	}
	// The database holds the runs under the dataset's run_ids.
	order := strings.Fields(datasetQuery(t, dataset, "SELECT string_agg(name, ' ' ORDER BY run_id) FROM runs"))
	if len(order) != 3 {
		t.Fatalf("the dataset's runs: %v", order)
	}
	if got := datasetQuery(t, dataset, "SELECT count(*) FROM report_summaries"); got != "3\n" {
		t.Errorf("the dataset holds %s summaries, want 3", got)
	}
	db := filepath.Join(dir, "runs.duckdb")
	for _, v := range order {
		mustRun(t, dir, nil, "ingest", "--db", db, "--name", v, "--tag", "build="+v, filepath.Join(runs, v+".btf"))
	}
	args := []string{"--baseline", "v1", "--fail-on", "response_p99 > +10%", "--hist", "response", "--hist", "sched_latency:Task_*", "--json", "-"}
	fromDB := td(t, dir, append([]string{"report", "--db", db}, args...)...)
	expectExit(t, fromDB, 3, "response_p99 of Task_10ms_3 in v3: 2.659 ms -> 3.672 ms")
	fromDataset := td(t, dir, append([]string{"report", "--parquet", dataset}, args...)...)
	expectExit(t, fromDataset, 3, "response_p99 of Task_10ms_3 in v3: 2.659 ms -> 3.672 ms")
	want := strings.Replace(fromDB.stdout, jsonString(db), jsonString(dataset), 1)
	if fromDataset.stdout != want {
		t.Errorf("report --parquet differs from report --db:\n%s", dbtest.Diff(want, fromDataset.stdout))
	}

	// A dataset written before the summaries: no report_* folders, and
	// views.sql without their views.
	for _, table := range schema.ReportTables() {
		if err := os.RemoveAll(filepath.Join(dataset, table)); err != nil {
			t.Fatal(err)
		}
	}
	views := filepath.Join(dataset, "views.sql")
	var keep []string
	skip := false
	for _, line := range strings.SplitAfter(string(readFile(t, views)), "\n") {
		if strings.HasPrefix(line, `CREATE OR REPLACE VIEW "report_`) {
			skip = true
		}
		if !skip {
			keep = append(keep, line)
		}
		if skip && strings.HasSuffix(strings.TrimSpace(line), ";") {
			skip = false
		}
	}
	if err := os.WriteFile(views, []byte(strings.Join(keep, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := datasetQuery(t, dataset, "SELECT count(*) FROM information_schema.tables WHERE table_name LIKE 'report%'"); got != "0\n" {
		t.Fatalf("the older dataset still has %s report tables", got)
	}
	older := td(t, dir, append([]string{"report", "--parquet", dataset}, args...)...)
	if older.stdout != want {
		t.Errorf("report --parquet over a dataset without summaries differs from report --db:\n%s", dbtest.Diff(want, older.stdout))
	}
	expectExit(t, td(t, dir, "report"), 2, "give --db FILE or --parquet DIR (one of them)")
	expectExit(t, td(t, dir, "report", "--db", db, "--parquet", dataset), 2, "give --db FILE or --parquet DIR (one of them)")
}

// TestReportDemoSummaries: on the database of traceduck demo (a run or
// two of every format), the report from the summaries its ingests stored
// is the report computed from the runs' tables, whatever the baseline.
func TestReportDemoSummaries(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := clitest.DemoCopy(t, dir, "demo.duckdb")
	ctx := context.Background()
	db, err := schema.OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var runs, summaries int
	if err := db.SQL().QueryRow(`SELECT (SELECT count(*) FROM runs), (SELECT count(*) FROM report_summaries WHERE version = ?)`,
		report.SummaryVersion()).Scan(&runs, &summaries); err != nil {
		t.Fatal(err)
	}
	if runs < 10 || summaries != runs {
		t.Fatalf("%d runs, %d summaries of this version", runs, summaries)
	}
	var hists []report.HistSpec
	for _, s := range []string{"response", "start_delay", "sched_latency", "running", "ready", "waiting", "blocked"} {
		h, err := report.ParseHistSpec(s)
		if err != nil {
			t.Fatal(err)
		}
		hists = append(hists, h)
	}
	formats := strings.Fields(dbtest.Query(t, db.SQL(), "SELECT min(run_id) FROM runs GROUP BY format ORDER BY 1"))
	for _, base := range formats {
		opt := report.Options{Database: path, Baseline: base, Hists: hists}
		build := func() string {
			rep, err := report.Build(ctx, db.SQL(), opt)
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			if err := rep.WriteJSON(&b); err != nil {
				t.Fatal(err)
			}
			return b.String()
		}
		stored := build()
		opt.Recompute = true
		if live := build(); stored != live {
			t.Errorf("baseline run %s: the report from the summaries differs from the live one:\n%s", base, dbtest.Diff(live, stored))
		}
	}
}
