package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/traceduck/traceduck/internal/tracegen"
)

func TestIngestOneFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "t.duckdb")
	r := td(t, dir, "ingest", "--db", db, seedSample)
	if r.code != 0 {
		t.Fatal(r)
	}
	// 6 state intervals: T_1MS_0 active, then running; Runnable_0
	// running; Core_0 idle, then holding T_1MS_0; Core_1 idle.
	if want := "run 1: " + seedSample + " (btf, 6 events, 6 intervals)\n"; r.stdout != want {
		t.Errorf("stdout %q, want %q", r.stdout, want)
	}
	// stderr is no terminal here: no progress bar, nothing at all.
	if r.stderr != "" {
		t.Errorf("stderr not empty: %q", r.stderr)
	}
	got := scalar(t, dir, db, "SELECT name || '|' || format || '|' || event_count || '|' || source FROM runs")
	if want := "seed-example|btf|6|" + seedSample; got != want {
		t.Errorf("runs: %q, want %q", got, want)
	}
}

func TestIngestStdin(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := runIn(t, dir, readFile(t, seedSample), "ingest", "--db", "t.duckdb", "-")
	if r.code != 0 || r.stdout != "run 1: - (btf, 6 events, 6 intervals)\n" {
		t.Fatal(r)
	}
	if got := scalar(t, dir, "t.duckdb", "SELECT name || '|' || source || '|' || length(sha256) FROM runs"); got != "stdin|-|64" {
		t.Errorf("runs: %q", got)
	}
	// The same bytes again on stdin are a duplicate too.
	r = runIn(t, dir, readFile(t, seedSample), "ingest", "--db", "t.duckdb", "--name", "again", "-")
	expectExit(t, r, 1, "already ingested as run 1", "--force")
	r = runIn(t, dir, readFile(t, seedSample), "ingest", "--db", "t.duckdb", "--name", "again", "--force", "-")
	if r.code != 0 || r.stdout != "run 2: - (btf, 6 events, 6 intervals)\n" {
		t.Fatal(r)
	}
}

func TestIngestDuplicate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "t.duckdb")
	mustRun(t, dir, nil, "ingest", "--db", db, seedSample)
	r := td(t, dir, "ingest", "--db", db, seedSample)
	expectExit(t, r, 1, seedSample+": already ingested as run 1", "--force")
	if n := scalar(t, dir, db, "SELECT count(*) FROM runs"); n != "1" {
		t.Errorf("%s runs after the refused duplicate", n)
	}
	r = td(t, dir, "ingest", "--db", db, "--force", seedSample)
	if r.code != 0 || r.stdout != "run 2: "+seedSample+" (btf, 6 events, 6 intervals)\n" {
		t.Fatal(r)
	}
	if n := scalar(t, dir, db, "SELECT count(*) || '/' || count(DISTINCT sha256) FROM runs"); n != "2/1" {
		t.Errorf("runs/distinct sha256 = %s, want 2/1", n)
	}
}

func TestIngestSeveralPaths(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "t.duckdb")
	a := sampleCopy(t, dir, "a.btf", "a")
	b := sampleCopy(t, dir, "b.btf", "b")
	r := td(t, dir, "ingest", "--db", db, "--tag", "set=1", a, b)
	want := fmt.Sprintf("run 1: %s (btf, 6 events, 6 intervals)\nrun 2: %s (btf, 6 events, 6 intervals)\n", a, b)
	if r.code != 0 || r.stdout != want {
		t.Fatalf("%s\nwant stdout %q", r, want)
	}
	// --name with several paths is a prefix.
	c := sampleCopy(t, dir, "c.btf", "c")
	d := sampleCopy(t, dir, "d.btf", "d")
	mustRun(t, dir, nil, "ingest", "--db", db, "--name", "nightly", c, d)
	// The runs of one call are one system, named by --name or else the
	// first run.
	got := scalar(t, dir, db, "SELECT string_agg(name || ':' || coalesce(tags->>'set', '-') || ':' || coalesce(tags->>'system', '-'), ' ' ORDER BY run_id) FROM runs")
	if got != "a:1:a b:1:a nightly-c:-:nightly nightly-d:-:nightly" {
		t.Errorf("run names and tags: %q", got)
	}
	// One --name with one path is the name.
	e := sampleCopy(t, dir, "e.btf", "e")
	mustRun(t, dir, nil, "ingest", "--db", db, "--name", "exact", e)
	if got := scalar(t, dir, db, "SELECT name || ':' || tags FROM runs WHERE run_id = 5"); got != "exact:{}" {
		t.Errorf("name and tags %q", got)
	}
	// --system names the system, even of one path; --tag system= is the
	// same, and the two must agree.
	f := sampleCopy(t, dir, "f.btf", "f")
	mustRun(t, dir, nil, "ingest", "--db", db, "--system", "rig", "--tag", "k=v", f)
	if got := scalar(t, dir, db, "SELECT (tags->>'k') || '/' || (tags->>'system') FROM runs WHERE run_id = 6"); got != `v/rig` {
		t.Errorf("tags %q", got)
	}
	g := sampleCopy(t, dir, "g.btf", "g")
	h := sampleCopy(t, dir, "h.btf", "h")
	mustRun(t, dir, nil, "ingest", "--db", db, "--tag", "system=bench", g, h)
	if got := scalar(t, dir, db, "SELECT string_agg(replace(tags::VARCHAR, chr(34), ''), ' ' ORDER BY run_id) FROM runs WHERE run_id > 6"); got != `{system:bench} {system:bench}` {
		t.Errorf("tags %q", got)
	}
	r = td(t, dir, "ingest", "--db", db, "--system", "x", "--tag", "system=y", h)
	expectExit(t, r, 2, "--system x and --tag system=y disagree")
}

