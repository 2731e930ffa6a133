package export_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/queries/export"
)

// chromeEvent is one entry of traceEvents, as the Trace Event Format
// defines it.
type chromeEvent struct {
	Ph    string                     `json:"ph"`
	Name  string                     `json:"name"`
	Cat   string                     `json:"cat"`
	Cname string                     `json:"cname"`
	Ts    *json.Number               `json:"ts"`
	Dur   *json.Number               `json:"dur"`
	Pid   *int64                     `json:"pid"`
	Tid   *int64                     `json:"tid"`
	S     string                     `json:"s"`
	ID    *int64                     `json:"id"`
	Bp    string                     `json:"bp"`
	Args  map[string]json.RawMessage `json:"args"`
}

// parseChrome checks the output is one JSON object in the Trace Event
// Format and returns its events.
func parseChrome(t *testing.T, data []byte) []chromeEvent {
	t.Helper()
	var doc struct {
		TraceEvents     []chromeEvent  `json:"traceEvents"`
		DisplayTimeUnit string         `json:"displayTimeUnit"`
		OtherData       map[string]any `json:"otherData"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("not the JSON object form of the Trace Event Format: %v", err)
	}
	if dec.More() {
		t.Fatal("data after the JSON object")
	}
	if doc.DisplayTimeUnit != "ns" {
		t.Errorf("displayTimeUnit = %q", doc.DisplayTimeUnit)
	}
	for i, e := range doc.TraceEvents {
		if e.Pid == nil || e.Tid == nil || e.Name == "" {
			t.Fatalf("event %d: pid, tid and name are required: %+v", i, e)
		}
		switch e.Ph {
		case "X":
			if e.Ts == nil || e.Dur == nil {
				t.Fatalf("event %d: X without ts or dur", i)
			}
		case "s", "f":
			if e.Ts == nil || e.ID == nil {
				t.Fatalf("event %d: %s without ts or id", i, e.Ph)
			}
		case "i", "C":
			if e.Ts == nil {
				t.Fatalf("event %d: %s without ts", i, e.Ph)
			}
		case "M":
		default:
			t.Fatalf("event %d: phase %q", i, e.Ph)
		}
	}
	return doc.TraceEvents
}

// ns reads a µs timestamp written with three decimals back into ns.
func ns(t *testing.T, n *json.Number) int64 {
	t.Helper()
	s := n.String()
	whole, frac, _ := strings.Cut(s, ".")
	for len(frac) < 3 {
		frac += "0"
	}
	v, err := strconv.ParseInt(whole+frac, 10, 64)
	if err != nil || len(frac) != 3 {
		t.Fatalf("timestamp %s: expected µs with at most 3 decimals", s)
	}
	return v
}

// TestChromeRuns exports each sample run and checks the output against
// the database: every state interval is one complete event with its
// times, on a track where complete events nest; every other event (one
// that opened or closed no interval of its object: the samples have no
// service call) is an instant; each track is named.
func TestChromeRuns(t *testing.T) {
	ctx := context.Background()
	db := sampleDB(t)
	for run := int32(1); run <= 4; run++ {
		t.Run(fmt.Sprint(run), func(t *testing.T) {
			var buf bytes.Buffer
			res, err := export.Chrome(ctx, db.SQL(), &buf, export.ChromeOptions{Run: run})
			if err != nil {
				t.Fatal(err)
			}
			events := parseChrome(t, buf.Bytes())

			// The intervals, as the database has them (counters' are
			// counter events).
			var want []string
			for _, line := range strings.Split(strings.TrimSpace(dbtest.Query(t, db.SQL(), `
				SELECT s.state, s.start_ts, s.end_ts - s.start_ts FROM state_intervals s JOIN objects o USING (run_id, object_id)
				WHERE run_id = ? AND NOT (lower(o.kind) IN ('signal', 'counter')) ORDER BY ALL`, run)), "\n") {
				want = append(want, line)
			}
			// Holds and waits, on their resources' tracks.
			var wantRes []string
			if rows := strings.TrimSpace(dbtest.Query(t, db.SQL(), `
				SELECT i.relation, a.name, i.start_ts, i.dur FROM resource_intervals i JOIN objects a ON a.run_id = i.run_id AND a.object_id = i.actor_id
				WHERE i.run_id = ? ORDER BY ALL`, run)); rows != "" {
				wantRes = strings.Split(rows, "\n")
			}
			named := map[[2]int64]bool{}
			var got, gotRes []string
			type span struct{ start, end int64 }
			open := map[[2]int64][]span{}
			instants := 0
			for _, e := range events {
				key := [2]int64{*e.Pid, *e.Tid}
				switch e.Ph {
				case "M":
					if e.Name == "thread_name" {
						named[key] = true
					}
				case "X":
					if !named[key] {
						t.Fatalf("X on track %v before its thread_name", key)
					}
					start, dur := ns(t, e.Ts), ns(t, e.Dur)
					if e.Cat == "hold" || e.Cat == "wait" {
						gotRes = append(gotRes, fmt.Sprintf("%s | %s | %d | %d", e.Cat, e.Name, start, dur))
					} else {
						got = append(got, fmt.Sprintf("%s | %d | %d", e.Name, start, dur))
					}
					// Complete events on a track must nest: each starts
					// after, or ends within, the ones still open.
					s := open[key]
					for len(s) > 0 && s[len(s)-1].end <= start {
						s = s[:len(s)-1]
					}
					if len(s) > 0 && start+dur > s[len(s)-1].end {
						t.Fatalf("track %v: %s [%d, %d) overlaps [%d, %d) without nesting", key, e.Name, start, start+dur, s[len(s)-1].start, s[len(s)-1].end)
					}
					open[key] = append(s, span{start, start + dur})
				case "i":
					instants++
				}
			}
			sort.Strings(got)
			sort.Strings(want)
			if len(got) != len(want) || res.Slices != len(want) {
				t.Fatalf("%d complete events (result says %d), want %d intervals", len(got), res.Slices, len(want))
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("interval %d: got %s, want %s", i, got[i], want[i])
				}
			}
			sort.Strings(gotRes)
			sort.Strings(wantRes)
			if strings.Join(gotRes, "\n") != strings.Join(wantRes, "\n") || res.Holds+res.Waits != len(wantRes) {
				t.Errorf("holds and waits (result says %d + %d):\n%s", res.Holds, res.Waits, dbtest.Diff(strings.Join(wantRes, "\n"), strings.Join(gotRes, "\n")))
			}
			if run <= 2 && len(wantRes) == 0 {
				t.Errorf("run %d: no hold or wait to check (the samples' BTF semaphore, QNX sync waits)", run)
			}
			if instants != res.Instants {
				t.Errorf("%d instants, result says %d", instants, res.Instants)
			}
			var wantInstants int
			if err := db.SQL().QueryRow(`SELECT count(*) FROM events e WHERE run_id = ?
				AND NOT EXISTS (SELECT 1 FROM state_intervals s WHERE s.run_id = e.run_id AND s.object_id = e.object_id AND e.seq IN (s.start_seq, s.end_seq))`, run).Scan(&wantInstants); err != nil {
				t.Fatal(err)
			}
			if instants != wantInstants || res.Calls != 0 {
				t.Errorf("%d instants, want %d events that end no interval of their object (%d calls)", instants, wantInstants, res.Calls)
			}
			if res.Counters == 0 {
				t.Errorf("no counter (CPU load)")
			}
		})
	}
}

// TestChromeWindow: a window clips the intervals that cross it and keeps
// only what overlaps it.
func TestChromeWindow(t *testing.T) {
	ctx := context.Background()
	db := sampleDB(t)
	var lo, hi int64
	if err := db.SQL().QueryRow(`SELECT first_ts + (last_ts - first_ts) // 3, first_ts + 2 * (last_ts - first_ts) // 3 FROM runs WHERE run_id = 1`).Scan(&lo, &hi); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	res, err := export.Chrome(ctx, db.SQL(), &buf, export.ChromeOptions{Run: 1, From: &lo, To: &hi})
	if err != nil {
		t.Fatal(err)
	}
	var want int
	if err := db.SQL().QueryRow(`SELECT count(*) FROM state_intervals s JOIN objects o USING (run_id, object_id)
		WHERE run_id = 1 AND NOT lower(o.kind) IN ('signal', 'counter') AND (end_ts > ? AND start_ts < ? OR start_ts = end_ts AND start_ts >= ? AND start_ts < ?)`, lo, hi, lo, hi).Scan(&want); err != nil {
		t.Fatal(err)
	}
	if res.Slices != want || want == 0 {
		t.Errorf("%d slices in the window, want %d", res.Slices, want)
	}
	clipped := 0
	for _, e := range parseChrome(t, buf.Bytes()) {
		if e.Ph == "X" || e.Ph == "i" || e.Ph == "C" {
			if s, d := ns(t, e.Ts), int64(0); s < lo || s >= hi {
				t.Fatalf("%s %s at %d outside [%d, %d)", e.Ph, e.Name, s, lo, hi)
			} else if e.Dur != nil {
				if d = ns(t, e.Dur); s+d > hi {
					t.Fatalf("%s ends at %d after %d", e.Name, s+d, hi)
				}
			}
		}
		if _, ok := e.Args["clipped"]; ok {
			clipped++
		}
	}
	if clipped == 0 {
		t.Error("no interval was clipped by a window in the middle of the run")
	}
	if _, err := export.Chrome(ctx, db.SQL(), &buf, export.ChromeOptions{Run: 1, From: &hi, To: &lo}); err == nil ||
		err.Error() != fmt.Sprintf("time window [%d, %d): expected --from before --to", hi, lo) {
		t.Errorf("reversed window: %v", err)
	}
	if _, err := export.Chrome(ctx, db.SQL(), &buf, export.ChromeOptions{Run: 99}); err == nil ||
		err.Error() != "run 99: no such run (see 'SELECT run_id, name FROM runs')" {
		t.Errorf("unknown run: %v", err)
	}
}

// TestChromeFlows: the messages of the QNX sample run are arrows, a
// request from the client's track at its send to the server's at its
// receive and a reply back at its reply, each end inside a slice of its
// track (Perfetto binds a flow to the slice that encloses it).
func TestChromeFlows(t *testing.T) {
	ctx := context.Background()
	db := sampleDB(t)
	const run = 2
	if f := dbtest.Query(t, db.SQL(), `SELECT format FROM runs WHERE run_id = ?`, run); f != "qnx\n" {
		t.Fatalf("run %d is %s", run, f)
	}
	var buf bytes.Buffer
	res, err := export.Chrome(ctx, db.SQL(), &buf, export.ChromeOptions{Run: run})
	if err != nil {
		t.Fatal(err)
	}
	type end struct {
		tid, ts int64
		name    string
	}
	starts, finishes := map[int64]end{}, map[int64]end{}
	type span struct{ start, end int64 }
	slices := map[int64][]span{}
	for _, e := range parseChrome(t, buf.Bytes()) {
		switch e.Ph {
		case "X":
			s := ns(t, e.Ts)
			slices[*e.Tid] = append(slices[*e.Tid], span{s, s + ns(t, e.Dur)})
		case "s", "f":
			if e.Cat != "message" {
				t.Fatalf("flow of cat %q", e.Cat)
			}
			m := starts
			if e.Ph == "f" {
				m = finishes
				if e.Bp != "e" {
					t.Errorf("flow end without bp e: %+v", e)
				}
			}
			if _, dup := m[*e.ID]; dup {
				t.Fatalf("two %s of flow %d", e.Ph, *e.ID)
			}
			m[*e.ID] = end{*e.Tid, ns(t, e.Ts), e.Name}
		}
	}
	inSlice := func(tid, ts int64) bool {
		for _, s := range slices[tid] {
			if s.start <= ts && ts <= s.end {
				return true
			}
		}
		return false
	}
	var got []string
	for id, s := range starts {
		f, ok := finishes[id]
		if !ok || f.name != s.name {
			t.Fatalf("flow %d: start %+v, finish %+v", id, s, f)
		}
		if !inSlice(s.tid, s.ts) || !inSlice(f.tid, f.ts) {
			t.Errorf("flow %d (%s) from %d at %d to %d at %d: an end outside every slice of its track", id, s.name, s.tid, s.ts, f.tid, f.ts)
		}
		got = append(got, fmt.Sprintf("%s | %d | %d | %d | %d", s.name, s.tid, f.tid, s.ts, f.ts))
	}
	if len(finishes) != len(starts) || res.Flows != len(starts) {
		t.Errorf("%d starts, %d finishes, result says %d flows", len(starts), len(finishes), res.Flows)
	}
	sort.Strings(got)
	want := strings.Split(strings.TrimSpace(dbtest.Query(t, db.SQL(), `
		SELECT CASE WHEN one_way THEN 'one-way' ELSE 'message' END, client_id, server_id, send_ts, receive_ts
		FROM message_round_trips WHERE run_id = ? AND client_id IS NOT NULL AND server_id IS NOT NULL AND send_ts IS NOT NULL AND receive_ts IS NOT NULL
		UNION ALL
		SELECT 'reply', server_id, client_id, reply_ts, reply_ts FROM message_round_trips WHERE run_id = ? AND reply_ts IS NOT NULL AND client_id IS NOT NULL`, run, run)), "\n")
	sort.Strings(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") || len(want) < 100 {
		t.Errorf("flows (%d) differ from the messages (%d):\n%s", len(got), len(want), dbtest.Diff(strings.Join(want, "\n"), strings.Join(got, "\n")))
	}
}
