package tlv

import (
	"path/filepath"
	"slices"
	"testing"
)

// TestStdNotesRepeat: what a standard-format line resolves to is kept with
// its parse (Reader.parse, restEntry), and the findings about it are still
// counted on every line: an attribute or a behavior the header does not
// declare, a Static attribute changed, a name that designates nothing; an
// attribute the trace declares is numbered once, after the header's; a
// type's name designates all its resources.
func TestStdNotesRepeat(t *testing.T) {
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
	var attrs []int
	events := 0
	sink := &eventSink{collect: c, event: func(e *Event) {
		events++
		if e.Attr >= 0 && e.Res.AttrName(e.Attr) == "colour" {
			attrs = append(attrs, e.Attr)
		}
	}}
	rd.sink = sink
	lines := []string{
		"[1]TASK1.colour=red", "[2]TASK1.colour=blue", "[3] TASK1 . colour = green", // undeclared, three times
		"[4]TASK1.wave()", "[5]TASK1.wave()", // an undeclared behavior, twice
		"[6]TASK1.pri=3", "[7]TASK1.pri=3", // Static
		"[8]NOBODY.state=RUNNING", "[9]NOBODY.state=RUNNING", // nothing
		"[10]TASK.colour=grey", // all three tasks

		"[11]TASK2.start()", "[12]TASK2.start()",
		"[13]TASK(state==RUNNING).colour=white", "[14]TASK(state==RUNNING).colour=white", // MAIN_TASK and TASK1
	}
	for i, l := range lines {
		if err := rd.Line(l, int64(i+1), -1); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]int{
		"attr\x00TASK\x00colour": 10, "behavior\x00TASK\x00wave": 2, "static\x00TASK\x00pri": 2, "select\x00NOBODY": 2,
	}
	for k, n := range want {
		if c.notes[k] != n {
			t.Errorf("note %q counted %d times, want %d (%v)", k, c.notes[k], n, c.notes)
		}
	}
	if len(c.notes) != len(want) {
		t.Errorf("notes %v, want %v", c.notes, want)
	}
	if events != 16 { // 3 + 2 + 2, three tasks, 2, MAIN_TASK and TASK1 twice
		t.Errorf("%d events, want 16", events)
	}
	if len(attrs) != 10 || slices.ContainsFunc(attrs, func(k int) bool { return k != 3 }) {
		t.Errorf("colour is attribute %v, want 3 (after id, pri, state) on all 10 events", attrs)
	}
	if a, b := rd.St.Lookup("TASK1").Value(3), rd.St.Lookup("TASK2").Value(3); a != "white" || b != "grey" {
		t.Errorf("TASK1's colour is %q, TASK2's %q, want white and grey", a, b)
	}
}

// eventSink is a collect that also passes each event on.
type eventSink struct {
	*collect
	event func(*Event)
}

func (s *eventSink) Event(e *Event) error { s.event(e); return s.collect.Event(e) }
