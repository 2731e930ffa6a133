package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"math"
	"sort"
	"strings"
)

//go:embed report.html.tmpl
var htmlTemplateText string

var htmlTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"changeTable": func(p *htmlPage, cols []htmlRun, rows []htmlChangeRow) changeTable { return changeTable{p, cols, rows} },
}).Parse(htmlTemplateText))

// changeTable is a table of the largest changes, for the template.
type changeTable struct {
	Page *htmlPage
	Cols []htmlRun
	Rows []htmlChangeRow
}

// Limits of the HTML page, so that it stays readable with many runs.
const (
	htmlMaxRunColumns = 12 // run columns of a metric's table besides the baseline (the last ones)
	htmlMaxTrendLines = 8  // keys drawn in a metric's trend plot
	htmlMaxHistLines  = 8  // runs drawn in a histogram plot (the baseline and the last ones)
	htmlMaxCrossings  = 200
)

type htmlPage struct {
	R          *Report
	Base       *Run
	BaseLabel  string
	WindowNote string
	Verdict    string // ok, fail, none
	Headline   string
	Crossings  []htmlCrossing
	MoreCross  int
	Runs       []htmlRun
	Metrics    []htmlMetric
	Hists      []htmlFigure
	Details    []htmlDetail
	Thresholds []htmlThreshold
	// Changes are the largest changes from the baseline, and apart from
	// them the values that dropped to 0 or are gone (as in the Markdown).
	Changes *htmlChanges
	// ShadingRule says when a change is shaded red or green.
	ShadingRule string
	// NotCompared counts the runs of another format than the baseline's.
	NotCompared int
}

type htmlThreshold struct {
	Spec    string
	Mode    string
	Crossed int
}

type htmlChanges struct {
	Cols        []htmlRun // the last compared runs
	HiddenCols  int
	Rows        []htmlChangeRow
	Dropped     []htmlChangeRow
	MoreDropped int
	DroppedNote string
}

type htmlChangeRow struct {
	Metric, Key, Baseline string
	Cells                 []htmlCell
}

type htmlCrossing struct {
	Threshold, Run, RunAnchor, Metric, Key, Baseline, Value, Change string
}

type htmlRun struct {
	*Run
	Anchor    string
	Label     string
	Events    string
	Duration  string
	TagText   string
	Status    string
	Crossings int
}

type legendItem struct{ Name, Color, Dash string }

type htmlFigure struct {
	Title  string
	Note   string
	Plot   template.HTML
	Legend []legendItem
	plot   *linePlot // drawn into Plot once every figure's series are known
}

// render draws the figure's plot, its series in their styles (by their
// names, each series' own when not there).
func (f *htmlFigure) render(styles map[string]seriesStyle) {
	for i := range f.plot.Series {
		s := &f.plot.Series[i]
		if st, ok := styles[s.Name]; ok {
			s.Color, s.Dash = st.Color, st.Dash
		}
		dash := s.Dash
		if dash == "" {
			dash = lineDashes[0].Name
		}
		f.Legend = append(f.Legend, legendItem{s.Name, s.Color, dash})
	}
	f.Plot = template.HTML(f.plot.svg())
}

type htmlMetric struct {
	*Metric
	Figure *htmlFigure
	Cols   []htmlRun
	Hidden int // run columns left out
	Rows   []htmlMetricRow
	Span   int // the table's columns: the key's and the runs'
}

type htmlMetricRow struct {
	Key   string
	Cells []htmlCell
}

type htmlCell struct {
	Value, Change, Class, Title string
}

// htmlPivot is a run's metric values, a row per key and a column per
// metric: for runs not compared with the baseline, whose values the
// metric tables leave out.
type htmlPivot struct {
	Metrics []string
	Rows    []htmlPivotRow
}

type htmlPivotRow struct {
	Key   string
	Cells []string
}

type htmlDetail struct {
	Values   *htmlPivot
	Run      htmlRun
	Load     *htmlFigure
	Objects  []htmlObject
	States   []htmlState
	Diags    []DiagRow
	Baseline string
}

type htmlObject struct {
	Object, Kind, Running, Share, Instances, P50, P90, P99, Max string
}

type htmlState struct {
	Object, Class, Count, Total, Mean, P50, P90, P99, Max, Share string
}

// WriteHTML writes the report as one self-contained HTML page: inline CSS
// and SVG, no script, nothing fetched.
func (r *Report) WriteHTML(w io.Writer) error {
	return htmlTemplate.Execute(w, r.htmlPage())
}

