package qnx

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"strconv"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/ingest/qnx/kevlayout"
	"github.com/traceduck/traceduck/schema"
)

// The .kev file that tracelogger writes, as libtraceparser's traceparser.c
// (1.02) reads it:
//
//	TRACE_HEADER_BEGIN::TRACE_FILE_NAME::all_classes.kevTRACE_DATE::...TRACE_HEADER_END::
//	syspage (TRACE_SYSPAGE_LEN bytes, when that attribute is present)
//	traceevent_t records, 16 bytes each, to the end of the file
//
// The header is text without separators: each attribute is "TRACE_",
// its name, "::" and a value that runs to the next "TRACE_" (traceparser's
// get_header; it finds TRACE_HEADER_BEGIN:: in the first 99 bytes). The
// byte order of the records is TRACE_BIG_ENDIAN or TRACE_LITTLE_ENDIAN
// (either attribute, whatever its value; neither means little endian).
// A record is the header word, the timestamp word and two data words
// (<sys/trace.h> traceevent_t; the bit layout is in
// ingest/qnx/kevlayout).
//
// Combine events (CB, CC..., CE records) are reassembled the way
// traceparser's combine() does and with the properties the QNX
// documentation states: all parts of one combine event carry its
// timestamp, they may be interleaved with other events and other combine
// events, and a combine event's own parts come in order. A continuation or
// end record joins the oldest pending combine event with the same
// timestamp, class and event (and CPU, when one such is pending). Like
// traceparser, the reader hands a combine event over when its end record
// arrives — in the position where traceprinter prints it — with the byte
// offset of its begin record as its position.
//
// Records of class EMPTY, event 0 are skipped, as traceprinter prints
// nothing for them; one diagnostic (info) counts them.
//
// Bounds: the header is at most kevMaxHeader bytes, the syspage at most
// kevMaxSyspage (skipped, never held in memory), a combine event at most
// kevMaxCombine records and at most kevMaxPending combine events may be
// pending at once.
//
// Errors name the byte offset (FILE@OFFSET: ...). A header that cannot be
// read stops the ingest even with --skip-bad; a bad record (truncated, a
// combine part without its begin, a combine event that never ends or
// grows too long) goes to diagnostics with --skip-bad and is skipped.

const (
	kevRecord     = 16
	kevMaxHeader  = 64 << 10
	kevMaxSyspage = 1 << 20
	kevMaxCombine = 1024
	kevMaxPending = 1024
	kevBufSize    = 128 << 10

	kevPrefix      = "TRACE_"
	kevBeginMarker = "TRACE_HEADER_BEGIN::"
	kevEndMarker   = "TRACE_HEADER_END::"
	kevBeginWithin = 99 // traceparser reads 99 bytes to find the begin marker
)

var structNames = [4]string{"simple", "combine begin (CB)", "combine continuation (CC)", "combine end (CE)"}

// eventSink is what the readers feed: *machine, or a recorder in tests.
type eventSink interface {
	header(key, value string)
	handle(e *event) error
}

// sniffKev reports whether head starts like a .kev file: the header's
// begin marker within the first 99 bytes, before any NUL, then an
// attribute.
func sniffKev(head []byte) bool {
	i := kevFindBegin(head)
	if i < 0 {
		return false
	}
	rest := head[i+len(kevBeginMarker):]
	j := bytes.Index(rest, []byte(kevPrefix))
	return j >= 0 && j <= kevBeginWithin
}

// kevFindBegin returns the offset of the begin marker if it is where
// traceparser looks for it.
func kevFindBegin(b []byte) int {
	if len(b) > kevBeginWithin {
		b = b[:kevBeginWithin]
	}
	if z := bytes.IndexByte(b, 0); z >= 0 {
		b = b[:z]
	}
	return bytes.Index(b, []byte(kevBeginMarker))
}

// kevInput reads the file in large blocks and keeps track of offsets.
type kevInput struct {
	r        io.Reader
	buf      []byte
	pos, end int   // unread bytes are buf[pos:end]
	off      int64 // file offset of buf[pos]
	eof      bool
	err      error // read error other than EOF
}

