package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// statesHand is the hand-written BTF trace whose state statistics
// queries/state_stats_test.go works out by hand.
var statesHand = filepath.Join("..", "..", "queries", "testdata", "states-hand.btf")

// TestStatesByHand prints the statistics of the hand-written trace; the
// numbers are those worked out in queries/state_stats_test.go, means and
// standard deviations rounded to 0.1 ns (idle at level 0: 115/9 = 12.8,
// sqrt(29300/72) = 20.2; busy at level 3: 5 15 45 80, mean 36.25 ->
// 36.3, sqrt(3418.75/3) = 33.8; A's runnable at level 1: 5 10 10 28, mean
// 13.25 -> 13.3, sqrt(306.75/3) = 10.1). A core's levels are the CPU
// model's: 0 and 1 the holder, 2 tasks/isrs/idle, 3 busy/idle.
func TestStatesByHand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "t.duckdb")
	trace, err := filepath.Abs(statesHand) // the commands run in dir
	if err != nil {
		t.Fatal(err)
	}
	mustRun(t, dir, nil, "ingest", "--db", db, trace)

	got := mustRun(t, dir, nil, "states", "--db", db, "--kind", "cpu", "--level", "all")
	want := `run_id  kind  object  level  state  count  total_ns  mean_ns  min_ns  p50_ns  p90_ns  p99_ns  max_ns  stddev_ns  truncated
------  ----  ------  -----  -----  -----  --------  -------  ------  ------  ------  ------  ------  ---------  ---------
     1  cpu   Core_0      0  idle       9       115     12.8       0       5      60      60      60       20.2          0
     1  cpu   Core_0      0  A          5       105       21      15      20      30      30      30        6.5          0
     1  cpu   Core_0      0  B          2        35     17.5       5       5      30      30      30       17.7          1
     1  cpu   Core_0      0  IRQ        1         5        5       5       5       5       5       5       NULL          0
     1  cpu   Core_0      1  idle       5       115       23       5      10      60      60      60       22.8          0
     1  cpu   Core_0      1  A          4       105     26.3      15      20      45      45      45       13.1          0
     1  cpu   Core_0      1  B          2        35     17.5       5       5      30      30      30       17.7          1
     1  cpu   Core_0      1  IRQ        1         5        5       5       5       5       5       5       NULL          0
     1  cpu   Core_0      2  tasks      5       140       28       5      20      55      55      55       21.1          1
     1  cpu   Core_0      2  idle       5       115       23       5      10      60      60      60       22.8          0
     1  cpu   Core_0      2  isrs       1         5        5       5       5       5       5       5       NULL          0
     1  cpu   Core_0      3  busy       4       145     36.3       5      15      80      80      80       33.8          1
     1  cpu   Core_0      3  idle       5       115       23       5      10      60      60      60       22.8          0
`
	if got != want {
		t.Errorf("states --kind cpu --level all:\n%s\nwant\n%s", got, want)
	}

	// -1 is each kind's top; a level past the deepest is the top too.
	top := `run_id,kind,object,level,state,count,total_ns,mean_ns,min_ns,p50_ns,p90_ns,p99_ns,max_ns,stddev_ns,truncated
1,cpu,Core_0,3,busy,4,145,36.3,5,15,80,80,80,33.8,1
1,cpu,Core_0,3,idle,5,115,23,5,10,60,60,60,22.8,0
1,task,A,1,on_cpu,5,105,21,15,20,30,30,30,6.5,0
1,task,A,1,runnable,4,53,13.3,5,10,28,28,28,10.1,0
1,task,A,1,blocked,1,10,10,10,10,10,10,10,,0
`
	for _, level := range []string{"-1", "9"} {
		got = mustRun(t, dir, nil, "states", "--db", db, "--run", "1", "--level", level, "--output", "csv", "--object", "Core_0")
		got += mustRun(t, dir, nil, "states", "--db", db, "--run", "1", "--level="+level, "-o", "csv", "--object", "A", "--kind", "task")[len("run_id,kind,object,level,state,count,total_ns,mean_ns,min_ns,p50_ns,p90_ns,p99_ns,max_ns,stddev_ns,truncated\r\n"):]
		if got != crlf(top) {
			t.Errorf("--level %s:\n%q\nwant\n%q", level, got, crlf(top))
		}
	}

	got = mustRun(t, dir, nil, "states", "--db", db, "--object", "B", "--state", "running", "--output", "json")
	want = `[
  {"run_id": 1, "kind": "task", "object": "B", "level": 0, "state": "running", "count": 2, "total_ns": 23, "mean_ns": 11.5, "min_ns": 3, "p50_ns": 3, "p90_ns": 20, "p99_ns": 20, "max_ns": 20, "stddev_ns": 12, "truncated": 1}
]
`
	if got != want {
		t.Errorf("states --object B --state running --output json:\n%s\nwant\n%s", got, want)
	}

	expectExit(t, runIn(t, dir, nil, "states", "--db", db, "--level", "top"), 2,
		`traceduck: --level "top": want an integer (0 atomic, -1 the top) or all`)
	expectExit(t, runIn(t, dir, nil, "states", "--db", db, "--run", "7"), 2,
		"traceduck: --run 7: no such run (the runs: 1 ")
	expectExit(t, runIn(t, dir, nil, "states", "--db", filepath.Join(dir, "none.duckdb")), 1,
		"none.duckdb: no such database")
}

