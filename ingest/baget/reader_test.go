package baget

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"reflect"
	"testing"

	"github.com/traceduck/traceduck/schema"
)

// readerXML is a small description for hand-built logs: record type 300
// needs both bytes of type_record, so the byte order matters.
func readerXML(endian string) string {
	return fmt.Sprintf(`<description os="tos-1" arch="t32">
<abi endian="%s" pointer="4" long_long_align="8" double_align="8"/>
<descriptor type="unsigned short" size="unsigned short"/>
<Objects><id type_name="thread_ptr" base="pointer" kind="thread"/></Objects>
<event Name="FILL" id="0" kind="filler"/>
<event Name="BLOCK" id="1" kind="block" number="no"><field Name="no" type_name="unsigned int"/></event>
<event Name="NOTE" id="2" kind="info"><field Name="x" type_name="unsigned int"/></event>
<event Name="CREATE" id="10" time="t" main="th">
 <field Name="t" type_name="unsigned int"/><field Name="th" type_name="thread_ptr"/><field Name="name" type_name="char" dim="8"/>
 <creates field="th" name="name"/>
</event>
<event Name="RUN" id="300" time="t" main="th"><field Name="t" type_name="unsigned int"/><field Name="th" type_name="thread_ptr"/></event>
</description>`, endian)
}

// Record type ids and sizes of readerXML.
const (
	tFill, tBlock, tNote, tCreate, tRun = 0, 1, 2, 10, 300
	testBS                              = 256
)

// logBuilder writes a log byte by byte.
type logBuilder struct {
	big bool
	b   []byte
}

func (lb *logBuilder) order() binary.ByteOrder {
	if lb.big {
		return binary.BigEndian
	}
	return binary.LittleEndian
}

// header appends the 80-byte header.
func (lb *logBuilder) header(os, arch string, svc int, flags uint32) {
	h := make([]byte, HeaderSize)
	copy(h, Magic)
	h[8] = 'L'
	if lb.big {
		h[8] = 'B'
	}
	h[9] = 1
	o := lb.order()
	o.PutUint16(h[10:], HeaderSize)
	o.PutUint32(h[12:], testBS)
	o.PutUint32(h[16:], uint32(svc))
	o.PutUint32(h[20:], flags)
	copy(h[24:56], os)
	copy(h[56:72], arch)
	lb.b = append(lb.b, h...)
}

// rec makes a record of a type and size; words are 4-byte values after
// the descriptor.
func (lb *logBuilder) rec(typ, size int, words ...uint32) []byte {
	r := make([]byte, size)
	o := lb.order()
	o.PutUint16(r, uint16(typ))
	o.PutUint16(r[2:], uint16(size))
	for i, w := range words {
		o.PutUint32(r[4+4*i:], w)
	}
	return r
}

// block appends a block of records; a tail of 4 bytes or more gets a
// filler, a shorter one 0xff bytes.
func (lb *logBuilder) block(recs ...[]byte) {
	start := len(lb.b)
	for _, r := range recs {
		lb.b = append(lb.b, r...)
	}
	if left := testBS - (len(lb.b) - start); left >= 4 {
		lb.b = append(lb.b, lb.rec(tFill, left)...)
	} else {
		lb.b = append(lb.b, bytes.Repeat([]byte{0xff}, left)...)
	}
	if len(lb.b)-start != testBS {
		panic("block overflow")
	}
}

