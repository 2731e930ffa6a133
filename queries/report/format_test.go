package report

import (
	"encoding/json"
	"math"
	"os"
	"regexp"
	"strings"
	"testing"
)

func TestFormat(t *testing.T) {
	for _, tc := range []struct {
		got, want string
	}{
		{fmtValue(UnitNS, 0), "0"},
		{fmtValue(UnitNS, 850), "850 ns"},
		{fmtValue(UnitNS, 12_345), "12.35 us"},
		{fmtValue(UnitNS, 2_659_000), "2.659 ms"},
		{fmtValue(UnitNS, 2.5e9), "2.5 s"},
		{fmtValue(UnitRatio, 0.42163), "42.2%"},
		{fmtValue(UnitRatio, 1), "100%"},
		{fmtValue(UnitCount, 1332), "1\u2009332"},
		{fmtValue(UnitCount, 2.5), "2.5"},
		{fmtValue(UnitPerSec, 30_020.4), "30.02 k/s"},
		{fmtValue(UnitNumber, 123456), "123500"},
		{fmtChange(UnitRatio, -0.00762), "-0.762 pp"},
		{fmtChange(UnitNS, 1_013_000), "+1.013 ms"},
		{fmtChange(UnitCount, -3), "-3"},
		{fmtPct(38.08), "+38.1%"},
		{fmtPct(-0.1234), "-0.123%"},
		{fmtPct(0), "+0%"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

func TestLoadWindow(t *testing.T) {
	for _, tc := range []struct{ dur, want int64 }{
		{0, 1}, {100, 1}, {1_000, 10}, {666_206_379, 5_000_000}, {133_055_188, 1_000_000}, {1_500_000_000, 10_000_000},
	} {
		if got := loadWindow(tc.dur); got != tc.want {
			t.Errorf("loadWindow(%d) = %d, want %d", tc.dur, got, tc.want)
		}
	}
}

func TestNiceTicks(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		n      int
		want   []float64
	}{
		{0, 1, 5, []float64{0, 0.25, 0.5, 0.75, 1}},
		{-0.76, 38.1, 5, []float64{-10, 0, 10, 20, 30, 40}},
		{0, 666e6, 7, []float64{0, 200e6, 400e6, 600e6, 800e6}},
		{3, 3, 5, []float64{3}},
	} {
		got := niceTicks(tc.lo, tc.hi, tc.n)
		if len(got) != len(tc.want) {
			t.Errorf("niceTicks(%g, %g) = %v, want %v", tc.lo, tc.hi, got, tc.want)
			continue
		}
		for i := range got {
			if math.Abs(got[i]-tc.want[i]) > 1e-9 {
				t.Errorf("niceTicks(%g, %g) = %v, want %v", tc.lo, tc.hi, got, tc.want)
				break
			}
		}
	}
}

// A missing value breaks the line: two polylines, and the markers of the
// points that have a value.
func TestLinePlotGap(t *testing.T) {
	p := &linePlot{Title: "t <&>", Width: 300, Height: 150, Markers: true, XLabels: []string{"a", "b", "c", "d", "e"},
		YFormat: func(y float64) string { return fmtPct(y) },
		Series: []plotSeries{{Name: "s", Color: "#123456", Points: []plotPoint{
			{X: 0, Y: 0}, {X: 1, Y: 5, Crossed: true}, {X: 2, Y: math.NaN()}, {X: 3, Y: 2}, {X: 4, Y: 3, Tip: `"quoted" <tip>`}}}}}
	svg := p.svg()
	for _, want := range []string{`aria-label="t &lt;&amp;&gt;"`, `<title>&#34;quoted&#34; &lt;tip&gt;</title>`} {
		if !strings.Contains(svg, want) {
			t.Errorf("no %s in %s", want, svg)
		}
	}
	if n := strings.Count(svg, "<polyline"); n != 2 {
		t.Errorf("%d polylines, want 2", n)
	}
	if n := strings.Count(svg, `r="3"`); n != 4 {
		t.Errorf("%d markers, want 4", n)
	}
	if n := strings.Count(svg, `r="6"`); n != 1 {
		t.Errorf("%d crossed rings, want 1", n)
	}
}

func TestFindBaseline(t *testing.T) {
	all := []Run{{ID: 1, Name: "v1"}, {ID: 2, Name: "v2"}, {ID: 3, Name: "v2"}, {ID: 4, Name: "7"}}
	for _, tc := range []struct {
		spec string
		id   int32
		err  string
	}{
		{"v1", 1, ""},
		{"3", 3, ""},
		{"7", 4, ""}, // no run_id 7: the name
		{"v2", 0, "--baseline v2: 2 runs have this name (run_id 2, 3): give the run_id"},
		{"v9", 0, "--baseline v9: no run has this name or run_id (the runs: 1 v1, 2 v2, 3 v2, 4 7)"},
	} {
		r, err := findBaseline(all, tc.spec)
		switch {
		case tc.err != "" && (err == nil || err.Error() != tc.err):
			t.Errorf("%s: got %v, want %s", tc.spec, err, tc.err)
		case tc.err == "" && (err != nil || r.ID != tc.id):
			t.Errorf("%s: got run %d, %v, want %d", tc.spec, r.ID, err, tc.id)
		}
	}
}

func TestOrderRuns(t *testing.T) {
	order := func(runs []Run, how string) string {
		if err := OrderRuns(runs, how); err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, r := range runs {
			ids = append(ids, r.Name)
		}
		return strings.Join(ids, " ")
	}
	runs := []Run{
		{ID: 1, Name: "c", Tags: map[string]string{"build": "10", "branch": "main"}},
		{ID: 2, Name: "a", Tags: map[string]string{"build": "9", "branch": "dev"}},
		{ID: 3, Name: "b", Tags: map[string]string{}},
		{ID: 4, Name: "d", Tags: map[string]string{"build": "9.5", "branch": "main"}},
	}
	for _, tc := range []struct{ how, want string }{
		{"tag:build", "a d c b"}, // numbers: 9 < 9.5 < 10; no tag last
		{"tag:branch", "a c d b"},
		{"name", "a b c d"},
		{"ingest", "c a b d"},
	} {
		if got := order(runs, tc.how); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.how, got, tc.want)
		}
	}
	for _, how := range []string{"tag:", "size"} {
		if err := OrderRuns(runs, how); err == nil || err.Error() != `--order "`+how+`": expected ingest, name or tag:KEY` {
			t.Errorf("%s: %v", how, err)
		}
	}
}

