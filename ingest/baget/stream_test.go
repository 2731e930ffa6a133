package baget

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"
	"testing/iotest"
)

// scanStream reads data as a stream of unknown size (standard input), one
// byte a read, and returns what a Scan visits as Open's indexes.
func scanStream(data []byte, d *Description, report Report) (idx []Entry, events []int32, first uint64, wrapped bool, dataBlocks int, err error) {
	s, err := NewScanner(iotest.OneByteReader(bytes.NewReader(data)), -1, "x.blog")
	if err != nil {
		return nil, nil, 0, false, 0, err
	}
	err = s.Scan(d, report, func(e Entry, rec []byte, service bool) error {
		if int64(len(rec)) != int64(e.Size) || !bytes.Equal(rec, data[e.Off:e.Off+int64(e.Size)]) {
			return fmt.Errorf("record at %d: visited bytes differ from the file's", e.Off)
		}
		if !service && d.Events[e.Ev].Kind.Essential() {
			events = append(events, int32(len(idx)))
		}
		idx = append(idx, e)
		return nil
	})
	return idx, events, s.FirstBlock, s.Wrapped, s.DataBlocks, err
}

// TestStreamLikeOpen: a log read as a stream of unknown size gives what
// Open gives with the size known (the index, the events, the first block,
// the errors and diagnostics of every case of TestBadLog), while holding
// one block. Only a service_blocks past the end may come after other
// errors.
func TestStreamLikeOpen(t *testing.T) {
	for _, big := range []bool{false, true} {
		d := readerDesc(t, big)
		cases := append([]badLog{{name: "good"}}, badLogs...)
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s/big=%v", c.name, big), func(t *testing.T) {
				lb := c.build(big)
				for _, skip := range []bool{false, true} {
					var want, got diagLog
					var wr, gr Report
					if skip {
						wr, gr = want.report, got.report
					}
					l, werr := Open(bytes.NewReader(lb.b), int64(len(lb.b)), "x.blog", d, wr)
					idx, evs, first, wrapped, blocks, gerr := scanStream(lb.b, d, gr)
					if c.name == "service_blocks" {
						// Found only at the end of a stream: the blocks
						// taken for service blocks may have had bad
						// records first.
						if gerr == nil || skip && gerr.Error() != werr.Error() {
							t.Fatalf("skip=%v: stream error %v, Open's %v", skip, gerr, werr)
						}
						continue
					}
					if fmt.Sprint(werr) != fmt.Sprint(gerr) {
						t.Fatalf("skip=%v: stream error %v, Open's %v", skip, gerr, werr)
					}
					if !reflect.DeepEqual(want, got) {
						t.Errorf("skip=%v: stream diagnostics %q, Open's %q", skip, got, want)
					}
					if werr != nil {
						continue
					}
					if !reflect.DeepEqual(idx, l.Index) || !reflect.DeepEqual(evs, l.Events) || first != l.FirstBlock || wrapped != l.Wrapped || blocks != l.DataBlocks {
						t.Errorf("skip=%v: stream %v %v %d %v %d, Open %v %v %d %v %d", skip, idx, evs, first, wrapped, blocks,
							l.Index, l.Events, l.FirstBlock, l.Wrapped, l.DataBlocks)
					}
				}
			})
		}
	}
}

// TestStreamShortBigBlock: a header that claims blocks of MaxBlockSize
// followed by a few bytes is an error at the end of the file, with no
// block-sized buffer made before the bytes are there.
func TestStreamShortBigBlock(t *testing.T) {
	d := readerDesc(t, false)
	lb := &logBuilder{}
	lb.header("tos-1", "t32", 0, 0)
	lb.order().PutUint32(lb.b[12:], MaxBlockSize)
	lb.b = append(lb.b, make([]byte, 100)...)
	s, err := NewScanner(bytes.NewReader(lb.b), -1, "x.blog")
	if err != nil {
		t.Fatal(err)
	}
	err = s.Scan(d, nil, func(Entry, []byte, bool) error { return nil })
	want := fmt.Sprintf("x.blog@80: expected a whole block of %d bytes, found 100 bytes before the end of the file", MaxBlockSize)
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
	if len(s.buf) > firstRead {
		t.Errorf("a buffer of %d bytes for 100 bytes of a block", len(s.buf))
	}
}
