package main

import (
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// TestVersion: --version and version print one line, the same: the
// version, the Go that built traceduck and the DuckDB it embeds.
func TestVersion(t *testing.T) {
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
