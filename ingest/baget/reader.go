package baget

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"strconv"

	"github.com/traceduck/traceduck/schema"
)

// The fixed header (presentation record) of docs/baget-format.md 1.1.
const (
	HeaderSize   = 80
	Magic        = "BAGETTRC"
	MinBlockSize = 256
	MaxBlockSize = 16 << 20
	FlagWrapped  = 1 // header flags bit 0: the ring buffer wrapped
	maxHeaderLen = 1<<16 - 1
)

// Header is the presentation record (docs 1.1).
type Header struct {
	BigEndian     bool
	Version       int
	HeaderSize    int // bytes before the first block
	BlockSize     int // bytes of every block
	ServiceBlocks int // service blocks after the header
	DataBlocks    int // data blocks after the service blocks (from the file size)
	Flags         uint32
	OS, Arch      string
}

// ReadHeader reads and checks the header of a log of size bytes. It checks
// the header alone (not against a description) and that the rest of the
// file is a whole number of blocks.
func ReadHeader(r io.ReaderAt, size int64, name string) (Header, error) {
	var h Header
	bad := func(off int64, format string, args ...any) (Header, error) {
		return Header{}, &schema.InputError{File: name, Offset: off, Msg: fmt.Sprintf(format, args...)}
	}
	var b [HeaderSize]byte
	if size < HeaderSize {
		return bad(0, "header: expected %d bytes, found %d before the end of the file", HeaderSize, size)
	}
	if n, err := r.ReadAt(b[:], 0); n < HeaderSize {
		return bad(int64(n), "header: expected %d bytes, found a read error: %v", HeaderSize, err)
	}
	if string(b[:8]) != Magic {
		return bad(0, "header: expected the magic %q, found %s", Magic, quoteBytes(b[:8]))
	}
	var bo binary.ByteOrder
	switch b[8] {
	case 'L':
		bo = binary.LittleEndian
	case 'B':
		bo = binary.BigEndian
		h.BigEndian = true
	default:
		return bad(8, "header: byte_order: expected 'L' or 'B', found 0x%02x", b[8])
	}
	h.Version = int(b[9])
	if h.Version != 1 {
		return bad(9, "header: version: expected 1, found %d", h.Version)
	}
	h.HeaderSize = int(bo.Uint16(b[10:]))
	if h.HeaderSize < HeaderSize {
		return bad(10, "header: header_size: expected at least %d, found %d", HeaderSize, h.HeaderSize)
	}
	bs := bo.Uint32(b[12:])
	if bs < MinBlockSize || bs > MaxBlockSize || bs%8 != 0 {
		return bad(12, "header: block_size: expected a multiple of 8 from %d to %d, found %d", MinBlockSize, MaxBlockSize, bs)
	}
	h.BlockSize = int(bs)
	sb := bo.Uint32(b[16:])
	h.Flags = bo.Uint32(b[20:])
	if h.Flags&^FlagWrapped != 0 {
		return bad(20, "header: flags: expected only bit 0, found 0x%x", h.Flags)
	}
	h.OS = cString(b[24:56])
	h.Arch = cString(b[56:72])
	if int64(h.HeaderSize) > size {
		return bad(10, "header: header_size: expected at most the file size %d, found %d", size, h.HeaderSize)
	}
	rest := size - int64(h.HeaderSize)
	if whole := rest / int64(bs) * int64(bs); whole != rest {
		return bad(int64(h.HeaderSize)+whole, "expected a whole block of %d bytes, found %d bytes before the end of the file", bs, rest-whole)
	}
	blocks := rest / int64(bs)
	if int64(sb) > blocks {
		return bad(16, "header: service_blocks: expected at most the %d blocks in the file, found %d", blocks, sb)
	}
	if blocks > 1<<31-1 {
		return bad(12, "header: expected at most %d blocks, found %d", 1<<31-1, blocks)
	}
	h.ServiceBlocks = int(sb)
	h.DataBlocks = int(blocks) - h.ServiceBlocks
	return h, nil
}

// cString is a NUL-padded string field.
func cString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

func quoteBytes(b []byte) string {
	return strconv.QuoteToASCII(string(b))
}

// Entry is one record of the primary index (seed 3.1): where it is, how
// big, and of which record type. Only the descriptor was read to make it.
type Entry struct {
	Off  int64  // byte offset of the record in the file
	Size uint32 // size_record (for a filler: the bytes to the end of its block)
	Ev   int32  // index of the record type in Description.Events
}

// Report receives the findings of Open: warnings (sev schema.Warning; the
// return value is ignored) and bad records (sev schema.Error). For a bad
// record, returning nil skips it (--skip-bad) and a non-nil error stops
// reading with that error.
type Report func(sev schema.Severity, off int64, msg string) error

// Log is an opened, indexed log. Records are decoded only on demand.
type Log struct {
	Header
	Name string
	Desc *Description
	R    io.ReaderAt

	Index   []Entry // every record (primary index), service blocks first, in file order
	Events  []int32 // secondary index: positions in Index of the events (essential records of data blocks), in order
	Service []int32 // positions in Index of the creation records in service blocks

	FirstBlock uint64 // number of the first data block: the count of blocks lost
	Wrapped    bool   // header flag bit 0, or FirstBlock > 0

	buf []byte // Record's buffer
}

