package ingest

import "math"

// IsDigits reports whether b is one or more ASCII decimal digits.
func IsDigits(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// ParseUint parses a non-negative decimal integer without allocating (the
// parsers' hot paths call it on every field); false when b is empty, holds
// anything but digits, or overflows a uint64.
func ParseUint(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (math.MaxUint64-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	return v, true
}
