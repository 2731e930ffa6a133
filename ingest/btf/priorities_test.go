package btf_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/internal/recount"
)

// inversionTrace is a priority inversion by hand, on one core: Low
// (pri:1) holds S; High (pri:3) preempts it, asks for S and blocks; Med
// (pri:2) preempts Low from 200 to 300 while High waits. The inversion is
// Med's run: 200..300. With Low raised to High's priority while High
// waits (inherit true: the FreeRTOS logger's priority_inherit and
// priority_disinherit), the same schedule is none: the view compares the
// effective priorities (a kernel that inherits would not have let Med
// run; the trace is what the view believes).
func inversionTrace(inherit bool) string {
	lines := []string{
		"#version 2.2.0", "#timeScale ns",
		"0,Core_0,0,C,Core_0,0,set_frequency,1000",
		"0,Stim,0,T,Low,0,activate,pri:1",
		"0,Core_0,0,T,Low,0,start",
		"10,Low,0,SEM,S,0,requestsemaphore",
		"10,Low,0,SEM,S,0,assigned",
		"100,Stim,0,T,High,0,activate,pri:3",
		"100,Core_0,0,T,Low,0,preempt",
		"100,Core_0,0,T,High,0,start",
		"120,High,0,SEM,S,0,requestsemaphore",
		"120,High,0,SEM,S,0,waiting",
	}
	if inherit {
		lines = append(lines, "120,Core_0,0,STI,task,0,trigger,priority_inherit Low pri:3")
	}
	lines = append(lines,
		"120,Core_0,0,T,High,0,wait",
		"120,Core_0,0,T,Low,0,resume",
		"200,Stim,0,T,Med,0,activate,pri:2",
	)
	lines = append(lines, "200,Core_0,0,T,Low,0,preempt", "200,Core_0,0,T,Med,0,start",
		"300,Core_0,0,T,Med,0,terminate", "300,Core_0,0,T,Low,0,resume")
	lines = append(lines, "350,Low,0,SEM,S,0,released")
	if inherit {
		lines = append(lines, "350,Core_0,0,STI,task,0,trigger,priority_disinherit Low pri:1")
	}
	lines = append(lines,
		"350,High,0,SEM,S,0,assigned",
		"350,Core_0,0,T,High,0,release",
		"350,Core_0,0,T,Low,0,preempt",
		"350,Core_0,0,T,High,0,resume",
		"400,High,0,SEM,S,0,released",
		"400,Core_0,0,T,High,0,terminate",
		"400,Core_0,0,T,Low,0,resume",
	)
	lines = append(lines, "500,Core_0,0,T,Low,0,terminate")
	return strings.Join(lines, "\n") + "\n"
}

// TestPriorityInversionByHand: the view finds exactly the inversion the
// trace above was written with, and none when Low inherits High's
// priority; priority_intervals holds the priorities the notes tell.
func TestPriorityInversionByHand(t *testing.T) {
	db := dbtest.Open(t)
	for _, c := range []struct {
		inherit          bool
		inversions, prio string
	}{
		{false, "S | High | Low | Med | 200 | 300 | 100 | Core_0\n",
			"High | 3 | 3 | 100 | 500 | true\nLow | 1 | 1 | 0 | 500 | true\nMed | 2 | 2 | 200 | 500 | true\n"},
		{true, "",
			"High | 3 | 3 | 100 | 500 | true\nLow | 1 | 1 | 0 | 120 | false\nLow | 1 | 3 | 120 | 350 | false\nLow | 1 | 1 | 350 | 500 | true\nMed | 2 | 2 | 200 | 500 | true\n"},
	} {
		// both in one database, on the same times: each run's rows are its own
		path := filepath.Join(t.TempDir(), fmt.Sprintf("inv-%v.btf", c.inherit))
		if err := os.WriteFile(path, []byte(inversionTrace(c.inherit)), 0o644); err != nil {
			t.Fatal(err)
		}
		run := dbtest.Ingest(t, db, path, ingest.Options{}).RunID
		q := db.SQL()
		if got := dbtest.Query(t, q, "SELECT resource, high, low, middle, start_ts, end_ts, dur, cpu FROM priority_inversions WHERE run_id = ? ORDER BY start_ts", run); got != c.inversions {
			t.Errorf("inherit %v: priority_inversions\n got %s\nwant %s", c.inherit, got, c.inversions)
		}
		if got := dbtest.Query(t, q, "SELECT o.name, base, effective, start_ts, end_ts, truncated FROM priority_intervals p JOIN objects o USING (run_id, object_id) WHERE run_id = ? ORDER BY o.name, start_ts", run); got != c.prio {
			t.Errorf("inherit %v: priority_intervals\n got %s\nwant %s", c.inherit, got, c.prio)
		}
	}
	if got := dbtest.Query(t, db.SQL(), "SELECT count(*) FROM priority_inversions"); got != "1\n" {
		t.Errorf("priority_inversions of both runs: %s, want 1", got)
	}
}

// TestFreeRTOSPriorityInheritance: the real FreeRTOS traces whose demo
// makes High wait for a mutex Low holds while Med is ready. The recount of
// their raw lines (internal/recount) finds High's waits (one per
// priority_inherit line), and no task of a priority between Low's and
// High's that started or resumed while High waited: FreeRTOS raises Low to
// High's priority, so Med cannot preempt it. traceduck finds the same
// waits and no inversion.
func TestFreeRTOSPriorityInheritance(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(externalDir, "kuopinghsu__FreeRTOS-BTF-Trace__tracedata__example*.btf"))
	if len(files) != 2 {
		t.Skipf("the two FreeRTOS example traces are not beside the repository: %v", files)
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			raw, err := recount.ReadBTF(path)
			if err != nil {
				t.Fatal(err)
			}
			if raw.Inherits != 3 || len(raw.Waits) != 1 || len(raw.MiddleRuns) != 0 {
				t.Fatalf("recount: %d priority_inherit lines, waits %v, middle tasks run %v; the demo has 3, High's, none", raw.Inherits, raw.Waits, raw.MiddleRuns)
			}
			var want string
			for k, s := range raw.Waits {
				if !strings.HasSuffix(k, "High") || s.N != raw.Inherits {
					t.Fatalf("recount: waits %v", raw.Waits)
				}
				want = strings.TrimSuffix(k, " "+k[strings.LastIndexByte(k, ' ')+1:])
			}
			db := dbtest.Open(t)
			dbtest.Ingest(t, db, path, ingest.Options{})
			q := db.SQL()
			if got := dbtest.Query(t, q, "SELECT count(*) FROM priority_inversions"); got != "0\n" {
				t.Errorf("priority_inversions: %s rows, want none", got)
			}
			// during every wait Low ran at High's priority, inherited
			got := dbtest.Query(t, q, `SELECT count(*), count(*) FILTER (WHERE p.effective = 4 AND p.base = 2)
				FROM resource_waits w JOIN resource_holds h ON h.run_id = w.run_id AND h.resource_id = w.resource_id
				  AND h.start_ts < w.start_ts AND h.end_ts > w.start_ts
				JOIN priority_intervals p ON p.run_id = w.run_id AND p.object_id = h.holder_id
				  AND p.start_ts <= w.start_ts AND p.end_ts > w.start_ts
				WHERE w.resource = ?`, want)
			if got != "3 | 3\n" {
				t.Errorf("waits on %s whose holder ran at the inherited priority 4 (base 2): %s, want 3 | 3", want, got)
			}
		})
	}
}
