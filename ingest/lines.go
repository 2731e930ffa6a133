package ingest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/traceduck/traceduck/schema"
)

// MaxLineBytes bounds a text line: a file without line ends must not make
// the reader allocate the whole file.
const MaxLineBytes = 1 << 20

// LineReader splits text into lines ended by LF, CRLF or a lone CR, the
// last one possibly unterminated. The returned line shares the reader's
// buffer and is valid until the next call; nothing is allocated per line.
type LineReader struct {
	r          io.Reader
	buf        []byte
	start, end int
	eof        bool
	err        error
	line       int64
	max        int
	cut        bool // the last line returned ended at the end of the input, without a terminator
}

// NewLineReader returns a LineReader with a 64 KiB buffer that grows up to
// MaxLineBytes for long lines.
func NewLineReader(r io.Reader) *LineReader {
	return &LineReader{r: r, buf: make([]byte, 64<<10), max: MaxLineBytes}
}

// SetMax changes the longest line accepted (tests).
func (l *LineReader) SetMax(n int) { l.max = n }

// Line is the 1-based number of the line last returned.
func (l *LineReader) Line() int64 { return l.line }

// Unterminated reports whether the last line returned ended at the end of
// the input without a line end: in a format whose writer ends every line,
// the file was cut inside that line.
func (l *LineReader) Unterminated() bool { return l.cut }

// Err is the error that ended reading: nil at the end of the input,
// ErrLineTooLong (wrapped, with the line number) or a read error.
func (l *LineReader) Err() error { return l.err }

// Next returns the next line without its terminator; ok is false at the
// end of the input or on error (see Err).
func (l *LineReader) Next() (line []byte, ok bool) {
	for {
		seg := l.buf[l.start:l.end]
		if i := bytes.IndexByte(seg, '\n'); i >= 0 {
			if j := bytes.IndexByte(seg[:i], '\r'); j >= 0 && j < i-1 {
				return l.take(j, j+1) // lone CR before the LF
			} else if j >= 0 && j == i-1 {
				return l.take(i-1, i+1) // CRLF
			}
			return l.take(i, i+1) // LF
		}
		if j := bytes.IndexByte(seg, '\r'); j >= 0 && (j < len(seg)-1 || l.eof) {
			return l.take(j, j+1) // lone CR; at the buffer's end only once no LF can follow
		}
		if l.eof {
			if len(seg) == 0 {
				return nil, false
			}
			l.cut = true
			return l.take(len(seg), len(seg)) // last line without a terminator
		}
		if l.err != nil {
			return nil, false
		}
		l.fill()
	}
}

func (l *LineReader) take(lineLen, consumed int) ([]byte, bool) {
	line := l.buf[l.start : l.start+lineLen]
	l.start += consumed
	l.line++
	return line, true
}

// fill reads more input, moving the unread part to the front and growing
// the buffer (up to max+1, so a line of exactly max bytes plus its CR
// still fits) when a line does not fit.
func (l *LineReader) fill() {
	if l.start > 0 {
		copy(l.buf, l.buf[l.start:l.end])
		l.end -= l.start
		l.start = 0
	}
	if l.end == len(l.buf) {
		if len(l.buf) > l.max {
			l.err = fmt.Errorf("line %d: %w (more than %d bytes)", l.line+1, ErrLineTooLong, l.max)
			l.eof = false
			return
		}
		grown := make([]byte, min(2*len(l.buf), l.max+2))
		copy(grown, l.buf[:l.end])
		l.buf = grown
	}
	n, err := l.r.Read(l.buf[l.end:])
	l.end += n
	if err == io.EOF {
		l.eof = true
	} else if err != nil {
		l.err = err
	}
}

// Each calls fn for every line, with its 1-based number, checking ctx for
// cancellation every few thousand lines. A line over the bound ends it
// with file:N: expected a <what> line, found a line longer than ... bytes;
// a read error ends it as it is.
func (l *LineReader) Each(ctx context.Context, file, what string, fn func(line []byte, n int64) error) error {
	for {
		line, ok := l.Next()
		if !ok {
			break
		}
		n := l.Line()
		if n&0x3fff == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if err := fn(line, n); err != nil {
			return err
		}
	}
	if err := l.Err(); err != nil {
		if errors.Is(err, ErrLineTooLong) {
			return &schema.InputError{File: file, Line: l.Line() + 1, Offset: -1,
				Msg: fmt.Sprintf("expected a %s line, found a line longer than %d bytes", what, l.max)}
		}
		return err
	}
	return nil
}
