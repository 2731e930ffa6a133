// Package dtrace reads the text output of DTrace and bpftrace: event lines
// printed by the shipped D scripts (a header line naming the columns, then
// one event per line) and the aggregations printed at the end (printa
// lines, quantize/lquantize/llquantize distributions, bpftrace maps and
// hist/lhist), with or without prose around them. README.md in this
// directory documents what is read and how.
package dtrace

import (
	"bytes"
	"context"
	"fmt"
	"unicode/utf8"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/schema"
)

// Order 50: after every other format. The sniffer below is strict, but
// the text formats before it (BTF, QNX traceprinter, TLV) are stricter
// still about their first lines, and DTrace output has no magic number;
// standing last, it can take no file another format recognizes.
func init() { ingest.Register(50, &Ingester{}) }

// Ingester reads DTrace and bpftrace output.
type Ingester struct {
	scalars ScalarsMode
}

// Format describes the DTrace format.
func (*Ingester) Format() ingest.Format {
	return ingest.Format{Name: "dtrace", Description: "DTrace and bpftrace output: event lines of the shipped scripts, aggregations (printa, quantize, lquantize, llquantize, hist, lhist)",
		Patterns: []string{"*.dtrace", "*.d.out", "*.bt.out"}}
}

// scalarsParam is the flag that turns off reading DTrace scalar
// aggregations, the one part of the output found by a heuristic.
const scalarsParam = "dtrace-scalars"

// Params lists the format's flags.
func (*Ingester) Params() []ingest.Param {
	return []ingest.Param{{Name: scalarsParam, Help: "read DTrace scalar aggregations (printa lines: keys then a number): auto (after ^C, beside other aggregations, at the end of the output) or off"}}
}

// With returns the ingester with its flags set.
func (g *Ingester) With(params map[string]string) (ingest.Ingester, error) {
	out := &Ingester{}
	for name, v := range params {
		if name != scalarsParam {
			return nil, fmt.Errorf("format dtrace takes no --%s", name)
		}
		switch v {
		case "auto":
			out.scalars = ScalarsAuto
		case "off":
			out.scalars = ScalarsOff
		default:
			return nil, fmt.Errorf("--%s: expected auto or off, found %q", scalarsParam, v)
		}
	}
	return out, nil
}

// Sniff recognizes, among the first lines: the event layout's header
// line (#traceduck-events), a distribution header (value ---
// Distribution --- count), DTrace's "dtrace: description '...' matched"
// or "dtrace: script '...' matched", or bpftrace's "Attaching N probe".
func (*Ingester) Sniff(head []byte) bool {
	lr := ingest.NewLineReader(bytes.NewReader(head))
	for {
		line, ok := lr.Next()
		if !ok {
			return false
		}
		t := trimBlanks(line)
		switch {
		case bytes.HasPrefix(t, []byte("#traceduck-events")),
			isDistHeader(t),
			bytes.HasPrefix(t, []byte("Attaching ")) && bytes.Contains(t, []byte(" probe")),
			(bytes.HasPrefix(t, []byte("dtrace: description '")) || bytes.HasPrefix(t, []byte("dtrace: script '"))) && bytes.Contains(t, []byte("' matched ")):
			return true
		}
	}
}

// Ingest reads the output into w.
func (g *Ingester) Ingest(ctx context.Context, src *ingest.Source, w *schema.RunWriter) error {
	file := w.Info().Source
	aggs := newAggReader(w, file)
	aggs.scalars = g.scalars
	events := newEventReader(w, file)
	var text int64 // lines that are not blank
	var first struct {
		n    int64
		line string
	} // the first of them
	err := ingest.NewLineReader(src).Each(ctx, file, "DTrace output", func(line []byte, n int64) error {
		if t := trimBlanks(line); len(t) > 0 {
			if text == 0 {
				first.n, first.line = n, clip(t, 60)
			}
			text++
		}
		// Each line is offered to the event reader first (event output,
		// README.md "Event output"); the lines it does not take are the
		// aggregation reader's.
		if taken, err := events.Line(n, line); taken || err != nil {
			return err
		}
		return aggs.Line(n, line)
	})
	if err != nil {
		return err
	}
	if err := events.End(); err != nil {
		return err
	}
	if err := aggs.End(); err != nil {
		return err
	}
	if text > 0 && events.first == nil && aggs.stored == 0 && aggs.marks == 0 {
		// Any text is DTrace output (printf prints what it likes), so a
		// file of another format would read as nothing, and its sha256
		// would then refuse the right ingest as a duplicate: a file with
		// text and nothing DTrace in it (no header, no aggregation, not
		// even a ^C or a "dtrace: " message) is an error, with --skip-bad
		// too: no line of it was bad, there is nothing to read.
		return &schema.InputError{File: file, Line: first.n, Offset: -1, Msg: fmt.Sprintf(
			"expected DTrace or bpftrace output (a %s header or a printed aggregation), found none in %s, the first %q (another format?)",
			EventsHeader, nonBlank(text), first.line)}
	}
	return nil
}

// nonBlank is "N lines that are not blank".
func nonBlank(n int64) string {
	if n == 1 {
		return "1 line that is not blank"
	}
	return fmt.Sprintf("%d lines that are not blank", n)
}

// clip returns b as a string of at most n bytes (cut at a rune), "..."
// marking a cut.
func clip(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	for n > 0 && !utf8.RuneStart(b[n]) {
		n--
	}
	return string(b[:n]) + "..."
}
