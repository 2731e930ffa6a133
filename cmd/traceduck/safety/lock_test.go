//go:build linux

package safety_test

import (
	"bytes"
	"fmt"
	"github.com/traceduck/traceduck/internal/clitest"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSecondWriterRefused runs two traceduck processes on one database.
// The first ingests a trace from a pipe the test holds open, so that it
// has the database open for as long as the test wants; meanwhile an
// ingest, a query and stats on the same database each fail at once (the
// first one is still waiting for its input) with one line naming the
// lock and its holder. Then the first gets the rest of its input and
// completes: the database holds its run whole, every view answers, and
// the second ingest, tried again, succeeds.
func TestSecondWriterRefused(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("needs /proc to see when the first process has the database open")
	}
	dir := t.TempDir()
	trace := filepath.Join(dir, "first.btf")
	truth := writeBigBTF(t, trace, 20_000)
	data := clitest.ReadFile(t, trace)
	db := filepath.Join(dir, "shared.duckdb")

	pr, pw := io.Pipe()
	first := clitest.Start(t, dir, "", pr, "ingest", "--db", db, "--format", "btf", "--name", "first", "-")
	if _, err := pw.Write(data[:len(data)/2]); err != nil {
		t.Fatal(err)
	}
	first.WaitFor("the database to be opened", func() bool { return first.HasOpen(db) })

	want := fmt.Sprintf("traceduck: %s: database is locked by another process (PID %d, %s): DuckDB lets one process at a time open a database file; try again when that one has finished\n",
		db, first.Pid(), clitest.Binary)
	for _, args := range [][]string{
		{"ingest", "--db", db, clitest.SeedSample},
		{"query", "--db", db, "SELECT count(*) FROM runs"},
		{"stats", "--db", db},
	} {
		r := clitest.Td(t, dir, args...)
		if r.Code != 1 || r.Stderr != want || r.Stdout != "" {
			t.Errorf("traceduck %q while another has the database open: %s\nwant exit 1 and stderr %q", args, r, want)
		}
	}
	select {
	case <-first.Done():
		t.Fatalf("the first process ended while its input was open: %s", first.Wait())
	default:
	}

	if _, err := pw.Write(data[len(data)/2:]); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	if r := first.Wait(); r.Code != 0 || !strings.HasPrefix(r.Stdout, fmt.Sprintf("run 1: - (btf, %d events, ", truth.Lines)) {
		t.Fatalf("first ingest: %s", r)
	}
	c := &crashCheck{t: t, dir: dir, db: db}
	c.commit(1)
	c.wholeRun(1, truth.Lines)
	c.check("after the second writer was refused")
	if out := clitest.MustRun(t, dir, nil, "ingest", "--db", db, clitest.SeedSample); !bytes.HasPrefix([]byte(out), []byte("run 2: ")) {
		t.Errorf("the second ingest, tried again: %q", out)
	}
}
