package qnx

import (
	"encoding/binary"
	"strconv"

	"github.com/traceduck/traceduck/ingest/qnx/kevlayout"
)

// This file turns the data words of one .kev event (a simple record's two
// words, or the reassembled words of a combine event) into the event
// traceprinter prints for it: its class token, name and key:value fields.
// It follows traceprinter.c 1.02 callback by callback (the tables of what
// each class/event prints are in ingest/qnx/kevlayout, with their
// sources), including its quirks, so that the .kev and the traceprinter
// text of one trace give the same events:
//
//   - A simple event (two data words) prints only the 'f' arguments of its
//     format, as "key:value" on the event's line; a combine event prints
//     every argument, each on a line of its own ("%26s:" key). Either way
//     each argument is one field.
//   - Strings ('S' then 's' arguments, 4 bytes each): traceprinter prints
//     "\"text\" (0xHHHHHHHH ...)": the text is the bytes up to the first
//     NUL, cut short at the first 4-byte part that holds a NUL or a byte
//     traceprinter's ck_print rejects (not printable and not '\n'), which
//     then prints as nothing; the hex is each part's 4 bytes as a 32-bit
//     little-endian word (traceprinter prints the raw bytes as an int of
//     its host, taken to be x86), whatever the trace's byte order. On a
//     simple event's line (one part) the field's value is the text
//     without its quotes, followed by a positional field (empty key)
//     "(0xHHHHHHHH)": msg:"" (0x00040116) is msg=`` and ``=`(0x00040116)`,
//     as the text reader splits it. On a combine event's line of its own
//     the value is the rest of the line: `"text" (0xHHHHHHHH 0x...)`.
//   - Names ('N'): the bytes from there to the first NUL, or nothing when
//     one of them is rejected by ck_print; they end the arguments. They are
//     printed on a line of their own, so trailing blanks are dropped as a
//     text reader drops them. (A name holding '\n' breaks traceprinter's
//     line; here it stays in the value.)
//   - A value read past the event's data words reads as zero (traceprinter
//     reads whatever follows in memory).
//   - KER_EXIT whose first word is -1 prints "ret_val:-1, errno:N": fields
//     ret_val=`-1` and errno=`N` (the comma is punctuation). traceprinter
//     prints errno unconverted; here it is read in the trace's byte order.
//     (traceprinter also forgets the line end after it.)
//   - USREVENT prints "EVENT:N," and two words, or "EVENT:N STR:"text"":
//     name `EVENT:N` (without the comma), fields d0 and d1, or STR with the
//     text (without the quotes; it may hold blanks and quotes).
//   - INT_HANDLER_EXIT's SIGEVENT value is the whole text print_sigevent
//     makes ("NONE", "PULSE 0x40000002:10 0x1:0x2", ...), spaces included.
//   - CONTROL BUFFER prints "sequence = N, num_events = M": fields
//     sequence and num_events.
//
// Events traceprinter has no callback for (unknown class or event codes)
// are not dropped: class UNKNOWN, name kevlayout.UnknownName (e.g.
// "KER_CALL/120"), fields d0, d1, ... = every data word as "0x%08x".

// kevArg is one argument format of traceprinter's notation, prepared.
type kevArg struct {
	fast bool // 'f' prefix: printed by simple events too
	typ  byte // H D P X E S s N
	key  []byte
}

// kevEntry is how one internal class/event prints.
type kevEntry struct {
	p     kevlayout.Printer
	class []byte
	name  []byte
	args  []kevArg
}

var (
	kevTable      [kevlayout.NumClasses][kevlayout.MaxEvent + 1]*kevEntry
	kevUnknown    = []byte(kevlayout.Unknown)
	kevDataKeys   [2 * kevMaxCombine]([]byte) // "d0", "d1", ...
	keyRetVal     = []byte("ret_val")
	keyErrno      = []byte("errno")
	keySequence   = []byte("sequence")
	keyNumEvents  = []byte("num_events")
	keyIP         = []byte("IP")
	keyInkernel   = []byte("inkernel")
	keyPID        = []byte("PID")
	keyArea       = []byte("AREA")
	keySigevent   = []byte("SIGEVENT")
	keyPid        = []byte("pid")
	keyTid        = []byte("tid")
	keyPriority   = []byte("priority")
	keyPolicy     = []byte("policy")
	keyPartition  = []byte("partition")
	keySchedFlags = []byte("sched_flags")
	keyStr        = []byte("STR")
)