func TestIngestStopsAtFirstFailure(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "t.duckdb")
	good := sampleCopy(t, dir, "good.btf", "good")
	bad := writeFile(t, dir, "bad.btf", []byte("#version 2.1.4\n#timeScale ns\n0,Sim,0,STI,S_1MS,0,trigger\nx10,S_1MS,0,T,T_1MS_0,0,activate\n"))
	later := sampleCopy(t, dir, "later.btf", "later")
	r := td(t, dir, "ingest", "--db", db, good, bad, later)
	expectExit(t, r, 1, bad+":4:")
	if r.stdout != "run 1: "+good+" (btf, 6 events, 6 intervals)\n" {
		t.Errorf("stdout %q", r.stdout)
	}
	// The message of the ingester is printed as it is, after "traceduck: ".
	if !strings.HasPrefix(r.stderr, "traceduck: "+bad+":4: ") {
		t.Errorf("stderr %q", r.stderr)
	}
	// The run before the failure stays, nothing of the bad file nor of
	// the one after it is there.
	if got := scalar(t, dir, db, "SELECT string_agg(name, ',') || '/' || (SELECT count(*) FROM events) FROM runs"); got != "good/6" {
		t.Errorf("database holds %q, want good/6", got)
	}
}

func TestIngestMissingFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := td(t, dir, "ingest", "--db", "t.duckdb", "nosuch.btf")
	expectExit(t, r, 1, "nosuch.btf", "no such file")
}

func TestIngestSkipBad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := writeFile(t, dir, "bad.btf", []byte("#version 2.1.4\n#timeScale ns\n0,Sim,0,STI,S_1MS,0,trigger\nx10,S_1MS,0,T,T_1MS_0,0,activate\n20,S_1MS,0,T,T_1MS_0,0,activate\n"))
	r := td(t, dir, "ingest", "--db", "t.duckdb", "--skip-bad", bad)
	// Line 4 is skipped: the trigger and the activate at 20 are read, and
	// T_1MS_0 is active from 20 to the end (1 interval); the skipped line
	// is the run's one error, and the line says so.
	if r.code != 0 || r.stdout != "run 1: "+bad+" (btf, 2 events, 1 interval; 1 error, first: "+bad+":4: time: expected a non-negative integer, found \"x10\"; see diagnostics)\n" {
		t.Fatal(r)
	}
	if got := scalar(t, dir, "t.duckdb", "SELECT count(*) FROM diagnostics WHERE src_line = 4"); got != "1" {
		t.Errorf("diagnostics of line 4: %s", got)
	}
}

