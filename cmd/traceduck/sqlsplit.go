package main

import "strings"

// lastStatement returns the text of the last non-empty statement of a SQL
// script, without its terminating semicolon. It knows enough of DuckDB's
// lexical rules (quoted strings and identifiers, E'...' strings, dollar
// quoting, line and nested block comments) not to be fooled by a semicolon
// inside one of them. It is used only to ask DuckDB to DESCRIBE the result
// of the last statement; the script itself is always run by DuckDB as
// written.
func lastStatement(script string) string {
	stmts := splitStatements(script)
	for i := len(stmts) - 1; i >= 0; i-- {
		if s := strings.TrimSpace(stmts[i]); s != "" && !onlyComments(s) {
			return s
		}
	}
	return ""
}

// splitStatements cuts a script at the semicolons that end statements.
func splitStatements(s string) []string {
	var out []string
	start := 0
	i := 0
	n := len(s)
	for i < n {
		c := s[i]
		switch {
		case c == ';':
			out = append(out, s[start:i])
			i++
			start = i
		case c == '\'':
			escapes := i > 0 && (s[i-1] == 'e' || s[i-1] == 'E') && (i < 2 || !isIdentChar(s[i-2]))
			i = skipQuoted(s, i, '\'', escapes)
		case c == '"':
			i = skipQuoted(s, i, '"', false)
		case c == '-' && i+1 < n && s[i+1] == '-':
			if j := strings.IndexByte(s[i:], '\n'); j >= 0 {
				i += j + 1
			} else {
				i = n
			}
		case c == '/' && i+1 < n && s[i+1] == '*':
			i = skipBlockComment(s, i)
		case c == '$' && (i == 0 || !isIdentChar(s[i-1])):
			i = skipDollarQuoted(s, i)
		default:
			i++
		}
	}
	out = append(out, s[start:])
	return out
}

func isIdentChar(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// skipQuoted returns the index after the quoted text starting at s[i]. A
// doubled quote stands for one; with escapes a backslash escapes the next
// byte.
func skipQuoted(s string, i int, q byte, escapes bool) int {
	i++
	for i < len(s) {
		switch s[i] {
		case '\\':
			if escapes {
				i += 2
				continue
			}
		case q:
			if i+1 < len(s) && s[i+1] == q {
				i += 2
				continue
			}
			return i + 1
		}
		i++
	}
	return len(s)
}

// skipBlockComment returns the index after the /* ... */ comment at s[i];
// block comments nest.
func skipBlockComment(s string, i int) int {
	end, _ := blockComment(s, i)
	return end
}

// blockComment returns the index after the /* ... */ comment at s[i], and
// whether it is closed (else the index is len(s)).
func blockComment(s string, i int) (int, bool) {
	depth := 0
	for i < len(s) {
		switch {
		case strings.HasPrefix(s[i:], "/*"):
			depth++
			i += 2
		case strings.HasPrefix(s[i:], "*/"):
			depth--
			i += 2
			if depth == 0 {
				return i, true
			}
		default:
			i++
		}
	}
	return len(s), false
}

// skipDollarQuoted returns the index after a $tag$ ... $tag$ string at
// s[i], or i+1 when s[i] does not open one (a $1 parameter, say).
func skipDollarQuoted(s string, i int) int {
	j := i + 1
	for j < len(s) && s[j] != '$' {
		if !isIdentChar(s[j]) || (j == i+1 && s[j] >= '0' && s[j] <= '9') {
			return i + 1
		}
		j++
	}
	if j >= len(s) {
		return i + 1
	}
	tag := s[i : j+1]
	if k := strings.Index(s[j+1:], tag); k >= 0 {
		return j + 1 + k + len(tag)
	}
	return len(s)
}

// onlyComments reports whether a statement holds nothing but comments.
// A /* comment that is not closed is not one: DuckDB refuses it ("unterminated
// /* comment"), and the script must reach DuckDB to say so.
func onlyComments(s string) bool {
	for i := 0; i < len(s); {
		switch {
		case s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r':
			i++
		case strings.HasPrefix(s[i:], "--"):
			if j := strings.IndexByte(s[i:], '\n'); j >= 0 {
				i += j + 1
			} else {
				return true
			}
		case strings.HasPrefix(s[i:], "/*"):
			end, closed := blockComment(s, i)
			if !closed {
				return false
			}
			i = end
		default:
			return false
		}
	}
	return true
}
