package qnx

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/qnxenc"
	"github.com/traceduck/traceduck/schema"
)

// The run writers of the fuzz targets: readKev uses its writer only for
// errors and diagnostics, and a RunWriter is costly to make, so each fuzz
// process shares one per mode (diagnostics past the writer's bound are
// only counted).
var (
	fuzzWriterOnce            sync.Once
	fuzzStrictW, fuzzLenientW *schema.RunWriter
)

const fuzzKevName = "fuzz.kev"

func fuzzWriters() (strict, lenient *schema.RunWriter) {
	fuzzWriterOnce.Do(func() {
		fuzzStrictW = schema.NewRunWriter(schema.RunInfo{Source: fuzzKevName, Offsets: true}, &diagSink{}, nil)
		fuzzLenientW = schema.NewRunWriter(schema.RunInfo{Source: fuzzKevName, SkipBad: true, Offsets: true}, &diagSink{}, nil)
	})
	return fuzzStrictW, fuzzLenientW
}

// countSink counts events and checks each as it comes.
type countSink struct {
	t      *testing.T
	size   int64
	n      int
	events []recEvent // kept when keep is set
	keep   bool
}

func (s *countSink) header(key, value string) {}

func (s *countSink) handle(e *event) error {
	s.n++
	if e.pos < 0 || e.pos+kevRecord > s.size || e.cpu < 0 || e.cpu > 63 || len(e.class) == 0 || len(e.name) == 0 {
		s.t.Fatalf("event at %d of %d bytes: cpu %d class %q name %q", e.pos, s.size, e.cpu, e.class, e.name)
	}
	if s.keep {
		r := recEvent{pos: e.pos, cpu: e.cpu, t: e.t, class: string(e.class), name: string(e.name)}
		for _, f := range e.fields {
			r.fields = append(r.fields, qnxenc.Field{Key: string(f.key), Value: string(f.value)})
		}
		s.events = append(s.events, r)
	}
	return nil
}

var kevErrRE = regexp.MustCompile(`^` + regexp.QuoteMeta(fuzzKevName) + `@([0-9]+): \S`)

// checkKev reads data strictly and with --skip-bad: neither panics, an
// error is an *schema.InputError naming an offset within the data, and
// the lenient read only fails where the strict one fails the same way (a
// header that cannot be read).
func checkKev(t *testing.T, data []byte) {
	strictW, lenientW := fuzzWriters()
	read := func(w *schema.RunWriter) (*countSink, error) {
		sink := &countSink{t: t, size: int64(len(data))}
		src := ingest.NewSource(fuzzKevName, bytes.NewReader(data), int64(len(data)))
		return sink, readKev(context.Background(), src, w, sink)
	}
	strict, err := read(strictW)
	if err != nil {
		var ie *schema.InputError
		if !errors.As(err, &ie) || error(ie) != err {
			t.Fatalf("error is not a *schema.InputError: %T %v", err, err)
		}
		m := kevErrRE.FindStringSubmatch(err.Error())
		if m == nil {
			t.Fatalf("error does not start with %s@OFFSET: and a message: %q", fuzzKevName, err)
		}
		off, _ := strconv.ParseInt(m[1], 10, 64)
		if off != ie.Offset || off < 0 || off > int64(len(data)) {
			t.Fatalf("error at offset %d (field %d) of %d bytes: %v", off, ie.Offset, len(data), err)
		}
	}
	lenient, lerr := read(lenientW)
	if lerr != nil && (err == nil || lerr.Error() != err.Error()) {
		t.Fatalf("--skip-bad: error %v; strict: %v", lerr, err)
	}
	if lenient.n < strict.n {
		t.Fatalf("--skip-bad read %d events, strict %d", lenient.n, strict.n)
	}
}

// kevSeeds are the committed fixtures and hand-made edge cases.
func kevSeeds(tb testing.TB) [][]byte {
	files, _ := filepath.Glob("testdata/kev/*.kev")
	var seeds [][]byte
	for _, path := range files {
		b, err := os.ReadFile(path)
		if err != nil {
			tb.Fatal(err)
		}
		seeds = append(seeds, b)
	}
	le := binary.LittleEndian
	head := []byte(leHead)
	for _, s := range [][]byte{
		nil,
		head,
		[]byte(beHead),
		cat(head, rec(le, 3, 0, 4, 192, 6, 0, 0)),
		cat(head, rec(le, 1, 0, 4, 192, 6, 0, 0), rec(le, 2, 0, 4, 192, 6, 0x61616161, 0)),
		cat(head, rec(le, 0, 0, 2, 139, 6, 0xffffffff, 5), []byte{1, 2}),
		[]byte("TRACE_HEADER_BEGIN::TRACE_SYSPAGE_LEN::16TRACE_HEADER_END::0123456789abcdef"),
		[]byte("TRACE_HEADER_BEGIN::TRACE_SYSPAGE_LEN::1048576TRACE_HEADER_END::"),
		[]byte("TRACE_HEADER_BEGIN::TRACE_HEADER_END::"),
		[]byte("TRACE_HEADER_BEGIN::TRACE_::TRACE_HEADER_END::"),
		[]byte("TRACE_HEADER_BEGIN::TRACE_A::TRACE_TRACE_HEADER_END::"),
		[]byte("TRACE_HEADER_BEGIN::garbageTRACE_A::bTRACE_HEADER_END::"),
	} {
		seeds = append(seeds, s)
	}
	return seeds
}

