// Package chrome reads Chrome trace event JSON (the Trace Event Format of
// chrome://tracing, Perfetto's JSON importer and Trace Compass): a JSON
// array of events, or an object whose "traceEvents" member is that array.
// The file is read as a stream, one event at a time, so its size is not
// bounded by memory. Slices (B/E, X) become state intervals of their
// thread, one instance per nesting depth; counters become value intervals;
// async slices are states of an async-track object; object events give
// lifetimes; every event is a row of events with its JSON fields in args.
// README.md in this directory documents the mapping and the recoveries.
package chrome

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/schema"
)

// Detected before TLV (40) and DTrace (50), whose lenient sniffers look at
// text lines: a Chrome JSON file is claimed only by its structure.
func init() { ingest.Register(30, Ingester{}) }

// Ingester reads Chrome trace event JSON.
type Ingester struct{}

// Format describes the Chrome trace event format.
func (Ingester) Format() ingest.Format {
	return ingest.Format{Name: "chrome", Description: "Chrome trace event JSON (chrome://tracing, Perfetto, Trace Compass): slices, counters, async slices, flows, objects", Patterns: []string{"*.json", "*.json.trace"}, Offsets: true}
}

// Sniff reports whether head looks like Chrome trace event JSON: an
// array whose first element is an object with a "ph" member, or an object
// with a "traceEvents" member, as far as the head shows (a first event
// longer than the head is taken when "ph" appears before the head ends).
func (Ingester) Sniff(head []byte) bool {
	head = bytes.TrimPrefix(head, []byte("\xef\xbb\xbf"))
	i := skipBlanks(head, 0)
	if i >= len(head) {
		return false
	}
	switch head[i] {
	case '[':
		i = skipBlanks(head, i+1)
		if i >= len(head) || head[i] != '{' {
			return false
		}
		return hasTopKey(head[i:], "ph")
	case '{':
		return hasTopKey(head[i:], "traceEvents")
	}
	return false
}