func init() {
	for c := 0; c < kevlayout.NumClasses; c++ {
		for ev := 0; ev <= kevlayout.MaxEvent; ev++ {
			p := kevlayout.PrinterOf(c, ev)
			if p.Kind == kevlayout.PrintUnknown {
				continue
			}
			ent := &kevEntry{p: p, class: []byte(p.Class), name: []byte(p.Name)}
			for _, a := range p.Args {
				ka := kevArg{}
				if a[0] == 'f' {
					ka.fast = true
					a = a[1:]
				}
				ka.typ = a[0]
				ka.key = []byte(a[1:])
				ent.args = append(ent.args, ka)
			}
			kevTable[c][ev] = ent
		}
	}
	for i := range kevDataKeys {
		kevDataKeys[i] = []byte("d" + strconv.Itoa(i))
	}
}

// kevSpan is a field whose value is val[start:end] of the decoder.
type kevSpan struct {
	key        []byte
	start, end int
}

// kevDecoder renders events. Its buffers are reused: an event's byte
// slices are valid until the next decode.
type kevDecoder struct {
	big   bool // the trace's byte order
	val   []byte
	spans []kevSpan
	name  []byte
	str   []byte
	hex   []byte
}

// decode fills e's class, name and fields from the event's internal class
// and event and its data words (raw bytes in file order; 8 for a simple
// event, a multiple of 8 for a combine event).
func (d *kevDecoder) decode(e *event, class, ev int, data []byte) {
	d.val = d.val[:0]
	d.spans = d.spans[:0]
	var ent *kevEntry
	if class < kevlayout.NumClasses {
		ent = kevTable[class][ev]
	}
	if ent == nil {
		d.unknown(e, class, ev, data)
	} else {
		e.class, e.name = ent.class, ent.name
		switch ent.p.Kind {
		case kevlayout.PrintGeneric:
			d.generic(ent, data)
		case kevlayout.PrintKerExit:
			if d.word(data, 0) == 0xffffffff {
				d.add(keyRetVal, append(d.val, "-1"...))
				d.add(keyErrno, strconv.AppendInt(d.val, int64(int32(d.word(data, 4))), 10))
			} else {
				d.generic(ent, data)
			}
		case kevlayout.PrintKerInterrupted:
		case kevlayout.PrintBuffer:
			d.add(keySequence, strconv.AppendInt(d.val, int64(d.word(data, 0)&0x7ff), 10))
			d.add(keyNumEvents, strconv.AppendInt(d.val, int64(int32(d.word(data, 4))), 10))
		case kevlayout.PrintIntEntry, kevlayout.PrintIntExit, kevlayout.PrintIntHandlerExit:
			vec := d.word(data, 0)
			e.name = d.setName(appendHex8(d.name[:0], vec))
			d.add(nil, appendParenDec(d.val, vec))
			switch ent.p.Kind {
			case kevlayout.PrintIntEntry:
				d.add(keyIP, appendHex8(d.val, d.word(data, 4)))
			case kevlayout.PrintIntExit:
				d.add(keyInkernel, appendHex8(d.val, d.word(data, 4)))
			default:
				d.add(keySigevent, d.sigevent(d.val, data))
			}
		case kevlayout.PrintIntHandlerEntry:
			vec := d.word(data, 4)
			e.name = d.setName(appendHex8(d.name[:0], vec))
			d.add(nil, appendParenDec(d.val, vec))
			d.add(keyPID, strconv.AppendInt(d.val, int64(int32(d.word(data, 0))), 10))
			d.add(keyIP, appendHex8(d.val, d.word(data, 8)))
			d.add(keyArea, appendHex8(d.val, d.word(data, 12)))
		case kevlayout.PrintThreadState:
			l := len(data) / 4
			d.add(keyPid, strconv.AppendInt(d.val, int64(int32(d.word(data, 0))), 10))
			d.add(keyTid, strconv.AppendInt(d.val, int64(int32(d.word(data, 4))), 10))
			if l > 2 {
				d.add(keyPriority, strconv.AppendInt(d.val, int64(int32(d.word(data, 8))), 10))
				d.add(keyPolicy, strconv.AppendInt(d.val, int64(int32(d.word(data, 12))), 10))
				if l > 4 {
					d.add(keyPartition, strconv.AppendInt(d.val, int64(int32(d.word(data, 16))), 10))
				}
				if l > 5 {
					d.add(keySchedFlags, appendHex8(d.val, d.word(data, 20)))
				}
			}
		case kevlayout.PrintUser:
			n := append(d.name[:0], "EVENT:"...)
			e.name = d.setName(strconv.AppendInt(n, int64(ev), 10))
			if len(data) <= 8 {
				d.add(kevDataKeys[0], appendHex8(d.val, d.word(data, 0)))
				d.add(kevDataKeys[1], appendHex8(d.val, d.word(data, 4)))
			} else {
				// traceprinter ends the string at the last byte of the data
				d.add(keyStr, appendCString(d.val, data[:len(data)-1]))
			}
		}
	}
	e.fields = e.fields[:0]
	for _, s := range d.spans {
		e.appendField(s.key, d.val[s.start:s.end:s.end])
	}
}