// fill tries to have n unread bytes buffered (n <= len(buf)).
func (in *kevInput) fill(n int) {
	if in.end-in.pos >= n || in.eof {
		return
	}
	if in.pos > 0 {
		in.end = copy(in.buf, in.buf[in.pos:in.end])
		in.pos = 0
	}
	for in.end < n && !in.eof {
		k, err := in.r.Read(in.buf[in.end:])
		in.end += k
		if err == io.EOF {
			in.eof = true
		} else if err != nil {
			in.eof, in.err = true, err
		}
	}
}

func (in *kevInput) avail() []byte { return in.buf[in.pos:in.end] }

func (in *kevInput) skip(n int) {
	in.pos += n
	in.off += int64(n)
}

// kevPending is a combine event begun and not yet ended.
type kevPending struct {
	off   int64  // offset of its begin record
	head  uint32 // begin record's header word
	t     uint32
	data  []byte
	parts int
	over  bool // longer than kevMaxCombine: reported, parts dropped
}

// kevReader holds the state of one read.
type kevReader struct {
	w       *schema.RunWriter
	m       eventSink
	order   binary.ByteOrder
	dec     kevDecoder
	e       event
	pending []*kevPending
	free    []*kevPending
	empties int64
	emptyAt int64
}

// readKev reads a .kev file and hands its header attributes and events to
// m (the caller then calls m.finish).
func readKev(ctx context.Context, src *ingest.Source, w *schema.RunWriter, m eventSink) error {
	in := &kevInput{r: src, buf: make([]byte, kevBufSize)}
	r := &kevReader{w: w, m: m}
	if err := r.header(in); err != nil {
		return err
	}
	r.dec.big = r.order == binary.ByteOrder(binary.BigEndian)
	var n int
	for {
		if n++; n&4095 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		in.fill(kevRecord)
		b := in.avail()
		if len(b) < kevRecord {
			if in.err != nil {
				return in.err
			}
			if len(b) > 0 {
				if err := w.BadOffset(in.off, "truncated record: expected %d bytes, found %d before the end of the file", kevRecord, len(b)); err != nil {
					return err
				}
			}
			break
		}
		if err := r.record(in.off, b[:kevRecord]); err != nil {
			return err
		}
		in.skip(kevRecord)
	}
	for _, p := range r.pending {
		if p.over {
			continue
		}
		_, _, class, ev := kevlayout.SplitHeader(p.head)
		if err := w.BadOffset(p.off, "combine event (%s) begun here never ends: expected its end (CE) record, found the end of the file", describe(class, ev, p.t)); err != nil {
			return err
		}
	}
	if r.empties > 0 {
		w.Diagf(schema.Info, r.emptyAt, schema.NoSeq, "%d records of class EMPTY skipped (traceprinter prints nothing for them); the first is here", r.empties)
	}
	return nil
}

// fatal is a header error: there is nothing to go on, with --skip-bad too.
func (r *kevReader) fatal(off int64, format string, args ...any) error {
	return &schema.InputError{File: r.w.Info().Source, Offset: off, Msg: fmt.Sprintf(format, args...)}
}

