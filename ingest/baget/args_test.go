package baget

import (
	"bytes"
	"math/rand"
	"os"
	"path/filepath"
	"testing"
)

// TestArgsProgram: the flattened args programs build the same JSON as the
// walk of the field tree, for every event of the test and bundled
// descriptions, on random records of sizeof, shorter and longer (a
// flexible array's length, a short record's nulls, every union case).
func TestArgsProgram(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.xml")
	var descs []*Description
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		d, err := Parse(f, data)
		if err != nil {
			t.Fatal(err)
		}
		descs = append(descs, d)
	}
	d, err := Example("minirtos.xml")
	if err != nil {
		t.Fatal(err)
	}
	descs = append(descs, d, readerDesc(t, true))
	rng := rand.New(rand.NewSource(1))
	var a, b Args
	programs := 0
	for _, d := range descs {
		for _, ev := range d.Events {
			if ev.args != nil {
				programs++
			}
			for i := 0; i < 200; i++ {
				size := ev.Size
				switch i % 4 {
				case 1:
					size += rng.Intn(40)
				case 2:
					size = rng.Intn(ev.Size + 1)
				}
				rec := make([]byte, size)
				rng.Read(rec)
				if i%8 == 3 { // small values: union selectors that match a case
					for j := range rec {
						rec[j] &= 3
					}
				}
				got := string(a.Build(d, ev, rec))
				b.JSON = b.JSON[:0]
				if cap(b.name) < 256 {
					b.name = make([]byte, 0, 256)
				}
				want := string(b.walk(d, ev, rec))
				if got != want {
					t.Fatalf("%s %s, record %x:\nprogram %s\nwalk    %s", d.File, ev.Name, rec, got, want)
				}
			}
		}
	}
	if programs == 0 {
		t.Fatal("no event has a program")
	}
}

// TestArgsProgramBound: an event with more members than maxEventOps
// walks its tree, with the same result.
func TestArgsProgramBound(t *testing.T) {
	xml := bytes.Replace([]byte(readerXML("little")), []byte(`<field Name="x" type_name="unsigned int"/>`),
		[]byte(`<field Name="x" type_name="unsigned int" dim="2000"/>`), 1)
	d, err := Parse("big.xml", xml)
	if err != nil {
		t.Fatal(err)
	}
	ev := d.ByName["NOTE"]
	if ev.args != nil {
		t.Fatalf("a program of %d steps", len(ev.args))
	}
	rec := make([]byte, ev.Size)
	rec[4] = 7
	var a Args
	got := a.Build(d, ev, rec)
	if !bytes.HasPrefix(got, []byte(`{"x[0]":7,"x[1]":0,`)) || !bytes.HasSuffix(got, []byte(`"x[1999]":0}`)) {
		t.Errorf("args %.80s...", got)
	}
}
