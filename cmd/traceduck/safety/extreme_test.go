package safety_test

import (
	"database/sql"
	"github.com/traceduck/traceduck/internal/clitest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// normalBTF is a small run with a core, two task instances and idle
// time between them.
const normalBTF = `#version 2.1.4
#timeScale ns
0,Timer,0,T,Work,0,activate
0,Core_0,0,T,Work,0,start
100,Core_0,0,T,Work,0,terminate
150,Timer,0,T,Work,1,activate
150,Core_0,0,T,Work,1,start
300,Core_0,0,T,Work,1,terminate
`

// TestExtremeRunLeavesOthersComputable (issue 20, case 5): runs at the
// time bounds (a BTF run that spans 2^62 ns with its core busy
// throughout, a Chrome run from -2^62 ns without cat) beside a normal
// run: every command works for every run, and what it says of the normal
// run is what it says in a database holding that run alone. Runs past the
// bounds (a Chrome B/E pair at ±9e15 µs, a BTF time near the int64
// maximum) are refused at ingest and leave the database as it was.
func TestExtremeRunLeavesOthersComputable(t *testing.T) {
	dir := t.TempDir()
	normal := clitest.WriteFile(t, dir, "normal.btf", []byte(normalBTF))
	edge := clitest.WriteFile(t, dir, "edge.btf", []byte(`#version 2.1.4
#timeScale ns
0,Timer,0,T,Work,0,activate
0,Core_0,0,T,Work,0,start
4611686018427387904,Core_0,0,T,Work,0,terminate
`))
	negative := clitest.WriteFile(t, dir, "negative.json", []byte(`[
{"name":"a","ph":"B","pid":1,"tid":1,"ts":-4611686018427387.904},
{"name":"b","ph":"X","pid":1,"tid":2,"ts":-5,"dur":5},
{"name":"a","ph":"E","pid":1,"tid":1,"ts":0}]`))
	alone := filepath.Join(dir, "alone.duckdb")
	all := filepath.Join(dir, "all.duckdb")
	clitest.MustRun(t, dir, nil, "ingest", "--db", alone, normal)
	clitest.MustRun(t, dir, nil, "ingest", "--db", all, normal, edge, negative)

	for _, c := range []struct{ name, data, want string }{
		{"hostile.json", `[{"name":"a","cat":"c","ph":"B","pid":1,"tid":1,"ts":-9000000000000000},
{"name":"a","cat":"c","ph":"E","pid":1,"tid":1,"ts":9000000000000000}]`,
			"traceduck: hostile.json@1: time: expected at most 4611686018427387904 ns (2^62 ns, about 146 years) either side of 0, found -9000000000000000000 ns\n"},
		{"hostile.btf", "#version 2.1.4\n#timeScale ns\n0,Core_0,0,T,Work,0,start\n9223372036854775000,Core_0,0,T,Work,0,terminate\n",
			"traceduck: hostile.btf:4: time: expected at most 4611686018427387904 ns (2^62 ns, about 146 years) either side of 0, found 9223372036854775000 ns\n"},
	} {
		clitest.WriteFile(t, dir, c.name, []byte(c.data))
		before := clitest.ReadFile(t, all)
		r := clitest.Td(t, dir, "ingest", "--db", all, c.name)
		if r.Code != 1 || r.Stderr != c.want {
			t.Errorf("ingest %s: %s\nwant exit 1, stderr %q", c.name, r, c.want)
		}
		if string(clitest.ReadFile(t, all)) != string(before) {
			t.Errorf("ingest %s: the refused run changed the database", c.name)
		}
	}

	// What each command says of run 1 is the same beside the extreme runs.
	for _, args := range [][]string{
		{"states", "--run", "1"},
		{"states", "--run", "1", "--level", "all"},
		{"stats", "--run", "1"},
		{"events", "--run", "1"},
		{"overhead", "--run", "1"},
		{"hist", "--state", "running", "--run", "1"},
		{"hist", "--state", "busy", "--level", "-1", "--kind", "cpu", "--run", "1"},
		{"report", "--runs", "1"},
		{"export", "--chrome", "-", "--run", "1"},
		{"query", "SELECT * FROM cpu_load(10, run := 1) ORDER BY ALL"},
		{"query", "SELECT * FROM cpu_load_by_holder(50, run := 1) ORDER BY ALL"},
		{"query", "SELECT * FROM state_trace(-1, run := 1) ORDER BY ALL"},
		{"query", "SELECT * FROM task_instances WHERE run_id = 1 ORDER BY ALL"},
		{"query", "SELECT * FROM sched_stats WHERE run_id = 1 ORDER BY ALL"},
		{"query", "SELECT * FROM cpu_utilization WHERE run_id = 1 ORDER BY ALL"},
	} {
		want := clitest.MustRun(t, dir, nil, append(args, "--db", alone)...)
		got := clitest.MustRun(t, dir, nil, append(args, "--db", all)...)
		if got != want {
			t.Errorf("%q: run 1 beside the extreme runs:\n%s\nalone:\n%s", args, got, want)
		}
	}

	// Every command works over every run, the extreme ones included.
	for _, args := range [][]string{
		{"states"}, {"states", "--level", "all"}, {"stats"}, {"events"}, {"overhead"},
		{"hist", "--state", "running"}, {"hist", "--state", "running", "--pool"},
		{"hist", "--state", "a"}, {"hist", "--state", "busy", "--level", "-1", "--kind", "cpu"},
		{"report"}, {"report", "--html", filepath.Join(dir, "r.html"), "--json", filepath.Join(dir, "r.json")},
		{"export", "--parquet", filepath.Join(dir, "dataset")},
		{"export", "--chrome", filepath.Join(dir, "2.json"), "--run", "2"},
		{"export", "--chrome", filepath.Join(dir, "3.json"), "--run", "3"},
		{"query", "SELECT run_id, count(*), max(load) FROM cpu_load(1000000000000000000) GROUP BY ALL ORDER BY ALL"},
		{"query", "SELECT run_id, max(dur), sum(dur) FROM state_trace(-1) GROUP BY ALL ORDER BY ALL"},
	} {
		clitest.MustRun(t, dir, nil, append(args, "--db", all)...)
	}
	queryEveryView(t, all)
}

// queryEveryView reads every view of the database over every run, and the
// macros as checkViewsAnswer calls them.
func queryEveryView(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("duckdb", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, v := range names(t, db, "SELECT view_name FROM duckdb_views() WHERE NOT internal ORDER BY 1") {
		rows, err := db.Query("SELECT * FROM " + v)
		if err == nil {
			for rows.Next() {
			}
			err = rows.Err()
			rows.Close()
		}
		if err != nil {
			t.Errorf("view %s over every run: %v", v, err)
		}
	}
	checkViewsAnswer(t, db, "beside extreme runs")
}

// TestNullClassEverywhere (issue 20, case 7): a Chrome trace without cat
// (the real nanoseconds.json of Trace Compass) and one whose events have
// neither cat nor name, beside every format's sample: every command works
// over every run, and names a missing class or event (none).
func TestNullClassEverywhere(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "t.duckdb")
	clitest.MustRun(t, dir, nil, "demo", "--db", db)
	nocat := filepath.Join("..", "..", "..", "shared", "testdata-external", "chrome-json",
		"eclipse-tracecompass-incubator__org.eclipse.tracecompass.incubator__tracetypes__org.eclipse.tracecompass.incubator.traceevent.core.tests__traces__nanoseconds.json")
	if _, err := os.Stat(nocat); err != nil {
		t.Skipf("%s: %v", nocat, err)
	}
	nocat, _ = filepath.Abs(nocat)
	noname := clitest.WriteFile(t, dir, "noname.json", []byte(`[{"ph":"B","pid":1,"tid":1,"ts":0},
{"ph":"E","pid":1,"tid":1,"ts":1},
{"ph":"X","ts":2,"dur":3},
{"ph":"i","ts":4},
{"ph":"C","pid":1,"ts":5,"args":{"a":1}},
{"ph":"b","id":1,"pid":1,"ts":6},{"ph":"e","id":1,"pid":1,"ts":7}]`))
	clitest.MustRun(t, dir, nil, "ingest", "--db", db, "--name", "nocat", nocat)
	clitest.MustRun(t, dir, nil, "ingest", "--db", db, "--name", "noname", noname)
	nocatRun := clitest.Scalar(t, dir, db, "SELECT run_id FROM runs WHERE name = 'nocat'")
	nonameRun := clitest.Scalar(t, dir, db, "SELECT run_id FROM runs WHERE name = 'noname'")
	if n := clitest.Scalar(t, dir, db, "SELECT count(*) FROM events WHERE class IS NULL AND run_id = "+nocatRun); n != "16" {
		t.Fatalf("nanoseconds.json: %s events without class, want 16", n)
	}
	for _, args := range [][]string{
		{"stats"}, {"stats", "--order", "oce", "--sort", "count"},
		{"stats", "--run", nocatRun, "--order", "ceo"},
		{"events"}, {"events", "--include", "class=(none)"},
		{"states"}, {"states", "--level", "all"},
		{"report"}, {"report", "--html", filepath.Join(dir, "r.html"), "--json", filepath.Join(dir, "r.json")},
		{"overhead"}, {"overhead", "--probes"},
		{"hist", "--state", "running"},
		{"hist", "--sql", "SELECT class, dur FROM sched_intervals"},
		{"export", "--parquet", filepath.Join(dir, "dataset")},
		{"export", "--chrome", filepath.Join(dir, "nocat.json"), "--run", nocatRun},
		{"export", "--chrome", filepath.Join(dir, "noname-export.json"), "--run", nonameRun},
	} {
		clitest.MustRun(t, dir, nil, append(args, "--db", db)...)
	}
	queryEveryView(t, db)

	// The tree names the missing class; marks name it the same way.
	got := clitest.MustRun(t, dir, nil, "query", "--db", db, "--output", "csv",
		"SELECT label FROM eco_tree('eco') WHERE run_id = "+nocatRun+" AND depth <= 2 ORDER BY pos LIMIT 3")
	if want := "label\r\nnocat\r\n(none)\r\n(none):ns1\r\n"; got != want {
		t.Errorf("eco_tree of nanoseconds.json: %q, want %q", got, want)
	}
	got = clitest.MustRun(t, dir, nil, "events", "--db", db, "--run", nocatRun, "--include", "event=(none):us1", "--output", "csv")
	if n := strings.Count(got, "\r\n"); n != 3 {
		t.Errorf("events --include 'event=(none):us1': %d lines, want a header and 2 events:\n%s", n, got)
	}
	// Exported without cat, read back without class.
	re := filepath.Join(dir, "re.duckdb")
	clitest.MustRun(t, dir, nil, "ingest", "--db", re, filepath.Join(dir, "nocat.json"))
	if n := clitest.Scalar(t, dir, re, "SELECT count(*) FROM events WHERE class IS NOT NULL AND NOT starts_with(args->>'ph', 'M')"); n != "8" {
		t.Errorf("exported nanoseconds.json read back: %s events with a class, want the 8 slices (cat: the kind of their track)", n)
	}
}
