package report_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	_ "github.com/traceduck/traceduck/ingest/btf"
	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/internal/tracegen"
	"github.com/traceduck/traceduck/queries/report"
	"github.com/traceduck/traceduck/schema"
)

// slowTask is the task the third run makes slower (a task of seed 7 on 2
// cores with 5 tasks: Task_5ms_0, Task_1ms_1, Task_50ms_2, Task_10ms_3,
// Task_2ms_4).
const slowTask = "Task_10ms_3"

// regressionRuns are three runs of one generated system: v2 is v1 traced
// a little longer, v3 has slowTask's execution times 40% longer.
var regressionRuns = []struct {
	name string
	cfg  tracegen.Config
}{
	{"v1", tracegen.Config{Events: 20_000, Cores: 2, Tasks: 5, Seed: 7}},
	{"v2", tracegen.Config{Events: 21_000, Cores: 2, Tasks: 5, Seed: 7}},
	{"v3", tracegen.Config{Events: 20_000, Cores: 2, Tasks: 5, Seed: 7, ExecScale: map[string]float64{slowTask: 1.4}}},
}

// generated is one written run: its trace and the generator's truth.
type generated struct {
	name  string
	trace []byte
	truth tracegen.Truth
}

// regressionDB returns a database holding the three runs, ingested with
// --name v1, v2, v3 and a build tag, what was generated, and the
// directory of the traces (the runs' source).
func regressionDB(t testing.TB) (*schema.DB, []generated, string) {
	t.Helper()
	dir := t.TempDir()
	db := dbtest.Open(t)
	var gens []generated
	for i, r := range regressionRuns {
		var buf bytes.Buffer
		truth, err := tracegen.WriteBTF(&buf, r.cfg)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, r.name+".btf")
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		dbtest.Ingest(t, db, path, ingest.Options{Name: r.name, Tags: [][2]string{{"build", strconv.Itoa(40 + i)}}})
		gens = append(gens, generated{r.name, buf.Bytes(), truth})
	}
	return db, gens, dir
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
		resp[i] = responses(t, g.trace)
	}
	for name, base := range resp[0] {
		b := float64(nearestRank(base, 0.99))
		for i := range gens {
			id := int32(i + 1)
			want := float64(nearestRank(resp[i][name], 0.99))
			v := findValue(t, doc.Values, "response_p99", name, id)
			if !near(v.Value, want) {
				t.Errorf("%s response_p99 of %s = %g, want %g", gens[i].name, name, v.Value, want)
			}
			if want := float64(nearestRank(resp[i][name], 0.5)); !near(findValue(t, doc.Values, "response_p50", name, id).Value, want) {
				t.Errorf("%s response_p50 of %s = %g, want %g", gens[i].name, name, findValue(t, doc.Values, "response_p50", name, id).Value, want)
			}
			if i == 0 {
				if v.Change != nil {
					t.Errorf("the baseline has a change: %+v", v)
				}
				continue
			}
			if v.Baseline == nil || v.Change == nil || v.ChangePct == nil {
				t.Fatalf("%s %s: no comparison: %+v", gens[i].name, name, v)
			}
			if !near(*v.Baseline, b) || !near(*v.Change, want-b) || !near(*v.ChangePct, 100*(want-b)/b) {
				t.Errorf("%s %s: baseline %g change %g (%g%%), want %g, %g (%g%%)", gens[i].name, name,
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
				want = append(want, gens[i].name+" "+name)
			}
		}
	}
	var got []string
	for _, c := range doc.Crossings {
		got = append(got, gens[c.RunID-1].name+" "+c.Key)
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
		dur := float64(g.truth.LastTS - g.truth.FirstTS)
		for name, ns := range g.truth.Running {
			if ns == 0 {
				continue
			}
			if v := findValue(t, doc.Values, "running_share", name, id); !near(v.Value, float64(ns)/dur) {
				t.Errorf("%s running_share of %s = %g, want %g", g.name, name, v.Value, float64(ns)/dur)
			}
		}
		if v := findValue(t, doc.Values, "event_rate", "", id); !near(v.Value, float64(g.truth.Lines)/(dur/1e9)) {
			t.Errorf("%s event_rate = %g, want %g", g.name, v.Value, float64(g.truth.Lines)/(dur/1e9))
		}
		if r := doc.Runs[i]; r.Events != int64(g.truth.Lines) || r.Duration != int64(dur) || r.CPUs != 2 || r.Compared != (i > 0) {
			t.Errorf("run %d: %+v, want %d events, %d ns, 2 CPUs", id, r, g.truth.Lines, int64(dur))
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
