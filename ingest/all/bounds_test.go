package all_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/traceduck/traceduck/ingest"
	_ "github.com/traceduck/traceduck/ingest/all"
	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/schema"
)

// maxAlloc is what the Go heap may allocate while a binary parser reads
// a file of a few bytes whose size fields claim gigabytes: the claim is
// checked against the file and the format's ceiling before anything is
// allocated from it.
const maxAlloc = 4 << 20

// TestSizeFieldsClaimingGigabytes feeds each binary format a file whose
// size or count fields claim gigabytes (or the format's ceiling, over a
// file that holds nothing of it) and checks the exact error and that the
// read allocated at most maxAlloc bytes.
func TestSizeFieldsClaimingGigabytes(t *testing.T) {
	for _, c := range []struct {
		name, format, file string
		data               []byte
		want               string            // "" : read without error
		params             map[string]string // format flags
	}{
		{"baget block_size 4 GiB", "baget", "x.blog",
			bagetHeader(80, 0xfffffff8, 0, 0),
			"x.blog@12: header: block_size: expected a multiple of 8 from 256 to 16777216, found 4294967288", nil},
		{"baget header_size past the file", "baget", "x.blog",
			bagetHeader(0xffff, 256, 0, 0),
			"x.blog@10: header: header_size: expected at most the file size 80, found 65535", nil},
		{"baget service_blocks 4 billion", "baget", "x.blog",
			bagetHeader(80, 256, 0xffffffff, 1),
			"x.blog@16: header: service_blocks: expected at most the 1 blocks in the file, found 4294967295", nil},
		{"baget block_size at its 16 MiB ceiling, no block", "baget", "x.blog",
			bagetHeader(80, 16<<20, 0, 0), "", nil},
		{"baget size_record 4 GiB", "baget", "x.blog",
			bagetWideRecord(0xfffffff0),
			"x.blog@80: record BLOCK: size_record: expected at most 256 bytes (to the end of the block), found 4294967280",
			map[string]string{"description": writeTemp(t, "wide.xml", wideXML)}},
		{"kev syspage 4 GiB", "kev", "x.kev",
			[]byte("TRACE_HEADER_BEGIN::TRACE_SYSPAGE_LEN::4294967296TRACE_HEADER_END::"),
			"x.kev@20: header: TRACE_SYSPAGE_LEN: expected at most 1048576 bytes, found 4294967296", nil},
		{"kev syspage at its 1 MiB ceiling, not in the file", "kev", "x.kev",
			[]byte("TRACE_HEADER_BEGIN::TRACE_SYSPAGE_LEN::1048576TRACE_HEADER_END::"),
			"x.kev@64: syspage: expected 1048576 bytes (TRACE_SYSPAGE_LEN), found 0 before the end of the file", nil},
		{"kev combine event of 2000 records", "kev", "x.kev",
			kevCombine(2000),
			"x.kev@63: combine event (PROCESS:PROCCREATE_NAME, t:0x00000006) begun here is longer than 1024 records", nil},
		{"tlv archive entry declaring 4 GiB", "tlv-archive", "x.tlv",
			zipClaiming(4 << 30),
			`x.tlv: archive entry "x.log" declares 4294967296 bytes, more than the bound of 268435456`, nil},
		{"tlv archive directory claiming 65535 entries", "tlv-archive", "x.tlv",
			zipManyEntries(),
			"x.tlv@0: expected a TLV archive (a zip file), found a zip file that cannot be read (truncated or damaged?): unexpected EOF", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			ing, err := ingest.Lookup(c.format)
			if err != nil {
				t.Fatal(err)
			}
			if ing, err = ingest.Configure(ing, c.params); err != nil {
				t.Fatal(err)
			}
			w := schema.NewRunWriter(schema.RunInfo{Source: c.file}, dbtest.Discard{}, memory.NewGoAllocator())
			defer w.Abort()
			src := ingest.NewSource(c.file, bytes.NewReader(c.data), int64(len(c.data)))
			alloc := dbtest.Allocated(func() { err = ing.Ingest(context.Background(), src, w) })
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != c.want {
				t.Errorf("error\n got %s\nwant %s", got, c.want)
			}
			if alloc > maxAlloc {
				t.Errorf("reading %d bytes allocated %d bytes, more than %d", len(c.data), alloc, maxAlloc)
			}
		})
	}
}

