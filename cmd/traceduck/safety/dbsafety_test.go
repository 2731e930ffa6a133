//go:build unix

package safety_test

import (
	"bufio"
	"bytes"
	"fmt"
	"github.com/traceduck/traceduck/internal/clitest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestHugeNameDoesNotPoisonDatabase: a 50 MB name (a Chrome event, under
// its 64 MiB bound) is kept cut to 32 KiB with a warning, and later
// ingests into the database work (they failed with "read symbols: Out of
// Memory", the name having gone whole into the symbols table).
func TestHugeNameDoesNotPoisonDatabase(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and ingests 50 MB")
	}
	dir := t.TempDir()
	name := strings.Repeat("N", 50<<20)
	clitest.WriteFile(t, dir, "big.json", []byte(`{"traceEvents":[{"name":"`+name+`","ph":"X","ts":1,"dur":2,"pid":1,"tid":1}]}`))
	name = ""
	clitest.MustRun(t, dir, nil, "ingest", "--db", "t.duckdb", "big.json")
	clitest.MustRun(t, dir, nil, "ingest", "--db", "t.duckdb", clitest.SeedSample)
	if got := clitest.Scalar(t, dir, "t.duckdb", "SELECT max(strlen(name)) FROM symbols"); got != "32768" {
		t.Errorf("longest symbol: %s bytes", got)
	}
	if got := clitest.Scalar(t, dir, "t.duckdb", "SELECT message FROM diagnostics WHERE run_id = 1 AND message LIKE 'a name longer%'"); !strings.Contains(got, "a name longer than 32768 bytes: kept cut to its first 32768") {
		t.Errorf("diagnostics of the run: %q", got)
	}
}

// TestManyLongNamesCommit: 160 tasks of 1 MB names each (under the 1 MiB
// line bound) ingest into a fresh database; DuckDB used to abort the
// process at COMMIT (SIGABRT, std::terminate while it rolled back the
// symbols it could not hold under the ingest's memory limit) and leave
// hundreds of MB in FILE.tmp/.
func TestManyLongNamesCommit(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and ingests 160 MB")
	}
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "long.btf"))
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprint(w, "#version 2.1.4\n#timeScale ns\n")
	pad := strings.Repeat("x", 1000_000)
	for i := 0; i < 160; i++ {
		fmt.Fprintf(w, "%d,Core_0,0,T,T%03d_%s,0,start\n", i*10, i, pad)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	r := clitest.Td(t, dir, "ingest", "--db", "t.duckdb", "long.btf")
	clitest.ExpectExit(t, r, 0)
	if got := clitest.Scalar(t, dir, "t.duckdb", "SELECT count(*) || ' ' || max(strlen(name)) FROM objects WHERE kind = 'task'"); got != "160 32768" {
		t.Errorf("tasks: %s", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "t.duckdb.tmp")); !os.IsNotExist(err) {
		t.Errorf("t.duckdb.tmp is left: %v", err)
	}
}

// TestIngestOutOfMemoryIsClean: a run whose long values do not fit under
// the ingest's memory limit at COMMIT (200 BTF notes of 1 MB: DuckDB 1.1
// holds a transaction's long strings in memory until COMMIT) fails with
// one line that says so, the database keeps its runs, and DuckDB's
// temporary directory is gone.
func TestIngestOutOfMemoryIsClean(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and ingests 200 MB")
	}
	dir := t.TempDir()
	clitest.MustRun(t, dir, nil, "ingest", "--db", "t.duckdb", clitest.SeedSample)
	f, err := os.Create(filepath.Join(dir, "values.btf"))
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprint(w, "#version 2.1.4\n#timeScale ns\n")
	for i := 0; i < 200; i++ {
		fmt.Fprintf(w, "%d,Core_0,0,SIG,S,0,write,%d%s\n", i*10, i, strings.Repeat("v", 1000_000))
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	r := clitest.Td(t, dir, "ingest", "--db", "t.duckdb", "values.btf")
	clitest.ExpectExit(t, r, 1, "traceduck: values.btf: DuckDB ran out of memory (an ingest may use 128 MiB), nothing of it was written: ")
	if got := clitest.Scalar(t, dir, "t.duckdb", "SELECT count(*) FROM runs"); got != "1" {
		t.Errorf("runs after the failed ingest: %s", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "t.duckdb.tmp")); !os.IsNotExist(err) {
		t.Errorf("t.duckdb.tmp is left: %v", err)
	}
}

