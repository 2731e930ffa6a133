package dtrace

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/schema"
	"golang.org/x/tools/txtar"
)

var time0 = time.Unix(0, 0)

// FuzzEvents feeds arbitrary text to the event reader, strict and with
// --skip-bad: it never panics; a strict read stops only with a FILE:LINE
// error saying what was expected; a lenient one never stops; every args
// value written is JSON; every interval is well formed; memory is
// released. The seeds (the golden traces and edge cases) replay as a
// normal test.
func FuzzEvents(f *testing.F) {
	files, _ := filepath.Glob("testdata/events/*.txtar")
	for _, path := range files {
		ar, err := txtar.ParseFile(path)
		if err != nil {
			f.Fatal(err)
		}
		for _, file := range ar.Files {
			if file.Name == "trace.txt" {
				f.Add(string(file.Data))
			}
		}
	}
	for _, tc := range badLines {
		f.Add(tc.text)
	}
	for _, s := range []string{
		"#traceduck-events 1 timestamp cpu pid tid probe\r\n1 0 1 1 sched:::on-cpu\r2 0 1 1 sched:::off-cpu\r\n",
		"#traceduck-events 1 timestamp cpu pid tid probe\n1 0 1 1 a:b:c:entry k=\"\" \n2 0 1 1 a:b:c:return k=\"\"\"\n",
		"#traceduck-events 1 timestamp cpu pid tid probe\n1 0 1 1 a:b:c:d k=\xff\xfe x\x00=1 \"q\"=2\n",
		"#traceduck-events 1 unit=ps timestamp cpu probe\n18446744073709551615 0 a:b:c:d\n999 0 sdt:::interrupt-start\n",
		"#traceduck-events 1 timestamp cpu pid tid probe\n5 0 0 0 sched:::on-cpu\n4 0 0 0 sched:::off-cpu\n3 0 1 1 sched:::on-cpu\n3 1 1 1 sched:::on-cpu\n2 1 1 1 sched:::off-cpu\n",
		"#traceduck-events 1 timestamp cpu pid tid probe\n" + strings.Repeat("1 0 1 1 a:b:f:entry\n", 300) + strings.Repeat("2 0 1 1 a:b:f:return\n", 301),
		"#traceduck-events 1 timestamp cpu pid tid probe\n" + strings.Repeat("1 0 0 0 sdt:::interrupt-start irq=x\n", 300) + "2 0 0 0 sdt:::interrupt-complete irq=x\n",
		"#traceduck-events 1 timestamp cpu pid tid probe\n1 0 5 1 proc:::exec-success execname=a\n2 0 5 1 proc:::exec-success execname=b\n3 0 5 1 sched:::on-cpu ppid=5\n4 0 5 1 proc:::lwp-exit\n5 0 5 1 sched:::off-cpu\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, skip := range []bool{false, true} {
			mem := memory.NewCheckedAllocator(dbtest.RecyclingAllocator)
			sink := &dbtest.Checked{}
			w := schema.NewRunWriter(schema.RunInfo{RunID: 1, Source: "fuzz.txt", SkipBad: skip}, sink, mem)
			r := newEventReader(w, "fuzz.txt")
			lr := ingest.NewLineReader(bytes.NewReader([]byte(text)))
			var lines int64
			err := lr.Each(context.Background(), "fuzz.txt", "DTrace", func(line []byte, n int64) error {
				lines = n
				ok, err := r.Line(n, line)
				if ok && err == nil && len(r.args) > 0 && r.ln.probe != nil && !json.Valid(r.args) {
					t.Fatalf("line %d: args %q are not JSON", n, r.args)
				}
				return err
			})
			if err == nil {
				err = r.End()
			}
			// an error may be at the line after the last (End: a file that ended too early)
			dbtest.EndFuzzRun(t, w, sink, mem, err, skip, lines+1, lines)
		}
	})
}
