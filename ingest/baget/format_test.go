package baget

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// TestShow: Show(v, F) of every format, worked out by hand: the field's
// width decides the bits hex, oct, bin, ptr and char see; dec and enum
// read signed types as signed; unknown enum values fall back to decimal,
// unknown flag bits to one 0x.. mask.
func TestShow(t *testing.T) {
	enum := &Format{Kind: FmtEnum, Names: []FormatName{
		{V: 0, Name: "thrRun"}, {V: 2, Name: "thrNotReady"}, {V: 1, Name: "thrReady"},
		{V: uint64(1<<64 - 22), Neg: true, Name: "EINVAL"},
	}}
	enum.finish()
	flags := &Format{Kind: FmtFlags, Names: []FormatName{{V: 4, Name: "BLOCKED"}, {V: 3, Name: "READY"}, {V: 0, Name: "FPU"}, {V: 63, Name: "TOP"}}}
	flags.finish()
	f := func(k FormatKind) *Format { return &Format{Kind: k} }
	neg := func(i int64) uint64 { return uint64(i) } // sign-extended as raw() reads a signed field
	for _, c := range []struct {
		f      *Format
		v      uint64
		size   int
		signed bool
		want   string
	}{
		{f(FmtDec), 42, 4, false, "42"},
		{f(FmtDec), neg(-1), 1, true, "-1"},
		{f(FmtDec), 0xff, 1, true, "-1"}, // not sign-extended by the caller: the width decides
		{f(FmtDec), 0xff, 1, false, "255"},
		{f(FmtDec), math.MaxUint64, 8, false, "18446744073709551615"},
		{f(FmtDec), neg(math.MinInt64), 8, true, "-9223372036854775808"},
		{f(FmtHex), 42, 4, false, "0x2a"},
		{f(FmtHex), 0, 4, false, "0x0"},
		{f(FmtHex), neg(-1), 1, true, "0xff"},
		{f(FmtHex), neg(-2), 2, true, "0xfffe"},
		{f(FmtHex), neg(-1), 8, true, "0xffffffffffffffff"},
		{f(FmtHex), 0x8000000000000000, 8, false, "0x8000000000000000"},
		{f(FmtOct), 0o755, 2, false, "0755"},
		{f(FmtOct), 0, 2, false, "0"},
		{f(FmtOct), neg(-1), 1, true, "0377"},
		{f(FmtBin), 5, 1, false, "0b101"},
		{f(FmtBin), 0, 1, false, "0b0"},
		{f(FmtBin), neg(-1), 1, true, "0b11111111"},
		{f(FmtPtr), 0x1000, 4, false, "0x00001000"},
		{f(FmtPtr), 0x1000, 8, false, "0x0000000000001000"},
		{f(FmtPtr), 0, 4, false, "0x00000000"},
		{f(FmtPtr), neg(-1), 2, true, "0xffff"},
		{f(FmtChar), 'A', 1, true, "'A'"},
		{f(FmtChar), 0, 1, true, `'\0'`},
		{f(FmtChar), 7, 1, false, `'\x07'`},
		{f(FmtChar), '\n', 1, false, `'\n'`},
		{f(FmtChar), '\t', 1, false, `'\t'`},
		{f(FmtChar), '\r', 1, false, `'\r'`},
		{f(FmtChar), '\'', 1, false, `'\''`},
		{f(FmtChar), '\\', 1, false, `'\\'`},
		{f(FmtChar), 0x7f, 1, false, `'\x7f'`},
		{f(FmtChar), neg(-23), 1, true, `'\xe9'`}, // é in Latin-1 through a signed char
		{f(FmtChar), 0x54534b00 | 'X', 4, false, "'TSKX'"},
		{f(FmtChar), 'O'<<8 | 'K', 4, false, "'OK'"}, // leading zero bytes dropped
		{f(FmtChar), 'A' << 8, 2, false, `'A\0'`},    // trailing ones kept
		{enum, 1, 1, false, "thrReady"},
		{enum, 2, 1, false, "thrNotReady"},
		{enum, 7, 1, false, "7"},
		{enum, neg(-22), 4, true, "EINVAL"},
		{enum, 0xffffffea, 4, true, "EINVAL"}, // -22 in 32 bits, not sign-extended
		{enum, neg(-5), 4, true, "-5"},
		{enum, 0xffffffea, 4, false, "4294967274"}, // unsigned: not -22
		{flags, 0, 1, false, "0"},
		{flags, 1 << 3, 1, false, "READY"},
		{flags, 1<<3 | 1<<4 | 1, 1, false, "FPU|READY|BLOCKED"},
		{flags, 1<<3 | 1<<6, 1, false, "READY|0x40"},
		{flags, 1<<6 | 1<<7, 1, false, "0xc0"},
		{flags, neg(-1), 1, true, "FPU|READY|BLOCKED|0xe6"}, // the 8 bits of a signed char
		{flags, 1<<63 | 1<<40, 8, false, "TOP|0x10000000000"},
	} {
		got := c.f.Show(c.v, c.size, c.signed)
		if got != c.want {
			t.Errorf("%v Show(%#x, size %d, signed %v) = %s, want %s", c.f.Kind, c.v, c.size, c.signed, got, c.want)
		}
	}
}

