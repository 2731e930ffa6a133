package qnxenc

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/traceduck/traceduck/ingest/qnx/kevlayout"
)

// WriteKev writes a trace as the binary .kev file tracelogger writes (the
// layout is described in ingest/qnx/kev.go and ingest/qnx/kevlayout): the text
// header with h's attributes in order, a syspage of TRACE_SYSPAGE_LEN zero
// bytes when that attribute is present, then every event as 16-byte
// traceevent_t records, simple or combine as traceprinter's output of the
// event requires, with the low 32 bits of Cycles as the timestamp.
//
// The records are big endian when h has a BIG_ENDIAN attribute and little
// endian otherwise, as a reader decides; Header.LittleEndian is not
// consulted, so that one Header prints the same TRACE_* lines as text.
//
// Each event must be one traceprinter prints (or an UNKNOWN one, see
// Unknown), with its fields exactly as traceprinter prints them (see
// ingest/qnx/kevclasses.go): the writer inverts the printing and refuses,
// with an error naming the event and the field, what would not read back
// as the same event.
func WriteKev(w io.Writer, h Header, events []Event) error {
	return WriteKevOptions(w, h, events, KevOptions{})
}

// KevOptions change the layout of the records, not the events they hold.
type KevOptions struct {
	// Interleave > 0 moves the begin and continuation records of every
	// combine event back over up to that many earlier records, as when the
	// kernel's writing of a combine event is overtaken by other events
	// (the QNX documentation's "overlapping events"); the end record stays
	// in place. A reader that hands over a combine event at its end record
	// (as libtraceparser does) returns the events in their original
	// order. Parts are never moved before a pending combine event with the
	// same timestamp, class and event, which a reader could not tell
	// apart.
	Interleave int
}

// WriteKevOptions is WriteKev with options.
func WriteKevOptions(w io.Writer, h Header, events []Event, opt KevOptions) error {
	kw, err := NewKevWriter(w, h, opt)
	if err != nil {
		return err
	}
	for i := range events {
		if err := kw.Write(&events[i]); err != nil {
			return err
		}
	}
	return kw.Close()
}

// KevWriter writes a .kev file event by event (for traces too long to
// hold as a slice).
type KevWriter struct {
	bw    *bufio.Writer
	order byteOrder
	opt   KevOptions
	n     int         // events written
	win   []kevRecord // the last records, held back for Interleave
	data  []byte
}

type byteOrder interface {
	binary.ByteOrder
	binary.AppendByteOrder
}

type kevRecord struct {
	h, t uint32
	b    [16]byte
}

// kevMaxCombine is the longest combine event a reader accepts (records).
const kevMaxCombine = 1024

// MaxSyspage is the largest TRACE_SYSPAGE_LEN a reader accepts.
const MaxSyspage = 1 << 20

