package main

import (
	"bytes"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/internal/tracegen"
)

// TestDTraceEventsSyscallLatency: a generated event output (the layout of
// the shipped D scripts) is recognized without --format, and the system
// call latencies queried from state_intervals are the ones the simulator
// timed; a bad line stops the ingest with FILE:LINE, or with --skip-bad
// is one diagnostic.
func TestDTraceEventsSyscallLatency(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	truth, err := tracegen.WriteDTrace(&buf, tracegen.DTraceConfig{Lines: 4000, CPUs: 2, Processes: 3, Threads: 2, Seed: 11, Gap: true})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "t.duckdb")
	path := writeFile(t, dir, "syscalls.out", buf.Bytes())

	out := mustRun(t, dir, nil, "ingest", "--db", db, path)
	intervals := scalar(t, dir, db, "SELECT count(*) FROM state_intervals")
	if want := fmt.Sprintf("run 1: %s (dtrace, %d events, %s intervals)\n", path, truth.Lines, intervals); out != want {
		t.Fatalf("ingest: %q, want %q", out, want)
	}

	var names []string
	for n := range truth.Syscalls {
		names = append(names, n)
	}
	sort.Strings(names)
	var want strings.Builder
	want.WriteString("syscall,calls,total_ns,max_ns\r\n")
	for _, n := range names {
		var sum, mx int64
		for _, d := range truth.Syscalls[n] {
			sum += d
			mx = max(mx, d)
		}
		fmt.Fprintf(&want, "%s,%d,%d,%d\r\n", n, len(truth.Syscalls[n]), sum, mx)
	}
	got := mustRun(t, dir, nil, "query", "--db", db, "--output", "csv", `
		SELECT s.state AS syscall, count(*) AS calls, sum(s.dur) AS total_ns, max(s.dur) AS max_ns
		FROM state_intervals s JOIN events e ON e.run_id = s.run_id AND e.seq = s.start_seq
		WHERE e.class = 'syscall' AND NOT s.truncated
		GROUP BY s.state ORDER BY s.state`)
	if got != want.String() {
		t.Errorf("syscall latencies:\n%s\nwant:\n%s", got, want.String())
	}

	// Line 3 of a file: its cpu is not a number.
	bad := writeFile(t, dir, "bad.out", []byte("#traceduck-events 1 timestamp cpu pid tid probe\n"+
		"10 0 5 1 syscall::read:entry\n"+
		"20 x 5 1 syscall::read:return\n"+
		"30 0 5 1 syscall::write:entry\n"))
	r := td(t, dir, "ingest", "--db", db, "--format", "dtrace", bad)
	expectExit(t, r, 1, bad+`:3: column 2 (cpu): expected a CPU number, found "x"`)
	r = td(t, dir, "ingest", "--db", db, "--format", "dtrace", "--skip-bad", bad)
	if want := fmt.Sprintf("run 2: %s (dtrace, 2 events, 2 intervals; 1 error, first: %s:3: column 2 (cpu): expected a CPU number, found \"x\"; see diagnostics)\n", bad, bad); r.code != 0 || r.stdout != want {
		t.Fatalf("%s\nwant stdout %q", r, want)
	}
	if got := scalar(t, dir, db, `SELECT count(*) FILTER (WHERE src_line = 3 AND message = 'column 2 (cpu): expected a CPU number, found "x"') || '/' || count(*)
		FROM diagnostics WHERE run_id = 2 AND severity = 'error'`); got != "1/1" {
		t.Errorf("diagnostics of the bad line: %s, want 1/1", got)
	}
}
