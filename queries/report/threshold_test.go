package report

import (
	"math"
	"strings"
	"testing"
)

func TestParseThreshold(t *testing.T) {
	for _, tc := range []struct {
		spec            string
		metric, key, op string
		mode            ThresholdMode
		limit           float64
	}{
		{"response_p99 > +10%", "response_p99", "", ">", ModeRelative, 10},
		{"cpu_load > 0.85", "cpu_load", "", ">", ModeValue, 0.85},
		{"  cpu_load>=0.5 ", "cpu_load", "", ">=", ModeValue, 0.5},
		{"response_p99 > +2ms", "response_p99", "", ">", ModeChange, 2e6},
		{"response_max <= 1.5s", "response_max", "", "<=", ModeValue, 1.5e9},
		{"sched_latency_p99 > +250us", "sched_latency_p99", "", ">", ModeChange, 250e3},
		{"event_rate < -5%", "event_rate", "", "<", ModeRelative, -5},
		{"running_share < -0.01", "running_share", "", "<", ModeChange, -0.01},
		{"diagnostics[error] > 0", "diagnostics", "error", ">", ModeValue, 0},
		{"response_p99[Task_*ms_?] > +1e1%", "response_p99", "Task_*ms_?", ">", ModeRelative, 10},
		{"x > 3e-3", "x", "", ">", ModeValue, 0.003},
		{"m > 100ns", "m", "", ">", ModeValue, 100},
	} {
		th, err := ParseThreshold(tc.spec)
		if err != nil {
			t.Errorf("%q: %v", tc.spec, err)
			continue
		}
		if th.Spec != tc.spec || th.Metric != tc.metric || th.Key != tc.key || th.Op != tc.op || th.Mode != tc.mode || math.Abs(th.Limit-tc.limit) > 1e-9*math.Abs(tc.limit) {
			t.Errorf("%q: got %+v", tc.spec, th)
		}
	}
}

func TestParseThresholdErrors(t *testing.T) {
	for _, tc := range []struct{ spec, want string }{
		{"", `--fail-on "": column 1: expected a metric name, found the end`},
		{"> 3", `--fail-on "> 3": column 1: expected a metric name, found ">"`},
		{"9lives > 3", `--fail-on "9lives > 3": column 1: expected a metric name, found "9lives"`},
		{"response_p99 10%", `--fail-on "response_p99 10%": column 14: expected >, >=, < or <=, found "10%"`},
		{"response_p99 = 10", `--fail-on "response_p99 = 10": column 14: expected >, >=, < or <=, found "="`},
		{"response_p99 >> 10%", `--fail-on "response_p99 >> 10%": column 15: expected a number, found ">"`},
		{"response_p99 >", `--fail-on "response_p99 >": column 15: expected a number, found the end`},
		{"response_p99 > +", `--fail-on "response_p99 > +": column 17: expected a number, found the end`},
		{"response_p99 > 10%", `--fail-on "response_p99 > 10%": column 18: expected + or - before a percentage (+10%: a change relative to the baseline; a share is written 0.85), found "%"`},
		{"response_p99 > +10 %", `--fail-on "response_p99 > +10 %": column 20: expected the end, found "%"`},
		{"response_p99 > +10min", `--fail-on "response_p99 > +10min": column 19: expected a duration unit (ns, us, ms, s) or %, found "min"`},
		{"response_p99 > 1.2.3", `--fail-on "response_p99 > 1.2.3": column 16: expected a number, found "1.2.3"`},
		{"cpu_load > 0.85 or more", `--fail-on "cpu_load > 0.85 or more": column 17: expected the end, found "or"`},
		{"cpu_load[Core_0 > 0.5", `--fail-on "cpu_load[Core_0 > 0.5": column 22: expected ] to close the key at column 9, found the end`},
		{"cpu_load[] > 0.5", `--fail-on "cpu_load[] > 0.5": column 10: expected a key or a glob between [ and ], found "]"`},
		{"cpu_load[[a] > 0.5", `--fail-on "cpu_load[[a] > 0.5": column 10: expected a glob (*, ?, [a-z]) as the key, found "[a]"`},
		{"response_p99 > +1e308s", `--fail-on "response_p99 > +1e308s": column 17: expected a number, found "1e308s"`},
		{"cpu_load > 1e999", `--fail-on "cpu_load > 1e999": column 12: expected a number, found "1e999"`},
	} {
		_, err := ParseThreshold(tc.spec)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%q:\n got %v\nwant %s", tc.spec, err, tc.want)
		}
	}
}

// A duration unit only fits a metric measured in ns.
func TestThresholdUnitCheck(t *testing.T) {
	th, err := ParseThreshold("cpu_load > 5ms")
	if err != nil {
		t.Fatal(err)
	}
	m := findMetric(DefaultMetrics(), "cpu_load")
	want := `--fail-on "cpu_load > 5ms": cpu_load is measured in ratio, not a duration: write the limit without ms`
	if err := th.check(m); err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
	th, _ = ParseThreshold("response_p99 > 5ms")
	if err := th.check(findMetric(DefaultMetrics(), "response_p99")); err != nil {
		t.Error(err)
	}
}

// checkThresholds on values written by hand: which mode applies to which
// run, and a relative change from a baseline of 0.
func TestCheckThresholds(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	rep := &Report{
		Runs:    []Run{{ID: 1, Name: "a", Baseline: true}, {ID: 2, Name: "b", Compared: true}, {ID: 3, Name: "c"}},
		Metrics: []Metric{{Name: "m", Unit: UnitNS}, {Name: "n", Unit: UnitCount}},
		Values: []Value{
			{Metric: "m", Key: "x", RunID: 1, Value: 100},
			{Metric: "m", Key: "x", RunID: 2, Value: 120, Baseline: f(100), Change: f(20), ChangePct: f(20)},
			{Metric: "m", Key: "x", RunID: 3, Value: 500}, // not compared: another format
			{Metric: "m", Key: "y", RunID: 1, Value: 10},
			{Metric: "m", Key: "y", RunID: 2, Value: 10.5, Baseline: f(10), Change: f(0.5), ChangePct: f(5)},
			{Metric: "n", Key: "error", RunID: 1, Value: 0},
			{Metric: "n", Key: "error", RunID: 2, Value: 3, Baseline: f(0), Change: f(3)},
			{Metric: "n", Key: "info", RunID: 2, Value: 0, Baseline: f(0), Change: f(0)},
		},
	}
	for _, tc := range []struct {
		spec string
		want string // run:key of the crossings
	}{
		{"m > +10%", "b:x"},
		{"m > +1%", "b:x b:y"},
		{"m > 110", "b:x c:x"},         // a value: every run, compared or not
		{"m >= 100", "a:x b:x c:x"},    // the baseline too
		{"m > +19ns", "b:x"},           // a change: compared runs only
		{"m[y] > +1%", "b:y"},          // a key glob
		{"m < -1%", ""},                // nothing got faster
		{"n > +50%", "b:error"},        // from 0 to 3: an infinite rise
		{"n < -50%", ""},               // ... which is no fall
		{"n >= +0%", "b:error b:info"}, // from 0 to 0: no change, and 0 >= 0
		{"n[e*] > 0", "b:error"},
	} {
		th, err := ParseThreshold(tc.spec)
		if err != nil {
			t.Fatal(err)
		}
		rep.Thresholds = []Threshold{th}
		rep.Crossings = nil
		rep.checkThresholds()
		var got []string
		for _, c := range rep.Crossings {
			got = append(got, c.Run+":"+c.Key)
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("%s: crossed %v, want %s", tc.spec, got, tc.want)
		}
	}
}
