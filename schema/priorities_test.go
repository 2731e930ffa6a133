package schema

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow/memory"
)

// runPriorityScript speaks the priority verbs of a script to a run's
// tracker and returns the rows of priority_intervals, one a line
// ("O base/effective urgency start..end dur [cut] seq=S..E"), then the
// diagnostics and runs.meta's priority_order. Script lines (times in ns;
// every verb is also an event at its time):
//
//	lower                    SetLowerIsUrgent(true)
//	base O P TS              also effective
//	event TS                 an event that tells no priority
func runPriorityScript(t *testing.T, script string) string {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	sink := &rowSink{}
	w := NewRunWriter(RunInfo{RunID: 1, Name: "priorities"}, sink, mem)
	w.SetBatchRows(2)
	pt := w.Priorities()
	num := func(s string) int64 {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		return n
	}
	ev := func(ts int64) Seq {
		seq, err := w.Event(&Event{TS: ts, CPU: NoCPU, Class: w.Sym("x"), Event: w.Sym("x"), Context: NoObject, Object: NoObject,
			SourceInstance: NoInstance, TargetInstance: NoInstance, Line: int64(w.Events() + 1)})
		if err != nil {
			t.Fatal(err)
		}
		return seq
	}
	for _, l := range strings.Split(script, "\n") {
		f := strings.Fields(l)
		if len(f) == 0 {
			continue
		}
		var err error
		switch f[0] {
		case "lower":
			pt.SetLowerIsUrgent(true)
		case "event":
			ev(num(f[1]))
		case "base", "effective":
			o, p, ts := w.Object("task", f[1]), num(f[2]), num(f[3])
			if f[0] == "base" {
				err = pt.Base(o, p, ts, ev(ts))
			} else {
				err = pt.Effective(o, p, ts, ev(ts))
			}
		default:
			t.Fatalf("unknown verb %q", f[0])
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Finish(time.Now()); err != nil {
		t.Fatal(err)
	}
	names := map[string]string{}
	for _, o := range sink.rows[TableObjects] {
		names[o["object_id"]] = o["name"]
	}
	var out []string
	for _, r := range sink.rows[TablePriorityIntervals] {
		cut := ""
		if r["truncated"] == "true" {
			cut = " cut"
		}
		out = append(out, fmt.Sprintf("%s %s/%s %s %s..%s %s%s seq=%s..%s", names[r["object_id"]], r["base"], r["effective"], r["urgency"],
			r["start_ts"], r["end_ts"], r["dur"], cut, r["start_seq"], r["end_seq"]))
	}
	for _, d := range sink.rows[TableDiagnostics] {
		out = append(out, fmt.Sprintf("%s %s %s", d["severity"], d["count"], d["message"]))
	}
	meta := sink.rows[TableRuns][0]["meta"]
	if i := strings.Index(meta, `"priority_order"`); i >= 0 {
		out = append(out, meta[i:i+strings.IndexAny(meta[i:], ",}")])
	}
	return strings.Join(out, "\n")
}

func TestPriorityTracker(t *testing.T) {
	for _, c := range []struct{ name, script, want string }{
		{
			// FreeRTOS's Low[63] in the real trace: created at 2, raised
			// to 4 by High's wait on its mutex, back to 2 when it gives
			// the mutex; Med created at 3 and never changed.
			name: "inheritance",
			script: `base Low 2 100
base Med 3 110
effective Low 4 200
effective Low 2 500
event 900`,
			want: `Low 2/2 2 100..200 100 seq=1..3
Low 2/4 4 200..500 300 seq=3..4
Low 2/2 2 500..900 400 cut seq=4..NULL
Med 3/3 3 110..900 790 cut seq=2..NULL
"priority_order":"higher_first"`,
		},
		{
			// A base set while the priority is raised keeps the raise
			// unless it is more urgent; set without a raise, the
			// effective priority follows. The same value again changes
			// nothing; two changes at one time leave no zero-length row.
			name: "set while raised",
			script: `base T 2 0
effective T 5 10
base T 3 20
base T 6 30
effective T 6 35
effective T 3 40
effective T 3 45
base T 1 50
base T 7 50
event 60`,
			want: `T 2/2 2 0..10 10 seq=1..2
T 2/5 5 10..20 10 seq=2..3
T 3/5 5 20..30 10 seq=3..4
T 6/6 6 30..40 10 seq=4..6
T 6/3 3 40..50 10 seq=6..8
T 7/7 7 50..60 10 cut seq=9..NULL
"priority_order":"higher_first"`,
		},
		{
			// ITRON: smaller numbers are more urgent. A raise is to a
			// smaller number, and a base set to a larger number under it
			// keeps it. A thread whose base the format does not tell.
			name: "lower first",
			script: `lower
base A 10 0
effective A 4 10
base A 12 20
effective A 12 30
effective Q 20 32
effective Q 21 35
event 40
lower`,
			want: `A 10/10 -10 0..10 10 seq=1..2
A 10/4 -4 10..20 10 seq=2..3
A 12/4 -4 20..30 10 seq=3..4
Q NULL/20 -20 32..35 3 seq=5..6
A 12/12 -12 30..40 10 cut seq=4..NULL
Q NULL/21 -21 35..40 5 cut seq=6..NULL
"priority_order":"lower_first"`,
		},
		{
			name:   "order changed late",
			script: "base A 1 0\nlower\nevent 10",
			want: `A 1/1 1 0..10 10 cut seq=1..NULL
warning 1 the order of priorities changed after the first priority was told: the first order is kept
"priority_order":"higher_first"`,
		},
		{
			name:   "none",
			script: "event 0",
			want:   ``,
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := runPriorityScript(t, c.script); got != c.want {
				t.Errorf("got\n%s\nwant\n%s", got, c.want)
			}
		})
	}
}
