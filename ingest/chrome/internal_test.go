package chrome

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/schema"
)

// TestMicrosToNS: the exact conversion, by hand and against math/big on
// numbers of every shape.
func TestMicrosToNS(t *testing.T) {
	for _, tc := range []struct {
		in  string
		ns  int64
		sub bool
		ok  bool
	}{
		{"0", 0, false, true},
		{"3.011", 3011, false, true}, // float64: 3.011 * 1000 = 3010.9999999999995
		{"1.1", 1100, false, true},
		{"-2.5", -2500, false, true},
		{"1e3", 1_000_000, false, true},
		{"1E+3", 1_000_000, false, true},
		{"1.5e-3", 1, true, true},
		{"0.0001", 0, true, true},
		{"0.000", 0, false, true},
		{"510075891653", 510075891653000, false, true},
		{"9223372036854775.807", math.MaxInt64, false, true},
		{"9223372036854775.808", 0, false, false},
		{"-9223372036854775.807", -math.MaxInt64, false, true},
		{"1e-400", 0, true, true},
		{"0e999999999", 0, false, true},
		{"1e999999999", 0, false, false},
		{"12345678901234567890123e-20", 123456, true, true},
		{"123.4560000000000000000000000", 123456, false, true},
		{"", 0, false, false}, {"-", 0, false, false}, {"1.", 0, false, false}, {".5", 0, false, false},
		{"1e", 0, false, false}, {"1x", 0, false, false}, {"+1", 0, false, false}, {" 1", 0, false, false},
	} {
		ns, sub, ok := microsToNS([]byte(tc.in))
		if ns != tc.ns || sub != tc.sub || ok != tc.ok {
			t.Errorf("%q: %d %v %v, want %d %v %v", tc.in, ns, sub, ok, tc.ns, tc.sub, tc.ok)
		}
	}
	// Against exact rationals: mantissas of 1 to 25 digits, a decimal
	// point anywhere, exponents from -30 to 30.
	r := uint64(1)
	next := func(n uint64) uint64 {
		r = r*6364136223846793005 + 1442695040888963407
		return (r >> 33) % n
	}
	for i := 0; i < 20000; i++ {
		var b strings.Builder
		if next(3) == 0 {
			b.WriteByte('-')
		}
		digits := int(next(25)) + 1
		point := int(next(uint64(digits + 1)))
		for d := 0; d < digits; d++ {
			if d == point && d > 0 {
				b.WriteByte('.')
			}
			c := byte('0' + next(10))
			if d == 0 && (point != 1 || digits == 1) && point != 0 {
				c = byte('1' + next(9))
			}
			b.WriteByte(c)
		}
		if next(2) == 0 {
			fmt.Fprintf(&b, "e%d", int(next(61))-30)
		}
		in := b.String()
		want, ok := new(big.Rat).SetString(in)
		if !ok {
			continue
		}
		want.Mul(want, big.NewRat(1000, 1))
		q := new(big.Int).Quo(want.Num(), want.Denom()) // toward zero
		exact := new(big.Int).Rem(want.Num(), want.Denom()).Sign() == 0
		ns, sub, ok := microsToNS([]byte(in))
		if !q.IsInt64() {
			if ok {
				t.Errorf("%q: %d, want out of range", in, ns)
			}
			continue
		}
		if !ok || ns != q.Int64() || sub == exact {
			t.Errorf("%q: %d %v %v, want %d sub=%v", in, ns, sub, ok, q.Int64(), !exact)
		}
	}
}

