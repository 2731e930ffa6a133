package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// testStopEnv names the environment variable with which a test stops
// traceduck ingest at a point it cannot reach by timing: set to one of
// the points below, the process prints "traceduck: stopped at POINT" on
// standard error when it gets there and sleeps until it is killed. The
// crash tests (safety/crash_test.go) then kill it with SIGKILL. Unset, nothing
// changes. Points:
//
//	before-commit  the run is written and checked, its transaction not committed
//	after-commit   the run is committed, the database not closed (not checkpointed)
//	demo-ingest    demo is about to ingest its first sample into the
//	               database it builds; there it waits for the command to
//	               be interrupted (Ctrl-C, SIGTERM) instead of sleeping
//	parquet-step-N the N-th step of a job writing into a Parquet dataset
//	               (the step hook of export.NewWriter: a claim taken, a
//	               file written, renamed or removed, as the job writes or
//	               clears what dead jobs left), counted from 1
const testStopEnv = "TRACEDUCK_TEST_STOP"

// testStopAt stops the process when testStopEnv names point.
func testStopAt(stderr io.Writer, point string) {
	if os.Getenv(testStopEnv) != point {
		return
	}
	fmt.Fprintf(stderr, "traceduck: stopped at %s\n", point)
	for {
		time.Sleep(time.Hour)
	}
}

// testStopUntilDone is testStopAt for a test that interrupts the
// process rather than killing it: it waits at point until ctx is done.
func testStopUntilDone(ctx context.Context, stderr io.Writer, point string) {
	if os.Getenv(testStopEnv) != point {
		return
	}
	fmt.Fprintf(stderr, "traceduck: stopped at %s\n", point)
	<-ctx.Done()
}

// testStopHook is testStopAt as a hook, nil when the environment names
// no stop at point.
func testStopHook(stderr io.Writer, point string) func() {
	if os.Getenv(testStopEnv) != point {
		return nil
	}
	return func() { testStopAt(stderr, point) }
}

// testStopSteps is a hook that stops the process at the N-th of the
// points it is called at, when the environment names prefix+N; nil when
// it names no such point.
func testStopSteps(stderr io.Writer, prefix string) func(string) {
	v, ok := strings.CutPrefix(os.Getenv(testStopEnv), prefix)
	if !ok {
		return nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return nil
	}
	calls := 0
	return func(point string) {
		if calls++; calls == n {
			fmt.Fprintf(stderr, "traceduck: stopped at %s%d (%s)\n", prefix, n, point)
			for {
				time.Sleep(time.Hour)
			}
		}
	}
}
