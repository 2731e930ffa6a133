package tlv

// jsonlines.go decodes the log of a TLV project archive, a JSON list of
// standard-format lines (["[1]A.b=c", ...]), into text as it is read:
// nothing is held but a rune, so a line of any length costs no memory
// here (the line reader after it refuses one longer than 1 MiB).

import (
	"bufio"
	"fmt"
	"io"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/traceduck/traceduck/schema"
)

// The states of jsonLines: what comes next.
const (
	jlBegin  = iota // "["
	jlFirst         // a string or "]" (after "[")
	jlValue         // a string (after ",")
	jlString        // the rest of a string
	jlAfter         // "," or "]" (after a string)
	jlEnd           // nothing but blanks (after "]")
)

// jsonLines is an io.Reader of the text of a JSON list of strings: each
// string decoded, then a line end. Errors are at FILE:LINE of the list.
type jsonLines struct {
	in    *bufio.Reader
	name  string
	line  int64 // of the JSON text, from 1
	state int
	pend  []byte // decoded, not yet read
	buf   [utf8.UTFMax + 1]byte
	err   error
}

func newJSONLines(in *bufio.Reader, name string) *jsonLines {
	return &jsonLines{in: in, name: name, line: 1}
}

func (j *jsonLines) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(j.pend) > 0 {
			c := copy(p[n:], j.pend)
			j.pend = j.pend[c:]
			n += c
			continue
		}
		if j.err != nil {
			break
		}
		if j.state == jlString {
			if c := j.plain(p[n:]); c > 0 {
				n += c
				continue
			}
		}
		j.err = j.step()
	}
	if n > 0 {
		return n, nil
	}
	return 0, j.err
}

// plain copies the characters of a string that need no decoding (up to
// a quote, a backslash or a control character) from what is buffered.
func (j *jsonLines) plain(dst []byte) int {
	if j.in.Buffered() == 0 {
		if _, err := j.in.Peek(1); err != nil {
			return 0
		}
	}
	b, _ := j.in.Peek(min(j.in.Buffered(), len(dst)))
	i := 0
	for i < len(b) && b[i] != '"' && b[i] != '\\' && b[i] >= 0x20 {
		i++
	}
	copy(dst, b[:i])
	j.in.Discard(i)
	return i
}

// step reads what comes next: a blank, a character of the list's syntax,
// the end of a string, an escape.
func (j *jsonLines) step() error {
	c, err := j.in.ReadByte()
	if err != nil && err != io.EOF {
		return err
	}
	eof := err == io.EOF
	if !eof && j.state != jlString && (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
		if c == '\n' {
			j.line++
		}
		return nil
	}
	switch j.state {
	case jlBegin:
		if !eof && c == '[' {
			j.state = jlFirst
			return nil
		}
		return j.errorf(`expected "[" (the JSON list of the log's lines), found %s`, jlFound(c, eof))
	case jlFirst, jlValue:
		if !eof && c == '"' {
			j.state = jlString
			return nil
		}
		if !eof && c == ']' && j.state == jlFirst {
			j.state = jlEnd
			return nil
		}
		if j.state == jlFirst {
			return j.errorf(`expected a string (a line of the log) or "]", found %s`, jlFound(c, eof))
		}
		return j.errorf(`expected a string (a line of the log) after ",", found %s`, jlFound(c, eof))
	case jlString:
		switch {
		case eof:
			return j.errorf(`expected the '"' that ends a line of the log, found the end of the entry`)
		case c == '"':
			j.pend = append(j.buf[:0], '\n')
			j.state = jlAfter
			return nil
		case c == '\\':
			return j.escape()
		}
		return j.errorf("expected a character of a string, found %s (a control character, which JSON escapes)", jlFound(c, eof))
	case jlAfter:
		if !eof && c == ',' {
			j.state = jlValue
			return nil
		}
		if !eof && c == ']' {
			j.state = jlEnd
			return nil
		}
		return j.errorf(`expected "," or "]" after a line of the log, found %s`, jlFound(c, eof))
	}
	if eof {
		return io.EOF
	}
	return j.errorf(`expected the end of the log after its JSON list's "]", found %s`, jlFound(c, eof))
}

// escape decodes what follows a backslash, as encoding/json does: a
// surrogate that is not half of a pair becomes U+FFFD.
func (j *jsonLines) escape() error {
	c, err := j.in.ReadByte()
	if err != nil && err != io.EOF {
		return err
	}
	eof := err == io.EOF
	var r rune
	switch {
	case eof:
		return j.errorf(`expected an escape after "\", found the end of the entry`)
	case c == '"' || c == '\\' || c == '/':
		r = rune(c)
	case c == 'b':
		r = '\b'
	case c == 'f':
		r = '\f'
	case c == 'n':
		r = '\n'
	case c == 'r':
		r = '\r'
	case c == 't':
		r = '\t'
	case c == 'u':
		h, err := j.hex4()
		if err != nil {
			return err
		}
		r = h
		if utf16.IsSurrogate(r) {
			r = utf8.RuneError
			// A high surrogate, then \uDC00-\uDFFF: the pair's rune.
			if next, _ := j.in.Peek(6); h < 0xdc00 && len(next) == 6 && next[0] == '\\' && next[1] == 'u' {
				if lo, ok := parseHex4(next[2:]); ok && lo >= 0xdc00 && lo <= 0xdfff {
					r = utf16.DecodeRune(h, lo)
					j.in.Discard(6)
				}
			}
		}
	default:
		return j.errorf(`expected an escape (\", \\, \/, \b, \f, \n, \r, \t or \uXXXX), found %q`, []byte{'\\', c})
	}
	j.pend = utf8.AppendRune(j.buf[:0], r)
	return nil
}

// hex4 reads the 4 hex digits of \uXXXX.
func (j *jsonLines) hex4() (rune, error) {
	b, err := j.in.Peek(4)
	if err != nil && err != io.EOF {
		return 0, err
	}
	r, ok := parseHex4(b)
	if !ok {
		return 0, j.errorf(`expected 4 hex digits after "\u", found %q`, b)
	}
	j.in.Discard(4)
	return r, nil
}

func parseHex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

func (j *jsonLines) errorf(format string, args ...any) error {
	return &schema.InputError{File: j.name, Line: j.line, Offset: -1, Msg: fmt.Sprintf(format, args...)}
}

// jlFound describes a byte of the list for a message.
func jlFound(c byte, eof bool) string {
	if eof {
		return "the end of the entry"
	}
	return fmt.Sprintf("%q", []byte{c})
}
