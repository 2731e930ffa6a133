package report_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	_ "github.com/traceduck/traceduck/ingest/btf"
	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/queries/report"
	"github.com/traceduck/traceduck/queries/report/internal/demoruns"
	"github.com/traceduck/traceduck/schema"
)

const slowTask = demoruns.SlowTask

// regressionDB returns a database holding the three runs of demoruns
// (v3 has slowTask 40% slower), ingested with --name v1, v2, v3 and a
// build tag, what was generated, and the directory of the traces (the
// runs' source).
func regressionDB(t testing.TB) (*schema.DB, []demoruns.Written, string) {
	t.Helper()
	dir := t.TempDir()
	db := openSummarized(t)
	runs, err := demoruns.Write(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range runs {
		dbtest.Ingest(t, db, r.Path, ingest.Options{Name: r.Name, Tags: [][2]string{{"build", strconv.Itoa(40 + i)}}})
	}
	return db, runs, dir
}

// responses reads the response times of every complete instance of every
// task and ISR straight from a BTF trace: activate to terminate of the
// same (process, instance).
func responses(t testing.TB, trace []byte) map[string][]int64 {
	t.Helper()
	act := map[[2]string]int64{}
	out := map[string][]int64{}
	sc := bufio.NewScanner(bytes.NewReader(trace))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, ",")
		if len(f) < 7 || (f[3] != "T" && f[3] != "I") {
			continue
		}
		ts, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		k := [2]string{f[4], f[5]}
		switch f[6] {
		case "activate":
			act[k] = ts
		case "terminate":
			a, ok := act[k]
			if !ok {
				t.Fatalf("%q: terminate without activate", line)
			}
			out[f[4]] = append(out[f[4]], ts-a)
		}
	}
	return out
}

