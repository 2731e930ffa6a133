package report_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	_ "github.com/traceduck/traceduck/ingest/qnx"
	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/internal/qnxenc"
	"github.com/traceduck/traceduck/internal/tracegen"
	"github.com/traceduck/traceduck/queries/report"
)

// TestRoundTripP99: the metric round_trip_p99 of two generated QNX runs is,
// per client and server, the 99th percentile (nearest rank) of the
// complete round trips the simulator passed (its ground truth), and the
// second run is compared with the first per key.
func TestRoundTripP99(t *testing.T) {
	ctx := context.Background()
	db := openSummarized(t)
	dir := t.TempDir()
	want := map[int32]map[string]int64{}
	for i, seed := range []int64{1, 2} {
		h, events, truth, err := tracegen.GenerateQNX(tracegen.QNXConfig{Events: 30000, CPUs: 2, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, fmt.Sprintf("v%d.txt", i+1))
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := qnxenc.WriteText(f, h, events); err != nil {
			t.Fatal(err)
		}
		f.Close()
		res := dbtest.Ingest(t, db, path, ingest.Options{Name: fmt.Sprintf("v%d", i+1)})
		// the threads' names, to key the truth as the report does
		names := map[string]string{}
		rows, err := db.SQL().Query(`SELECT pid || '/' || native_id, name FROM objects WHERE run_id = ? AND kind = 'thread'`, res.RunID)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var k, n string
			if err := rows.Scan(&k, &n); err != nil {
				t.Fatal(err)
			}
			names[k] = n
		}
		rows.Close()
		totals := map[string][]int64{}
		for _, m := range truth.Messages {
			if !m.OneWay && m.ReceiveNS >= 0 && m.ReplyNS >= 0 {
				k := names[m.Client] + " -> " + names[m.Server]
				totals[k] = append(totals[k], m.ReplyNS-m.SendNS)
			}
		}
		want[res.RunID] = map[string]int64{}
		for k, v := range totals {
			sort.Slice(v, func(i, j int) bool { return v[i] < v[j] })
			rank := (99*len(v) + 99) / 100 // ceil(0.99 n)
			want[res.RunID][k] = v[rank-1]
		}
		if len(totals) < 3 {
			t.Fatalf("run %d: round trips between %d pairs only", res.RunID, len(totals))
		}
	}
	rep, err := report.Build(ctx, db.SQL(), report.Options{Database: "qnx", Baseline: "v1"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[int32]map[string]int64{}
	for _, v := range rep.Values {
		if v.Metric != "round_trip_p99" {
			continue
		}
		if got[v.RunID] == nil {
			got[v.RunID] = map[string]int64{}
		}
		got[v.RunID][v.Key] = int64(v.Value)
		if v.RunID == 2 {
			base, ok := want[1][v.Key]
			if ok != (v.Baseline != nil) || ok && (*v.Baseline != float64(base) || *v.Change != v.Value-float64(base)) {
				t.Errorf("%s in v2: baseline %v change %v, want baseline %d (present %v)", v.Key, v.Baseline, v.Change, base, ok)
			}
		}
	}
	for run, w := range want {
		if fmt.Sprint(got[run]) != fmt.Sprint(w) {
			t.Errorf("run %d: round_trip_p99\n got %v\nwant %v", run, got[run], w)
		}
	}
}