// FuzzKev feeds arbitrary bytes to the .kev reader.
func FuzzKev(f *testing.F) {
	for _, s := range kevSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkKev(t, data)
	})
}

// fuzzHeader picks a valid header from a byte: byte order and a syspage.
func fuzzHeader(sel byte) []byte {
	h := leHead
	if sel&1 != 0 {
		h = beHead
	}
	if sel&2 != 0 {
		h = h[:len(h)-len(kevEndMarker)] + "TRACE_SYSPAGE_LEN::8" + kevEndMarker + "SYSPAGE!"
	}
	return []byte(h)
}

// FuzzKevRecords feeds arbitrary records after a valid header.
func FuzzKevRecords(f *testing.F) {
	for _, s := range kevSeeds(f) {
		if i := bytes.Index(s, []byte(kevEndMarker)); i >= 0 {
			f.Add(byte(0), s[i+len(kevEndMarker):])
			f.Add(byte(1), s[i+len(kevEndMarker):])
		}
	}
	f.Fuzz(func(t *testing.T, sel byte, recs []byte) {
		checkKev(t, append(fuzzHeader(sel), recs...))
	})
}

// FuzzKevRoundTrip reads arbitrary records after a valid header, writes
// the events read with the .kev writer and reads them again: the same
// events must come back. The writer inverts the reader's printing; this
// checks they agree on whatever the records hold.
func FuzzKevRoundTrip(f *testing.F) {
	for _, s := range kevSeeds(f) {
		if i := bytes.Index(s, []byte(kevEndMarker)); i >= 0 {
			f.Add(byte(0), s[i+len(kevEndMarker):])
			f.Add(byte(1), s[i+len(kevEndMarker):])
		}
	}
	f.Fuzz(func(t *testing.T, sel byte, recs []byte) {
		_, lenient := fuzzWriters()
		data := append(fuzzHeader(sel), recs...)
		first := &countSink{t: t, size: int64(len(data)), keep: true}
		if err := readKev(context.Background(), ingest.NewSource(fuzzKevName, bytes.NewReader(data), int64(len(data))), lenient, first); err != nil {
			t.Fatal(err)
		}
		h := qnxenc.Header{Attrs: [][2]string{{"LITTLE_ENDIAN", "TRUE"}}}
		if sel&1 != 0 {
			h.Attrs[0][0] = "BIG_ENDIAN"
		}
		evs := make([]qnxenc.Event, len(first.events))
		for i, e := range first.events {
			evs[i] = qnxenc.Event{CPU: e.cpu, Cycles: uint64(e.t), Class: e.class, Name: e.name, Fields: e.fields}
		}
		var buf bytes.Buffer
		if err := qnxenc.WriteKevOptions(&buf, h, evs, qnxenc.KevOptions{Interleave: int(sel >> 4)}); err != nil {
			t.Fatalf("the writer refuses an event the reader made: %v", err)
		}
		strict, _ := fuzzWriters()
		again := &countSink{t: t, size: int64(buf.Len()), keep: true}
		if err := readKev(context.Background(), ingest.NewSource(fuzzKevName, bytes.NewReader(buf.Bytes()), int64(buf.Len())), strict, again); err != nil {
			t.Fatalf("reading what the writer wrote: %v", err)
		}
		if len(again.events) != len(first.events) {
			t.Fatalf("%d events, then %d", len(first.events), len(again.events))
		}
		for i := range again.events {
			if a, b := first.events[i].String(), again.events[i].String(); a != b {
				t.Fatalf("event %d:\n first  %s\n again  %s", i, a, b)
			}
		}
	})
}

// TestKevFuzzSeeds runs the seeds through every check (the fuzz targets
// run them too; this names them in a plain go test).
func TestKevFuzzSeeds(t *testing.T) {
	for i, s := range kevSeeds(t) {
		t.Run(fmt.Sprint(i), func(t *testing.T) { checkKev(t, s) })
	}
}
