package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A glob pattern of many stars against a long name: DuckDB's GLOB
// backtracked (report --hist with four stars against a 300-character name
// ran past a minute, and ignored Ctrl-C); glob_regex matches in linear time.
func TestManyStarPatterns(t *testing.T) {
	dir := t.TempDir()
	name := strings.Repeat("T", 300)
	trace := writeFile(t, dir, "long.btf", []byte("#version 2.1.4\n#timeScale ns\n"+
		"0,Timer,0,T,"+name+",0,activate\n0,Core_0,0,T,"+name+",0,start\n100,Core_0,0,T,"+name+",0,terminate\n"))
	db := filepath.Join(dir, "t.duckdb")
	mustRun(t, dir, nil, "ingest", "--db", db, trace)
	stars := strings.Repeat("*T", 40) + "*X"
	for _, args := range [][]string{
		{"events", "--db", db, "--include", "object=" + stars},
		{"events", "--db", db, "--exclude", "object=" + stars, "--include", "object=*T*T*T*T*X"},
		{"report", "--db", db, "--hist", "running:" + stars},
	} {
		start := time.Now()
		r := runBounded(t, dir, 30*time.Second, nil, 0, args...)
		if r.code != 0 {
			t.Errorf("%q: %s", args[:3], r)
		}
		if strings.Contains(r.stdout, name) {
			t.Errorf("%q: an event matched:\n%s", args[:3], r.stdout)
		}
		t.Logf("%s: %v", args[0], time.Since(start))
	}
	// And a pattern that does match, through the same path.
	r := runBounded(t, dir, 30*time.Second, nil, 0, "events", "--db", db, "--include", "object="+strings.Repeat("*T", 40)+"*")
	if r.code != 0 || strings.Count(r.stdout, name) != 3 {
		t.Errorf("40 stars that match: %s", r)
	}
}

// Ctrl-C and SIGTERM interrupt a query DuckDB is running: the context of
// the command is cancelled, and go-duckdb interrupts the connection.
func TestLongQueryInterrupted(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "t.duckdb")
	mustRun(t, dir, nil, "ingest", "--db", db, seedSample)
	for _, sig := range []os.Signal{os.Interrupt, syscall.SIGTERM} {
		start := time.Now()
		r := runBounded(t, dir, time.Minute, sig, 2*time.Second, "query", "--db", db,
			"SELECT count(*) FROM range(100000000000) a WHERE hash(a.range) = 7")
		if r.code != 1 || r.stderr != "traceduck: interrupted\n" {
			t.Errorf("%v: want exit 1, traceduck: interrupted\n%s", sig, r)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("%v: the query ended %v after it started (the signal came after 2 s)", sig, d)
		}
	}
}