// NewKevWriter writes the header and syspage and returns a writer for the
// events. Close flushes it; w is not closed.
func NewKevWriter(w io.Writer, h Header, opt KevOptions) (*KevWriter, error) {
	kw := &KevWriter{bw: bufio.NewWriterSize(w, 64<<10), order: binary.LittleEndian, opt: opt}
	var little, big bool
	syspage := 0
	kw.bw.WriteString("TRACE_HEADER_BEGIN::")
	for _, a := range h.Attrs {
		key, value := a[0], a[1]
		if key == "" || strings.TrimFunc(key, func(r rune) bool {
			return r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_'
		}) != "" || len(key) > 64 {
			return nil, fmt.Errorf("qnxenc: header attribute %q: a name is letters, digits and '_'", key)
		}
		if strings.Contains(value, "TRACE_") || strings.TrimSpace(value) != value || strings.IndexFunc(value, func(r rune) bool { return r < 0x20 || r >= 0x7f }) >= 0 {
			return nil, fmt.Errorf("qnxenc: header attribute %s: value %q would not read back (it must be printable ASCII without \"TRACE_\" and surrounding blanks)", key, value)
		}
		switch key {
		case "LITTLE_ENDIAN":
			little = true
		case "BIG_ENDIAN":
			big = true
		case "MIDDLE_ENDIAN":
			return nil, errors.New("qnxenc: header attribute MIDDLE_ENDIAN: no reader accepts it")
		case "SYSPAGE_LEN":
			n, err := strconv.Atoi(value)
			if err != nil || n < 0 || n > MaxSyspage {
				return nil, fmt.Errorf("qnxenc: header attribute SYSPAGE_LEN %q: expected 0 to %d", value, MaxSyspage)
			}
			syspage = n
		}
		kw.bw.WriteString("TRACE_" + key + "::" + value)
	}
	if little && big {
		return nil, errors.New("qnxenc: header has both LITTLE_ENDIAN and BIG_ENDIAN")
	}
	if big {
		kw.order = binary.BigEndian
	}
	kw.bw.WriteString("TRACE_HEADER_END::")
	var zero [512]byte
	for syspage > 0 {
		n := min(syspage, len(zero))
		kw.bw.Write(zero[:n])
		syspage -= n
	}
	return kw, nil
}

// Write encodes one event.
func (kw *KevWriter) Write(e *Event) error {
	kw.n++
	class, ev, data, err := kw.encode(e)
	if err != nil {
		return fmt.Errorf("qnxenc: event %d (%s:%s): %w", kw.n, e.Class, e.Name, err)
	}
	if e.CPU < 0 || e.CPU > 63 {
		return fmt.Errorf("qnxenc: event %d (%s:%s): CPU %d: the header has 6 bits for it", kw.n, e.Class, e.Name, e.CPU)
	}
	t := uint32(e.Cycles)
	if len(data) == 8 {
		kw.win = append(kw.win, kw.record(kevlayout.StructSimple, e.CPU, class, ev, t, data))
		kw.flush()
		return nil
	}
	n := len(data) / 8
	if n > kevMaxCombine {
		return fmt.Errorf("qnxenc: event %d (%s:%s): %d records, more than a reader accepts (%d)", kw.n, e.Class, e.Name, n, kevMaxCombine)
	}
	// The leading parts go back over up to Interleave records, but not
	// before a part of a pending combine event they could be taken for.
	at := max(0, len(kw.win)-kw.opt.Interleave)
	key := kevlayout.HeaderWord(0, 0, class, ev)
	for i := at; i < len(kw.win); i++ {
		r := kw.win[i]
		if r.h>>30 >= kevlayout.StructCont && r.t == t && r.h&0x7fff == key {
			at = i + 1
		}
	}
	lead := make([]kevRecord, 0, n-1)
	for i := 0; i < n-1; i++ {
		st := kevlayout.StructCont
		if i == 0 {
			st = kevlayout.StructBegin
		}
		lead = append(lead, kw.record(st, e.CPU, class, ev, t, data[8*i:8*i+8]))
	}
	kw.win = append(kw.win[:at], append(lead, kw.win[at:]...)...)
	kw.win = append(kw.win, kw.record(kevlayout.StructEnd, e.CPU, class, ev, t, data[len(data)-8:]))
	kw.flush()
	return nil
}

func (kw *KevWriter) record(st, cpu, class, ev int, t uint32, data []byte) kevRecord {
	r := kevRecord{h: kevlayout.HeaderWord(st, cpu, class, ev), t: t}
	kw.order.PutUint32(r.b[0:], r.h)
	kw.order.PutUint32(r.b[4:], t)
	copy(r.b[8:], data)
	return r
}

// flush writes out the records no later record can move back over.
func (kw *KevWriter) flush() {
	if k := len(kw.win) - kw.opt.Interleave; k > 0 {
		for i := 0; i < k; i++ {
			kw.bw.Write(kw.win[i].b[:])
		}
		kw.win = append(kw.win[:0], kw.win[k:]...)
	}
}

