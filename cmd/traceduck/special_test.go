package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// runBounded runs traceduck like runIn, but kills it and fails the test
// when it has not ended within limit; signal, when not nil, is sent to it
// after delay.
func runBounded(t *testing.T, dir string, limit time.Duration, sig os.Signal, delay time.Duration, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if sig != nil {
		go func() {
			time.Sleep(delay)
			cmd.Process.Signal(sig)
		}()
	}
	err := cmd.Wait()
	if ctx.Err() != nil {
		t.Fatalf("traceduck %q did not end within %v (killed)\nstderr: %s", args, limit, errb.String())
	}
	code := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("run traceduck %q: %v", args, err)
		}
		code = ee.ExitCode()
	}
	return result{out.String(), errb.String(), code}
}

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
		r := runBounded(t, dir, 20*time.Second, nil, 0, "ingest", "--db", "t.duckdb", dev)
		want := "traceduck: " + dev + ": not a trace format traceduck recognizes (tried "
		if r.code != 1 || !strings.HasPrefix(r.stderr, want) {
			t.Errorf("ingest %s: want exit 1, %q...\n%s", dev, want, r)
		}
	}
}

// A named pipe is a stream, read once like standard input: hashed as it
// is read, never opened a second time.
func TestFIFOTrace(t *testing.T) {
	dir := t.TempDir()
	fifo := mkfifo(t, dir, "trace.pipe")
	data := readFile(t, seedSample)
	go func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		f.Write(data)
		f.Close()
	}()
	r := runBounded(t, dir, time.Minute, nil, 0, "ingest", "--db", "t.duckdb", fifo)
	if r.code != 0 {
		t.Fatalf("ingest of a named pipe: %s", r)
	}
	sum := sha256.Sum256(data)
	if got := scalar(t, dir, "t.duckdb", "SELECT sha256 FROM runs"); got != hex.EncodeToString(sum[:]) {
		t.Errorf("sha256 of the piped trace: %s, want %x", got, sum)
	}
	if got := scalar(t, dir, "t.duckdb", "SELECT event_count > 0 FROM runs"); got != "true" {
		t.Errorf("no events from the piped trace")
	}
}

// A named pipe nobody writes to waits for a writer; Ctrl-C ends the wait.
func TestFIFOTraceNoWriterInterrupted(t *testing.T) {
	dir := t.TempDir()
	fifo := mkfifo(t, dir, "trace.pipe")
	p := startIngest(t, dir, "", "ingest", "--db", "t.duckdb", fifo)
	// Interrupted once it waits for the pipe's writer (a thread of it
	// blocked in the kernel's open of a FIFO), not before it gets there.
	p.waitFor("the wait for the pipe's writer", func() bool { return waitsForPartner(p.cmd.Process.Pid) })
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	r := p.wait()
	expectExit(t, r, 1)
	if r.stderr != "traceduck: "+fifo+": interrupted; nothing of it was written\n" {
		t.Errorf("stderr %q", r.stderr)
	}
}

// A --db that is a named pipe is refused at once: DuckDB would open it and
// wait for a writer forever. The pipe stays.
func TestFIFODatabaseRefused(t *testing.T) {
	dir := t.TempDir()
	fifo := mkfifo(t, dir, "db.pipe")
	for _, args := range [][]string{
		{"ingest", "--db", fifo, seedSample},
		{"query", "--db", fifo, "SELECT 1"},
		{"demo", "--db", fifo},
	} {
		r := runBounded(t, dir, 20*time.Second, nil, 0, args...)
		expectExit(t, r, 1)
		if want := "traceduck: " + fifo + ": is a named pipe, not a database file\n"; r.stderr != want {
			t.Errorf("%q: stderr %q, want %q", args, r.stderr, want)
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
