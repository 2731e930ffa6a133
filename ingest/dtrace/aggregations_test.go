package dtrace

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/schema"
)

// externalDir holds real DTrace output (the DTraceToolkit's examples),
// read in place.
const externalDir = "../../../shared/testdata-external"

// aggBucket and aggScalar are rows of histograms and aggregations as the
// tests read them back from the writer's batches.
type aggBucket struct {
	agg, title, key, keys, fn, label string
	lo, hi                           *int64
	count, line                      int64
}

type aggScalar struct {
	agg, title, key, keys string
	value, line           int64
}

// aggCollect is a Sink that keeps the rows of histograms, aggregations
// and diagnostics.
type aggCollect struct {
	mu      sync.Mutex
	buckets []aggBucket
	scalars []aggScalar
	diags   []string
}

func (c *aggCollect) Put(table string, rec arrow.Record) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !rec.Schema().Equal(schema.ArrowSchema(table)) {
		return fmt.Errorf("%s: batch schema %v differs from the table's", table, rec.Schema())
	}
	n := int(rec.NumRows())
	str := func(col, i int) string {
		switch a := rec.Column(col).(type) {
		case *array.String:
			if a.IsNull(i) {
				return "NULL"
			}
			return a.Value(i)
		case *array.Dictionary:
			if a.IsNull(i) {
				return "NULL"
			}
			return a.Dictionary().(*array.String).Value(a.GetValueIndex(i))
		}
		panic(fmt.Sprintf("column %d of %s", col, table))
	}
	i64 := func(col, i int) *int64 {
		a := rec.Column(col).(*array.Int64)
		if a.IsNull(i) {
			return nil
		}
		v := a.Value(i)
		return &v
	}
	for i := 0; i < n; i++ {
		switch table {
		case schema.TableHistograms:
			c.buckets = append(c.buckets, aggBucket{agg: str(1, i), title: str(2, i), key: str(3, i), keys: str(4, i), fn: str(5, i), label: str(6, i),
				lo: i64(7, i), hi: i64(8, i), count: *i64(9, i), line: *i64(10, i)})
		case schema.TableAggregations:
			c.scalars = append(c.scalars, aggScalar{agg: str(1, i), title: str(2, i), key: str(3, i), keys: str(4, i), value: *i64(5, i), line: *i64(6, i)})
		case schema.TableDiagnostics:
			line := "-"
			if l := i64(1, i); l != nil {
				line = fmt.Sprint(*l)
			}
			c.diags = append(c.diags, line+" "+str(3, i)+" "+str(4, i))
		}
	}
	return nil
}

// aggRead runs text through an aggReader line by line, as the ingester
// does, and returns what it wrote. skipBad is --skip-bad; mode the
// scalar reading.
func aggRead(t testing.TB, text string, skipBad bool, mode ScalarsMode) (*aggCollect, error) {
	t.Helper()
	c := &aggCollect{}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	w := schema.NewRunWriter(schema.RunInfo{RunID: 1, Name: "t", Source: "t.txt", Format: "dtrace", SkipBad: skipBad}, c, mem)
	w.SetBatchRows(5)
	err := aggFeed(w, []byte(text), mode)
	if err != nil {
		w.Abort()
		return c, err
	}
	return c, w.Finish(time.Unix(0, 0))
}

// aggFeed is the ingester's loop with the aggregation reader alone.
func aggFeed(w *schema.RunWriter, text []byte, mode ScalarsMode) error {
	r := newAggReader(w, w.Info().Source)
	r.scalars = mode
	err := ingest.NewLineReader(bytes.NewReader(text)).Each(context.Background(), w.Info().Source, "DTrace output", func(line []byte, n int64) error {
		return r.Line(n, line)
	})
	if err != nil {
		return err
	}
	return r.End()
}