// PlotCount is the number of SVG plots WriteHTML draws: a trend per
// metric with something to draw, a histogram per --hist, a CPU load plot
// per run with CPU states.
func (r *Report) PlotCount() int {
	p := r.htmlPage()
	n := len(p.Hists)
	for _, m := range p.Metrics {
		if m.Figure != nil {
			n++
		}
	}
	for _, d := range p.Details {
		if d.Load != nil {
			n++
		}
	}
	return n
}

func (r *Report) htmlPage() *htmlPage {
	base := r.baselineRun()
	p := &htmlPage{R: r, Base: base, BaseLabel: base.label(), WindowNote: windowNote, ShadingRule: shadingRule()}
	runs := map[int32]htmlRun{}
	crossedBy := map[int32]int{}
	for _, c := range r.Crossings {
		crossedBy[c.RunID]++
	}
	for i := range r.Runs {
		run := &r.Runs[i]
		hr := htmlRun{Run: run, Anchor: fmt.Sprintf("run-%d", run.ID), Label: run.label(),
			Events: fmtValue(UnitCount, float64(run.Events)), Duration: fmtDuration(float64(run.Duration)),
			TagText: tagText(run.Tags), Crossings: crossedBy[run.ID]}
		switch {
		case run.Baseline:
			hr.Status = "baseline"
		case run.Compared:
			hr.Status = "compared"
		default:
			hr.Status = "not compared: " + run.Format + ", the baseline is " + base.Format
		}
		runs[run.ID] = hr
		p.Runs = append(p.Runs, hr)
	}

	// The verdict.
	switch {
	case len(r.Thresholds) == 0:
		p.Verdict, p.Headline = "none", "No thresholds given"
	case len(r.Crossings) == 0:
		p.Verdict, p.Headline = "ok", fmt.Sprintf("No threshold crossed (%s checked)", plural(len(r.Thresholds), "threshold"))
	default:
		p.Verdict, p.Headline = "fail", fmt.Sprintf("%s crossed a threshold", plural(len(r.Crossings), "value"))
	}
	for _, t := range r.Thresholds {
		n := 0
		for _, c := range r.Crossings {
			if c.Threshold == t.Spec {
				n++
			}
		}
		p.Thresholds = append(p.Thresholds, htmlThreshold{t.Spec, string(t.Mode), n})
	}
	for i, c := range r.Crossings {
		if i == htmlMaxCrossings {
			p.MoreCross = len(r.Crossings) - i
			break
		}
		m := r.metric(c.Metric)
		p.Crossings = append(p.Crossings, htmlCrossing{c.Threshold, c.Run, runs[c.RunID].Anchor, c.Metric, keyLabel(c.Key),
			optValue(m.Unit, c.Baseline), fmtValue(m.Unit, c.Value), changeText(m.Unit, c.Change, c.ChangePct)})
	}

	// The metric tables and trends show the baseline and the runs
	// compared with it; the other runs' values are in their sections.
	var compared []htmlRun
	for _, run := range p.Runs {
		if run.Baseline || run.Compared {
			compared = append(compared, run)
		}
	}
	p.NotCompared = len(p.Runs) - len(compared)
	p.Changes = r.htmlChanges(p.Runs)
	for i := range r.Metrics {
		p.Metrics = append(p.Metrics, r.htmlMetric(&r.Metrics[i], compared))
	}
	for _, h := range r.Hists {
		if f := r.histFigure(h); f != nil {
			p.Hists = append(p.Hists, *f)
		}
	}
	byRun := map[int32][]Value{} // the values of the runs not compared
	for _, v := range r.Values {
		if run := runs[v.RunID]; !run.Baseline && !run.Compared {
			byRun[v.RunID] = append(byRun[v.RunID], v)
		}
	}
	for i, d := range r.Details {
		p.Details = append(p.Details, r.htmlDetail(d, p.Runs[i], byRun[d.RunID]))
	}
	p.render()
	return p
}