// TestCompactNumberArrays: the one-pass rewrite of the JSON's arrays of
// numbers does what the regular expression it replaced did.
func TestCompactNumberArrays(t *testing.T) {
	numberArray := regexp.MustCompile(`\[\n\s*(-?[0-9][0-9.eE+-]*(?:,\n\s*-?[0-9][0-9.eE+-]*)*)\n\s*\]`)
	numberSep := regexp.MustCompile(`,\n\s*`)
	byRegexp := func(b []byte) []byte {
		return numberArray.ReplaceAllFunc(b, func(m []byte) []byte {
			inner := numberArray.FindSubmatch(m)[1]
			return append(append([]byte("["), numberSep.ReplaceAll(inner, []byte(", "))...), ']')
		})
	}
	inputs := []string{
		"{\n  \"a\": [\n    1,\n    -2.5e+07\n  ],\n  \"b\": [\n    [\n      0,\n      1\n    ],\n    [\n      3,\n      4\n    ]\n  ]\n}\n",
		"[\n  \"x\",\n  1\n]", "[\n  1,\n  \"x\"\n]", "[\n  1\n]", "[]", "[\n]", "[\n  -\n]", "[\n  1,\n]", "[\n  1 ,\n  2\n]",
		"\"[\\n 1\\n]\"", "[\n  1,\n  2\n  ", "[\n\n  1,\n\n  2\n\n]", "[\n  1e5,\n  [\n    2\n  ]\n]", "[[\n1\n]]",
	}
	for _, golden := range []string{"testdata/regression.json"} {
		b, err := os.ReadFile(golden)
		if err != nil {
			t.Fatal(err)
		}
		// The golden as the encoder writes it: its arrays indented again.
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		ind, _ := json.MarshalIndent(v, "", "  ")
		inputs = append(inputs, string(ind))
	}
	for _, in := range inputs {
		if got, want := compactNumberArrays([]byte(in)), byRegexp([]byte(in)); string(got) != string(want) {
			t.Errorf("%q:\n got %q\nwant %q", in, got, want)
		}
	}
}