func readerDesc(t testing.TB, big bool) *Description {
	endian := "little"
	if big {
		endian = "big"
	}
	d, err := Parse("t.xml", []byte(readerXML(endian)))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// goodLog is the log of TestIndex: a service block and three data blocks,
// numbered 7, 8 and 10.
func goodLog(big bool) []byte {
	lb := &logBuilder{big: big}
	lb.header("tos-1", "t32", 1, 0)
	lb.block(lb.rec(tBlock, 8, 0), lb.rec(tCreate, 20, 5, 0x1000)) // 80
	lb.block(lb.rec(tBlock, 8, 7), lb.rec(tRun, 12, 10, 0x1000),   // 336
		lb.rec(tNote, 8, 1), lb.rec(tRun, 16, 11, 0x1000), lb.rec(tCreate, 20, 12, 0x2000))
	lb.block(lb.rec(tBlock, 8, 8), lb.rec(tRun, 12, 13, 0x2000), lb.rec(tNote, 234)) // 592: a 2-byte tail
	lb.block(lb.rec(tBlock, 8, 10))                                                  // 848
	return lb.b
}

type diagLog []string

func (d *diagLog) report(sev schema.Severity, off int64, msg string) error {
	*d = append(*d, fmt.Sprintf("%s @%d: %s", sev, off, msg))
	return nil
}

func TestIndex(t *testing.T) {
	for _, big := range []bool{false, true} {
		t.Run(fmt.Sprint("big=", big), func(t *testing.T) {
			d := readerDesc(t, big)
			data := goodLog(big)
			var diags diagLog
			l, err := Open(bytes.NewReader(data), int64(len(data)), "x.blog", d, diags.report)
			if err != nil {
				t.Fatal(err)
			}
			// Events: FILL 0, BLOCK 1, NOTE 2, CREATE 3, RUN 4.
			want := []Entry{
				{80, 8, 1}, {88, 20, 3}, {108, 228, 0},
				{336, 8, 1}, {344, 12, 4}, {356, 8, 2}, {364, 16, 4}, {380, 20, 3}, {400, 192, 0},
				{592, 8, 1}, {600, 12, 4}, {612, 234, 2},
				{848, 8, 1}, {856, 248, 0},
			}
			if !reflect.DeepEqual(l.Index, want) {
				t.Errorf("index\n got %v\nwant %v", l.Index, want)
			}
			if w := []int32{4, 6, 7, 10}; !reflect.DeepEqual(l.Events, w) {
				t.Errorf("events %v, want %v", l.Events, w)
			}
			if w := []int32{1}; !reflect.DeepEqual(l.Service, w) {
				t.Errorf("service %v, want %v", l.Service, w)
			}
			if l.FirstBlock != 7 || !l.Wrapped || l.ServiceBlocks != 1 || l.DataBlocks != 3 || l.OS != "tos-1" || l.Arch != "t32" {
				t.Errorf("header/blocks: %+v first=%d wrapped=%v", l.Header, l.FirstBlock, l.Wrapped)
			}
			if w := []string{"warning @848: blocks 9..9 missing"}; !reflect.DeepEqual([]string(diags), w) {
				t.Errorf("diagnostics %q, want %q", diags, w)
			}
			if l.Block(612) != 2 {
				t.Errorf("Block(612) = %d", l.Block(612))
			}
			rec, err := l.Record(6)
			if err != nil || len(rec) != 16 || l.order().Uint16(rec) != tRun {
				t.Errorf("Record(6) = %x, %v", rec, err)
			}
		})
	}
}

func (l *Log) order() binary.ByteOrder {
	if l.BigEndian {
		return binary.BigEndian
	}
	return binary.LittleEndian
}

// badLog is a case of TestBadLog: a change to goodLog and the errors.
type badLog struct {
	name   string
	edit   func(lb *logBuilder) // on goodLog's bytes
	size   int                  // >0: cut the file
	want   string               // the error without a report
	skip   []string             // the diagnostics with a report that skips
	skipEv []int32              // Events after skipping (nil: not checked)
}

var badLogs = []badLog{
	{name: "short", size: 10, want: "x.blog@0: header: expected 80 bytes, found 10 before the end of the file"},
	{name: "magic", edit: func(lb *logBuilder) { lb.b[0] = 'X' }, want: `x.blog@0: header: expected the magic "BAGETTRC", found "XAGETTRC"`},
	{name: "byte order", edit: func(lb *logBuilder) { lb.b[8] = 'M' }, want: "x.blog@8: header: byte_order: expected 'L' or 'B', found 0x4d"},
	{name: "version", edit: func(lb *logBuilder) { lb.b[9] = 2 }, want: "x.blog@9: header: version: expected 1, found 2"},
	{name: "header_size", edit: func(lb *logBuilder) { lb.order().PutUint16(lb.b[10:], 79) }, want: "x.blog@10: header: header_size: expected at least 80, found 79"},
	{name: "header_size big", edit: func(lb *logBuilder) { lb.order().PutUint16(lb.b[10:], 2000) }, want: "x.blog@10: header: header_size: expected at most the file size 1104, found 2000"},
	{name: "block_size", edit: func(lb *logBuilder) { lb.order().PutUint32(lb.b[12:], 260) }, want: "x.blog@12: header: block_size: expected a multiple of 8 from 256 to 16777216, found 260"},
	{name: "block_size huge", edit: func(lb *logBuilder) { lb.order().PutUint32(lb.b[12:], 1<<30) }, want: "x.blog@12: header: block_size: expected a multiple of 8 from 256 to 16777216, found 1073741824"},
	{name: "flags", edit: func(lb *logBuilder) { lb.order().PutUint32(lb.b[20:], 3) }, want: "x.blog@20: header: flags: expected only bit 0, found 0x3"},
	{name: "service_blocks", edit: func(lb *logBuilder) { lb.order().PutUint32(lb.b[16:], 5) }, want: "x.blog@16: header: service_blocks: expected at most the 4 blocks in the file, found 5"},
	{name: "cut block", size: 80 + 256 + 10, want: "x.blog@336: expected a whole block of 256 bytes, found 10 bytes before the end of the file"},
	{name: "os", edit: func(lb *logBuilder) { copy(lb.b[24:], "tos-2") }, want: `x.blog@24: header: os_version: expected "tos-1" as the description t.xml says, found "tos-2"`},
	{name: "arch", edit: func(lb *logBuilder) { copy(lb.b[56:], "t64") }, want: `x.blog@56: header: arch: expected "t32" as the description t.xml says, found "t64"`},
	{name: "unknown type", edit: func(lb *logBuilder) { lb.order().PutUint16(lb.b[344:], 77) },
		want:   "x.blog@344: record type: expected a type the description declares, found 77",
		skip:   []string{"error @344: record type: expected a type the description declares, found 77", "warning @848: blocks 9..9 missing"},
		skipEv: []int32{5, 6, 9}},
	{name: "size below descriptor", edit: func(lb *logBuilder) { lb.order().PutUint16(lb.b[358:], 2) },
		want:   "x.blog@356: record NOTE: size_record: expected at least 4 bytes (the descriptor), found 2",
		skip:   []string{"error @356: record NOTE: size_record: expected at least 4 bytes (the descriptor), found 2", "warning @848: blocks 9..9 missing"},
		skipEv: []int32{4, 6}},
	{name: "size past block", edit: func(lb *logBuilder) { lb.order().PutUint16(lb.b[614:], 237) },
		want:   "x.blog@612: record NOTE: size_record: expected at most 236 bytes (to the end of the block), found 237",
		skip:   []string{"error @612: record NOTE: size_record: expected at most 236 bytes (to the end of the block), found 237", "warning @848: blocks 9..9 missing"},
		skipEv: []int32{4, 6, 7, 10}},
	{name: "size below sizeof", edit: func(lb *logBuilder) {
		lb.order().PutUint16(lb.b[346:], 8)
		lb.order().PutUint16(lb.b[352:], tNote)
		lb.order().PutUint16(lb.b[354:], 4)
	},
		want: "x.blog@344: record RUN: size_record: expected at least 12 bytes (sizeof the record), found 8",
		skip: []string{"error @344: record RUN: size_record: expected at least 12 bytes (sizeof the record), found 8",
			"error @352: record NOTE: size_record: expected at least 8 bytes (sizeof the record), found 4", "warning @848: blocks 9..9 missing"},
		skipEv: []int32{5, 6, 9}},
	{name: "info in a service block", edit: func(lb *logBuilder) { lb.order().PutUint16(lb.b[88:], tNote); lb.order().PutUint16(lb.b[90:], 20) },
		want:   "x.blog@88: record NOTE: expected a creation, block or filler record in a service block, found a record of kind info without <creates>",
		skip:   []string{"error @88: record NOTE: expected a creation, block or filler record in a service block, found a record of kind info without <creates>", "warning @848: blocks 9..9 missing"},
		skipEv: []int32{3, 5, 6, 9}},
	{name: "no block record", edit: func(lb *logBuilder) { lb.order().PutUint16(lb.b[592:], tNote) },
		want:   "x.blog@592: expected a block record to begin the block, found record NOTE",
		skip:   []string{"error @592: expected a block record to begin the block, found record NOTE", "warning @848: blocks 9..9 missing"},
		skipEv: []int32{4, 6, 7, 10}},
	{name: "decrease", edit: func(lb *logBuilder) { lb.order().PutUint32(lb.b[852:], 3) },
		skip: []string{"warning @848: block number: expected 9, found 3 (a decrease)"}},
	{name: "service number", edit: func(lb *logBuilder) { lb.order().PutUint32(lb.b[84:], 4) },
		skip: []string{"warning @80: service block number: expected 0, found 4", "warning @848: blocks 9..9 missing"}},
}

func TestBadLog(t *testing.T) {
	for _, big := range []bool{false, true} {
		d := readerDesc(t, big)
		for _, c := range badLogs {
			t.Run(fmt.Sprintf("%s/big=%v", c.name, big), func(t *testing.T) {
				lb := c.build(big)
				_, err := Open(bytes.NewReader(lb.b), int64(len(lb.b)), "x.blog", d, nil)
				got := ""
				if err != nil {
					got = err.Error()
				}
				if got != c.want {
					t.Errorf("error\n got %s\nwant %s", got, c.want)
				}
				if c.skip == nil {
					return
				}
				var diags diagLog
				l, err := Open(bytes.NewReader(lb.b), int64(len(lb.b)), "x.blog", d, diags.report)
				if err != nil {
					t.Fatalf("with skip: %v", err)
				}
				if !reflect.DeepEqual([]string(diags), c.skip) {
					t.Errorf("diagnostics\n got %q\nwant %q", diags, c.skip)
				}
				if c.skipEv != nil && !reflect.DeepEqual(l.Events, c.skipEv) {
					t.Errorf("events %v, want %v", l.Events, c.skipEv)
				}
			})
		}
	}
}

func TestByteOrderMismatch(t *testing.T) {
	d := readerDesc(t, true)
	data := goodLog(false)
	_, err := Open(bytes.NewReader(data), int64(len(data)), "x.blog", d, nil)
	want := "x.blog@8: header: byte_order: expected big ('B') as the description t.xml says, found little ('L')"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

// build writes the case's log: the good log, edited, cut to size.
func (c badLog) build(big bool) *logBuilder {
	lb := &logBuilder{big: big, b: goodLog(big)}
	if c.edit != nil {
		c.edit(lb)
	}
	if c.size > 0 {
		lb.b = lb.b[:c.size]
	}
	return lb
}
