package qnxenc

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/ingest/qnx/kevlayout"
)

func fields(kv ...string) []Field {
	var f []Field
	for i := 0; i+1 < len(kv); i += 2 {
		f = append(f, Field{Key: kv[i], Value: kv[i+1]})
	}
	return f
}

func kev(t *testing.T, h Header, opt KevOptions, evs ...Event) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteKevOptions(&buf, h, evs, opt); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestWriteKevHeader(t *testing.T) {
	h := Header{Attrs: [][2]string{{"FILE_NAME", "a.kev"}, {"SYSPAGE_LEN", "4"}, {"CYCLES_PER_SEC", "1000"}}}
	got := kev(t, h, KevOptions{})
	want := "TRACE_HEADER_BEGIN::TRACE_FILE_NAME::a.kevTRACE_SYSPAGE_LEN::4TRACE_CYCLES_PER_SEC::1000TRACE_HEADER_END::\x00\x00\x00\x00"
	if string(got) != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// TestWriteKevRecords checks the bytes of records against <sys/trace.h>:
// header word S/CB/CC/CE in bits 31-30, CPU in 29-24, internal class in
// 14-10, event in 9-0, then the timestamp and two data words.
func TestWriteKevRecords(t *testing.T) {
	for _, tc := range []struct {
		name  string
		big   bool
		ev    Event
		words []uint32 // header, t, d1, d2 per record
	}{
		{"thread state", false, Event{CPU: 3, Cycles: 0x1_0000_0005, Class: "THREAD", Name: "THRUNNING", Fields: fields("pid", "1", "tid", "-2")},
			[]uint32{0x03001001, 5, 1, 0xfffffffe}},
		{"thread state big endian", true, Event{CPU: 3, Cycles: 5, Class: "THREAD", Name: "THRUNNING", Fields: fields("pid", "1", "tid", "-2")},
			[]uint32{0x03001001, 5, 1, 0xfffffffe}},
		{"kernel call exit", false, Event{Cycles: 7, Class: "KER_EXIT", Name: "MSG_SENDV/11", Fields: fields("ret_val", "-1", "errno", "3")},
			[]uint32{2<<10 | 139, 7, 0xffffffff, 3}},
		{"interrupted kernel call", false, Event{Cycles: 7, Class: "INT_CALL", Name: "KER_MSG_SENDV/11"},
			[]uint32{2<<10 | 267, 7, 0, 0}},
		{"process created with a name", false, Event{CPU: 1, Cycles: 9, Class: "PROCESS", Name: "PROCCREATE_NAME", Fields: fields("ppid", "1", "pid", "2", "name", "abcdefghij")},
			[]uint32{
				1<<30 | 1<<24 | 4<<10 | 192, 9, 1, 2,
				2<<30 | 1<<24 | 4<<10 | 192, 9, 0x64636261, 0x68676665,
				3<<30 | 1<<24 | 4<<10 | 192, 9, 0x00006a69, 0}},
		{"interrupt handler entry", false, Event{Cycles: 9, Class: "INT_HANDLER_ENTR", Name: "0x00000007", Fields: fields("", "(7)", "PID", "5", "IP", "0x00001000", "AREA", "0x00002000")},
			[]uint32{1<<30 | 3<<10 | 3, 9, 5, 7, 3<<30 | 3<<10 | 3, 9, 0x1000, 0x2000}},
		{"user event", false, Event{Cycles: 9, Class: "USREVENT", Name: "EVENT:1023", Fields: fields("d0", "0x00000001", "d1", "0x00000002")},
			[]uint32{6<<10 | 1023, 9, 1, 2}},
		{"control time", false, Event{Cycles: 9, Class: "CONTROL", Name: "TIME", Fields: fields("msb", "0x000037b0", "lsb(offset)", "0x4f81e014")},
			[]uint32{1<<10 | 1, 9, 0x37b0, 0x4f81e014}},
		{"a value past the end of a combine event's data reads as zero", false, Event{Class: "SYSTEM", Name: "MMAP", Fields: fields("pid", "7", "vaddr", "0x7fff12345000", "len", "0x1000")},
			[]uint32{1<<30 | 5<<10 | 6, 0, 7, 0x12345000, 3<<30 | 5<<10 | 6, 0, 0x7fff, 0x1000}},
		{"unknown", false, Event{CPU: 63, Cycles: 9, Class: "UNKNOWN", Name: "CLASS31/1023", Fields: fields("d0", "0x00000001", "d1", "0x00000002")},
			[]uint32{63<<24 | 31<<10 | 1023, 9, 1, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := Header{}
			var order byteOrder = binary.LittleEndian
			if tc.big {
				h.Attrs = [][2]string{{"BIG_ENDIAN", "TRUE"}}
				order = binary.BigEndian
			}
			head := kev(t, h, KevOptions{})
			got := kev(t, h, KevOptions{}, tc.ev)[len(head):]
			var want []byte
			for _, w := range tc.words {
				want = order.AppendUint32(want, w)
			}
			if tc.name == "process created with a name" {
				// the name's bytes are in file order, whatever the words say
				copy(want[24:], "abcdefgh")
				copy(want[40:], "ij\x00\x00\x00\x00\x00\x00")
			}
			if !bytes.Equal(got, want) {
				t.Errorf("got\n%s\nwant\n%s", hex.Dump(got), hex.Dump(want))
			}
		})
	}
}

// records splits the record part of a .kev into header words.
func records(t *testing.T, data []byte, head int) []uint32 {
	var hs []uint32
	for b := data[head:]; len(b) >= 16; b = b[16:] {
		hs = append(hs, binary.LittleEndian.Uint32(b[4:])<<8|binary.LittleEndian.Uint32(b)>>30)
	}
	return hs
}

func TestWriteKevInterleave(t *testing.T) {
	a := Event{Cycles: 1, Class: "THREAD", Name: "THREADY", Fields: fields("pid", "1", "tid", "1")}
	b := Event{Cycles: 2, Class: "THREAD", Name: "THREADY", Fields: fields("pid", "1", "tid", "2")}
	c := Event{Cycles: 3, Class: "PROCESS", Name: "PROCCREATE_NAME", Fields: fields("ppid", "1", "pid", "2", "name", "abcdefghij")}
	d := Event{Cycles: 3, Class: "PROCESS", Name: "PROCCREATE_NAME", Fields: fields("ppid", "1", "pid", "3", "name", "x")}
	head := len(kev(t, Header{}, KevOptions{}))
	// each record as timestamp<<8 | structure flag
	for _, tc := range []struct {
		il   int
		evs  []Event
		want []uint32
	}{
		{0, []Event{a, b, c}, []uint32{1 << 8, 2 << 8, 3<<8 | 1, 3<<8 | 2, 3<<8 | 3}},
		{1, []Event{a, b, c}, []uint32{1 << 8, 3<<8 | 1, 3<<8 | 2, 2 << 8, 3<<8 | 3}},
		{5, []Event{a, b, c}, []uint32{3<<8 | 1, 3<<8 | 2, 1 << 8, 2 << 8, 3<<8 | 3}},
		// c and d are alike: d's parts stay after c's end
		{5, []Event{a, c, d}, []uint32{3<<8 | 1, 3<<8 | 2, 1 << 8, 3<<8 | 3, 3<<8 | 1, 3<<8 | 3}},
	} {
		got := records(t, kev(t, Header{}, KevOptions{Interleave: tc.il}, tc.evs...), head)
		if len(got) != len(tc.want) {
			t.Errorf("interleave %d: records %x, want %x", tc.il, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("interleave %d: records %x, want %x", tc.il, got, tc.want)
				break
			}
		}
	}
}

func TestWriteKevErrors(t *testing.T) {
	ev := func(class, name string, kv ...string) Event {
		return Event{Class: class, Name: name, Fields: fields(kv...)}
	}
	for _, tc := range []struct {
		h    Header
		ev   Event
		want string
	}{
		{Header{}, ev("THREAD", "THRUNNING", "pid", "1", "tid", "+2"), `field tid "+2": expected a 32-bit decimal (%d)`},
		{Header{}, ev("THREAD", "THRUNNING", "pid", "1"), `1 fields: expected pid tid [priority policy [partition sched_flags]]`},
		{Header{}, ev("THREAD", "THRUN", "pid", "1", "tid", "1"), `not an event traceprinter prints (class and name)`},
		{Header{}, ev("KER_CALL", "MSG_SENDV/12", "coid", "0x00000000"), `not an event traceprinter prints (class and name)`},
		{Header{}, ev("KER_CALL", "MSG_REPLYV/15", "rcvid", "0x4f", "status", "0x00000000"), `field rcvid "0x4f": expected 0x%08x`},
		{Header{}, ev("KER_CALL", "THREAD_CREATE/46", "func_p", "0xf0023170", "arg_p", "eff6e000"), `field func_p "0xf0023170": expected a pointer in lowercase hex without 0x (%p)`},
		{Header{}, ev("KER_CALL", "MSG_SENDV/11", "coid", "0x00000000", "msg", "ab", "", "(0x00636261)"), `field msg "ab": its bytes (0x00636261) print as "abc"`},
		{Header{}, ev("KER_CALL", "THREAD_DESTROY/47", "tid", "1", "priority", "10"), `expected field "status_p" (a combine event's fields stop only where its data ends, a multiple of 8 bytes)`},
		{Header{}, ev("KER_EXIT", "MSG_ERROR/13", "ret_val", "-1", "empty", "0x00000000"), `field ret_val: -1 as the first word prints as "ret_val:-1, errno:N"`},
		{Header{}, ev("INT_ENTR", "0x00000001", "", "(2)", "IP", "0x00000000"), `positional field "(2)": expected "(1)" (the vector in decimal)`},
		{Header{}, ev("INT_HANDLER_EXIT", "0x00000001", "", "(1)", "SIGEVENT", "PULSE 0x1:0 0x00000002:0"), `field SIGEVENT "PULSE 0x1:0 0x00000002:0": prints as "PULSE 0x1:0 0x2:0"`},
		{Header{}, ev("INT_HANDLER_EXIT", "0x00000001", "", "(1)", "SIGEVENT", "SOMETIMES"), `field SIGEVENT "SOMETIMES": not as print_sigevent prints`},
		{Header{}, ev("USREVENT", "EVENT:05", "d0", "0x00000000", "d1", "0x00000000"), `not an event traceprinter prints (class and name)`},
		{Header{}, ev("USREVENT", "EVENT:5", "STR", "tab\there"), `field STR "tab\there": traceprinter prints "" for text with bytes that are not printable`},
		{Header{}, ev("PROCESS", "PROCCREATE_NAME", "ppid", "1", "pid", "2", "name", "trailing "), `field name "trailing ": on a line of its own, its trailing blanks do not read back`},
		{Header{Attrs: [][2]string{{"BIG_ENDIAN", "TRUE"}}}, ev("SYSTEM", "MMAP", "pid", "7", "vaddr", "0x7fff12345000", "len", "0x1000"), `field 3 (len): its value runs past the end of the combine event's data`},
		{Header{}, ev("CONTROL", "BUFFER", "sequence", "2048", "num_events", "1"), `field sequence "2048": expected 0 to 2047`},
		{Header{}, ev("UNKNOWN", "KER_CALL/11", "d0", "0x00000000", "d1", "0x00000000"), `not an event traceprinter prints`},
		{Header{}, ev("UNKNOWN", "KER_CALL/120", "d0", "0x00000000"), `1 data words: a record holds 2, a combine event an even number of at least 4`},
		{Header{}, ev("UNKNOWN", "EMPTY/0", "d0", "0x00000000", "d1", "0x00000000"), `class EMPTY event 0 is skipped by readers`},
		{Header{}, Event{CPU: 64, Class: "THREAD", Name: "THREADY", Fields: fields("pid", "1", "tid", "1")}, `CPU 64: the header has 6 bits for it`},
		{Header{Attrs: [][2]string{{"FILE_NAME", "TRACE_x"}}}, Event{}, `value "TRACE_x" would not read back`},
		{Header{Attrs: [][2]string{{"FILE NAME", "x"}}}, Event{}, `a name is letters, digits and '_'`},
		{Header{Attrs: [][2]string{{"LITTLE_ENDIAN", "TRUE"}, {"BIG_ENDIAN", "TRUE"}}}, Event{}, `both LITTLE_ENDIAN and BIG_ENDIAN`},
		{Header{Attrs: [][2]string{{"SYSPAGE_LEN", "2000000"}}}, Event{}, `expected 0 to 1048576`},
	} {
		var buf bytes.Buffer
		err := WriteKev(&buf, tc.h, []Event{tc.ev})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s:%s: got error %v, want one with %q", tc.ev.Class, tc.ev.Name, err, tc.want)
		}
	}
}

