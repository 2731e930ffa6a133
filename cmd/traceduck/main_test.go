package main

import (
	"flag"
	"os"
	"testing"
	"time"

	"github.com/traceduck/traceduck/internal/clitest"
	"github.com/traceduck/traceduck/internal/dbtest"
)

// update is the one -update flag of every test package (internal/dbtest).
var update = dbtest.Update

// binary is the traceduck built once for all the tests
// (internal/clitest, which the safety tests share).
var binary string

func TestMain(m *testing.M) {
	flag.Parse()
	clitest.Main(&setup{m})
}

// setup runs before the tests, once clitest has built the binary.
type setup struct{ m *testing.M }

func (s *setup) Run() int {
	binary, seedSample = clitest.Binary, clitest.SeedSample
	return s.m.Run()
}

// result is what one run of the binary gave.
type result struct {
	stdout, stderr string
	code           int
}

func (r result) String() string { return r.cli().String() }

func (r result) cli() clitest.Result {
	return clitest.Result{Stdout: r.stdout, Stderr: r.stderr, Code: r.code}
}

func fromCLI(r clitest.Result) result { return result{r.Stdout, r.Stderr, r.Code} }

// runIn runs traceduck in dir with stdin (nil: no input).
func runIn(t *testing.T, dir string, stdin []byte, args ...string) result {
	t.Helper()
	return fromCLI(clitest.RunIn(t, dir, stdin, args...))
}

// td runs traceduck in a temporary directory of the test's own.
func td(t *testing.T, dir string, args ...string) result {
	t.Helper()
	return runIn(t, dir, nil, args...)
}

// mustRun runs traceduck and fails the test unless it exits 0.
func mustRun(t *testing.T, dir string, stdin []byte, args ...string) string {
	t.Helper()
	return clitest.MustRun(t, dir, stdin, args...)
}

// expectExit checks the exit code and that stderr holds every want.
func expectExit(t *testing.T, r result, code int, want ...string) {
	t.Helper()
	clitest.ExpectExit(t, r.cli(), code, want...)
}

// runBounded is clitest.RunBounded.
func runBounded(t *testing.T, dir string, limit time.Duration, sig os.Signal, delay time.Duration, args ...string) result {
	t.Helper()
	return fromCLI(clitest.RunBounded(t, dir, limit, sig, delay, args...))
}

// seedSample is the absolute path of the BTF chapter's example listing,
// one of the embedded samples (clitest.SeedSample).
var seedSample string

// writeFile writes a file in dir and returns its path.
func writeFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	return clitest.WriteFile(t, dir, name, data)
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	return clitest.ReadFile(t, path)
}

// sampleCopy writes a copy of the seed sample with an extra comment line
// (so that its sha256 differs) and returns its path.
func sampleCopy(t *testing.T, dir, name, comment string) string {
	t.Helper()
	return clitest.SampleCopy(t, dir, name, comment)
}

// scalar runs a query that returns one value and gives it as csv text.
func scalar(t *testing.T, dir, db, sql string) string {
	t.Helper()
	return clitest.Scalar(t, dir, db, sql)
}

// TestStopEnvAgrees: the test stop point's variable is the one the tests
// set (clitest.StopEnv).
func TestStopEnvAgrees(t *testing.T) {
	if testStopEnv != clitest.StopEnv {
		t.Errorf("teststop.go reads %s, clitest sets %s", testStopEnv, clitest.StopEnv)
	}
}