// Close writes what is held back and flushes.
func (kw *KevWriter) Close() error {
	for i := range kw.win {
		kw.bw.Write(kw.win[i].b[:])
	}
	kw.win = kw.win[:0]
	return kw.bw.Flush()
}

// MultiLine reports whether traceprinter prints e with one field per line
// after its event line ("%26s:" key), as it prints the combine events of
// its generic callbacks (PROCCREATE_NAME with its name, a kernel call
// with all its arguments, ...): what WriteText should do for the text to
// read as the .kev does. False for an event WriteKev refuses.
func MultiLine(e *Event) bool {
	kw := KevWriter{order: binary.LittleEndian}
	class, ev, data, err := kw.encode(e)
	if err != nil {
		return false
	}
	switch p := kevlayout.PrinterOf(class, ev); p.Kind {
	case kevlayout.PrintGeneric:
		return len(data) > 8 || p.ForceWide
	case kevlayout.PrintKerExit:
		return len(data) > 8 && binary.LittleEndian.Uint32(data) != 0xffffffff
	}
	return false
}

// encode returns an event's internal class and event and its data words
// as file bytes: 8 bytes make a simple record, more a combine event.
func (kw *KevWriter) encode(e *Event) (class, ev int, data []byte, err error) {
	class, ev, ok := kevlayout.CodeOf(e.Class, e.Name)
	if !ok {
		return 0, 0, nil, errors.New("not an event traceprinter prints (class and name)")
	}
	p := kevlayout.PrinterOf(class, ev)
	if e.Class == kevlayout.Unknown && p.Kind != kevlayout.PrintUnknown {
		return 0, 0, nil, fmt.Errorf("not an event traceprinter prints: it prints %s/%d", p.Class, ev)
	}
	wide := false // a combine event even if the data would fit one record
	enc := &encoder{order: kw.order, buf: kw.data[:0]}
	defer func() { kw.data = enc.buf[:0] }()
	f := e.Fields
	switch p.Kind {
	case kevlayout.PrintUnknown:
		if e.Class != kevlayout.Unknown {
			return 0, 0, nil, errors.New("not an event traceprinter prints")
		}
		if class == kevlayout.ClassEmpty && ev == 0 {
			return 0, 0, nil, errors.New("class EMPTY event 0 is skipped by readers")
		}
		if len(f) != 2 && (len(f) < 4 || len(f)%2 != 0) {
			return 0, 0, nil, fmt.Errorf("%d data words: a record holds 2, a combine event an even number of at least 4", len(f))
		}
		for i := range f {
			if err := enc.field(f, i, "d"+strconv.Itoa(i), 'H'); err != nil {
				return 0, 0, nil, err
			}
		}
	case kevlayout.PrintGeneric, kevlayout.PrintKerExit:
		if p.Kind == kevlayout.PrintKerExit && len(f) == 2 && f[0].Key == "ret_val" && f[0].Value == "-1" && f[1].Key == "errno" {
			enc.u32(0xffffffff)
			if err := enc.field(f, 1, "errno", 'D'); err != nil {
				return 0, 0, nil, err
			}
			break
		}
		if wide, err = enc.generic(p, f); err != nil {
			return 0, 0, nil, err
		}
		if p.Kind == kevlayout.PrintKerExit && len(enc.buf) >= 4 && enc.order.Uint32(enc.buf) == 0xffffffff {
			return 0, 0, nil, fmt.Errorf("field %s: -1 as the first word prints as \"ret_val:-1, errno:N\"", f[0].Key)
		}
	case kevlayout.PrintKerInterrupted:
		if len(f) != 0 {
			return 0, 0, nil, errors.New("INT_CALL events have no fields")
		}
	case kevlayout.PrintBuffer:
		if err := enc.expect(f, "sequence", "num_events"); err != nil {
			return 0, 0, nil, err
		}
		n, err := strconv.Atoi(f[0].Value)
		if err != nil || n < 0 || n > 0x7ff || strconv.Itoa(n) != f[0].Value {
			return 0, 0, nil, fmt.Errorf("field sequence %q: expected 0 to 2047", f[0].Value)
		}
		enc.u32(uint32(n))
		if err := enc.field(f, 1, "num_events", 'D'); err != nil {
			return 0, 0, nil, err
		}
	case kevlayout.PrintIntEntry, kevlayout.PrintIntExit, kevlayout.PrintIntHandlerEntry, kevlayout.PrintIntHandlerExit:
		vec, err := parseHex8(e.Name)
		if err != nil {
			return 0, 0, nil, fmt.Errorf("name (the vector) %q: expected 0x%%08x", e.Name)
		}
		keys := map[kevlayout.PrintKind][]string{
			kevlayout.PrintIntEntry:        {"", "IP"},
			kevlayout.PrintIntExit:         {"", "inkernel"},
			kevlayout.PrintIntHandlerEntry: {"", "PID", "IP", "AREA"},
			kevlayout.PrintIntHandlerExit:  {"", "SIGEVENT"},
		}[p.Kind]
		if err := enc.expect(f, keys...); err != nil {
			return 0, 0, nil, err
		}
		if want := "(" + strconv.Itoa(int(int32(vec))) + ")"; f[0].Value != want {
			return 0, 0, nil, fmt.Errorf("positional field %q: expected %q (the vector in decimal)", f[0].Value, want)
		}
		switch p.Kind {
		case kevlayout.PrintIntEntry, kevlayout.PrintIntExit:
			enc.u32(vec)
			err = enc.field(f, 1, keys[1], 'H')
		case kevlayout.PrintIntHandlerEntry:
			if err = enc.field(f, 1, "PID", 'D'); err == nil {
				enc.u32(vec)
				if err = enc.field(f, 2, "IP", 'H'); err == nil {
					err = enc.field(f, 3, "AREA", 'H')
				}
			}
		default:
			var sev [4]uint32
			sev, err = parseSigevent(f[1].Value)
			if err == nil {
				if got := formatSigevent(sev); got != f[1].Value {
					err = fmt.Errorf("field SIGEVENT %q: prints as %q", f[1].Value, got)
				}
			}
			enc.u32(vec)
			enc.u32(sev[0])
			if sev[1] != 0 || sev[2] != 0 || sev[3] != 0 {
				enc.u32(sev[1])
				enc.u32(sev[2])
				enc.u16(uint16(sev[3]))
				enc.u16(uint16(sev[3] >> 16))
			}
		}
		if err != nil {
			return 0, 0, nil, err
		}
	case kevlayout.PrintThreadState:
		keys := []string{"pid", "tid", "priority", "policy", "partition", "sched_flags"}
		switch len(f) {
		case 2, 4, 6:
		default:
			return 0, 0, nil, fmt.Errorf("%d fields: expected pid tid [priority policy [partition sched_flags]]", len(f))
		}
		for i := range f {
			typ := byte('D')
			if i == 5 {
				typ = 'H'
			}
			if err := enc.field(f, i, keys[i], typ); err != nil {
				return 0, 0, nil, err
			}
		}
	case kevlayout.PrintUser:
		switch {
		case len(f) == 2:
			for i := range f {
				if err := enc.field(f, i, "d"+strconv.Itoa(i), 'H'); err != nil {
					return 0, 0, nil, err
				}
			}
		case len(f) == 1 && f[0].Key == "STR":
			s := f[0].Value
			if strings.IndexByte(s, 0) >= 0 || !printable(s) {
				return 0, 0, nil, fmt.Errorf("field STR %q: traceprinter prints \"\" for text with bytes that are not printable", s)
			}
			enc.buf = append(append(enc.buf, s...), 0)
			enc.buf = append(enc.buf, make([]byte, max(16, (len(enc.buf)+7)/8*8)-len(enc.buf))...)
		default:
			return 0, 0, nil, errors.New("USREVENT fields: expected d0 and d1, or STR")
		}
	}
	data = enc.buf
	if wide || len(data) > 8 {
		n := max(16, (len(data)+7)/8*8)
		data = append(data, make([]byte, n-len(data))...)
	} else {
		data = append(data, make([]byte, 8-len(data))...)
	}
	enc.buf = data
	return class, ev, data, nil
}

