// Package clitest runs the traceduck binary as a user does, for the test
// packages of the command line: cmd/traceduck (the commands),
// cmd/traceduck/safety (killed, interrupted and hostile runs) and
// cmd/traceduck/badinput (the catalogue of bad inputs), three packages so
// that each stays well inside go test's 10-minute limit per package on a
// loaded 2-core machine. Setup builds the binary once per test package.
package clitest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// Binary is the traceduck built once for all the tests of a package.
var Binary string

// SeedSample is the absolute path of the BTF chapter's example listing,
// one of the embedded samples, in the source tree.
var SeedSample string

// StopEnv names the environment variable with which a test stops
// traceduck at a point of its work (cmd/traceduck/teststop.go, whose
// TestStopEnvAgrees checks the two names are one).
const StopEnv = "TRACEDUCK_TEST_STOP"

// tmp is the directory of the binary, removed when the tests end.
var tmp string

// demo is the database traceduck demo made, once per test package
// (DemoCopy).
var demo struct {
	once sync.Once
	path string
	err  error
}

// DemoCopy copies the database `traceduck demo` makes to dir/name and
// returns its path. The demo is built once per test package (10 runs,
// 6-15 s on a loaded machine, which a dozen tests paid each) and copied
// for every test that needs one as it begins; the tests of demo itself
// run it.
func DemoCopy(t testing.TB, dir, name string) string {
	t.Helper()
	demo.once.Do(func() {
		d := filepath.Join(tmp, "demo")
		if demo.err = os.Mkdir(d, 0o755); demo.err != nil {
			return
		}
		r := RunIn(t, d, nil, "demo", "--db", "demo.duckdb")
		if r.Code != 0 {
			demo.err = fmt.Errorf("traceduck demo: %s", r)
			return
		}
		demo.path = filepath.Join(d, "demo.duckdb")
	})
	if demo.err != nil {
		t.Fatal(demo.err)
	}
	data := ReadFile(t, demo.path)
	if _, err := os.Stat(demo.path + ".wal"); err == nil {
		t.Fatalf("the demo database has a write-ahead log left: %s.wal", demo.path)
	}
	return WriteFile(t, dir, name, data)
}

// Main builds traceduck into a temporary directory, runs the tests (a
// *testing.M, or what wraps one) and exits with their code. TestMain
// calls it after flag.Parse.
func Main(m interface{ Run() int }) {
	os.Exit(run(m))
}

func run(m interface{ Run() int }) int {
	root, err := moduleRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	SeedSample = filepath.Join(root, "samples", "btf", "seed-example.btf")
	dir, err := os.MkdirTemp("", "traceduck-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	tmp = dir
	Binary = filepath.Join(dir, "traceduck")
	if runtime.GOOS == "windows" {
		Binary += ".exe"
	}
	build := exec.Command("go", "build", "-o", Binary, "./cmd/traceduck")
	build.Dir = root
	build.Stdout = os.Stderr
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building traceduck:", err)
		return 1
	}
	return m.Run()
}

// moduleRoot walks up from the working directory to go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New("clitest: no go.mod above the working directory")
		}
		dir = up
	}
}

// Result is what one run of the binary gave.
type Result struct {
	Stdout, Stderr string
	Code           int
}

func (r Result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
}

// RunIn runs traceduck in dir with stdin (nil: no input).
func RunIn(t testing.TB, dir string, stdin []byte, args ...string) Result {
	t.Helper()
	cmd := exec.Command(Binary, args...)
	cmd.Dir = dir
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &errb
	err := cmd.Run()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("run traceduck %q: %v", args, err)
		}
		code = ee.ExitCode()
	}
	return Result{out.String(), errb.String(), code}
}

// Td runs traceduck in dir without input.
func Td(t testing.TB, dir string, args ...string) Result {
	t.Helper()
	return RunIn(t, dir, nil, args...)
}

// MustRun runs traceduck and fails the test unless it exits 0.
func MustRun(t testing.TB, dir string, stdin []byte, args ...string) string {
	t.Helper()
	r := RunIn(t, dir, stdin, args...)
	if r.Code != 0 {
		t.Fatalf("traceduck %q: %s", args, r)
	}
	return r.Stdout
}

// ExpectExit checks the exit code and that stderr holds every want; an
// error is printed once, as "traceduck: MESSAGE".
func ExpectExit(t testing.TB, r Result, code int, want ...string) {
	t.Helper()
	if r.Code != code {
		t.Errorf("exit code %d, want %d\n%s", r.Code, code, r)
		return
	}
	for _, w := range want {
		if !strings.Contains(r.Stderr, w) {
			t.Errorf("stderr does not mention %q\n%s", w, r)
		}
	}
	if code != 0 && !strings.HasPrefix(r.Stderr, "traceduck: ") {
		t.Errorf("stderr does not start with 'traceduck: '\n%s", r)
	}
	if code != 0 && strings.Count(r.Stderr, "traceduck: ") != 1 {
		t.Errorf("error printed more than once\n%s", r)
	}
}

// RunBounded runs traceduck like RunIn, but kills it and fails the test
// when it has not ended within limit; sig, when not nil, is sent to it
// after delay.
func RunBounded(t testing.TB, dir string, limit time.Duration, sig os.Signal, delay time.Duration, args ...string) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, Binary, args...)
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
	return Result{out.String(), errb.String(), code}
}

// WriteFile writes a file in dir and returns its path.
func WriteFile(t testing.TB, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// ReadFile reads a file or fails the test.
func ReadFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// SampleCopy writes a copy of the seed sample with an extra comment line
// (so that its sha256 differs) and returns its path.
func SampleCopy(t testing.TB, dir, name, comment string) string {
	t.Helper()
	data := ReadFile(t, SeedSample)
	data = append(append([]byte(nil), data...), []byte("\n# "+comment+"\n")...)
	return WriteFile(t, dir, name, data)
}

// Scalar runs a query that returns one value and gives it as csv text.
func Scalar(t testing.TB, dir, db, sql string) string {
	t.Helper()
	out := MustRun(t, dir, nil, "query", "--db", db, "--output", "csv", sql)
	lines := strings.Split(strings.TrimRight(out, "\r\n"), "\r\n")
	if len(lines) != 2 {
		t.Fatalf("query %q: want one row, got %q", sql, out)
	}
	return lines[1]
}