// TestIngestGenerated ingests a generated trace and checks the running
// time of every process, computed by the generator itself, against the
// state_summary view: the whole path from the command line to SQL.
func TestIngestGenerated(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var buf bytes.Buffer
	truth, err := tracegen.WriteBTF(&buf, tracegen.Config{Events: 20000, Cores: 2, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	path := writeFile(t, dir, "gen.btf", buf.Bytes())
	r := td(t, dir, "ingest", "--db", "t.duckdb", path)
	intervals := scalar(t, dir, "t.duckdb", "SELECT count(*) FROM state_intervals")
	if want := fmt.Sprintf("run 1: %s (btf, %d events, %s intervals)\n", path, truth.Lines, intervals); r.code != 0 || r.stdout != want {
		t.Fatalf("%s\nwant stdout %q", r, want)
	}
	out := mustRun(t, dir, nil, "query", "--db", "t.duckdb", "-o", "csv",
		"SELECT object, total_ns FROM state_summary WHERE kind IN ('task', 'isr') AND state = 'running' ORDER BY object")
	got := map[string]int64{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\r\n")[1:] {
		name, v, _ := strings.Cut(line, ",")
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		got[name] = n
	}
	var names []string
	for name, ns := range truth.Running {
		if ns > 0 {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		t.Fatal("the generator ran nothing")
	}
	for _, name := range names {
		if got[name] != truth.Running[name] {
			t.Errorf("%s: running %d ns in the database, %d ns generated", name, got[name], truth.Running[name])
		}
	}
}

// TestIngestInterrupted sends SIGINT in the middle of an ingest from
// standard input: the ingest stops with exit code 1 and the transaction
// is rolled back.
func TestIngestInterrupted(t *testing.T) {
	dir := t.TempDir()
	var buf bytes.Buffer
	if _, err := tracegen.WriteBTF(&buf, tracegen.Config{Events: 100000, Cores: 2, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	// First part: enough lines for the ingester to be busy, fewer than
	// the 16384 lines between its checks of the context.
	cut := 0
	for i := 0; i < 10000; i++ {
		cut += bytes.IndexByte(data[cut:], '\n') + 1
	}
	cmd := exec.Command(binary, "ingest", "--db", "t.duckdb", "--format", "btf", "-")
	cmd.Dir = dir
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The write returns once the process has taken most of the bytes: it
	// is ingesting, with its signal handler installed.
	if _, err := stdin.Write(data[:cut]); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	// The rest of the trace: the ingester sees the cancellation at its
	// next check (it may also stop reading before the end).
	go func() {
		io.Copy(stdin, bytes.NewReader(data[cut:]))
		stdin.Close()
	}()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatal("ingest did not stop after SIGINT")
	}
	r := result{out.String(), errb.String(), 0}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	}
	expectExit(t, r, 1, "interrupted")
	if r.stdout != "" {
		t.Errorf("stdout %q", r.stdout)
	}
	// The database did not exist: the interrupted ingest leaves none.
	if _, err := os.Stat(filepath.Join(dir, "t.duckdb")); !os.IsNotExist(err) {
		t.Errorf("the interrupted ingest left the database it created: %v", err)
	}
}

// TestTraceCompassRunningTime is the end-to-end check: ingest the
// Trace Compass test trace and ask for the total running time per task.
func TestTraceCompassRunningTime(t *testing.T) {
	t.Parallel()
	trace := filepath.Join("..", "..", "..", "shared", "testdata-external", "btf",
		"eclipse-tracecompass__org.eclipse.tracecompass__btf__org.eclipse.tracecompass.btf.core.tests__testfiles__20140219-123819.btf")
	trace, err := filepath.Abs(trace)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(trace); err != nil {
		t.Skipf("no ../shared beside the repository: %v", err)
	}
	dir := t.TempDir()
	out := mustRun(t, dir, nil, "ingest", "--db", "t.duckdb", trace)
	if !strings.HasPrefix(out, "run 1: "+trace+" (btf, ") {
		t.Errorf("ingest printed %q", out)
	}
	out = mustRun(t, dir, nil, "query", "--db", "t.duckdb", "-o", "csv",
		"SELECT object, total_ns FROM state_summary WHERE kind='task' AND state='running' ORDER BY total_ns DESC")
	lines := strings.Split(strings.TrimSpace(out), "\r\n")
	if len(lines) < 2 || lines[0] != "object,total_ns" {
		t.Fatalf("no running time per task:\n%s", out)
	}
	for _, l := range lines[1:] {
		_, v, _ := strings.Cut(l, ",")
		if n, err := strconv.ParseInt(v, 10, 64); err != nil || n <= 0 {
			t.Errorf("row %q: not a positive running time", l)
		}
	}
}

// TestIngestIdleTask: --idle-task names the traced system's idle loop: the
// CPU is idle while it runs (docs/semantics.md); the pattern is kept in
// runs.meta and the holder gets attrs.idle. Without it the same task is
// busy.
func TestIngestIdleTask(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	trace := writeFile(t, dir, "idle.btf", []byte(`#version 2.1.4
#timeScale ns
0,Timer,0,T,Work,0,activate
0,Core_0,0,T,Work,0,start
100,Core_0,0,T,Work,0,preempt
100,Timer,0,T,idle_loop,0,activate
100,Core_0,0,T,idle_loop,0,start
400,Core_0,0,T,idle_loop,0,preempt
400,Core_0,0,T,Work,0,resume
500,Core_0,0,T,Work,0,terminate
`))
	// (the core passes through nothing for 0 ns at each switch)
	busy := `SELECT string_agg(holder || ':' || busy || ':' || ns, ';' ORDER BY holder) FROM cpu_utilization WHERE run_id = %d AND ns > 0`
	without := filepath.Join(dir, "without.duckdb")
	mustRun(t, dir, nil, "ingest", "--db", without, trace)
	if got, want := scalar(t, dir, without, fmt.Sprintf(busy, 1)), "Work:true:200;idle_loop:true:300"; got != want {
		t.Errorf("without --idle-task: %q, want %q", got, want)
	}
	with := filepath.Join(dir, "with.duckdb")
	mustRun(t, dir, nil, "ingest", "--db", with, "--idle-task", "idle_*", "--idle-task", "IDLE?", trace)
	if got, want := scalar(t, dir, with, fmt.Sprintf(busy, 1)), "Work:true:200;idle_loop:false:300"; got != want {
		t.Errorf("with --idle-task: %q, want %q", got, want)
	}
	if got, want := scalar(t, dir, with, `SELECT string_agg(p, ';') || ':' || (SELECT attrs->>'idle' FROM objects WHERE name = 'idle_loop')
		FROM (SELECT unnest(json_extract_string(meta, '$.idle_tasks[*]')) AS p FROM runs)`), "idle_*;IDLE?:true"; got != want {
		t.Errorf("meta and attrs: %q, want %q", got, want)
	}
}
