package chrome

import (
	"fmt"
	"math"
	"unicode/utf16"
	"unicode/utf8"
)

// This file reads one JSON value held whole in memory (an event, or a
// member of the top-level object): it validates it strictly (RFC 8259, as
// Chrome's JSON.parse does) and records where the members of the
// outermost object are, without building a tree. The streaming reader
// (stream.go) finds where each value ends and hands it over complete.

// Value kinds.
const (
	kNone = iota
	kString
	kNumber
	kObject
	kArray
	kTrue
	kFalse
	kNull
)

var kindNames = [...]string{kNone: "nothing", kString: "a string", kNumber: "a number", kObject: "an object", kArray: "an array", kTrue: "true", kFalse: "false", kNull: "null"}

// maxNesting bounds how deep arrays and objects nest inside one value:
// the validator recurses, and a file of "[[[[..." must not exhaust the
// stack.
const maxNesting = 512

// member is one member of an object: key and value as byte ranges of the
// value being read (the key without its quotes, escapes not decoded).
type member struct {
	keyLo, keyHi int
	keyEsc       bool // the key has escapes: decode before comparing
	valLo, valHi int
	kind         int
}

// syntaxError is a JSON syntax error at a byte of the value.
type syntaxError struct {
	at  int // index in the value
	msg string
}

func (e *syntaxError) Error() string { return e.msg }

// jsonReader validates one JSON value.
type jsonReader struct {
	b []byte
	i int
	// surrogate is set when a string holds a \u escape of a UTF-16
	// surrogate that is not part of a pair; fixSurrogates rewrites those
	// before the text goes into a JSON column.
	surrogate bool
}

// found describes the input at i for a message: a quoted excerpt, or the
// end of the value.
func found(b []byte, i int) string {
	if i >= len(b) {
		return "the end of the event"
	}
	end := min(len(b), i+24)
	for j := i + 1; j < end; j++ {
		if b[j] == '\n' || b[j] == '\r' {
			end = j
			break
		}
	}
	return fmt.Sprintf("%q", b[i:end])
}

func (r *jsonReader) fail(i int, expected string) error {
	return &syntaxError{at: i, msg: "invalid JSON: expected " + expected + ", found " + found(r.b, i)}
}