// encoder builds an event's data bytes.
type encoder struct {
	order byteOrder
	buf   []byte
}

func (enc *encoder) u32(v uint32) { enc.buf = enc.order.AppendUint32(enc.buf, v) }
func (enc *encoder) u16(v uint16) { enc.buf = enc.order.AppendUint16(enc.buf, v) }

// expect checks the fields' keys.
func (enc *encoder) expect(f []Field, keys ...string) error {
	if len(f) != len(keys) {
		return fmt.Errorf("%d fields, expected %d (%s)", len(f), len(keys), strings.Join(keys, " "))
	}
	for i, k := range keys {
		if f[i].Key != k {
			return fmt.Errorf("field %d is %q, expected %q", i+1, f[i].Key, k)
		}
	}
	return nil
}

// field appends field i, which must have key, as a value of type typ.
func (enc *encoder) field(f []Field, i int, key string, typ byte) error {
	if i >= len(f) || f[i].Key != key {
		return fmt.Errorf("expected field %q", key)
	}
	return enc.value(f[i], typ)
}

// value appends a numeric value written as traceprinter prints type typ.
func (enc *encoder) value(f Field, typ byte) error {
	v := f.Value
	bad := func(want string) error { return fmt.Errorf("field %s %q: expected %s", f.Key, v, want) }
	switch typ {
	case 'D':
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil || strconv.FormatInt(n, 10) != v {
			return bad("a 32-bit decimal (%d)")
		}
		enc.u32(uint32(n))
	case 'H':
		n, err := parseHex8(v)
		if err != nil {
			return bad("0x%08x")
		}
		enc.u32(n)
	case 'P':
		n, err := strconv.ParseUint(v, 16, 32)
		if err != nil || strconv.FormatUint(n, 16) != v {
			return bad("a pointer in lowercase hex without 0x (%p)")
		}
		enc.u32(uint32(n))
	case 'E':
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || strconv.FormatInt(n, 10) != v {
			return bad("a 64-bit decimal (%lld)")
		}
		enc.buf = enc.order.AppendUint64(enc.buf, uint64(n))
	case 'X':
		h, ok := strings.CutPrefix(v, "0x")
		n, err := strconv.ParseUint(h, 16, 64)
		if !ok || err != nil || strconv.FormatUint(n, 16) != h {
			return bad("0x%llx")
		}
		enc.buf = enc.order.AppendUint64(enc.buf, n)
	default:
		return fmt.Errorf("field %s: argument type %q has no value", f.Key, typ)
	}
	return nil
}

