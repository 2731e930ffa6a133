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
	var b [HeaderSize]byte
	if size < HeaderSize {
		return Header{}, inputErr(name, 0, "header: expected %d bytes, found %d before the end of the file", HeaderSize, size)
	}
	if n, err := r.ReadAt(b[:], 0); n < HeaderSize {
		return Header{}, inputErr(name, int64(n), "header: expected %d bytes, found a read error: %v", HeaderSize, err)
	}
	h, err := parseHeader(&b, name)
	if err != nil {
		return Header{}, err
	}
	return h, h.checkSize(size, name)
}

func inputErr(name string, off int64, format string, args ...any) error {
	return &schema.InputError{File: name, Offset: off, Msg: fmt.Sprintf(format, args...)}
}

// parseHeader checks the fields of the fixed header; DataBlocks is left 0
// (it needs the file size: checkSize).
func parseHeader(b *[HeaderSize]byte, name string) (Header, error) {
	var h Header
	bad := func(off int64, format string, args ...any) (Header, error) {
		return Header{}, inputErr(name, off, format, args...)
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
	h.ServiceBlocks = int(bo.Uint32(b[16:])) // checked against the file size by checkSize
	h.Flags = bo.Uint32(b[20:])
	if h.Flags&^FlagWrapped != 0 {
		return bad(20, "header: flags: expected only bit 0, found 0x%x", h.Flags)
	}
	h.OS = cString(b[24:56])
	h.Arch = cString(b[56:72])
	return h, nil
}

// checkSize checks the header against the size of the file (header,
// whole blocks, service blocks) and sets DataBlocks.
func (h *Header) checkSize(size int64, name string) error {
	if int64(h.HeaderSize) > size {
		return inputErr(name, 10, "header: header_size: expected at most the file size %d, found %d", size, h.HeaderSize)
	}
	bs := int64(h.BlockSize)
	rest := size - int64(h.HeaderSize)
	if whole := rest / bs * bs; whole != rest {
		return inputErr(name, int64(h.HeaderSize)+whole, "expected a whole block of %d bytes, found %d bytes before the end of the file", bs, rest-whole)
	}
	blocks := rest / bs
	if int64(h.ServiceBlocks) > blocks {
		return inputErr(name, 16, "header: service_blocks: expected at most the %d blocks in the file, found %d", blocks, h.ServiceBlocks)
	}
	if blocks > 1<<31-1 {
		return inputErr(name, 12, "header: expected at most %d blocks, found %d", 1<<31-1, blocks)
	}
	h.DataBlocks = int(blocks) - h.ServiceBlocks
	return nil
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

// Log is an opened, indexed log. Records are decoded only on demand. The
// indexes grow with the log (16 bytes an Entry, 4 an event): the ingester
// does not build them, it reads the log once through a Scanner.
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

// Open reads the header of a log, checks it against the description and
// builds the primary and secondary indexes from the record descriptors
// alone (seed 3.1, docs 1.5): record bodies are not decoded, except the
// number of block records. report may be nil: then the first bad record
// stops Open with its error and warnings are dropped.
//
// Errors are *schema.InputError with the byte offset of the bad header
// field, block or record.
func Open(r io.ReaderAt, size int64, name string, desc *Description, report Report) (*Log, error) {
	s, err := NewScanner(io.NewSectionReader(r, 0, size), size, name)
	if err != nil {
		return nil, err
	}
	l := &Log{Name: name, Desc: desc, R: r}
	err = s.Scan(desc, report, func(e Entry, rec []byte, service bool) error {
		i := int32(len(l.Index))
		l.Index = append(l.Index, e)
		ev := desc.Events[e.Ev]
		switch {
		case service:
			if ev.Creates != nil {
				l.Service = append(l.Service, i)
			}
		case ev.Kind.Essential():
			l.Events = append(l.Events, i)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	l.Header, l.FirstBlock, l.Wrapped = s.Header, s.FirstBlock, s.Wrapped
	return l, nil
}

// Visit receives the records of a log in file order: where and of which
// type (for a filler, Size is the rest of its block), the bytes (valid
// until Visit returns), and whether the record is in a service block. Bad
// records and the descriptor-only tails of blocks are not visited.
type Visit func(e Entry, rec []byte, service bool) error

// Scanner reads a log from a stream in one pass, one block in memory at a
// time: what the log holds beyond the current block is in no index, so its
// memory does not grow with the log.
type Scanner struct {
	Header // DataBlocks: as the size says, or (size unknown) counted by Scan
	Name   string

	FirstBlock uint64 // after Scan: the number of the first data block
	Wrapped    bool   // after Scan: header flag bit 0, or FirstBlock > 0

	r    io.Reader
	size int64  // bytes of the log, -1 when unknown
	buf  []byte // the current block
}

// NewScanner reads and checks the header from r. size is the log's size,
// or -1 when unknown (standard input): the checks of the header against
// the size (checkSize) then happen when Scan reaches the end.
func NewScanner(r io.Reader, size int64, name string) (*Scanner, error) {
	var b [HeaderSize]byte
	if n, err := io.ReadFull(r, b[:]); n < HeaderSize {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil, inputErr(name, 0, "header: expected %d bytes, found %d before the end of the file", HeaderSize, n)
		}
		return nil, inputErr(name, int64(n), "header: expected %d bytes, found a read error: %v", HeaderSize, err)
	}
	h, err := parseHeader(&b, name)
	if err != nil {
		return nil, err
	}
	if size >= 0 {
		if err := h.checkSize(size, name); err != nil {
			return nil, err
		}
	}
	return &Scanner{Header: h, Name: name, r: r, size: size}, nil
}

// Scan checks the header against the description and visits the records
// of every block in file order, indexing each block from its descriptors
// (as Open does). report is as for Open. It reads to the end of r.
func (s *Scanner) Scan(desc *Description, report Report, visit Visit) error {
	h := s.Header
	name := s.Name
	if h.BigEndian != desc.ABI.BigEndian {
		want, found := "little ('L')", "big ('B')"
		if desc.ABI.BigEndian {
			want, found = found, want
		}
		return inputErr(name, 8, "header: byte_order: expected %s as the description %s says, found %s", want, desc.File, found)
	}
	if h.OS != desc.OS {
		return inputErr(name, 24, "header: os_version: expected %q as the description %s says, found %q", desc.OS, desc.File, h.OS)
	}
	if h.Arch != desc.Arch {
		return inputErr(name, 56, "header: arch: expected %q as the description %s says, found %q", desc.Arch, desc.File, h.Arch)
	}
	if extra := int64(h.HeaderSize - HeaderSize); extra > 0 {
		if n, err := io.CopyN(io.Discard, s.r, extra); n < extra {
			if err != io.EOF {
				return inputErr(name, HeaderSize+n, "header: expected %d bytes, found a read error: %v", h.HeaderSize, err)
			}
			return inputErr(name, 10, "header: header_size: expected at most the file size %d, found %d", HeaderSize+n, h.HeaderSize)
		}
	}
	x := newIndexer(desc, name, report, visit)
	s.Wrapped = h.Flags&FlagWrapped != 0
	x.wrapped = &s.Wrapped
	x.first = &s.FirstBlock
	var k int64
blocks:
	for ; ; k++ {
		off := int64(h.HeaderSize) + k*int64(h.BlockSize)
		n, err := s.readBlock()
		if n < h.BlockSize {
			switch {
			case err != io.EOF && err != io.ErrUnexpectedEOF:
				return inputErr(name, off+int64(n), "expected a block of %d bytes, found a read error: %v", h.BlockSize, err)
			case n > 0:
				return inputErr(name, off, "expected a whole block of %d bytes, found %d bytes before the end of the file", h.BlockSize, n)
			}
			break blocks
		}
		x.services = k < int64(h.ServiceBlocks)
		x.numbered = false
		if err := x.block(s.buf[:h.BlockSize], off, int(k)); err != nil {
			return err
		}
		if !x.numbered && !x.services { // a bad first record: assume the block came next
			if x.started {
				x.lastNum++
			} else {
				x.started = true
			}
		}
	}
	if k < int64(h.ServiceBlocks) {
		return inputErr(name, 16, "header: service_blocks: expected at most the %d blocks in the file, found %d", k, h.ServiceBlocks)
	}
	if s.size < 0 {
		s.DataBlocks = int(min(k, 1<<31-1)) - h.ServiceBlocks
	}
	return nil
}

// firstRead is the most of a block read before its first bytes are there:
// a header alone may claim a block of MaxBlockSize.
const firstRead = 64 << 10

// readBlock reads the next block into s.buf, returning how many bytes
// were read (short only at the end of r or on an error).
func (s *Scanner) readBlock() (int, error) {
	bs := s.BlockSize
	first := min(bs, firstRead)
	if len(s.buf) < first {
		s.buf = make([]byte, first)
	}
	n, err := io.ReadFull(s.r, s.buf[:first])
	if n < first || bs == first {
		return n, err
	}
	if len(s.buf) < bs {
		b := make([]byte, bs)
		copy(b, s.buf[:first])
		s.buf = b
	}
	m, err := io.ReadFull(s.r, s.buf[first:bs])
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return first + m, err
}

// readUint reads an n-byte unsigned integer (len(b) >= n); the usual
// widths in one load.
func readUint(b []byte, n int, big bool) uint64 {
	if big {
		switch n {
		case 8:
			return binary.BigEndian.Uint64(b)
		case 4:
			return uint64(binary.BigEndian.Uint32(b))
		case 2:
			return uint64(binary.BigEndian.Uint16(b))
		}
	} else {
		switch n {
		case 8:
			return binary.LittleEndian.Uint64(b)
		case 4:
			return uint64(binary.LittleEndian.Uint32(b))
		case 2:
			return uint64(binary.LittleEndian.Uint16(b))
		}
	}
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

// indexer carries the state of one Scan.
type indexer struct {
	d        *Description
	name     string
	report   Report
	visit    Visit
	typeOff  int // descriptor layout
	typeLen  int
	sizeOff  int
	sizeLen  int
	descLen  int
	dense    []int32 // record type id -> event index + 1, for small ids
	started  bool    // a data block number was seen
	lastNum  uint64
	services bool
	numbered bool    // the current block's number was read
	first    *uint64 // the Scanner's FirstBlock
	wrapped  *bool   // the Scanner's Wrapped
}

func newIndexer(desc *Description, name string, report Report, visit Visit) *indexer {
	x := &indexer{d: desc, name: name, report: report, visit: visit}
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
	return x
}

func (x *indexer) errorf(off int64, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if x.report == nil {
		return &schema.InputError{File: x.name, Offset: off, Msg: msg}
	}
	return x.report(schema.Error, off, msg)
}

func (x *indexer) warnf(off int64, format string, args ...any) {
	if x.report != nil {
		x.report(schema.Warning, off, fmt.Sprintf(format, args...))
	}
}

// lookup returns the index in Description.Events of a record type id, or -1.
func (x *indexer) lookup(id uint64) int32 {
	if id < uint64(len(x.dense)) {
		return x.dense[id] - 1
	}
	if ev := x.d.ByID[id]; ev != nil {
		for i, e := range x.d.Events {
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
	d := x.d
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
			return x.visit(Entry{Off: off, Size: uint32(bs - pos), Ev: ei}, b[pos:], x.services)
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
		if err := x.visit(Entry{Off: off, Size: uint32(sz), Ev: ei}, rec, x.services); err != nil {
			return err
		}
		pos += int(sz)
	}
	return nil
}

// blockNumber checks the first record of block k (ev nil: not a block
// record, or a filler) and follows the block numbers (docs 1.4, 1.7).
func (x *indexer) blockNumber(off int64, k int, ev *Event, rec []byte) error {
	if ev == nil || ev.Kind != RecBlock {
		found := "a filler"
		if ev != nil {
			found = "record " + ev.Name
		}
		return x.errorf(off, "expected a block record to begin the block, found %s", found)
	}
	x.numbered = true
	n := readUint(rec[ev.Number.Offset:], ev.Number.Size, x.d.ABI.BigEndian)
	if x.services {
		if n != uint64(k) {
			x.warnf(off, "service block number: expected %d, found %d", k, n)
		}
		return nil
	}
	switch {
	case !x.started:
		x.started = true
		*x.first = n
		if n > 0 {
			*x.wrapped = true
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
