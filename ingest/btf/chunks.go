package btf

import (
	"context"
	"fmt"
	"io"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/schema"
)

// Reading a BTF file takes two goroutines. A reader reads the file in
// chunks of whole lines (ingest.ChunkReader), splits each into lines and
// tokenizes its event lines (tokenize: fields, time, instances, type and
// action, nothing that depends on what came before); the parser applies
// the chunks' lines in file order, one after the other, as it applies the
// lines of a LineReader (run): header lines, entity lookups, events, state
// machines. A chunk is a few hundred KiB, tokenized into a few compact
// records per line (no allocation per line), and at most chunksInFlight of
// them wait for the parser (and one more is being read), so memory does
// not grow with the trace.
//
// The reader does on its own core what the parser did before its
// lines: about a fifth of the parser's work on the 10M-event benchmark,
// which it now does while DuckDB waits for the next batch (see
// docs/performance.md).
//
// Only a source of known size (a regular file, bytes in memory) is read
// this way: when the parser stops early (a bad line, a cancelled ingest)
// it waits for the reader's current read, which a stream (standard input,
// a pipe) could make wait for as long as its writer. A stream is read
// line by line.
const (
	chunkBytes     = 256 << 10
	chunksInFlight = 4
)

type lineKind uint8

const (
	lineBlank  lineKind = iota
	lineHeader          // '#': comment, header attribute or entity table row
	lineData            // an event line, tokenized in toks[tok]
	lineLong            // longer than the line bound: the ingest stops there
)

// lineRec is one line of a chunk, trimmed: data[start:end].
type lineRec struct {
	start, end int32
	kind       lineKind
	tok        int32
}

// tokChunk is a chunk of whole lines, tokenized.
type tokChunk struct {
	data  []byte
	lines []lineRec
	toks  []dataTok
}

// tokenizeChunk splits chunk into c's lines and tokenizes its event lines.
func tokenizeChunk(c *tokChunk, chunk ingest.Chunk, max int) {
	c.data = chunk.Data
	c.lines = c.lines[:0]
	c.toks = c.toks[:0]
	s := ingest.NewChunkLines(chunk, max)
	for {
		start, end, ok, long := s.Next()
		if long {
			c.lines = append(c.lines, lineRec{kind: lineLong})
			return
		}
		if !ok {
			return
		}
		b := trimBounds(c.data[start:end], int32(start))
		r := lineRec{start: b[0], end: b[1]}
		switch {
		case b[0] == b[1]:
			r.kind = lineBlank
		case c.data[b[0]] == '#':
			r.kind = lineHeader
		default:
			r.kind = lineData
			r.tok = int32(len(c.toks))
			c.toks = append(c.toks, dataTok{})
			tokenize(c.data[b[0]:b[1]], b[0], &c.toks[r.tok])
		}
		c.lines = append(c.lines, r)
	}
}

// runChunks reads src in chunks of size bytes (see above) and applies
// them; its lines, line numbers and errors are run's.
func (p *parser) runChunks(ctx context.Context, src io.Reader, size int) error {
	cr := ingest.NewChunkReader(src, size)
	max := cr.Max()
	full := make(chan *tokChunk, chunksInFlight)
	free := make(chan *tokChunk, chunksInFlight+2)
	quit := make(chan struct{})
	done := make(chan struct{})
	var readErr error
	go func() {
		defer close(done)
		defer close(full)
		for {
			var c *tokChunk
			select {
			case c = <-free:
			default:
				c = new(tokChunk)
			}
			chunk, ok := cr.Next(c.data)
			if !ok {
				readErr = cr.Err() // read by the parser once full is closed
				return
			}
			tokenizeChunk(c, chunk, max)
			select {
			case full <- c:
			case <-quit:
				return
			}
		}
	}()
	defer func() {
		close(quit)
		for range full {
		}
		<-done
	}()

	var base int64 // lines of the chunks before
	for c := range full {
		if err := ctx.Err(); err != nil {
			return err
		}
		for i := range c.lines {
			l := &c.lines[i]
			n := base + int64(i) + 1
			var err error
			switch l.kind {
			case lineBlank:
				p.table = ""
			case lineHeader:
				err = p.header(c.data[l.start:l.end:l.end], n)
			case lineData:
				p.table = ""
				err = p.apply(c.data, &c.toks[l.tok], n)
			case lineLong:
				err = &schema.InputError{File: p.w.Info().Source, Line: n, Offset: -1,
					Msg: fmt.Sprintf("expected a BTF line, found a line longer than %d bytes", max)}
			}
			if err != nil {
				return err
			}
		}
		base += int64(len(c.lines))
		free <- c
	}
	if readErr != nil {
		return readErr
	}
	p.finish()
	return nil
}
