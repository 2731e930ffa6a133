package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
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