// nearestRank is the p-quantile of the durations by the nearest-rank
// definition: the value of rank ceil(p n) in ascending order.
func nearestRank(ds []int64, p float64) int64 {
	s := append([]int64(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	rank := int(math.Ceil(p * float64(len(s))))
	if rank < 1 {
		rank = 1
	}
	return s[rank-1]
}

// jsonValue finds a value in the JSON report, read as plain JSON (so that
// the test sees the documented keys, not the Go structs).
type jsonValue struct {
	Metric    string   `json:"metric"`
	Key       string   `json:"key"`
	RunID     int32    `json:"run_id"`
	Value     float64  `json:"value"`
	Baseline  *float64 `json:"baseline"`
	Change    *float64 `json:"change"`
	ChangePct *float64 `json:"change_pct"`
}

func findValue(t *testing.T, vals []jsonValue, metric, key string, run int32) jsonValue {
	t.Helper()
	for _, v := range vals {
		if v.Metric == metric && v.Key == key && v.RunID == run {
			return v
		}
	}
	t.Fatalf("no value of %s for %q in run %d", metric, key, run)
	return jsonValue{}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestRegressionReport(t *testing.T) {
	ctx := context.Background()
	db, gens, dir := regressionDB(t)
	th, err := report.ParseThreshold("response_p99 > +10%")
	if err != nil {
		t.Fatal(err)
	}
	hist, err := report.ParseHistSpec("response:" + slowTask)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := report.Build(ctx, db.SQL(), report.Options{Database: "runs.duckdb", Baseline: "v1",
		Thresholds: []report.Threshold{th}, Hists: []report.HistSpec{hist}})
	if err != nil {
		t.Fatal(err)
	}
	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Baseline struct {
			RunID int32  `json:"run_id"`
			Name  string `json:"name"`
		} `json:"baseline"`
		Runs []struct {
			RunID    int32  `json:"run_id"`
			Name     string `json:"name"`
			Events   int64  `json:"events"`
			Duration int64  `json:"duration_ns"`
			CPUs     int    `json:"cpus"`
			Compared bool   `json:"compared"`
		} `json:"runs"`
		Values    []jsonValue `json:"values"`
		Crossings []jsonValue `json:"crossings"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Baseline.Name != "v1" || len(doc.Runs) != 3 {
		t.Fatalf("baseline %+v, runs %+v", doc.Baseline, doc.Runs)
	}

	// Response times, recomputed from the traces' activate and terminate
	// lines: every process's p99 and the changes from v1.
	resp := make([]map[string][]int64, len(gens))
	for i, g := range gens {
		resp[i] = responses(t, g.Trace)
	}
	for name, base := range resp[0] {
		b := float64(nearestRank(base, 0.99))
		for i := range gens {
			id := int32(i + 1)
			want := float64(nearestRank(resp[i][name], 0.99))
			v := findValue(t, doc.Values, "response_p99", name, id)
			if !near(v.Value, want) {
				t.Errorf("%s response_p99 of %s = %g, want %g", gens[i].Name, name, v.Value, want)
			}
			if want := float64(nearestRank(resp[i][name], 0.5)); !near(findValue(t, doc.Values, "response_p50", name, id).Value, want) {
				t.Errorf("%s response_p50 of %s = %g, want %g", gens[i].Name, name, findValue(t, doc.Values, "response_p50", name, id).Value, want)
			}
			if i == 0 {
				if v.Change != nil {
					t.Errorf("the baseline has a change: %+v", v)
				}
				continue
			}
			if v.Baseline == nil || v.Change == nil || v.ChangePct == nil {
				t.Fatalf("%s %s: no comparison: %+v", gens[i].Name, name, v)
			}
			if !near(*v.Baseline, b) || !near(*v.Change, want-b) || !near(*v.ChangePct, 100*(want-b)/b) {
				t.Errorf("%s %s: baseline %g change %g (%g%%), want %g, %g (%g%%)", gens[i].Name, name,
					*v.Baseline, *v.Change, *v.ChangePct, b, want-b, 100*(want-b)/b)
			}
		}
	}
	// The slowed task got slower by more than 10% in v3, and that is the
	// crossing the threshold reports; whatever else crossed is what the
	// traces say crossed.
	var want []string
	for name, base := range resp[0] {
		for i := 1; i < len(gens); i++ {
			b, v := nearestRank(base, 0.99), nearestRank(resp[i][name], 0.99)
			if 100*float64(v-b)/float64(b) > 10 {
				want = append(want, gens[i].Name+" "+name)
			}
		}
	}
	var got []string
	for _, c := range doc.Crossings {
		got = append(got, gens[c.RunID-1].Name+" "+c.Key)
	}
	sort.Strings(want)
	sort.Strings(got)
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("crossings %v, want %v", got, want)
	}
	if !contains(got, "v3 "+slowTask) {
		t.Errorf("the slower %s in v3 crossed no threshold: %v", slowTask, got)
	}
	if !rep.Crossed() {
		t.Error("Crossed() is false")
	}

	// Running shares and event rates from the generator's truth.
	for i, g := range gens {
		id := int32(i + 1)
		dur := float64(g.Truth.LastTS - g.Truth.FirstTS)
		for name, ns := range g.Truth.Running {
			if ns == 0 {
				continue
			}
			if v := findValue(t, doc.Values, "running_share", name, id); !near(v.Value, float64(ns)/dur) {
				t.Errorf("%s running_share of %s = %g, want %g", g.Name, name, v.Value, float64(ns)/dur)
			}
		}
		if v := findValue(t, doc.Values, "event_rate", "", id); !near(v.Value, float64(g.Truth.Lines)/(dur/1e9)) {
			t.Errorf("%s event_rate = %g, want %g", g.Name, v.Value, float64(g.Truth.Lines)/(dur/1e9))
		}
		if r := doc.Runs[i]; r.Events != int64(g.Truth.Lines) || r.Duration != int64(dur) || r.CPUs != 2 || r.Compared != (i > 0) {
			t.Errorf("run %d: %+v, want %d events, %d ns, 2 CPUs", id, r, g.Truth.Lines, int64(dur))
		}
	}

	var md bytes.Buffer
	if err := rep.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "| `response_p99 > +10%` | v3 | response_p99 | "+slowTask+" |") {
		t.Errorf("the Markdown does not name the regression of %s in v3:\n%s", slowTask, md.String())
	}
	dbtest.Golden(t, "testdata/regression.md", md.String())
	// The traces' directory changes from one test run to the next.
	dbtest.Golden(t, "testdata/regression.json", strings.ReplaceAll(js.String(), dir, "TMPDIR"))
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestBuildOptions checks the options against the three runs: user
// metrics, selectors, the baseline, the order, and the errors.
func TestBuildOptions(t *testing.T) {
	ctx := context.Background()
	db, gens, _ := regressionDB(t)
	// One connection: the temporary tables of a report would be seen by
	// the queries after it if they were left behind.
	db.SQL().SetMaxOpenConns(1)
	build := func(opt report.Options) (*report.Report, error) {
		opt.Database = "runs.duckdb"
		return report.Build(ctx, db.SQL(), opt)
	}

	t.Run("user metric", func(t *testing.T) {
		ms, err := report.ParseMetrics("mine.sql", `-- metric: complete_instances
-- unit: count
SELECT run_id, object AS key, count(*) AS value FROM task_instances WHERE NOT truncated GROUP BY ALL`)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := build(report.Options{Metrics: ms})
		if err != nil {
			t.Fatal(err)
		}
		for i, g := range gens {
			want := len(responses(t, g.Trace)[slowTask])
			if v, ok := rep.Value("complete_instances", slowTask, int32(i+1)); !ok || v.Value != float64(want) {
				t.Errorf("%s: complete_instances of %s = %+v, want %d", g.Name, slowTask, v, want)
			}
		}
		var temp int
		if err := db.SQL().QueryRow("SELECT count(*) FROM duckdb_tables() WHERE temporary").Scan(&temp); err != nil || temp != 0 {
			t.Errorf("%d temporary tables left (%v)", temp, err)
		}
	})

	t.Run("selection", func(t *testing.T) {
		rep, err := build(report.Options{Runs: "v3", Baseline: "v1", Order: "tag:build"})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range rep.Runs {
			got = append(got, fmt.Sprintf("%s baseline=%v compared=%v", r.Name, r.Baseline, r.Compared))
		}
		if want := "v1 baseline=true compared=false, v3 baseline=false compared=true"; strings.Join(got, ", ") != want {
			t.Errorf("runs %s, want %s", strings.Join(got, ", "), want)
		}
		rep, err = build(report.Options{Runs: "2-3", Order: "name"})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Baseline.Name != "v2" || len(rep.Runs) != 2 {
			t.Errorf("baseline %+v of %d runs, want the first selected, v2, of 2", rep.Baseline, len(rep.Runs))
		}
	})

	for _, tc := range []struct {
		name    string
		opt     report.Options
		metrics string
		want    string
		option  bool // an OptionError
	}{
		{"columns", report.Options{}, "-- metric: bad_cols\nSELECT run_id, object, 1 AS v FROM task_instances",
			"m.sql:1: metric bad_cols: expected the columns run_id, key, value, found run_id, object, v", false},
		{"two rows", report.Options{}, "-- metric: dup\nSELECT 1 AS run_id, 'k' AS key, x AS value FROM range(2) t(x)",
			`m.sql:1: metric dup: expected one row per run and key, found two for run 1 and key "k"`, false},
		{"bad SQL", report.Options{}, "-- metric: broken\nSELECT run_id, key, value FROM no_such_table",
			"m.sql:1: metric broken: Catalog Error: Table with name no_such_table does not exist!", false},
		{"selector", report.Options{Runs: "v9"}, "",
			`--runs: runs selector "v9": "v9" selects no run (see 'SELECT run_id, name, tags FROM runs')`, true},
		{"baseline", report.Options{Baseline: "v7"}, "",
			"--baseline v7: no run has this name or run_id (the runs: 1 v1, 2 v2, 3 v3)", true},
		{"order", report.Options{Order: "size"}, "", `--order "size": expected ingest, name or tag:KEY`, true},
		{"threshold metric", report.Options{Thresholds: []report.Threshold{mustThreshold(t, "nope > 1")}}, "",
			`--fail-on "nope > 1": no metric nope (the metrics: running_share, response_p50, response_p99, response_max, sched_latency_p99, round_trip_p99, resource_wait_p99, cpu_load, event_rate, diagnostics)`, true},
		{"threshold unit", report.Options{Thresholds: []report.Threshold{mustThreshold(t, "event_rate > 1s")}}, "",
			`--fail-on "event_rate > 1s": event_rate is measured in per_s, not a duration: write the limit without s`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opt := tc.opt
			if tc.metrics != "" {
				ms, err := report.ParseMetrics("m.sql", tc.metrics)
				if err != nil {
					t.Fatal(err)
				}
				opt.Metrics = ms
			}
			_, err := build(opt)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("got %v\nwant %s", err, tc.want)
			}
			var oe *report.OptionError
			if errors.As(err, &oe) != tc.option {
				t.Errorf("OptionError: %v, want %v", errors.As(err, &oe), tc.option)
			}
		})
	}
}

func mustThreshold(t *testing.T, spec string) report.Threshold {
	t.Helper()
	th, err := report.ParseThreshold(spec)
	if err != nil {
		t.Fatal(err)
	}
	return th
}

// openSummarized is dbtest.Open whose ingests store the report's
// summaries, as traceduck's do.
func openSummarized(t testing.TB) *schema.DB {
	t.Helper()
	db := dbtest.Open(t)
	db.SetSummarize(report.Summarize)
	return db
}