// add records a field whose value is what v appended to d.val.
func (d *kevDecoder) add(key []byte, v []byte) {
	start := len(d.val)
	d.val = v
	d.spans = append(d.spans, kevSpan{key, start, len(v)})
}

func (d *kevDecoder) setName(n []byte) []byte {
	d.name = n
	return n
}

// word reads the 32-bit word at byte offset off; past the data it is 0.
func (d *kevDecoder) word(data []byte, off int) uint32 {
	if off+4 <= len(data) {
		return d.u32(data[off:])
	}
	var b [4]byte
	if off < len(data) {
		copy(b[:], data[off:])
	}
	return d.u32(b[:])
}

// u32, u16 and u64 read in the trace's byte order (concrete calls: the
// stack arrays they are given do not escape).
func (d *kevDecoder) u32(b []byte) uint32 {
	if d.big {
		return binary.BigEndian.Uint32(b)
	}
	return binary.LittleEndian.Uint32(b)
}

func (d *kevDecoder) u16(b []byte) uint16 {
	if d.big {
		return binary.BigEndian.Uint16(b)
	}
	return binary.LittleEndian.Uint16(b)
}

func (d *kevDecoder) u64(b []byte) uint64 {
	if d.big {
		return binary.BigEndian.Uint64(b)
	}
	return binary.LittleEndian.Uint64(b)
}

// rawWord reads the 4 bytes at off as traceprinter prints string parts:
// the raw bytes as an unsigned int of the host, which this takes to be
// little endian (x86), whatever the trace's byte order.
func rawWord(data []byte, off int) uint32 {
	var b [4]byte
	if off < len(data) {
		copy(b[:], data[off:])
	}
	return binary.LittleEndian.Uint32(b[:])
}

// word64 reads the 64-bit value at byte offset off, in the trace's byte
// order, zeros past the data.
func (d *kevDecoder) word64(data []byte, off int) uint64 {
	var b [8]byte
	if off < len(data) {
		copy(b[:], data[off:])
	}
	return d.u64(b[:])
}

func (d *kevDecoder) unknown(e *event, class, ev int, data []byte) {
	e.class = kevUnknown
	e.name = d.setName(append(d.name[:0], kevlayout.UnknownName(class, ev)...))
	for i := 0; i*4 < len(data) && i < len(kevDataKeys); i++ {
		d.add(kevDataKeys[i], appendHex8(d.val, d.word(data, 4*i)))
	}
}