// render gives every key one style in all the plots that draw keys (the
// trends, the CPU load plots), and every run one in all the histograms,
// then draws the plots.
func (p *htmlPage) render() {
	var keyFigs, runFigs []*htmlFigure
	for i := range p.Metrics {
		if f := p.Metrics[i].Figure; f != nil {
			keyFigs = append(keyFigs, f)
		}
	}
	for i := range p.Details {
		if f := p.Details[i].Load; f != nil {
			keyFigs = append(keyFigs, f)
		}
	}
	for i := range p.Hists {
		runFigs = append(runFigs, &p.Hists[i])
	}
	names := func(figs []*htmlFigure) (plots [][]string, all []string) {
		for _, f := range figs {
			var plot []string
			for _, s := range f.plot.Series {
				if s.Color == "" { // a series of its own colour (a baseline) takes none
					plot = append(plot, s.Name)
				}
			}
			plots = append(plots, plot)
			all = append(all, plot...)
		}
		return plots, all
	}
	// Keys in order of first appearance in the plots, each plot's in its
	// order (crossed thresholds, then the largest changes), so that the
	// keys a reader looks for first take the first colours; runs in the
	// report's order.
	plots, keys := names(keyFigs)
	keyStyles := assignStyles(keys, plots, true)
	plots, _ = names(runFigs)
	var runs []string
	for _, run := range p.Runs {
		runs = append(runs, run.Label)
	}
	runStyles := assignStyles(runs, plots, false)
	for _, f := range keyFigs {
		f.render(keyStyles)
	}
	for _, f := range runFigs {
		f.render(runStyles)
	}
}

// htmlChanges is the page's list of the largest changes (largestChanges,
// as the Markdown has it), over the last compared runs.
func (r *Report) htmlChanges(runs []htmlRun) *htmlChanges {
	changes, dropped, more := r.largestChanges(mdMaxChanges)
	if len(changes)+len(dropped) == 0 {
		return nil
	}
	hc := &htmlChanges{MoreDropped: more, DroppedNote: droppedNote}
	for _, run := range runs {
		if run.Compared {
			hc.Cols = append(hc.Cols, run)
		}
	}
	if len(hc.Cols) > mdMaxRuns {
		hc.HiddenCols = len(hc.Cols) - mdMaxRuns
		hc.Cols = hc.Cols[hc.HiddenCols:]
	}
	base := r.baselineRun()
	rows := func(cs []change) []htmlChangeRow {
		var out []htmlChangeRow
		for _, c := range cs {
			m := r.metric(c.metric)
			bv, _ := r.Value(c.metric, c.key, base.ID)
			row := htmlChangeRow{Metric: c.metric, Key: keyLabel(c.key), Baseline: fmtValue(m.Unit, bv.Value)}
			for _, col := range hc.Cols {
				row.Cells = append(row.Cells, r.htmlCell(m, c.key, col.ID))
			}
			out = append(out, row)
		}
		return out
	}
	hc.Rows, hc.Dropped = rows(changes), rows(dropped)
	return hc
}

// htmlCell is a metric table's cell: the run's value of a key and its
// change from the baseline, shaded by changeClass, or crossed.
func (r *Report) htmlCell(m *Metric, key string, run int32) htmlCell {
	base := r.baselineRun()
	v, ok := r.Value(m.Name, key, run)
	if !ok {
		c := htmlCell{Class: "missing", Title: "no value in this run"}
		if _, inBase := r.Value(m.Name, key, base.ID); inBase && run != base.ID {
			c.Value, c.Title = noSamples, noSamples+" in this run: the metric found nothing to measure for "+keyLabel(key)+", which "+base.label()+" has"
		}
		return c
	}
	c := htmlCell{Value: fmtValue(m.Unit, v.Value)}
	if v.Change != nil {
		c.Change = changeText(m.Unit, v.Change, v.ChangePct)
		if v.ChangePct != nil {
			c.Change = fmtPct(*v.ChangePct)
		}
		c.Class = changeClass(m, v)
		c.Title = fmt.Sprintf("%s against %s in %s: %s", c.Value, fmtValue(m.Unit, *v.Baseline), base.label(), changeText(m.Unit, v.Change, v.ChangePct))
		if droppedToZero(v) {
			c.Title += ": dropped to 0"
		}
	}
	if cs := r.crossingsOf(m.Name, key, run); len(cs) > 0 {
		c.Class = "crossed"
		var specs []string
		for _, x := range cs {
			specs = append(specs, x.Threshold)
		}
		c.Title = "beyond " + strings.Join(specs, ", ") + ". " + c.Title
	}
	return c
}

