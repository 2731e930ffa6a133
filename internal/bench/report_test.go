package bench

import (
	"reflect"
	"strings"
	"testing"
)

// The targets are judged from the figures as issues 10 and 23 state them.
func TestTargets(t *testing.T) {
	results := []Result{
		{Format: "btf", Size: 1_000_000, Events: 1_000_000, FileBytes: 48e6, Seconds: 1, CPUSeconds: 1.8, PeakRSS: 300e6, DBBytes: 50e6, BaseSeconds: 2, BaseCPU: 2, BasePeakRSS: 200e6, BaseDBBytes: 20e6},
		{Format: "btf", Size: 10_000_000, Events: 10_000_000, FileBytes: 480e6, Seconds: 12, CPUSeconds: 20, PeakRSS: 340e6, DBBytes: 500e6, BaseSeconds: 10, BaseCPU: 12, BasePeakRSS: 900e6, BaseDBBytes: 200e6,
			Views: map[string]float64{"state_stats": 0.5, "eco_tree": 0.01, "hist_quantize running": 1.5, "task_instances": 1.2}},
		{Format: "qnx", Size: 10_000_000, Events: 10_000_000, FileBytes: 700e6, Seconds: 40,
			Views: map[string]float64{"state_stats": 3.9, "task_instances": 4}},
		{Format: "baget", Size: 10_000_000, Events: 10_000_000, FileBytes: 300e6, Seconds: 10},
		{Format: "toppers-asp", Size: 10_000_000, Events: 15_000_000, RawLines: 10_000_000, FileBytes: 300e6, Seconds: 20, CPUSeconds: 50, RulesSeconds: 15, RulesCPU: 20},
		{Format: "toppers-fmp", Size: 1_000_000, Events: 1_500_000, RawLines: 1_000_000, FileBytes: 30e6, Seconds: 4, CPUSeconds: 6, RulesSeconds: 2, RulesCPU: 2.5},
		{Format: "toppers-fmp", Size: 10_000_000, Events: 15_000_000, RawLines: 10_000_000, FileBytes: 300e6, Seconds: 40, CPUSeconds: 60, RulesSeconds: 18, RulesCPU: 20.5},
	}
	got := Targets(results)
	want := []Target{
		{"BTF, 10000000 events: ingest ≤ 0.7× read_csv", "1.20× (12.0 s / 10.0 s)", "not met"},
		{"BTF: both cores used", "167% CPU (read_csv 120%)", "met"},
		{"qnx MB/s ≥ ½ BTF's", "17.5 MB/s vs 40.0", "not met"},
		{"baget events/s ≥ BTF's", "1000000 vs 833333", "met"},
		// the verdict is the rule engine's (convert); the whole ingest's figure is reported
		{"toppers-asp, 10000000 raw lines: the rule engine alone (convert) ≥ 500k raw lines per CPU-second", "500000 lines per CPU-second (20.00 CPU s)", "met"},
		{"toppers-asp, 10000000 raw lines: the whole ingest's raw lines per CPU-second (report)", "200000 lines per CPU-second (50.00 CPU s: rules, tables, DuckDB)", "-"},
		{"toppers-fmp, 10000000 raw lines: the rule engine alone (convert) ≥ 500k raw lines per CPU-second", "487805 lines per CPU-second (20.50 CPU s)", "not met"},
		{"toppers-fmp, 10000000 raw lines: the whole ingest's raw lines per CPU-second (report)", "166667 lines per CPU-second (60.00 CPU s: rules, tables, DuckDB)", "-"},
		{"btf: time of 10000000 events ≤ 11.0× time of 1000000 (linear)", "12.0×", "not met"},
		{"btf: peak RSS flat (10000000 events ≤ 1.2× 1000000) and < 1 GiB", "340 MB vs 300 MB (1.13×)", "met"},
		{"toppers-fmp: time of 10000000 events ≤ 11.0× time of 1000000 (linear)", "10.0×", "met"},
		{"btf, 10000000 events: every view ≤ 0.1× ingest", "slowest hist_quantize running 0.125× (1.50 s / 12.00 s)", "not met"},
		{"qnx, 10000000 events: every view ≤ 0.1× ingest", "slowest task_instances 0.100× (4.00 s / 40.00 s)", "met"},
		{"DB size per million events (report)", "50.0 MB (read_csv's plain table: 20.0 MB)", "-"},
	}
	if !reflect.DeepEqual(got, want) {
		for i := range max(len(got), len(want)) {
			var g, w Target
			if i < len(got) {
				g = got[i]
			}
			if i < len(want) {
				w = want[i]
			}
			if g != w {
				t.Errorf("target %d:\n got %q\nwant %q", i, g, w)
			}
		}
	}
}

// The rule engine's table shows each TOPPERS run's conversion beside its
// whole ingest, over the same raw lines.
func TestRulesTable(t *testing.T) {
	var b strings.Builder
	WriteTable(&b, []Result{
		{Format: "btf", Size: 1000, Events: 1000, FileBytes: 48e3, Seconds: 1, CPUSeconds: 1},
		{Format: "toppers-asp", Size: 1_000_000, Events: 1_500_000, RawLines: 1_000_000, FileBytes: 30e6, Seconds: 5, CPUSeconds: 6, RulesSeconds: 1.5, RulesCPU: 1.6, RulesLines: 1_600_000, RulesPeakRSS: 40e6},
	})
	for _, want := range []string{
		"\nThe TOPPERS rule engine alone (issue 23, target 5: ≥ 500k raw lines per CPU-second): ",
		"\n| toppers-asp | 1000000 | 1600000 | 1.50 | 1.60 | 625000 | 40 | 6.00 | 166667 |\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in\n%s", want, b.String())
		}
	}
	b.Reset()
	WriteTable(&b, []Result{{Format: "btf", Size: 1000, Events: 1000, FileBytes: 48e3, Seconds: 1, CPUSeconds: 1}})
	if strings.Contains(b.String(), "rule engine") {
		t.Errorf("a table without TOPPERS runs shows the rule engine:\n%s", b.String())
	}
}