func skipBlanks(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// hasTopKey reports whether the object starting at b[0] has a member
// named key among those the bytes hold (b may end inside the object).
// Members are read as JSON; anything that is not stops the search.
func hasTopKey(b []byte, key string) bool {
	i := 1
	for {
		i = skipBlanks(b, i)
		if i >= len(b) || b[i] != '"' {
			return false
		}
		r := jsonReader{b: b, i: i}
		if _, err := r.str(); err != nil {
			return false
		}
		if string(b[i+1:r.i-1]) == key {
			r.ws()
			return r.i >= len(b) || b[r.i] == ':'
		}
		r.ws()
		if r.i >= len(b) || b[r.i] != ':' {
			return false
		}
		r.i++
		r.ws()
		// A value cut by the end of the head ends the search: it cannot
		// be told from a broken one.
		if _, err := r.value(0); err != nil {
			return false
		}
		r.ws()
		if r.i >= len(b) || b[r.i] != ',' {
			return false
		}
		i = r.i + 1
	}
}

// Ingest reads a Chrome trace into w.
func (Ingester) Ingest(ctx context.Context, src *ingest.Source, w *schema.RunWriter) error {
	p := newParser(w, src)
	if err := p.run(ctx); err != nil {
		return err
	}
	if p.s.err != nil {
		return fmt.Errorf("%s: %w", w.Info().Source, p.s.err)
	}
	return p.m.finish()
}

// Bounds. Variables so that tests can make them small.
var (
	// maxEvent bounds the bytes of one event (Chrome writes a CPU
	// profile chunk or a frame tree as one event: megabytes at most).
	maxEvent = 64 << 20
	// maxMeta bounds a member of the top-level object kept in runs.meta;
	// a longer one (a systemTraceEvents string of ftrace text) is skipped.
	maxMeta = 1 << 20
	// maxMetaTotal bounds all the members kept in runs.meta together: a
	// file may hold any number of top-level members.
	maxMetaTotal = 4 << 20
)

// parser reads the JSON structure around the events; the machine turns
// each event into rows.
type parser struct {
	w   *schema.RunWriter
	s   *stream
	m   *machine
	src string
	key []byte

	metaBytes int // of the top-level members kept for runs.meta
}

func newParser(w *schema.RunWriter, src *ingest.Source) *parser {
	return &parser{w: w, s: newStream(src), m: newMachine(w), src: w.Info().Source}
}

// run reads the file:
//  1. A byte order mark and blanks are skipped; the first byte says the
//     form: '[' an array of events, '{' an object.
//  2. The array form is the event array itself (events).
//  3. In the object form each member is read in turn: "traceEvents" is
//     streamed as the event array; any other member is kept whole in
//     runs.meta (displayTimeUnit, otherData, metadata, ...) up to maxMeta
//     bytes, skipped beyond.
//  4. After the closing ']' or '}', only blanks may follow.
func (p *parser) run(ctx context.Context) error {
	s := p.s
	s.blanks()
	c, ok := s.peek()
	if !ok {
		return p.w.BadOffset(s.offset(), "expected a JSON array of trace events or an object with \"traceEvents\", found the end of the file")
	}
	var err error
	var complete bool
	switch c {
	case '[':
		s.skip(1)
		complete, err = p.events(ctx)
	case '{':
		complete, err = p.object(ctx)
	default:
		return p.w.BadOffset(s.offset(), "expected a JSON array of trace events or an object with \"traceEvents\", found %s", p.excerpt())
	}
	if err != nil || !complete {
		return err
	}
	s.blanks()
	if _, ok := s.peek(); ok {
		return p.w.BadOffset(s.offset(), "expected the end of the file after the trace, found %s", p.excerpt())
	}
	return nil
}

// excerpt quotes the input at the current position for a message.
func (p *parser) excerpt() string {
	s := p.s
	for s.end-s.pos < 24 {
		if _, ok := s.more(s.pos, readChunk); !ok {
			break
		}
	}
	return found(s.buf[s.pos:s.end], 0)
}

// object reads the object form; complete is false when the file ended
// before its closing '}' (reported).
func (p *parser) object(ctx context.Context) (complete bool, err error) {
	s := p.s
	s.skip(1) // '{'
	sawEvents := false
	first, afterComma := true, false
	for {
		s.blanks()
		c, ok := s.peek()
		if !ok {
			if sawEvents {
				p.m.once(findNoCloseObject, schema.Warning, s.offset(),
					"the file ends without the '}' that closes the top-level object (a writer that stopped before the end): read up to the end")
				return false, nil
			}
			return false, p.w.BadOffset(s.offset(), "expected a member of the top-level object (\"traceEvents\": [...]), found the end of the file")
		}
		if c == '}' {
			if afterComma {
				p.m.once(findTrailingComma, schema.Info, s.offset(), "a comma before the closing '}' of the top-level object: ignored")
			}
			s.skip(1)
			break
		}
		if !first && !afterComma {
			if c != ',' {
				return false, p.w.BadOffset(s.offset(), "expected ',' or '}' after a member of the top-level object, found %s", p.excerpt())
			}
			s.skip(1)
			afterComma = true
			continue
		}
		first, afterComma = false, false
		// The member name.
		v, off, outcome := s.value(maxMeta, true)
		if outcome != scanOK || len(v) == 0 || v[0] != '"' {
			return false, p.w.BadOffset(off, "expected a member name of the top-level object in double quotes, found %s", found(v, 0))
		}
		r := jsonReader{b: v}
		if _, err := r.str(); err != nil || r.i != len(v) {
			return false, p.w.BadOffset(off, "expected a member name of the top-level object in double quotes, found %s", found(v, 0))
		}
		p.key = unquote(p.key[:0], v[1:len(v)-1])
		key := string(p.key)
		s.blanks()
		if c, ok := s.peek(); !ok || c != ':' {
			if !ok && sawEvents {
				p.m.once(findNoCloseObject, schema.Warning, s.offset(),
					"the file ends without the '}' that closes the top-level object (a writer that stopped before the end): read up to the end")
				return false, nil
			}
			return false, p.w.BadOffset(s.offset(), "expected ':' after the member name %q, found %s", key, p.excerpt())
		}
		s.skip(1)
		s.blanks()
		if key == "traceEvents" {
			if c, ok := s.peek(); !ok || c != '[' {
				return false, p.w.BadOffset(s.offset(), "\"traceEvents\": expected an array of events, found %s", p.excerpt())
			}
			s.skip(1)
			sawEvents = true
			complete, err := p.events(ctx)
			if err != nil || !complete {
				return false, err
			}
			continue
		}
		if err := p.metaMember(key); err != nil {
			return false, err
		}
		if p.m.ended {
			return false, nil
		}
	}
	if !sawEvents {
		return true, p.w.BadOffset(0, "expected an array of events or an object with a \"traceEvents\" member, found an object without one")
	}
	return true, nil
}

// metaMember reads the value of a member of the top-level object other
// than traceEvents into runs.meta.
func (p *parser) metaMember(key string) error {
	s := p.s
	v, off, outcome := s.value(maxMeta, true)
	switch outcome {
	case scanEOF:
		p.m.ended = true
		p.m.once(findNoCloseObject, schema.Warning, s.offset(),
			"the file ends without the '}' that closes the top-level object (a writer that stopped before the end): read up to the end")
		return nil
	case scanTooLarge:
		p.m.once(findMetaTooLarge, schema.Info, off, fmt.Sprintf("the top-level member %q is longer than %d bytes: left out of runs.meta (Chrome's systemTraceEvents, its ftrace text, is read by no format here)", key, maxMeta))
		return nil
	}
	r := jsonReader{b: v}
	kind, err := r.value(0)
	if err == nil && r.i != len(v) {
		err = r.fail(r.i, "the end of the value")
	}
	if err != nil {
		se := err.(*syntaxError)
		return p.w.BadOffset(off+int64(se.at), "top-level member %q: %s", key, se.msg)
	}
	if key == "displayTimeUnit" && kind == kString {
		// Only how a viewer shows times: ts and dur are microseconds
		// whatever it says (README.md, Time).
		p.m.displayUnit = string(unquote(nil, v[1:len(v)-1]))
	}
	if p.metaBytes+len(v) > maxMetaTotal {
		p.m.once(findMetaTotal, schema.Info, off, fmt.Sprintf("top-level members of more than %d bytes in all: %q and the members after it are left out of runs.meta", maxMetaTotal, key))
		return nil
	}
	p.metaBytes += len(v)
	raw := append([]byte(nil), v...)
	if r.surrogate {
		fixSurrogates(raw)
	}
	p.w.SetMeta(key, json.RawMessage(raw))
	return nil
}

// events reads the event array after its '['; complete is false when the
// file ended before its closing ']' (reported: a writer that crashed, as
// Chrome's viewer allows).
//  1. Between events: blanks, then ',' or the closing ']'. A ',' right
//     before ']' or before the end of the file is accepted (reported).
//  2. An event: stream.value finds its extent, then the machine reads it.
//     A value that is not a whole valid event is a bad record: it stops
//     the ingest, or with --skip-bad is recorded and skipped (after a
//     fault in its brackets, reading resumes at the next ", {"; after a
//     missing ',' it goes on with what follows).
//  3. The end of the file inside an event drops that event (reported).
func (p *parser) events(ctx context.Context) (complete bool, err error) {
	s := p.s
	m := p.m
	needComma := false
	trailing := false
	comma := int64(0) // where the last ',' was
	for n := 0; ; n++ {
		if n&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return false, err
			}
		}
		s.blanks()
		c, ok := s.peek()
		if !ok {
			m.ended = true
			m.once(findNoCloseArray, schema.Warning, s.offset(),
				"the file ends without the ']' that closes the event array (a writer that stopped before the end): read up to the end, as Chrome's viewer does")
			return false, nil
		}
		if c == ']' {
			if trailing {
				m.once(findTrailingComma, schema.Info, comma, "a comma after the last event: ignored, as Chrome's viewer does")
			}
			s.skip(1)
			return true, nil
		}
		if needComma {
			if c != ',' {
				// With --skip-bad, read on as if the comma were there:
				// what follows is most likely the next event.
				if err := p.w.BadOffset(s.offset(), "expected ',' or ']' after an event, found %s", p.excerpt()); err != nil {
					return false, err
				}
				needComma = false
				continue
			}
			comma = s.offset()
			s.skip(1)
			needComma, trailing = false, true
			continue
		}
		if c == ',' {
			if err := p.w.BadOffset(s.offset(), "expected an event, found ','"); err != nil {
				return false, err
			}
			s.skip(1)
			continue
		}
		trailing = false
		v, off, outcome := s.value(maxEvent, true)
		switch outcome {
		case scanEOF:
			m.ended = true
			m.once(findCutEvent, schema.Warning, off,
				"the file ends inside an event (a writer that stopped mid-event): that event is left out")
			return false, nil
		case scanTooLarge:
			if err := p.w.BadOffset(off, "an event longer than %d bytes", maxEvent); err != nil {
				return false, err
			}
			needComma = true
			continue
		case scanBroken:
			msg, at := brokenMessage(v)
			if err := p.w.BadOffset(off+int64(at), "%s", msg); err != nil {
				return false, err
			}
			if !s.resync() {
				return false, nil
			}
			continue
		}
		if err := m.event(v, off); err != nil {
			return false, err
		}
		needComma = true
	}
}

// brokenMessage explains a value whose brackets or strings the stream
// found broken: the strict reader finds the first fault.
func brokenMessage(v []byte) (string, int) {
	r := jsonReader{b: v}
	_, err := r.value(0)
	if se, ok := err.(*syntaxError); ok {
		return se.msg, se.at
	}
	// The reader stops at the end of the bytes, where the stream found
	// the fault.
	return "invalid JSON: expected a value, found " + found(v, len(v)-1), len(v) - 1
}
