package chrome_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/dbtest"
)

const externalDir = "../../../shared/testdata-external/chrome-json"

func externalFiles(t testing.TB) []string {
	files, _ := filepath.Glob(filepath.Join(externalDir, "*.json"))
	if len(files) == 0 {
		t.Skip("no ../shared/testdata-external/chrome-json beside the repository")
	}
	return files
}

// shortName is what follows "traces__" in the external file names.
func shortName(path string) string {
	base := filepath.Base(path)
	if i := strings.LastIndex(base, "traces__"); i >= 0 {
		return base[i+len("traces__"):]
	}
	return base
}

// TestExternalGolden: the small real files (Trace Compass's test traces)
// give the tables in testdata/external/NAME.golden, reviewed by hand.
func TestExternalGolden(t *testing.T) {
	for _, path := range externalFiles(t) {
		name := shortName(path)
		switch name {
		case "async_begin_end.json", "instant_events.json", "nanoseconds.json":
		default:
			continue
		}
		t.Run(name, func(t *testing.T) {
			db := dbtest.Open(t)
			dbtest.Ingest(t, db, path, ingest.Options{Name: strings.TrimSuffix(name, ".json")})
			dbtest.Golden(t, filepath.Join("testdata", "external", strings.TrimSuffix(name, ".json")+".golden"), dbtest.Dump(t, db.SQL()))
		})
	}
}

// TestTraceCompassFigures: what Trace Compass's own tests expect of the
// same files. TraceEventTraceTest: async_begin_end.json has 23 events from
// 50 µs to 900 µs. nanoseconds.json: its ts are microseconds with three
// decimals; displayTimeUnit "ns" is the unit "in which timestamps should
// be displayed" (the Trace Event Format), so us1 lasts 1.1 µs and ns1
// 11 ns. Trace Compass multiplies the double by 1000 and
// truncates (3.011 µs becomes 3010 ns there); traceduck reads the
// decimals exactly.
func TestTraceCompassFigures(t *testing.T) {
	for _, path := range externalFiles(t) {
		switch shortName(path) {
		case "async_begin_end.json":
			db := dbtest.Open(t)
			res := dbtest.Ingest(t, db, path, ingest.Options{})
			got := dbtest.Query(t, db.SQL(), "SELECT event_count, first_ts, last_ts FROM runs")
			if res.Events != 23 || got != "23 | 50000 | 900000\n" {
				t.Errorf("async_begin_end: %d events, runs: %s", res.Events, got)
			}
		case "nanoseconds.json":
			db := dbtest.Open(t)
			dbtest.Ingest(t, db, path, ingest.Options{})
			got := dbtest.Query(t, db.SQL(), "SELECT string_agg(state || '=' || dur, ' ' ORDER BY start_ts) FROM state_intervals")
			if want := "us1=1100 us2=200 us3=300 us4=400 ns1=11 ns2=2 ns3=3 ns4=4\n"; got != want {
				t.Errorf("nanoseconds: got %s want %s", got, want)
			}
			meta := dbtest.Query(t, db.SQL(), "SELECT time_unit, ns_per_unit, meta FROM runs")
			if meta != `us | 1000 | {"displayTimeUnit":"ns"}`+"\n" {
				t.Errorf("nanoseconds runs: %s", meta)
			}
		}
	}
}

// TestExternalFiles: every real file ingests, detected as chrome, with
// no diagnostic beyond the ones its content explains; its events and
// slices equal what an independent reading computes: encoding/json
// decodes the whole file, timestamps are converted with exact rationals
// (math/big), B/E are paired per thread with a plain stack, and a B never
// ended ends at the largest timestamp of the file.
func TestExternalFiles(t *testing.T) {
	for _, path := range externalFiles(t) {
		t.Run(shortName(path), func(t *testing.T) {
			want := independentReading(t, path)
			db := dbtest.Open(t)
			res := dbtest.Ingest(t, db, path, ingest.Options{})
			if res.Format != "chrome" {
				t.Fatalf("detected as %s", res.Format)
			}
			if res.Events != want.events {
				t.Errorf("events: %d, independent reading %d", res.Events, want.events)
			}
			got := dbtest.Query(t, db.SQL(), `SELECT o.native_id || ' ' || s.instance || ' ' || s.state || ' ' || s.start_ts || ' ' || s.end_ts || ' ' || s.truncated
				FROM state_intervals s JOIN objects o USING (run_id, object_id) WHERE o.kind = 'thread' ORDER BY 1`)
			var lines []string
			for _, s := range want.slices {
				lines = append(lines, s)
			}
			sort.Strings(lines)
			w := strings.Join(lines, "\n")
			if len(lines) > 0 {
				w += "\n"
			}
			if got != w {
				t.Errorf("thread slices differ from the independent reading (%d vs %d lines)", strings.Count(got, "\n"), len(lines))
			}
			names := dbtest.Query(t, db.SQL(), "SELECT count(*) FROM objects WHERE kind = 'thread' AND name <> pid || '/' || native_id")
			if names != fmt.Sprintf("%d\n", want.threadNames) {
				t.Errorf("threads named by metadata: %s, want %d", names, want.threadNames)
			}
			t.Logf("diagnostics:\n%s", dbtest.Query(t, db.SQL(), "SELECT severity, count, src_line, message FROM diagnostics ORDER BY src_line"))
		})
	}
}

type reading struct {
	events      int64
	slices      []string // "tid depth name start end truncated"
	threadNames int
}

// independentReading reads a file with encoding/json, whole.
func independentReading(t *testing.T, path string) reading {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var top any
	if err := dec.Decode(&top); err != nil {
		t.Fatalf("%s is not JSON: %v", path, err)
	}
	var evs []any
	switch v := top.(type) {
	case []any:
		evs = v
	case map[string]any:
		evs = v["traceEvents"].([]any)
	}
	ns := func(v any) int64 {
		var text string
		switch v := v.(type) {
		case json.Number:
			text = string(v)
		case string:
			text = v
		}
		r, ok := new(big.Rat).SetString(text)
		if !ok {
			t.Fatalf("ts %v", v)
		}
		r.Mul(r, big.NewRat(1000, 1))
		return new(big.Int).Quo(r.Num(), r.Denom()).Int64()
	}
	type open struct {
		name  string
		start int64
	}
	stacks := map[string][]open{}
	var out reading
	var last int64
	var tids []string
	named := map[string]bool{}
	for _, e := range evs {
		ev := e.(map[string]any)
		if len(ev) == 0 {
			continue
		}
		ph := ev["ph"].(string)
		tid := fmt.Sprint(ev["tid"])
		if ph == "M" {
			if ev["name"] == "thread_name" {
				named[fmt.Sprint(ev["pid"])+"/"+tid] = true
			}
			continue
		}
		out.events++
		ts := ns(ev["ts"])
		last = max(last, ts)
		switch ph {
		case "B":
			if _, ok := stacks[tid]; !ok {
				tids = append(tids, tid)
			}
			stacks[tid] = append(stacks[tid], open{fmt.Sprint(ev["name"]), ts})
		case "E":
			st := stacks[tid]
			if len(st) == 0 {
				continue
			}
			o := st[len(st)-1]
			out.slices = append(out.slices, fmt.Sprintf("%s %d %s %d %d false", tid, len(st)-1, o.name, o.start, ts))
			stacks[tid] = st[:len(st)-1]
		}
	}
	for _, tid := range tids {
		for d, o := range stacks[tid] {
			out.slices = append(out.slices, fmt.Sprintf("%s %d %s %d %d true", tid, d, o.name, o.start, last))
		}
	}
	out.threadNames = len(named)
	return out
}