// Block returns the index in the file (0 = the first service block) of the
// block holding the record at file offset off.
func (l *Log) Block(off int64) int {
	return int((off - int64(l.HeaderSize)) / int64(l.BlockSize))
}

// Record reads the bytes of the record Index[i] into a buffer reused by the
// next call.
func (l *Log) Record(i int) ([]byte, error) {
	e := l.Index[i]
	if cap(l.buf) < int(e.Size) {
		l.buf = make([]byte, e.Size, max(int(e.Size), 256))
	}
	b := l.buf[:e.Size]
	if n, err := l.R.ReadAt(b, e.Off); n < len(b) {
		return nil, &schema.InputError{File: l.Name, Offset: e.Off + int64(n), Msg: fmt.Sprintf("expected %d bytes of the record, found a read error: %v", len(b), err)}
	}
	return b, nil
}

// readUint reads an n-byte unsigned integer.
func readUint(b []byte, n int, big bool) uint64 {
	var v uint64
	if big {
		for i := 0; i < n; i++ {
			v = v<<8 | uint64(b[i])
		}
	} else {
		for i := n - 1; i >= 0; i-- {
			v = v<<8 | uint64(b[i])
		}
	}
	return v
}

// indexer carries the state of one Open.
type indexer struct {
	l        *Log
	report   Report
	typeOff  int // descriptor layout
	typeLen  int
	sizeOff  int
	sizeLen  int
	descLen  int
	dense    []int32 // record type id -> event index + 1, for small ids
	started  bool    // a data block number was seen
	lastNum  uint64
	services bool
	numbered bool // the current block's number was read
}

func (x *indexer) errorf(off int64, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if x.report == nil {
		return &schema.InputError{File: x.l.Name, Offset: off, Msg: msg}
	}
	return x.report(schema.Error, off, msg)
}

func (x *indexer) warnf(off int64, format string, args ...any) {
	if x.report != nil {
		x.report(schema.Warning, off, fmt.Sprintf(format, args...))
	}
}

// Open reads the header of a log, checks it against the description and
// builds the primary and secondary indexes from the record descriptors
// alone (seed 3.1, docs 1.5): record bodies are not decoded, except the
// number of block records. report may be nil: then the first bad record
// stops Open with its error and warnings are dropped.
//
// Errors are *schema.InputError with the byte offset of the bad header
// field, block or record.
func Open(r io.ReaderAt, size int64, name string, desc *Description, report Report) (*Log, error) {
	h, err := ReadHeader(r, size, name)
	if err != nil {
		return nil, err
	}
	l := &Log{Header: h, Name: name, Desc: desc, R: r}
	hdrErr := func(off int64, format string, args ...any) (*Log, error) {
		return nil, &schema.InputError{File: name, Offset: off, Msg: fmt.Sprintf(format, args...)}
	}
	if h.BigEndian != desc.ABI.BigEndian {
		want, found := "little ('L')", "big ('B')"
		if desc.ABI.BigEndian {
			want, found = found, want
		}
		return hdrErr(8, "header: byte_order: expected %s as the description %s says, found %s", want, desc.File, found)
	}
	if h.OS != desc.OS {
		return hdrErr(24, "header: os_version: expected %q as the description %s says, found %q", desc.OS, desc.File, h.OS)
	}
	if h.Arch != desc.Arch {
		return hdrErr(56, "header: arch: expected %q as the description %s says, found %q", desc.Arch, desc.File, h.Arch)
	}
	x := &indexer{l: l, report: report}
	x.typeLen = desc.TypeRecord.Size
	x.sizeLen = desc.SizeRecord.Size
	x.sizeOff = alignUp(x.typeLen, desc.SizeRecord.Align)
	x.descLen = x.sizeOff + x.sizeLen
	n := 0 // ids below 1<<16 go into a dense table, others through ByID
	for _, ev := range desc.Events {
		if ev.ID < 1<<16 {
			n = max(n, int(ev.ID)+1)
		}
	}
	x.dense = make([]int32, n)
	for i, ev := range desc.Events {
		if ev.ID < 1<<16 {
			x.dense[ev.ID] = int32(i) + 1
		}
	}
	l.Wrapped = h.Flags&FlagWrapped != 0
	var buf []byte // a block; allocated for a file that has one (the header alone may claim 16 MiB)
	nblocks := h.ServiceBlocks + h.DataBlocks
	if nblocks > 0 {
		buf = make([]byte, h.BlockSize)
	}
	for k := 0; k < nblocks; k++ {
		off := int64(h.HeaderSize) + int64(k)*int64(h.BlockSize)
		if n, err := r.ReadAt(buf, off); n < len(buf) {
			return nil, &schema.InputError{File: name, Offset: off + int64(n), Msg: fmt.Sprintf("expected a block of %d bytes, found a read error: %v", h.BlockSize, err)}
		}
		x.services = k < h.ServiceBlocks
		x.numbered = false
		if err := x.block(buf, off, k); err != nil {
			return nil, err
		}
		if !x.numbered && !x.services { // a bad first record: assume the block came next
			if x.started {
				x.lastNum++
			} else {
				x.started = true
			}
		}
	}
	return l, nil
}

