package dtrace

import (
	"bytes"
	"math"

	"github.com/traceduck/traceduck/ingest"
)

// ---- keys, titles, text ----

// keyStart returns where the key begins among lines, the paragraph above
// a distribution or a stack's value. The key is the last line and the
// lines above it at the same indentation; above a stack's frames, one
// less indented line is a key too (execname above a stack). A line
// indented otherwise is a heading (a printf), not part of the key.
func keyStart(lines []heldLine) int {
	n := len(lines)
	if n == 0 {
		return 0
	}
	i := n - 1
	ref := indentOf(lines[i].text)
	for i > 0 {
		prev := lines[i-1].text
		ind := indentOf(prev)
		if ind == ref {
			i--
			continue
		}
		if ind < ref && isStackFrame(lines[i].text) && !isStackFrame(prev) {
			i--
			ref = ind
			continue
		}
		break
	}
	return i
}

// isStackFrame reports whether a line looks like a frame of stack() or
// ustack(): module`function+0x1f, or a bare address.
func isStackFrame(line []byte) bool {
	t := trimBlanks(line)
	if bytes.IndexByte(t, '`') > 0 {
		return true
	}
	if len(t) > 2 && t[0] == '0' && t[1] == 'x' {
		for _, c := range t[2:] {
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
				return false
			}
		}
		return true
	}
	return false
}

// keyText sets r.key and r.keys from key lines: each line trimmed and
// without a literal \0 ending a field (what %S prints of a string's
// terminating NUL), the lines joined by newlines; fields split at runs of
// two or more blanks, at tabs and at line ends.
func (r *aggReader) keyText(lines []heldLine) {
	r.key = r.key[:0]
	for i := range lines {
		if i > 0 {
			r.key = append(r.key, '\n')
		}
		r.key = appendKeyLine(r.key, trimBlanks(lines[i].text))
	}
	r.setKeys()
}

// keyText1 is keyText for a key on one line.
func (r *aggReader) keyText1(text []byte) {
	r.key = appendKeyLine(r.key[:0], trimBlanks(text))
	r.setKeys()
}

func (r *aggReader) setKeys() {
	if r.key == nil {
		r.key = []byte{}
	}
	r.keys = append(r.keys[:0], '[')
	nf := 0
	text := r.key
	for len(text) > 0 {
		ln := text
		if i := bytes.IndexByte(text, '\n'); i >= 0 {
			ln, text = text[:i], text[i+1:]
		} else {
			text = nil
		}
		r.fieldsBuf = splitFields(ln, r.fieldsBuf[:0])
		for _, f := range r.fieldsBuf {
			if nf > 0 {
				r.keys = append(r.keys, ',')
			}
			r.keys = ingest.AppendJSONString(r.keys, ln[f[0]:f[1]])
			nf++
		}
	}
	r.keys = append(r.keys, ']')
}

// appendKeyLine appends a trimmed key line, leaving out each \0 that ends
// a field.
func appendKeyLine(dst, t []byte) []byte {
	for i := 0; i < len(t); i++ {
		if t[i] == '\\' && i+1 < len(t) && t[i+1] == '0' && (i+2 == len(t) || t[i+2] == ' ' || t[i+2] == '\t') {
			i++
			continue
		}
		dst = append(dst, t[i])
	}
	return trimRight(dst)
}

// splitFields splits a key line at runs of two or more blanks and at
// tabs; the fields are [from, to) offsets.
func splitFields(t []byte, out [][2]int) [][2]int {
	i := 0
	for i < len(t) {
		for i < len(t) && (t[i] == ' ' || t[i] == '\t') {
			i++
		}
		if i == len(t) {
			break
		}
		s := i
		for i < len(t) {
			if t[i] == '\t' || t[i] == ' ' && i+1 < len(t) && (t[i+1] == ' ' || t[i+1] == '\t') {
				break
			}
			i++
		}
		out = append(out, [2]int{s, len(trimRight(t[:i]))})
	}
	return out
}

// appendTitle appends heading lines, trimmed, joined by newlines.
func appendTitle(dst []byte, lines []heldLine) []byte {
	for _, l := range lines {
		t := trimBlanks(l.text)
		if len(t) == 0 {
			continue
		}
		if len(dst) > 0 {
			dst = append(dst, '\n')
		}
		dst = append(dst, t...)
	}
	return dst
}

func blankLine(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\f' && c != '\v' {
			return false
		}
	}
	return true
}

func trimBlanks(b []byte) []byte {
	i := 0
	for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
		i++
	}
	return trimRight(b[i:])
}

func trimRight(b []byte) []byte {
	j := len(b)
	for j > 0 && (b[j-1] == ' ' || b[j-1] == '\t' || b[j-1] == '\f' || b[j-1] == '\v') {
		j--
	}
	return b[:j]
}

// indentOf is the column of a line's first non-blank character, tabs
// expanded to 8.
func indentOf(b []byte) int {
	i := 0
	for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
		i++
	}
	return column(b, i)
}

// column is the column of b[i], tabs expanded to 8.
func column(b []byte, i int) int {
	c := 0
	for _, ch := range b[:i] {
		if ch == '\t' {
			c = c/8*8 + 8
		} else {
			c++
		}
	}
	return c
}

func allByte(b []byte, c byte) bool {
	for _, x := range b {
		if x != c {
			return false
		}
	}
	return true
}

// parseDecimal reads an integer: an optional '-', then digits only.
func parseDecimal(b []byte) (int64, bool) {
	neg := false
	if len(b) > 0 && b[0] == '-' {
		neg, b = true, b[1:]
	}
	if len(b) == 0 || len(b) > 19 {
		return 0, false
	}
	var u uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		u = u*10 + uint64(c-'0')
	}
	switch {
	case neg && u <= 1<<63:
		return int64(-u), true
	case !neg && u <= math.MaxInt64:
		return int64(u), true
	}
	return 0, false
}

func absU(v int64) uint64 {
	if v < 0 {
		return uint64(-v) // MinInt64 gives 1<<63, as wanted
	}
	return uint64(v)
}

func addInt(a, b int64) (int64, bool) {
	s := a + b
	if (b > 0 && s < a) || (b < 0 && s > a) {
		return 0, false
	}
	return s, true
}
