package export_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/internal/recount"
	"github.com/traceduck/traceduck/queries/export"
)

// toppersDir holds the real TOPPERS logs (read in place).
const toppersDir = "../../../shared/testdata-external/toppers"

// TestChromeCallsTOPPERS: on every real TOPPERS/ASP log, the view
// service_calls has the calls recounted from the raw lines (whose they
// are, their times, arguments and return codes), and the Chrome export
// writes each complete one as a slice of that call on its object's track
// "OBJECT calls" (nesting there), and the events that neither an
// interval nor a call shows as instants: the behaviors (dispatch,
// activate, ...) and the calls that never returned.
func TestChromeCallsTOPPERS(t *testing.T) {
	ctx := context.Background()
	for _, c := range recount.TOPPERSLogs {
		t.Run(strings.TrimSuffix(c.Log[strings.LastIndex(c.Log, "__")+2:], ".log"), func(t *testing.T) {
			log := filepath.Join(toppersDir, "YixiaoLi__tlv4mc__"+c.Log)
			if _, err := os.Stat(log); err != nil {
				t.Skipf("no %s beside the repository", log)
			}
			res := filepath.Join(t.TempDir(), "full.res")
			if c.Res != "" {
				res = filepath.Join(toppersDir, "YixiaoLi__tlv4mc__"+c.Res)
			} else if err := os.WriteFile(res, []byte(recount.FullLogResources()), 0o644); err != nil {
				t.Fatal(err)
			}
			rc, err := recount.ReadTOPPERSCalls(log, res)
			if err != nil {
				t.Fatal(err)
			}
			db := dbtest.Open(t)
			dbtest.Ingest(t, db, log, ingest.Options{Format: "toppers-asp", Params: map[string]string{"resources": res}})

			rows, err := db.SQL().Query(`SELECT object, call, coalesce(enter_ts, -1), coalesce(leave_ts, -1),
				coalesce(enter_args->>'args', ''), coalesce(leave_args->>'args', '') FROM service_calls WHERE run_id = 1`)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			complete := map[string]int{} // "OBJECT CALL START DUR" of the complete calls, as the export writes them
			for rows.Next() {
				var obj, call, a, r string
				var enter, leave int64
				if err := rows.Scan(&obj, &call, &enter, &leave, &a, &r); err != nil {
					t.Fatal(err)
				}
				got = append(got, strings.TrimSpace(fmt.Sprintf("%s %s %d %d %s | %s", obj, call, enter, leave, a, r)))
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			sort.Strings(got)
			if strings.Join(got, "\n") != strings.Join(rc.Calls, "\n") {
				t.Fatalf("service_calls (%d) against the raw lines (%d):\n%s", len(got), len(rc.Calls), dbtest.Diff(strings.Join(rc.Calls, "\n"), strings.Join(got, "\n")))
			}
			if len(rc.Calls) == 0 {
				t.Fatal("no call to compare")
			}
			// The recount's complete calls, as slices (a leave the log
			// timestamps before its enter: no length).
			unfinished := 0
			for _, line := range rc.Calls {
				var obj, call string
				var enter, leave int64
				if _, err := fmt.Sscanf(line, "%s %s %d %d", &obj, &call, &enter, &leave); err != nil {
					t.Fatalf("%q: %v", line, err)
				}
				if enter < 0 || leave < 0 {
					unfinished++
					continue
				}
				complete[fmt.Sprintf("%s calls | %s | %d | %d", obj, call, enter, max(leave-enter, 0))]++
			}

			var buf bytes.Buffer
			cr, err := export.Chrome(ctx, db.SQL(), &buf, export.ChromeOptions{Run: 1})
			if err != nil {
				t.Fatal(err)
			}
			names := map[[2]int64]string{}
			type span struct{ start, end int64 }
			open := map[[2]int64][]span{}
			n, instants := 0, 0
			for _, e := range parseChrome(t, buf.Bytes()) {
				key := [2]int64{*e.Pid, *e.Tid}
				switch {
				case e.Ph == "M" && e.Name == "thread_name":
					var name string
					if err := jsonString(e.Args["name"], &name); err != nil {
						t.Fatal(err)
					}
					names[key] = name
				case e.Ph == "X" && e.Cat == "call":
					start, dur := ns(t, e.Ts), ns(t, e.Dur)
					k := fmt.Sprintf("%s | %s | %d | %d", names[key], e.Name, start, dur)
					if complete[k] == 0 {
						t.Errorf("call slice %s: not a complete call of the raw lines", k)
					}
					complete[k]--
					n++
					if e.Args["enter"] == nil || e.Args["leave"] == nil {
						t.Errorf("call slice %s: args %v: expected enter and leave", k, e.Args)
					}
					s := open[key]
					for len(s) > 0 && s[len(s)-1].end <= start {
						s = s[:len(s)-1]
					}
					if len(s) > 0 && start+dur > s[len(s)-1].end {
						t.Fatalf("track %s: call [%d, %d) overlaps [%d, %d) without nesting", names[key], start, start+dur, s[len(s)-1].start, s[len(s)-1].end)
					}
					open[key] = append(s, span{start, start + dur})
				case e.Ph == "i":
					instants++
				}
			}
			if n != cr.Calls || n != len(rc.Calls)-unfinished {
				t.Errorf("%d call slices, result says %d, the raw lines have %d complete calls", n, cr.Calls, len(rc.Calls)-unfinished)
			}
			// Instants: every event but the ends of its object's
			// intervals and of the complete calls.
			var want int
			if err := db.SQL().QueryRow(`SELECT count(*) FROM events e WHERE run_id = 1 AND NOT EXISTS (
				SELECT 1 FROM state_intervals s WHERE s.run_id = 1 AND s.object_id = e.object_id AND e.seq IN (s.start_seq, s.end_seq))`).Scan(&want); err != nil {
				t.Fatal(err)
			}
			if want -= 2 * n; instants != want || cr.Instants != want {
				t.Errorf("%d instants (result says %d), want %d", instants, cr.Instants, want)
			}
			var dispatches int
			if err := db.SQL().QueryRow(`SELECT count(*) FROM events WHERE run_id = 1 AND event = 'dispatch'`).Scan(&dispatches); err != nil {
				t.Fatal(err)
			}
			lines := 0
			for _, d := range rc.Dispatches {
				lines += d
			}
			if dispatches != lines || lines == 0 {
				t.Errorf("%d dispatch behaviors, the raw lines have %d", dispatches, lines)
			}

			// Through traceduck's Chrome ingester, the calls come back as
			// the intervals of the tracks "OBJECT calls", named after the
			// call, and the instants as events of the objects' tracks.
			back := filepath.Join(t.TempDir(), "run.json")
			if err := os.WriteFile(back, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			dbtest.Ingest(t, db, back, ingest.Options{Format: "chrome"})
			const q = `SELECT %s, call, enter_ts, greatest(leave_ts - enter_ts, 0) FROM service_calls WHERE run_id = 1 AND dur IS NOT NULL ORDER BY ALL`
			want1 := dbtest.Query(t, db.SQL(), fmt.Sprintf(q, "object || ' calls'"))
			got2 := dbtest.Query(t, db.SQL(), `SELECT o.name, s.state, s.start_ts, s.dur FROM state_intervals s JOIN objects o USING (run_id, object_id)
				WHERE run_id = 2 AND o.name LIKE '% calls' ORDER BY ALL`)
			if got2 != want1 {
				t.Errorf("calls after the round trip:\n%s", dbtest.Diff(want1, got2))
			}
			want1 = dbtest.Query(t, db.SQL(), `SELECT e.ts, e.event FROM events e WHERE run_id = 1 AND e.object_id IS NOT NULL AND NOT EXISTS (
				SELECT 1 FROM state_intervals s WHERE s.run_id = 1 AND s.object_id = e.object_id AND e.seq IN (s.start_seq, s.end_seq))
				AND NOT EXISTS (SELECT 1 FROM service_calls c WHERE c.run_id = 1 AND c.dur IS NOT NULL AND e.seq IN (c.enter_seq, c.leave_seq)) ORDER BY ALL`)
			got2 = dbtest.Query(t, db.SQL(), `SELECT ts, event FROM events WHERE run_id = 2 AND (args->>'ph') = 'i' ORDER BY ALL`)
			if got2 != want1 {
				t.Errorf("instants after the round trip:\n%s", dbtest.Diff(want1, got2))
			}
			t.Logf("%d calls (%d unfinished), %d instants", len(rc.Calls), unfinished, instants)
		})
	}
}

// jsonString reads a JSON string.
func jsonString(raw json.RawMessage, s *string) error {
	return json.Unmarshal(raw, s)
}
