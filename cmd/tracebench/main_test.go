package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/internal/bench"
)

// TestMain lets the test binary be tracebench's child, as the command is.
func TestMain(m *testing.M) {
	if os.Getenv(bench.ChildEnv) != "" {
		os.Exit(bench.Child(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// TestTinyRun runs the whole benchmark on two formats at a tiny size, so
// that it cannot rot: generation, ingest and baseline in child processes
// (each checks its event count against the generator's), the views, the
// profiles and the table.
func TestTinyRun(t *testing.T) {
	prof := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := run([]string{"--formats", "btf,toppers-asp", "--sizes", "20000", "--dir", t.TempDir(), "--profile", prof, "--quiet"}, os.Args[0], &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{
		"| format | events | file MB | gen s | ingest s | MB/s | events/s | CPU % | peak RSS MB | DB MB | DB MB per M events | read_csv s | read_csv CPU % | read_csv peak RSS MB | traceduck / read_csv |\n",
		"\n| btf | 20001 | ",
		"\n| toppers-asp | ", " (20000 lines) | ",
		"Canned views on the btf run of 20001 events",
		"Canned views on the toppers-asp run of ",
		"\n| state_stats | ", "\n| state_stats_window | ", "\n| state_stats_tree | ", "\n| state_stats_tree kso | ", "\n| eco_tree | ", "\n| hist_quantize running | ", "\n| task_instances | ", "\n| sched_latency | ",
		"\n| sched_stats | ", "\n| cpu_load(10ms) | ", "\n| cpu_utilization | ", "\n| resource_holds | ", "\n| resource_waits | ", "\n| lock_stats | ", "\n| message_round_trips | ",
		"| format | events | ingest s | slowest view | s | × ingest | views beyond | verdict |\n",
		"\n| BTF, 20001 events: ingest ≤ 0.7× read_csv | ",
		"\n| btf, 20001 events: every view ≤ 0.1× ingest | slowest ",
		"\nThe TOPPERS rule engine alone (issue 23, target 5: ", "\n| toppers-asp | 20000 | ",
		"\n| toppers-asp, 20000 raw lines: the rule engine alone (convert) ≥ 500k raw lines per CPU-second | ",
		"\n| toppers-asp, 20000 raw lines: the whole ingest's raw lines per CPU-second (report) | ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the table has no %q:\n%s", want, out)
		}
	}
	// The peak RSS of each child is its own (tens of MB here), not the
	// test binary's.
	for _, line := range strings.Split(out, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 16 || (strings.TrimSpace(cells[1]) != "btf" && strings.TrimSpace(cells[1]) != "toppers-asp") {
			continue
		}
		rss, err := strconv.ParseFloat(strings.TrimSpace(cells[9]), 64)
		if err != nil || rss < 10 || rss > 2000 {
			t.Errorf("%s: peak RSS %q MB", strings.TrimSpace(cells[1]), cells[9])
		}
	}
	if stderr.Len() != 0 {
		t.Errorf("--quiet wrote %q", stderr.String())
	}
	for _, name := range []string{"btf-20000.cpu.pprof", "btf-20000.heap.pprof"} {
		data, err := os.ReadFile(filepath.Join(prof, name))
		if err != nil || len(data) < 2 || data[0] != 0x1f || data[1] != 0x8b { // a gzipped profile
			t.Errorf("%s: %d bytes, %v", name, len(data), err)
		}
	}
}

func TestFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--formats", "btf,pcap"}, "tracebench: unknown format \"pcap\" (want btf, qnx, kev, tlv, toppers-asp, toppers-fmp, baget, dtrace, ftrace)\n"},
		{[]string{"--sizes", "10,x"}, "tracebench: size \"x\": want a number of events > 0\n"},
		{[]string{"--sizes", "0"}, "tracebench: size \"0\": want a number of events > 0\n"},
		{[]string{"now"}, "tracebench: unexpected arguments [\"now\"]\n"},
		{[]string{"--views", "some"}, "tracebench: --views \"some\": want one of all, btf, largest-btf, none\n"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(tc.args, os.Args[0], &stdout, &stderr); code != 2 || stderr.String() != tc.want || stdout.Len() != 0 {
			t.Errorf("%q: exit %d, stderr %q; want 2, %q", tc.args, code, stderr.String(), tc.want)
		}
	}
}
