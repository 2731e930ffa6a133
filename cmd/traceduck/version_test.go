package main

import (
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/queries"
)

// TestVersion: --version and version print one line, the same: the
// version, the Go that built traceduck and the DuckDB it embeds.
func TestVersion(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a := mustRun(t, dir, nil, "--version")
	b := mustRun(t, dir, nil, "version")
	if a != b {
		t.Errorf("--version %q, version %q", a, b)
	}
	want := regexp.MustCompile(`^traceduck (devel|v\S+)( \(commit [0-9a-f]{12}(, modified)?\))?, ` + regexp.QuoteMeta(runtime.Version()) + ` \S+/\S+, DuckDB v1\.1\.\d+\n$`)
	if !want.MatchString(a) {
		t.Errorf("version %q does not match %s", a, want)
	}
	expectExit(t, td(t, dir, "version", "x"), 2, `unknown command "x" for "traceduck version"`)
}

// TestQueryDatabaseAsArgument: the database given as an argument, as
// sqlite3 and duckdb take it, gets the command line to type instead.
func TestQueryDatabaseAsArgument(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	expectExit(t, td(t, dir, "query", "t.duckdb", "SELECT 1"), 2,
		"traceduck: give the database with --db FILE (or a dataset with --parquet DIR): traceduck query --db t.duckdb \"SELECT 1\"\n")
	expectExit(t, td(t, dir, "query", "--db", "t.duckdb", "SELECT", "1"), 2,
		"traceduck: query takes one SQL text (or - for standard input), found 2 arguments: quote the SQL\n")
	db := dir + "/d.duckdb"
	mustRun(t, dir, nil, "ingest", "--db", db, "--name", "seed", seedSample)
	expectExit(t, td(t, dir, "export", "--db", db, "--chrome", dir+"/x.json", "--run", "4"), 2,
		"traceduck: --run 4: no such run (the runs: 1 seed)\n")
}

// TestFormatFlagErrors: a format flag the format does not take is a usage
// error (exit 2) naming the flags it takes, and convert offers only the
// flags of the formats it converts, each labelled with every format that
// takes it.
func TestFormatFlagErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tiny, err := filepath.Abs(filepath.Join("..", "..", "samples", "tlv"))
	if err != nil {
		t.Fatal(err)
	}
	expectExit(t, td(t, dir, "convert", "--format", "tlv", "--resources", filepath.Join(tiny, "tiny.res"), "--description", "x.xml", filepath.Join(tiny, "tiny.log")), 2,
		"traceduck: unknown flag: --description\n")
	expectExit(t, td(t, dir, "ingest", "--db", "t.duckdb", "--format", "tlv", "--resources", filepath.Join(tiny, "tiny.res"), "--description", "x.xml", filepath.Join(tiny, "tiny.log")), 2,
		"format tlv takes no --description (it takes --resources, --rules, --headers)\n")
	expectExit(t, td(t, dir, "ingest", "--db", "t.duckdb", "--format", "btf", "--resources", "x.res", seedSample), 2,
		"format btf takes no --resources (it takes no format flag)\n")
	if _, err := os.Stat(filepath.Join(dir, "t.duckdb")); err == nil {
		t.Error("the failed ingest left a database")
	}
	help := mustRun(t, dir, nil, "convert", "--help")
	for _, flag := range []string{"--description", "--dtrace-scalars"} {
		if strings.Contains(help, flag) {
			t.Errorf("convert --help offers %s:\n%s", flag, help)
		}
	}
	if want := "(formats tlv, toppers-asp, toppers-fmp)"; !strings.Contains(help, "--resources string   TLV resource file (.res): resources, time unit and radix, the rules and headers to use "+want) {
		t.Errorf("convert --help does not label --resources %s:\n%s", want, help)
	}
	if want := "(formats tlv-archive, tlv, toppers-asp, toppers-fmp)"; !strings.Contains(mustRun(t, dir, nil, "ingest", "--help"), want) {
		t.Errorf("ingest --help does not label --headers %s", want)
	}
}

// TestViewsCommand: views lists every table, view and macro within 100
// columns; views NAME describes one; a name that is none is a usage error
// naming the closest.
func TestViewsCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := mustRun(t, dir, nil, "views")
	for _, want := range []string{
		"\n  state_intervals             one row per time an object spent in one state\n",
		"\n  task_instances              one row per process instance (job) of a task, ISR or thread: from...\n",
		"\n  state_stats_window          state_stats over the time window [t1, t2) (ns on the trace's time...\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("views lacks %q", want)
		}
	}
	for _, l := range strings.Split(out, "\n") {
		if len(l) > 100 {
			t.Errorf("a line of %d columns: %q", len(l), l)
		}
	}
	// every view and macro of the library is listed
	for _, d := range queries.Docs() {
		for _, n := range d.Names {
			if !strings.Contains(out, "\n  "+n+" ") && !strings.Contains(out, "\n  "+n+"\n") {
				t.Errorf("views does not list %s", n)
			}
		}
	}
	if got := mustRun(t, dir, nil, "views", "resource_waits"); !strings.HasPrefix(got, "resource_waits (view, queries/resources.sql)\n\nresource_waits: each time a task, thread or ISR waited for a resource,") {
		t.Errorf("views resource_waits:\n%s", got)
	}
	if got := mustRun(t, dir, nil, "views", "runs"); !strings.Contains(got, "  run_id       run number in this database, from 1\n") {
		t.Errorf("views runs:\n%s", got)
	}
	expectExit(t, td(t, dir, "views", "state_stats_windw"), 2,
		"traceduck: state_stats_windw: no table, view or macro of that name (closest: state_stats_window, state_stats_of, state_stats_tree)\n")
}