// TestFailedIngestCreatesNoDatabase: an ingest into a --db that does not
// exist and that stores no run leaves no file (it left an empty database
// of 800 KB); one that stores a run before a later path fails keeps it,
// and a database that existed is never removed.
func TestFailedIngestCreatesNoDatabase(t *testing.T) {
	dir := t.TempDir()
	clitest.WriteFile(t, dir, "bad.btf", []byte("#version 2.1.4\n#timeScale ns\nnot,a,btf,line\n"))
	r := clitest.Td(t, dir, "ingest", "--db", "new.duckdb", "bad.btf")
	clitest.ExpectExit(t, r, 1, "traceduck: bad.btf:3: ")
	for _, f := range []string{"new.duckdb", "new.duckdb.wal", "new.duckdb.tmp"} {
		if _, err := os.Stat(filepath.Join(dir, f)); !os.IsNotExist(err) {
			t.Errorf("%s is left after a failed ingest: %v", f, err)
		}
	}
	clitest.ExpectExit(t, clitest.Td(t, dir, "ingest", "--db", "new.duckdb", "no-such.btf"), 1)
	if _, err := os.Stat(filepath.Join(dir, "new.duckdb")); !os.IsNotExist(err) {
		t.Errorf("new.duckdb is left after a missing file: %v", err)
	}
	clitest.ExpectExit(t, clitest.Td(t, dir, "ingest", "--db", "two.duckdb", clitest.SeedSample, "bad.btf"), 1)
	if got := clitest.Scalar(t, dir, "two.duckdb", "SELECT count(*) FROM runs"); got != "1" {
		t.Errorf("the run before the failed path: %s runs", got)
	}
	clitest.MustRun(t, dir, nil, "ingest", "--db", "old.duckdb", clitest.SeedSample)
	clitest.ExpectExit(t, clitest.Td(t, dir, "ingest", "--db", "old.duckdb", "bad.btf"), 1)
	if got := clitest.Scalar(t, dir, "old.duckdb", "SELECT count(*) FROM runs"); got != "1" {
		t.Errorf("the database that existed: %s runs", got)
	}
}

// TestQueryReadOnlyDatabase: a database this process may not write
// (another user's, mode 444) is queried read-only; when its views are not
// this traceduck's, a warning says they may be stale. It failed with
// "Cannot open file: Permission denied". Run as root only: the other user
// is nobody (65534).
func TestQueryReadOnlyDatabase(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run traceduck as another user")
	}
	dir := t.TempDir()
	clitest.MustRun(t, dir, nil, "ingest", "--db", "t.duckdb", clitest.SeedSample)
	for _, d := range []string{dir, filepath.Dir(dir), filepath.Dir(clitest.Binary)} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	db := filepath.Join(dir, "t.duckdb")
	if err := os.Chmod(db, 0o444); err != nil {
		t.Fatal(err)
	}
	asNobody := func(args ...string) clitest.Result {
		t.Helper()
		cmd := exec.Command(clitest.Binary, args...)
		cmd.Dir = dir
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		code := 0
		if err := cmd.Run(); err != nil {
			ee, ok := err.(*exec.ExitError)
			if !ok {
				t.Fatal(err)
			}
			code = ee.ExitCode()
		}
		return clitest.Result{Stdout: out.String(), Stderr: errb.String(), Code: code}
	}
	r := asNobody("query", "--db", "t.duckdb", "--output", "csv", "SELECT count(*) AS n FROM state_summary WHERE run_id = 1 AND state = 'running'")
	if r.Code != 0 || r.Stderr != "" || !strings.HasPrefix(r.Stdout, "n\r\n") {
		t.Errorf("query of a read-only database:\n%s", r)
	}
	if err := os.Chmod(db, 0o644); err != nil {
		t.Fatal(err)
	}
	clitest.MustRun(t, dir, nil, "query", "--db", "t.duckdb", "CREATE OR REPLACE MACRO traceduck_queries_sha256() AS 'an older traceduck'")
	if err := os.Chmod(db, 0o444); err != nil {
		t.Fatal(err)
	}
	r = asNobody("query", "--db", "t.duckdb", "SELECT count(*) FROM runs")
	if want := "traceduck: warning: t.duckdb: opened read-only (this process may not write it): its views are not those of this traceduck and may be stale or missing\n"; r.Code != 0 || r.Stderr != want {
		t.Errorf("query of a read-only database of another library:\n%s\nwant stderr %q", r, want)
	}
	if r := asNobody("ingest", "--db", "t.duckdb", clitest.SeedSample); r.Code != 1 || !strings.Contains(r.Stderr, "Permission denied") {
		t.Errorf("ingest into a read-only database:\n%s", r)
	}
}
