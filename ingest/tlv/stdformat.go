package tlv

import (
	"fmt"
	"github.com/traceduck/traceduck/ingest"
	"math/big"
	"math/bits"
	"strconv"
	"strings"
	"unicode/utf8"
)

// StdLine is one line of the TLV standard format (fig. 2 of the paper):
//
//	[TIME]Resource.attr=value
//	[TIME]Resource.behavior(arg, arg, ...)
//	[TIME]Type(condition).attr=value      every resource of Type whose attributes satisfy condition
//	[TIME]Type(condition).behavior(...)
//
// A name without a condition is a resource, or, when no resource has that
// name, a resource type: every resource of the type (as TLV resolves it).
type StdLine struct {
	Time     string // as written, in the resource file's radix and unit
	Res      string // resource or type name
	Cond     *Expr  // the condition of Type(condition); nil without one
	CondText string // its text
	Member   string // attribute or behavior name
	Behavior bool   // Member is a behavior: Args holds its arguments
	Value    string // the new value of an attribute change
	Args     []string
	ArgsText string // the text between the parentheses of a behavior, trimmed
}

// SyntaxError is a line that is not in the standard format: Col is the
// 1-based column (in characters) where what was expected is missing, Off
// the same place as a byte offset in the text parsed.
type SyntaxError struct {
	Col      int
	Off      int
	Expected string
	Found    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%d: expected %s, found %s", e.Col, e.Expected, e.Found)
}

// reserved are the characters that end a name: the punctuation of the
// standard format and of conditions.
const reserved = "[](),.=!<>&|{}$"

func isNameChar(r rune) bool {
	return r > ' ' && r != 0x7f && !strings.ContainsRune(reserved, r)
}

// nameByte is isNameChar of the ASCII characters.
var nameByte = func() (t [0x80]bool) {
	for c := range t {
		t[c] = isNameChar(rune(c))
	}
	return t
}()

// found describes the text at s[i:] for an error message.
func found(s string, i int) string {
	if i >= len(s) {
		return "end of line"
	}
	rest := s[i:]
	if n := 20; len(rest) > n {
		cut := n
		for cut > 0 && !utf8.RuneStart(rest[cut]) {
			cut--
		}
		return strconv.Quote(rest[:cut] + "...")
	}
	return strconv.Quote(rest)
}

// col is the 1-based character column of byte offset i.
func col(s string, i int) int { return utf8.RuneCountInString(s[:min(i, len(s))]) + 1 }

func synErr(s string, i int, expected string) *SyntaxError {
	return &SyntaxError{Col: col(s, i), Off: min(i, len(s)), Expected: expected, Found: found(s, i)}
}

// skipSpace returns the index of the first character at or after i that
// is not a space or a tab.
func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

