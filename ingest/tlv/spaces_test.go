package tlv

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/ingest"
)

// events is a Sink that keeps the standard-format lines and each event
// as text.
type events struct {
	collect
	evs []string
}

func (s *events) Event(e *Event) error {
	if e.Attr >= 0 {
		s.evs = append(s.evs, fmt.Sprintf("%d %s attr#%d=%q", e.Time.NS, e.Res.Name, e.Attr, e.Value))
	} else {
		s.evs = append(s.evs, fmt.Sprintf("%d %s %s%q", e.Time.NS, e.Res.Name, e.Behavior, e.Args))
	}
	return nil
}

// readWith reads log (its lines) with the resource file res and the rule
// file cnv (none when ""), written to a temporary directory.
func readWith(t *testing.T, res, cnv string, log ...string) *events {
	t.Helper()
	useLoader(t)
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var rules []string
	if cnv != "" {
		rules = []string{write("mig.cnv", cnv)}
	}
	s, err := LoadSetup(write("mig.res", res), rules, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	sink := &events{}
	rd, err := NewReader(s, sink, sink)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(log, "\n") + "\n"
	src := ingest.NewSource("mig.log", strings.NewReader(text), int64(len(text)))
	if err := rd.ReadAll(context.Background(), src, "mig.log", false); err != nil {
		t.Fatal(err)
	}
	return sink
}

// TestSpacedRules: TLV's own FMP rules write migrations with white space
// around "=" ("...prcId = ${toPrcId}"), and TLV takes it: such a rule
// file loads, gives the events the same rules without the white space
// give (the value trimmed), and the lines it produces are written as TLV
// writes them (prcId=2).
func TestSpacedRules(t *testing.T) {
	const res = `{ "TimeScale": "us", "TimeRadix": 10, "ConvertRules": ["mig"], "ResourceHeaders": ["fmp"],
	  "Resources": { "TASK1": { "Type": "Task", "Attributes": { "id": 1, "prcId": 1, "state": "RUNNABLE" } } } }`
	rules := func(migrate, preempt string) string {
		return `{ "mig": {
		  "\\[(?<time>\\d+)\\]:\\[(?<pid>\\d+)\\]: task (?<tskid>\\d+) migrates from processor (?<fromPrcId>\\d+) to processor (?<toPrcId>\\d+)\\.": {
		    "$EXIST{[${time}]Task(id==${tskid})}": [ "` + migrate + `", "` + preempt + `" ] } } }`
	}
	log := []string{
		"[100]:[2]: task 1 migrates from processor 1 to processor 2.",
		"[200]:[1]: task 1 migrates from processor 2 to processor 1.",
	}
	plain := readWith(t, res, rules("[${time}]$RES_NAME{Task(id==${tskid})}.prcId=${toPrcId}",
		"[${time}]$RES_NAME{Task(id==${tskid})}.preempt(${fromPrcId}, ${toPrcId})"), log...)
	spaced := readWith(t, res, rules("[${time}]$RES_NAME{Task(id==${tskid})}.prcId = ${toPrcId}",
		"[${time}] $RES_NAME{Task (id==${tskid})} . preempt ( ${fromPrcId}, ${toPrcId} ) "), log...)
	wantLines := []string{"[100]TASK1.prcId=2", "[100]TASK1.preempt(1, 2)", "[200]TASK1.prcId=1", "[200]TASK1.preempt(2, 1)"}
	for _, c := range []struct {
		name string
		got  *events
	}{{"without white space", plain}, {"with white space", spaced}} {
		if !reflect.DeepEqual(c.got.lines, wantLines) {
			t.Errorf("%s: lines\n%q\nwant\n%q", c.name, c.got.lines, wantLines)
		}
	}
	wantEvents := []string{`100000 TASK1 attr#1="2"`, `100000 TASK1 preempt["1" "2"]`, `200000 TASK1 attr#1="1"`, `200000 TASK1 preempt["2" "1"]`}
	if !reflect.DeepEqual(plain.evs, wantEvents) {
		t.Errorf("without white space: events\n%q\nwant\n%q", plain.evs, wantEvents)
	}
	if !reflect.DeepEqual(spaced.evs, plain.evs) {
		t.Errorf("with white space: events\n%q\nwant\n%q", spaced.evs, plain.evs)
	}
}

// TestSpacedStdLines: a log in the standard format with white space
// between the parts of its lines gives the events of the same log
// without it, and is written without it.
func TestSpacedStdLines(t *testing.T) {
	const res = `{ "TimeScale": "us", "TimeRadix": 10, "ConvertRules": [], "ResourceHeaders": ["fmp"],
	  "Resources": { "TASK1": { "Type": "Task", "Attributes": { "id": 1, "prcId": 1, "state": "RUNNABLE" } } } }`
	plain := readWith(t, res, "", "[100]TASK1.prcId=2", "[150]Task(id==1).state=RUNNING", "[200]TASK1.preempt(2, 1)")
	spaced := readWith(t, res, "", "[100]TASK1.prcId = 2", "[150] Task (id==1) . state = RUNNING ", "[200]TASK1 .preempt ( 2, 1 )")
	if !reflect.DeepEqual(spaced.lines, plain.lines) {
		t.Errorf("lines\n%q\nwant\n%q", spaced.lines, plain.lines)
	}
	want := []string{`100000 TASK1 attr#1="2"`, `150000 TASK1 attr#8="RUNNING"`, `200000 TASK1 preempt["2" "1"]`}
	if !reflect.DeepEqual(plain.evs, want) {
		t.Errorf("without white space: events\n%q\nwant\n%q", plain.evs, want)
	}
	if !reflect.DeepEqual(spaced.evs, plain.evs) {
		t.Errorf("with white space: events\n%q\nwant\n%q", spaced.evs, plain.evs)
	}
}