func mustAggRead(t *testing.T, text string) *aggCollect {
	t.Helper()
	c, err := aggRead(t, text, false, ScalarsAuto)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func bound(p *int64) string {
	if p == nil {
		return "NULL"
	}
	return fmt.Sprint(*p)
}

// rowsText shows buckets one per line: agg|key|func|label|lo|hi|count|line.
func (c *aggCollect) rowsText() string {
	var b strings.Builder
	for _, k := range c.buckets {
		fmt.Fprintf(&b, "%s|%s|%s|%s|%s|%s|%d|%d\n", k.agg, strings.ReplaceAll(k.key, "\n", "/"), k.fn, k.label, bound(k.lo), bound(k.hi), k.count, k.line)
	}
	return b.String()
}

// scalarsText shows scalars one per line: agg|title|key|keys|value|line.
func (c *aggCollect) scalarsText() string {
	var b strings.Builder
	for _, s := range c.scalars {
		fmt.Fprintf(&b, "%s|%s|%s|%s|%d|%d\n", s.agg, strings.ReplaceAll(s.title, "\n", "/"), strings.ReplaceAll(s.key, "\n", "/"), s.keys, s.value, s.line)
	}
	return b.String()
}

// TestSimulatedDistributions prints random data as DTrace does (the
// independent account in aggsim_test.go) and checks that every printed
// row comes back with its count and its true bounds, for quantize,
// lquantize and llquantize, counts of both signs, several keys.
func TestSimulatedDistributions(t *testing.T) {
	rng := rand.New(rand.NewSource(6))
	type gen struct {
		name  string
		dist  func(values []int64) simDist
		empty [2]int // rows printed when nothing counts
		vals  func() int64
	}
	gens := []gen{
		{"quantize", newSimQuantize, [2]int{simZeroBucket - 1, simZeroBucket + 1}, func() int64 {
			return (rng.Int63n(1<<uint(rng.Intn(40))) + 1) * int64(1-2*rng.Intn(2)) / int64(1+rng.Intn(3))
		}},
		{"quantize-large", newSimQuantize, [2]int{simZeroBucket - 1, simZeroBucket + 1}, func() int64 {
			return rng.Int63() >> uint(rng.Intn(3)) * int64(1-2*rng.Intn(2))
		}},
		{"lquantize", func(v []int64) simDist { return newSimLquantize(v, -20, 100, 7) }, [2]int{0, 2}, func() int64 { return rng.Int63n(150) - 40 }},
		{"lquantize-narrow", func(v []int64) simDist { return newSimLquantize(v, 0, 10, 10) }, [2]int{0, 2}, func() int64 { return rng.Int63n(30) - 10 }},
		{"llquantize", func(v []int64) simDist { return newSimLlquantize(v, 10, 0, 6, 20) }, [2]int{0, 1}, func() int64 { return rng.Int63n(2_000_000) >> uint(rng.Intn(20)) }},
		{"llquantize-2", func(v []int64) simDist { return newSimLlquantize(v, 2, 2, 20, 4) }, [2]int{0, 1}, func() int64 { return rng.Int63n(1<<22) >> uint(rng.Intn(22)) }},
	}
	for _, g := range gens {
		for trial := 0; trial < 25; trial++ {
			var text strings.Builder
			text.WriteString("dtrace: description 'x' matched 1 probe\n^C\n\n")
			var want [][]simRow
			for key := 0; key < 1+rng.Intn(4); key++ {
				var values []int64
				for i := rng.Intn(30); i > 0; i-- {
					values = append(values, g.vals())
				}
				d := g.dist(values)
				if rng.Intn(5) == 0 { // a weighted aggregation: negative counts
					for i := range d.counts {
						if rng.Intn(3) == 0 {
							d.counts[i] = -d.counts[i]
						}
					}
				}
				rows := d.printed(g.empty[0], g.empty[1])
				fmt.Fprintf(&text, "  key%d\n", key)
				simPrint(&text, rows)
				text.WriteString("\n")
				want = append(want, rows)
			}
			c, err := aggRead(t, text.String(), false, ScalarsAuto)
			if err != nil {
				t.Fatalf("%s trial %d: %v\n%s", g.name, trial, err, text.String())
			}
			got := c.buckets
			for k, rows := range want {
				for j, r := range rows {
					if len(got) == 0 || got[0].key != fmt.Sprintf("key%d", k) || got[0].label != r.label {
						// The only row the reader may leave out: the last,
						// a padding row whose width the text does not show.
						if j == len(rows)-1 && r.count == 0 && !strings.HasPrefix(r.label, ">=") && g.name != "quantize" {
							continue
						}
						t.Fatalf("%s trial %d: key%d row %q missing\n%s\ngot\n%s", g.name, trial, k, r.label, text.String(), c.rowsText())
					}
					b := got[0]
					got = got[1:]
					if b.count != r.count || (b.lo == nil) != !r.hasLo || (b.hi == nil) != !r.hasHi ||
						b.lo != nil && *b.lo != r.lo || b.hi != nil && *b.hi != r.hi {
						t.Fatalf("%s trial %d: key%d row %q: got count %d [%s, %s), want %d [%v %d, %v %d)\n%s", g.name, trial, k, r.label,
							b.count, bound(b.lo), bound(b.hi), r.count, r.hasLo, r.lo, r.hasHi, r.hi, text.String())
					}
				}
			}
			if len(got) > 0 {
				t.Fatalf("%s trial %d: %d rows too many\n%s", g.name, trial, len(got), c.rowsText())
			}
		}
	}
}

// TestFuncInference: the function each printed block is given, alone and
// next to its siblings of the same aggregation.
func TestFuncInference(t *testing.T) {
	hdr := "\n           value  ------------- Distribution ------------- count\n"
	row := func(label string, count int, bar int) string {
		return fmt.Sprintf("%16s |%-40s %d\n", label, strings.Repeat("@", bar), count)
	}
	cases := []struct {
		name, text, want string
	}{
		{"quantize", "^C\n  a" + hdr + row("1", 0, 0) + row("2", 3, 40) + row("4", 0, 0),
			"#1|a|quantize|1|1|2|0|4\n#1|a|quantize|2|2|4|3|5\n#1|a|quantize|4|4|8|0|6\n"},
		{"quantize negative", "^C\n  a" + hdr + row("-4", 0, 0) + row("-2", 3, 40) + row("-1", 0, 0),
			"#1|a|quantize|-4|-7|-3|0|4\n#1|a|quantize|-2|-3|-1|3|5\n#1|a|quantize|-1|-1|0|0|6\n"},
		{"lquantize by its step", "^C\n  a" + hdr + row("10", 0, 0) + row("20", 3, 40) + row("30", 0, 0),
			"#1|a|lquantize|10|10|20|0|4\n#1|a|lquantize|20|20|30|3|5\n#1|a|lquantize|30|30|40|0|6\n"},
		{"ambiguous alone: quantize", "^C\n  a" + hdr + row("0", 0, 0) + row("1", 3, 40) + row("2", 0, 0),
			"#1|a|quantize|0|0|1|0|4\n#1|a|quantize|1|1|2|3|5\n#1|a|quantize|2|2|4|0|6\n"},
		// fddist: one aggregation, one block fits both, a sibling only lquantize
		{"ambiguous takes its sibling's", "^C\n  a" + hdr + row("0", 0, 0) + row("1", 3, 40) + row("2", 0, 0) + "\n  b" + hdr + row("2", 0, 0) + row("3", 1, 40) + row("4", 0, 0),
			"#1|a|lquantize|0|0|1|0|4\n#1|a|lquantize|1|1|2|3|5\n#1|a|lquantize|2|2|3|0|6\n#1|b|lquantize|2|2|3|0|10\n#1|b|lquantize|3|3|4|1|11\n#1|b|lquantize|4|4|5|0|12\n"},
		{"underflow gives the step to a sibling", "^C\n  a" + hdr + row("< 0", 2, 40) + row("0", 0, 0) + "\n  b" + hdr + row("0", 0, 0) + row("5", 1, 40) + row("10", 0, 0),
			"#1|a|lquantize|< 0|NULL|0|2|4\n#1|a|lquantize|0|0|5|0|5\n#1|b|lquantize|0|0|5|0|9\n#1|b|lquantize|5|5|10|1|10\n#1|b|lquantize|10|10|15|0|11\n"},
		// < 0: not llquantize, whose underflow is below a power of its factor
		{"underflow alone: lquantize, padding left out", "^C\n  a" + hdr + row("< 0", 2, 40) + row("0", 0, 0),
			"#1|a|lquantize|< 0|NULL|0|2|4\n"},
		// fits lquantize and llquantize: the first
		{"underflow alone, both fit", "^C\n  a" + hdr + row("< 10", 2, 40) + row("10", 0, 0),
			"#1|a|lquantize|< 10|NULL|10|2|4\n"},
		{"llquantize", "^C\n  a" + hdr + row("< 1", 0, 0) + row("1", 1, 20) + row("2", 0, 0) + row("3", 0, 0) + row("4", 0, 0) + row("5", 0, 0) + row("6", 0, 0) + row("7", 0, 0) + row("8", 0, 0) + row("9", 0, 0) + row("10", 1, 20) + row("20", 0, 0),
			"#1|a|llquantize|< 1|NULL|1|0|4\n#1|a|llquantize|1|1|2|1|5\n#1|a|llquantize|2|2|3|0|6\n#1|a|llquantize|3|3|4|0|7\n#1|a|llquantize|4|4|5|0|8\n#1|a|llquantize|5|5|6|0|9\n#1|a|llquantize|6|6|7|0|10\n#1|a|llquantize|7|7|8|0|11\n#1|a|llquantize|8|8|9|0|12\n#1|a|llquantize|9|9|10|0|13\n#1|a|llquantize|10|10|20|1|14\n"},
		{"two aggregations, two functions", "^C\n  a" + hdr + row("1", 0, 0) + row("2", 3, 40) + row("4", 0, 0) + "\nLinear,\n\n  a" + hdr + row("10", 0, 0) + row("20", 3, 40) + row("30", 0, 0),
			"#1|a|quantize|1|1|2|0|4\n#1|a|quantize|2|2|4|3|5\n#1|a|quantize|4|4|8|0|6\n#2|a|lquantize|10|10|20|0|12\n#2|a|lquantize|20|20|30|3|13\n#2|a|lquantize|30|30|40|0|14\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := mustAggRead(t, tc.text)
			if got := c.rowsText(); got != tc.want {
				t.Errorf("got\n%swant\n%s", got, tc.want)
			}
		})
	}
}