// generic is traceprinter's trace_print.
func (d *kevDecoder) generic(ent *kevEntry, data []byte) {
	l := len(data) / 4
	if ent.p.ForceWide && l == 2 {
		l = 3 // s_aps_name: "if ( l == 2 ) l++;"
	}
	lim := 4 * l
	c := 0
	if l == 2 {
		for i := range ent.args {
			a := &ent.args[i]
			if c >= lim {
				break
			}
			if !a.fast {
				continue
			}
			switch a.typ {
			case 'N':
				d.add(a.key, appendCString(d.val, tail(data, c)))
				return
			case 'S':
				ch, _ := chunk(data, c)
				d.add(a.key, append(d.val, ch...))
				v := append(d.val, '(')
				d.add(nil, append(appendHex8(v, rawWord(data, c)), ')'))
				c += 4
			default:
				c = d.number(a, data, c)
			}
		}
		return
	}
	// Wide: every argument; a run of S/s string parts is one field.
	run := -1 // index in d.spans of the open string field
	strDone := false
	d.str, d.hex = d.str[:0], d.hex[:0]
	flush := func() {
		if run < 0 {
			return
		}
		v := append(d.val, '"')
		v = append(v, d.str...)
		v = append(v, `" (0x`...)
		v = append(v, d.hex...)
		v = append(v, ')')
		start := len(d.val)
		d.val = v
		d.spans[run].start, d.spans[run].end = start, len(v)
		run = -1
		d.str, d.hex = d.str[:0], d.hex[:0]
	}
	for i := range ent.args {
		a := &ent.args[i]
		if c >= lim {
			break
		}
		if a.typ != 's' {
			flush()
		}
		switch a.typ {
		case 'N':
			// on a line of its own, whose trailing blanks a reader of
			// the text does not see
			d.add(a.key, trimRightBlank(appendCString(d.val, tail(data, c)), len(d.val)))
			return
		case 'S', 's':
			if run < 0 {
				d.spans = append(d.spans, kevSpan{key: a.key})
				run = len(d.spans) - 1
				strDone = false
			} else {
				d.hex = append(d.hex, " 0x"...)
			}
			if !strDone {
				ch, full := chunk(data, c)
				d.str = append(d.str, ch...)
				strDone = !full
			}
			d.hex = appendHex(d.hex, rawWord(data, c), 8)
			c += 4
		default:
			c = d.number(a, data, c)
		}
	}
	flush()
}

// number prints a numeric argument and returns the offset after it.
func (d *kevDecoder) number(a *kevArg, data []byte, c int) int {
	switch a.typ {
	case 'D':
		d.add(a.key, strconv.AppendInt(d.val, int64(int32(d.word(data, c))), 10))
	case 'H':
		d.add(a.key, appendHex8(d.val, d.word(data, c)))
	case 'P':
		d.add(a.key, strconv.AppendUint(d.val, uint64(d.word(data, c)), 16))
	case 'E':
		d.add(a.key, strconv.AppendInt(d.val, int64(d.word64(data, c)), 10))
		return c + 8
	case 'X':
		d.add(a.key, strconv.AppendUint(append(d.val, "0x"...), d.word64(data, c), 16))
		return c + 8
	default:
		d.add(a.key, d.val) // traceprinter prints the key and nothing
		return c
	}
	return c + 4
}

// SIGEV_* of <sys/siginfo.h>.
const (
	sigevNone         = 0
	sigevSignal       = 1
	sigevSignalCode   = 2
	sigevSignalThread = 3
	sigevPulse        = 4
	sigevUnblock      = 5
	sigevIntr         = 6
	sigevThread       = 7
	sigevTypeMask     = 0xff
	sigevFlagCritical = 0x100
)

