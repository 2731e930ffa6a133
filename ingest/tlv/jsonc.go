package tlv

// jsonc.go reads the JSON TLV wrote by hand, which is not strict JSON: a
// UTF-8 byte order mark, /* */ and // comments, trailing commas, empty
// entries (",," or a "," right after "[" or "{"), Windows line ends, tabs
// inside strings, and backslashes that JSON does not know (the rule
// patterns are .NET regular expressions written with single backslashes:
// "\[(?<time>\d+)\]"). hujson parses the structure; first, a clean-up pass
// replaces what hujson does not accept by bytes of the same length, so
// that every offset in the cleaned text is the offset in the file, and
// strings are decoded from the file's own bytes afterwards. Objects are
// kept as ordered member lists: TLV applies rules, conditions and
// resources in the order the file gives them.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/tailscale/hujson"
)

// jcKind is the JSON type of a jcValue.
type jcKind uint8

const (
	jcObject jcKind = iota + 1
	jcArray
	jcString
	jcNumber
	jcBool
	jcNull
)

// jcValue is a JSON value of a TLV file.
type jcValue struct {
	Kind    jcKind
	Text    string     // string: decoded; number, true/false, null: as written
	Members []jcMember // object members, in file order
	Elems   []*jcValue // array elements, in file order (empty entries dropped)
	Off     int        // offset of the value's first byte in the file
}

// jcMember is one member of an object.
type jcMember struct {
	Key    string
	KeyOff int
	Value  *jcValue
}

// jcDoc is a parsed TLV JSON file.
type jcDoc struct {
	Name  string // the file name messages use
	Data  []byte // the file as read
	Root  *jcValue
	lines []int // offset of the start of every line
}

// jcMaxDepth bounds the nesting of arrays and objects.
const jcMaxDepth = 200

// jcParse parses a TLV JSON file. name is used in messages.
func jcParse(name string, data []byte) (*jcDoc, error) {
	d := &jcDoc{Name: name, Data: data}
	d.lines = append(d.lines, 0)
	for i, c := range data {
		if c == '\n' {
			d.lines = append(d.lines, i+1)
		}
	}
	clean, err := jcClean(d)
	if err != nil {
		return nil, err
	}
	v, err := hujson.Parse(clean)
	if err != nil {
		return nil, d.hujsonError(err)
	}
	d.Root = d.convert(&v)
	return d, nil
}

// pos returns the position of an offset of the file.
func (d *jcDoc) pos(off int, key string) Pos {
	line := 0
	lo, hi := 0, len(d.lines)-1
	for lo <= hi {
		m := (lo + hi) / 2
		if d.lines[m] <= off {
			line = m
			lo = m + 1
		} else {
			hi = m - 1
		}
	}
	start := d.lines[line]
	if line == 0 && bytes.HasPrefix(d.Data, jcBOM) {
		start = len(jcBOM)
	}
	if off > len(d.Data) {
		off = len(d.Data)
	}
	col := 1
	if off > start {
		col += utf8.RuneCount(d.Data[start:off])
	}
	return Pos{File: d.Name, Line: line + 1, Col: col, Key: key}
}

// errorf returns a ConfigError at an offset.
func (d *jcDoc) errorf(off int, in, key, format string, args ...any) error {
	return &ConfigError{Pos: d.pos(off, key), In: in, Msg: fmt.Sprintf(format, args...)}
}

var jcBOM = []byte{0xEF, 0xBB, 0xBF}

