package dtracefmt

import "io"

// WriteTruncating is Write with the bar lengths of the first Solaris 10
// DTrace, which truncated instead of rounding.
func WriteTruncating(w io.Writer, spec Spec, hists []Hist) error {
	return write(w, spec, hists, truncateBars)
}
