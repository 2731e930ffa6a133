package dtrace

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/schema"
)

// TestNothingDTrace: a file with text but nothing DTrace or bpftrace
// prints (a file of another format given with --format dtrace) is an
// error at its first line that is not blank, with --skip-bad too; a file
// with DTrace's marks among other lines, or with no text, is not.
func TestNothingDTrace(t *testing.T) {
	dist := "  a\n           value  ------------- Distribution ------------- count\n" +
		fmt.Sprintf("%16s |%40s 0\n%16s |%s 12\n%16s |%40s 0\n", "512", "", "1024", strings.Repeat("@", 40), "2048", "")
	for _, c := range []struct {
		name, text string
		skipBad    bool
		scalars    ScalarsMode
		want       string
	}{
		{"a BTF file", "#version 2.1.4\n#timeScale ns\n0, Sim, 0, STI, S_1MS, 0, trigger\n", false, ScalarsAuto,
			`x.out:1: expected DTrace or bpftrace output (a #traceduck-events header or a printed aggregation), found none in 3 lines that are not blank, the first "#version 2.1.4" (another format?)`},
		{"a BTF file, --skip-bad", "#version 2.1.4\n#timeScale ns\n0, Sim, 0, STI, S_1MS, 0, trigger\n", true, ScalarsAuto,
			`x.out:1: expected DTrace or bpftrace output (a #traceduck-events header or a printed aggregation), found none in 3 lines that are not blank, the first "#version 2.1.4" (another format?)`},
		{"JSON after blank lines", "\n  \n" + `{"traceEvents":[{"ts":1,"ph":"X","dur":5,"pid":1,"tid":1,"name":"a very long name that is cut in the message"}]}` + "\n", false, ScalarsAuto,
			`x.out:3: expected DTrace or bpftrace output (a #traceduck-events header or a printed aggregation), found none in 1 line that is not blank, the first "{\"traceEvents\":[{\"ts\":1,\"ph\":\"X\",\"dur\":5,\"pid\":1,\"tid\":1,\"na..." (another format?)`},
		{"a distribution among other lines", "#version 2.1.4\nTracing... Hit Ctrl-C to end.\n^C\n\n" + dist + "not DTrace\n", false, ScalarsAuto, ""},
		{"a bad distribution, --skip-bad", "^C\n" + strings.Replace(dist, " 12\n", " 12x\n", 1), true, ScalarsAuto, ""},
		{"a printa table not read (--dtrace-scalars off)", "^C\n   SYSCALL          COUNT\n   read                 7\n", false, ScalarsOff, ""},
		{"DTrace's message only", "dtrace: description 'syscall:::entry' matched 234 probes\n", false, ScalarsAuto, ""},
		{"a header only", "#traceduck-events 1 timestamp probe\n", false, ScalarsAuto, ""},
		{"blank lines only", "\n \n\t\n", false, ScalarsAuto, ""},
		{"empty", "", false, ScalarsAuto, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := schema.NewRunWriter(schema.RunInfo{Source: "x.out", SkipBad: c.skipBad}, dbtest.Discard{}, memory.NewGoAllocator())
			defer w.Abort()
			src := ingest.NewSource("x.out", bytes.NewReader([]byte(c.text)), int64(len(c.text)))
			err := (&Ingester{scalars: c.scalars}).Ingest(context.Background(), src, w)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != c.want {
				t.Errorf("error\n got %s\nwant %s", got, c.want)
			}
		})
	}
}
