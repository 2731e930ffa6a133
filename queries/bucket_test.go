package queries_test

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/internal/qnxenc"
	"github.com/traceduck/traceduck/internal/tracegen"
)

// TestIntervalsInBucket: the intervals behind a histogram bar of a
// generated QNX trace are the simulator's RUNNING intervals of that
// duration range (its truth, recounted here), with their times; and as
// many as the histogram's bar counts.
func TestIntervalsInBucket(t *testing.T) {
	db := dbtest.Open(t)
	h, events, truth, err := tracegen.GenerateQNX(tracegen.QNXConfig{Events: 20000, CPUs: 2, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	if err := qnxenc.WriteText(&text, h, events); err != nil {
		t.Fatal(err)
	}
	stateIngestText(t, db, "qnx.txt", text.String(), ingest.Options{Format: "qnx"})
	const lo, hi = 16384, 32768 // a quantize bar
	var want []string
	for _, iv := range truth.ThreadStates {
		if d := iv.EndNS - iv.StartNS; iv.State == "RUNNING" && d >= lo && d < hi {
			want = append(want, fmt.Sprintf("%d/%d | %d | %d", iv.Pid, iv.Tid, iv.StartNS, iv.EndNS))
		}
	}
	sort.Strings(want)
	got := strings.Split(strings.TrimSuffix(dbtest.Query(t, db.SQL(), `SELECT o.pid || '/' || o.native_id, b.start_ts, b.end_ts
		FROM intervals_in_bucket('RUNNING', ?, ?) b JOIN objects o USING (run_id, object_id)`, lo, hi), "\n"), "\n")
	sort.Strings(got)
	if strings.Join(got, "\n") != strings.Join(want, "\n") || len(want) < 20 {
		t.Errorf("RUNNING intervals in [%d, %d): %d, the simulator's %d:\n%s", lo, hi, len(got), len(want), stateFirstDiff(got, want))
	}
	bar := dbtest.Query(t, db.SQL(), `SELECT sum(count) FROM hist_quantize('FROM durations_in_state(''RUNNING'')') WHERE bucket = ?`, lo)
	if bar != fmt.Sprintf("%d\n", len(want)) {
		t.Errorf("the quantize bar at %d counts %s, the bucket lists %d", lo, strings.TrimSpace(bar), len(want))
	}
	if _, err := db.SQL().Exec(`SELECT * FROM intervals_in_bucket('RUNNING', 10, 10)`); err == nil || !strings.Contains(err.Error(), "intervals_in_bucket: the bucket [10, 10) is empty: want lo < hi") {
		t.Errorf("an empty bucket: %v", err)
	}
}
