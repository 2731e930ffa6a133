package report

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"
)

// A small SVG writer for the report's plots: axes with round ticks, grid
// lines, one polyline per series (broken where a value is missing) with
// markers with a tooltip (<title>), or grouped bars, and horizontal limit
// lines. Each series is a group <g class="series" data-key="NAME"> (or
// data-run, for a histogram's runs). The SVG is inline in the HTML page:
// no script, no font or file to fetch; it scales to the page's width
// (viewBox, and the page's CSS).

// palette is Tableau 10, which stays distinguishable for most colour
// vision deficiencies.
var palette = []string{"#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2", "#edc948", "#ff9da7", "#9c755f", "#bab0ac", "#e15759"}

// lineDashes are the line styles that extend the palette: the palette's
// colours solid, then dashed, then dotted (the names are CSS border
// styles, for the legends; the values SVG dash arrays).
var lineDashes = []struct{ Name, Array string }{{"solid", ""}, {"dashed", "7 4"}, {"dotted", "2 3"}}

// crossedColor marks values beyond a threshold and limit lines.
const crossedColor = "#d62728"

type plotPoint struct {
	X, Y    float64 // Y NaN: no value (the line breaks)
	Tip     string  // tooltip of the marker
	Crossed bool    // beyond a threshold: a red ring
}

type plotSeries struct {
	Name   string
	Kind   string // what Name is, the attribute data-KIND of its group: "key" or "run"
	Color  string
	Dash   string  // one of lineDashes' names; "": solid
	Width  float64 // stroke width; 0: 1.5
	Points []plotPoint
}

type plotLimit struct {
	Y     float64
	Label string
}

// linePlot is one plot. X is numeric (XFormat prints its ticks) or, when
// XLabels is set, the index of a category (a run, a bucket).
type linePlot struct {
	Title          string // aria-label and <title> of the whole plot
	Width, Height  int
	Series         []plotSeries
	Limits         []plotLimit
	XLabels        []string
	XFormat        func(float64) string
	YFormat        func(float64) string
	YMin, YMax     float64 // the y range includes these (e.g. 0 and 1 for a load)
	Markers        bool
	Bars           bool   // each series a bar per category (XLabels), side by side, from 0 to Y
	XAxis, YAxis   string // axis titles
	MaxXLabelWidth int    // characters of a category label before it is cut
}

const (
	plotLeft   = 64
	plotRight  = 16
	plotTop    = 12
	plotBottom = 40
)

