package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestWindowFlags: --from, --to and --relative on states, stats, hist and
// events, on the hand-written trace of queries/state_stats_test.go (run
// 2) beside the BTF seed example (run 1). Core_0 in [50, 270) is worked
// out by hand in queries/state_window_test.go.
func TestWindowFlags(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "t.duckdb")
	hand, err := filepath.Abs(statesHand)
	if err != nil {
		t.Fatal(err)
	}
	mustRun(t, dir, nil, "ingest", "--db", db, seedSample, hand)

	got := mustRun(t, dir, nil, "states", "--db", db, "--run", "2", "--object", "Core_0", "--level", "all", "--from", "50", "--to", "270", "--output", "csv")
	want := "run_id,kind,object,level,state,count,total_ns,mean_ns,min_ns,p50_ns,p90_ns,p99_ns,max_ns,stddev_ns,truncated\r\n" +
		"2,cpu,Core_0,0,idle,6,105,17.5,0,5,60,60,60,23.6,0\r\n" +
		"2,cpu,Core_0,0,A,4,70,17.5,10,15,30,30,30,8.7,0\r\n" +
		"2,cpu,Core_0,0,B,3,45,15,5,10,30,30,30,13.2,0\r\n" +
		"2,cpu,Core_0,1,idle,4,105,26.3,5,10,60,60,60,25,0\r\n" +
		"2,cpu,Core_0,1,A,3,70,23.3,10,15,45,45,45,18.9,0\r\n" +
		"2,cpu,Core_0,1,B,3,45,15,5,10,30,30,30,13.2,0\r\n" +
		"2,cpu,Core_0,2,tasks,5,115,23,5,15,45,45,45,18.2,0\r\n" +
		"2,cpu,Core_0,2,idle,4,105,26.3,5,10,60,60,60,25,0\r\n" +
		"2,cpu,Core_0,3,busy,5,115,23,5,15,45,45,45,18.2,0\r\n" +
		"2,cpu,Core_0,3,idle,4,105,26.3,5,10,60,60,60,25,0\r\n"
	if got != want {
		t.Errorf("states in [50, 270):\n%s\nwant\n%s", got, want)
	}
	// Units, and the figure: T_1MS_0 runs 100..25100.
	got = mustRun(t, dir, nil, "states", "--db", db, "--run", "1", "--kind", "task", "--from", "1us", "--to", "11us", "--output", "csv")
	if want := "run_id,kind,object,level,state,count,total_ns,mean_ns,min_ns,p50_ns,p90_ns,p99_ns,max_ns,stddev_ns,truncated\r\n1,task,T_1MS_0,0,running,1,10000,10000,10000,10000,10000,10000,10000,,0\r\n"; got != want {
		t.Errorf("states of run 1 in [1us, 11us):\n%q\nwant\n%q", got, want)
	}
	// The seed example's events are at 0, 0, 100, 100, 25000 and 25100.
	got = mustRun(t, dir, nil, "stats", "--db", db, "--run", "1", "--depth", "0", "--from", "0", "--to", "101", "--output", "csv")
	if want := "run_id,pos,depth,level,label,count,eco_id,path,class,event,context_kind,context,object_kind,object,context_id,object_id\r\n1,1,0,run,seed-example,4,,[],,,,,,,,\r\n"; got != want {
		t.Errorf("stats in [0, 101):\n%q\nwant\n%q", got, want)
	}
	got = mustRun(t, dir, nil, "events", "--db", db, "--run", "1", "--from", "25000", "--relative", "--output", "csv")
	if want := 3; countLines(got) != want {
		t.Errorf("events from 25000 on: %q, want a header and 2 events", got)
	}
	// Core_0's A in [50, 270): 10 (clipped), 15, 15, 30.
	got = mustRun(t, dir, nil, "hist", "--db", db, "--run", "2", "--state", "A", "--kind", "cpu", "--from", "50", "--to", "270", "--buckets", "0,11,16,31", "--output", "csv")
	if want := "key,bucket,label,count\r\nCore_0,0,0,1\r\nCore_0,11,11,2\r\nCore_0,16,16,1\r\n"; got != want {
		t.Errorf("hist in [50, 270):\n%q\nwant\n%q", got, want)
	}
	expectExit(t, td(t, dir, "hist", "--db", db, "--run", "2", "--state", "A", "--kind", "cpu", "--from", "290", "--to", "300"), 1,
		`no complete interval of state "A" in the window (--from 290 --to 300) among the objects of run 2, kind "cpu"; it has 5 in the whole trace`)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"states", "--db", db, "--from", "5", "--to", "5"}, "--from 5 --to 5: the window is empty (want from < to)"},
		{[]string{"stats", "--db", db, "--relative"}, "--relative: give --from or --to"},
		{[]string{"states", "--db", db, "--from", "soon"}, `--from soon: expected a whole number of ns`},
		{[]string{"hist", "--sql", "SELECT 1", "--to", "5"}, "--from, --to and --relative window the intervals of --state, not the rows of --sql"},
	} {
		expectExit(t, td(t, dir, c.args...), 2, c.want)
	}
}

func countLines(s string) int {
	n := 0
	for _, c := range s {
		if c == '\n' {
			n++
		}
	}
	return n
}

// TestHistSelectBucket lists the intervals behind a bar: Core_0's A of
// 10..20 ns in the hand-written trace (A [10,30) 20, [160,175) 15,
// [185,200) 15; with --unit us a bare bound is in us).
func TestHistSelectBucket(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "t.duckdb")
	hand, err := filepath.Abs(statesHand)
	if err != nil {
		t.Fatal(err)
	}
	mustRun(t, dir, nil, "ingest", "--db", db, hand)
	got := mustRun(t, dir, nil, "hist", "--db", db, "--state", "A", "--kind", "cpu", "--select-bucket", "10..21", "--output", "csv")
	want := "run_id,object_id,kind,object,state,instance,level,start_ts,end_ts,dur\r\n1,1,cpu,Core_0,A,2,0,10,30,20\r\n1,1,cpu,Core_0,A,2,0,160,175,15\r\n1,1,cpu,Core_0,A,2,0,185,200,15\r\n"
	if got != want {
		t.Errorf("--select-bucket 10..21:\n%q\nwant\n%q", got, want)
	}
	if got := mustRun(t, dir, nil, "hist", "--db", db, "--state", "A", "--kind", "cpu", "--unit", "us", "--select-bucket", "0..1", "--output", "csv"); countLines(got) != 6 {
		t.Errorf("--unit us --select-bucket 0..1: every A (5) and the header:\n%s", got)
	}
	expectExit(t, td(t, dir, "hist", "--db", db, "--state", "A", "--select-bucket", "21..10"), 2, `--select-bucket "21..10": the bucket is empty (want LO < HI)`)
	expectExit(t, td(t, dir, "hist", "--sql", "SELECT 1", "--select-bucket", "1..2"), 2, "--select-bucket lists the intervals of --state: give --state")
}

// TestReadmeSeedWindow keeps the README's example of a window ("Each
// seed's workflow") what the command prints (internal/readme runs the
// README's blocks whole; this is the check of the one example at hand).
func TestReadmeSeedWindow(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "s.duckdb")
	mustRun(t, dir, nil, "ingest", "--db", db, seedSample)
	out := mustRun(t, dir, nil, "states", "--db", db, "--from", "1000", "--to", "11000")
	readme := string(readFile(t, filepath.Join("..", "..", "README.md")))
	if !strings.Contains(readme, "\n"+out+"```\n") {
		t.Errorf("README.md lacks the output of states --from 1000 --to 11000 on the seed example:\n%s", out)
	}
}
