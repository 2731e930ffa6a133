package main

import (
	bin "encoding/binary"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/internal/tracegen"
)

// TestBagetBadRecordAndStdin: a generated log with one record of an
// unknown type stops the ingest at its byte offset, or with --skip-bad
// becomes a run without that record and one diagnostic; on standard input
// the log needs --description.
func TestBagetBadRecordAndStdin(t *testing.T) {
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
	if got := scalar(t, dir, db, "SELECT count(*) FROM runs"); got != "0" {
		t.Errorf("a failed ingest left %s runs", got)
	}

	r = td(t, dir, "ingest", "--db", db, "--description", descPath, "--skip-bad", badPath)
	if want := fmt.Sprintf("run 1: %s (baget, %d events)\n", badPath, truth.Events-1); r.code != 0 || r.stdout != want {
		t.Fatalf("%s\nwant stdout %q", r, want)
	}
	if got := scalar(t, dir, db, "SELECT string_agg(severity || '@' || src_line || ': ' || message, '; ') FROM diagnostics WHERE severity = 'error'"); strings.Trim(got, `"`) != fmt.Sprintf("error@%d: record type: expected a type the description declares, found 999", off) {
		t.Errorf("diagnostics: %q", got)
	}

	// Standard input: refused without --description, read with it.
	r = runIn(t, dir, log, "ingest", "--db", db, "--format", "baget", "-")
	expectExit(t, r, 1, "a log on standard input needs --description FILE.xml")
	r = runIn(t, dir, log, "ingest", "--db", db, "--format", "baget", "--description", descPath, "-")
	if want := fmt.Sprintf("run 2: - (baget, %d events)\n", truth.Events); r.code != 0 || r.stdout != want {
		t.Fatalf("%s\nwant stdout %q", r, want)
	}
}
