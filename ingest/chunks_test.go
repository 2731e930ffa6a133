package ingest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"testing"
)

// shortReader returns reads of 1 to n bytes, so that reads end anywhere
// (between a CR and its LF, inside a line, at a line end).
type shortReader struct {
	data []byte
	rnd  *rand.Rand
	n    int
}

func (r *shortReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	k := min(len(p), len(r.data), 1+r.rnd.Intn(r.n))
	copy(p, r.data[:k])
	r.data = r.data[k:]
	return k, nil
}

type splitResult struct {
	lines   []string
	longAt  int64 // line number of the line too long, 0 for none
	readErr error
}

// byLineReader is the reference: LineReader from a buffer of max bytes,
// which grows to its bound, max+2, as NewLineReader's does (64 KiB
// doubled up to MaxLineBytes, then MaxLineBytes+2).
func byLineReader(r io.Reader, max int) splitResult {
	l := &LineReader{r: r, buf: make([]byte, max), max: max}
	var res splitResult
	for {
		line, ok := l.Next()
		if !ok {
			break
		}
		res.lines = append(res.lines, string(line))
	}
	if err := l.Err(); errors.Is(err, ErrLineTooLong) {
		res.longAt = l.Line() + 1
	} else {
		res.readErr = err
	}
	return res
}

func byChunks(r io.Reader, size, max int) splitResult {
	c := NewChunkReader(r, size)
	c.SetMax(max)
	var res splitResult
	var buf []byte
	for {
		chunk, ok := c.Next(buf)
		if !ok {
			break
		}
		s := NewChunkLines(chunk, c.Max())
		for {
			start, end, ok, long := s.Next()
			if long {
				res.longAt = int64(len(res.lines)) + 1
				return res
			}
			if !ok {
				break
			}
			res.lines = append(res.lines, string(chunk.Data[start:end]))
		}
		buf = chunk.Data
	}
	res.readErr = c.Err()
	return res
}

func (r splitResult) String() string {
	return fmt.Sprintf("lines %q, long at %d, read error %v", r.lines, r.longAt, r.readErr)
}

// TestChunksAreLineReaderLines: chunks split into lines give LineReader's
// lines, and its line too long at the same line, whatever the chunk size
// and wherever reads end: random inputs of CR, LF, blanks and letters.
func TestChunksAreLineReaderLines(t *testing.T) {
	rnd := rand.New(rand.NewSource(1))
	alphabet := []byte("ab \r\n\n\r\n")
	for i := 0; i < 20000; i++ {
		n := rnd.Intn(60)
		if i%10 == 0 {
			n = rnd.Intn(400)
		}
		data := make([]byte, n)
		for j := range data {
			if rnd.Intn(4) == 0 {
				data[j] = alphabet[rnd.Intn(len(alphabet))]
			} else {
				data[j] = 'x'
			}
		}
		max := 2 + rnd.Intn(20)
		size := 1 + rnd.Intn(40)
		reads := 1 + rnd.Intn(50)
		want := byLineReader(&shortReader{data: data, rnd: rand.New(rand.NewSource(int64(i))), n: reads}, max)
		got := byChunks(&shortReader{data: data, rnd: rand.New(rand.NewSource(int64(i) + 1)), n: reads}, size, max)
		if want.String() != got.String() {
			t.Fatalf("input %q, max %d, chunk size %d:\n got %v\nwant %v", data, max, size, got, want)
		}
	}
}

// TestChunksLongLineDefault: the default bound, a line of exactly the
// bound and one over it, LF and CRLF.
func TestChunksLongLineDefault(t *testing.T) {
	line := bytes.Repeat([]byte("y"), MaxLineBytes)
	for _, in := range [][]byte{
		append(append([]byte("a\n"), line...), "\nb\n"...),
		append(append([]byte("a\n"), line...), "\r\nb\n"...),
		append(append([]byte("a\n"), line...), "z\nb\n"...),
		append(append([]byte("a\n"), line...), "zz\nb\n"...),
		append(append([]byte("a\n"), line...), "z\r\nb\n"...),
		append(append([]byte("a\n"), line...), "z"...),
		append(append([]byte("a\n"), line...), "zz"...),
	} {
		want := byLineReader2(bytes.NewReader(in))
		got := byChunks(bytes.NewReader(in), 64<<10, MaxLineBytes)
		if len(want.lines) != len(got.lines) || want.longAt != got.longAt {
			t.Errorf("input of %d bytes ending %q: got %d lines, long at %d; want %d lines, long at %d", len(in), in[len(in)-4:], len(got.lines), got.longAt, len(want.lines), want.longAt)
		}
	}
}

// byLineReader2 is the LineReader as ingesters make it.
func byLineReader2(r io.Reader) splitResult {
	l := NewLineReader(r)
	var res splitResult
	for {
		line, ok := l.Next()
		if !ok {
			break
		}
		res.lines = append(res.lines, string(line))
	}
	if err := l.Err(); errors.Is(err, ErrLineTooLong) {
		res.longAt = l.Line() + 1
	}
	return res
}

type failingReader struct {
	data []byte
	err  error
}

func (r *failingReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, r.err
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

// TestChunksReadError: the lines before a failed read, then the error.
func TestChunksReadError(t *testing.T) {
	boom := errors.New("boom")
	for _, in := range []string{"a\nb\nc", "a\nb\n", "a\r", "a\rb", ""} {
		want := byLineReader(&failingReader{[]byte(in), boom}, 100)
		got := byChunks(&failingReader{[]byte(in), boom}, 2, 100)
		if want.String() != got.String() {
			t.Errorf("%q: got %v, want %v", in, got, want)
		}
	}
}
