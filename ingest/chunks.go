package ingest

import (
	"bytes"
	"io"
)

// ChunkReader reads text in chunks of whole lines, so that one goroutine
// can read and split a trace while another applies its lines in order (a
// parser whose state machines are sequential: see ingest/btf). Lines are
// LineReader's (LF, CRLF or a lone CR; the last one possibly
// unterminated), with the same bound: ChunkLines splits a chunk into
// exactly the lines, and finds exactly the line too long, that a
// LineReader over the same input would.
//
// A chunk ends after a line end: after the last LF read, or after a lone
// CR whose next byte has been read (and is not LF), so that a CRLF is
// never cut in two. A line longer than the bound ends the chunks: the last
// chunk then holds its first bytes and ChunkLines reports it.
type ChunkReader struct {
	r     io.Reader
	size  int
	max   int
	carry []byte // read past the last cut, the start of the next chunk
	eof   bool
	err   error
	done  bool
}

// Chunk is one chunk of whole lines.
type Chunk struct {
	Data []byte
	// Last: Data ends at the end of the input (or where reading failed,
	// or with a line too long), so its last line may have no line end.
	Last bool
}

// NewChunkReader reads r in chunks of about size bytes (more when a line
// is longer), lines bounded by MaxLineBytes.
func NewChunkReader(r io.Reader, size int) *ChunkReader {
	return &ChunkReader{r: r, size: max(size, 1), max: MaxLineBytes}
}

// SetMax changes the longest line accepted (tests; LineReader.SetMax).
func (c *ChunkReader) SetMax(n int) { c.max = n }

// Max is the longest line accepted.
func (c *ChunkReader) Max() int { return c.max }

// Err is the read error that ended the chunks, nil at the end of the
// input (a line too long is not an error here: ChunkLines reports it).
func (c *ChunkReader) Err() error { return c.err }

// Next returns the next chunk, built in buf's storage (buf is reused: the
// caller hands back a chunk it is done with); ok is false after the last
// chunk.
func (c *ChunkReader) Next(buf []byte) (chunk Chunk, ok bool) {
	if c.done {
		return Chunk{}, false
	}
	buf = append(buf[:0], c.carry...)
	c.carry = c.carry[:0]
	want := c.size
	for {
		// Read up to the chunk size (or the end of the input).
		for len(buf) < want && !c.eof && c.err == nil {
			if cap(buf)-len(buf) < 4096 {
				buf = grow(buf, max(c.size, 2*cap(buf)))
			}
			n, err := c.r.Read(buf[len(buf):cap(buf)])
			buf = buf[:len(buf)+n]
			if err == io.EOF {
				c.eof = true
			} else if err != nil {
				c.err = err
			}
		}
		end := c.eof || c.err != nil
		if cut := lastCut(buf, end); cut > 0 && !end {
			c.carry = append(c.carry, buf[cut:]...)
			return Chunk{Data: buf[:cut]}, true
		}
		if end {
			c.done = true
			if c.err != nil {
				// The lines before the failed read, as LineReader returns
				// them: not a last line that may have been cut.
				cut := lastCut(buf, false)
				return Chunk{Data: buf[:cut]}, cut > 0
			}
			return Chunk{Data: buf, Last: true}, len(buf) > 0
		}
		if len(buf) >= c.max+2 {
			// No line end within the bound: the line is too long, and
			// ChunkLines says so.
			c.done = true
			return Chunk{Data: buf, Last: true}, true
		}
		// A line longer than the chunk size: read on.
		want = len(buf) + 1
	}
}

// lastCut is where the last whole line of buf ends: after its last LF, or
// after a lone CR that is not buf's last byte (a LF may follow it) unless
// end says nothing follows; 0 when buf holds no line end.
func lastCut(buf []byte, end bool) int {
	cut := bytes.LastIndexByte(buf, '\n') + 1
	tail := buf[cut:] // a lone CR can only be after the last LF
	if !end && len(tail) > 0 {
		tail = tail[:len(tail)-1]
	}
	if r := bytes.LastIndexByte(tail, '\r'); r >= 0 {
		cut += r + 1
	}
	return cut
}

func grow(b []byte, n int) []byte {
	g := make([]byte, len(b), n)
	copy(g, b)
	return g
}

// ChunkLines splits a chunk into lines as LineReader does.
type ChunkLines struct {
	data []byte
	pos  int
	last bool
	max  int
	long bool
}

// NewChunkLines splits chunk's data; max is the reader's line bound.
func NewChunkLines(chunk Chunk, max int) ChunkLines {
	return ChunkLines{data: chunk.Data, last: chunk.Last, max: max}
}

// Next returns the next line's bounds in the chunk's data, without its
// line end; ok is false after the last line. long reports a line over the
// bound, where LineReader stops with ErrLineTooLong: nothing follows it.
func (s *ChunkLines) Next() (start, end int, ok, long bool) {
	if s.long || s.pos >= len(s.data) {
		return 0, 0, false, false
	}
	start = s.pos
	seg := s.data[start:]
	i := bytes.IndexByte(seg, '\n')
	scan := seg
	if i >= 0 {
		scan = seg[:i]
	}
	if j := bytes.IndexByte(scan, '\r'); j >= 0 {
		// A CR first: a lone CR, or the CR of a CRLF. LineReader finds it
		// within a window of max+2 bytes, but for its last byte.
		if j > s.max {
			s.long = true
			return start, start, false, true
		}
		s.pos = start + j + 1
		if j == i-1 {
			s.pos++ // CRLF
		}
		return start, start + j, true, false
	}
	if i >= 0 {
		if i > s.max+1 {
			s.long = true
			return start, start, false, true
		}
		s.pos = start + i + 1
		return start, start + i, true, false
	}
	// No line end: the last line of the input, unterminated.
	if !s.last || len(seg) > s.max+1 {
		s.long = true
		return start, start, false, true
	}
	s.pos = len(s.data)
	return start, len(s.data), true, false
}