// TestFormatArgs: events.args of a record whose fields have formats
// (testdata/formats_be32.xml): every value keeps its number under its
// name, and its display string follows under NAME# (docs 2.11); the
// record's numbers are written here, the strings worked out by hand.
func TestFormatArgs(t *testing.T) {
	d := loadDesc(t, "testdata/formats_be32.xml")
	w := newRec(t, d, "SHOW", 0)
	w.set("t", 0, 5).set("thread", 0, 0x1f00).set("state", 0, 2).set("prev_state", 0, 9).set("opts", 0, 1<<3|1<<4|1<<6).
		set("err", 0, uint64(0xffffffea)).set("mask", 0, 0b1010).set("id", 0, uint64(math.MaxUint64)).set("tag", 0, 'T'<<16|'S'<<8|'K').
		set("big", 0, 1<<63|1).set("regs.pc", 0, 0x8000).set("regs.msr", 0, 1<<15|1<<1).
		set("prio", 0, 0xfe).set("prio", 1, 3).set("kind", 0, 1).set("a.ch", 0, '\n')
	got := string(d.AppendArgs(nil, w.ev, w.rec))
	want := `{"t":5,"thread":7936,"thread#":"0x00001f00","state":2,"state#":"thrNotReady","prev_state":9,"prev_state#":"9",` +
		`"opts":88,"opts#":"READY|BLOCKED|0x40","err":-22,"err#":"EINVAL","mask":10,"mask#":"0b1010",` +
		`"id":-1,"id#":"0xffffffffffffffff","tag":5526347,"tag#":"'TSK'","big":9223372036854775809,"big#":"LOW|TOP",` +
		`"regs.pc":"0x8000","regs.pc#":"0x00008000","regs.msr":32770,"regs.msr#":"EE|0x2",` +
		`"prio[0]":-2,"prio[0]#":"-2","prio[1]":3,"prio[1]#":"3","kind":1,"a.ch":10,"a.ch#":"'\\n'"}`
	if got != want {
		t.Errorf("args\n got %s\nwant %s", got, want)
	}
	if !json.Valid([]byte(got)) {
		t.Errorf("args are not JSON: %s", got)
	}
	// The other union member.
	w.set("kind", 0, 0).set("a.mode", 0, 0o644)
	var a Args
	got = string(a.Build(d, w.ev, w.rec))
	if want := `"kind":0,"a.mode":420,"a.mode#":"0644"}`; len(got) < len(want) || got[len(got)-len(want):] != want {
		t.Errorf("args end %s, want ...%s", got, want)
	}
	// A record too short for a field: null for the value and its string.
	short := w.rec[:30]
	if got := string(d.AppendArgs(nil, w.ev, short)); !json.Valid([]byte(got)) ||
		!strings.Contains(got, `"mask":10,"mask#":"0b1010","id":null,"id#":null,`) {
		t.Errorf("short record: %s", got)
	}
}

