package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/internal/tracegen"
)

// TestSystemTimeline ingests the logs of two interacting machines of
// different ABIs in one call (each description found next to its log by
// OS version and architecture) and reads them back in time order through
// system_timeline: every event of both logs is there once, times never go
// back, and every message the generator sent is received after it was
// sent, on the machine it was sent to, at the times the generator chose.
func TestSystemTimeline(t *testing.T) {
	t.Parallel()
	ms, msgs, err := tracegen.GenerateBagetSystem([]tracegen.BagetConfig{
		{Events: 3000, CPUs: 2, Seed: 11, ABI: "le32"},
		{Events: 2000, CPUs: 3, Seed: 12, ABI: "be64"},
	})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var paths []string
	events := 0
	for i, m := range ms {
		arch := map[int]string{0: "i386", 1: "ppc64"}[i]
		writeFile(t, dir, "minirtos-2.1-"+arch+".xml", m.Description)
		paths = append(paths, writeFile(t, dir, fmt.Sprintf("node%d.blog", i), m.Log))
		events += m.Truth.Events
	}
	db := filepath.Join(dir, "t.duckdb")
	mustRun(t, dir, nil, append([]string{"ingest", "--db", db, "--system", "rig"}, paths...)...)

	got := scalar(t, dir, db, "SELECT count(*) || '/' || count(DISTINCT run_name) || '/' || bool_and(system = 'rig') FROM system_timeline('rig')")
	if want := fmt.Sprintf("%d/2/true", events); got != want {
		t.Errorf("timeline rows/runs/system %s, want %s", got, want)
	}
	// The macro's order is the time order.
	if got := scalar(t, dir, db, `SELECT count(*) FROM (SELECT ts, lag(ts) OVER () AS prev FROM system_timeline('rig')) WHERE ts < prev`); got != "0" {
		t.Errorf("%s rows earlier than the row before them", got)
	}

	out := mustRun(t, dir, nil, "query", "--db", db, "-o", "json",
		`SELECT run_name, ts, (args->>'msg_no')::BIGINT AS value, event FROM system_timeline('rig') WHERE object = 'net' AND event <> 'MQ_CREATE'`)
	var rows []struct {
		RunName string `json:"run_name"`
		TS      int64  `json:"ts"`
		Value   int64  `json:"value"`
		Event   string `json:"event"`
	}
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(rows) != 2*len(msgs) {
		t.Fatalf("%d net events, want %d (2 per message)", len(rows), 2*len(msgs))
	}
	sent := map[int64]bool{}
	for _, r := range rows {
		i := r.Value - msgs[0].ID
		if i < 0 || i >= int64(len(msgs)) {
			t.Fatalf("net event %+v names no message", r)
		}
		m := msgs[i]
		switch r.Event {
		case "MQ_SEND":
			if r.RunName != fmt.Sprintf("node%d", m.From) || r.TS != m.SendNS {
				t.Errorf("send of m%d: %+v, want node%d at %d", m.ID, r, m.From, m.SendNS)
			}
			sent[m.ID] = true
		case "MQ_RECEIVE":
			if !sent[m.ID] {
				t.Errorf("m%d received before it was sent", m.ID)
			}
			if r.RunName != fmt.Sprintf("node%d", m.To) || r.TS != m.RecvNS {
				t.Errorf("receipt of m%d: %+v, want node%d at %d", m.ID, r, m.To, m.RecvNS)
			}
		default:
			t.Errorf("net event %+v is neither a send nor a receipt", r)
		}
	}
}

