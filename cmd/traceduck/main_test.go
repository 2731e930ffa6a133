package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/internal/dbtest"
)

// update is the one -update flag of every test package (internal/dbtest).
var update = dbtest.Update

// binary is the traceduck built once for all the tests.
var binary string

func TestMain(m *testing.M) {
	flag.Parse()
	abs, err := filepath.Abs(seedSample)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	seedSample = abs
	dir, err := os.MkdirTemp("", "traceduck-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "traceduck")
	if runtime.GOOS == "windows" {
		binary += ".exe"
	}
	build := exec.Command("go", "build", "-o", binary, ".")
	build.Stdout = os.Stderr
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building traceduck:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// result is what one run of the binary gave.
type result struct {
	stdout, stderr string
	code           int
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

// runIn runs traceduck in dir with stdin (nil: no input).
func runIn(t *testing.T, dir string, stdin []byte, args ...string) result {
	t.Helper()
	cmd := exec.Command(binary, args...)
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
	return result{out.String(), errb.String(), code}
}

// td runs traceduck in a temporary directory of the test's own.
func td(t *testing.T, dir string, args ...string) result {
	t.Helper()
	return runIn(t, dir, nil, args...)
}

// mustRun runs traceduck and fails the test unless it exits 0.
func mustRun(t *testing.T, dir string, stdin []byte, args ...string) string {
	t.Helper()
	r := runIn(t, dir, stdin, args...)
	if r.code != 0 {
		t.Fatalf("traceduck %q: %s", args, r)
	}
	return r.stdout
}

// expectExit checks the exit code and that stderr holds every want.
func expectExit(t *testing.T, r result, code int, want ...string) {
	t.Helper()
	if r.code != code {
		t.Errorf("exit code %d, want %d\n%s", r.code, code, r)
		return
	}
	for _, w := range want {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("stderr does not mention %q\n%s", w, r)
		}
	}
	if code != 0 && !strings.HasPrefix(r.stderr, "traceduck: ") {
		t.Errorf("stderr does not start with 'traceduck: '\n%s", r)
	}
	if code != 0 && strings.Count(r.stderr, "traceduck: ") != 1 {
		t.Errorf("error printed more than once\n%s", r)
	}
}

// seedSample is the path of the BTF chapter's example listing, one of the
// embedded samples, in the source tree (made absolute by TestMain).
var seedSample = filepath.Join("..", "..", "samples", "btf", "seed-example.btf")

// writeFile writes a file in dir and returns its path.
func writeFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sampleCopy writes a copy of the seed sample with an extra comment line
// (so that its sha256 differs) and returns its path.
func sampleCopy(t *testing.T, dir, name, comment string) string {
	t.Helper()
	data := readFile(t, seedSample)
	data = append(append([]byte(nil), data...), []byte("\n# "+comment+"\n")...)
	return writeFile(t, dir, name, data)
}

// scalar runs a query that returns one value and gives it as csv text.
func scalar(t *testing.T, dir, db, sql string) string {
	t.Helper()
	out := mustRun(t, dir, nil, "query", "--db", db, "--output", "csv", sql)
	lines := strings.Split(strings.TrimRight(out, "\r\n"), "\r\n")
	if len(lines) != 2 {
		t.Fatalf("query %q: want one row, got %q", sql, out)
	}
	return lines[1]
}
