package ingest

import "unicode/utf8"

// AppendJSONString appends s as a JSON string. Ingesters build events.args
// with it: the batches reach DuckDB marked as JSON and are not parsed on
// the way in, so what is written must be valid JSON. Bytes that are not
// UTF-8 become U+FFFD.
func AppendJSONString(dst []byte, s []byte) []byte {
	const digits = "0123456789abcdef"
	dst = append(dst, '"')
	for len(s) > 0 {
		c := s[0]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\t':
				dst = append(dst, '\\', 't')
			case c < 0x20 || c == 0x7f:
				dst = append(dst, '\\', 'u', '0', '0', digits[c>>4], digits[c&15])
			default:
				dst = append(dst, c)
			}
			s = s[1:]
			continue
		}
		r, size := utf8.DecodeRune(s)
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, "\ufffd"...)
		} else {
			dst = append(dst, s[:size]...)
		}
		s = s[size:]
	}
	return append(dst, '"')
}
