package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/ingest"
)

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "t.duckdb")
	sample := sampleCopy(t, dir, "a.btf", "a")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown command", []string{"nosuch"}, `unknown command "nosuch"`},
		{"unknown flag", []string{"ingest", "--db", db, "--bogus", sample}, "unknown flag: --bogus"},
		{"unknown query flag", []string{"query", "--db", db, "--nope", "SELECT 1"}, "unknown flag: --nope"},
		{"ingest without --db", []string{"ingest", sample}, "give --db FILE or --parquet DIR (one of them)"},
		{"query without --db", []string{"query", "SELECT 1"}, "give --db FILE or --parquet DIR (one of them)"},
		{"bad --output", []string{"query", "--db", db, "--output", "xml", "SELECT 1"}, `"xml" is not one of table, csv, json, markdown`},
		{"tag without =", []string{"ingest", "--db", db, "--tag", "build", sample}, `"build" is not key=value`},
		{"tag with empty key", []string{"ingest", "--db", db, "--tag", "=1", sample}, `"=1" is not key=value`},
		{"tag twice", []string{"ingest", "--db", db, "--tag", "a=1", "--tag", "a=2", sample}, `tag "a" given twice`},
		{"ingest without paths", []string{"ingest", "--db", db}, "no trace to ingest"},
		{"stdin twice", []string{"ingest", "--db", db, "-", "-"}, "given 2 times"},
		{"unknown format", []string{"ingest", "--db", db, "--format", "nope", sample}, `unknown format "nope"`},
		{"query with two arguments", []string{"query", "--db", db, "SELECT 1", "SELECT 2"}, "query takes one SQL text (or - for standard input), found 2 arguments: quote the SQL"},
		{"formats with an argument", []string{"formats", "x"}, `unknown command "x"`},
		{"demo with an argument", []string{"demo", "x"}, `unknown command "x"`},
		{"bad --idle-task", []string{"ingest", "--db", db, "--idle-task", "IDLE[0-9", sample}, `--idle-task: idle-task pattern "IDLE[0-9": expected ] to close the [ at column 5, found the end of the pattern`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := td(t, dir, tc.args...)
			expectExit(t, r, 2, tc.want, "--help' for usage")
			if r.stdout != "" {
				t.Errorf("stdout not empty: %q", r.stdout)
			}
		})
	}
	// No usage error wrote anything.
	if _, err := os.Stat(db); err == nil {
		t.Errorf("a usage error created %s", db)
	}
}

func TestEmptySQLIsUsageError(t *testing.T) {
	t.Parallel()
	r := runIn(t, t.TempDir(), []byte("  -- nothing\n"), "query", "--db", ":memory:")
	expectExit(t, r, 2, "no SQL to run")
}

func TestHelpHasExamples(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, args := range [][]string{
		{"--help"}, {"ingest", "--help"}, {"query", "--help"}, {"formats", "--help"},
		{"demo", "--help"}, {"help", "--help"},
	} {
		out := mustRun(t, dir, nil, args...)
		if !strings.Contains(out, "\nExamples:\n  traceduck ") {
			t.Errorf("traceduck %s: no Examples section:\n%s", strings.Join(args, " "), out)
		}
	}
}

func TestNoArgumentsPrintsHelp(t *testing.T) {
	t.Parallel()
	out := mustRun(t, t.TempDir(), nil)
	for _, cmd := range []string{"ingest", "query", "formats", "demo"} {
		if !strings.Contains(out, "  "+cmd+" ") {
			t.Errorf("help does not list %s:\n%s", cmd, out)
		}
	}
}

// TestFormats: every format, in detection order, its name and patterns
// on a line and its description below, within 100 columns.
func TestFormats(t *testing.T) {
	t.Parallel()
	out := mustRun(t, t.TempDir(), nil, "formats")
	if !strings.Contains(out, "btf           *.btf\n    BTF (Best Trace Format) system traces: tasks, ISRs, runnables, semaphores, signals, cores\n") {
		t.Errorf("no btf entry:\n%s", out)
	}
	for _, l := range strings.Split(out, "\n") {
		if len(l) > 100 {
			t.Errorf("a line of %d columns: %q", len(l), l)
		}
	}
	var names []string
	for _, ing := range ingest.Ingesters() {
		names = append(names, ing.Format().Name)
	}
	var got []string
	for _, l := range strings.Split(out, "\n") {
		if l != "" && l[0] != ' ' {
			got = append(got, strings.Fields(l)[0])
		}
	}
	if strings.Join(got, ",") != strings.Join(names, ",") {
		t.Errorf("formats %v, want %v in detection order", got, names)
	}
}