// formatBadCases are descriptions with one error in a format (docs 2.11):
// events from line 11.
var formatBadCases = []badCase{
	{name: "unknown format",
		events: `<event Name="E" id="1" time="t"><field Name="t" type_name="int" format="hexa"/></event>`,
		want:   `bad.xml:11: field "t": format dec, hex, oct, bin, char, ptr, enum, flags or the Name of an <enum> or <flags> in <Formats> expected, found "hexa"`},
	{name: "format on a double",
		events: `<event Name="E" id="1" time="t"><field Name="t" type_name="int"/><field Name="d" type_name="double" format="hex"/></event>`,
		want:   `bad.xml:11: field "d": format="hex" on a field of an integer, char, object-id or pointer type (or an array of them, not of char) expected, found type double`},
	{name: "format on a char array",
		events: `<event Name="E" id="1" time="t"><field Name="t" type_name="int"/><field Name="s" type_name="char" dim="8" format="char"/></event>`,
		want:   `bad.xml:11: field "s": format="char" on a field of an integer, char, object-id or pointer type (or an array of them, not of char) expected, found type char[8]`},
	{name: "format on a bool",
		events: `<event Name="E" id="1" time="t"><field Name="t" type_name="int"/><field Name="b" type_name="_Bool" format="dec"/></event>`,
		want:   `bad.xml:11: field "b": format="dec" on a field of an integer, char, object-id or pointer type (or an array of them, not of char) expected, found type _Bool`},
	{name: "format on a struct",
		common: `<dt Name="s"><field Name="x" type_name="int"/></dt>`,
		events: `<event Name="E" id="1" time="t"><field Name="t" type_name="int"/><field Name="a" type_name="s" format="hex"/></event>`,
		want:   `bad.xml:11: field "a": format="hex" on a field of an integer, char, object-id or pointer type (or an array of them, not of char) expected, found type s`},
	{name: "format on a timespec in a dt",
		common: `<dt Name="s"><field Name="x" type_name="struct timespec" format="dec"/></dt>`,
		want:   `bad.xml:9: field "x": format="dec" on a field of an integer, char, object-id or pointer type (or an array of them, not of char) expected, found type struct timespec`},
	{name: "enum without values",
		events: `<event Name="E" id="1" time="t"><field Name="t" type_name="int" format="enum"/></event>`,
		want:   `bad.xml:11: <field "t" format="enum"> with <value> children expected, found none`},
	{name: "enum with a bit",
		events: `<event Name="E" id="1" time="t"><field Name="t" type_name="int" format="enum">
<bit n="1" name="A"/></field></event>`,
		want: `bad.xml:12: <value> inside <field "t" format="enum"> expected, found <bit>`},
	{name: "names inside hex",
		events: `<event Name="E" id="1" time="t"><field Name="t" type_name="int" format="hex">
<value n="1" name="A"/></field></event>`,
		want: `bad.xml:12: no elements inside <field format="hex"> expected, found <value>`},
	{name: "value not a number",
		events: `<event Name="E" id="1" time="t"><field Name="t" type_name="int" format="enum">
<value n="one" name="A"/></field></event>`,
		want: `bad.xml:12: <value n=> an integer expected, found "one"`},
	{name: "value name not an identifier",
		events: `<event Name="E" id="1" time="t"><field Name="t" type_name="int" format="enum">
<value n="1" name="not ready"/></field></event>`,
		want: `bad.xml:12: <value name=> a C identifier expected, found "not ready"`},
	{name: "value without name",
		events: `<event Name="E" id="1" time="t"><field Name="t" type_name="int" format="enum">
<value n="1"/></field></event>`,
		want: `bad.xml:12: <value> with a name attribute expected, found none`},
	{name: "value unknown attribute",
		events: `<event Name="E" id="1" time="t"><field Name="t" type_name="int" format="enum">
<value n="1" name="A" mask="3"/></field></event>`,
		want: `bad.xml:12: <value> attributes n, name expected, found mask="3"`},
	{name: "value twice",
		events: `<event Name="E" id="1" time="t"><field Name="t" type_name="int" format="enum">
<value n="16" name="A"/>
<value n="0x10" name="B"/></field></event>`,
		want: `bad.xml:13: a <value n=> unique in <field "t" format="enum"> expected, found a second 16 (first at line 12)`},
	{name: "value name twice",
		events: `<event Name="E" id="1" time="t"><field Name="t" type_name="int" format="enum">
<value n="1" name="A"/>
<value n="2" name="A"/></field></event>`,
		want: `bad.xml:13: a <value name=> unique in <field "t" format="enum"> expected, found a second "A" (first at line 12)`},
	{name: "value too large for the type",
		events: `<event Name="E" id="1" time="t"><field Name="t" type_name="int"/><field Name="r" type_name="unsigned char" format="enum">
<value n="256" name="A"/></field></event>`,
		want: `bad.xml:11: field "r": format "enum": values 0 to 255 (those of unsigned char) expected, found 256 (line 12)`},
	{name: "negative value of an unsigned type",
		events: `<event Name="E" id="1" time="t"><field Name="t" type_name="int"/><field Name="r" type_name="unsigned int" format="enum">
<value n="-1" name="A"/></field></event>`,
		want: `bad.xml:11: field "r": format "enum": values 0 to 4294967295 (those of unsigned int) expected, found -1 (line 12)`},
	{name: "value below a short",
		events: `<event Name="E" id="1" time="t"><field Name="t" type_name="int"/><field Name="r" type_name="short" format="enum">
<value n="-32769" name="A"/></field></event>`,
		want: `bad.xml:11: field "r": format "enum": values -32768 to 32767 (those of short) expected, found -32769 (line 12)`},
	{name: "value above a long long",
		events: `<event Name="E" id="1" time="t"><field Name="t" type_name="int"/><field Name="r" type_name="long long" format="enum">
<value n="0x8000000000000000" name="A"/></field></event>`,
		want: `bad.xml:11: field "r": format "enum": values -9223372036854775808 to 9223372036854775807 (those of long long) expected, found 9223372036854775808 (line 12)`},
	{name: "bit past the type",
		events: `<event Name="E" id="1" time="t"><field Name="t" type_name="int"/><field Name="f" type_name="unsigned char" format="flags">
<bit n="8" name="A"/></field></event>`,
		want: `bad.xml:11: field "f": format "flags": bits 0 to 7 (the 8 bits of unsigned char) expected, found bit 8 (line 12)`},
	{name: "bit 64",
		events: `<event Name="E" id="1" time="t"><field Name="t" type_name="int" format="flags">
<bit n="64" name="A"/></field></event>`,
		want: `bad.xml:12: <bit n=> a bit number 0 to 63 expected, found "64"`},
	{name: "bit twice",
		events: `<event Name="E" id="1" time="t"><field Name="t" type_name="int" format="flags">
<bit n="3" name="A"/><bit n="3" name="B"/></field></event>`,
		want: `bad.xml:12: a <bit n=> unique in <field "t" format="flags"> expected, found a second 3 (first at line 12)`},
	{name: "named enum too large for its use",
		events: `<Formats><enum Name="st">
<value n="300" name="A"/></enum></Formats>
<event Name="E" id="1" time="t"><field Name="t" type_name="int"/>
<field Name="r" type_name="unsigned char" format="st"/></event>`,
		want: `bad.xml:14: field "r": format "st": values 0 to 255 (those of unsigned char) expected, found 300 (line 12)`},
	{name: "unknown element in Formats",
		events: `<Formats><enum2 Name="x"/></Formats>
<event Name="E" id="1" time="t"><field Name="t" type_name="int"/></event>`,
		want: `bad.xml:11: <enum> or <flags> inside <Formats> expected, found <enum2>`},
	{name: "format named like a built-in",
		events: `<Formats><flags Name="hex"><bit n="1" name="A"/></flags></Formats>
<event Name="E" id="1" time="t"><field Name="t" type_name="int"/></event>`,
		want: `bad.xml:11: a new format name in <flags Name=> expected, found "hex", a built-in format`},
	{name: "format named twice",
		events: `<Formats><enum Name="st"><value n="1" name="A"/></enum>
<flags Name="st"><bit n="1" name="A"/></flags></Formats>
<event Name="E" id="1" time="t"><field Name="t" type_name="int"/></event>`,
		want: `bad.xml:12: a format name unique in <Formats> expected, found a second "st" (first at line 11)`},
	{name: "format without Name",
		events: `<Formats><enum><value n="1" name="A"/></enum></Formats>
<event Name="E" id="1" time="t"><field Name="t" type_name="int"/></event>`,
		want: `bad.xml:11: <enum> with a Name attribute expected, found none`},
	{name: "enum of no values in Formats",
		events: `<Formats><enum Name="st"/></Formats>
<event Name="E" id="1" time="t"><field Name="t" type_name="int"/></event>`,
		want: `bad.xml:11: <enum "st"> with <value> children expected, found none`},
	{name: "two Formats",
		events: `<Formats><enum Name="a"><value n="1" name="A"/></enum></Formats>
<Formats><enum Name="b"><value n="1" name="A"/></enum></Formats>
<event Name="E" id="1" time="t"><field Name="t" type_name="int"/></event>`,
		want: `bad.xml:12: one <Formats> expected, found a second one`},
}

func TestFormatErrors(t *testing.T) { checkBadCases(t, formatBadCases) }
