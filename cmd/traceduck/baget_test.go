package main

import (
	bin "encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/tracegen"
)

// TestBagetBadRecordAndStdin: a generated log with one record of an
// unknown type stops the ingest at its byte offset, or with --skip-bad
// becomes a run without that record and one diagnostic; on standard input
// the log needs --description.
func TestBagetBadRecordAndStdin(t *testing.T) {
	t.Parallel()
	log, desc, truth, err := tracegen.GenerateBaget(tracegen.BagetConfig{Events: 1000, Seed: 5, ABI: "be64"})
	if err != nil {
		t.Fatal(err)
	}
	// The record after the BLOCK record (8 bytes) that begins the first
	// data block, after the 80-byte header and the service blocks of 1024.
	off := 80 + truth.ServiceBlocks*1024 + 8
	bad := append([]byte(nil), log...)
	bin.BigEndian.PutUint16(bad[off:], 999)
	dir := t.TempDir()
	db := filepath.Join(dir, "t.duckdb")
	descPath := writeFile(t, dir, "minirtos.xml", desc)
	badPath := writeFile(t, dir, "bad.blog", bad)

	r := td(t, dir, "ingest", "--db", db, "--description", descPath, badPath)
	expectExit(t, r, 1, fmt.Sprintf("%s@%d: record type: expected a type the description declares, found 999", badPath, off))
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Errorf("a failed ingest left the database it created: %v", err)
	}

	r = td(t, dir, "ingest", "--db", db, "--description", descPath, "--skip-bad", badPath)
	intervals := scalar(t, dir, db, "SELECT count(*) FROM state_intervals WHERE run_id = 1")
	if want := fmt.Sprintf("run 1: %s (baget, %d events, %s intervals; 1 error, first: %s@%d: record type: expected a type the description declares, found 999; see diagnostics)\n",
		badPath, truth.Events-1, intervals, badPath, off); r.code != 0 || r.stdout != want {
		t.Fatalf("%s\nwant stdout %q", r, want)
	}
	if got := scalar(t, dir, db, "SELECT string_agg(severity || '@' || src_line || ': ' || message, '; ') FROM diagnostics WHERE severity = 'error'"); strings.Trim(got, `"`) != fmt.Sprintf("error@%d: record type: expected a type the description declares, found 999", off) {
		t.Errorf("diagnostics: %q", got)
	}

	// Standard input: refused without --description, read with it.
	r = runIn(t, dir, log, "ingest", "--db", db, "--format", "baget", "-")
	expectExit(t, r, 1, "a log on standard input needs --description FILE.xml")
	r = runIn(t, dir, log, "ingest", "--db", db, "--format", "baget", "--description", descPath, "-")
	intervals = scalar(t, dir, db, "SELECT count(*) FROM state_intervals WHERE run_id = 2")
	if want := fmt.Sprintf("run 2: - (baget, %d events, %s intervals)\n", truth.Events, intervals); r.code != 0 || r.stdout != want {
		t.Fatalf("%s\nwant stdout %q", r, want)
	}
}