// lookup returns the index in Description.Events of a record type id, or -1.
func (x *indexer) lookup(id uint64) int32 {
	if id < uint64(len(x.dense)) {
		return x.dense[id] - 1
	}
	if ev := x.l.Desc.ByID[id]; ev != nil {
		for i, e := range x.l.Desc.Events {
			if e == ev {
				return int32(i)
			}
		}
	}
	return -1
}

// block indexes the records of block k (at file offset base).
//
//  1. A tail shorter than a descriptor ends the block unread.
//  2. The descriptor: a known type; a size of at least a descriptor and
//     not past the block end (else the rest of the block is skipped), at
//     least the record struct (else the record is skipped by its size).
//  3. A filler ends the block. A block record gives the block number
//     (first record of the block only); a missing one is a bad record.
//  4. Service blocks hold creation, block and filler records only.
func (x *indexer) block(b []byte, base int64, k int) error {
	l := x.l
	d := l.Desc
	big := d.ABI.BigEndian
	bs := len(b)
	pos := 0
	for bs-pos >= x.descLen { // 1
		off := base + int64(pos)
		id := readUint(b[pos+x.typeOff:], x.typeLen, big)
		sz := readUint(b[pos+x.sizeOff:], x.sizeLen, big)
		ei := x.lookup(id)
		if ei < 0 { // 2
			if err := x.errorf(off, "record type: expected a type the description declares, found %d", id); err != nil {
				return err
			}
			if sz < uint64(x.descLen) || sz > uint64(bs-pos) {
				return nil
			}
			pos += int(sz)
			continue
		}
		ev := d.Events[ei]
		if ev.Kind == RecFiller { // 3
			if pos == 0 {
				if err := x.blockNumber(off, k, nil, nil); err != nil {
					return err
				}
			}
			l.Index = append(l.Index, Entry{Off: off, Size: uint32(bs - pos), Ev: ei})
			return nil
		}
		if sz < uint64(x.descLen) {
			return x.errorf(off, "record %s: size_record: expected at least %d bytes (the descriptor), found %d", ev.Name, x.descLen, sz)
		}
		if sz > uint64(bs-pos) {
			return x.errorf(off, "record %s: size_record: expected at most %d bytes (to the end of the block), found %d", ev.Name, bs-pos, sz)
		}
		if sz < uint64(ev.Size) {
			if err := x.errorf(off, "record %s: size_record: expected at least %d bytes (sizeof the record), found %d", ev.Name, ev.Size, sz); err != nil {
				return err
			}
			pos += int(sz)
			continue
		}
		rec := b[pos : pos+int(sz)]
		if pos == 0 {
			if err := x.blockNumber(off, k, ev, rec); err != nil {
				return err
			}
		}
		if x.services && ev.Kind != RecBlock && ev.Creates == nil { // 4
			if err := x.errorf(off, "record %s: expected a creation, block or filler record in a service block, found a record of kind %s without <creates>", ev.Name, ev.Kind); err != nil {
				return err
			}
			pos += int(sz)
			continue
		}
		i := int32(len(l.Index))
		l.Index = append(l.Index, Entry{Off: off, Size: uint32(sz), Ev: ei})
		switch {
		case x.services:
			if ev.Creates != nil {
				l.Service = append(l.Service, i)
			}
		case ev.Kind.Essential():
			l.Events = append(l.Events, i)
		}
		pos += int(sz)
	}
	return nil
}

// blockNumber checks the first record of block k (ev nil: not a block
// record, or a filler) and follows the block numbers (docs 1.4, 1.7).
func (x *indexer) blockNumber(off int64, k int, ev *Event, rec []byte) error {
	l := x.l
	if ev == nil || ev.Kind != RecBlock {
		found := "a filler"
		if ev != nil {
			found = "record " + ev.Name
		}
		return x.errorf(off, "expected a block record to begin the block, found %s", found)
	}
	x.numbered = true
	n := readUint(rec[ev.Number.Offset:], ev.Number.Size, l.Desc.ABI.BigEndian)
	if x.services {
		if n != uint64(k) {
			x.warnf(off, "service block number: expected %d, found %d", k, n)
		}
		return nil
	}
	switch {
	case !x.started:
		x.started = true
		l.FirstBlock = n
		if n > 0 {
			l.Wrapped = true
		}
	case n == x.lastNum+1:
	case n > x.lastNum+1:
		x.warnf(off, "blocks %d..%d missing", x.lastNum+1, n-1)
	default:
		x.warnf(off, "block number: expected %d, found %d (a decrease)", x.lastNum+1, n)
	}
	x.lastNum = n
	return nil
}