// TestKeysAndTitles: key lines, \0, fields, stacks, headings, groups.
func TestKeysAndTitles(t *testing.T) {
	hdr := "              value  ------------- Distribution ------------- count\n"
	rows := "               1024 |                                         0\n               2048 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@ 2\n               4096 |                                         0\n"
	text := "" +
		"   # bitesize.d\n" + //1
		"   Tracing... Hit Ctrl-C to end.\n" +
		"   ^C\n" +
		"\n" +
		"        PID  CMD\n" + //5
		"       7110  -bash\\0\n" +
		"\n" +
		hdr + rows + //8-11
		"\n" +
		"       7109  find /\\0\n" + //13
		"\n" +
		hdr + rows + //15-18
		"\n" +
		"Stacks,\n" + //20
		"\n" +
		"  sched\n" + //22
		"              unix`idle+0x3b\n" +
		"              unix`thread_start+0x3\n" +
		"\n" +
		hdr + rows + //26-29
		"  sched\n" + //30
		"              unix`idle+0x3b\n" +
		"              unix`thread_start+0x3\n" +
		hdr + rows //33-36
	c := mustAggRead(t, text)
	var got strings.Builder
	seen := map[string]bool{}
	for _, b := range c.buckets {
		k := fmt.Sprintf("%s|%s|%s|%s|%d", b.agg, b.title, b.key, b.keys, b.line)
		if !seen[b.agg+b.key+b.title] || b.label == "1024" {
			seen[b.agg+b.key+b.title] = true
			fmt.Fprintln(&got, strings.ReplaceAll(k, "\n", "/"))
		}
	}
	want := `#1|PID  CMD|7110  -bash|["7110","-bash"]|9
#1|PID  CMD|7109  find /|["7109","find /"]|16
#2|Stacks,|sched/unix` + "`" + `idle+0x3b/unix` + "`" + `thread_start+0x3|["sched","unix` + "`" + `idle+0x3b","unix` + "`" + `thread_start+0x3"]|27
#2|Stacks,|sched/unix` + "`" + `idle+0x3b/unix` + "`" + `thread_start+0x3|["sched","unix` + "`" + `idle+0x3b","unix` + "`" + `thread_start+0x3"]|34
`
	if got.String() != want {
		t.Errorf("got\n%swant\n%s", got.String(), want)
	}
}