// htmlMetric is a metric's section: its trend plot and its table.
func (r *Report) htmlMetric(m *Metric, runs []htmlRun) htmlMetric {
	hm := htmlMetric{Metric: m}
	shown := map[int32]bool{}
	for _, run := range runs {
		shown[run.ID] = true
	}
	var keys []string
	seen := map[string]bool{}
	for _, v := range r.Values {
		if v.Metric == m.Name && shown[v.RunID] && !seen[v.Key] {
			seen[v.Key] = true
			keys = append(keys, v.Key)
		}
	}
	// Columns: the baseline, then the last runs.
	var others []htmlRun
	var baseCol htmlRun
	for _, run := range runs {
		if run.Baseline {
			baseCol = run
		} else {
			others = append(others, run)
		}
	}
	if len(others) > htmlMaxRunColumns {
		hm.Hidden = len(others) - htmlMaxRunColumns
		others = others[hm.Hidden:]
	}
	hm.Cols = append([]htmlRun{baseCol}, others...)
	hm.Span = 1 + len(hm.Cols)
	for _, k := range keys {
		row := htmlMetricRow{Key: keyLabel(k)}
		for _, col := range hm.Cols {
			row.Cells = append(row.Cells, r.htmlCell(m, k, col.ID))
		}
		hm.Rows = append(hm.Rows, row)
	}
	hm.Figure = r.trendFigure(m, keys, runs)
	return hm
}

// shadePct is the smallest change, in percent of the baseline's value,
// that the tables shade (either way).
const shadePct = 1.0

// changeClass colours a change: worse or better from shadePct on, by the
// metric's direction; shadingRule says so on the page.
func changeClass(m *Metric, v Value) string {
	if v.Change == nil || *v.Change == 0 {
		return "same"
	}
	if v.ChangePct != nil && math.Abs(*v.ChangePct) < shadePct {
		return "same"
	}
	if (*v.Change > 0) == (m.Better == "lower") {
		return "worse"
	}
	return "better"
}

// shadingRule is changeClass in words, with the numbers in effect, for
// the page (next to the thresholds, since it is not one).
func shadingRule() string {
	pct := sig(shadePct, 3) + "%"
	return fmt.Sprintf("A value in the metrics' tables is shaded when its change from the baseline "+
		"is at least %[1]s of the baseline's value, either way (the percentage before it is rounded for display): "+
		"red when it is worse (a rise, for a metric where lower is better; a fall where higher is better), "+
		"green when it is better; a change under %[1]s is left white (so %[2]s is shaded, %[3]s is not), "+
		"and any change from a baseline of 0 is shaded. "+
		"This shading is not a threshold and fails nothing: "+
		"a value beyond a --fail-on threshold is red whichever way it changed, with a red edge.",
		pct, fmtPct(1.46*shadePct), fmtPct(0.606*shadePct))
}

// trendFigure plots a metric over the runs: shares as they are (0-100%),
// anything else as the change from the baseline in percent (the keys'
// values may differ by orders of magnitude). The keys drawn are those
// with a crossed threshold, then the largest changes.
func (r *Report) trendFigure(m *Metric, keys []string, runs []htmlRun) *htmlFigure {
	if len(runs) < 2 {
		return nil
	}
	base := r.baselineRun()
	absolute := m.Unit == UnitRatio
	type ranked struct {
		key     string
		crossed bool
		score   float64
	}
	var rk []ranked
	for _, k := range keys {
		x := ranked{key: k}
		for _, run := range runs {
			v, ok := r.Value(m.Name, k, run.ID)
			if !ok {
				continue
			}
			if pct, ok := rankedPct(v); ok {
				x.score = math.Max(x.score, pct)
			}
			x.crossed = x.crossed || len(r.crossingsOf(m.Name, k, run.ID)) > 0
		}
		rk = append(rk, x)
	}
	sort.SliceStable(rk, func(i, j int) bool {
		if rk[i].crossed != rk[j].crossed {
			return rk[i].crossed
		}
		return rk[i].score > rk[j].score
	})
	// Beside the table for a few runs; the page's width for many.
	width := 560
	if len(runs) > 24 {
		width = 1140
	}
	plot := &linePlot{Width: width, Height: 230, Markers: len(runs) <= 40, MaxXLabelWidth: 12}
	for _, run := range runs {
		plot.XLabels = append(plot.XLabels, run.Label)
	}
	if absolute {
		plot.YFormat = func(y float64) string { return fmtValue(UnitRatio, y) }
		plot.Title = m.Name + " per run"
		for _, t := range r.Thresholds {
			if t.Metric == m.Name && t.Mode == ModeValue {
				plot.Limits = append(plot.Limits, plotLimit{t.Limit, t.Spec})
			}
		}
	} else {
		plot.YFormat = func(y float64) string { return fmtPct(y) }
		plot.YAxis = "change from " + base.label()
		plot.Title = m.Name + ": change from " + base.label() + " per run"
		for _, t := range r.Thresholds {
			if t.Metric == m.Name && t.Mode == ModeRelative {
				plot.Limits = append(plot.Limits, plotLimit{t.Limit, t.Spec})
			}
		}
	}
	drawn := 0
	fig := &htmlFigure{Title: plot.Title}
	for _, x := range rk {
		if drawn == htmlMaxTrendLines {
			break
		}
		s := plotSeries{Name: keyLabel(x.key)}
		finite := 0
		for i, run := range runs {
			pt := plotPoint{X: float64(i), Y: math.NaN()}
			v, ok := r.Value(m.Name, x.key, run.ID)
			switch {
			case !ok:
			case absolute:
				pt.Y = v.Value
			case run.Baseline:
				pt.Y = 0
			case v.ChangePct != nil:
				pt.Y = *v.ChangePct
			}
			if !math.IsNaN(pt.Y) {
				finite++
				pt.Tip = fmt.Sprintf("%s, %s: %s", run.Label, keyLabel(x.key), fmtValue(m.Unit, v.Value))
				if v.ChangePct != nil {
					pt.Tip += " (" + fmtPct(*v.ChangePct) + ")"
				}
				pt.Crossed = len(r.crossingsOf(m.Name, x.key, run.ID)) > 0
			}
			s.Points = append(s.Points, pt)
		}
		if finite < 2 {
			continue
		}
		plot.Series = append(plot.Series, s)
		drawn++
	}
	if drawn == 0 {
		return nil
	}
	if n := len(keys) - drawn; n > 0 {
		fig.Note = fmt.Sprintf("%d of %d keys drawn (crossed thresholds first, then the largest changes, a drop to 0 not counted); the table has all.", drawn, len(keys))
	}
	fig.plot = plot
	return fig
}

