package chrome_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/chromegen"
	"github.com/traceduck/traceduck/internal/dbtest"
)

// The sample of the demo, samples/chrome/app.json, is what the generator
// writes with this configuration (-update rewrites it).
const samplePath = "../../samples/chrome/app.json"

var sampleConfig = chromegen.Config{Seed: 2024, Tasks: 22}

func TestSampleUpToDate(t *testing.T) {
	var b bytes.Buffer
	if _, err := chromegen.Write(&b, sampleConfig); err != nil {
		t.Fatal(err)
	}
	if b.Len() >= 100_000 {
		t.Errorf("the sample is %d bytes, over 100 KB", b.Len())
	}
	if *dbtest.Update {
		if err := os.WriteFile(samplePath, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	have, err := os.ReadFile(samplePath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(have, b.Bytes()) {
		t.Errorf("%s is not what the generator writes (go test ./ingest/chrome -run TestSampleUpToDate -update)", samplePath)
	}
}

// TestTruth: the sample and a larger generated trace give exactly the
// slices (thread, depth, name, times), async slices, counter values,
// events and time span that the generator lived. Its threads write their
// slices as B/E, as complete events where they begin and where they end
// (children first): the depths come out the same.
func TestTruth(t *testing.T) {
	big := filepath.Join(t.TempDir(), "big.json")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	bigTruth, err := chromegen.Write(f, chromegen.Config{Seed: 7, Tasks: 400})
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	sampleTruth, _ := chromegen.Write(&b, sampleConfig)
	for _, tc := range []struct {
		path  string
		truth chromegen.Truth
	}{{samplePath, sampleTruth}, {big, bigTruth}} {
		t.Run(filepath.Base(tc.path), func(t *testing.T) {
			tr := tc.truth
			db := dbtest.Open(t)
			res := dbtest.Ingest(t, db, tc.path, ingest.Options{})
			if res.Format != "chrome" || res.Events != int64(tr.Events) {
				t.Errorf("%s, %d events; the generator wrote %d", res.Format, res.Events, tr.Events)
			}
			span := dbtest.Query(t, db.SQL(), "SELECT first_ts, last_ts FROM runs")
			if want := fmt.Sprintf("%d | %d\n", tr.FirstTS, tr.LastTS); span != want {
				t.Errorf("runs span %s, want %s", span, want)
			}
			var want []string
			for _, s := range tr.Slices {
				want = append(want, fmt.Sprintf("%d/%d %d %s %d %d %v", s.PID, s.TID, s.Depth, s.Name, s.Start, s.End, s.Truncated))
			}
			for _, s := range tr.Async {
				want = append(want, fmt.Sprintf("net 0x%x %d %s %d %d false", s.TID, s.Depth, s.Name, s.Start, s.End))
			}
			got := dbtest.Query(t, db.SQL(), `SELECT CASE WHEN o.kind = 'thread' THEN o.pid || '/' || o.native_id ELSE o.name END
			       || ' ' || s.instance || ' ' || s.state || ' ' || s.start_ts || ' ' || s.end_ts || ' ' || s.truncated
				FROM state_intervals s JOIN objects o USING (run_id, object_id) WHERE o.kind IN ('thread', 'async') ORDER BY 1`)
			sort.Strings(want)
			if w := strings.Join(want, "\n") + "\n"; got != w {
				t.Errorf("slices differ from the generator's (%d vs %d)", strings.Count(got, "\n"), len(want))
			}
			// Counter values: each sample starts a value interval (the
			// same value twice in a row continues it).
			want = want[:0]
			last := map[string]string{}
			for _, v := range tr.Values {
				k := fmt.Sprintf("%d %s %s", v.PID, v.Counter, v.Series)
				if last[k] != v.Value {
					want = append(want, fmt.Sprintf("%s %d %s", k, v.TS, v.Value))
				}
				last[k] = v.Value
			}
			sort.Strings(want)
			got = dbtest.Query(t, db.SQL(), `SELECT o.pid || ' ' || (o.attrs->>'counter') || ' ' || (o.attrs->>'series') || ' ' || s.start_ts || ' ' || s.state
				FROM state_intervals s JOIN objects o USING (run_id, object_id) WHERE o.kind = 'counter' ORDER BY 1`)
			if w := strings.Join(want, "\n") + "\n"; got != w {
				t.Errorf("counter values differ from the generator's:\n%.300s\nwant\n%.300s", got, w)
			}
			if d := dbtest.Query(t, db.SQL(), "SELECT count(*) FROM diagnostics"); d != "0\n" {
				t.Errorf("diagnostics: %s", dbtest.Query(t, db.SQL(), "SELECT * FROM diagnostics"))
			}
		})
	}
}
