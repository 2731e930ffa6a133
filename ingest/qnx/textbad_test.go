package qnx_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/ingest/qnx"
	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/schema"
)

const head = "TRACEPRINTER version 1.02\n -- HEADER FILE INFORMATION -- \n  TRACE_CYCLES_PER_SEC:: 1000000000\n -- KERNEL EVENTS -- \n" +
	"t:0x00000010 CPU:00 CONTROL :TIME msb:0x00000000 lsb(offset):0x00000000\n"

func TestTextBadInput(t *testing.T) {
	for _, tc := range []struct{ line, want string }{
		{"t:0xzz CPU:00 THREAD :THREADY pid:1 tid:1", `bad.txt:6: t: expected 1 to 16 hexadecimal digits, found "zz"`},
		{"t:0x10 CPU:xx THREAD :THREADY pid:1 tid:1", `bad.txt:6: CPU: expected a CPU number, found "xx"`},
		{"t:0x10 THREAD :THREADY pid:1 tid:1", `bad.txt:6: expected "CPU:NN" after the timestamp, found "THREAD"`},
		{"t:0x10 CPU:00 THREADY", `bad.txt:6: expected "CLASS:EVENT" after the CPU, found "THREADY"`},
		{"t:0x10 CPU:00 THREAD :", `bad.txt:6: expected an event name after "THREAD", found nothing`},
		{"10 CPU:00 THREAD :THREADY pid:1 tid:1", ""}, // a continuation line of the TIME event: accepted
	} {
		t.Run(tc.line, func(t *testing.T) {
			db := dbtest.Open(t)
			dir := t.TempDir()
			good := filepath.Join(dir, "good.txt")
			bad := filepath.Join(dir, "bad.txt")
			os.WriteFile(good, []byte(head+"t:0x00000020 CPU:00 THREAD  :THRUNNING     pid:1 tid:1 \n"), 0o644)
			os.WriteFile(bad, []byte(head+tc.line+"\nt:0x00000030 CPU:00 THREAD :THREADY pid:1 tid:1\n"), 0o644)
			dbtest.Ingest(t, db, good, ingest.Options{})
			before := dbtest.Dump(t, db.SQL())
			_, err := ingest.Path(context.Background(), db, bad, ingest.Options{})
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var ie *schema.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("got %v", err)
			}
			if got := "bad.txt" + err.Error()[len(ie.File):]; got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
			if after := dbtest.Dump(t, db.SQL()); after != before {
				t.Error("database changed by a failed ingest")
			}
		})
	}
}