// TestBagetCPUStatesNameHolders: the CPU states of a Baget run name their
// holder (docs/baget-format.md 2.7), so the commands that read states
// tell the threads and interrupts apart: `states` lists one level-0 state
// per holder and the processes at level 1, `hist --state` takes a
// thread's name, and the Chrome export names each CPU slice after its
// holder. (They were cpuThr and cpuIntr for every holder, cpuProc for
// every process.)
func TestBagetCPUStatesNameHolders(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "t.duckdb")
	sample, err := filepath.Abs(filepath.Join("..", "..", "samples", "baget"))
	if err != nil {
		t.Fatal(err)
	}
	mustRun(t, dir, nil, "ingest", "--db", db, "--description", filepath.Join(sample, "minirtos-2.1-ppc64.xml"), filepath.Join(sample, "minirtos-2cpu.blog"))

	out := mustRun(t, dir, nil, "states", "--db", db, "--kind", "cpu", "--object", "cpu 0", "--level", "all", "--output", "csv")
	levels := map[string][]string{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
		f := strings.Split(strings.TrimSpace(l), ",")
		levels[f[3]] = append(levels[f[3]], f[4])
	}
	sortedJoin := func(v []string) string { sort.Strings(v); return strings.Join(v, " ") }
	for level, want := range map[string]string{
		"0": "cpuIdle interrupt 11 interrupt 3 interrupt 5 thr0 thr1 thr2 thr3 thr4 thr5",
		"1": "cpuIdle interrupt 11 interrupt 3 interrupt 5 proc1 proc2",
		"2": "cpuIdle cpuInterrupts cpuThreads",
		"3": "busy idle",
	} {
		if got := sortedJoin(levels[level]); got != want {
			t.Errorf("states of cpu 0 at level %s: %s, want %s", level, got, want)
		}
	}

	out = mustRun(t, dir, nil, "hist", "--db", db, "--state", "thr0", "--kind", "cpu")
	if !strings.Contains(out, "cpu 0") || !strings.Contains(out, "cpu 1") || !strings.Contains(out, "Distribution") {
		t.Errorf("hist --state thr0 --kind cpu:\n%s", out)
	}

	mustRun(t, dir, nil, "export", "--db", db, "--chrome", "run.json")
	var doc struct {
		TraceEvents []struct {
			Ph, Name, Cat string
		}
	}
	if err := json.Unmarshal(readFile(t, filepath.Join(dir, "run.json")), &doc); err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, e := range doc.TraceEvents {
		if e.Ph == "X" && e.Cat == "cpu" {
			names[e.Name] = true
		}
	}
	var got []string
	for n := range names {
		got = append(got, n)
	}
	if want := "cpuIdle interrupt 11 interrupt 3 interrupt 5 thr0 thr1 thr2 thr3 thr4 thr5"; sortedJoin(got) != want {
		t.Errorf("Chrome CPU slices: %s, want %s", sortedJoin(got), want)
	}
}

// TestBagetIngestNamesDescription: the ingest line names the description
// a Baget log was read with when traceduck found it itself, beside the log
// or among the bundled ones (as a TOPPERS log's .res found beside it).
func TestBagetIngestNamesDescription(t *testing.T) {
	t.Parallel()
	log, desc, truth, err := tracegen.GenerateBaget(tracegen.BagetConfig{Events: 300, Seed: 7, ABI: "be64"})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	logPath := writeFile(t, dir, "node.blog", log)
	r := td(t, dir, "ingest", "--db", "t.duckdb", logPath)
	expectExit(t, r, 1, fmt.Sprintf(`%s: no description for os "minirtos-2.1" arch "ppc64": give --description FILE.xml (looked for %s and the bundled descriptions)`, logPath, filepath.Join(dir, "minirtos-2.1-ppc64.xml")))

	descPath := writeFile(t, dir, "minirtos-2.1-ppc64.xml", desc)
	r = td(t, dir, "ingest", "--db", "t.duckdb", logPath)
	intervals := scalar(t, dir, "t.duckdb", "SELECT count(*) FROM state_intervals WHERE run_id = 1")
	if want := fmt.Sprintf("run 1: %s (baget, %d events, %s intervals; read with %s, found beside it)\n", logPath, truth.Events, intervals, descPath); r.code != 0 || r.stdout != want {
		t.Fatalf("%s\nwant stdout %q", r, want)
	}
	// Given with --description, the user knows which: not repeated.
	r = td(t, dir, "ingest", "--db", "t.duckdb", "--force", "--description", descPath, logPath)
	if want := fmt.Sprintf("run 2: %s (baget, %d events, %s intervals)\n", logPath, truth.Events, intervals); r.code != 0 || r.stdout != want {
		t.Fatalf("%s\nwant stdout %q", r, want)
	}
	if got := scalar(t, dir, "t.duckdb", "SELECT string_agg(run_id || ':' || coalesce(meta->>'found_beside', '-'), ' ' ORDER BY run_id) FROM runs"); strings.Trim(got, `"`) != "1:"+descPath+" 2:-" {
		t.Errorf("runs.meta found_beside: %s", got)
	}
}

// A description taken from the bundled ones is named as such (no
// generated log matches the bundled ppc32 description, so the line is
// checked on the counts the ingest reads back).
func TestIngestSummaryBundled(t *testing.T) {
	t.Parallel()
	res := ingest.Result{Format: "baget", Events: 12}
	res.Counts.Events = 12
	res.Counts.FoundBundled = "examples/minirtos.xml"
	if got, want := ingestSummary(res, "x.blog"), "x.blog (baget, 12 events; read with the bundled examples/minirtos.xml)"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
