package ingest

import "strings"

// TimeUnit is a trace's time unit (BTF's #timeScale, TLV's TimeScale):
// ns = value * Mul / Div.
type TimeUnit struct {
	Name     string
	Mul, Div uint64
}

// NsPerUnit is the factor runs.ns_per_unit records.
func (u TimeUnit) NsPerUnit() float64 { return float64(u.Mul) / float64(u.Div) }

var timeUnits = map[string]TimeUnit{
	"s":  {"s", 1_000_000_000, 1},
	"ms": {"ms", 1_000_000, 1},
	"us": {"us", 1_000, 1},
	"μs": {"us", 1_000, 1}, // Greek mu
	"µs": {"us", 1_000, 1}, // the micro sign, which keyboards type
	"ns": {"ns", 1, 1},
	"ps": {"ps", 1, 1_000},
	"fs": {"fs", 1, 1_000_000},
}

// LookupTimeUnit returns a unit by name: s, ms, us (μs, µs), ns, ps, fs,
// in any case, blanks around ignored.
func LookupTimeUnit(name string) (TimeUnit, bool) {
	u, ok := timeUnits[strings.ToLower(strings.TrimSpace(name))]
	return u, ok
}