// histFigure draws a --hist: each run's share of values per power-of-two
// bucket, the baseline and the last runs.
func (r *Report) histFigure(h Hist) *htmlFigure {
	if len(h.Runs) == 0 {
		return nil
	}
	names := map[int32]string{}
	for _, run := range r.Runs {
		names[run.ID] = run.label()
	}
	base := r.baselineRun()
	runs := h.Runs
	if len(runs) > htmlMaxHistLines {
		var keep []HistRun
		for _, hr := range runs {
			if hr.RunID == base.ID {
				keep = append(keep, hr)
			}
		}
		keep = append(keep, runs[len(runs)-(htmlMaxHistLines-len(keep)):]...)
		runs = keep
	}
	edgeSet := map[int64]bool{}
	for _, hr := range runs {
		for _, b := range hr.Buckets {
			edgeSet[b[0]] = true
		}
	}
	var edges []int64
	for e := range edgeSet {
		edges = append(edges, e)
	}
	sort.Slice(edges, func(i, j int) bool { return edges[i] < edges[j] })
	// Fill the powers of two between the smallest and largest bucket, so
	// that the x axis is a log scale without holes.
	var all []int64
	for e := edges[0]; e <= edges[len(edges)-1]; {
		all = append(all, e)
		if e <= 0 {
			e = 1
			if len(edges) > 1 && edges[1] > 1 && e < edges[1] {
				e = edges[1]
			}
			continue
		}
		e *= 2
	}
	pos := map[int64]int{}
	plot := &linePlot{Width: 900, Height: 260, Bars: true, YMin: 0, XAxis: "duration (bucket from its value to twice it)"}
	for i, e := range all {
		pos[e] = i
		plot.XLabels = append(plot.XLabels, fmtDuration(float64(e)))
	}
	plot.YFormat = func(y float64) string { return fmtValue(UnitRatio, y) }
	what := h.What
	if h.Object != "" {
		what += " of " + h.Object
	}
	plot.Title = "Histogram of " + what + " per run"
	fig := &htmlFigure{Title: plot.Title}
	for _, hr := range runs {
		s := plotSeries{Name: names[hr.RunID], Kind: "run"}
		if hr.RunID == base.ID {
			s.Color = baselineColor
		}
		ys := make([]float64, len(all))
		for _, b := range hr.Buckets {
			ys[pos[b[0]]] = float64(b[1]) / float64(hr.Total)
		}
		for j, y := range ys {
			s.Points = append(s.Points, plotPoint{X: float64(j), Y: y,
				Tip: fmt.Sprintf("%s: %s of %d values in [%s, %s)", s.Name, fmtValue(UnitRatio, y), hr.Total, fmtDuration(float64(all[j])), fmtDuration(float64(2*max(all[j], 1))))})
		}
		plot.Series = append(plot.Series, s)
	}
	if len(runs) < len(h.Runs) {
		fig.Note = fmt.Sprintf("The baseline and the last runs drawn (%d of %d); the JSON has every run.", len(runs), len(h.Runs))
	}
	fig.plot = plot
	return fig
}

