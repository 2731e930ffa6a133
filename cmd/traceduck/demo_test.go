package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/samples"
)

func TestDemo(t *testing.T) {
	dir := t.TempDir()
	out := mustRun(t, dir, nil, "demo")
	for i, s := range samples.List() {
		want := fmt.Sprintf("run %d: samples/%s (%s, ", i+1, s.Path, s.Format)
		if !strings.Contains(out, want) {
			t.Errorf("demo output does not mention %q:\n%s", want, out)
		}
	}
	for _, want := range []string{
		"Runs in traceduck-demo.duckdb:",
		"btf-seed-example",
		"event_counts",
		"state_summary",
		"Try:",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output does not mention %q:\n%s", want, out)
		}
	}
	// The three example commands work when pasted into a shell.
	var cmds []string
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, " query --db ") {
			cmds = append(cmds, strings.TrimSpace(line))
		}
	}
	if len(cmds) != 3 {
		t.Fatalf("%d example commands, want 3:\n%s", len(cmds), out)
	}
	if !strings.Contains(cmds[0], `"SELECT run_id, object, total_ns FROM state_summary WHERE kind='task' AND state='running' ORDER BY total_ns DESC"`) {
		t.Errorf("first example is not the running time per task: %s", cmds[0])
	}
	for _, c := range cmds {
		sh := exec.Command("sh", "-c", c)
		sh.Dir = dir
		res, err := sh.CombinedOutput()
		if err != nil {
			t.Errorf("%s: %v\n%s", c, err, res)
			continue
		}
		if lines := strings.Count(string(res), "\n"); lines < 3 {
			t.Errorf("%s: no rows:\n%s", c, res)
		}
	}

	// demo is meant to be run again: it recreates its database.
	again := mustRun(t, dir, nil, "demo")
	if !strings.Contains(again, "run 1: samples/"+samples.List()[0].Path) || strings.Contains(again, fmt.Sprintf("run %d:", len(samples.List())+1)) {
		t.Errorf("second demo did not start afresh:\n%s", again)
	}
}

func TestDemoOtherFile(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "my demo.duckdb")
	out := mustRun(t, dir, nil, "demo", "--db", db)
	if !strings.Contains(out, "'"+db+"'") {
		t.Errorf("the example commands do not quote the database path:\n%s", out)
	}
	if n := scalar(t, dir, db, "SELECT count(*) > 0 FROM events"); n != "true" {
		t.Errorf("demo database has no events")
	}
	// demo does not overwrite a database it did not make.
	mine := filepath.Join(dir, "mine.duckdb")
	mustRun(t, dir, nil, "ingest", "--db", mine, seedSample)
	r := td(t, dir, "demo", "--db", mine)
	expectExit(t, r, 1, "holds 1 run that demo did not ingest")
	if n := scalar(t, dir, mine, "SELECT count(*) FROM runs"); n != "1" {
		t.Errorf("%s runs left in %s", n, mine)
	}
	// Nor a file that is no database.
	text := writeFile(t, dir, "notes.txt", []byte("hello\n"))
	r = td(t, dir, "demo", "--db", text)
	expectExit(t, r, 1, "is not a traceduck demo database")
	if b, _ := os.ReadFile(text); string(b) != "hello\n" {
		t.Error("demo changed a file that is no database")
	}
}
