package tracegen

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
)

// TestWriteDTrace: the same seed writes the same bytes; the lines after
// the header are in time order, each timestamp cpu pid tid probe; the
// truth's intervals are well formed and its syscall count matches the
// syscall returns written; bad configs are refused.
func TestWriteDTrace(t *testing.T) {
	cfg := DTraceConfig{Lines: 5000, CPUs: 3, Processes: 3, Threads: 2, Seed: 7, Gap: true}
	var a, b bytes.Buffer
	ta, err := WriteDTrace(&a, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := WriteDTrace(&b, cfg); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("same seed, different output")
	}
	lines := strings.Split(strings.TrimSuffix(a.String(), "\n"), "\n")
	if !strings.HasPrefix(lines[0], "#traceduck-events 1 ") || len(lines)-1 != ta.Lines || ta.Lines < cfg.Lines {
		t.Fatalf("header %q, %d lines, truth %d", lines[0], len(lines)-1, ta.Lines)
	}
	var prev int64
	returns := 0
	for i, l := range lines[1:] {
		f := strings.Fields(l)
		if len(f) < 5 || strings.Count(f[4], ":") != 3 {
			t.Fatalf("line %d: %q", i+2, l)
		}
		ts, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || ts < prev {
			t.Fatalf("line %d: time %q after %d", i+2, f[0], prev)
		}
		prev = ts
		if strings.HasPrefix(f[4], "syscall::") && strings.HasSuffix(f[4], ":return") {
			returns++
		}
	}
	n := 0
	for _, d := range ta.Syscalls {
		n += len(d)
	}
	if n != returns {
		t.Errorf("truth has %d syscalls, the trace %d returns", n, returns)
	}
	for _, iv := range ta.Intervals {
		if iv.End < iv.Start || iv.End > prev {
			t.Fatalf("interval %+v", iv)
		}
	}
	for _, bad := range []DTraceConfig{{}, {Lines: 1, CPUs: 65, Processes: 1, Threads: 1}, {Lines: 1, CPUs: 1, Processes: 1, Threads: 0}} {
		if _, err := WriteDTrace(&b, bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}
