package qnx

import (
	"bytes"
	"context"
	"fmt"
	"strconv"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/schema"
)

// TextIngester reads traceprinter's text output.
type TextIngester struct{}

func init() { ingest.Register(20, TextIngester{}) }

// Format describes the text format.
func (TextIngester) Format() ingest.Format {
	return ingest.Format{Name: "qnx", Description: "QNX Neutrino system trace as printed by traceprinter: threads, processes, interrupts, kernel calls, messages",
		Patterns: []string{"*.txt", "*.trace", "*.tp"}}
}

// Sniff recognizes traceprinter's header, or a first event line
// "t:0x... CPU:NN CLASS:EVENT".
func (TextIngester) Sniff(head []byte) bool {
	if bytes.Contains(head, []byte("TRACEPRINTER version")) || bytes.Contains(head, []byte("-- KERNEL EVENTS --")) {
		return true
	}
	lr := ingest.NewLineReader(bytes.NewReader(head))
	for i := 0; i < 20; i++ {
		line, ok := lr.Next()
		if !ok {
			return false
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		var lp lineParse
		return lp.parse(line) == nil
	}
	return false
}

// Ingest reads traceprinter text into w.
func (TextIngester) Ingest(ctx context.Context, src *ingest.Source, w *schema.RunWriter) error {
	m := newMachine(w)
	if err := readText(ctx, ingest.NewLineReader(src), w, m); err != nil {
		return err
	}
	return m.finish()
}

// lineParse holds one event's bytes while its lines are read: class,
// name and fields are appended to buf and remembered as offsets, because
// buf may move as it grows; the event's slices are made at the end.
type lineParse struct {
	buf     []byte
	offs    []int // 4 per field: key from, to, value from, to
	cls, nm [2]int
	cpu     int
	t       uint32
}

func (lp *lineParse) reset() {
	lp.buf = lp.buf[:0]
	lp.offs = lp.offs[:0]
}

func (lp *lineParse) addField(key, value []byte) {
	ks := len(lp.buf)
	lp.buf = append(lp.buf, key...)
	vs := len(lp.buf)
	lp.buf = append(lp.buf, value...)
	lp.offs = append(lp.offs, ks, vs, vs, len(lp.buf))
}

// fill makes e from what was parsed.
func (lp *lineParse) fill(e *event) {
	e.cpu, e.t = lp.cpu, lp.t
	e.class = lp.buf[lp.cls[0]:lp.cls[1]]
	e.name = lp.buf[lp.nm[0]:lp.nm[1]]
	e.fields = e.fields[:0]
	for i := 0; i+3 < len(lp.offs); i += 4 {
		e.fields = append(e.fields, field{key: lp.buf[lp.offs[i]:lp.offs[i+1]], value: lp.buf[lp.offs[i+2]:lp.offs[i+3]]})
	}
}

// textReader assembles events from lines: an event line, then the
// continuation lines traceprinter prints some events' fields on.
type textReader struct {
	w       *schema.RunWriter
	m       eventSink
	lp      lineParse
	cur     event
	have    bool
	inBody  bool
	headers int  // header lines read
	conts   int  // continuation lines of the current event
	over    bool // it went past maxContinuations or maxEventBytes: the rest is dropped
}

// maxContinuations and maxEventBytes bound the continuation lines of one
// event and the bytes of its fields, held until the next event line:
// traceprinter prints a few short ones; a file of text lines after one
// event line must not grow memory without end.
const (
	maxContinuations = 1024
	maxEventBytes    = 1 << 20
)

// maxHeaderLines bounds the header (its attributes are kept for
// runs.meta): traceprinter prints a few dozen lines.
const maxHeaderLines = 4096

// readText reads the lines:
//  1. Before "-- KERNEL EVENTS --": "TRACEPRINTER version V",
//     "TRACEPARSER LIBRARY version V" and the right-aligned "KEY:: value"
//     lines of the file header go to the machine as header attributes.
//  2. After it (or from the first "t:0x" line when the header is missing),
//     a line starting with "t:" begins an event; any other non-blank line
//     continues the current one with more key:value fields.
//  3. An event is handed to the machine when the next one begins, or at
//     the end.
func readText(ctx context.Context, lr *ingest.LineReader, w *schema.RunWriter, m eventSink) error {
	r := &textReader{w: w, m: m}
	err := lr.Each(ctx, w.Info().Source, "traceprinter", func(line []byte, n int64) error {
		trimmed := bytes.TrimSpace(line)
		if len(trimmed) == 0 {
			return nil
		}
		if !r.inBody {
			if !bytes.HasPrefix(trimmed, []byte("t:")) {
				return r.headerLine(trimmed, n)
			}
			r.inBody = true // a file cut after its header
		}
		if bytes.HasPrefix(trimmed, []byte("t:")) {
			// traceprinter forgets the line end after "errno:N": the next
			// event can follow on the same line.
			for len(trimmed) > 0 {
				line := trimmed
				trimmed = nil
				if i := gluedEvent(line); i > 0 {
					line, trimmed = line[:i], line[i:]
				}
				if err := r.flush(); err != nil {
					return err
				}
				if err := r.begin(line, n); err != nil {
					return err
				}
			}
			return nil
		}
		if !r.have {
			return w.BadLine(n, "expected an event line \"t:0x... CPU:NN CLASS:EVENT ...\", found %q", clip(trimmed))
		}
		if r.conts++; r.conts > maxContinuations || len(r.lp.buf)+len(trimmed) > maxEventBytes {
			if r.over {
				return nil
			}
			r.over = true
			return w.BadLine(n, "expected at most %d continuation lines and %d bytes of fields after the event line %d, found more (the rest up to the next event line is dropped)", maxContinuations, maxEventBytes, r.cur.pos)
		}
		r.continuation(trimmed)
		return nil
	})
	if err != nil {
		return err
	}
	return r.flush()
}

func (r *textReader) headerLine(line []byte, n int64) error {
	if r.headers++; r.headers > maxHeaderLines {
		if r.headers > maxHeaderLines+1 {
			return nil
		}
		return r.w.BadLine(n, "expected at most %d header lines before \"-- KERNEL EVENTS --\", found more (the rest are not kept)", maxHeaderLines)
	}
	switch {
	case bytes.HasPrefix(line, []byte("TRACEPRINTER version")):
		r.m.header("TRACEPRINTER_VERSION", string(bytes.TrimSpace(line[len("TRACEPRINTER version"):])))
	case bytes.HasPrefix(line, []byte("TRACEPARSER LIBRARY version")):
		r.m.header("TRACEPARSER_LIBRARY_VERSION", string(bytes.TrimSpace(line[len("TRACEPARSER LIBRARY version"):])))
	case bytes.Contains(line, []byte("-- HEADER FILE INFORMATION --")):
	case bytes.Contains(line, []byte("-- KERNEL EVENTS --")):
		r.inBody = true
	default:
		i := bytes.Index(line, []byte("::"))
		if i <= 0 {
			return r.w.BadLine(n, "expected a header line \"KEY:: value\" or \"-- KERNEL EVENTS --\", found %q", clip(line))
		}
		r.m.header(string(bytes.TrimSpace(line[:i])), string(bytes.TrimSpace(line[i+2:])))
	}
	return nil
}

// begin starts an event from its line.
func (r *textReader) begin(line []byte, n int64) error {
	r.lp.reset()
	if err := r.lp.parse(line); err != nil {
		r.have = false
		return r.w.BadLine(n, "%s", err)
	}
	r.cur.pos = n
	r.have = true
	r.conts, r.over = 0, false
	return nil
}

// continuation adds the field of a continuation line. traceprinter puts
// one key:value per continuation line and the value runs to the end of
// the line (a process name may hold blanks).
func (r *textReader) continuation(line []byte) {
	if i := bytes.IndexByte(line, ':'); i > 0 && bytes.IndexAny(line[:i], " \t") < 0 {
		r.lp.addField(line[:i], line[i+1:])
		return
	}
	r.lp.addField(nil, line)
}

// flush hands the current event to the machine.
func (r *textReader) flush() error {
	if !r.have {
		return nil
	}
	r.have = false
	r.lp.fill(&r.cur)
	return r.m.handle(&r.cur)
}

// parse parses "t:0xHHHHHHHH CPU:NN CLASS :EVENT rest".
func (lp *lineParse) parse(line []byte) error {
	rest := line
	if !bytes.HasPrefix(rest, []byte("t:0x")) && !bytes.HasPrefix(rest, []byte("t:0X")) {
		return fmt.Errorf("expected a timestamp \"t:0x...\", found %q", clip(line))
	}
	rest = rest[4:]
	j := 0
	var t uint64
	for j < len(rest) && isHex(rest[j]) && j <= 16 {
		t = t<<4 | uint64(unhex(rest[j]))
		j++
	}
	if j == 0 || j > 16 || (j < len(rest) && rest[j] != ' ' && rest[j] != '\t') {
		return fmt.Errorf("t: expected 1 to 16 hexadecimal digits, found %q", clip(firstToken(rest)))
	}
	lp.t = uint32(t)
	rest = bytes.TrimLeft(rest[j:], " \t")
	if !bytes.HasPrefix(rest, []byte("CPU:")) {
		return fmt.Errorf("expected \"CPU:NN\" after the timestamp, found %q", clip(firstToken(rest)))
	}
	rest = rest[4:]
	j = 0
	cpu := 0
	for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' && j < 4 {
		cpu = cpu*10 + int(rest[j]-'0')
		j++
	}
	if j == 0 || (j < len(rest) && rest[j] != ' ' && rest[j] != '\t') {
		return fmt.Errorf("CPU: expected a CPU number, found %q", clip(firstToken(rest)))
	}
	lp.cpu = cpu
	rest = bytes.TrimLeft(rest[j:], " \t")
	colon := bytes.IndexByte(rest, ':')
	if colon <= 0 {
		return fmt.Errorf("expected \"CLASS:EVENT\" after the CPU, found %q", clip(rest))
	}
	class := bytes.TrimRight(rest[:colon], " \t")
	if len(class) == 0 || bytes.IndexAny(class, " \t") >= 0 {
		return fmt.Errorf("expected \"CLASS:EVENT\" after the CPU, found %q", clip(rest))
	}
	rest = bytes.TrimLeft(rest[colon+1:], " \t")
	end := bytes.IndexAny(rest, " \t")
	if end < 0 {
		end = len(rest)
	}
	if end == 0 {
		return fmt.Errorf("expected an event name after %q, found nothing", class)
	}
	lp.cls = [2]int{len(lp.buf), len(lp.buf) + len(class)}
	lp.buf = append(lp.buf, class...)
	nameTok := trimComma(rest[:end])
	lp.nm = [2]int{len(lp.buf), len(lp.buf) + len(nameTok)}
	lp.buf = append(lp.buf, nameTok...)
	rest = rest[end:]
	if string(class) == "CONTROL" && string(lp.buf[lp.nm[0]:lp.nm[1]]) == "BUFFER" {
		lp.assignments(rest) // sequence = 33, num_events = 714
	} else {
		lp.fields(rest)
	}
	if string(class) == "USREVENT" {
		lp.nameUserWords()
	}
	return nil
}

