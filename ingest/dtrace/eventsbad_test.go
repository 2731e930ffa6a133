package dtrace

import (
	"context"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/schema"
)

const sched5 = "#traceduck-events 1 timestamp cpu pid tid probe\n"

// badLines are inputs whose last line is malformed, with the exact error.
var badLines = []struct{ text, err string }{
	{"#traceduck-events 2 timestamp probe", `bad.txt:1: expected layout version 1 after #traceduck-events, found "2"`},
	{"#traceduck-events", `bad.txt:1: expected layout version 1 after #traceduck-events, found the end of the line`},
	{"#traceduck-events 1 unit=weeks timestamp probe", `bad.txt:1: expected unit=s, ms, us, ns, ps or fs in the header, found "unit=weeks"`},
	{"#traceduck-events 1 =x timestamp probe", `bad.txt:1: expected name=value in the header, found "=x"`},
	{"#traceduck-events 1 timestamp Probe", `bad.txt:1: expected a column name (lower case letters, digits, _) in the header, found "Probe"`},
	{"#traceduck-events 1 timestamp pid probe pid", `bad.txt:1: expected each column once in the header, found "pid" twice`},
	{"#traceduck-events 1 timestamp cpu", `bad.txt:1: expected a timestamp and a probe column in the header, found "timestamp cpu"`},
	{"#traceduck-events 1 execname timestamp probe", `bad.txt:1: expected the first column to be timestamp, cpu, pid, tid or probe, found "execname"`},
	{"#traceduck-events 1 timestamp probe" + manyColumns(31), `bad.txt:1: expected at most 32 columns in the header, found more`},
	{sched5 + "100 0 1", `bad.txt:2: expected 5 columns (timestamp cpu pid tid probe), found 3`},
	{sched5 + "100 x 1 1 a:b:c:d", `bad.txt:2: column 2 (cpu): expected a CPU number, found "x"`},
	{sched5 + "100 2147483648 1 1 a:b:c:d", `bad.txt:2: column 2 (cpu): expected a CPU number, found "2147483648"`},
	{sched5 + "100 0 -1 1 a:b:c:d", `bad.txt:2: column 3 (pid): expected an unsigned integer, found "-1"`},
	{sched5 + "100 0 1 0x1 a:b:c:d", `bad.txt:2: column 4 (tid): expected an unsigned integer, found "0x1"`},
	{sched5 + "99999999999999999999 0 1 1 a:b:c:d", `bad.txt:2: column 1 (timestamp): expected an unsigned integer, found "99999999999999999999"`},
	{sched5 + "18446744073709551615 0 1 1 a:b:c:d", `bad.txt:2: column 1 (timestamp): expected at most 9223372036854775807 ns, found 18446744073709551615 ns`},
	{"#traceduck-events 1 unit=s timestamp probe\n9223372037 a:b:c:d", `bad.txt:2: column 1 (timestamp): expected at most 9223372036854775807 ns, found 9223372037 s`},
	{sched5 + "100 0 1 1 read:entry", `bad.txt:2: column 5 (probe): expected provider:module:function:name, found "read:entry"`},
	{sched5 + "100 0 1 1 a:b:c:d:e", `bad.txt:2: column 5 (probe): expected provider:module:function:name, found "a:b:c:d:e"`},
	{sched5 + "100 0 1 1 :b:c:d", `bad.txt:2: column 5 (probe): expected provider:module:function:name, found ":b:c:d"`},
	{sched5 + "100 0 1 1 a:b:c:", `bad.txt:2: column 5 (probe): expected provider:module:function:name, found "a:b:c:"`},
	{sched5 + "100 0 1 1 a:b:c:d foo", `bad.txt:2: expected key=value after the 5 columns, found "foo"`},
	{sched5 + "100 0 1 1 a:b:c:d =3", `bad.txt:2: expected key=value after the 5 columns, found "=3"`},
	{sched5 + `100 0 1 1 a:b:c:d k="open`, `bad.txt:2: key "k": expected a closing quote before a blank or the end of the line, found "\"open"`},
	{sched5 + `100 0 1 1 a:b:c:d k="a "b" c"`, `bad.txt:2: expected key=value after the 5 columns, found "c\""`},
	{sched5 + "100 0 1 1 a:b:c:d k=1 k=2", `bad.txt:2: expected each key once, found "k" twice`},
	{sched5 + "100 0 1 1 a:b:c:d idle=yes", `bad.txt:2: key "idle": expected an integer (1: the idle thread), found "yes"`},
	{sched5 + "100 0 1 1 a:b:c:d ppid=-2", `bad.txt:2: key "ppid": expected an unsigned integer, found "-2"`},
	{sched5 + "100 0 1 1 a:b:c:d" + manyKeys(65), `bad.txt:2: expected at most 64 key=value pairs, found more`},
	{"#traceduck-events 1 timestamp execname probe\n1 bash a:b:c:d execname=sh", `bad.txt:2: expected each key once, found "execname" twice`},
	{"#traceduck-events 1 timestamp probe prio\n1 a:b:c:d 5 prio=6", `bad.txt:2: expected each key once, found "prio" twice`},
}