func parseHex8(v string) (uint32, error) {
	h, ok := strings.CutPrefix(v, "0x")
	if !ok || len(h) != 8 || strings.ToLower(h) != h {
		return 0, errors.New("not 0x%08x")
	}
	n, err := strconv.ParseUint(h, 16, 32)
	return uint32(n), err
}

type arg struct {
	fast bool
	typ  byte
	key  string
}

func parseArgs(args []string) []arg {
	out := make([]arg, len(args))
	for i, a := range args {
		if a[0] == 'f' {
			out[i].fast = true
			a = a[1:]
		}
		out[i].typ, out[i].key = a[0], a[1:]
	}
	return out
}

// generic inverts trace_print: the fields of a simple event (its 'f'
// arguments) if they are that, else those of a combine event (wide).
func (enc *encoder) generic(p kevlayout.Printer, f []Field) (wide bool, err error) {
	args := parseArgs(p.Args)
	if !p.ForceWide {
		err := enc.fast(args, f)
		if err == nil {
			return false, nil
		}
		if err != errNotSimple {
			return false, err // the fields are a simple event's, a value is wrong
		}
		enc.buf = enc.buf[:0]
	}
	return true, enc.wide(args, f)
}

var errNotSimple = errors.New("not the fields of a simple event")

// fast encodes the fields of a simple event.
func (enc *encoder) fast(args []arg, f []Field) error {
	fi, c := 0, 0
	for _, a := range args {
		if c >= 8 {
			break
		}
		if !a.fast {
			continue
		}
		if fi >= len(f) || f[fi].Key != a.key {
			return errNotSimple
		}
		switch a.typ {
		case 'N':
			if err := enc.name(f[fi]); err != nil {
				return err
			}
			fi++
			c = 8
		case 'S':
			if fi+1 >= len(f) || f[fi+1].Key != "" {
				return errNotSimple
			}
			h, ok := strings.CutPrefix(f[fi+1].Value, "(")
			h, ok2 := strings.CutSuffix(h, ")")
			w, err := parseHex8(h)
			if !ok || !ok2 || err != nil {
				return fmt.Errorf("positional field %q after %s: expected (0x%%08x)", f[fi+1].Value, a.key)
			}
			start := len(enc.buf)
			enc.buf = binary.LittleEndian.AppendUint32(enc.buf, w) // the hex of string parts is little endian
			if got := stringOf(enc.buf[start:]); got != f[fi].Value {
				return fmt.Errorf("field %s %q: its bytes (0x%08x) print as %q", a.key, f[fi].Value, w, got)
			}
			fi += 2
			c += 4
		default:
			if err := enc.value(f[fi], a.typ); err != nil {
				return err
			}
			fi++
			c = len(enc.buf)
		}
	}
	if fi != len(f) {
		return errNotSimple
	}
	for _, b := range enc.buf[min(8, len(enc.buf)):] {
		if b != 0 {
			return errors.New("a value runs past the two data words of a simple event")
		}
	}
	if len(enc.buf) > 8 {
		enc.buf = enc.buf[:8]
	}
	return nil
}