// TestPrinterTables checks the tables against each other: every printer
// has a code that maps back to it, and every argument format is one
// traceprinter knows.
func TestPrinterTables(t *testing.T) {
	n := 0
	for c := 0; c < kevlayout.NumClasses; c++ {
		for ev := 0; ev <= kevlayout.MaxEvent; ev++ {
			p := kevlayout.PrinterOf(c, ev)
			if p.Kind == kevlayout.PrintUnknown {
				if gc, ge, ok := kevlayout.ParseUnknownName(kevlayout.UnknownName(c, ev)); !ok || gc != c || ge != ev {
					t.Errorf("UnknownName(%d, %d) = %q does not parse back", c, ev, kevlayout.UnknownName(c, ev))
				}
				continue
			}
			n++
			if p.Name != "" {
				if gc, ge, ok := kevlayout.CodeOf(p.Class, p.Name); !ok || gc != c || ge != ev {
					t.Errorf("CodeOf(%q, %q) = %d, %d, %v; want %d, %d", p.Class, p.Name, gc, ge, ok, c, ev)
				}
			}
			for i, a := range p.Args {
				b := strings.TrimPrefix(a, "f")
				if b == "" || !strings.ContainsRune("HDPXESsN", rune(b[0])) || (b[0] != 's' && len(b) < 2) {
					t.Errorf("%s:%s: argument %q", p.Class, p.Name, a)
				}
				if b[0] == 's' && (i == 0 || !strings.ContainsAny(p.Args[i-1], "Ss")) {
					t.Errorf("%s:%s: string continuation %d without a start", p.Class, p.Name, i)
				}
			}
		}
	}
	// 101 kernel calls × 3, 21 thread states × 2, 4 thread/vthread
	// create/destroy, 5 process events, 2 control, 4 interrupt, 11 system,
	// 12 comm and 1024 user events.
	if want := 101*3 + 21*2 + 4 + 5 + 2 + 4 + 11 + 12 + 1024; n != want {
		t.Errorf("%d printers, want %d", n, want)
	}
	if c, ev, ok := kevlayout.CodeOf("INT_CALL", "KER_NET_SPARE2/99"); !ok || c != kevlayout.ClassKerCall || ev != 99+kevlayout.KerInterrupt {
		t.Errorf("INT_CALL KER_NET_SPARE2/99: %d %d %v", c, ev, ok)
	}
	if c, ev, ok := kevlayout.CodeOf("KER_EXIT", "SYNC_CONDVAR_SIG/83"); !ok || c != kevlayout.ClassKerCall || ev != 83+kevlayout.KerExit {
		t.Errorf("KER_EXIT SYNC_CONDVAR_SIG/83: %d %d %v", c, ev, ok)
	}
}