// header reads the text header and skips the syspage.
func (r *kevReader) header(in *kevInput) error {
	in.fill(kevMaxHeader)
	if in.err != nil {
		return in.err
	}
	b := in.avail()
	begin := kevFindBegin(b)
	if begin < 0 {
		return r.fatal(0, "expected a .kev header (%s within the first %d bytes), found %s", kevBeginMarker, kevBeginWithin, quoteStart(b, 24))
	}
	win := b
	if len(win) > kevMaxHeader {
		win = win[:kevMaxHeader]
	}
	end := bytes.Index(win[begin:], []byte(kevEndMarker))
	if end < 0 {
		found := "the end of the file"
		if len(b) >= kevMaxHeader {
			found = fmt.Sprintf("none in the first %d bytes", kevMaxHeader)
		}
		return r.fatal(int64(begin), "header: expected %s to end the header, found %s", kevEndMarker, found)
	}
	end += begin
	// The begin marker's own value (normally empty) runs to the first
	// attribute, as in traceparser.
	pos := begin + len(kevBeginMarker)
	pos += bytes.Index(b[pos:end+len(kevPrefix)], []byte(kevPrefix))
	var little, big, middle bool
	syspage := int64(-1)
	for pos < end {
		keyStart := pos + len(kevPrefix)
		next := bytes.Index(b[keyStart:end+len(kevPrefix)], []byte(kevPrefix)) + keyStart
		sep := bytes.Index(b[keyStart:next], []byte("::"))
		if sep < 0 || !validKey(b[keyStart:keyStart+sep]) {
			return r.fatal(int64(pos), "header: expected an attribute TRACE_NAME::value, found %s", quoteStart(b[pos:next], 40))
		}
		key := string(b[keyStart : keyStart+sep])
		value := headerValue(b[keyStart+sep+2 : next])
		r.m.header(kevPrefix+key, value)
		switch key {
		case "LITTLE_ENDIAN":
			little = true
		case "BIG_ENDIAN":
			big = true
		case "MIDDLE_ENDIAN":
			middle = true
		case "SYSPAGE_LEN":
			n, err := strconv.ParseInt(value, 10, 64)
			if err != nil || n < 0 {
				return r.fatal(int64(pos), "header: TRACE_SYSPAGE_LEN: expected a number of bytes, found %q", value)
			}
			if n > kevMaxSyspage {
				return r.fatal(int64(pos), "header: TRACE_SYSPAGE_LEN: expected at most %d bytes, found %d", kevMaxSyspage, n)
			}
			syspage = n
		}
		pos = next
	}
	switch {
	case middle:
		return r.fatal(int64(begin), "header: expected TRACE_LITTLE_ENDIAN or TRACE_BIG_ENDIAN, found TRACE_MIDDLE_ENDIAN")
	case little && big:
		return r.fatal(int64(begin), "header: expected TRACE_LITTLE_ENDIAN or TRACE_BIG_ENDIAN, found both")
	case big:
		r.order = binary.BigEndian
	default:
		r.order = binary.LittleEndian
	}
	in.skip(end + len(kevEndMarker))
	start, left := in.off, syspage
	for left > 0 {
		in.fill(1)
		if in.err != nil {
			return in.err
		}
		n := int64(len(in.avail()))
		if n == 0 {
			return r.w.BadOffset(start, "syspage: expected %d bytes (TRACE_SYSPAGE_LEN), found %d before the end of the file", syspage, syspage-left)
		}
		n = min(n, left)
		in.skip(int(n))
		left -= n
	}
	return nil
}