// jcClean returns a copy of the file that hujson accepts, with every byte
// at the offset it has in the file (a line comment left open at the end
// gets a newline after the last byte).
func jcClean(d *jcDoc) ([]byte, error) {
	data := d.Data
	b := make([]byte, len(data), len(data)+1)
	copy(b, data)
	blank := func(i, n int) {
		for j := i; j < i+n && j < len(b); j++ {
			b[j] = ' '
		}
	}
	i := 0
	if bytes.HasPrefix(data, jcBOM) {
		blank(0, 3)
		i = 3
	}
	depth := 0
	last := byte(0) // last significant byte outside strings and comments
	for i < len(data) {
		c := data[i]
		switch {
		case c == '"':
			end, err := jcCleanString(d, b, i)
			if err != nil {
				return nil, err
			}
			i = end
			last = '"'
			continue
		case c == '/' && i+1 < len(data) && data[i+1] == '/':
			j := bytes.IndexByte(data[i:], '\n')
			if j < 0 {
				b = append(b, '\n')
				return b, nil
			}
			i += j + 1
			continue
		case c == '/' && i+1 < len(data) && data[i+1] == '*':
			j := bytes.Index(data[i+2:], []byte("*/"))
			if j < 0 {
				return nil, d.errorf(i, "", "", "malformed JSON: comment not closed (/* without */)")
			}
			i += 2 + j + 2
			continue
		case c == '{' || c == '[':
			depth++
			if depth > jcMaxDepth {
				return nil, d.errorf(i, "", "", "malformed JSON: nested deeper than %d levels", jcMaxDepth)
			}
		case c == '}' || c == ']':
			depth--
		case c == ',':
			if last == ',' || last == '{' || last == '[' || last == 0 || depth <= 0 {
				b[i] = ' ' // an empty entry
				i++
				continue
			}
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			i++
			continue
		case c == '\f' || c == '\v':
			b[i] = ' '
			i++
			continue
		case c >= 0x80:
			// Unicode spaces editors leave between tokens (no-break space,
			// ideographic space, a byte order mark inside the file).
			r, n := utf8.DecodeRune(data[i:])
			if r == '\u00a0' || r == '\u3000' || r == '\ufeff' {
				blank(i, n)
				i += n
				continue
			}
		}
		last = c
		i++
	}
	return b, nil
}

// jcCleanString cleans the string that starts at data[i] (a quote) and
// returns the offset after its closing quote.
func jcCleanString(d *jcDoc, b []byte, i int) (int, error) {
	data := d.Data
	start := i
	i++
	for i < len(data) {
		c := data[i]
		switch {
		case c == '"':
			return i + 1, nil
		case c == '\\':
			if i+1 >= len(data) {
				i++
				continue
			}
			e := data[i+1]
			switch e {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
				continue
			case 'u':
				if jcHex4(data[i+2:]) {
					i += 6
					continue
				}
			case '\n', '\r':
				return 0, d.errorf(start, "", "", "malformed JSON: string not closed before the end of the line")
			}
			// A backslash JSON does not know: kept as written (decode
			// does the same); "\\" for hujson, same length. A multi-byte
			// character after it keeps its continuation bytes, which
			// hujson does not check.
			b[i+1] = '\\'
			i += 2
		case c == '\n' || c == '\r':
			return 0, d.errorf(start, "", "", "malformed JSON: string not closed before the end of the line")
		case c < 0x20:
			b[i] = ' ' // a tab or other control character inside a string
			i++
		default:
			i++
		}
	}
	return 0, d.errorf(start, "", "", "malformed JSON: string not closed before the end of the file")
}

func jcHex4(b []byte) bool {
	if len(b) < 4 {
		return false
	}
	for _, c := range b[:4] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

var jcLineCol = regexp.MustCompile(`^hujson: line (\d+), column (\d+): `)

// hujsonError turns a hujson error into a ConfigError at the place it
// names (hujson counts columns in bytes; messages count characters).
func (d *jcDoc) hujsonError(err error) error {
	msg := err.Error()
	off := len(d.Data)
	if m := jcLineCol.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		col, _ := strconv.Atoi(m[2])
		if line >= 1 && line <= len(d.lines) {
			off = d.lines[line-1] + col - 1
		}
		msg = msg[len(m[0]):]
	}
	msg = strings.TrimPrefix(msg, "hujson: ")
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		if len(bytes.TrimSpace(bytes.TrimPrefix(d.Data, jcBOM))) == 0 {
			msg = "the file is empty"
		} else {
			msg = "the file ends before the JSON does (a missing } or ]?)"
		}
	case strings.HasPrefix(msg, "invalid literal: "):
		msg = "not a JSON value: " + strings.TrimPrefix(msg, "invalid literal: ")
	}
	return &ConfigError{Pos: d.pos(off, ""), Msg: "malformed JSON: " + msg}
}