// bagetHeader is the 80-byte header of a log of the bundled minirtos
// description (big-endian ppc32), followed by blocks zero blocks of 256
// bytes.
func bagetHeader(headerSize uint16, blockSize, serviceBlocks uint32, blocks int) []byte {
	h := make([]byte, 80, 80+256*blocks)
	copy(h, "BAGETTRC")
	h[8], h[9] = 'B', 1
	be := binary.BigEndian
	be.PutUint16(h[10:], headerSize)
	be.PutUint32(h[12:], blockSize)
	be.PutUint32(h[16:], serviceBlocks)
	copy(h[24:56], "minirtos-2.1")
	copy(h[56:72], "ppc32")
	return append(h, make([]byte, 256*blocks)...)
}

// kevCombine is a .kev file with one combine event of n records (a begin
// and continuations, never an end).
func kevCombine(n int) []byte {
	b := []byte("TRACE_HEADER_BEGIN::TRACE_LITTLE_ENDIAN::TRUETRACE_HEADER_END::")
	for i := 0; i < n; i++ {
		st := uint32(2) // continuation
		if i == 0 {
			st = 1 // begin
		}
		b = binary.LittleEndian.AppendUint32(b, st<<30|4<<10|192)
		b = binary.LittleEndian.AppendUint32(b, 6)
		b = binary.LittleEndian.AppendUint32(b, uint32(i))
		b = binary.LittleEndian.AppendUint32(b, 0)
	}
	return b
}

// zipClaiming is a zip whose entry x.log is 5 bytes stored but declares
// size bytes.
func zipClaiming(size uint64) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.CreateRaw(&zip.FileHeader{Name: "x.log", Method: zip.Store, CompressedSize64: 5, UncompressedSize64: size})
	if err != nil {
		panic(err)
	}
	w.Write([]byte("[1,2]"))
	if err := zw.Close(); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// zipManyEntries is an empty zip whose end record claims 65535 entries.
func zipManyEntries() []byte {
	var buf bytes.Buffer
	zip.NewWriter(&buf).Close()
	b := buf.Bytes()
	end := bytes.LastIndex(b, []byte("PK\x05\x06"))
	if end < 0 {
		panic(fmt.Sprintf("no end record in %x", b))
	}
	binary.LittleEndian.PutUint16(b[end+8:], 0xffff)
	binary.LittleEndian.PutUint16(b[end+10:], 0xffff)
	return b
}

// wideXML describes records whose size_record is 4 bytes wide.
const wideXML = `<description os="wide-1" arch="x32">
<abi endian="little" pointer="4" long_long_align="4" double_align="4"/>
<descriptor type="unsigned int" size="unsigned int"/>
<event Name="FILL" id="0" kind="filler"/>
<event Name="BLOCK" id="1" kind="block" number="no"><field Name="no" type_name="unsigned int"/></event>
</description>`

// bagetWideRecord is a log of wideXML with one block whose first record,
// a BLOCK, claims size bytes.
func bagetWideRecord(size uint32) []byte {
	h := make([]byte, 80+256)
	copy(h, "BAGETTRC")
	h[8], h[9] = 'L', 1
	le := binary.LittleEndian
	le.PutUint16(h[10:], 80)
	le.PutUint32(h[12:], 256)
	copy(h[24:56], "wide-1")
	copy(h[56:72], "x32")
	le.PutUint32(h[80:], 1)
	le.PutUint32(h[84:], size)
	return h
}

func writeTemp(t *testing.T, name, text string) string {
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
