package queries_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/ingest/tlv"
	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/internal/recount"
	"github.com/traceduck/traceduck/queries"
)

const toppersDir = "../../shared/testdata-external/toppers"

// TestTLVStatsTOPPERS: TLV's statistics generation rules over the real
// TOPPERS/ASP logs, against the raw lines (recount.ReadTOPPERSCalls):
//   - task_dispatch_count.sgr (TLV's own file: Count of each Task's
//     changes of state to RUNNING) is, per task and in the resource
//     file's order, the lines "dispatch to task N.";
//   - with an Interval of 10 s (the log's unit is us: 10000000), the
//     first task's dispatches per window from the first line;
//   - Measure from enterSVC(dly_tsk) to leaveSVC(dly_tsk) of LOGTASK is
//     the mean, max and min length of its complete dly_tsk calls;
//   - Measure with When: the mean time between LOGTASK's dispatches.
func TestTLVStatsTOPPERS(t *testing.T) {
	ctx := context.Background()
	sgr := filepath.Join(toppersDir, "YixiaoLi__tlv4mc__statisticsGenerationRules__task_dispatch_count.sgr")
	if _, err := os.Stat(sgr); err != nil {
		t.Skipf("no %s beside the repository", sgr)
	}
	own, err := tlv.ReadSGRFile(sgr)
	if err != nil {
		t.Fatal(err)
	}
	extra, err := tlv.ReadSGR("extra.sgr", []byte(`{
	"windows": {"Mode": "Basic", "BasicRule": {"Method": "Count", "Interval": 10000000,
		"When": {"ResourceType": ["Task"], "AttributeName": "state", "AttributeValue": "RUNNING"}}},
	"dly": {"Mode": "Basic", "BasicRule": {"Method": "Measure",
		"From": {"ResourceName": "LOGTASK", "BehaviorName": "enterSVC", "BehaviorArg": "dly_tsk, dlytim=10."},
		"To": {"ResourceName": "LOGTASK", "BehaviorName": "leaveSVC", "BehaviorArg": "dly_tsk, ercd=0."}}},
	"gaps": {"Mode": "Basic", "BasicRule": {"Method": "Measure",
		"When": {"ResourceName": ["LOGTASK"], "BehaviorName": "dispatch"}}}
}`))
	if err != nil {
		t.Fatal(err)
	}
	stat := func(db *sql.DB, r tlv.StatRule) string {
		ev := func(e *tlv.StatEvent) *queries.TLVEvent {
			if e == nil {
				return nil
			}
			return &queries.TLVEvent{Names: e.Names, Types: e.Types, Attribute: e.Attribute, Value: e.Value, Behavior: e.Behavior, Args: e.Args, HasArgs: e.HasArgs}
		}
		text, err := queries.TLVStatSQL(ctx, db, queries.TLVStat{Method: r.Method, Interval: r.Interval, When: ev(r.When), From: ev(r.From), To: ev(r.To)}, 1)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := db.Query(text)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		cols, _ := rows.Columns()
		var b strings.Builder
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			for i, v := range vals {
				if i > 0 {
					b.WriteByte('\t')
				}
				if f, ok := v.(float64); ok {
					fmt.Fprintf(&b, "%.3f", f)
				} else {
					fmt.Fprint(&b, v)
				}
			}
			b.WriteByte('\n')
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	for _, c := range recount.TOPPERSLogs[:5] {
		t.Run(strings.TrimSuffix(c.Log[strings.LastIndex(c.Log, "__")+2:], ".log"), func(t *testing.T) {
			log, res := filepath.Join(toppersDir, "YixiaoLi__tlv4mc__"+c.Log), filepath.Join(toppersDir, "YixiaoLi__tlv4mc__"+c.Res)
			rc, err := recount.ReadTOPPERSCalls(log, res)
			if err != nil {
				t.Fatal(err)
			}
			db := dbtest.Open(t)
			dbtest.Ingest(t, db, log, ingest.Options{Format: "toppers-asp", Params: map[string]string{"resources": res}})

			// Count: the dispatch lines per task, in the resource file's order.
			var want strings.Builder
			for _, name := range strings.Fields(dbtest.Query(t, db.SQL(), `SELECT name FROM objects WHERE run_id = 1 AND kind = 'Task' ORDER BY object_id`)) {
				fmt.Fprintf(&want, "1\t%s\t%d\n", name, rc.Dispatches[name])
			}
			if got := (stat(db.SQL(), own[0])); got != want.String() {
				t.Errorf("task_dispatch_count:\n%s", dbtest.Diff(want.String(), got))
			}

			// Windows of 10 s from the first line, of the first task.
			first := strings.Fields(dbtest.Query(t, db.SQL(), `SELECT name FROM objects WHERE run_id = 1 AND kind = 'Task' ORDER BY object_id LIMIT 1`))[0]
			start := rc.First
			counts := map[int64]int{}
			for _, ts := range rc.DispatchTimes[first] {
				counts[(ts-start)/10_000_000_000]++
			}
			rows := strings.Split(strings.TrimSpace((stat(db.SQL(), extra[0]))), "\n")
			total := 0
			for i, row := range rows {
				f := strings.Split(row, "\t")
				if want := fmt.Sprintf("1 %s %d %d %d", first, start+int64(i)*10_000_000_000, start+int64(i+1)*10_000_000_000, counts[int64(i)]); strings.Join(f, " ") != want {
					t.Errorf("window %d: %q, want %q", i, strings.Join(f, " "), want)
				}
				total += counts[int64(i)]
			}
			if total != rc.Dispatches[first] || total == 0 {
				t.Errorf("the windows hold %d dispatches of %s, the log %d", total, first, rc.Dispatches[first])
			}

			// Measure From/To: LOGTASK's complete dly_tsk calls.
			var durs []int64
			for _, line := range rc.Calls {
				var obj, call string
				var enter, leave int64
				fmt.Sscanf(line, "%s %s %d %d", &obj, &call, &enter, &leave)
				if obj == "LOGTASK" && call == "dly_tsk" && enter >= 0 && leave >= 0 && strings.HasSuffix(line, "dlytim=10. | ercd=0.") {
					durs = append(durs, leave-enter)
				}
			}
			if len(durs) == 0 {
				t.Fatal("no dly_tsk call of LOGTASK")
			}
			if got, want := (stat(db.SQL(), extra[1])), "1\tLOGTASK\tLOGTASK\t"+summary(durs)+"\n"; got != want {
				t.Errorf("dly_tsk: got %q, want %q", got, want)
			}

			// Measure with When: the gaps between LOGTASK's dispatches.
			ts := rc.DispatchTimes["LOGTASK"]
			var gaps []int64
			for i := 1; i < len(ts); i++ {
				gaps = append(gaps, ts[i]-ts[i-1])
			}
			if got, want := (stat(db.SQL(), extra[2])), "1\tLOGTASK\t"+summary(gaps)+"\n"; got != want {
				t.Errorf("dispatch gaps: got %q, want %q", got, want)
			}
		})
	}
}

// summary is n, mean (three decimals), max and min of ds, tab-separated.
func summary(ds []int64) string {
	var sum, mx, mn int64
	mn = ds[0]
	for _, d := range ds {
		sum += d
		mx, mn = max(mx, d), min(mn, d)
	}
	return fmt.Sprintf("%d\t%.3f\t%d\t%d", len(ds), float64(sum)/float64(len(ds)), mx, mn)
}