func manyColumns(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString(" c")
		b.WriteString(strings.Repeat("x", i))
	}
	return b.String()
}

func manyKeys(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString(" k")
		b.WriteString(strings.Repeat("x", i))
		b.WriteString("=1")
	}
	return b.String()
}

// TestEventsBadLines: a malformed header or event line stops the read
// with FILE:LINE: what was expected, what was found.
func TestEventsBadLines(t *testing.T) {
	for _, tc := range badLines {
		w := schema.NewRunWriter(schema.RunInfo{RunID: 1, Source: "bad.txt"}, dbtest.Discard{}, nil)
		_, err := readEvents(context.Background(), w, []byte(tc.text+"\n"))
		w.Abort()
		if err == nil || err.Error() != tc.err {
			t.Errorf("%q:\n got %v\nwant %s", tc.text, err, tc.err)
		}
	}
}

// TestEventsSkipBad: with --skip-bad every bad line of badLines is one
// diagnostic (severity error, the same message without FILE:LINE), and
// the good lines around them are read.
func TestEventsSkipBad(t *testing.T) {
	db := dbtest.Open(t)
	var text strings.Builder
	var want []string
	line := 0
	for _, tc := range badLines {
		// Each case's header (good or bad), its bad line, then a good
		// event line under the schedule layout.
		lines := strings.Split(tc.text, "\n")
		if !strings.HasPrefix(lines[0], "#traceduck-events") {
			t.Fatalf("case without a header: %q", tc.text)
		}
		for _, l := range lines {
			text.WriteString(l + "\n")
			line++
		}
		_, msg, _ := strings.Cut(tc.err, ": ")
		want = append(want, msg)
		text.WriteString(sched5)
		text.WriteString("5 0 1 1 syscall::read:entry\n")
		line += 2
	}
	left, err := ingestEvents(t, db, "bad.txt", []byte(text.String()), true)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Errorf("lines left: %v", left)
	}
	got := dbtest.Query(t, db.SQL(), "SELECT message FROM diagnostics WHERE severity = 'error' ORDER BY src_line")
	if got != strings.Join(want, "\n")+"\n" {
		t.Errorf("diagnostics:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
	if n := dbtest.Query(t, db.SQL(), "SELECT count(*) FROM events"); n != "31\n" {
		t.Errorf("events: %s, want one per case", n)
	}
}

// TestEventsLeft: lines that are not event lines of the layout in force
// are left to the caller, never errors.
func TestEventsLeft(t *testing.T) {
	text := strings.Join([]string{
		"100 0 1 1 syscall::read:entry", // before any header
		"#traceduck-events 1 probe timestamp pid tid",
		"syscall::read:entry 5 1 1",
		"read:entry 5 1 1", // probe-first layout: not a probe
		"  12 |@@@@   3",
		"\tsyscall::read:entry 6 1 1",
		"dtrace: script 'x.d' matched 3 probes",
		"",
		"CPU     ID                    FUNCTION:NAME",
		"#traceduck-eventsX",
		"#traceduck-events 1 timestamp cpu pid tid probe",
		"7 0 1 1 syscall::read:return",
		"Tracing... Hit Ctrl-C to end.",
		"@[read]: 2",
		"[0, 1)   1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|",
		"-8 0 1 1 a:b:c:d",
	}, "\n")
	w := schema.NewRunWriter(schema.RunInfo{RunID: 1, Source: "left.txt"}, dbtest.Discard{}, nil)
	defer w.Abort()
	left, err := readEvents(context.Background(), w, []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	want := []int64{1, 4, 5, 6, 7, 8, 9, 10, 13, 14, 15, 16}
	if len(left) != len(want) {
		t.Fatalf("left %v, want %v", left, want)
	}
	for i := range want {
		if left[i] != want[i] {
			t.Fatalf("left %v, want %v", left, want)
		}
	}
	if w.Events() != 2 {
		t.Errorf("%d events, want 2", w.Events())
	}
}