// fields splits "key:value key:\"quoted value\" positional".
func (lp *lineParse) fields(rest []byte) {
	for {
		rest = bytes.TrimLeft(rest, " \t")
		if len(rest) == 0 {
			return
		}
		var key, value []byte
		if rest[0] == '"' {
			value, rest = quoted(rest)
		} else {
			end := bytes.IndexAny(rest, " \t")
			if end < 0 {
				end = len(rest)
			}
			tok := rest[:end]
			if c := bytes.IndexByte(tok, ':'); c > 0 {
				key = tok[:c]
				switch {
				case string(key) == "SIGEVENT":
					// print_sigevent's text has blanks and colons of its
					// own ("PULSE 0x40000002:10 0x1:0x2a"): the rest of the line
					value, rest = bytes.TrimRight(rest[c+1:], " \t"), nil
				case c+1 < len(rest) && rest[c+1] == '"':
					value, rest = quoted(rest[c+1:])
				default:
					value, rest = trimComma(tok[c+1:]), rest[end:]
				}
			} else {
				value, rest = trimComma(tok), rest[end:]
			}
		}
		lp.addField(key, value)
	}
}

// nameUserWords names the words of a numeric user event: traceprinter
// prints "USREVENT:EVENT:5, 0x00000001 0x00000002" without keys, and the
// .kev reader calls them d0, d1.
func (lp *lineParse) nameUserWords() {
	for i := 0; i+3 < len(lp.offs); i += 4 {
		if lp.offs[i] != lp.offs[i+1] {
			return // a keyed field: a string event (STR:"...")
		}
	}
	for i := 0; i+3 < len(lp.offs); i += 4 {
		k := len(lp.buf)
		lp.buf = append(lp.buf, 'd')
		lp.buf = strconv.AppendInt(lp.buf, int64(i/4), 10)
		lp.offs[i], lp.offs[i+1] = k, len(lp.buf)
	}
}

