package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDTraceAggregationsCLI: traceduck ingest --format dtrace of a
// DTraceToolkit example (read in place) yields its histograms; the same
// file is detected without --format; --dtrace-scalars=off leaves the
// printa tables out; a broken distribution stops the ingest with
// FILE:LINE, or with --skip-bad is a diagnostic.
func TestDTraceAggregationsCLI(t *testing.T) {
	t.Parallel()
	example, err := filepath.Abs("../../../shared/testdata-external/dtrace/opendtrace__toolkit__Examples__bitesize_example.txt")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(example); err != nil {
		t.Skipf("no external test data: %v", err)
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "t.duckdb")
	out := mustRun(t, dir, nil, "ingest", "--db", db, "--format", "dtrace", example)
	// bitesize_example.txt prints six distributions (its six
	// "Distribution" headers) of 34 bucket rows in all.
	if want := "run 1: " + example + " (dtrace, 0 events, 6 histograms (34 buckets))\n"; out != want {
		t.Errorf("ingest: %q, want %q", out, want)
	}
	// bitesize.d's six distributions: the counts of find (1452, 91, 33, 97)
	got := scalar(t, dir, db, `SELECT count(DISTINCT key) || '|' || sum(count) FILTER (WHERE key = '7109  find /') || '|' || min(func) || '|' || max(func) FROM histograms`)
	if got != "6|1673|quantize|quantize" {
		t.Errorf("histograms: %q", got)
	}

	// detected without --format; the table ingested again under another name
	other := writeFile(t, dir, "copy.txt", append(readFile(t, example), "\n"...))
	mustRun(t, dir, nil, "ingest", "--db", db, "--name", "again", other)
	if got := scalar(t, dir, db, `SELECT string_agg(DISTINCT format, ',') || '|' || count(*) FROM runs`); got != "dtrace|2" {
		t.Errorf("runs: %q", got)
	}
	got = scalar(t, dir, db, `SELECT count(*) FROM histograms a JOIN histograms b ON a.agg = b.agg AND a.key = b.key AND a.label = b.label AND a.count = b.count WHERE a.run_id = 1 AND b.run_id = 2`)
	if got != "34" { // 5 + 6 + 5 + 6 + 3 + 9 rows in the file
		t.Errorf("buckets alike in both runs: %s, want 34", got)
	}

	// printa tables: read by default, not with --dtrace-scalars=off
	table := "^C\n   SYSCALL          COUNT\n   read                 7\n   write               12\n"
	path := writeFile(t, dir, "counts.out", []byte(table))
	mustRun(t, dir, nil, "ingest", "--db", db, "--format", "dtrace", path)
	path2 := writeFile(t, dir, "counts2.out", []byte(table+"\n"))
	mustRun(t, dir, nil, "ingest", "--db", db, "--format", "dtrace", "--dtrace-scalars", "off", path2)
	if got := scalar(t, dir, db, `SELECT string_agg(run_id || ':' || key || '=' || value, ';' ORDER BY run_id, src_line) FROM aggregations`); got != "3:read=7;3:write=12" {
		t.Errorf("aggregations: %q", got)
	}
	r := td(t, dir, "ingest", "--db", db, "--format", "dtrace", "--dtrace-scalars", "some", "--force", path)
	expectExit(t, r, 1, "--dtrace-scalars: expected auto or off, found \"some\"")

	// a broken distribution
	bad := writeFile(t, dir, "bad.out", []byte("^C\n  a\n           value  ------------- Distribution ------------- count\n"+
		fmt.Sprintf("%16s |%s 12x\n", "1024", strings.Repeat("@", 40))))
	r = td(t, dir, "ingest", "--db", db, "--format", "dtrace", bad)
	expectExit(t, r, 1, bad+`:4: expected a count (an integer) after the bar, found "12x"`)
	mustRun(t, dir, nil, "ingest", "--db", db, "--format", "dtrace", "--skip-bad", bad)
	got = scalar(t, dir, db, `SELECT string_agg(src_line || ' ' || severity || ' ' || replace(message, '"', ''), ' / ' ORDER BY severity, src_line) FROM diagnostics WHERE run_id = (SELECT max(run_id) FROM runs)`)
	if want := `4 error expected a count (an integer) after the bar, found 12x / 3 warning distribution at line 3 not stored: a row of it is bad`; strings.Trim(got, `"`) != want { // csv quotes the field
		t.Errorf("diagnostics: %q\nwant %q", got, want)
	}
}