// convert turns hujson's syntax tree into jcValues.
func (d *jcDoc) convert(v *hujson.Value) *jcValue {
	out := &jcValue{Off: v.StartOffset}
	switch t := v.Value.(type) {
	case *hujson.Object:
		out.Kind = jcObject
		out.Members = make([]jcMember, 0, len(t.Members))
		for i := range t.Members {
			m := &t.Members[i]
			out.Members = append(out.Members, jcMember{
				Key:    jcDecodeString(d.Data[m.Name.StartOffset:m.Name.EndOffset]),
				KeyOff: m.Name.StartOffset,
				Value:  d.convert(&m.Value),
			})
		}
	case *hujson.Array:
		out.Kind = jcArray
		out.Elems = make([]*jcValue, 0, len(t.Elements))
		for i := range t.Elements {
			out.Elems = append(out.Elems, d.convert(&t.Elements[i]))
		}
	case hujson.Literal:
		raw := d.Data[v.StartOffset:v.EndOffset]
		switch t.Kind() {
		case '"':
			out.Kind = jcString
			out.Text = jcDecodeString(raw)
		case '0':
			out.Kind = jcNumber
			out.Text = string(raw)
		case 't', 'f':
			out.Kind = jcBool
			out.Text = string(raw)
		default:
			out.Kind = jcNull
			out.Text = "null"
		}
	}
	return out
}

// jcDecodeString decodes a quoted JSON string as TLV reads it: JSON's
// escapes are decoded, any other backslash is kept with the character
// after it, control characters are kept, bytes that are not UTF-8 become
// U+FFFD.
func jcDecodeString(raw []byte) string {
	if len(raw) >= 2 {
		raw = raw[1 : len(raw)-1]
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return jcValidUTF8(string(raw))
	}
	var sb strings.Builder
	sb.Grow(len(raw))
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c != '\\' || i+1 >= len(raw) {
			sb.WriteByte(c)
			continue
		}
		e := raw[i+1]
		i++
		switch e {
		case '"', '\\', '/':
			sb.WriteByte(e)
		case 'b':
			sb.WriteByte('\b')
		case 'f':
			sb.WriteByte('\f')
		case 'n':
			sb.WriteByte('\n')
		case 'r':
			sb.WriteByte('\r')
		case 't':
			sb.WriteByte('\t')
		case 'u':
			if !jcHex4(raw[i+1:]) {
				sb.WriteString(`\u`)
				continue
			}
			r1, _ := strconv.ParseUint(string(raw[i+1:i+5]), 16, 32)
			i += 4
			r := rune(r1)
			if utf16.IsSurrogate(r) && i+6 < len(raw) && raw[i+1] == '\\' && raw[i+2] == 'u' && jcHex4(raw[i+3:]) {
				r2, _ := strconv.ParseUint(string(raw[i+3:i+7]), 16, 32)
				if dec := utf16.DecodeRune(r, rune(r2)); dec != utf8.RuneError {
					sb.WriteRune(dec)
					i += 6
					continue
				}
			}
			sb.WriteRune(r) // a lone surrogate becomes U+FFFD
		default:
			sb.WriteByte('\\')
			sb.WriteByte(e)
		}
	}
	return jcValidUTF8(sb.String())
}

// jcValidUTF8 replaces every byte that is not UTF-8 by U+FFFD, as
// encoding/json does.
func jcValidUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var sb strings.Builder
	for _, r := range s {
		sb.WriteRune(r) // each invalid byte comes as utf8.RuneError
	}
	return sb.String()
}

// kindName names a JSON type in messages.
func (k jcKind) name() string {
	switch k {
	case jcObject:
		return "an object"
	case jcArray:
		return "a list"
	case jcString:
		return "a string"
	case jcNumber:
		return "a number"
	case jcBool:
		return "true/false"
	case jcNull:
		return "null"
	}
	return "nothing"
}