// TestAlignCommand: two machines whose clocks disagree (machine 1 is 2 ms
// behind and gains 30 ppm); before align some messages read received
// before they were sent; traceduck align stores clocks whose bounds hold
// the truth, after which none does, in system_messages nor in the order of
// system_timeline; --set and --reference change what is estimated, bad
// flags are usage errors.
func TestAlignCommand(t *testing.T) {
	t.Parallel()
	clock := tracegen.BagetClock{OffsetNS: -2_000_000, DriftPPM: 30}
	ms, msgs, err := tracegen.GenerateBagetSystem([]tracegen.BagetConfig{
		{Events: 2000, CPUs: 2, Seed: 21, ABI: "le32", GapNS: 2_000_000},
		{Events: 2000, CPUs: 2, Seed: 22, ABI: "be64", GapNS: 2_000_000, Clock: clock},
	})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var paths []string
	for i, m := range ms {
		arch := map[int]string{0: "i386", 1: "ppc64"}[i]
		writeFile(t, dir, "minirtos-2.1-"+arch+".xml", m.Description)
		paths = append(paths, writeFile(t, dir, fmt.Sprintf("node%d.blog", i), m.Log))
	}
	db := filepath.Join(dir, "t.duckdb")
	mustRun(t, dir, nil, append([]string{"ingest", "--db", db, "--system", "rig"}, paths...)...)
	early := `SELECT count(*) FILTER (WHERE transit_ns < 0) FROM system_messages WHERE system = 'rig'`
	if got := scalar(t, dir, db, early); got == "0" {
		t.Fatal("no message reads received before it was sent on the raw clocks")
	}

	out := mustRun(t, dir, nil, "align", "--db", db, "--system", "rig", "-o", "json")
	var rows []struct {
		Run      string  `json:"run"`
		Source   string  `json:"source"`
		Offset   int64   `json:"offset_ns"`
		Drift    float64 `json:"drift_ppm"`
		RefTS    int64   `json:"ref_ts"`
		Sent     int64   `json:"sent"`
		Received int64   `json:"received"`
	}
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(rows) != 2 || rows[0].Run != "node0" || rows[0].Source != "reference" || rows[1].Source != "messages" ||
		rows[1].Sent+rows[1].Received != int64(len(msgs)) {
		t.Fatalf("%s", out)
	}
	// The truth at ref_ts: machine 0 reads true time, machine 1 reads
	// Local of it.
	tt := clock.True(rows[1].RefTS)
	off := tt - rows[1].RefTS
	var lo, hi int64
	var dlo, dhi float64
	if _, err := fmt.Sscan(scalar(t, dir, db, `SELECT offset_lo_ns || ' ' || offset_hi_ns || ' ' || drift_lo_ppm || ' ' || drift_hi_ppm FROM clocks WHERE run_id = 2`), &lo, &hi, &dlo, &dhi); err != nil {
		t.Fatal(err)
	}
	truthPPM := (1/(1+clock.DriftPPM/1e6) - 1) * 1e6
	if off < lo || off > hi || truthPPM < dlo || truthPPM > dhi {
		t.Errorf("truth %d ns, %.3f ppm outside %d..%d ns, %.3f..%.3f ppm", off, truthPPM, lo, hi, dlo, dhi)
	}
	if got := scalar(t, dir, db, early); got != "0" {
		t.Errorf("%s messages read received before they were sent after align", got)
	}
	if got := scalar(t, dir, db, `WITH t AS (SELECT row_number() OVER () AS i, * FROM system_timeline('rig'))
		SELECT count(*) || '/' || count(*) FILTER (WHERE r.i < s.i)
		FROM t s JOIN t r ON s.event = 'MQ_SEND' AND r.event = 'MQ_RECEIVE' AND s.object = 'net' AND r.object = 'net'
		 AND (s.args->>'msg_no') = (r.args->>'msg_no') AND s.run_id <> r.run_id`); got != fmt.Sprintf("%d/0", len(msgs)) {
		t.Errorf("timeline: messages/received before sent in its order: %s", got)
	}
	// --show prints the same without estimating.
	if got := mustRun(t, dir, nil, "align", "--db", db, "--system", "rig", "--show", "-o", "json"); got != out {
		t.Errorf("--show:\n%s\nwant\n%s", got, out)
	}

	// The user's clock for node1: stored as given, not estimated.
	got := mustRun(t, dir, nil, "align", "--db", db, "--system", "rig", "--set", "node1=-2ms,30ppm", "-o", "csv")
	if !strings.Contains(got, "node1,user,-2000000,,,30,") {
		t.Errorf("--set:\n%s", got)
	}
	// node1 as the reference: node0's offset is the opposite.
	mustRun(t, dir, nil, "align", "--db", db, "--system", "rig", "--reference", "node1", "--no-drift")
	if got := scalar(t, dir, db, `SELECT source || ' ' || (abs(offset_ns + 2000000) < 200000) || ' ' || drift_ppm FROM clocks WHERE run_id = 1`); got != "messages true 0.0" {
		t.Errorf("node0 against node1: %s", got)
	}
	for _, bad := range [][]string{
		{"--set", "node1"}, {"--set", "node1=3 parsecs"}, {"--set", "node1=1ms,2000ppm"}, {"--set", "node1=1ms", "--show"}, {},
	} {
		args := append([]string{"align", "--db", db}, bad...)
		if len(bad) > 0 {
			args = append(args, "--system", "rig")
		}
		expectExit(t, td(t, dir, args...), 2)
	}
	expectExit(t, td(t, dir, "align", "--db", db, "--system", "rig", "--reference", "node9"), 1, "no run \"node9\"")
	expectExit(t, td(t, dir, "align", "--db", db, "--system", "nope"), 1, "no run is tagged system=nope")
}

