package baget

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
)

func loadDesc(t testing.TB, file string) *Description {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	d, err := Parse(file, data)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// nodeByPath finds a node by its Path (with "[]" after arrays), union
// members included.
func nodeByPath(ns []*Node, path string) *Node {
	for _, n := range ns {
		if n.Path == path {
			return n
		}
		if c := nodeByPath(n.Children, path); c != nil {
			return c
		}
	}
	return nil
}

// recWriter writes field values into a record in the description's order.
type recWriter struct {
	t   *testing.T
	d   *Description
	ev  *Event
	rec []byte
}

func newRec(t *testing.T, d *Description, name string, size int) *recWriter {
	ev := d.ByName[name]
	if ev == nil {
		t.Fatalf("no event %s", name)
	}
	if size == 0 {
		size = ev.Size
	}
	w := &recWriter{t: t, d: d, ev: ev, rec: make([]byte, size)}
	w.put(ev.Fields[0], 0, ev.ID)
	w.put(ev.Fields[1], 0, uint64(size))
	return w
}

func (w *recWriter) put(n *Node, delta int, v uint64) {
	size := n.ElemSize
	if n.Dims == nil {
		size = n.Size
	}
	off := n.Offset + delta
	for i := 0; i < size; i++ {
		sh := 8 * i
		if w.d.ABI.BigEndian {
			sh = 8 * (size - 1 - i)
		}
		w.rec[off+i] = byte(v >> sh)
	}
}

// set writes v into the field path; delta selects an array element.
func (w *recWriter) set(path string, delta int, v uint64) *recWriter {
	n := nodeByPath(w.ev.Fields, path)
	if n == nil {
		w.t.Fatalf("%s: no field %s", w.ev.Name, path)
	}
	w.put(n, delta, v)
	return w
}

func (w *recWriter) text(path string, s string) *recWriter {
	n := nodeByPath(w.ev.Fields, path)
	copy(w.rec[n.Offset:], s)
	return w
}

// complexArgs is the expected args of the COMPLEX record of TestArgs.
func complexArgs(owner string) string {
	var b strings.Builder
	b.WriteString(`{"ts":3000000500,"o.owner":` + owner + `,"o.inner.flag":65,"o.inner.big":-5,"o.inner.d":1.5,`)
	for i := 0; i < 3; i++ {
		fmt.Fprintf(&b, `"o.inner.pts[%d].x":%d,"o.inner.pts[%d].tag":%d,`, i, i+1, i, 'a'+i)
	}
	for i := 0; i < 2; i++ {
		for j := 0; j < 3; j++ {
			fmt.Fprintf(&b, `"o.grid[%d][%d]":%d,`, i, j, 10+3*i+j)
		}
	}
	b.WriteString(`"o.kind":2,"o.u.text":"hello",`)
	sample := func(name string, big int) {
		fmt.Fprintf(&b, `"%s.flag":0,"%s.big":%d,"%s.d":0,`, name, name, big, name)
		for i := 0; i < 3; i++ {
			fmt.Fprintf(&b, `"%s.pts[%d].x":0,"%s.pts[%d].tag":0,`, name, i, name, i)
		}
	}
	sample("many[0]", 0)
	sample("many[1]", 7)
	b.WriteString(`"sel":7,`)
	sample("top.s", -9)
	b.WriteString(`"last":0}`)
	return b.String()
}

func TestArgs(t *testing.T) {
	for _, c := range []struct {
		file  string
		owner string
	}{{"testdata/layout_le32.xml", "3735928559"}, {"testdata/layout_be64.xml", "3735928559"}} {
		t.Run(c.file, func(t *testing.T) {
			d := loadDesc(t, c.file)
			w := newRec(t, d, "COMPLEX", 0)
			w.set("ts.tv_sec", 0, 3).set("ts.tv_nsec", 0, 500).set("o.owner", 0, 0xdeadbeef).
				set("o.inner.flag", 0, 'A').set("o.inner.big", 0, uint64(0xfffffffffffffffb)).set("o.inner.d", 0, math.Float64bits(1.5))
			for i := 0; i < 3; i++ {
				w.set("o.inner.pts[].x", 4*i, uint64(i+1)).set("o.inner.pts[].tag", 4*i, uint64('a'+i))
			}
			for i := 0; i < 6; i++ {
				w.set("o.grid", 2*i, uint64(10+i))
			}
			w.set("o.kind", 0, 2).text("o.u.text", "hello")
			w.set("many[].big", w.ev.Field("many").ElemSize, 7)
			w.set("sel", 0, 7).set("top.s.big", 0, uint64(0xfffffffffffffff7))
			got := string(d.AppendArgs(nil, w.ev, w.rec))
			if want := complexArgs(c.owner); got != want {
				t.Errorf("args\n got %s\nwant %s", got, want)
			}
			if !json.Valid([]byte(got)) {
				t.Errorf("not JSON: %s", got)
			}
			if ts := d.Time(w.ev, w.rec); ts != 3000000500 {
				t.Errorf("Time = %d", ts)
			}
			if cpu := d.CPU(w.ev, w.rec); cpu != 2 {
				t.Errorf("CPU = %d", cpu)
			}
			if id, text, ok := d.Main(w.ev, w.rec); id != 0xdeadbeef || text != nil || !ok {
				t.Errorf("Main = %d %q %v", id, text, ok)
			}
			// A selector that matches no case: the union's bytes in hex.
			w.set("sel", 0, 5).set("top.word", 0, 0x01020304)
			got = string(d.AppendArgs(nil, w.ev, w.rec))
			word := "01020304"
			if !d.ABI.BigEndian {
				word = "04030201"
			}
			if !strings.Contains(got, `"sel":5,"top":"`+word) {
				t.Errorf("unselected union: %s", got)
			}

			// An integer time in time_unit (us), the interrupt as main object.
			w = newRec(t, d, "INTR_ENTER", 0)
			w.set("t", 0, 42).set("cpu", 0, 3).set("irq", 0, 9)
			if ts := d.Time(w.ev, w.rec); ts != 42000 {
				t.Errorf("INTR_ENTER Time = %d", ts)
			}
			if got, want := string(d.AppendArgs(nil, w.ev, w.rec)), `{"t":42,"cpu":3,"irq":9}`; got != want {
				t.Errorf("args %s, want %s", got, want)
			}

			// THREAD_CREATE: pid, text name.
			w = newRec(t, d, "THREAD_CREATE", 0)
			w.set("ts.tv_sec", 0, 1).set("pid", 0, uint64(0xffffffff)).set("thread", 0, 0x40).text("name", "idle\"\n")
			if pid := d.Pid(w.ev, w.rec); pid != -1 {
				t.Errorf("Pid = %d", pid)
			}
			if got, want := string(d.AppendArgs(nil, w.ev, w.rec)), `{"ts":1000000000,"cpu":0,"pid":-1,"thread":64,"name":"idle\"\n"}`; got != want {
				t.Errorf("args %s, want %s", got, want)
			}

			// USER: a text main object and a flexible char array.
			w = newRec(t, d, "USER", w.d.ByName["USER"].Size+6)
			w.text("obj", "sensor01").set("len", 0, 5)
			copy(w.rec[w.ev.Flexible.Offset:], "hi\x00zz")
			if id, text, ok := d.Main(w.ev, w.rec); id != 0 || string(text) != "sensor01" || !ok {
				t.Errorf("USER Main = %d %q %v", id, text, ok)
			}
			data := ""
			for i, c := range w.rec[w.ev.Flexible.Offset:] {
				data += fmt.Sprintf(`,"data[%d]":%d`, i, c)
			}
			if got, want := string(d.AppendArgs(nil, w.ev, w.rec)), `{"ts":0,"obj":"sensor01","len":5`+data+`}`; got != want {
				t.Errorf("args %s, want %s", got, want)
			}
		})
	}
}

// TestArgsKinds covers pointers, floats, bools, 2-D char arrays and a
// scalar array in a small description (both byte orders).
func TestArgsKinds(t *testing.T) {
	for _, endian := range []string{"little", "big"} {
		xml := fmt.Sprintf(`<description os="k" arch="k">
<abi endian="%s" pointer="8" long_long_align="8" double_align="8"/>
<descriptor type="unsigned char" size="unsigned int"/>
<event Name="K" id="7" time="t">
 <field Name="t" type_name="unsigned long long"/>
 <field Name="p" type_name="void *"/>
 <field Name="q" type_name="char *"/>
 <field Name="f" type_name="float"/>
 <field Name="g" type_name="double"/>
 <field Name="ok" type_name="_Bool"/>
 <field Name="names" type_name="char" dim="2,4"/>
 <field Name="v" type_name="signed char" dim="3"/>
</event>
</description>`, endian)
		d, err := Parse("k.xml", []byte(xml))
		if err != nil {
			t.Fatal(err)
		}
		w := newRec(t, d, "K", 0)
		w.set("t", 0, 5).set("p", 0, 0xffff800012345678).set("q", 0, 0).set("f", 0, uint64(math.Float32bits(-0.25))).
			set("g", 0, math.Float64bits(math.Inf(-1))).set("ok", 0, 1).set("v", 0, 0xff).set("v", 2, 3)
		n := w.ev.Field("names")
		copy(w.rec[n.Offset:], "abcdxy")
		got := string(d.AppendArgs(nil, w.ev, w.rec))
		want := `{"t":5,"p":"0xffff800012345678","q":"0x0","f":-0.25,"g":"-Inf","ok":true,"names[0]":"abcd","names[1]":"xy","v[0]":-1,"v[1]":0,"v[2]":3}`
		if got != want {
			t.Errorf("%s:\n got %s\nwant %s", endian, got, want)
		}
		if ts := d.Time(w.ev, w.rec); ts != 5 {
			t.Errorf("Time = %d", ts)
		}
		if !json.Valid([]byte(got)) {
			t.Errorf("not JSON: %s", got)
		}
	}
}

// TestAccessorsNoAlloc: the typed accessors do not allocate; AppendArgs
// into a reused buffer stays small.
func TestAccessorsNoAlloc(t *testing.T) {
	d, err := Example("minirtos.xml")
	if err != nil {
		t.Fatal(err)
	}
	w := newRec(t, d, "MQ_SEND", 0)
	w.set("ts.tv_sec", 0, 2).set("cpu", 0, 1).set("pid", 0, 3).set("mq", 0, 77).set("msg_kind", 0, 3).set("head.value", 0, math.Float64bits(2.5))
	ev, rec := w.ev, w.rec
	var sink int64
	if a := testing.AllocsPerRun(100, func() {
		id, _, _ := d.Main(ev, rec)
		sink += d.Time(ev, rec) + d.CPU(ev, rec) + d.Pid(ev, rec) + id
	}); a != 0 {
		t.Errorf("accessors: %v allocations", a)
	}
	if sink == 0 {
		t.Fail()
	}
	got := string(d.AppendArgs(nil, ev, rec))
	want := `{"ts":2000000000,"cpu":1,"pid":3,"mq":77,"msg_no":0,"len":0,"prio":0,"msg_kind":3,"msg_kind#":"value","head.value":2.5}`
	if got != want {
		t.Errorf("args\n got %s\nwant %s", got, want)
	}
	var args Args
	if n := testing.AllocsPerRun(100, func() { args.Build(d, ev, rec) }); n != 0 {
		t.Errorf("Args.Build: %v allocations", n)
	}
	if string(args.JSON) != want {
		t.Errorf("Args.Build: %s", args.JSON)
	}
}
