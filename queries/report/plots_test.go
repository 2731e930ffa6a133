package report_test

import (
	"bytes"
	"context"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/queries/report"
)

// regressionReport builds the report of the documented command, with
// --hist specs.
func regressionReport(t *testing.T, hists ...string) *report.Report {
	t.Helper()
	db, _, _ := regressionDB(t)
	opt := report.Options{Database: "runs.duckdb", Baseline: "v1", Thresholds: []report.Threshold{mustThreshold(t, "response_p99 > +10%")}}
	for _, h := range hists {
		spec, err := report.ParseHistSpec(h)
		if err != nil {
			t.Fatal(err)
		}
		opt.Hists = append(opt.Hists, spec)
	}
	rep, err := report.Build(context.Background(), db.SQL(), opt)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func pageOf(t *testing.T, rep *report.Report) string {
	t.Helper()
	var b bytes.Buffer
	if err := rep.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// A plot of the page as drawn: its title, its series (in the SVG) and its
// legend (the HTML after it).
type pagePlot struct {
	title  string
	series []pageSeries
	legend []pageSeries
}

// pageSeries is a series as drawn: its name, what the name is (key or
// run), its style (colour and dash), and its SVG.
type pageSeries struct {
	name, kind, style, svg string
}

var (
	plotRE   = regexp.MustCompile(`(?s)<svg [^>]*aria-label="([^"]*)"[^>]*>(.*?)</svg>(?:<div class="legend">(.*?)</div>)?`)
	seriesRE = regexp.MustCompile(`(?s)<g class="series" data-(key|run)="([^"]*)">(.*?)</g>`)
	// the first colour a series is drawn in: a line's stroke, a bar's fill
	colourRE = regexp.MustCompile(`<(?:polyline|rect)[^>]* (?:stroke|fill)="(#[0-9a-f]{6})"`)
	dashRE   = regexp.MustCompile(`<polyline[^>]* stroke-dasharray="([^"]*)"`)
	legendRE = regexp.MustCompile(`<span style="--c: (#[0-9a-f]{6})(?:; --d: ([a-z]*))?">([^<]*)</span>`)
)

// plotsOf reads the plots of a page.
func plotsOf(t *testing.T, page string) []pagePlot {
	t.Helper()
	var out []pagePlot
	for _, m := range plotRE.FindAllStringSubmatch(page, -1) {
		p := pagePlot{title: m[1]}
		for _, s := range seriesRE.FindAllStringSubmatch(m[2], -1) {
			c := colourRE.FindStringSubmatch(s[3])
			if c == nil {
				t.Fatalf("%s: series %s has no line or bar: %.300s", p.title, s[2], s[3])
			}
			style := c[1]
			if d := dashRE.FindStringSubmatch(s[3]); d != nil {
				style += " dash " + d[1]
			}
			p.series = append(p.series, pageSeries{name: s[2], kind: s[1], style: style, svg: s[3]})
		}
		for _, l := range legendRE.FindAllStringSubmatch(m[3], -1) {
			dash := l[2]
			if dash == "" {
				dash = "solid"
			}
			p.legend = append(p.legend, pageSeries{name: l[3], style: l[1] + " " + dash})
		}
		out = append(out, p)
	}
	return out
}

// Every key has one colour in every plot that draws it (the trends, the
// CPU load plots), in the SVG and in the legend; keys drawn together
// differ. So does every run in the histograms.
func TestHTMLOneColourPerKey(t *testing.T) {
	page := pageOf(t, regressionReport(t, "response:"+slowTask, "response"))
	plots := plotsOf(t, page)
	if len(plots) != documentedPlots+2 {
		t.Fatalf("%d plots, want %d", len(plots), documentedPlots+2)
	}
	// The legends first: what a reader matches the lines with.
	legendStyle := map[string]string{} // name -> style
	where := map[string][]string{}     // name -> the plots it is in
	for _, p := range plots {
		seen := map[string]string{}
		for _, l := range p.legend {
			kind := "key"
			if strings.HasPrefix(p.title, "Histogram") {
				kind = "run"
			}
			id := kind + " " + l.name
			if s, ok := legendStyle[id]; ok && s != l.style {
				t.Errorf("the legend of %q draws %s %s, the legends of %q %s", p.title, id, l.style, where[id], s)
			}
			legendStyle[id] = l.style
			where[id] = append(where[id], p.title)
			if other, ok := seen[l.style]; ok {
				t.Errorf("%q: the legend draws %s and %s alike (%s)", p.title, l.name, other, l.style)
			}
			seen[l.style] = l.name
		}
	}
	// A key the documented report draws in several plots: Core_1 in the
	// cpu_load trend and the 3 runs' CPU load plots; the slowed task in
	// 5 trends.
	for id, min := range map[string]int{"key Core_1": 4, "key " + slowTask: 5, "run v2": 2} {
		if len(where[id]) < min {
			t.Errorf("%s is in %d plots (%q), want %d at least", id, len(where[id]), where[id], min)
		}
	}

	// Then the SVG: each series as drawn, and as its legend says.
	style := map[string]string{}
	for _, p := range plots {
		seen := map[string]string{}
		if len(p.series) != len(p.legend) {
			t.Errorf("%q: %d series, %d legend items", p.title, len(p.series), len(p.legend))
		}
		inLegend := map[string]string{}
		for _, l := range p.legend {
			inLegend[l.name] = l.style
		}
		for _, s := range p.series {
			id := s.kind + " " + s.name
			if st, ok := style[id]; ok && st != s.style {
				t.Errorf("%q draws %s in %s, another plot in %s", p.title, id, s.style, st)
			}
			style[id] = s.style
			if other, ok := seen[s.style]; ok {
				t.Errorf("%q draws %s and %s alike (%s)", p.title, s.name, other, s.style)
			}
			seen[s.style] = s.name
			if l, ok := inLegend[s.name]; !ok || l != legendOf(s.style) {
				t.Errorf("%q: the legend shows %s as %q, the plot draws it %s", p.title, s.name, l, s.style)
			}
		}
	}
}

// legendOf is the legend's style of a series' style: the colour and the
// CSS border style of the SVG's dash array.
func legendOf(style string) string {
	colour, dash, _ := strings.Cut(style, " dash ")
	switch dash {
	case "":
		return colour + " solid"
	case "7 4":
		return colour + " dashed"
	case "2 3":
		return colour + " dotted"
	}
	return style + ": an unknown dash array"
}

// A histogram is bars: one per run and bucket, with heights proportional
// to the run's share of values in the bucket; no line. The slowed task's
// response times fall in two buckets in every run (the "X" of lines from
// one bucket to the other, before).
func TestHTMLHistogramBars(t *testing.T) {
	rep := regressionReport(t, "response:"+slowTask)
	var hist *report.Hist
	for i := range rep.Hists {
		hist = &rep.Hists[i]
	}
	if hist == nil || len(hist.Runs) != 3 {
		t.Fatalf("histograms %+v, want one of 3 runs", rep.Hists)
	}
	var plot *pagePlot
	for _, p := range plotsOf(t, pageOf(t, rep)) {
		if strings.HasPrefix(p.title, "Histogram") {
			plot = &p
		}
	}
	if plot == nil {
		t.Fatal("no histogram on the page")
	}
	rectRE := regexp.MustCompile(`<rect x="([-0-9.]+)" y="([-0-9.]+)" width="([0-9.]+)" height="([0-9.]+)"`)
	names := map[int32]string{}
	for _, r := range rep.Runs {
		names[r.ID] = r.Name
	}
	perShare := math.NaN() // px of height per unit of share, the same for every bar
	var lefts [][]float64  // per run, its bars' x
	for i, hr := range hist.Runs {
		if len(hr.Buckets) != 2 {
			t.Fatalf("run %d: buckets %v, want two", hr.RunID, hr.Buckets)
		}
		s := plot.series[i]
		if s.kind != "run" || s.name != names[hr.RunID] {
			t.Fatalf("series %d is %s %s, want run %s", i, s.kind, s.name, names[hr.RunID])
		}
		if strings.Contains(s.svg, "<polyline") {
			t.Errorf("%s: the histogram draws a line", s.name)
		}
		rects := rectRE.FindAllStringSubmatch(s.svg, -1)
		if len(rects) != len(hr.Buckets) {
			t.Fatalf("%s: %d bars for %d buckets:\n%s", s.name, len(rects), len(hr.Buckets), s.svg)
		}
		var xs []float64
		for j, b := range hr.Buckets {
			x, _ := strconv.ParseFloat(rects[j][1], 64)
			h, _ := strconv.ParseFloat(rects[j][4], 64)
			xs = append(xs, x)
			share := float64(b[1]) / float64(hr.Total)
			if math.IsNaN(perShare) {
				perShare = h / share
			}
			// heights are printed to 0.1 px
			if math.Abs(h-share*perShare) > 0.1 {
				t.Errorf("%s, bucket %d ns (%d of %d values): a bar of %g px, want %.1f", s.name, b[0], b[1], hr.Total, h, share*perShare)
			}
		}
		lefts = append(lefts, xs)
	}
	// Side by side in the runs' order, each bucket's bars left of the
	// next bucket's.
	for j := range lefts[0] {
		for i := 1; i < len(lefts); i++ {
			if !(lefts[i][j] > lefts[i-1][j]) {
				t.Errorf("bucket %d: run %d's bar at x=%g, not right of the previous run's at %g", j, i, lefts[i][j], lefts[i-1][j])
			}
		}
		if j > 0 && !(lefts[0][j] > lefts[len(lefts)-1][j-1]) {
			t.Errorf("bucket %d's bars overlap bucket %d's", j, j-1)
		}
	}
}

// The page says when a change is shaded, next to the thresholds, and the
// tables shade by that rule: +1.46% (Task_2ms_4's median response in v3)
// is, +0.606% (Task_1ms_1's) is not.
func TestHTMLShadingRule(t *testing.T) {
	page := pageOf(t, regressionReport(t))
	const rule = `<p class="rule" id="shading"><strong>Red and green:</strong> ` +
		`A value in the metrics&#39; tables is shaded when its change from the baseline is at least 1% of the baseline&#39;s value, either way ` +
		`(the percentage before it is rounded for display): red when it is worse (a rise, for a metric where lower is better; a fall where higher is better), ` +
		`green when it is better; a change under 1% is left white (so &#43;1.46% is shaded, &#43;0.606% is not), and any change from a baseline of 0 is shaded. ` +
		`This shading is not a threshold and fails nothing: a value beyond a --fail-on threshold is red whichever way it changed, with a red edge.</p>`
	th := strings.Index(page, `<h2 id="thresholds">`)
	at := strings.Index(page, rule)
	if th < 0 || at < th || at > strings.Index(page, `<h2 id="metrics">`) {
		t.Errorf("the Thresholds section lacks the rule %s", rule)
	}
	for _, c := range []struct{ metric, key, change, class string }{
		{"response_p50", "Task_2ms_4", "&#43;1.46%", "worse"},
		{"response_p50", "Task_1ms_1", "&#43;0.606%", "same"},
		{"response_p99", "Task_2ms_4", "-1.16%", "better"},
		{"running_share", "Task_10ms_3", "-0.147%", "same"},
	} {
		sec := page[strings.Index(page, `<h3 id="metric-`+c.metric+`">`):]
		sec = sec[:strings.Index(sec, "</table>")]
		row := regexp.MustCompile(`<tr><td>` + c.key + `</td>.*`).FindString(sec)
		cell := regexp.MustCompile(`<td class="n ([a-z]*)"[^>]*>[^<]*<span class="chg">` + regexp.QuoteMeta(c.change) + `</span>`).FindStringSubmatch(row)
		if cell == nil || cell[1] != c.class {
			t.Errorf("%s of %s, %s: %v, want class %s in %s", c.metric, c.key, c.change, cell, c.class, row)
		}
	}
}