// TestIngestClockOffset: ingest --clock-offset gives one run's clock and
// aligns the system: the given run keeps it, the others are estimated;
// without a system or with --parquet it is a usage error.
func TestIngestClockOffset(t *testing.T) {
	t.Parallel()
	ms, _, err := tracegen.GenerateBagetSystem([]tracegen.BagetConfig{
		{Events: 800, Seed: 31, ABI: "be64", GapNS: 1_000_000},
		{Events: 800, Seed: 32, ABI: "be64", GapNS: 1_000_000, Clock: tracegen.BagetClock{OffsetNS: 4_000_000}},
		{Events: 800, Seed: 33, ABI: "be64", GapNS: 1_000_000, Clock: tracegen.BagetClock{OffsetNS: -7_000_000}},
	})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeFile(t, dir, "minirtos-2.1-ppc64.xml", ms[0].Description)
	var paths []string
	for i, m := range ms {
		paths = append(paths, writeFile(t, dir, fmt.Sprintf("node%d.blog", i), m.Log))
	}
	db := filepath.Join(dir, "t.duckdb")
	out := mustRun(t, dir, nil, append([]string{"ingest", "--db", db, "--system", "rig", "--clock-offset", "node1=-4ms"}, paths...)...)
	if !strings.Contains(out, "run 3: ") || !strings.Contains(out, "node1") || !strings.Contains(out, "given by the user") {
		t.Errorf("ingest output:\n%s", out)
	}
	// node2 is 7 ms behind: about +7 ms, within 100 us.
	if got := scalar(t, dir, db, `SELECT string_agg(source || ' ' || (abs(offset_ns - CASE run_id WHEN 2 THEN -4000000 WHEN 3 THEN 7000000 ELSE 0 END) < 100000), ',' ORDER BY run_id) FROM clocks`); got != `"reference true,user true,messages true"` {
		t.Errorf("clocks: %s", got)
	}
	if got := scalar(t, dir, db, `SELECT count(*) FILTER (WHERE transit_ns < 0) FROM system_messages WHERE system = 'rig'`); got != "0" {
		t.Errorf("%s messages received before they were sent", got)
	}
	expectExit(t, td(t, dir, "ingest", "--db", filepath.Join(dir, "u.duckdb"), "--clock-offset", "node0=1ms", paths[0]), 2, "of no system")
	expectExit(t, td(t, dir, "ingest", "--parquet", filepath.Join(dir, "ds"), "--system", "rig", "--clock-offset", "node0=1ms", paths[0]), 2, "give --db")
	expectExit(t, td(t, dir, "ingest", "--db", filepath.Join(dir, "u.duckdb"), "--system", "rig", "--clock-offset", "node0", paths[0]), 2, "--clock-offset node0: expected RUN=OFFSET")
}
