package tlv

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/internal/dbtest"
)

// TestPrioritiesStandardFormat: a header whose type says which attribute
// is the priority (traceduck's key Priority) gives each resource its
// priority from the resource file's initial value, and a new span at each
// change the log writes; the Order (lower_first) is the run's
// priority_order, and urgency is the negated number. A value that is not
// an integer is a warning and changes nothing.
func TestPrioritiesStandardFormat(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	headers := write("prio.resh", `{"prio": {"TASK": {
		"Priority": {"Attribute": "pri", "Order": "lower_first"},
		"Attributes": {
			"pri":   {"VariableType": "Number", "AllocationType": "Dynamic"},
			"state": {"VariableType": "String", "AllocationType": "Dynamic", "Default": "DORMANT"}
		}}}}`)
	res := write("prio.res", `{"TimeScale": "ns", "TimeRadix": 10, "ResourceHeaders": ["prio"], "Resources": {
		"T1": {"Type": "TASK", "Attributes": {"pri": 5, "state": "READY"}},
		"T2": {"Type": "TASK", "Attributes": {"state": "READY"}}}}`)
	log := write("prio.log", "[100]T1.state=RUNNING\n[200]T1.pri=2\n[300]T2.pri=7\n[400]T1.pri=high\n[500]T1.pri=5\n[600]T1.state=READY\n")
	db := dbtest.Open(t)
	ingestTLV(t, db, "tlv", log, res, "", headers)
	got := dbtest.Query(t, db.SQL(), `SELECT o.name, p.base, p.effective, p.urgency, p.start_ts, p.end_ts, p.start_seq, p.truncated, r.meta->>'priority_order'
		FROM priority_intervals p JOIN objects o USING (run_id, object_id) JOIN runs r USING (run_id) ORDER BY o.name, p.start_ts`)
	want := `T1 | 5 | 5 | -5 | 100 | 200 | NULL | false | lower_first
T1 | 2 | 2 | -2 | 200 | 500 | 2 | false | lower_first
T1 | 5 | 5 | -5 | 500 | 600 | 5 | true | lower_first
T2 | 7 | 7 | -7 | 300 | 600 | 3 | true | lower_first
`
	if got != want {
		t.Errorf("priority_intervals:\n got %s\nwant %s", got, want)
	}
	if got := dbtest.Query(t, db.SQL(), "SELECT severity, message FROM diagnostics"); got != "warning | priority pri=\"high\" of T1 is not an integer: its priority is not known from here\n" {
		t.Errorf("diagnostics: %s", got)
	}
}

// TestPrioritiesTOPPERS: the bundled TOPPERS headers say that a task's
// pri is its priority, smaller more urgent: each task of a real log gets
// the priority its resource file gives it (read here from the file with
// encoding/json), over the whole log; the logs write no change.
func TestPrioritiesTOPPERS(t *testing.T) {
	log := externalFile(t, "sampleFiles__SampleLog__asp__asp_short.log")
	resPath := externalFile(t, "sampleFiles__SampleLog__asp__asp_short.res")
	data, err := os.ReadFile(resPath)
	if err != nil {
		t.Fatal(err)
	}
	var rf struct {
		Resources map[string]struct {
			Type       string
			Attributes map[string]any
		}
	}
	if err := json.Unmarshal(data, &rf); err != nil {
		t.Fatal(err)
	}
	var want []string
	for name, r := range rf.Resources {
		if pri, ok := r.Attributes["pri"].(float64); ok && r.Type == "Task" {
			want = append(want, fmt.Sprintf("%s | %d | %d | true | lower_first\n", name, int64(pri), -int64(pri)))
		}
	}
	sort.Strings(want)
	if len(want) < 3 {
		t.Fatalf("the resource file gives %d task priorities", len(want))
	}
	db := dbtest.Open(t)
	run := ingestTLV(t, db, "toppers-asp", log, resPath, "", "")
	got := dbtest.Query(t, db.SQL(), `SELECT o.name, p.effective, p.urgency, p.start_ts = r.first_ts AND p.end_ts = r.last_ts AND p.truncated, r.meta->>'priority_order'
		FROM priority_intervals p JOIN objects o USING (run_id, object_id) JOIN runs r USING (run_id) WHERE p.run_id = ? ORDER BY o.name`, run.RunID)
	if got != strings.Join(want, "") {
		t.Errorf("priority_intervals:\n got %s\nwant %s", got, strings.Join(want, ""))
	}
}
