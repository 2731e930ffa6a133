package tlv

import (
	"fmt"
	"math/rand"
	"path/filepath"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/schema"
)

// TestReorder compares the FMP reordering (a queue of the lines that come
// in order and a heap of the others) with a heap of all the lines waiting,
// as it was: the same lines in the same order, the same counts, on logs
// whose lines come in order, a little late, more than the window late,
// going back in time, without a time. Each line goes on with its text as
// it came (the reorder copies it: the reader's buffer is reused), long
// lines too.
func TestReorder(t *testing.T) {
	useLoader(t)
	s, err := LoadSetup(filepath.Join("testdata", "fig3", "fig3.res"), nil, []string{filepath.Join("testdata", "common.resh")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &collect{skip: true}
	rd, err := NewReader(s, c, c)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(1))
	for k, shape := range []func(i int) int64{
		func(i int) int64 { return int64(i) },                       // in order
		func(i int) int64 { return int64(i + rng.Intn(50)) },        // a little late
		func(i int) int64 { return int64(i/2 + 30000*(i%2)) },       // two processors far apart
		func(i int) int64 { return int64(100000 - i) },              // backwards
		func(i int) int64 { return int64(rng.Intn(10)) },            // many ties
		func(i int) int64 { return int64(i + rng.Intn(40000)) },     // more than the window late
		func(i int) int64 { return int64(i - 20000*(i%5000/4999)) }, // now and then far back
	} {
		var lines []string
		for i := 0; i < 3*reorderWindow; i++ {
			switch {
			case rng.Intn(50) == 0:
				lines = append(lines, "no time here")
			case rng.Intn(60) == 0:
				lines = append(lines, fmt.Sprintf("[%d]:[x]: bad processor", shape(i)))
			case rng.Intn(2000) == 0:
				lines = append(lines, fmt.Sprintf("[%d]:[1]: long %s", shape(i), strings.Repeat("y", rng.Intn(3*arenaChunkSize/4))))
			default:
				lines = append(lines, fmt.Sprintf("[%d]:[%d]: line", shape(i), 1+rng.Intn(3)))
			}
		}
		var got, want []int64
		o := newReorder(rd)
		o.emit = func(text string, n int64, cpu schema.CPU) error {
			if text != lines[n-1] {
				t.Fatalf("shape %d: line %d goes on as %.40q, want %.40q", k, n, text, lines[n-1])
			}
			got = append(got, n)
			return nil
		}
		ref := &refReorder{r: rd}
		var buf []byte
		for i, l := range lines {
			buf = append(buf[:0], l...)
			if err := o.push(buf, int64(i+1)); err != nil {
				t.Fatal(err)
			}
			for j := range buf {
				buf[j] = 'X'
			}
			ref.push(l, int64(i+1), &want)
		}
		if err := o.flush(); err != nil {
			t.Fatal(err)
		}
		ref.flush(&want)
		if len(got) != len(want) {
			t.Fatalf("shape %d: %d lines out, want %d", k, len(got), len(want))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("shape %d: line %d out is %d, want %d", k, i, got[i], want[i])
			}
		}
		if o.late != ref.late || o.tooLate != ref.tooLate || o.firstLat != ref.firstLat || o.firstToo != ref.firstToo {
			t.Fatalf("shape %d: late %d (first %d), too late %d (first %d); want %d (%d), %d (%d)", k,
				o.late, o.firstLat, o.tooLate, o.firstToo, ref.late, ref.firstLat, ref.tooLate, ref.firstToo)
		}
		t.Logf("shape %d: %d lines, %d late, %d too late; %d chunks", k, len(got), o.late, o.tooLate, len(o.arena.free)+1)
	}
}

// refReorder is the reordering as it was: one heap of every line waiting.
type refReorder struct {
	r                                 *Reader
	h                                 lineHeap
	maxNS, lastOut                    int64
	haveMax, haveOut                  bool
	late, tooLate, firstLat, firstToo int64
}

func (o *refReorder) push(text string, n int64, out *[]int64) {
	p := pending{n: n, cpu: schema.NoCPU, text: text}
	if m := fmpLine.FindStringSubmatch(text); m != nil {
		if t, err := ParseTime(m[1], o.r.Radix, o.r.Unit); err == nil {
			p.ns = t.NS
			if o.haveMax && p.ns < o.maxNS {
				if o.late == 0 {
					o.firstLat = n
				}
				o.late++
			}
			if !o.haveMax || p.ns > o.maxNS {
				o.maxNS, o.haveMax = p.ns, true
			}
		} else {
			p.ns = o.maxNS
		}
	} else {
		p.ns = o.maxNS
	}
	o.h.push(p)
	if len(o.h) > reorderWindow {
		o.out(out)
	}
}

func (o *refReorder) out(out *[]int64) {
	p := o.h.pop()
	if o.haveOut && p.ns < o.lastOut {
		if o.tooLate == 0 {
			o.firstToo = p.n
		}
		o.tooLate++
	} else {
		o.lastOut, o.haveOut = p.ns, true
	}
	*out = append(*out, p.n)
}

func (o *refReorder) flush(out *[]int64) {
	for len(o.h) > 0 {
		o.out(out)
	}
}
