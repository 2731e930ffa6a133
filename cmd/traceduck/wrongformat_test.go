package main

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/dbtest"
)

// wrongFormatMessage is an error at a place of the file: FILE:LINE: or
// FILE@OFFSET:, then what was expected.
var wrongFormatMessage = regexp.MustCompile(`^traceduck: (\S+)(:[1-9][0-9]*|@[0-9]+): .*expected`)

// TestWrongFormat: every format named with --format, given a file of
// every other format (the samples, and the third-party traces when
// shared/ is there), stops with an error at a line or a byte of the file,
// exit code 1, and writes nothing: no run, so the file's sha256 is not
// taken and the ingest with the right format then succeeds in the same
// database.
func TestWrongFormat(t *testing.T) {
	if testing.Short() {
		t.Skip("ingests each format's files with every other format")
	}
	samples := filepath.Join("..", "..", "samples")
	ext := filepath.Join("..", "..", "..", "shared", "testdata-external")
	asp := filepath.Join(ext, "toppers", "YixiaoLi__tlv4mc__sampleFiles__SampleLog__asp__asp_short")
	tlvdata := filepath.Join("..", "..", "ingest", "tlv", "testdata")
	type format struct {
		name  string // a format of `traceduck formats`; tlv twice: with conversion rules and without
		flags []string
		files []string // its files; those that are absent are left out
	}
	formats := []format{
		{"baget", []string{"--description", filepath.Join(samples, "baget", "minirtos-2.1-ppc64.xml")},
			[]string{filepath.Join(samples, "baget", "minirtos-2cpu.blog")}},
		{"kev", nil, []string{filepath.Join("..", "..", "ingest", "qnx", "testdata", "kev", "seed-example.kev")}},
		{"tlv-archive", nil, []string{asp + ".tlv"}},
		{"btf", nil, []string{filepath.Join(samples, "btf", "rtos-2core.btf"),
			filepath.Join(ext, "btf", "eclipse-tracecompass__org.eclipse.tracecompass__btf__org.eclipse.tracecompass.btf.core.tests__testfiles__20140219-123819.btf")}},
		{"qnx", nil, []string{filepath.Join(samples, "qnx", "neutrino-2cpu.txt")}},
		{"chrome", nil, []string{filepath.Join(samples, "chrome", "app.json"),
			filepath.Join(ext, "chrome-json", "eclipse-tracecompass-incubator__org.eclipse.tracecompass.incubator__tracetypes__org.eclipse.tracecompass.incubator.traceevent.core.tests__traces__async_begin_end.json")}},
		{"ftrace", nil, []string{filepath.Join(samples, "ftrace", "sched-4cpu.txt"),
			filepath.Join(ext, "ftrace", "eclipse-tracecompass-incubator__org.eclipse.tracecompass.incubator__tracetypes__org.eclipse.tracecompass.incubator.ftrace.core.tests__res__ftrace_syscalls.txt")}},
		{"tlv", []string{"--resources", filepath.Join(samples, "tlv", "tiny.res"), "--rules", filepath.Join(samples, "tlv"), "--headers", filepath.Join(samples, "tlv")},
			[]string{filepath.Join(samples, "tlv", "tiny.log")}},
		{"tlv", []string{"--resources", asp + "_standard_format.res"}, []string{asp + "_standard_format.log"}},
		{"toppers-asp", []string{"--resources", asp + ".res"}, []string{asp + ".log"}},
		{"toppers-fmp", []string{"--resources", filepath.Join(tlvdata, "config", "fmp.res")}, []string{filepath.Join(tlvdata, "config", "fmp.log")}},
		{"dtrace", nil, []string{filepath.Join(samples, "dtrace", "sched-syscalls.txt"),
			filepath.Join(ext, "dtrace", "opendtrace__toolkit__Examples__bitesize_example.txt")}},
	}
	// Every format is tried.
	for _, ing := range ingest.Ingesters() {
		found := false
		for _, f := range formats {
			found = found || f.name == ing.Format().Name
		}
		if !found {
			t.Errorf("format %s has no files here: add it", ing.Format().Name)
		}
	}
	for i := range formats {
		var present []string
		for _, p := range formats[i].files {
			if _, err := os.Stat(p); err == nil {
				present = append(present, p)
			}
		}
		formats[i].files = present
	}
	ingestArgs := func(db string, f format, file string) []string {
		return append(append([]string{"ingest", "--db", db, "--format", f.name}, f.flags...), file)
	}
	for _, f := range formats {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			db := filepath.Join(t.TempDir(), "t.duckdb")
			// The database exists before the failed ingests (one that an
			// ingest creates and stores no run in is removed, and made
			// again by the next one).
			created, err := openDB(context.Background(), db)
			if err != nil {
				t.Fatal(err)
			}
			created.Close()
			var last *format
			var lastFile string
			for _, g := range formats {
				if g.name == f.name {
					continue
				}
				for _, file := range g.files {
					var stdout, stderr bytes.Buffer
					code := run(ingestArgs(db, f, file), bytes.NewReader(nil), &stdout, &stderr)
					msg := stderr.String()
					m := wrongFormatMessage.FindStringSubmatch(msg)
					if code != 1 || m == nil || m[1] != file || strings.Count(msg, "\n") != 1 {
						t.Errorf("--format %s on %s (%s): exit %d, stderr %q; want exit 1 and one line FILE:LINE: or FILE@OFFSET: expected ...", f.name, filepath.Base(file), g.name, code, msg)
					}
					last, lastFile = &g, file
				}
			}
			if last == nil {
				t.Fatal("no file of another format")
			}
			sqldb, err := sql.Open("duckdb", db)
			if err != nil {
				t.Fatal(err)
			}
			if n := dbtest.QueryLines(t, sqldb, "SELECT count(*) FROM runs"); len(n) != 1 || n[0] != "0" {
				t.Errorf("the failed ingests left runs: %v", n)
			}
			sqldb.Close()
			// The right format then reads the last file: its sha256 was not
			// taken.
			var stdout, stderr bytes.Buffer
			if code := run(ingestArgs(db, *last, lastFile), bytes.NewReader(nil), &stdout, &stderr); code != 0 {
				t.Errorf("--format %s on %s after the failed ingest: exit %d: %s", last.name, filepath.Base(lastFile), code, stderr.String())
			}
		})
	}
}
