package report

import (
	"math"
	"strconv"
	"strings"
)

// fmtValue prints a metric's value in its unit, for people: durations in
// the largest unit that keeps them >= 1 with four significant digits,
// shares as percentages.
func fmtValue(unit string, v float64) string {
	switch unit {
	case UnitNS:
		return fmtDuration(v)
	case UnitRatio:
		return sig(100*v, 3) + "%"
	case UnitCount:
		if v == math.Trunc(v) && math.Abs(v) < 1e15 {
			return groupDigits(strconv.FormatInt(int64(v), 10))
		}
		return sig(v, 4)
	case UnitPerSec:
		return fmtSI(v) + "/s"
	}
	return sig(v, 4)
}

// fmtChange prints a change in the metric's unit, signed; the change of a
// share in percentage points.
func fmtChange(unit string, d float64) string {
	sign := "+"
	if d < 0 {
		sign = "-"
		d = -d
	}
	switch unit {
	case UnitRatio:
		return sign + sig(100*d, 3) + " pp"
	case UnitNS:
		return sign + fmtDuration(d)
	}
	return sign + strings.TrimPrefix(fmtValue(unit, d), "+")
}

// fmtPct prints a relative change: +12.3%.
func fmtPct(p float64) string {
	if p >= 0 {
		return "+" + sig(p, 3) + "%"
	}
	return sig(p, 3) + "%"
}

// fmtDuration prints ns: 850 ns, 12.35 us, 1.234 ms, 2.5 s.
func fmtDuration(ns float64) string {
	a := math.Abs(ns)
	switch {
	case ns == 0:
		return "0"
	case a >= 1e9:
		return sig(ns/1e9, 4) + " s"
	case a >= 1e6:
		return sig(ns/1e6, 4) + " ms"
	case a >= 1e3:
		return sig(ns/1e3, 4) + " us"
	}
	return sig(ns, 4) + " ns"
}

// fmtSI prints a number with k, M or G for thousands, millions, billions.
func fmtSI(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 1e9:
		return sig(v/1e9, 4) + " G"
	case a >= 1e6:
		return sig(v/1e6, 4) + " M"
	case a >= 1e3:
		return sig(v/1e3, 4) + " k"
	}
	return sig(v, 4)
}

// sig prints v with n significant digits at most, without exponent and
// without trailing zeros.
func sig(v float64, n int) string {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	digits := n - 1 - int(math.Floor(math.Log10(math.Abs(v))))
	if digits < 0 {
		p := math.Pow(10, float64(-digits))
		v = math.Round(v/p) * p
		digits = 0
	}
	s := strconv.FormatFloat(v, 'f', digits, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// groupDigits puts a thin space between groups of three digits.
func groupDigits(s string) string {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteString("\u2009")
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// keyLabel is how a metric's key is shown: the run as a whole has none.
func keyLabel(k string) string {
	if k == "" {
		return "(run)"
	}
	return k
}
