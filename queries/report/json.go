package report

import (
	"bytes"
	"encoding/json"
	"io"
)

// WriteJSON writes the report as JSON (keys documented in docs/report.md):
// indented, with arrays of numbers on one line, keys in a fixed order,
// the same bytes for the same database and options.
func (r *Report) WriteJSON(w io.Writer) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // "response_p99 > +10%", not "\u003e"
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return err
	}
	b := compactNumberArrays(buf.Bytes())
	b = append(bytes.TrimRight(b, "\n"), '\n')
	_, err := w.Write(b)
	return err
}

// compactNumberArrays puts every indented JSON array of numbers only (a
// CPU load point, a histogram bucket) on one line: "[\n    1,\n    2\n  ]"
// becomes "[1, 2]". A JSON string cannot hold a raw newline, so a "["
// followed by a newline is not inside one. One pass over b (a regular
// expression took 2.5 s over the 4 MB of a report of 100 runs).
func compactNumberArrays(b []byte) []byte {
	out := make([]byte, 0, len(b))
	var nums [][2]int
	for i := 0; i < len(b); {
		if b[i] == '[' && i+1 < len(b) && b[i+1] == '\n' {
			var end int
			if nums, end = numberArrayAt(b, i, nums[:0]); end > 0 {
				out = append(out, '[')
				for k, n := range nums {
					if k > 0 {
						out = append(out, ", "...)
					}
					out = append(out, b[n[0]:n[1]]...)
				}
				out = append(out, ']')
				i = end
				continue
			}
		}
		out = append(out, b[i])
		i++
	}
	return out
}

// numberArrayAt reads the array of numbers that starts with "[\n" at
// b[i]: the numbers' spans appended to nums, and the index after its
// "]"; end 0 when it is not an array of numbers only (one or more).
func numberArrayAt(b []byte, i int, nums [][2]int) (_ [][2]int, end int) {
	space := func(j int) int {
		for j < len(b) && (b[j] == ' ' || b[j] == '\n' || b[j] == '\t' || b[j] == '\r' || b[j] == '\f') {
			j++
		}
		return j
	}
	j := i + 2 // after "[\n"
	for {
		j = space(j)
		start := j
		if j < len(b) && b[j] == '-' {
			j++
		}
		if j >= len(b) || b[j] < '0' || b[j] > '9' {
			return nums, 0
		}
		for j < len(b) && (b[j] >= '0' && b[j] <= '9' || b[j] == '.' || b[j] == 'e' || b[j] == 'E' || b[j] == '+' || b[j] == '-') {
			j++
		}
		nums = append(nums, [2]int{start, j})
		switch {
		case j+1 < len(b) && b[j] == ',' && b[j+1] == '\n':
			j += 2
		case j < len(b) && b[j] == '\n':
			j = space(j + 1)
			if j < len(b) && b[j] == ']' {
				return nums, j + 1
			}
			return nums, 0
		default:
			return nums, 0
		}
	}
}