func (r *jsonReader) ws() {
	for r.i < len(r.b) {
		switch r.b[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

// object reads an object whose '{' is at r.i and appends its members to
// ms (when ms is not nil; nested objects are read with nil).
func (r *jsonReader) object(ms *[]member, depth int) error {
	if depth > maxNesting {
		return &syntaxError{at: r.i, msg: fmt.Sprintf("invalid JSON: arrays and objects nested deeper than %d", maxNesting)}
	}
	r.i++ // '{'
	r.ws()
	if r.i < len(r.b) && r.b[r.i] == '}' {
		r.i++
		return nil
	}
	for {
		r.ws()
		if r.i >= len(r.b) || r.b[r.i] != '"' {
			return r.fail(r.i, "a member name in double quotes")
		}
		klo := r.i + 1
		esc, err := r.str()
		if err != nil {
			return err
		}
		khi := r.i - 1
		r.ws()
		if r.i >= len(r.b) || r.b[r.i] != ':' {
			return r.fail(r.i, "':' after a member name")
		}
		r.i++
		r.ws()
		vlo := r.i
		kind, err := r.value(depth + 1)
		if err != nil {
			return err
		}
		if ms != nil {
			*ms = append(*ms, member{keyLo: klo, keyHi: khi, keyEsc: esc, valLo: vlo, valHi: r.i, kind: kind})
		}
		r.ws()
		if r.i < len(r.b) && r.b[r.i] == ',' {
			r.i++
			continue
		}
		if r.i < len(r.b) && r.b[r.i] == '}' {
			r.i++
			return nil
		}
		return r.fail(r.i, "',' or '}' after a member")
	}
}

func (r *jsonReader) array(depth int) error {
	if depth > maxNesting {
		return &syntaxError{at: r.i, msg: fmt.Sprintf("invalid JSON: arrays and objects nested deeper than %d", maxNesting)}
	}
	r.i++ // '['
	r.ws()
	if r.i < len(r.b) && r.b[r.i] == ']' {
		r.i++
		return nil
	}
	for {
		r.ws()
		if _, err := r.value(depth + 1); err != nil {
			return err
		}
		r.ws()
		if r.i < len(r.b) && r.b[r.i] == ',' {
			r.i++
			continue
		}
		if r.i < len(r.b) && r.b[r.i] == ']' {
			r.i++
			return nil
		}
		return r.fail(r.i, "',' or ']' after an array element")
	}
}

// value reads any value at r.i (blanks before it skipped by the caller).
func (r *jsonReader) value(depth int) (int, error) {
	if r.i >= len(r.b) {
		return kNone, r.fail(r.i, "a value")
	}
	switch c := r.b[r.i]; {
	case c == '{':
		return kObject, r.object(nil, depth)
	case c == '[':
		return kArray, r.array(depth)
	case c == '"':
		_, err := r.str()
		return kString, err
	case c == '-' || c >= '0' && c <= '9':
		return kNumber, r.number()
	case c == 't':
		return kTrue, r.literal("true")
	case c == 'f':
		return kFalse, r.literal("false")
	case c == 'n':
		return kNull, r.literal("null")
	}
	return kNone, r.fail(r.i, "a value")
}

func (r *jsonReader) literal(word string) error {
	if len(r.b)-r.i < len(word) || string(r.b[r.i:r.i+len(word)]) != word {
		return r.fail(r.i, "a value")
	}
	r.i += len(word)
	return nil
}

func (r *jsonReader) number() error {
	start := r.i
	if r.b[r.i] == '-' {
		r.i++
	}
	if r.i >= len(r.b) || r.b[r.i] < '0' || r.b[r.i] > '9' {
		return r.fail(start, "a number")
	}
	if r.b[r.i] == '0' {
		r.i++
	} else {
		r.digits()
	}
	if r.i < len(r.b) && r.b[r.i] == '.' {
		r.i++
		if r.digits() == 0 {
			return r.fail(start, "a number (digits after the decimal point)")
		}
	}
	if r.i < len(r.b) && (r.b[r.i] == 'e' || r.b[r.i] == 'E') {
		r.i++
		if r.i < len(r.b) && (r.b[r.i] == '+' || r.b[r.i] == '-') {
			r.i++
		}
		if r.digits() == 0 {
			return r.fail(start, "a number (digits in the exponent)")
		}
	}
	return nil
}

func (r *jsonReader) digits() int {
	n := 0
	for r.i < len(r.b) && r.b[r.i] >= '0' && r.b[r.i] <= '9' {
		r.i++
		n++
	}
	return n
}

// str reads a string whose '"' is at r.i and reports whether it has
// escapes.
func (r *jsonReader) str() (bool, error) {
	start := r.i
	r.i++
	esc := false
	for r.i < len(r.b) {
		c := r.b[r.i]
		switch {
		case c == '"':
			r.i++
			return esc, nil
		case c == '\\':
			esc = true
			if r.i+1 >= len(r.b) {
				return esc, r.fail(r.i, "an escape after '\\'")
			}
			switch r.b[r.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				r.i += 2
			case 'u':
				if r.i+6 > len(r.b) || !isHex4(r.b[r.i+2:r.i+6]) {
					return esc, r.fail(r.i, "four hex digits after \\u")
				}
				if v := hex4(r.b[r.i+2 : r.i+6]); v >= 0xd800 && v < 0xe000 {
					r.surrogate = true
				}
				r.i += 6
			default:
				return esc, r.fail(r.i, "an escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)")
			}
		case c < 0x20:
			return esc, r.fail(r.i, "a character of a string (control characters must be escaped)")
		default:
			r.i++
		}
	}
	return esc, r.fail(start, "the closing '\"' of a string")
}

func isHex4(b []byte) bool {
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

func hex4(b []byte) rune {
	var v rune
	for _, c := range b {
		v <<= 4
		switch {
		case c >= '0' && c <= '9':
			v |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			v |= rune(c - 'a' + 10)
		default:
			v |= rune(c - 'A' + 10)
		}
	}
	return v
}

// unquote appends the decoded contents of a JSON string (raw: without
// its quotes, already validated). A \u escape of an unpaired surrogate
// becomes U+FFFD.
func unquote(dst, raw []byte) []byte {
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' {
			j := i + 1
			for j < len(raw) && raw[j] != '\\' {
				j++
			}
			dst = append(dst, raw[i:j]...)
			i = j
			continue
		}
		switch raw[i+1] {
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			v := hex4(raw[i+2 : i+6])
			i += 6
			if utf16.IsSurrogate(v) {
				if v < 0xdc00 && i+6 <= len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
					if lo := hex4(raw[i+2 : i+6]); lo >= 0xdc00 && lo < 0xe000 {
						dst = utf8.AppendRune(dst, utf16.DecodeRune(v, lo))
						i += 6
						continue
					}
				}
				v = utf8.RuneError
			}
			dst = utf8.AppendRune(dst, v)
			continue
		default: // " \ /
			dst = append(dst, raw[i+1])
		}
		i += 2
	}
	return dst
}

// appendCompact appends a valid JSON value without the blanks between its
// tokens.
func appendCompact(dst, v []byte) []byte {
	inStr, esc := false, false
	lo := 0
	for i, c := range v {
		switch {
		case inStr:
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			dst = append(dst, v[lo:i]...)
			lo = i + 1
		}
	}
	return append(dst, v[lo:]...)
}

// fixSurrogates rewrites, in place, every \u escape of a UTF-16 surrogate
// that is not part of a high-low pair as \ufffd (same length), so that
// the text is JSON DuckDB accepts. b is valid JSON.
func fixSurrogates(b []byte) {
	inStr := false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			inStr = !inStr
		case c == '\\' && inStr:
			if b[i+1] != 'u' {
				i++
				continue
			}
			v := hex4(b[i+2 : i+6])
			if v >= 0xd800 && v < 0xdc00 && i+12 <= len(b) && b[i+6] == '\\' && b[i+7] == 'u' && isHex4(b[i+8:i+12]) {
				if lo := hex4(b[i+8 : i+12]); lo >= 0xdc00 && lo < 0xe000 {
					i += 11
					continue
				}
			}
			if utf16.IsSurrogate(v) {
				copy(b[i+2:i+6], "fffd")
			}
			i += 5
		}
	}
}