// assignments splits "key = value, key = value".
func (lp *lineParse) assignments(rest []byte) {
	for len(rest) > 0 {
		part := rest
		if c := bytes.IndexByte(rest, ','); c >= 0 {
			part, rest = rest[:c], rest[c+1:]
		} else {
			rest = nil
		}
		part = bytes.TrimSpace(part)
		if len(part) == 0 {
			continue
		}
		if eq := bytes.IndexByte(part, '='); eq > 0 {
			lp.addField(bytes.TrimSpace(part[:eq]), bytes.TrimSpace(part[eq+1:]))
		} else {
			lp.addField(nil, part)
		}
	}
}

// quoted reads a "..." value and returns it without the quotes.
// traceprinter prints strings without escapes, so a string may hold
// quotes: the value ends at the last quote before the " (0x" of the
// string's words, or before the end of the line; an unterminated quote
// runs to the end.
func quoted(s []byte) (value, rest []byte) {
	bound := len(s)
	if i := bytes.Index(s[1:], []byte(" (0x")); i >= 0 {
		bound = 1 + i
	}
	end := bytes.LastIndexByte(s[1:bound], '"')
	if end < 0 {
		return s[1:], nil
	}
	return s[1 : 1+end], s[2+end:]
}

// trimComma drops the comma traceprinter puts after some values and
// names ("ret_val:-1, errno:N", "EVENT:5, ..."): punctuation, not value.
func trimComma(b []byte) []byte {
	if n := len(b); n > 1 && b[n-1] == ',' {
		return b[:n-1]
	}
	return b
}

// gluedEvent returns where a second event starts inside an event line
// ("... errno:5t:0x4f86e276 CPU:00 ..."), or 0.
func gluedEvent(line []byte) int {
	from := 2
	for {
		i := bytes.Index(line[from:], []byte("t:0x"))
		if i < 0 {
			return 0
		}
		i += from
		j := i + 4
		for j < len(line) && isHex(line[j]) {
			j++
		}
		if j > i+4 && bytes.HasPrefix(line[j:], []byte(" CPU:")) && line[i-1] != ' ' && line[i-1] != '"' {
			return i
		}
		from = i + 4
	}
}

func firstToken(b []byte) []byte {
	if i := bytes.IndexAny(b, " \t"); i >= 0 {
		return b[:i]
	}
	return b
}

func clip(b []byte) string {
	if len(b) > 60 {
		return string(b[:60]) + "..."
	}
	return string(b)
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}
