package baget

import (
	"bytes"
	"errors"
	"testing"

	"github.com/traceduck/traceduck/schema"
)

// fuzzLog makes a log for the bundled minirtos description: a valid header
// (svc service blocks, block size 256), then body, cut or padded to whole
// blocks when pad is set.
func fuzzLog(svc uint8, flags uint8, pad bool, body []byte) []byte {
	lb := &logBuilder{big: true}
	lb.header("minirtos-2.1", "ppc32", int(svc%3), uint32(flags%2))
	b := append(lb.b, body...)
	if pad {
		if r := (len(b) - HeaderSize) % testBS; r != 0 {
			b = append(b, make([]byte, testBS-r)...)
		}
	}
	return b
}

// minirtosBlocks is a seed body: a service block with a thread's creation
// and two data blocks with events of several types.
func minirtosBlocks(t testing.TB) []byte {
	d, err := Example("minirtos.xml")
	if err != nil {
		t.Fatal(err)
	}
	lb := &logBuilder{big: true}
	mk := func(name string, extra int) []byte {
		ev := d.ByName[name]
		r := lb.rec(int(ev.ID), ev.Size+extra)
		if ev.Number != nil {
			return r
		}
		r[12] = 0 // cpu
		return r
	}
	num := func(r []byte, n byte) []byte { r[7] = n; return r }
	lb.block(num(mk("BLOCK", 0), 0), mk("THREAD_CREATE", 0))
	lb.block(num(mk("BLOCK", 0), 3), mk("THREAD_SWITCH", 0), mk("MQ_SEND", 0), mk("USER_EVENT", 7), mk("INTR_ENTER", 0))
	lb.block(num(mk("BLOCK", 0), 5), mk("SEM_GIVE", 0), mk("FLUSH", 0))
	return lb.b
}

func FuzzLog(f *testing.F) {
	body := minirtosBlocks(f)
	f.Add(uint8(1), uint8(0), true, body)
	f.Add(uint8(1), uint8(1), false, body[:300])
	f.Add(uint8(0), uint8(0), true, body[256:])
	f.Add(uint8(0), uint8(0), true, []byte{0, 1, 0, 8, 0, 0, 0, 0, 0, 99, 0, 4})
	d, err := Example("minirtos.xml")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, svc, flags uint8, pad bool, body []byte) {
		data := fuzzLog(svc, flags, pad, body)
		size := int64(len(data))
		checkErr := func(err error) {
			var ie *schema.InputError
			if !errors.As(err, &ie) || ie.File != "f.blog" || ie.Offset < 0 || ie.Offset > size {
				t.Fatalf("error without a file offset: %v", err)
			}
		}
		if _, err := Open(bytes.NewReader(data), size, "f.blog", d, nil); err != nil {
			checkErr(err)
		}
		report := func(sev schema.Severity, off int64, msg string) error {
			if off < HeaderSize || off >= size || msg == "" {
				t.Fatalf("report at %d outside the blocks: %s", off, msg)
			}
			return nil
		}
		l, err := Open(bytes.NewReader(data), size, "f.blog", d, report)
		if err != nil {
			checkErr(err)
			return
		}
		var args Args
		for i, e := range l.Index {
			if e.Off < int64(l.HeaderSize) || e.Off+int64(e.Size) > size || e.Ev < 0 || int(e.Ev) >= len(d.Events) {
				t.Fatalf("bad entry %d: %+v", i, e)
			}
			rec, err := l.Record(i)
			if err != nil {
				t.Fatal(err)
			}
			ev := d.Events[e.Ev]
			if ev.Kind != RecFiller && len(rec) < ev.Size {
				t.Fatalf("entry %d: %d bytes for %s of sizeof %d", i, len(rec), ev.Name, ev.Size)
			}
			d.Time(ev, rec)
			d.CPU(ev, rec)
			d.Pid(ev, rec)
			d.Main(ev, rec)
			args.Build(d, ev, rec)
		}
		for _, i := range l.Events {
			if !d.Events[l.Index[i].Ev].Kind.Essential() {
				t.Fatalf("event %d is not essential", i)
			}
		}
	})
}

// TestFuzzSeed: the fuzz seed is a valid minirtos log.
func TestFuzzSeed(t *testing.T) {
	d, err := Example("minirtos.xml")
	if err != nil {
		t.Fatal(err)
	}
	data := fuzzLog(1, 0, true, minirtosBlocks(t))
	var diags diagLog
	l, err := Open(bytes.NewReader(data), int64(len(data)), "f.blog", d, diags.report)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Events) != 5 || len(l.Service) != 1 || l.FirstBlock != 3 || !l.Wrapped {
		t.Errorf("events %v service %v first %d wrapped %v", l.Events, l.Service, l.FirstBlock, l.Wrapped)
	}
	if want := "warning @592: blocks 4..4 missing"; len(diags) != 1 || diags[0] != want {
		t.Errorf("diagnostics %q, want %q", diags, want)
	}
}