// sigevent is traceprinter's print_sigevent of the struct sigevent that
// starts at the second data word: sigev_notify, the signo/coid union,
// sigev_value, then the shorts sigev_code and sigev_priority.
func (d *kevDecoder) sigevent(v []byte, data []byte) []byte {
	notify := d.word(data, 4)
	signo := d.word(data, 8)
	value := d.word(data, 12)
	var b [4]byte
	if len(data) > 16 {
		copy(b[:], data[16:])
	}
	code := uint32(int32(int16(d.u16(b[0:]))))
	prio := int64(int16(d.u16(b[2:])))
	critical := notify&sigevFlagCritical != 0
	notify &= sigevTypeMask
	switch notify {
	case sigevSignal:
		v = strconv.AppendUint(append(v, "SIGNAL "...), uint64(signo), 10)
	case sigevSignalCode, sigevSignalThread:
		if notify == sigevSignalCode {
			v = append(v, "SIGNAL_CODE "...)
		} else {
			v = append(v, "SIGNAL_THREAD "...)
		}
		v = strconv.AppendUint(v, uint64(signo), 10)
		v = appendAltHex(append(v, ' '), code)
		v = appendAltHex(append(v, ':'), value)
	case sigevPulse:
		v = appendAltHex(append(v, "PULSE "...), signo)
		v = strconv.AppendInt(append(v, ':'), prio, 10)
		v = appendAltHex(append(v, ' '), code)
		v = appendAltHex(append(v, ':'), value)
	case sigevUnblock:
		v = append(v, "UNBLOCK"...)
	case sigevIntr:
		v = append(v, "INTR"...)
	case sigevThread:
		v = strconv.AppendUint(append(v, "THREAD "...), uint64(code), 16)
		v = strconv.AppendUint(append(v, ':'), uint64(value), 16)
	case sigevNone:
		v = append(v, "NONE"...)
	default:
		v = append(appendAltHex(append(v, "UNKNOWN("...), notify), ')')
	}
	if critical {
		v = append(v, " CRITICAL"...)
	}
	return v
}

// trimRightBlank drops trailing white space from v[start:].
func trimRightBlank(v []byte, start int) []byte {
	for len(v) > start && (v[len(v)-1] == ' ' || v[len(v)-1] == '\n' || v[len(v)-1] == '\t') {
		v = v[:len(v)-1]
	}
	return v
}

// tail returns data from off on.
func tail(data []byte, off int) []byte {
	if off >= len(data) {
		return nil
	}
	return data[off:]
}

// isPrint is C's isprint in the C locale, and ck_print's exception for
// '\n'.
func isPrint(c byte) bool { return c >= 0x20 && c < 0x7f || c == '\n' }

// chunk is traceprinter's "%.4s" of ck_print(4, p): up to 4 bytes ending
// at the first NUL, or nothing when one of them is not printable. full
// reports 4 bytes printed (a string of several parts goes on).
func chunk(data []byte, off int) (ch []byte, full bool) {
	b := tail(data, off)
	if len(b) > 4 {
		b = b[:4]
	}
	for i, c := range b {
		if c == 0 {
			b = b[:i]
			break
		}
		if !isPrint(c) {
			return nil, false
		}
	}
	return b, len(b) == 4
}

// appendCString appends CK_PRN(p): the bytes up to the first NUL (or the
// end), or nothing when one of them is not printable.
func appendCString(v, b []byte) []byte {
	for i, c := range b {
		if c == 0 {
			b = b[:i]
			break
		}
		if !isPrint(c) {
			return v
		}
	}
	return append(v, b...)
}

const hexDigits = "0123456789abcdef"

// appendHex appends v in lowercase hex, zero-padded to width digits.
func appendHex(v []byte, x uint32, width int) []byte {
	var b [8]byte
	n := 0
	for i := 7; i >= 0; i-- {
		b[i] = hexDigits[x&0xf]
		x >>= 4
		if b[i] != '0' {
			n = 8 - i
		}
	}
	if n < width {
		n = width
	}
	return append(v, b[8-n:]...)
}

// appendHex8 is "0x%08x".
func appendHex8(v []byte, x uint32) []byte {
	return appendHex(append(v, "0x"...), x, 8)
}

// appendAltHex is "%#x": 0 prints as "0", anything else with "0x".
func appendAltHex(v []byte, x uint32) []byte {
	if x == 0 {
		return append(v, '0')
	}
	return appendHex(append(v, "0x"...), x, 1)
}

// appendParenDec is "(%d)".
func appendParenDec(v []byte, x uint32) []byte {
	v = strconv.AppendInt(append(v, '('), int64(int32(x)), 10)
	return append(v, ')')
}