// A number microsToNS refuses is out of range when isDecimal says it is
// a number: the message says which.
func TestIsDecimal(t *testing.T) {
	for in, want := range map[string]bool{
		"9223372036854775.808": true, "1e999999999": true, "-1e400": true, "99999999999999999999999": true, "1.5E+3": true,
		"": false, "-": false, "1.": false, ".5": false, "1e": false, "1x": false, "+1": false, " 1": false, "0x10": false,
	} {
		if got := isDecimal([]byte(in)); got != want {
			t.Errorf("isDecimal(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestUnquoteAndSurrogates(t *testing.T) {
	for in, want := range map[string]string{
		`a\"b\\c\/d\b\f\n\r\t`: "a\"b\\c/d\b\f\n\r\t",
		`\u00e9\u20ac`:         "é€",
		`\ud83d\ude00`:         "😀",
		`\ud800x`:              "\ufffdx",
		`\udc00\ud800`:         "\ufffd\ufffd",
		`\ud800\u0041`:         "\ufffdA",
	} {
		if got := string(unquote(nil, []byte(in))); got != want {
			t.Errorf("unquote %s: %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		`{"a":"\ud800","\udc00":1}`:           `{"a":"\ufffd","\ufffd":1}`,
		`["\ud83d\ude00","\\ud800","\ud83d"]`: `["\ud83d\ude00","\\ud800","\ufffd"]`,
	} {
		b := []byte(in)
		fixSurrogates(b)
		if string(b) != want {
			t.Errorf("fixSurrogates %s: %s, want %s", in, b, want)
		}
	}
}

// ingestWith runs the parser on r with a sink that keeps the intervals.
func ingestWith(t *testing.T, r io.Reader, skipBad bool) (*parser, *intervalSink, error) {
	t.Helper()
	sink := &intervalSink{}
	w := schema.NewRunWriter(schema.RunInfo{RunID: 1, Source: "t.json", Format: "chrome", SkipBad: skipBad, Offsets: true}, sink, memory.NewGoAllocator())
	p := newParser(w, ingest.NewSource("t.json", r, -1))
	err := p.run(context.Background())
	if err == nil {
		err = p.m.finish()
	}
	if err != nil {
		w.Abort()
		return p, sink, err
	}
	if err := w.Finish(time.Now()); err != nil {
		t.Fatal(err)
	}
	return p, sink, nil
}

type intervalSink struct {
	rows    []string
	count   int
	diags   []string
	symbols []string
}

func (s *intervalSink) Put(table string, rec arrow.Record) error {
	switch table {
	case schema.TableSymbols:
		names := rec.Column(1).(*array.String)
		for i := 0; i < names.Len(); i++ {
			s.symbols = append(s.symbols, names.Value(i))
		}
	case schema.TableStateIntervals:
		inst, state := rec.Column(2).(*array.Int64), rec.Column(3).(*array.Int32)
		start, end := rec.Column(4).(*array.Int64), rec.Column(5).(*array.Int64)
		s.count += int(rec.NumRows())
		for i := 0; i < int(rec.NumRows()) && s.count < 1000; i++ {
			s.rows = append(s.rows, fmt.Sprintf("%d %s %d %d", inst.Value(i), s.symbols[state.Value(i)], start.Value(i), end.Value(i)))
		}
	case schema.TableDiagnostics:
		msg, count := rec.Column(4).(*array.String), rec.Column(5).(*array.Int64)
		for i := 0; i < int(rec.NumRows()); i++ {
			s.diags = append(s.diags, fmt.Sprintf("%d %s", count.Value(i), msg.Value(i)))
		}
	}
	return nil
}

// lazyTrace writes n events on demand: a trace of any size without
// holding it.
type lazyTrace struct {
	n, i int
	buf  bytes.Buffer
}

func (l *lazyTrace) Read(p []byte) (int, error) {
	for l.buf.Len() < len(p) && l.i <= l.n {
		switch {
		case l.i == 0:
			l.buf.WriteString(`{"traceEvents": [`)
		case l.i < l.n:
			fmt.Fprintf(&l.buf, `{"name":"s%d","ph":"X","pid":1,"tid":%d,"ts":%d,"dur":1.5,"args":{"pad":"%s"}},`+"\n", l.i%7, l.i%5, l.i, strings.Repeat("x", l.i%300))
		default:
			l.buf.WriteString(`{"name":"end","ph":"i","pid":1,"tid":1,"ts":0}]}`)
		}
		l.i++
	}
	if l.buf.Len() == 0 {
		return 0, io.EOF
	}
	return l.buf.Read(p)
}

// TestStreamed: a trace of 100 MB is read with a buffer that never grows
// (one read chunk), and complete events on several threads wait in
// bounded heaps.
func TestStreamed(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 100 MB")
	}
	defer func(n int) { maxPending = n }(maxPending)
	maxPending = 1000
	p, sink, err := ingestWith(t, &lazyTrace{n: 450_000}, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.s.base + int64(p.s.end); got < 100_000_000 {
		t.Errorf("read %d bytes", got)
	}
	if cap(p.s.buf) != readChunk {
		t.Errorf("read buffer grew to %d bytes", cap(p.s.buf))
	}
	if sink.count != 450_000-1 || len(sink.diags) != 0 {
		t.Errorf("%d intervals, diagnostics %v", len(sink.rows), sink.diags)
	}
}

// TestReorderWindow: complete events written where they end are placed
// exactly as long as the heaps hold them; beyond maxPending, the slices
// placed before their parent arrived keep the depth they had then, and
// it is reported.
func TestReorderWindow(t *testing.T) {
	defer func(n int) { maxPending = n }(maxPending)
	trace := `[{"name":"c1","ph":"X","pid":1,"tid":1,"ts":1,"dur":1},
{"name":"c2","ph":"X","pid":1,"tid":1,"ts":3,"dur":1},
{"name":"c3","ph":"X","pid":1,"tid":1,"ts":5,"dur":1},
{"name":"p","ph":"X","pid":1,"tid":1,"ts":0,"dur":10}]`
	for _, tc := range []struct {
		window int
		want   string
		diag   string
	}{
		{4, "0 p 0 10000,1 c1 1000 2000,1 c2 3000 4000,1 c3 5000 6000", ""},
		// c1 is placed (depth 0) before p arrives; p goes on top of what is
		// still open, c1, so one level deeper, and c2, c3 inside p.
		{2, "0 c1 1000 2000,1 p 0 10000,2 c2 3000 4000,2 c3 5000 6000",
			"1 a slice arrives after slices that start later on its thread were placed (complete events out of order beyond the reorder window): its depth is where it goes among the slices still open;" +
				"1 a slice starts inside another of its thread and ends after it (not nested): it is placed one level deeper"},
	} {
		maxPending = tc.window
		_, sink, err := ingestWith(t, strings.NewReader(trace), false)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(sink.rows, ","); got != tc.want {
			t.Errorf("window %d: %s, want %s", tc.window, got, tc.want)
		}
		if got := strings.Join(sink.diags, ";"); got != tc.diag {
			t.Errorf("window %d: diagnostics %q, want %q", tc.window, got, tc.diag)
		}
	}
}

// TestBounds: an event longer than maxEvent is a bad event (skipped with
// --skip-bad, whatever its length); a member of the top-level object
// longer than maxMeta is left out of runs.meta.
func TestBounds(t *testing.T) {
	defer func(e, m int) { maxEvent, maxMeta = e, m }(maxEvent, maxMeta)
	maxEvent, maxMeta = 100, 20
	long := `{"name":"` + strings.Repeat("n", 600_000) + `","ph":"i","ts":2}`
	trace := `{"systemTraceEvents":"` + strings.Repeat("x", 600_000) + `","traceEvents":[{"ph":"B","ts":1,"pid":1,"tid":1},` + long + `,{"ph":"E","ts":3,"pid":1,"tid":1}]}`
	_, _, err := ingestWith(t, strings.NewReader(trace), false)
	if want := "t.json@600073: an event longer than 100 bytes"; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
	p, sink, err := ingestWith(t, strings.NewReader(trace), true)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(sink.rows, ","); got != "0  1000 3000" {
		t.Errorf("intervals %s", got)
	}
	want := `1 the top-level member "systemTraceEvents" is longer than 20 bytes: left out of runs.meta (Chrome's systemTraceEvents, its ftrace text, is read by no format here);1 an event longer than 100 bytes`
	if got := strings.Join(sink.diags, ";"); got != want {
		t.Errorf("diagnostics %s\nwant %s", got, want)
	}
	if cap(p.s.buf) > 2*readChunk {
		t.Errorf("buffer grew to %d for values it skips", cap(p.s.buf))
	}
}

// TestWarmEventAllocs: reading an event of a thread, name and category
// seen before allocates nothing.
func TestWarmEventAllocs(t *testing.T) {
	w := schema.NewRunWriter(schema.RunInfo{RunID: 1, Source: "t.json", Format: "chrome", Offsets: true}, dbtest.Discard{}, memory.NewGoAllocator())
	defer w.Abort()
	m := newMachine(w)
	evs := [][]byte{
		[]byte(`{"name":"Layout","cat":"blink","ph":"B","pid":1,"tid":2,"ts":1000.5,"args":{"frame":"0x1"}}`),
		[]byte(`{"name":"Layout","cat":"blink","ph":"E","pid":1,"tid":2,"ts":1001.25}`),
		[]byte(`{"name":"Paint","cat":"blink","ph":"X","pid":1,"tid":2,"ts":1002,"dur":3}`),
		[]byte(`{"name":"Paint","cat":"blink","ph":"i","s":"t","pid":1,"tid":2,"ts":1006}`),
	}
	for _, e := range evs {
		if err := m.event(e, 1); err != nil {
			t.Fatal(err)
		}
	}
	allocs := testing.AllocsPerRun(1000, func() {
		for _, e := range evs[:2] {
			if err := m.event(e, 1); err != nil {
				t.Fatal(err)
			}
		}
		if err := m.event(evs[3], 1); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 0 {
		t.Errorf("%.1f allocations per warm B, E and instant", allocs)
	}
}

// TestMetaTotalBound: the top-level members kept for runs.meta are bounded
// together, not only one by one: a file of many members keeps the first
// ones up to maxMetaTotal bytes and says which one it stopped at (the
// count, 2, is the members left out).
func TestMetaTotalBound(t *testing.T) {
	defer func(m int) { maxMetaTotal = m }(maxMetaTotal)
	maxMetaTotal = 50
	var b strings.Builder
	b.WriteString("{")
	for _, k := range []string{"a", "b", "c", "d", "e", "f"} {
		fmt.Fprintf(&b, `"%s":"0123456789",`, k) // 12 bytes each
	}
	b.WriteString(`"traceEvents":[{"ph":"X","ts":1,"dur":2,"pid":1,"tid":1}]}`)
	p, sink, err := ingestWith(t, strings.NewReader(b.String()), false)
	if err != nil {
		t.Fatal(err)
	}
	if p.metaBytes != 48 {
		t.Errorf("kept %d bytes of members, want 48 (a to d)", p.metaBytes)
	}
	want := `2 top-level members of more than 50 bytes in all: "e" and the members after it are left out of runs.meta`
	if got := strings.Join(sink.diags, ";"); got != want {
		t.Errorf("diagnostics %s\nwant %s", got, want)
	}
}