func TestTextSkipBad(t *testing.T) {
	db := dbtest.Open(t)
	path := filepath.Join(t.TempDir(), "skip.txt")
	os.WriteFile(path, []byte(head+"t:0xzz CPU:00 THREAD :THREADY pid:1 tid:1\n   pid:7\nt:0x30 CPU:00 THREAD :THREADY pid:1 tid:1\n"), 0o644)
	res := dbtest.Ingest(t, db, path, ingest.Options{SkipBad: true})
	if res.Events != 2 {
		t.Errorf("%d events, want 2", res.Events)
	}
	got := dbtest.Query(t, db.SQL(), "SELECT src_line, message FROM diagnostics WHERE severity = 'error' ORDER BY src_line")
	want := "6 | t: expected 1 to 16 hexadecimal digits, found \"zz\"\n7 | expected an event line \"t:0x... CPU:NN CLASS:EVENT ...\", found \"pid:7\"\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

var glued = regexp.MustCompile(`[^ "]t:0x[0-9a-fA-F]+ CPU:`)

// FuzzText: any input either ingests or fails with FILE:LINE; no panic,
// no leak, and an ingested trace has as many events as lines starting
// with "t:" after the header.
func FuzzText(f *testing.F) {
	f.Add([]byte(head + "t:0x20 CPU:00 THREAD  :THRUNNING     pid:1 tid:1 \n"))
	f.Add([]byte(head + "t:0x20 CPU:01 INT_ENTR:0x00000005 (5) IP:0x1\nt:0x21 CPU:01 INT_EXIT:0x00000005 (5) inkernel:0x1\n"))
	f.Add([]byte(head + "t:0x20 CPU:00 PROCESS :PROCCREATE_NAME\n      ppid:0\n  pid:1\n name:a b\n"))
	f.Add([]byte(head + "t:0x20 CPU:00 KER_CALL:MSG_SENDV/11 coid:0x1 msg:\"a b\" (0x2)\nt:0xffffff00 CPU:00 KER_EXIT:MSG_SENDV/11 ret_val:0x0\nt:0x10 CPU:00 USER :X str:\"unterminated\n"))
	f.Add([]byte("t:0x1 CPU:00 CONTROL: BUFFER sequence = 1, num_events = 2\n"))
	if text, err := os.ReadFile(filepath.Join(shared, "testdata-external", "qnx", "DOC-EXCERPT__qnx.com__sat_user_guide__datainterpretation_Using_traceprinter.txt")); err == nil {
		f.Add(text)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		w := schema.NewRunWriter(schema.RunInfo{RunID: 1, Source: "fuzz.txt"}, dbtest.Discard{}, mem)
		err := (qnx.TextIngester{}).Ingest(context.Background(), ingest.NewSource("fuzz.txt", bytes.NewReader(data), int64(len(data))), w)
		if err != nil {
			w.Abort()
			var ie *schema.InputError
			if !errors.As(err, &ie) || !strings.HasPrefix(err.Error(), "fuzz.txt:") {
				t.Fatalf("error %v is not FILE:LINE", err)
			}
			mem.AssertSize(t, 0)
			return
		}
		if err := w.Finish(time.Now()); err != nil {
			t.Fatal(err)
		}
		mem.AssertSize(t, 0)
		lines := bytes.FieldsFunc(data, func(r rune) bool { return r == '\n' || r == '\r' })
		var want int64
		body := !bytes.Contains(data, []byte("-- KERNEL EVENTS --")) && !bytes.Contains(data, []byte("TRACEPRINTER"))
		for _, l := range lines {
			l = bytes.TrimSpace(l)
			if bytes.Contains(l, []byte("-- KERNEL EVENTS --")) {
				body = true
				continue
			}
			if bytes.HasPrefix(l, []byte("t:")) {
				body = true
			}
			if body && bytes.HasPrefix(l, []byte("t:")) {
				// plus the events traceprinter glues onto a line when it
				// forgets a line end (after "errno:N")
				want += 1 + int64(len(glued.FindAllIndex(l[1:], -1)))
			}
		}
		if w.Events() != want {
			t.Fatalf("%d events, want %d", w.Events(), want)
		}
	})
}

// TestTextQuirks: traceprinter's irregular lines read as the events they
// print: "ret_val:-1, errno:N" without a line end before the next event,
// a user event name with a trailing comma, a SIGEVENT text with blanks,
// and a user string holding quotes.
func TestTextQuirks(t *testing.T) {
	db := dbtest.Open(t)
	path := filepath.Join(t.TempDir(), "quirks.txt")
	os.WriteFile(path, []byte(head+
		"t:0x20 CPU:00 KER_EXIT:MSG_SENDV/11 ret_val:-1, errno:3t:0x21 CPU:00 THREAD  :THREADY       pid:1 tid:1 \n"+
		"t:0x22 CPU:00 USREVENT:EVENT:5, 0x00000001 0x00000002\n"+
		"t:0x23 CPU:00 INT_HANDLER_EXIT:0x00000005 (5) SIGEVENT:PULSE 0x40000002:10 0x1:0x2a\n"+
		"t:0x24 CPU:00 USREVENT:EVENT:7 STR:\"say \"hi\"  \"\n"), 0o644)
	dbtest.Ingest(t, db, path, ingest.Options{})
	got := dbtest.Query(t, db.SQL(), "SELECT seq, class, event, args, value FROM events WHERE seq > 1 ORDER BY seq")
	want := `2 | KER_EXIT | MSG_SENDV | {"call":11,"ret_val":"-1","errno":"3"} | NULL
3 | THREAD | THREADY | {"pid":"1","tid":"1"} | NULL
4 | USREVENT | EVENT:5 | {"d0":"0x00000001","d1":"0x00000002"} | NULL
5 | INT | INT_HANDLER_EXIT | {"_1":"(5)","SIGEVENT":"PULSE 0x40000002:10 0x1:0x2a"} | NULL
6 | USREVENT | EVENT:7 | {"STR":"say \"hi\"  "} | say "hi"  
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
