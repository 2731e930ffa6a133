package report

import (
	"strings"
	"testing"
)

// changeClass shades from shadePct on, either way, as shadingRule says.
func TestChangeClass(t *testing.T) {
	lower := &Metric{Name: "m", Better: "lower"}
	higher := &Metric{Name: "m", Better: "higher"}
	val := func(base, v float64) Value {
		c := v - base
		out := Value{Value: v, Baseline: &base, Change: &c}
		if base != 0 {
			p := 100 * c / base
			out.ChangePct = &p
		}
		return out
	}
	for _, c := range []struct {
		m       *Metric
		base, v float64
		want    string
	}{
		{lower, 1000, 1010, "worse"}, // +1%
		{lower, 1000, 1009.999, "same"},
		{lower, 1000, 990, "better"}, // -1%
		{lower, 1000, 990.001, "same"},
		{higher, 1000, 1010, "better"},
		{higher, 1000, 990, "worse"},
		{lower, 100, 101.46, "worse"},
		{lower, 100, 100.606, "same"},
		{lower, 0, 1e-9, "worse"}, // any change from 0
		{higher, 0, -1e-9, "worse"},
		{lower, 0, 0, "same"},
		{lower, 5, 5, "same"},
	} {
		if got := changeClass(c.m, val(c.base, c.v)); got != c.want {
			t.Errorf("better %s, %g -> %g: %s, want %s", c.m.Better, c.base, c.v, got, c.want)
		}
	}
	if got := changeClass(lower, Value{Value: 3}); got != "same" {
		t.Errorf("a value not compared: %s", got)
	}
	if r := shadingRule(); !strings.Contains(r, "at least 1% of the baseline's value") || shadePct != 1 {
		t.Errorf("shadePct %g, the rule: %s", shadePct, r)
	}
}