// TestScalars: what is read as a scalar aggregation, and what is not.
func TestScalars(t *testing.T) {
	cases := []struct {
		name, text, want string
	}{
		{"default output after ^C", "dtrace: description 'syscall:::entry ' matched 228 probes\n^C\n  snmpd                 1\n  utmpd                 2\n  dtrace             1720\n",
			"#1||snmpd|[\"snmpd\"]|1|3\n#1||utmpd|[\"utmpd\"]|2|4\n#1||dtrace|[\"dtrace\"]|1720|5\n"},
		{"header and heading", "^C\n\nCount,\n   FILE      TYPE   NAME     COUNT\n   a.js      func   f            3\n   a.js      func   g          -12\n",
			"#1|Count,/FILE      TYPE   NAME     COUNT|a.js      func   f|[\"a.js\",\"func\",\"f\"]|3|5\n#1|Count,/FILE      TYPE   NAME     COUNT|a.js      func   g|[\"a.js\",\"func\",\"g\"]|-12|6\n"},
		{"heading paragraph keeps the region", "^C\n\nElapsed times,\n\n  read      10\n  write     20\n\nCounts,\n\n  read       1\n",
			"#1|Elapsed times,|read|[\"read\"]|10|5\n#1|Elapsed times,|write|[\"write\"]|20|6\n#2|Counts,|read|[\"read\"]|1|10\n"},
		{"prose ends the region", "^C\n  a    1\n\nIn the output above we see it.\n\n  b    2\n  c    3\n\nMore prose.\n",
			"#1||a|[\"a\"]|1|2\n"},
		{"at the end of the output", "  0  1  open:entry x\n\n  sshd      12\n  bash      40\n\n",
			"#1||sshd|[\"sshd\"]|12|3\n#1||bash|[\"bash\"]|40|4\n"},
		{"not at the end: event output", "  sshd      12\n  bash      40\n\nprose follows\n",
			""},
		{"numbers not aligned", "^C\n  sshd  12\n  bash    400\n", ""},
		{"one blank is no separator", "^C\n  sshd 12\n", ""},
		{"a table of numbers", "^C\n  12:00    5    7\n  12:01    6    8\n", ""},
		{"a numeric key alone", "^C\n      513                2\n        3               39\n",
			"#1||513|[\"513\"]|2|2\n#1||3|[\"3\"]|39|3\n"},
		{"a key twice", "^C\n  a    1\n  a    2\n", ""},
		{"without key", "^C\n\n            42\n", "#1|||[]|42|3\n"},
		{"tabs", "^C\n\tread\t10\n\twrite\t20\n", "#1||read|[\"read\"]|10|2\n#1||write|[\"write\"]|20|3\n"},
		{"stacks", "^C\n\n              unix`idle+0x3b\n              unix`thread_start+0x3\n              956\n\n              unix`a+0x1\n               12\n",
			"#1||unix`idle+0x3b/unix`thread_start+0x3|[\"unix`idle+0x3b\",\"unix`thread_start+0x3\"]|956|5\n#1||unix`a+0x1|[\"unix`a+0x1\"]|12|8\n"},
		{"stacks that print alike stay one aggregation", "^C\n\n              f()V\n               30\n\n              f()V\n               31\n",
			"#1||f()V|[\"f()V\"]|30|4\n#1||f()V|[\"f()V\"]|31|7\n"},
		{"held until a distribution follows", "  sshd      12\n\n  a\n           value  ------------- Distribution ------------- count\n               1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@ 1\n",
			"#1||sshd|[\"sshd\"]|12|1\n"},
		{"bpftrace maps", "Attaching 1 probe...\n^C\n\n@[bash]: 12\n@[sshd, 22]: 30\n@total: -5\n@name[x]: hello\n",
			"@||bash|[\"bash\"]|12|4\n@||sshd, 22|[\"sshd\",\"22\"]|30|5\n@total|||[]|-5|6\n"},
		{"bpftrace reprint", "@c[a]: 1\n@c[b]: 2\n@d: 3\n@c[a]: 4\n@c[a]: 5\n",
			"@c||a|[\"a\"]|1|1\n@c||b|[\"b\"]|2|2\n@d|||[]|3|3\n@c#2||a|[\"a\"]|4|4\n@c#3||a|[\"a\"]|5|5\n"},
		{"bpftrace stack key", "@[\n    tcp_sendmsg+1\n    sock_sendmsg+99\n]: 40\n",
			"@||tcp_sendmsg+1/sock_sendmsg+99|[\"tcp_sendmsg+1\",\"sock_sendmsg+99\"]|40|4\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := mustAggRead(t, tc.text)
			got := strings.ReplaceAll(c.scalarsText(), "|NULL|", "||")
			if got != tc.want {
				t.Errorf("got\n%swant\n%s", got, tc.want)
			}
		})
	}
	// --dtrace-scalars=off reads distributions and bpftrace maps only
	c, err := aggRead(t, "^C\n  snmpd                 1\n@x: 3\n", false, ScalarsOff)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.scalarsText(); got != "@x|NULL||[]|3|3\n" {
		t.Errorf("off: got %q", got)
	}
}