// svg renders the plot.
func (p *linePlot) svg() string {
	w, h := float64(p.Width), float64(p.Height)
	bottom := float64(plotBottom)
	if p.XLabels != nil && len(p.XLabels) > 8 {
		bottom = 72 // room for slanted labels
	}
	if p.XAxis != "" {
		bottom += 4
	}
	x0, x1 := float64(plotLeft), w-plotRight
	y0, y1 := h-bottom, float64(plotTop)

	// 1. The data's ranges, widened to round ticks.
	xmin, xmax := math.Inf(1), math.Inf(-1)
	ymin, ymax := p.YMin, p.YMax
	for _, s := range p.Series {
		for _, pt := range s.Points {
			xmin, xmax = math.Min(xmin, pt.X), math.Max(xmax, pt.X)
			if !math.IsNaN(pt.Y) {
				ymin, ymax = math.Min(ymin, pt.Y), math.Max(ymax, pt.Y)
			}
		}
	}
	for _, l := range p.Limits {
		ymin, ymax = math.Min(ymin, l.Y), math.Max(ymax, l.Y)
	}
	if p.XLabels != nil {
		xmin, xmax = -0.5, float64(len(p.XLabels))-0.5
	}
	if math.IsInf(xmin, 1) {
		xmin, xmax = 0, 1
	}
	if xmax == xmin {
		xmax = xmin + 1
	}
	if ymax == ymin {
		ymax = ymin + 1
	}
	yticks := niceTicks(ymin, ymax, 5)
	ymin, ymax = math.Min(ymin, yticks[0]), math.Max(ymax, yticks[len(yticks)-1])
	sx := func(x float64) float64 { return x0 + (x-xmin)/(xmax-xmin)*(x1-x0) }
	sy := func(y float64) float64 { return y0 - (y-ymin)/(ymax-ymin)*(y0-y1) }

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" class="plot" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="%s">`,
		p.Width, p.Height, p.Width, p.Height, esc(p.Title))
	fmt.Fprintf(&b, `<title>%s</title>`, esc(p.Title))

	// 2. Grid and y ticks.
	for _, t := range yticks {
		y := sy(t)
		fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#e3e3e3"/>`, f1(x0), f1(y), f1(x1), f1(y))
		fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="end" class="tick">%s</text>`, f1(x0-6), f1(y+4), esc(p.YFormat(t)))
	}
	fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#888"/>`, f1(x0), f1(y0), f1(x1), f1(y0))
	fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#888"/>`, f1(x0), f1(y0), f1(x0), f1(y1))

	// 3. X ticks: categories (every k-th label when crowded), or round
	// numbers.
	if p.XLabels != nil {
		slant := len(p.XLabels) > 8
		space := 14.0 // px per label, more when slanted (they overlap otherwise)
		if slant {
			space = 20
		}
		step := 1
		for float64(len(p.XLabels))/float64(step) > (x1-x0)/space {
			step++
		}
		maxw := p.MaxXLabelWidth
		if maxw == 0 {
			maxw = 14
		}
		for i := 0; i < len(p.XLabels); i += step {
			x := sx(float64(i))
			label := p.XLabels[i]
			if len([]rune(label)) > maxw {
				label = string([]rune(label)[:maxw-1]) + "…"
			}
			fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#888"/>`, f1(x), f1(y0), f1(x), f1(y0+4))
			if slant {
				fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="end" class="tick" transform="rotate(-40 %s %s)"><title>%s</title>%s</text>`,
					f1(x+3), f1(y0+14), f1(x+3), f1(y0+14), esc(p.XLabels[i]), esc(label))
			} else {
				fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="middle" class="tick"><title>%s</title>%s</text>`, f1(x), f1(y0+16), esc(p.XLabels[i]), esc(label))
			}
		}
	} else {
		for _, t := range niceTicks(xmin, xmax, 7) {
			if t < xmin || t > xmax {
				continue
			}
			x := sx(t)
			fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#888"/>`, f1(x), f1(y0), f1(x), f1(y0+4))
			fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="middle" class="tick">%s</text>`, f1(x), f1(y0+16), esc(p.XFormat(t)))
		}
	}
	if p.XAxis != "" {
		fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="middle" class="axis">%s</text>`, f1((x0+x1)/2), f1(h-6), esc(p.XAxis))
	}
	if p.YAxis != "" {
		fmt.Fprintf(&b, `<text x="12" y="%s" text-anchor="middle" class="axis" transform="rotate(-90 12 %s)">%s</text>`, f1((y0+y1)/2), f1((y0+y1)/2), esc(p.YAxis))
	}

	// 4. Limits, then the series (the first drawn last, on top).
	for _, l := range p.Limits {
		y := sy(l.Y)
		fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-dasharray="5 3"><title>%s</title></line>`,
			f1(x0), f1(y), f1(x1), f1(y), crossedColor, esc(l.Label))
	}
	if p.Bars {
		p.bars(&b, sx, sy)
	} else {
		p.lines(&b, sx, sy)
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// lines draws each series as a polyline with markers, the first drawn
// last, on top.
func (p *linePlot) lines(b *strings.Builder, sx, sy func(float64) float64) {
	for i := len(p.Series) - 1; i >= 0; i-- {
		s := p.Series[i]
		width := s.Width
		if width == 0 {
			width = 1.5
		}
		dash := ""
		for _, d := range lineDashes {
			if d.Name == s.Dash && d.Array != "" {
				dash = ` stroke-dasharray="` + d.Array + `"`
			}
		}
		s.group(b)
		var pts []string
		flush := func() {
			if len(pts) > 1 {
				fmt.Fprintf(b, `<polyline fill="none" stroke="%s" stroke-width="%s"%s stroke-linejoin="round" points="%s"/>`, s.Color, f1(width), dash, strings.Join(pts, " "))
			}
			pts = pts[:0]
		}
		for _, pt := range s.Points {
			if math.IsNaN(pt.Y) {
				flush()
				continue
			}
			pts = append(pts, f1(sx(pt.X))+","+f1(sy(pt.Y)))
		}
		flush()
		for _, pt := range s.Points {
			if math.IsNaN(pt.Y) || !(p.Markers || pt.Crossed) {
				continue
			}
			x, y := sx(pt.X), sy(pt.Y)
			if pt.Crossed {
				fmt.Fprintf(b, `<circle cx="%s" cy="%s" r="6" fill="none" stroke="%s" stroke-width="2"/>`, f1(x), f1(y), crossedColor)
			}
			fmt.Fprintf(b, `<circle cx="%s" cy="%s" r="3" fill="%s"><title>%s</title></circle>`, f1(x), f1(y), s.Color, esc(pt.Tip))
		}
		b.WriteString(`</g>`)
	}
}

// barGroup is the share of a category's width its bars take together, and
// maxBar the widest bar (px).
const (
	barGroup = 0.8
	maxBar   = 36.0
)

// bars draws each series as bars: in each category (X the category's
// index), a bar per series from 0 to Y, side by side in the series'
// order, centred on the category. A Y of 0 or NaN draws no bar.
func (p *linePlot) bars(b *strings.Builder, sx, sy func(float64) float64) {
	n := float64(len(p.Series))
	w := math.Min((sx(barGroup)-sx(0))/n, maxBar) // px per bar
	for i, s := range p.Series {
		s.group(b)
		for _, pt := range s.Points {
			if math.IsNaN(pt.Y) || pt.Y == 0 {
				continue
			}
			left := sx(pt.X) - w*n/2 + w*float64(i)
			top, bottom := sy(math.Max(pt.Y, 0)), sy(math.Min(pt.Y, 0))
			fmt.Fprintf(b, `<rect x="%s" y="%s" width="%s" height="%s" fill="%s"><title>%s</title></rect>`,
				f1(left), f1(top), f1(math.Max(w-1, 0.5)), f1(bottom-top), s.Color, esc(pt.Tip))
		}
		b.WriteString(`</g>`)
	}
}

// group opens the series' group, named by its data-key or data-run.
func (s *plotSeries) group(b *strings.Builder) {
	kind := s.Kind
	if kind == "" {
		kind = "key"
	}
	fmt.Fprintf(b, `<g class="series" data-%s="%s">`, kind, esc(s.Name))
}

// niceTicks returns about n round values (1, 2 or 5 times a power of ten
// apart) from at or below lo to at or above hi.
func niceTicks(lo, hi float64, n int) []float64 {
	span := hi - lo
	if !(span > 0) || math.IsInf(span, 0) {
		return []float64{lo}
	}
	raw := span / float64(n-1)
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	step := 10 * p
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*p >= raw {
			step = m * p
			break
		}
	}
	start := math.Floor(lo/step) * step
	var ticks []float64
	for t := start; t <= hi+step*1e-9; t += step {
		ticks = append(ticks, t)
		if len(ticks) > 3*n {
			break
		}
	}
	if ticks[len(ticks)-1] < hi-step*1e-9 {
		ticks = append(ticks, ticks[len(ticks)-1]+step)
	}
	// Round away the float noise of repeated addition.
	for i, t := range ticks {
		ticks[i] = math.Round(t/step*1e6) / 1e6 * step
	}
	return ticks
}

// f1 prints a coordinate with one decimal.
func f1(v float64) string { return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64) }

func esc(s string) string { return html.EscapeString(s) }
