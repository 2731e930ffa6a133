package report

import (
	"fmt"
	"math"
	"path"
	"strconv"
	"strings"
)

// ThresholdMode says what a threshold compares.
type ThresholdMode string

const (
	// ModeValue compares the value itself: cpu_load > 0.85.
	ModeValue ThresholdMode = "value"
	// ModeChange compares the change from the baseline, in the metric's
	// unit: response_p99 > +2ms.
	ModeChange ThresholdMode = "change"
	// ModeRelative compares the change from the baseline in percent of
	// the baseline: response_p99 > +10%.
	ModeRelative ThresholdMode = "relative"
)

// A Threshold is one --fail-on condition:
//
//	METRIC[KEY] OP VALUE
//
// METRIC names a metric; [KEY] optionally limits it to the keys that
// match a glob (* any text, ? one character); OP is >, >=, < or <=.
// VALUE is a number, a signed number (+ or -: a change from the
// baseline) or a signed percentage (+10%: a change relative to the
// baseline). A duration unit (ns, us, ms, s) may follow the number of a
// metric measured in ns.
type Threshold struct {
	Spec   string        `json:"spec"`
	Metric string        `json:"metric"`
	Key    string        `json:"key"` // glob; empty: every key
	Op     string        `json:"op"`
	Mode   ThresholdMode `json:"mode"`
	Limit  float64       `json:"limit"` // ns for a duration; percent for ModeRelative
	unit   string        // the duration unit written, "" if none
}

// ParseThreshold reads a --fail-on condition. Its errors say where, as
// --fail-on "SPEC": column N: what was expected, what was found.
func ParseThreshold(spec string) (Threshold, error) {
	p := &thresholdParser{spec: spec}
	t := Threshold{Spec: spec}
	p.space()
	start := p.pos
	for p.pos < len(spec) && isNameByte(spec[p.pos], p.pos == start) {
		p.pos++
	}
	if p.pos == start {
		return t, p.errorf("expected a metric name")
	}
	t.Metric = spec[start:p.pos]
	if p.peek() == '[' {
		open := p.pos
		end := strings.IndexByte(spec[open:], ']')
		if end < 0 {
			p.pos = len(spec)
			return t, p.errorf("expected ] to close the key at column %d", open+1)
		}
		t.Key = spec[open+1 : open+end]
		if t.Key == "" {
			p.pos = open + 1
			return t, p.errorf("expected a key or a glob between [ and ]")
		}
		if _, err := path.Match(t.Key, ""); err != nil {
			p.pos = open + 1
			return t, p.errorf("expected a glob (*, ?, [a-z]) as the key")
		}
		p.pos = open + end + 1
	}
	p.space()
	switch {
	case strings.HasPrefix(spec[p.pos:], ">="), strings.HasPrefix(spec[p.pos:], "<="):
		t.Op = spec[p.pos : p.pos+2]
		p.pos += 2
	case p.peek() == '>' || p.peek() == '<':
		t.Op = spec[p.pos : p.pos+1]
		p.pos++
	default:
		return t, p.errorf("expected >, >=, < or <=")
	}
	p.space()
	numStart := p.pos
	signed := p.peek() == '+' || p.peek() == '-'
	if signed {
		p.pos++
	}
	digits := p.pos
	for p.pos < len(spec) && (isDigit(spec[p.pos]) || spec[p.pos] == '.' ||
		((spec[p.pos] == 'e' || spec[p.pos] == 'E') && p.pos > digits && isDigitOrSign(spec, p.pos+1))) {
		if spec[p.pos] == 'e' || spec[p.pos] == 'E' {
			p.pos++ // the exponent's sign or first digit
		}
		p.pos++
	}
	if p.pos == digits {
		return t, p.errorf("expected a number")
	}
	v, err := strconv.ParseFloat(spec[digits:p.pos], 64)
	if err != nil || math.IsInf(v, 0) {
		p.pos = digits
		return t, p.errorf("expected a number")
	}
	if spec[numStart] == '-' {
		v = -v
	}
	switch {
	case p.peek() == '%':
		if !signed {
			return t, p.errorf("expected + or - before a percentage (+10%%: a change relative to the baseline; a share is written 0.85)")
		}
		p.pos++
		t.Mode = ModeRelative
	default:
		unitStart := p.pos
		for p.pos < len(spec) && spec[p.pos] >= 'a' && spec[p.pos] <= 'z' {
			p.pos++
		}
		if u := spec[unitStart:p.pos]; u != "" {
			f, ok := durationUnits[u]
			if !ok {
				p.pos = unitStart
				return t, p.errorf("expected a duration unit (ns, us, ms, s) or %%")
			}
			if v *= f; math.IsInf(v, 0) {
				p.pos = digits
				return t, p.errorf("expected a number")
			}
			t.unit = u
		}
		t.Mode = ModeValue
		if signed {
			t.Mode = ModeChange
		}
	}
	t.Limit = v
	p.space()
	if p.pos < len(spec) {
		return t, p.errorf("expected the end")
	}
	return t, nil
}

var durationUnits = map[string]float64{"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}

// check tells whether t fits the metric it names.
func (t *Threshold) check(m *Metric) error {
	if t.unit != "" && m.Unit != UnitNS {
		return fmt.Errorf("--fail-on %q: %s is measured in %s, not a duration: write the limit without %s", t.Spec, m.Name, m.Unit, t.unit)
	}
	return nil
}

// matches tells whether the threshold applies to a key of its metric.
func (t *Threshold) matches(key string) bool {
	if t.Key == "" {
		return true
	}
	ok, _ := path.Match(t.Key, key)
	return ok
}

// crossed tells whether x (the value, the change or the relative change
// in percent, as the mode says) is beyond the limit.
func (t *Threshold) crossed(x float64) bool {
	switch t.Op {
	case ">":
		return x > t.Limit
	case ">=":
		return x >= t.Limit
	case "<":
		return x < t.Limit
	default:
		return x <= t.Limit
	}
}

type thresholdParser struct {
	spec string
	pos  int
}

func (p *thresholdParser) peek() byte {
	if p.pos < len(p.spec) {
		return p.spec[p.pos]
	}
	return 0
}

func (p *thresholdParser) space() {
	for p.pos < len(p.spec) && (p.spec[p.pos] == ' ' || p.spec[p.pos] == '\t') {
		p.pos++
	}
}

// errorf says what was expected at the current column and what is there.
func (p *thresholdParser) errorf(format string, args ...any) error {
	found := "the end"
	if p.pos < len(p.spec) {
		rest := p.spec[p.pos:]
		if i := strings.IndexAny(rest, " \t"); i > 0 {
			rest = rest[:i]
		}
		found = strconv.Quote(rest)
	}
	return fmt.Errorf("--fail-on %q: column %d: %s, found %s", p.spec, p.pos+1, fmt.Sprintf(format, args...), found)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isNameByte(c byte, first bool) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (!first && isDigit(c))
}

// isDigitOrSign tells whether an exponent can start at s[i].
func isDigitOrSign(s string, i int) bool {
	return i < len(s) && (isDigit(s[i]) || ((s[i] == '+' || s[i] == '-') && i+1 < len(s) && isDigit(s[i+1])))
}
