package report

import (
	"bytes"
	"encoding/json"
	"io"
	"regexp"
)

// numberArray matches an indented JSON array of numbers only (a CPU load
// point, a histogram bucket). A JSON string cannot hold a raw newline, so
// the newline after "[" tells it is not inside one.
var numberArray = regexp.MustCompile(`\[\n\s*(-?[0-9][0-9.eE+-]*(?:,\n\s*-?[0-9][0-9.eE+-]*)*)\n\s*\]`)

var numberSep = regexp.MustCompile(`,\n\s*`)

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
	b := buf.Bytes()
	b = numberArray.ReplaceAllFunc(b, func(m []byte) []byte {
		inner := numberArray.FindSubmatch(m)[1]
		return append(append([]byte("["), numberSep.ReplaceAll(inner, []byte(", "))...), ']')
	})
	b = append(bytes.TrimRight(b, "\n"), '\n')
	_, err := w.Write(b)
	return err
}