// isDecimal reports whether b is a number as microsToNS reads them
// ([-]digits[.digits][(e|E)[+|-]digits]), whatever its size: a number
// microsToNS refuses is then one out of range.
func isDecimal(b []byte) bool {
	i := 0
	digits := func() bool {
		j := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i > j
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	if !digits() {
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if !digits() {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if !digits() {
			return false
		}
	}
	return i == len(b)
}

// microsToNS converts a decimal number of microseconds, written as a JSON
// number ([-]digits[.digits][(e|E)[+|-]digits]), to nanoseconds exactly:
// 3.011 is 3011 ns, where a conversion through float64 would give 3010.99...
// Digits below 1 ns are dropped (toward zero) and reported by subNS. ok
// is false when b is not such a number or the value does not fit int64.
func microsToNS(b []byte) (ns int64, subNS bool, ok bool) {
	i := 0
	neg := false
	if i < len(b) && b[i] == '-' {
		neg = true
		i++
	}
	var mant uint64
	scale := 0    // decimal exponent of mant's last digit, before the exponent part
	lost := false // nonzero digits that did not fit in mant
	nDigits := 0
	const cut = (math.MaxUint64 - 9) / 10
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		nDigits++
		if mant <= cut {
			mant = mant*10 + uint64(b[i]-'0')
		} else {
			scale++
			lost = lost || b[i] != '0'
		}
	}
	if nDigits == 0 {
		return 0, false, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		nFrac := 0
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
			nFrac++
			if mant <= cut {
				mant = mant*10 + uint64(b[i]-'0')
				scale--
			} else {
				lost = lost || b[i] != '0'
			}
		}
		if nFrac == 0 {
			return 0, false, false
		}
	}
	exp := 0
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		eneg := false
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			eneg = b[i] == '-'
			i++
		}
		n := 0
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
			n++
			if exp < 1_000_000 {
				exp = exp*10 + int(b[i]-'0')
			}
		}
		if n == 0 {
			return 0, false, false
		}
		if eneg {
			exp = -exp
		}
	}
	if i != len(b) {
		return 0, false, false
	}
	p := scale + exp + 3 // µs -> ns
	switch {
	case mant == 0:
	case p >= 0:
		for ; p > 0; p-- {
			if mant > math.MaxUint64/10 {
				return 0, false, false
			}
			mant *= 10
		}
	case p < -19:
		mant, lost = 0, true
	default:
		d := uint64(1)
		for ; p < 0; p++ {
			d *= 10
		}
		lost = lost || mant%d != 0
		mant /= d
	}
	if mant > math.MaxInt64 {
		return 0, false, false
	}
	if neg {
		return -int64(mant), lost, true
	}
	return int64(mant), lost, true
}
