package baget

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/schema"
)

// nestingSeed is a body for nestingXML: a block of switches, interrupts
// entered on an unknown CPU and nested past the bound, returns with none
// to return to, on two CPUs.
func nestingSeed() []byte {
	const sw, in, out = 20, 21, 22
	lb := &logBuilder{}
	recs := [][]byte{lb.rec(tBlock, 8, 0), lb.rec(in, 16, 1, 1, 7), lb.rec(out, 12, 2, 1), lb.rec(sw, 16, 3, 0, 0x10),
		lb.rec(sw, 16, 4, 1, 0x10), lb.rec(out, 12, 5, 0)}
	for i := 0; i < 8; i++ {
		recs = append(recs, lb.rec(in, 16, uint32(6+i), 0, uint32(i+1)))
	}
	lb.block(recs...)
	return lb.b
}

// FuzzIngest feeds a header and arbitrary blocks to the whole ingest (the
// reader, the machine, the CPU, resource and message models), strict and
// with --skip-bad, through the bundled minirtos description, the CPU rules
// of nestingXML or the resource and message rules of syncXML (which mod 3:
// 0, 1, 2): it never panics or hangs; an error is an input error
// at an offset in the file (with --skip-bad only the header's); the
// batches are valid and memory is released.
func FuzzIngest(f *testing.F) {
	dir := f.TempDir()
	mini, err := ExampleXML("minirtos.xml")
	if err != nil {
		f.Fatal(err)
	}
	descs := [3]string{filepath.Join(dir, "minirtos.xml"), filepath.Join(dir, "nesting.xml"), filepath.Join(dir, "sync.xml")}
	if err := os.WriteFile(descs[0], mini, 0o644); err != nil {
		f.Fatal(err)
	}
	if err := os.WriteFile(descs[1], []byte(nestingXML), 0o644); err != nil {
		f.Fatal(err)
	}
	if err := os.WriteFile(descs[2], []byte(syncXML), 0o644); err != nil {
		f.Fatal(err)
	}
	body := minirtosBlocks(f)
	f.Add(uint8(0), uint8(1), uint8(0), true, body)
	f.Add(uint8(0), uint8(0), uint8(1), false, body[:300])
	f.Add(uint8(1), uint8(0), uint8(0), true, nestingSeed())
	f.Add(uint8(1), uint8(0), uint8(0), true, append(nestingSeed(), nestingSeed()[4:]...))
	f.Add(uint8(2), uint8(0), uint8(0), true, syncBlocks())
	f.Fuzz(func(t *testing.T, which, svc, flags uint8, pad bool, body []byte) {
		which %= 3 // minirtos (big endian), nesting, sync (little endian)
		lb := &logBuilder{big: which == 0}
		if which == 0 {
			lb.header("minirtos-2.1", "ppc32", int(svc%3), uint32(flags%2))
		} else {
			lb.header("tos-1", "t32", int(svc%3), uint32(flags%2))
		}
		data := append(lb.b, body...)
		if r := (len(data) - HeaderSize) % testBS; pad && r != 0 {
			data = append(data, make([]byte, testBS-r)...)
		}
		for _, skip := range []bool{false, true} {
			start := time.Now()
			mem := memory.NewCheckedAllocator(dbtest.RecyclingAllocator)
			sink := &dbtest.Checked{}
			w := schema.NewRunWriter(schema.RunInfo{RunID: 1, Source: "f.blog", SkipBad: skip, Offsets: true}, sink, mem)
			src := ingest.NewSource("f.blog", bytes.NewReader(data), int64(len(data)))
			err := (&Ingester{description: descs[which]}).Ingest(context.Background(), src, w)
			if err != nil {
				var ie *schema.InputError
				if !errors.As(err, &ie) || ie.File != "f.blog" || ie.Offset < 0 || ie.Offset > int64(len(data)) ||
					(skip && ie.Offset >= HeaderSize && !strings.Contains(ie.Msg, "block")) {
					t.Fatalf("skip-bad=%v: %v", skip, err)
				}
				w.Abort()
			} else if err := w.Finish(time.Unix(0, 0)); err != nil {
				t.Fatal(err)
			}
			if sink.Err != nil {
				t.Fatal(sink.Err)
			}
			mem.AssertSize(t, 0)
			if el := time.Since(start); el > 5*time.Second {
				t.Fatalf("ingest took %v", el)
			}
		}
	})
}