// wide encodes the fields of a combine event. The reader prints arguments
// while their offset is below the data's length L (a multiple of 8, at
// least 16), reading zeros past it: when the fields stop before the
// arguments do, L must fall after the start of the last value printed and
// not after its end, and what that value holds past L must be zero.
func (enc *encoder) wide(args []arg, f []Field) error {
	fi, i := 0, 0
	last := 0        // offset where the last value printed starts
	stopped := false // a name: the reader stops there whatever the length
	cut := false     // a string's words stop before the argument's do
	for ; i < len(args) && fi < len(f) && !stopped && !cut; i++ {
		a := args[i]
		if a.typ == 's' {
			return fmt.Errorf("argument %s: a string continuation without its start", a.key)
		}
		if f[fi].Key != a.key {
			return fmt.Errorf("field %d is %q, expected %q", fi+1, f[fi].Key, a.key)
		}
		last = len(enc.buf)
		switch a.typ {
		case 'N':
			if v := f[fi].Value; strings.TrimRight(v, " \t\n") != v {
				return fmt.Errorf("field %s %q: on a line of its own, its trailing blanks do not read back", a.key, v)
			}
			if err := enc.name(f[fi]); err != nil {
				return err
			}
			stopped = true
		case 'S':
			run := 1
			for i+run < len(args) && args[i+run].typ == 's' {
				run++
			}
			n, err := enc.str(f[fi], run)
			if err != nil {
				return err
			}
			last = len(enc.buf) - 4
			i += n - 1
			cut = n < run
		default:
			if err := enc.value(f[fi], a.typ); err != nil {
				return err
			}
		}
		fi++
	}
	if fi < len(f) {
		return fmt.Errorf("field %d (%s): expected no more fields", fi+1, f[fi].Key)
	}
	end := len(enc.buf)
	if stopped || i >= len(args) {
		return nil // any length from end on prints the same
	}
	l := max(16, (last/8+1)*8)
	if l > end {
		return fmt.Errorf("expected field %q (a combine event's fields stop only where its data ends, a multiple of 8 bytes)", args[i].key)
	}
	for _, b := range enc.buf[l:end] {
		if b != 0 {
			return fmt.Errorf("field %d (%s): its value runs past the end of the combine event's data", fi, f[fi-1].Key)
		}
	}
	enc.buf = enc.buf[:l]
	return nil
}