// crlf turns the line ends of s into CRLF, as the csv output writes them.
func crlf(s string) string {
	out := make([]byte, 0, len(s)+16)
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			out = append(out, '\r')
		}
		out = append(out, s[i])
	}
	return string(out)
}

// TestStatesTree prints the state statistics tree of the hand-written
// trace's tasks (queries/state_tree_test.go checks its numbers), sorted by
// total: A (168 ns of top-level intervals) before B (50), on_cpu before
// runnable before blocked.
func TestStatesTree(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "t.duckdb")
	trace, err := filepath.Abs(statesHand)
	if err != nil {
		t.Fatal(err)
	}
	mustRun(t, dir, nil, "ingest", "--db", db, trace)
	got := mustRun(t, dir, nil, "states", "--db", db, "--tree", "--kind", "task", "--sort", "total")
	want := `node             level  count  total_ns  mean_ns  max_ns  p99_ns  truncated
---------------  -----  -----  --------  -------  ------  ------  ---------
states-hand                14       218     15.6      30      30          1
  task                     14       218     15.6      30      30          1
    A                      10       168     16.8      30      30          0
      on_cpu     1          5       105       21      30      30          0
        running  0          5        95       19      30      30          0
        polling  0          2        10        5       5       5          0
      runnable   1          4        53     13.3      28      28          0
        active   0          3        48       16      28      28          0
        ready    0          1         5        5       5       5          0
      blocked    1          1        10       10      10      10          0
        parking  0          1        10       10      10      10          0
    B                       4        50     12.5      30      30          1
      on_cpu     1          2        35     17.5      30      30          1
        running  0          2        23     11.5      20      20          1
        polling  0          2        12        6      10      10          0
      runnable   1          1        10       10      10      10          0
        active   0          2        10        5      10      10          0
      blocked    1          1         5        5       5       5          0
        parking  0          1         5        5       5       5          0
`
	if got != want {
		t.Errorf("states --tree --kind task --sort total:\n%s\nwant\n%s", got, want)
	}
	// kso pools the tasks: their on_cpu is A's 5 and B's 2 intervals.
	got = mustRun(t, dir, nil, "states", "--db", db, "--tree", "--kind", "task", "--order", "kso", "--output", "csv")
	if !strings.Contains(got, ",2,state,on_cpu,1,7,140,") {
		t.Errorf("states --tree --order kso: no pooled on_cpu of 7 intervals, 140 ns:\n%s", got)
	}
	expectExit(t, td(t, dir, "states", "--db", db, "--tree", "--state", "running"), 2, "--state and --tree")
	expectExit(t, td(t, dir, "states", "--db", db, "--order", "kso"), 2, "--order and --sort are for --tree")
}

// TestStatesMarks: --include and --exclude on the state tree of the
// hand-written trace: Core_0's rows at level 3 but its idle.
func TestStatesMarks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "t.duckdb")
	trace, err := filepath.Abs(statesHand)
	if err != nil {
		t.Fatal(err)
	}
	mustRun(t, dir, nil, "ingest", "--db", db, trace)
	got := mustRun(t, dir, nil, "states", "--db", db, "--level", "3", "--include", "kind=cpu", "--exclude", "object=Core_0&state=idle", "--output", "csv")
	if want := "run_id,kind,object,level,state,count,total_ns,mean_ns,min_ns,p50_ns,p90_ns,p99_ns,max_ns,stddev_ns,truncated\r\n1,cpu,Core_0,3,busy,4,145,36.3,5,15,80,80,80,33.8,1\r\n"; got != want {
		t.Errorf("states --include kind=cpu --exclude 'object=Core_0&state=idle':\n%q\nwant\n%q", got, want)
	}
	expectExit(t, td(t, dir, "states", "--db", db, "--include", "stat=x"), 2, `mark "stat=x": expected all, kind=, object=, state= or level=, found "stat=x"`)
}
