package chrome

import (
	"errors"
	"io"
)

// stream reads a JSON text incrementally: it skips blanks, consumes single
// bytes, and finds where one value (an event) ends, holding only that
// value in memory. Finding the end needs only the nesting of brackets and
// where strings are, so it is a cheap byte loop; the value is then read
// strictly by jsonReader. Offsets are byte offsets in the file.
type stream struct {
	src  io.Reader
	buf  []byte
	pos  int   // next byte to read, in buf
	end  int   // buf[pos:end] is read from src and not consumed
	base int64 // file offset of buf[0]
	eof  bool
	err  error // a read error other than io.EOF

	stack []byte // brackets open in the value being scanned
}

const readChunk = 256 << 10

func newStream(src io.Reader) *stream {
	return &stream{src: src, buf: make([]byte, readChunk)}
}

// offset is the file offset of the next byte.
func (s *stream) offset() int64 { return s.base + int64(s.pos) }

// more reads more bytes, keeping buf[keep:end] (keep <= pos); it returns
// false at the end of the input or on a read error. Indexes into buf
// shift by the returned amount (subtract it).
func (s *stream) more(keep int, limit int) (shift int, ok bool) {
	if s.eof {
		return 0, false
	}
	if keep > 0 {
		copy(s.buf, s.buf[keep:s.end])
		s.base += int64(keep)
		s.pos -= keep
		s.end -= keep
		shift = keep
	}
	if s.end == len(s.buf) {
		if len(s.buf) >= limit+readChunk {
			return shift, false
		}
		grown := make([]byte, min(2*len(s.buf), limit+readChunk))
		copy(grown, s.buf[:s.end])
		s.buf = grown
	}
	for {
		n, err := s.src.Read(s.buf[s.end:])
		s.end += n
		if err != nil {
			s.eof = true
			if !errors.Is(err, io.EOF) {
				s.err = err
			}
			return shift, n > 0
		}
		if n > 0 {
			return shift, true
		}
	}
}

// peek returns the next byte without consuming it; false at the end.
func (s *stream) peek() (byte, bool) {
	if s.pos == s.end {
		if _, ok := s.more(s.pos, readChunk); !ok {
			return 0, false
		}
	}
	return s.buf[s.pos], true
}

// skip consumes n bytes that peek has seen.
func (s *stream) skip(n int) { s.pos += n }

// blanks consumes JSON white space (and a UTF-8 byte order mark at the
// start of the file).
func (s *stream) blanks() {
	for {
		c, ok := s.peek()
		if !ok {
			return
		}
		switch c {
		case ' ', '\t', '\n', '\r':
			s.pos++
		case 0xef:
			if s.offset() != 0 {
				return
			}
			for s.end-s.pos < 3 {
				if _, ok := s.more(s.pos, readChunk); !ok {
					return
				}
			}
			if s.buf[s.pos+1] != 0xbb || s.buf[s.pos+2] != 0xbf {
				return
			}
			s.pos += 3
		default:
			return
		}
	}
}

// Outcomes of scanning a value.
const (
	scanOK       = iota // the value is complete
	scanBroken          // its brackets do not match, or a string holds a line break: the bytes up to the fault are returned
	scanEOF             // the input ended inside it
	scanTooLarge        // it is longer than the limit
)

// value finds the extent of the value starting at the next byte and
// consumes it. The returned bytes are valid until the next call. With
// keep false, or past limit bytes (scanTooLarge), the bytes are not kept
// (a value is skipped whatever its size) and nil is returned.
func (s *stream) value(limit int, keep bool) (v []byte, off int64, outcome int) {
	start := s.pos
	off = s.offset()
	j := s.pos // scan position
	s.stack = s.stack[:0]
	inStr, esc := false, false
	scalar := false
	first := true
	done := scanOK
	for {
		if j == s.end {
			if keep && j-start > limit {
				keep, done = false, scanTooLarge
			}
			keepFrom := start
			if !keep {
				keepFrom = j
			}
			shift, ok := s.more(keepFrom, limit)
			start -= shift
			j -= shift
			if !ok {
				s.pos = j
				return nil, off, scanEOF
			}
			continue
		}
		c := s.buf[j]
		if first {
			first = false
			switch c {
			case '{', '[':
				s.stack = append(s.stack, c)
			case '"':
				inStr = true
				s.stack = append(s.stack, '"')
			default:
				scalar = true
			}
			j++
			continue
		}
		if scalar {
			switch c {
			case ',', ']', '}', ' ', '\t', '\n', '\r', '{', '[', '"', ':':
				return s.ret(start, j, keep, done)
			}
			j++
			continue
		}
		j++
		if inStr {
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
				if len(s.stack) == 1 && s.stack[0] == '"' {
					return s.ret(start, j, keep, done)
				}
			case c == '\n' || c == '\r':
				// A line break is never inside a JSON string: the string
				// was not closed, and scanning on would take the rest of
				// the file for this value.
				return s.ret(start, j, keep, scanBroken)
			}
			continue
		}
		switch c {
		case '"':
			inStr = true
		case '{', '[':
			if len(s.stack) > maxNesting {
				return s.ret(start, j, keep, scanBroken)
			}
			s.stack = append(s.stack, c)
		case '}', ']':
			open := s.stack[len(s.stack)-1]
			if open == '{' && c != '}' || open == '[' && c != ']' {
				return s.ret(start, j, keep, scanBroken)
			}
			s.stack = s.stack[:len(s.stack)-1]
			if len(s.stack) == 0 {
				return s.ret(start, j, keep, done)
			}
		}
	}
}

// ret consumes the value's bytes up to j and returns them when kept.
func (s *stream) ret(start, j int, keep bool, outcome int) ([]byte, int64, int) {
	off := s.base + int64(start)
	s.pos = j
	if !keep || outcome == scanTooLarge {
		return nil, off, outcome
	}
	return s.buf[start:j], off, outcome
}

// resync skips to the next '{' that follows a ',' (blanks between), the
// likely start of the next event after one that could not be read; false
// at the end of the input.
func (s *stream) resync() bool {
	last := byte(0)
	for {
		c, ok := s.peek()
		if !ok {
			return false
		}
		if c == '{' && last == ',' {
			return true
		}
		switch c {
		case ' ', '\t', '\n', '\r':
		default:
			last = c
		}
		s.pos++
	}
}