func TestMultiLine(t *testing.T) {
	for _, tc := range []struct {
		e    Event
		want bool
	}{
		{Event{Class: "PROCESS", Name: "PROCCREATE_NAME", Fields: fields("ppid", "1", "pid", "2", "name", "a")}, true},
		{Event{Class: "PROCESS", Name: "PROCCREATE_NAME", Fields: fields("ppid", "1", "pid", "2")}, false},
		{Event{Class: "KER_CALL", Name: "THREAD_DESTROY/47", Fields: fields("tid", "-1", "priority", "10", "status_p", "0")}, true},
		{Event{Class: "KER_CALL", Name: "THREAD_DESTROY/47", Fields: fields("tid", "-1", "status_p", "0")}, false},
		{Event{Class: "KER_EXIT", Name: "THREAD_DESTROY/47", Fields: fields("ret_val", "-1", "errno", "3")}, false},
		{Event{Class: "SYSTEM", Name: "APS_NAME", Fields: fields("partition_id", "1", "name", "x")}, true},
		{Event{Class: "THREAD", Name: "THRUNNING", Fields: fields("pid", "1", "tid", "1", "priority", "10", "policy", "2")}, false},
		{Event{Class: "USREVENT", Name: "EVENT:1", Fields: fields("STR", "hello")}, false},
		{Event{Class: "THREAD", Name: "THRUNNING"}, false},
	} {
		if got := MultiLine(&tc.e); got != tc.want {
			t.Errorf("MultiLine(%s:%s %v) = %v", tc.e.Class, tc.e.Name, tc.e.Fields, got)
		}
	}
}

func TestSigevent(t *testing.T) {
	for _, s := range []string{
		"NONE", "UNBLOCK", "INTR", "INTR CRITICAL", "SIGNAL 0", "SIGNAL 4294967295",
		"SIGNAL_CODE 17 0x7fff:0xdeadbeef", "SIGNAL_THREAD 2 0xffff8000:0", "PULSE 0x40000002:10 0x1:0x2a",
		"PULSE 0:-32768 0xffffffff:0 CRITICAL", "THREAD ffffffff:1234", "UNKNOWN(0x8)", "UNKNOWN(0xff) CRITICAL",
	} {
		w, err := parseSigevent(s)
		if err != nil {
			t.Errorf("%q: %v", s, err)
			continue
		}
		if got := formatSigevent(w); got != s {
			t.Errorf("%q prints back as %q", s, got)
		}
	}
	for _, s := range []string{"", "SIGNAL", "SIGNAL x", "PULSE 0x1:0x2 0x3:0x4", "SIGNAL_CODE 1 0x10000:0", "UNKNOWN(0x7)", "UNKNOWN(0x100)", "NONE extra"} {
		if w, err := parseSigevent(s); err == nil && formatSigevent(w) == s {
			t.Errorf("%q accepted", s)
		}
	}
}