// TestBpftraceHistograms: hist and lhist rows, suffixes, open ends.
func TestBpftraceHistograms(t *testing.T) {
	text := `Attaching 1 probe...
^C

@bytes:
(..., 0)               1 |@@@@                                                |
[0]                    0 |                                                    |
[1]                    2 |@@@@@@@@                                            |
[2, 4)                 5 |@@@@@@@@@@@@@@@@@@@@@                               |
[4, 8)                12 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|
[1K, 2K)               3 |@@@@@@@@@@@@@                                       |

@lat[sshd]:
(..., 10)              1 |@@@@@@@@@@@@@@@@@@@@@@@@@@                          |
[10, 20)               2 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|
[20, ...)              1 |@@@@@@@@@@@@@@@@@@@@@@@@@@                          |
`
	c := mustAggRead(t, text)
	want := `@bytes||hist|(..., 0)|NULL|0|1|5
@bytes||hist|[0]|0|1|0|6
@bytes||hist|[1]|1|2|2|7
@bytes||hist|[2, 4)|2|4|5|8
@bytes||hist|[4, 8)|4|8|12|9
@bytes||hist|[1K, 2K)|1024|2048|3|10
@lat|sshd|lhist|(..., 10)|NULL|10|1|13
@lat|sshd|lhist|[10, 20)|10|20|2|14
@lat|sshd|lhist|[20, ...)|20|NULL|1|15
`
	if got := c.rowsText(); got != want {
		t.Errorf("got\n%swant\n%s", got, want)
	}
}