func (r *Report) htmlDetail(d RunDetails, run htmlRun, values []Value) htmlDetail {
	hd := htmlDetail{Run: run, Diags: d.Diagnostics}
	if !run.Baseline && !run.Compared {
		hd.Values = r.pivot(run.ID, values)
	}
	if d.CPULoad != nil {
		plot := &linePlot{Width: 900, Height: 200, YMin: 0, YMax: 1,
			XFormat: fmtDuration, YFormat: func(y float64) string { return fmtValue(UnitRatio, y) },
			Title: "CPU load of " + run.Label + " per " + fmtDuration(float64(d.CPULoad.WindowNS)) + " window",
			XAxis: "time from the first event"}
		fig := &htmlFigure{Title: plot.Title}
		for _, c := range d.CPULoad.CPUs {
			s := plotSeries{Name: c.CPU, Width: 1.2}
			// A window without a known state breaks the line.
			prev := math.Inf(-1)
			for _, pt := range c.Points {
				if pt[0]-prev > float64(d.CPULoad.WindowNS) {
					s.Points = append(s.Points, plotPoint{X: pt[0], Y: math.NaN()})
				}
				s.Points = append(s.Points, plotPoint{X: pt[0], Y: pt[1]})
				prev = pt[0]
			}
			plot.Series = append(plot.Series, s)
		}
		fig.plot = plot
		hd.Load = fig
	}
	opt := func(v *int64) string {
		if v == nil {
			return ""
		}
		return fmtDuration(float64(*v))
	}
	for _, o := range d.Objects {
		hd.Objects = append(hd.Objects, htmlObject{o.Object, o.Kind, fmtDuration(float64(o.RunningNS)), fmtValue(UnitRatio, o.RunningShare),
			fmtValue(UnitCount, float64(o.Instances)), opt(o.ResponseP50), opt(o.ResponseP90), opt(o.ResponseP99), opt(o.ResponseMax)})
	}
	for _, s := range d.States {
		mean, share := "", ""
		if s.MeanNS != nil {
			mean = fmtDuration(*s.MeanNS)
		}
		if s.Share != nil {
			share = fmtValue(UnitRatio, *s.Share)
		}
		hd.States = append(hd.States, htmlState{s.Object, s.Class, fmtValue(UnitCount, float64(s.Count)), fmtDuration(float64(s.TotalNS)),
			mean, opt(s.P50NS), opt(s.P90NS), opt(s.P99NS), opt(s.MaxNS), share})
	}
	return hd
}

// pivot tabulates a run's values (values: those of the run): keys in
// order, the metrics that have a value in the run.
func (r *Report) pivot(run int32, values []Value) *htmlPivot {
	var metrics []*Metric
	var keys []string
	firstMetric := map[string]int{} // keys of one kind (objects, CPUs) together
	for i := range r.Metrics {
		m := &r.Metrics[i]
		has := false
		for _, v := range values {
			if v.Metric == m.Name {
				has = true
				if _, seen := firstMetric[v.Key]; !seen {
					firstMetric[v.Key] = i
					keys = append(keys, v.Key)
				}
			}
		}
		if has {
			metrics = append(metrics, m)
		}
	}
	if len(metrics) == 0 {
		return nil
	}
	sort.SliceStable(keys, func(i, j int) bool {
		if firstMetric[keys[i]] != firstMetric[keys[j]] {
			return firstMetric[keys[i]] < firstMetric[keys[j]]
		}
		return keys[i] < keys[j]
	})
	p := &htmlPivot{}
	for _, m := range metrics {
		p.Metrics = append(p.Metrics, m.Name)
	}
	for _, k := range keys {
		row := htmlPivotRow{Key: keyLabel(k)}
		for _, m := range metrics {
			cell := ""
			if v, ok := r.Value(m.Name, k, run); ok {
				cell = fmtValue(m.Unit, v.Value)
			}
			row.Cells = append(row.Cells, cell)
		}
		p.Rows = append(p.Rows, row)
	}
	return p
}

// tagText prints tags as k=v, sorted.
func tagText(tags map[string]string) string {
	var parts []string
	for k, v := range tags {
		parts = append(parts, k+"="+v)
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}
