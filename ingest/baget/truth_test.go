package baget_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/ingest/baget"
	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/internal/tracegen"
	"github.com/traceduck/traceduck/schema"
)

// ingestGenerated writes a generated log and its description to a temporary
// directory and ingests it with --format baget --description.
func ingestGenerated(t *testing.T, db *schema.DB, cfg tracegen.BagetConfig) (ingest.Result, tracegen.BagetTruth) {
	t.Helper()
	log, desc, truth, err := tracegen.GenerateBaget(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	logPath := filepath.Join(dir, fmt.Sprintf("%s-%d-%d.blog", cfg.ABI, cfg.RingBlocks, cfg.Seed))
	descPath := filepath.Join(dir, "desc.xml")
	if err := os.WriteFile(logPath, log, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(descPath, desc, 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := ingest.Path(context.Background(), db, logPath, ingest.Options{Format: "baget", Params: map[string]string{"description": descPath}})
	if err != nil {
		t.Fatalf("ingest: %v", err)
	}
	return res, truth
}

// openDB opens a database with the views installed.
func openDB(t *testing.T) *schema.DB { return dbtest.Open(t) }

// query returns the rows of q as lines of values joined by " | ".
func query(t *testing.T, db *sql.DB, q string, args ...any) string {
	t.Helper()
	rs, err := db.Query(q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rs.Close()
	cols, err := rs.Columns()
	if err != nil {
		t.Fatal(err)
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var b strings.Builder
	for rs.Next() {
		if err := rs.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		for i, v := range vals {
			if i > 0 {
				b.WriteString(" | ")
			}
			switch v := v.(type) {
			case nil:
				b.WriteString("NULL")
			case []byte:
				b.Write(v)
			default:
				fmt.Fprint(&b, v)
			}
		}
		b.WriteByte('\n')
	}
	if err := rs.Err(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// objSQL renders an object of a query as the generator's BagetObj: user
// objects by their text (the name), others by native_id; none as {}.
func objSQL(alias string) string {
	return fmt.Sprintf(`CASE WHEN %[1]s.object_id IS NULL THEN '{}' WHEN %[1]s.kind = 'user'
		THEN '{user ' || %[1]s.pid || ' 0 ' || %[1]s.name || '}'
		ELSE '{' || %[1]s.kind || ' ' || %[1]s.pid || ' ' || %[1]s.native_id || ' }' END`, alias)
}

func objGo(o tracegen.BagetObj) string {
	if o == (tracegen.BagetObj{}) {
		return "{}"
	}
	return fmt.Sprintf("{%s %d %d %s}", o.Kind, o.Pid, o.OID, o.Text)
}

func rows(t *testing.T, db *sql.DB, q string, args ...any) []string {
	t.Helper()
	out := strings.Split(strings.TrimSuffix(query(t, db, q, args...), "\n"), "\n")
	if len(out) == 1 && out[0] == "" {
		return nil
	}
	sort.Strings(out)
	return out
}

func compare(t *testing.T, what string, got, want []string) {
	t.Helper()
	sort.Strings(want)
	if len(got) != len(want) {
		t.Errorf("%s: %d rows ingested, %d in the truth", what, len(got), len(want))
	}
	shown := 0
	gm := map[string]int{}
	for _, g := range got {
		gm[g]++
	}
	for _, w := range want {
		if gm[w] > 0 {
			gm[w]--
			continue
		}
		if shown++; shown <= 5 {
			t.Errorf("%s: missing %s", what, w)
		}
	}
	for g, n := range gm {
		if n > 0 {
			if shown++; shown <= 10 {
				t.Errorf("%s: extra %s (x%d)", what, g, n)
			}
		}
	}
}

// TestIngestEqualsTruth: the ingested tables equal the generator's truth
// exactly: events per type, eco-triples (event, context, main object) with
// their counts, complete thread state intervals, complete CPU state
// intervals with the thread or interrupt that held the CPU and their
// levels (holder, process, group, busy), busy and known time per CPU, time
// per holder, the state levels; for both ABIs, a log that did not wrap
// and a ring log that did, two seeds.
func TestIngestEqualsTruth(t *testing.T) {
	for _, abi := range []string{"le32", "be64"} {
		for _, ring := range []int{0, 12} {
			for _, seed := range []int64{1, 7} {
				t.Run(fmt.Sprintf("%s-ring%d-seed%d", abi, ring, seed), func(t *testing.T) {
					db := openDB(t)
					cfg := tracegen.BagetConfig{Events: 3000, CPUs: 3, Seed: seed, ABI: abi, RingBlocks: ring}
					res, truth := ingestGenerated(t, db, cfg)
					if ring > 0 && !truth.Wrapped {
						t.Fatal("the ring log did not wrap")
					}
					checkTruth(t, db.SQL(), res.RunID, truth)
				})
			}
		}
	}
}

func checkTruth(t *testing.T, db *sql.DB, run int32, truth tracegen.BagetTruth) {
	t.Helper()
	var want []string
	for name, n := range truth.EventCounts {
		want = append(want, fmt.Sprintf("%s | %d", name, n))
	}
	compare(t, "event counts", rows(t, db, `SELECT event, count(*) FROM events WHERE run_id = ? GROUP BY event`, run), want)

	want = nil
	for k, n := range truth.Ecos {
		want = append(want, fmt.Sprintf("%s | %s | %s | %d", k.Event, objGo(k.Context), objGo(k.Main), n))
	}
	compare(t, "eco-triples", rows(t, db, `SELECT e.event, `+objSQL("c")+`, `+objSQL("o")+`, e.count
		FROM eco_triples e
		LEFT JOIN objects c ON c.run_id = e.run_id AND c.object_id = e.context_id
		LEFT JOIN objects o ON o.run_id = e.run_id AND o.object_id = e.object_id
		WHERE e.run_id = ?`, run), want)

	want = nil
	for _, iv := range truth.ThreadStates {
		want = append(want, fmt.Sprintf("%s | %s | %d | %d", objGo(iv.Thread), iv.State, iv.StartNS, iv.EndNS))
	}
	compare(t, "thread intervals", rows(t, db, `SELECT `+objSQL("o")+`, s.state, s.start_ts, s.end_ts
		FROM state_intervals s JOIN objects o ON o.run_id = s.run_id AND o.object_id = s.object_id
		WHERE s.run_id = ? AND o.kind = 'thread' AND NOT s.truncated`, run), want)

	// CPU intervals: the holder at level 0, its process (or the
	// interrupt) at level 1, the group at level 2, busy or idle at 3.
	want = nil
	for _, iv := range truth.CPUStates {
		top := "idle"
		if iv.Busy() {
			top = "busy"
		}
		want = append(want, fmt.Sprintf("%d | %s | %s | %s | %s | %s | %d | %d", iv.CPU, iv.State, objGo(iv.Obj), iv.Process, iv.Group, top, iv.StartNS, iv.EndNS))
	}
	compare(t, "CPU intervals", rows(t, db, `SELECT c.native_id, s.state, `+objSQL("o")+`, l1.state, l2.state, l3.state, s.start_ts, s.end_ts
		FROM state_intervals s JOIN objects c ON c.run_id = s.run_id AND c.object_id = s.object_id
		LEFT JOIN objects o ON o.run_id = s.run_id AND o.object_id = s.instance
		LEFT JOIN state_level_map l1 ON l1.run_id = s.run_id AND l1.kind = 'cpu' AND l1.atomic = s.state AND l1.level = 1
		LEFT JOIN state_level_map l2 ON l2.run_id = s.run_id AND l2.kind = 'cpu' AND l2.atomic = s.state AND l2.level = 2
		LEFT JOIN state_level_map l3 ON l3.run_id = s.run_id AND l3.kind = 'cpu' AND l3.atomic = s.state AND l3.level = 3
		WHERE s.run_id = ? AND c.kind = 'cpu' AND NOT s.truncated`, run), want)

	// The CPU views: busy and known time per CPU, time per holder.
	want = nil
	for cpu, known := range truth.CPUKnownNS {
		want = append(want, fmt.Sprintf("cpu %d | %d | %d", cpu, truth.CPUBusyNS[cpu], known))
	}
	compare(t, "busy and known time per CPU", rows(t, db, `SELECT cpu, sum(ns) FILTER (WHERE busy), sum(ns)
		FROM cpu_utilization WHERE run_id = ? GROUP BY cpu`, run), want)
	want = nil
	for h, ns := range truth.HeldNS {
		want = append(want, fmt.Sprintf("%s | %d", objGo(h), ns))
	}
	compare(t, "time per holder", rows(t, db, `SELECT `+objSQL("o")+`, sum(dur)
		FROM cpu_intervals i JOIN objects o ON o.run_id = i.run_id AND o.object_id = i.holder_id
		WHERE i.run_id = ? AND NOT i.truncated GROUP BY ALL`, run), want)

	checkSyncTruth(t, db, run, truth)

	// A wrapped log may show receives whose send it lost: the message
	// model says so, once (info); nothing else is odd in a generated log.
	var wantDiags []string
	if len(truth.MsgNoSend) > 0 {
		wantDiags = append(wantDiags, "info | a message received whose send is not in the trace (sent before the trace began, or its event was not traced): kept without its send (truncated)")
	}
	compare(t, "diagnostics", rows(t, db, `SELECT severity, message FROM diagnostics WHERE run_id = ?`, run), wantDiags)
	// state_levels: the thread rows of baget.StateLevels and the CPU
	// model's, from the holders the truth shows.
	levels := map[string]bool{"cpuIdle 0 cpuIdle": true, "cpuIdle 1 cpuIdle": true, "cpuIdle 2 idle": true}
	for _, iv := range truth.CPUStates {
		if iv.Busy() {
			if iv.Group == baget.CPUThreads {
				levels[iv.State+" 0 "+iv.Process] = true
			}
			levels[iv.Process+" 1 "+iv.Group] = true
			levels[iv.Group+" 2 busy"] = true
		}
	}
	want = nil
	for l := range levels {
		want = append(want, "cpu "+l)
	}
	for _, l := range baget.StateLevels {
		want = append(want, fmt.Sprintf("%s %s %d %s", l.Kind, l.State, l.Level-1, l.Parent))
	}
	// the mutexes' states: each one met, under free or held
	mutexLevels := map[string]bool{}
	for _, st := range append(append([]tracegen.BagetResState(nil), truth.ResStates...), truth.ResStatesOpen...) {
		base, _, _ := strings.Cut(st.State, " (")
		mutexLevels["mutex "+st.State+" 0 "+base] = true
		mutexLevels["mutex "+base+" 1 "] = true
	}
	for l := range mutexLevels {
		want = append(want, l)
	}
	compare(t, "state_levels", rows(t, db, `SELECT kind || ' ' || state || ' ' || level || ' ' || parent_state FROM state_levels WHERE run_id = ?`, run), want)
}

// checkSyncTruth compares the holds, waits and queue messages with the
// truth: the complete ones, those open at the end of the log (truncated,
// their start in the log), and the receives whose send the log lost.
func checkSyncTruth(t *testing.T, db *sql.DB, run int32, truth tracegen.BagetTruth) {
	t.Helper()
	spans := func(l []tracegen.BagetSpan) (out []string) {
		for _, sp := range l {
			out = append(out, fmt.Sprintf("%s | %s | %d | %d", sp.ResourceName, objGo(sp.Thread), sp.StartNS, sp.EndNS))
		}
		return out
	}
	for _, c := range []struct {
		rel, cond string
		want      []tracegen.BagetSpan
	}{
		{"hold", "NOT i.truncated", truth.Holds},
		{"wait", "NOT i.truncated", truth.Waits},
		{"hold", "i.truncated AND i.start_seq IS NOT NULL", truth.HoldsOpen},
		{"wait", "i.truncated AND i.start_seq IS NOT NULL", truth.WaitsOpen},
	} {
		compare(t, c.rel+"s where "+c.cond, rows(t, db, `SELECT r.name, `+objSQL("o")+`, i.start_ts, i.end_ts FROM resource_intervals i
			JOIN objects r ON r.run_id = i.run_id AND r.object_id = i.resource_id JOIN objects o ON o.run_id = i.run_id AND o.object_id = i.actor_id
			WHERE i.run_id = ? AND i.relation = ? AND `+c.cond, run, c.rel), spans(c.want))
	}
	if !truth.Wrapped && (len(truth.Holds) == 0 || len(truth.Waits) == 0 || len(truth.Messages) == 0) {
		t.Errorf("the generated log has %d holds, %d waits, %d messages: expected some of each", len(truth.Holds), len(truth.Waits), len(truth.Messages))
	}
	states := func(l []tracegen.BagetResState) (out []string) {
		for _, st := range l {
			out = append(out, fmt.Sprintf("%s | %s | %s | %d | %d", st.Name, st.State, objGo(st.Holder), st.StartNS, st.EndNS))
		}
		return out
	}
	stateQ := `SELECT o.name, s.state, ` + objSQL("h") + `, s.start_ts, s.end_ts FROM state_intervals s
		JOIN objects o ON o.run_id = s.run_id AND o.object_id = s.object_id AND o.kind = 'mutex'
		LEFT JOIN objects h ON h.run_id = s.run_id AND h.object_id = s.instance WHERE s.run_id = ? AND `
	compare(t, "mutex states", rows(t, db, stateQ+`NOT s.truncated`, run), states(truth.ResStates))
	compare(t, "mutex states open at the end", rows(t, db, stateQ+`s.truncated`, run), states(truth.ResStatesOpen))
	if len(truth.ResStates) == 0 {
		t.Error("no mutex states in the truth")
	}
	msgs := func(l []tracegen.BagetQueueMsg) (out []string) {
		for _, m := range l {
			out = append(out, fmt.Sprintf("%s | %d | %s | %s | %d | %d", m.QueueName, m.ID, objGo(m.Sender), objGo(m.Receiver), m.SendNS, m.RecvNS))
		}
		return out
	}
	q := `SELECT q.name, m.msg_id, ` + objSQL("c") + `, ` + objSQL("s") + `, coalesce(m.send_ts, 0), coalesce(m.receive_ts, 0)
		FROM message_round_trips m JOIN objects q ON q.run_id = m.run_id AND q.object_id = m.channel_id
		LEFT JOIN objects c ON c.run_id = m.run_id AND c.object_id = m.client_id
		LEFT JOIN objects s ON s.run_id = m.run_id AND s.object_id = m.server_id WHERE m.run_id = ? AND m.one_way AND `
	compare(t, "messages", rows(t, db, q+`NOT m.truncated`, run), msgs(truth.Messages))
	compare(t, "messages not received", rows(t, db, q+`m.truncated AND m.receive_ts IS NULL`, run), msgs(truth.MsgOpen))
	compare(t, "messages without their send", rows(t, db, q+`m.truncated AND m.send_ts IS NULL`, run), msgs(truth.MsgNoSend))
}

// TestABIsGiveSameTables: the le32 and be64 logs of one scenario ingest to
// the same events (all columns but src_line, the byte offset), objects and
// state intervals. Wrapped, the two logs keep different amounts of the
// stream (be64 records are bigger), so there the events of the time both
// cover are compared (without ids, which depend on what was seen first).
func TestABIsGiveSameTables(t *testing.T) {
	for _, ring := range []int{0, 12} {
		t.Run(fmt.Sprintf("ring%d", ring), func(t *testing.T) {
			db := openDB(t)
			cfg := tracegen.BagetConfig{Events: 3000, CPUs: 2, Seed: 5, RingBlocks: ring}
			var runs []int32
			var from int64
			for _, abi := range []string{"le32", "be64"} {
				cfg.ABI = abi
				res, truth := ingestGenerated(t, db, cfg)
				runs = append(runs, res.RunID)
				from = max(from, truth.FirstNS)
			}
			qs := []string{
				`SELECT seq, ts, cpu, class, event, context_id, object_id, args FROM events WHERE run_id = ? ORDER BY seq`,
				`SELECT object_id, kind, name, native_id, pid, parent_id FROM objects WHERE run_id = ? ORDER BY object_id`,
				`SELECT object_id, instance, state, start_ts, end_ts, cpu, start_seq, end_seq, truncated FROM state_intervals WHERE run_id = ? ORDER BY object_id, instance, start_ts, start_seq`,
			}
			if ring > 0 {
				qs = []string{fmt.Sprintf(`SELECT ts, cpu, class, event, args FROM events WHERE run_id = ? AND ts >= %d ORDER BY seq`, from)}
			}
			for _, q := range qs {
				a := query(t, db.SQL(), q, runs[0])
				b := query(t, db.SQL(), q, runs[1])
				if a == "" {
					t.Errorf("%s: no rows", q)
				}
				if a != b {
					t.Errorf("%s: le32 and be64 differ", q)
				}
			}
		})
	}
}