// scanName returns the end of the name starting at i.
func scanName(s string, i int) int {
	for i < len(s) {
		if c := s[i]; c < utf8.RuneSelf {
			if !nameByte[c] {
				break
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if !isNameChar(r) {
			break
		}
		i += n
	}
	return i
}

// closing returns the index of the parenthesis that closes the one at
// s[open], counting nested pairs; -1 when it is not closed.
func closing(s string, open int) int {
	depth := 0
	for i := open; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// ParseStdLine parses one standard-format line. Leading and trailing
// white space is ignored; the value of an attribute change is the rest of
// the line (TLV took everything up to a space; values with spaces are
// kept whole here). As TLV, it takes white space between the parts of
// the line: after "]", after the resource name or its condition, around
// "." and "=", and before the "(" of a behavior
// ("[1]Task(id==2) . prcId = 2" is "[1]Task(id==2).prcId=2"; String
// writes it so).
func ParseStdLine(s string) (StdLine, error) {
	var l StdLine
	i := skipSpace(s, 0)
	if i >= len(s) || s[i] != '[' {
		return l, synErr(s, i, `"[" and a time`)
	}
	i++
	j := i
	for j < len(s) && isAlnum(s[j]) {
		j++
	}
	if j == i {
		return l, synErr(s, j, "a time (letters and digits)")
	}
	if j < len(s) && s[j] == '.' {
		j++
		for j < len(s) && isAlnum(s[j]) {
			j++
		}
	}
	l.Time = s[i:j]
	if j >= len(s) || s[j] != ']' {
		return l, synErr(s, j, `"]" after the time`)
	}
	i = skipSpace(s, j+1)
	j = scanName(s, i)
	if j == i {
		return l, synErr(s, i, "a resource or resource type name")
	}
	l.Res = s[i:j]
	i = skipSpace(s, j)
	if i < len(s) && s[i] == '(' {
		end := closing(s, i)
		if end < 0 {
			return l, synErr(s, len(s), `")" closing the condition`)
		}
		l.CondText = s[i+1 : end]
		e, err := ParseExpr(l.CondText, true)
		if err != nil {
			if se, ok := err.(*SyntaxError); ok {
				se.Col += col(s, i+1) - 1
				se.Off += i + 1
				return l, se
			}
			return l, err
		}
		l.Cond = e
		i = skipSpace(s, end+1)
	}
	if i >= len(s) || s[i] != '.' {
		return l, synErr(s, i, `"." after the resource`)
	}
	i = skipSpace(s, i+1)
	j = scanName(s, i)
	if j == i {
		return l, synErr(s, i, "an attribute or behavior name")
	}
	l.Member = s[i:j]
	i = skipSpace(s, j)
	switch {
	case i < len(s) && s[i] == '=':
		l.Value = strings.TrimSpace(s[i+1:])
		return l, nil
	case i < len(s) && s[i] == '(':
		end := closing(s, i)
		if end < 0 {
			return l, synErr(s, len(s), `")" closing the arguments`)
		}
		if rest := strings.TrimSpace(s[end+1:]); rest != "" {
			return l, synErr(s, skipSpace(s, end+1), "end of line after the arguments")
		}
		l.Behavior = true
		l.ArgsText = strings.TrimSpace(s[i+1 : end])
		l.Args = splitArgs(l.ArgsText)
		return l, nil
	}
	return l, synErr(s, i, `"=" and a value, or "(" and arguments`)
}

// splitArgs splits behavior arguments at the commas outside parentheses
// and trims them; "()" has no arguments.
func splitArgs(s string) []string {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	var args []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				args = append(args, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	return append(args, strings.TrimSpace(s[start:]))
}

func isAlnum(c byte) bool { return alnum[c] }

// alnum is isAlnum by byte.
var alnum = func() (t [256]bool) {
	for c := range t {
		t[c] = c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
	}
	return t
}()

// Canonical returns the line as TLV writes it: text, the line l was parsed
// from, without the white space around and between its parts (the
// arguments of a behavior are kept as written, trimmed). It is text itself when
// text has none. ("[1] T . f( a, b )" is "[1]T.f(a, b)".)
func (l *StdLine) Canonical(text string) string {
	if l.canonicalLen() == len(text) {
		return text
	}
	return string(l.appendCanonical(nil, l.Time))
}

// canonicalLen is the length of the canonical line.
func (l *StdLine) canonicalLen() int {
	n := len("[]") + len(l.Time) + len(l.Res) + len(".") + len(l.Member)
	if l.Cond != nil {
		n += len("()") + len(l.CondText)
	}
	if l.Behavior {
		n += len("()") + len(l.ArgsText)
	} else {
		n += len("=") + len(l.Value)
	}
	return n
}

// appendCanonical appends the canonical line to b, with the time tm.
func (l *StdLine) appendCanonical(b []byte, tm string) []byte {
	b = append(b, '[')
	b = append(b, tm...)
	b = append(b, ']')
	b = append(b, l.Res...)
	if l.Cond != nil {
		b = append(b, '(')
		b = append(b, l.CondText...)
		b = append(b, ')')
	}
	b = append(b, '.')
	b = append(b, l.Member...)
	if l.Behavior {
		b = append(b, '(')
		b = append(b, l.ArgsText...)
		return append(b, ')')
	}
	b = append(b, '=')
	return append(b, l.Value...)
}

// String writes the line back in the standard format (arguments separated
// by ", ").
func (l *StdLine) String() string {
	var b strings.Builder
	l.write(&b, strings.Join(l.Args, ", "))
	return b.String()
}

// write writes the line with args as the behavior's arguments.
func (l *StdLine) write(b *strings.Builder, args string) {
	b.WriteByte('[')
	b.WriteString(l.Time)
	b.WriteByte(']')
	b.WriteString(l.Res)
	if l.Cond != nil {
		b.WriteByte('(')
		b.WriteString(l.CondText)
		b.WriteByte(')')
	}
	b.WriteByte('.')
	b.WriteString(l.Member)
	if l.Behavior {
		b.WriteByte('(')
		b.WriteString(args)
		b.WriteByte(')')
	} else {
		b.WriteByte('=')
		b.WriteString(l.Value)
	}
}

// TimeUnit converts times of a resource file's TimeScale to ns.
type TimeUnit = ingest.TimeUnit

// LookupTimeUnit returns the unit of a TimeScale ("" is TLV's default, us).
func LookupTimeUnit(scale string) (TimeUnit, error) {
	if scale == "" {
		scale = "us"
	}
	u, ok := ingest.LookupTimeUnit(scale)
	if !ok {
		return TimeUnit{}, fmt.Errorf("TimeScale %q: expected s, ms, us, ns, ps or fs", scale)
	}
	return u, nil
}

// Time is a converted timestamp.
type Time struct {
	NS     int64 // nanoseconds, rounded down
	Raw    int64 // the value in the source unit, when HasRaw
	HasRaw bool  // the unit is finer than ns (ps, fs): Raw keeps what NS loses
	Exact  bool  // NS is exactly the time written
}

// ParseTime converts a time string of the standard format (digits of
// radix, optionally a fraction after '.') to ns.
func ParseTime(s string, radix int, u TimeUnit) (Time, error) {
	if radix < 2 || radix > 36 {
		return Time{}, fmt.Errorf("TimeRadix %d: expected 2 to 36", radix)
	}
	if v, ok := parseDigits(s, radix); ok { // the common case: digits only
		return wholeTime(s, v, u)
	}
	intPart, frac, hasFrac := strings.Cut(s, ".")
	if intPart == "" {
		return Time{}, fmt.Errorf("time %q: no digits", s)
	}
	v, err := strconv.ParseUint(intPart, radix, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return Time{}, fmt.Errorf("time %q: too large", s)
		}
		return Time{}, fmt.Errorf("time %q: not a number in radix %d", s, radix)
	}
	if hasFrac && strings.Trim(frac, "0") != "" {
		return fracTime(s, intPart, frac, radix, u)
	}
	if hasFrac && frac != "" {
		if _, err := strconv.ParseUint(frac, radix, 64); err != nil {
			return Time{}, fmt.Errorf("time %q: not a number in radix %d", s, radix)
		}
	}
	return wholeTime(s, v, u)
}

// wholeTime is the time of v units (s, as written, for messages).
func wholeTime(s string, v uint64, u TimeUnit) (Time, error) {
	hi, lo := bits.Mul64(v, u.Mul)
	if hi != 0 {
		return Time{}, fmt.Errorf("time %q: too large for int64 nanoseconds", s)
	}
	ns := lo / u.Div
	if ns > 1<<63-1 {
		return Time{}, fmt.Errorf("time %q: too large for int64 nanoseconds", s)
	}
	t := Time{NS: int64(ns), Exact: lo%u.Div == 0}
	if u.Div > 1 {
		if v > 1<<63-1 {
			return Time{}, fmt.Errorf("time %q: too large", s)
		}
		t.Raw, t.HasRaw = int64(v), true
	}
	return t, nil
}

// parseDigits is strconv.ParseUint(s, radix, 64) of a text of digits of
// radix only (ok false otherwise, and when the value overflows: the
// caller's strconv call then says why).
func parseDigits(s string, radix int) (uint64, bool) {
	if s == "" {
		return 0, false
	}
	var v uint64
	for i := 0; i < len(s); i++ {
		d := uint64(digitVal[s[i]])
		if d >= uint64(radix) {
			return 0, false
		}
		hi, lo := bits.Mul64(v, uint64(radix))
		if hi != 0 {
			return 0, false
		}
		if v = lo + d; v < lo {
			return 0, false
		}
	}
	return v, true
}

// digitVal is the value of a digit of radix up to 36 (either case), 36
// for other bytes.
var digitVal = func() (t [256]uint8) {
	for i := range t {
		t[i] = 36
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = uint8(c - '0')
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = uint8(c-'a') + 10
		t[c-'a'+'A'] = uint8(c-'a') + 10
	}
	return t
}()

// parseSmall is strconv.ParseInt(s, 10, 32) of a text of decimal digits
// only, without sign (ok false otherwise: the caller's strconv call says
// why, or takes what this does not).
func parseSmall(s string) (int64, bool) {
	if len(s) == 0 || len(s) > 9 {
		return 0, false
	}
	var v int64
	for i := 0; i < len(s); i++ {
		d := s[i] - '0'
		if d > 9 {
			return 0, false
		}
		v = v*10 + int64(d)
	}
	return v, true
}

// fracTime converts a time with a fraction exactly (rare: big numbers).
func fracTime(s, intPart, frac string, radix int, u TimeUnit) (Time, error) {
	num, ok := new(big.Int).SetString(intPart+frac, radix)
	if !ok {
		return Time{}, fmt.Errorf("time %q: not a number in radix %d", s, radix)
	}
	den := new(big.Int).Exp(big.NewInt(int64(radix)), big.NewInt(int64(len(frac))), nil)
	num.Mul(num, new(big.Int).SetUint64(u.Mul))
	den.Mul(den, new(big.Int).SetUint64(u.Div))
	q, r := new(big.Int).QuoRem(num, den, new(big.Int))
	if !q.IsInt64() {
		return Time{}, fmt.Errorf("time %q: too large for int64 nanoseconds", s)
	}
	return Time{NS: q.Int64(), Exact: r.Sign() == 0}, nil
}