// validKey accepts attribute names as tracelogger writes them.
func validKey(k []byte) bool {
	if len(k) == 0 || len(k) > 64 {
		return false
	}
	for _, c := range k {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// headerValue is what traceprinter prints of a value (traceparser's
// putprints: the printable bytes up to the first NUL), without the
// surrounding blanks.
func headerValue(v []byte) string {
	if z := bytes.IndexByte(v, 0); z >= 0 {
		v = v[:z]
	}
	out := make([]byte, 0, len(v))
	for _, c := range v {
		if c >= 0x20 && c < 0x7f {
			out = append(out, c)
		}
	}
	return string(bytes.Trim(out, " "))
}

// quoteStart quotes the first n bytes of b for a message.
func quoteStart(b []byte, n int) string {
	if len(b) == 0 {
		return "an empty file"
	}
	if len(b) > n {
		return strconv.Quote(string(b[:n])) + "..."
	}
	return strconv.Quote(string(b))
}

// describe names a record's event for messages, as traceprinter would
// print its class and name.
func describe(class, ev int, t uint32) string {
	p := kevlayout.PrinterOf(class, ev)
	var name string
	switch {
	case p.Kind == kevlayout.PrintUnknown:
		name = kevlayout.Unknown + ":" + kevlayout.UnknownName(class, ev)
	case p.Kind == kevlayout.PrintUser:
		name = p.Class + ":EVENT:" + strconv.Itoa(ev)
	case p.Name == "":
		name = p.Class
	default:
		name = p.Class + ":" + p.Name
	}
	return fmt.Sprintf("%s, t:0x%08x", name, t)
}

// record processes one 16-byte record at offset off.
func (r *kevReader) record(off int64, b []byte) error {
	h := r.order.Uint32(b[0:])
	t := r.order.Uint32(b[4:])
	data := b[8:16]
	st, cpu, class, ev := kevlayout.SplitHeader(h)
	switch st {
	case kevlayout.StructSimple:
		return r.emit(off, h, t, data)
	case kevlayout.StructBegin:
		if len(r.pending) >= kevMaxPending {
			old := r.pending[0]
			_, _, oc, oe := kevlayout.SplitHeader(old.head)
			if err := r.w.BadOffset(old.off, "combine event (%s) begun here has not ended after %d more combine events began: expected its end (CE) record", describe(oc, oe, old.t), kevMaxPending); err != nil {
				return err
			}
			r.release(0)
		}
		p := r.alloc()
		p.off, p.head, p.t, p.parts, p.over = off, h, t, 1, false
		p.data = append(p.data[:0], data...)
		r.pending = append(r.pending, p)
		return nil
	}
	i := r.match(h, t, cpu)
	if i < 0 {
		return r.w.BadOffset(off, "%s record (%s) without its combine begin (CB) record", structNames[st], describe(class, ev, t))
	}
	p := r.pending[i]
	if !p.over {
		if p.parts >= kevMaxCombine {
			p.over = true
			_, _, pc, pe := kevlayout.SplitHeader(p.head)
			if err := r.w.BadOffset(p.off, "combine event (%s) begun here is longer than %d records", describe(pc, pe, p.t), kevMaxCombine); err != nil {
				return err
			}
		} else {
			p.parts++
			p.data = append(p.data, data...)
		}
	}
	if st != kevlayout.StructEnd {
		return nil
	}
	var err error
	if !p.over {
		err = r.emit(p.off, p.head, p.t, p.data)
	}
	r.release(i)
	return err
}

// match finds the pending combine event a continuation or end record
// belongs to: the oldest with its timestamp, class and event, preferring
// one of its CPU.
func (r *kevReader) match(h, t uint32, cpu int) int {
	const classEvent = 0x7fff
	any := -1
	for i, p := range r.pending {
		if p.t != t || p.head&classEvent != h&classEvent {
			continue
		}
		if int(p.head>>24)&0x3f == cpu {
			return i
		}
		if any < 0 {
			any = i
		}
	}
	return any
}

func (r *kevReader) alloc() *kevPending {
	if n := len(r.free); n > 0 {
		p := r.free[n-1]
		r.free = r.free[:n-1]
		return p
	}
	return &kevPending{}
}

func (r *kevReader) release(i int) {
	p := r.pending[i]
	copy(r.pending[i:], r.pending[i+1:])
	r.pending[len(r.pending)-1] = nil
	r.pending = r.pending[:len(r.pending)-1]
	if cap(p.data) <= 8*64 { // keep small buffers only
		r.free = append(r.free, p)
	}
}

// emit decodes one event and hands it to the sink.
func (r *kevReader) emit(off int64, h, t uint32, data []byte) error {
	_, cpu, class, ev := kevlayout.SplitHeader(h)
	if class == kevlayout.ClassEmpty && ev == 0 {
		if r.empties == 0 {
			r.emptyAt = off
		}
		r.empties++
		return nil
	}
	r.e.reset()
	r.e.pos, r.e.cpu, r.e.t = off, cpu, t
	r.dec.decode(&r.e, class, ev, data)
	return r.m.handle(&r.e)
}
