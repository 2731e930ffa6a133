package main

import (
	"bytes"
	"database/sql"
	"fmt"
	"github.com/traceduck/traceduck/internal/clitest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/samples"
)

func TestDemo(t *testing.T) {
	t.Parallel()
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

	// (demo run again recreates its database: TestDemoOtherFile)
}

func TestDemoOtherFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// A database demo made (the package's copy) takes its runs back out:
	// demo, run again on it, recreates it.
	db := clitest.DemoCopy(t, dir, "my demo.duckdb")
	out := mustRun(t, dir, nil, "demo", "--db", db)
	if !strings.Contains(out, "run 1: samples/"+samples.List()[0].Path) || strings.Contains(out, fmt.Sprintf("run %d:", len(samples.List())+1)) {
		t.Errorf("demo run again did not start afresh:\n%s", out)
	}
	if !strings.Contains(out, "'"+db+"'") {
		t.Errorf("the example commands do not quote the database path:\n%s", out)
	}
	if n := scalar(t, dir, db, "SELECT count(*) > 0 FROM events"); n != "true" {
		t.Errorf("demo database has no events")
	}
	// The Baget system's two machines are on one clock: the sample's
	// machine 1 is 1.5 ms behind, so some messages read received before
	// they were sent on the raw clocks, none once aligned.
	if got := scalar(t, dir, db, `SELECT count(*) || '/' || count(*) FILTER (WHERE receive_ts - send_ts < 0 AND sender_run < receiver_run) || '/' || count(*) FILTER (WHERE transit_ns < 0)
		FROM system_messages WHERE system = 'baget-net'`); !strings.HasSuffix(got, "/0") || strings.Contains(got, "/0/") || strings.HasPrefix(got, "0/") {
		t.Errorf("demo's system: messages/early on the raw clocks/early aligned: %s", got)
	}
	if got := scalar(t, dir, db, `SELECT string_agg(source, ',' ORDER BY run_id) FROM clocks`); got != `"reference,messages"` {
		t.Errorf("demo's clocks: %s", got)
	}
	if !strings.Contains(out, "system baget-net: run 10's clock aligned from ") {
		t.Errorf("demo does not say it aligned the system:\n%s", out)
	}
	if n := scalar(t, dir, db, "SELECT count(*) FROM runs"); n != fmt.Sprint(len(samples.List())) {
		t.Errorf("%s runs after the second demo, want %d", n, len(samples.List()))
	}
}

