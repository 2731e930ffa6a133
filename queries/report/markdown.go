package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/traceduck/traceduck/internal/safetext"
)

// Limits of the Markdown summary, which is meant for a CI comment.
const (
	mdMaxCrossings = 20 // rows of the crossed thresholds
	mdMaxChanges   = 10 // rows of the largest changes
	mdMaxRuns      = 6  // run columns besides the baseline (the last ones)
)

// WriteMarkdown writes a compact summary: the verdict, the crossed
// thresholds, and the largest changes from the baseline.
func (r *Report) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	base := r.baselineRun()
	fmt.Fprintf(&b, "## traceduck report: %s, baseline %s\n\n", plural(len(r.Runs), "run"), mdCell(base.label()))
	if r.Window != nil {
		fmt.Fprintf(&b, "Window %s: %s\n\n", r.Window, windowNote)
	}

	switch {
	case len(r.Thresholds) == 0:
		b.WriteString("No thresholds given.\n\n")
	case len(r.Crossings) == 0:
		fmt.Fprintf(&b, "**No threshold crossed** (%s: %s).\n\n", plural(len(r.Thresholds), "threshold"), r.thresholdList())
	default:
		fmt.Fprintf(&b, "**%s crossed** (%s):\n\n", plural(len(r.Crossings), "value"), r.thresholdList())
		b.WriteString("| threshold | run | metric | key | baseline | value | change |\n| --- | --- | --- | --- | ---: | ---: | ---: |\n")
		for i, c := range r.Crossings {
			if i == mdMaxCrossings {
				fmt.Fprintf(&b, "\n%d more in the JSON report.\n", len(r.Crossings)-mdMaxCrossings)
				break
			}
			m := r.metric(c.Metric)
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", safetext.MarkdownCode(c.Threshold, true),
				mdCell(c.Run), mdCell(c.Metric), mdCell(keyLabel(c.Key)), optValue(m.Unit, c.Baseline), fmtValue(m.Unit, c.Value), changeText(m.Unit, c.Change, c.ChangePct))
		}
		b.WriteString("\n")
	}

	// The largest relative changes, each (metric, key) once; apart from
	// them, the values that fell to 0 or are gone.
	cols := r.mdRuns()
	changes, dropped, moreDropped := r.largestChanges(mdMaxChanges)
	switch {
	case len(cols) == 0:
		b.WriteString("No run is compared with the baseline (runs are compared with a baseline of the same format).\n")
	case len(changes) == 0 && len(dropped) == 0:
		fmt.Fprintf(&b, "No value changed from %s.\n", mdCell(base.label()))
	}
	if len(changes) > 0 {
		fmt.Fprintf(&b, "### Largest changes from %s\n\n", mdCell(base.label()))
		r.mdChanges(&b, changes, cols)
	}
	if len(dropped) > 0 {
		if len(changes) > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "### Dropped to 0 or gone since %s\n\n%s\n\n", mdCell(base.label()), droppedNote)
		r.mdChanges(&b, dropped, cols)
		if moreDropped > 0 {
			fmt.Fprintf(&b, "\n%d more in the HTML and JSON reports.\n", moreDropped)
		}
	}
	if n := len(r.compared()) - len(cols); n > 0 && len(changes)+len(dropped) > 0 {
		fmt.Fprintf(&b, "\nThe tables show the last %d runs; %d more are in the HTML and JSON reports.\n", len(cols), n)
	}
	var others []string
	for _, run := range r.Runs {
		if !run.Baseline && !run.Compared {
			others = append(others, mdCell(run.label())+" ("+mdCell(run.Format)+")")
		}
	}
	if len(others) > 0 {
		fmt.Fprintf(&b, "\nNot compared, another format than the baseline's %s: %s.\n", mdCell(base.Format), strings.Join(others, ", "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// mdRuns are the run columns of the changes table: the runs compared
// with the baseline, the last mdMaxRuns of them.
func (r *Report) mdRuns() []Run {
	out := r.compared()
	if len(out) > mdMaxRuns {
		out = out[len(out)-mdMaxRuns:]
	}
	return out
}

// compared returns the runs compared with the baseline.
func (r *Report) compared() []Run {
	var out []Run
	for _, run := range r.Runs {
		if run.Compared {
			out = append(out, run)
		}
	}
	return out
}

// mdChanges writes a table of (metric, key) pairs: the baseline's value,
// and each run's with its relative change.
func (r *Report) mdChanges(b *strings.Builder, changes []change, cols []Run) {
	base := r.baselineRun()
	fmt.Fprintf(b, "| metric | key | %s |", mdCell(base.label()))
	for _, run := range cols {
		fmt.Fprintf(b, " %s |", mdCell(run.label()))
	}
	b.WriteString("\n| --- | --- | ---: |" + strings.Repeat(" ---: |", len(cols)) + "\n")
	for _, c := range changes {
		m := r.metric(c.metric)
		bv, _ := r.Value(c.metric, c.key, base.ID)
		fmt.Fprintf(b, "| %s | %s | %s |", mdCell(c.metric), mdCell(keyLabel(c.key)), fmtValue(m.Unit, bv.Value))
		for _, run := range cols {
			v, ok := r.Value(c.metric, c.key, run.ID)
			switch {
			case !ok:
				b.WriteString(" " + noSamples + " |")
			case v.ChangePct != nil:
				mark := ""
				if len(r.crossingsOf(c.metric, c.key, run.ID)) > 0 {
					mark = " **!**"
				}
				fmt.Fprintf(b, " %s (%s)%s |", fmtValue(m.Unit, v.Value), fmtPct(*v.ChangePct), mark)
			default:
				fmt.Fprintf(b, " %s |", fmtValue(m.Unit, v.Value))
			}
		}
		b.WriteString("\n")
	}
}

func (r *Report) thresholdList() string {
	var parts []string
	for _, t := range r.Thresholds {
		parts = append(parts, safetext.MarkdownCode(t.Spec, false))
	}
	return strings.Join(parts, ", ")
}

func optValue(unit string, v *float64) string {
	if v == nil {
		return ""
	}
	return fmtValue(unit, *v)
}

// changeText is "+1.2 ms (+10.5%)", the percentage when there is one.
func changeText(unit string, d, pct *float64) string {
	switch {
	case d == nil:
		return ""
	case pct == nil:
		return fmtChange(unit, *d)
	}
	return fmtChange(unit, *d) + " (" + fmtPct(*pct) + ")"
}

// mdCell is text (a run's name, an object's, a metric's) as Markdown that
// shows it and nothing else, on one line: in a table cell, a heading or
// a sentence, a name is never a link, an image, an HTML tag or a heading.
func mdCell(s string) string { return safetext.Markdown(s, " ") }

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
