// Package safetext makes text from traces, databases and command lines
// safe to show: on a terminal (where ESC, BEL, a carriage return or a
// bidi control act instead of showing), in one line of an error message
// (where a 2 MB input must not be echoed whole) and in Markdown (where a
// name must not become a heading, a link or an image).
//
// The escapes are for reading, not for reading back: a backslash in the
// text is shown as it is, so "\x1b" may be an ESC or those four
// characters. Data that must stay exact goes out as CSV or JSON.
package safetext

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxQuote is how many bytes of echoed input Quote shows.
const MaxQuote = 100

// acts reports whether a terminal (or a text viewer) acts on r instead of
// showing it: the C0 controls, DEL, the C1 controls, the bidirectional
// controls (which reorder what follows: "Trojan Source") and the line
// and paragraph separators.
func acts(r rune) bool {
	switch {
	case r < 0x20, r >= 0x7f && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true // ALM, LRM, RLM, LRE..RLO, LRI..PDI
	case r == 0x2028, r == 0x2029:
		return true
	}
	return false
}

// appendEscaped appends the escape of one rune acts reports (or of one
// byte that is not UTF-8, given as r = utf8.RuneError with bad set).
func appendEscaped(b []byte, r rune, bad byte, isBad bool) []byte {
	const hex = "0123456789abcdef"
	switch {
	case isBad:
		return append(b, '\\', 'x', hex[bad>>4], hex[bad&15])
	case r == '\n':
		return append(b, `\n`...)
	case r == '\r':
		return append(b, `\r`...)
	case r == '\t':
		return append(b, `\t`...)
	case r < 0x80:
		return append(b, '\\', 'x', hex[r>>4], hex[r&15])
	}
	return append(b, '\\', 'u', hex[r>>12&15], hex[r>>8&15], hex[r>>4&15], hex[r&15])
}

// clean reports whether s needs no escape at all: printable ASCII, or
// valid UTF-8 without a rune acts reports.
func clean(s string, keepLayout bool) bool {
	ascii := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 {
			ascii = false
			continue
		}
		if c < 0x20 || c == 0x7f {
			if keepLayout && (c == '\n' || c == '\t') {
				continue
			}
			return false
		}
	}
	if ascii {
		return true
	}
	for _, r := range s {
		if r == utf8.RuneError || r >= 0x80 && acts(r) {
			return false
		}
	}
	return true
}

// Escape shows s on one line with nothing a terminal acts on: a control
// character as \n, \r, \t or \xNN, a C1, bidi or separator control as
// \uNNNN, a byte that is not UTF-8 as \xNN. Everything else, non-ASCII
// letters included, is kept.
func Escape(s string) string {
	if clean(s, false) {
		return s
	}
	return string(escape(nil, s, false))
}

// EscapeText is Escape for text with a layout: line breaks (a newline, or
// a carriage return followed by one) and tabs are kept. A carriage return
// alone, which would let the rest of a line overwrite its start, is not.
func EscapeText(s string) string {
	if clean(s, true) {
		return s
	}
	return string(escape(nil, s, true))
}

func escape(b []byte, s string, keepLayout bool) []byte {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = appendEscaped(b, r, s[i], true)
		case keepLayout && (r == '\n' || r == '\t' || r == '\r' && i+1 < len(s) && s[i+1] == '\n'):
			b = append(b, s[i])
		case acts(r):
			b = appendEscaped(b, r, 0, false)
		default:
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return b
}

// Quote is input echoed in a message: in double quotes, escaped, and cut
// after MaxQuote bytes, the cut said with "..." and the input's length:
// "abc..." (2000000 bytes).
func Quote(s string) string {
	if len(s) <= MaxQuote {
		return `"` + Escape(s) + `"`
	}
	n := MaxQuote
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return `"` + Escape(s[:n]) + `..." (` + strconv.Itoa(len(s)) + " bytes)"
}

// Cut shortens a message to at most max bytes of its own (its escapes
// come on top), keeping its start and its end (where "found ..." often
// is) and saying how much was left out.
func Cut(s string, max int) string {
	if len(s) <= max {
		return s
	}
	head, tail := max*3/4, max/4
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	t := len(s) - tail
	for t < len(s) && !utf8.RuneStart(s[t]) {
		t++
	}
	return s[:head] + " [... " + strconv.Itoa(t-head) + " bytes left out ...] " + s[t:]
}

// mdSpecial are the ASCII characters with which Markdown (CommonMark,
// and GitHub's tables, strikethrough and math) makes markup inside a line:
// a backslash before each keeps it a character. '[' opens every link,
// image and footnote, '<' every HTML tag and autolink, so their closing
// ']' and '>' need none; '#' makes a heading only at the start of a
// line, but costs little. '_' is handled apart.
const mdSpecial = "\\`*[<|#~$"

// Markdown is s as inline Markdown text that shows s and nothing else:
// no emphasis, code, link, image, HTML tag, heading or table cell break
// can come of it. Line breaks become br (" " keeps a paragraph or a table
// cell on its line; "<br>" shows the break in a table cell); control
// characters are escaped as Escape does. '_' is escaped where it could
// open or close emphasis (not inside a word: Task_10ms_3 stays).
func Markdown(s, br string) string {
	var b strings.Builder
	prev := ' '
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		next := ' '
		if i+size < len(s) {
			next, _ = utf8.DecodeRuneInString(s[i+size:])
		}
		switch {
		case r == utf8.RuneError && size == 1:
			b.Write(appendEscaped(nil, r, s[i], true))
		case r == '\r' && next == '\n':
			// the break is the '\n'
		case r == '\n' || r == '\r' || r == 0x2028 || r == 0x2029:
			b.WriteString(br)
		case acts(r):
			b.Write(appendEscaped(nil, r, 0, false))
		case r < 0x80 && strings.ContainsRune(mdSpecial, r):
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '_' && !(wordRune(prev) && wordRune(next)):
			b.WriteString(`\_`)
		default:
			b.WriteString(s[i : i+size])
		}
		prev = r
		i += size
	}
	return b.String()
}

func wordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// MarkdownCode is s as an inline code span: shown exactly (but for line
// breaks, as spaces, and control characters, escaped), whatever
// backticks s holds. In a table, '|' still ends the cell: pass cell to
// escape it (GitHub's tables take \| inside code).
func MarkdownCode(s string, cell bool) string {
	s = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s)
	s = Escape(s)
	if cell {
		s = strings.ReplaceAll(s, "|", `\|`)
	}
	// A fence longer than the longest run of backticks in s; a space
	// apart from a backtick at either end.
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + s + fence
}
