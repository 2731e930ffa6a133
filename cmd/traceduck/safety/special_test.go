package safety_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"github.com/traceduck/traceduck/internal/clitest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func mkfifo(t *testing.T, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	return p
}

// A device that never ends is a trace of unknown format: its first bytes
// say so, and nothing more of it is read (it used to be hashed beside the
// ingest, which read /dev/zero forever).
func TestEndlessDeviceTrace(t *testing.T) {
	dir := t.TempDir()
	for _, dev := range []string{"/dev/zero", "/dev/urandom"} {
		if _, err := os.Stat(dev); err != nil {
			t.Skip(err)
		}
		r := clitest.RunBounded(t, dir, 20*time.Second, nil, 0, "ingest", "--db", "t.duckdb", dev)
		want := "traceduck: " + dev + ": not a trace format traceduck recognizes (tried "
		if r.Code != 1 || !strings.HasPrefix(r.Stderr, want) {
			t.Errorf("ingest %s: want exit 1, %q...\n%s", dev, want, r)
		}
	}
}

// A named pipe is a stream, read once like standard input: hashed as it
// is read, never opened a second time.
func TestFIFOTrace(t *testing.T) {
	dir := t.TempDir()
	fifo := mkfifo(t, dir, "trace.pipe")
	data := clitest.ReadFile(t, clitest.SeedSample)
	go func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		f.Write(data)
		f.Close()
	}()
	r := clitest.RunBounded(t, dir, time.Minute, nil, 0, "ingest", "--db", "t.duckdb", fifo)
	if r.Code != 0 {
		t.Fatalf("ingest of a named pipe: %s", r)
	}
	sum := sha256.Sum256(data)
	if got := clitest.Scalar(t, dir, "t.duckdb", "SELECT sha256 FROM runs"); got != hex.EncodeToString(sum[:]) {
		t.Errorf("sha256 of the piped trace: %s, want %x", got, sum)
	}
	if got := clitest.Scalar(t, dir, "t.duckdb", "SELECT event_count > 0 FROM runs"); got != "true" {
		t.Errorf("no events from the piped trace")
	}
}

// A named pipe nobody writes to waits for a writer; Ctrl-C ends the wait.
func TestFIFOTraceNoWriterInterrupted(t *testing.T) {
	dir := t.TempDir()
	fifo := mkfifo(t, dir, "trace.pipe")
	p := clitest.Start(t, dir, "", nil, "ingest", "--db", "t.duckdb", fifo)
	// Interrupted once it waits for the pipe's writer (a thread of it
	// blocked in the kernel's open of a FIFO), not before it gets there.
	p.WaitFor("the wait for the pipe's writer", func() bool { return waitsForPartner(p.Pid()) })
	if err := p.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	r := p.Wait()
	clitest.ExpectExit(t, r, 1)
	if r.Stderr != "traceduck: "+fifo+": interrupted; nothing of it was written\n" {
		t.Errorf("stderr %q", r.Stderr)
	}
}

// A --db that is a named pipe is refused at once: DuckDB would open it and
// wait for a writer forever. The pipe stays.
func TestFIFODatabaseRefused(t *testing.T) {
	dir := t.TempDir()
	fifo := mkfifo(t, dir, "db.pipe")
	for _, args := range [][]string{
		{"ingest", "--db", fifo, clitest.SeedSample},
		{"query", "--db", fifo, "SELECT 1"},
		{"demo", "--db", fifo},
	} {
		r := clitest.RunBounded(t, dir, 20*time.Second, nil, 0, args...)
		clitest.ExpectExit(t, r, 1)
		if want := "traceduck: " + fifo + ": is a named pipe, not a database file\n"; r.Stderr != want {
			t.Errorf("%q: stderr %q, want %q", args, r.Stderr, want)
		}
		if st, err := os.Lstat(fifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
			t.Fatalf("%q: the named pipe is gone (%v)", args, err)
		}
	}
}

// waitsForPartner reports whether a thread of process pid is blocked
// opening a FIFO that has no other end yet (its wchan, which Linux names
// wait_for_partner).
func waitsForPartner(pid int) bool {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/wchan", pid))
	for _, w := range tasks {
		if b, err := os.ReadFile(w); err == nil && string(b) == "wait_for_partner" {
			return true
		}
	}
	return false
}