// Demo recreates only a file it can prove it made: its marker, and nothing
// added since. Anything else is refused, exit 1, the file byte for byte as
// it was (issue 20: a database of the user's with runs tagged sample=...,
// or with no run but other data, was deleted).
func TestDemoRefusesUserData(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, c := range []struct {
		name  string
		setup func(t *testing.T, db string)
		want  string
	}{
		{"a run tagged sample", func(t *testing.T, db string) {
			mustRun(t, dir, nil, "ingest", "--db", db, "--tag", "sample=btf/rtos-2core.btf", seedSample)
		}, "has no traceduck_demo table (the marker demo writes)"},
		{"no run, a table of the user's", func(t *testing.T, db string) {
			// Not even a traceduck database: a DuckDB file of the user's.
			own, err := sql.Open("duckdb", filepath.Join(dir, db))
			if err != nil {
				t.Fatal(err)
			}
			defer own.Close()
			if _, err := own.Exec("CREATE TABLE notes AS SELECT 'precious' AS note"); err != nil {
				t.Fatal(err)
			}
		}, "has no traceduck_demo table (the marker demo writes)"},
		{"no run, an overhead session", func(t *testing.T, db string) {
			mustRun(t, dir, nil, "ingest", "--db", db, seedSample)
			mustRun(t, dir, nil, "query", "--db", db, "DELETE FROM runs; INSERT INTO overhead_spec_sessions VALUES ('mine', 1, 0, false, NULL, NULL)")
		}, "has no traceduck_demo table (the marker demo writes)"},
		{"a demo database with a run added", func(t *testing.T, db string) {
			clitest.DemoCopy(t, dir, db)
			mustRun(t, dir, nil, "ingest", "--db", db, "--force", "--tag", "sample=mine", seedSample)
		}, "holds 1 run that demo did not ingest"},
		{"a demo database with the user's table", func(t *testing.T, db string) {
			clitest.DemoCopy(t, dir, db)
			mustRun(t, dir, nil, "query", "--db", db, "CREATE TABLE notes AS SELECT 'precious' AS note")
		}, "holds table main.notes, which demo did not make"},
		{"a demo database with the user's macro", func(t *testing.T, db string) {
			clitest.DemoCopy(t, dir, db)
			mustRun(t, dir, nil, "query", "--db", db, "CREATE MACRO twice(x) AS 2 * x")
		}, "holds macro main.twice, which demo did not make"},
		{"a demo database with the overhead parameters loaded", func(t *testing.T, db string) {
			clitest.DemoCopy(t, dir, db)
			mustRun(t, dir, nil, "overhead", "--db", db)
		}, "has 9 rows in table overhead_constants where demo wrote 0"},
		{"a demo database with its runs deleted and the user's run", func(t *testing.T, db string) {
			clitest.DemoCopy(t, dir, db)
			mustRun(t, dir, nil, "query", "--db", db, "DELETE FROM runs")
			mustRun(t, dir, nil, "ingest", "--db", db, "--force", seedSample)
		}, "has 1 row in table runs where demo wrote " + fmt.Sprint(len(samples.List()))},
		{"an empty file", func(t *testing.T, db string) {
			writeFile(t, dir, db, nil)
		}, "is empty"},
		{"a text file", func(t *testing.T, db string) {
			writeFile(t, dir, db, []byte("hello\n"))
		}, "is not a DuckDB database it can read (IO Error: The file \"$DB\" exists, but it is not a valid DuckDB database file!)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			db := strings.NewReplacer(" ", "-", ",", "", "'", "").Replace(c.name) + ".duckdb"
			c.setup(t, db)
			if _, err := os.Stat(filepath.Join(dir, db)); err != nil {
				t.Fatalf("the setup made no file: %v", err)
			}
			before := readFile(t, filepath.Join(dir, db))
			r := td(t, dir, "demo", "--db", db)
			want := "traceduck: " + db + ": demo recreates only a database it made, and this file " +
				strings.ReplaceAll(c.want, "$DB", db) + "; remove it or choose another --db\n"
			expectExit(t, r, 1)
			if r.stderr != want {
				t.Errorf("stderr:\n%s\nwant:\n%s", r.stderr, want)
			}
			if after, _ := os.ReadFile(filepath.Join(dir, db)); !bytes.Equal(after, before) {
				t.Errorf("demo changed %s", db)
			}
			if r.stdout != "" {
				t.Errorf("demo printed %q", r.stdout)
			}
		})
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".traceduck-demo-*")); len(left) > 0 {
		t.Errorf("demo left %v", left)
	}
}

// An interrupted demo leaves the file it would have replaced as it was,
// and nothing beside it.
func TestDemoInterrupted(t *testing.T) {
	dir := t.TempDir()
	clitest.DemoCopy(t, dir, "d.duckdb")
	before := readFile(t, filepath.Join(dir, "d.duckdb"))
	// Interrupted as it begins to ingest into the database it builds.
	p := clitest.Start(t, dir, "demo-ingest", nil, "demo", "--db", "d.duckdb")
	p.WaitStopped()
	if err := p.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	r := fromCLI(p.Wait())
	r.stderr = strings.TrimPrefix(r.stderr, "traceduck: stopped at demo-ingest\n")
	expectExit(t, r, 1, "interrupted")
	if after := readFile(t, filepath.Join(dir, "d.duckdb")); !bytes.Equal(after, before) {
		t.Error("an interrupted demo changed the database")
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".traceduck-demo-*")); len(left) > 0 {
		t.Errorf("demo left %v", left)
	}
	mustRun(t, dir, nil, "demo", "--db", "d.duckdb")
}