// name appends an 'N' value and its NUL.
func (enc *encoder) name(f Field) error {
	if strings.IndexByte(f.Value, 0) >= 0 || !printable(f.Value) {
		return fmt.Errorf("field %s %q: traceprinter prints nothing for a name with bytes that are not printable", f.Key, f.Value)
	}
	enc.buf = append(append(enc.buf, f.Value...), 0)
	return nil
}

// str appends a combine event's string of up to run words, written
// `"text" (0xHHHHHHHH 0x...)`, and returns how many words it had.
func (enc *encoder) str(f Field, run int) (int, error) {
	v := f.Value
	i := strings.LastIndex(v, `" (0x`)
	if len(v) == 0 || v[0] != '"' || i < 1 || !strings.HasSuffix(v, ")") {
		return 0, fmt.Errorf("field %s %q: expected \"text\" (0xHHHHHHHH ...)", f.Key, v)
	}
	text := v[1:i]
	hexes := strings.Split(v[i+len(`" (`):len(v)-1], " ")
	if len(hexes) > run {
		return 0, fmt.Errorf("field %s %q: %d words, the argument has %d", f.Key, v, len(hexes), run)
	}
	start := len(enc.buf)
	for _, h := range hexes {
		w, err := parseHex8(h)
		if err != nil {
			return 0, fmt.Errorf("field %s %q: word %q: expected 0x%%08x", f.Key, v, h)
		}
		enc.buf = binary.LittleEndian.AppendUint32(enc.buf, w) // the hex of string parts is little endian
	}
	if got := stringOf(enc.buf[start:]); got != text {
		return 0, fmt.Errorf("field %s %q: its bytes print as %q", f.Key, v, got)
	}
	return len(hexes), nil
}

// stringOf is what traceprinter prints of string parts: 4-byte parts up
// to the first that holds a NUL or a byte ck_print rejects (which prints
// as nothing).
func stringOf(b []byte) string {
	var s []byte
	for len(b) > 0 {
		part := b[:min(4, len(b))]
		b = b[len(part):]
		if z := strings.IndexByte(string(part), 0); z >= 0 {
			part = part[:z]
		}
		if !printable(string(part)) {
			break
		}
		s = append(s, part...)
		if len(part) < 4 {
			break
		}
	}
	return string(s)
}

// printable is ck_print's test: isprint or '\n'.
func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 0x20 && c < 0x7f || c == '\n') {
			return false
		}
	}
	return true
}

// parseSigevent inverts traceprinter's print_sigevent: the struct
// sigevent's words sigev_notify, signo/coid, sigev_value, and
// sigev_code | sigev_priority<<16.
func parseSigevent(s string) (w [4]uint32, err error) {
	bad := fmt.Errorf("field SIGEVENT %q: not as print_sigevent prints", s)
	if t, ok := strings.CutSuffix(s, " CRITICAL"); ok {
		s = t
		w[0] = 0x100
	}
	kind, rest, _ := strings.Cut(s, " ")
	num := func(v string, base int) (uint32, bool) {
		if base == -16 { // %#x
			if v == "0" {
				return 0, true
			}
			h, ok := strings.CutPrefix(v, "0x")
			n, err := strconv.ParseUint(h, 16, 32)
			return uint32(n), ok && err == nil
		}
		n, err := strconv.ParseInt(v, base, 64)
		return uint32(n), err == nil
	}
	pair := func(v string, b1, b2 int) (uint32, uint32, bool) {
		x, y, ok := strings.Cut(v, ":")
		a, ok1 := num(x, b1)
		b, ok2 := num(y, b2)
		return a, b, ok && ok1 && ok2
	}
	short := func(v uint32) bool { return v < 0x8000 || v >= 0xffff8000 }
	switch kind {
	case "NONE", "UNBLOCK", "INTR":
		w[0] |= map[string]uint32{"NONE": 0, "UNBLOCK": 5, "INTR": 6}[kind]
		if rest != "" {
			return w, bad
		}
	case "SIGNAL":
		n, ok := num(rest, 10)
		if !ok {
			return w, bad
		}
		w[0] |= 1
		w[1] = n
	case "SIGNAL_CODE", "SIGNAL_THREAD":
		signo, cv, ok := strings.Cut(rest, " ")
		n, ok1 := num(signo, 10)
		code, value, ok2 := pair(cv, -16, -16)
		if !ok || !ok1 || !ok2 || !short(code) {
			return w, bad
		}
		w[0] |= 2
		if kind == "SIGNAL_THREAD" {
			w[0] |= 3
		}
		w[1], w[2], w[3] = n, value, code&0xffff
	case "PULSE":
		cp, cv, ok := strings.Cut(rest, " ")
		coid, prio, ok1 := pair(cp, -16, 10)
		code, value, ok2 := pair(cv, -16, -16)
		if !ok || !ok1 || !ok2 || !short(code) || !short(prio) {
			return w, bad
		}
		w[0] |= 4
		w[1], w[2], w[3] = coid, value, code&0xffff|prio<<16
	case "THREAD":
		code, value, ok := pair(rest, 16, 16)
		if !ok || !short(code) {
			return w, bad
		}
		w[0] |= 7
		w[2], w[3] = value, code&0xffff
	default:
		n, ok := strings.CutPrefix(s, "UNKNOWN(")
		n, ok2 := strings.CutSuffix(n, ")")
		v, ok3 := num(n, -16)
		if !ok || !ok2 || !ok3 || v <= 7 || v > 0xff {
			return w, bad
		}
		w[0] |= v
	}
	return w, nil
}

// formatSigevent is print_sigevent of words as parseSigevent returns
// them, to check that a SIGEVENT value is written as it prints.
func formatSigevent(w [4]uint32) string {
	alt := func(v uint32) string {
		if v == 0 {
			return "0"
		}
		return "0x" + strconv.FormatUint(uint64(v), 16)
	}
	code := uint32(int32(int16(w[3])))
	prio := int64(int16(w[3] >> 16))
	var s string
	switch w[0] & 0xff {
	case 0:
		s = "NONE"
	case 1:
		s = "SIGNAL " + strconv.FormatUint(uint64(w[1]), 10)
	case 2, 3:
		s = "SIGNAL_CODE "
		if w[0]&0xff == 3 {
			s = "SIGNAL_THREAD "
		}
		s += strconv.FormatUint(uint64(w[1]), 10) + " " + alt(code) + ":" + alt(w[2])
	case 4:
		s = "PULSE " + alt(w[1]) + ":" + strconv.FormatInt(prio, 10) + " " + alt(code) + ":" + alt(w[2])
	case 5:
		s = "UNBLOCK"
	case 6:
		s = "INTR"
	case 7:
		s = "THREAD " + strconv.FormatUint(uint64(code), 16) + ":" + strconv.FormatUint(uint64(w[2]), 16)
	default:
		s = "UNKNOWN(" + alt(w[0]&0xff) + ")"
	}
	if w[0]&0x100 != 0 {
		s += " CRITICAL"
	}
	return s
}
