// Package conformance asks every trace format the same eight questions
// (docs/semantics.md) and compares traceduck's answers with truth
// traceduck did not compute: the trace generator's ground truth
// (internal/tracegen, kept by the simulators as they act) and the
// recounts of real traces' raw lines (internal/recount).
package conformance_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	_ "github.com/traceduck/traceduck/ingest/all"
	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/internal/recount"
	"github.com/traceduck/traceduck/internal/tracegen"
)

const external = "../../../shared/testdata-external"

// The questions: the same SQL for every format over the views, with the
// source's key expressions ({cpu}, {holder}, {object}) over the CPU
// object c, the holder object h (NULL when nothing runs) and the task,
// ISR or thread object o (Q6, Q7: the holder or waiter of the resource
// r; Q8: the client cl and server sv of a message). Complete (not
// truncated) intervals, instances, holds, waits and round trips only.
const (
	cpuFrom = ` FROM cpu_intervals i JOIN objects c ON c.run_id = i.run_id AND c.object_id = i.cpu_id
		LEFT JOIN objects h ON h.run_id = i.run_id AND h.object_id = i.holder_id WHERE NOT i.truncated`
	objJoin = ` JOIN objects o ON o.run_id = v.run_id AND o.object_id = v.object_id WHERE NOT v.truncated`
	resJoin = ` v JOIN objects r ON r.run_id = v.run_id AND r.object_id = v.resource_id JOIN objects o ON o.run_id = v.run_id AND o.object_id = `
)

// nq is the number of questions.
const nq = 8

var questions = [nq]struct {
	name, sql string
	view      string // what must hold no row when the source cannot tell
}{
	{"Q1 CPU busy ns per CPU", `SELECT {cpu}, sum(i.dur)` + cpuFrom + ` AND i.busy GROUP BY ALL`, "cpu_intervals"},
	{"Q2 ns per CPU and holder", `SELECT {cpu}, {holder}, i.busy, sum(i.dur)` + cpuFrom + ` GROUP BY ALL`, "cpu_intervals"},
	{"Q3 running ns per task", `SELECT {object}, sum(v.dur) FROM sched_intervals v` + objJoin + ` AND v.class = 'running' GROUP BY ALL`, "sched_intervals WHERE class = 'running'"},
	{"Q4 complete instances per task (count, response)", `SELECT {object}, count(*), sum(v.response) FROM task_instances v` + objJoin + ` GROUP BY ALL`, "task_instances"},
	{"Q5 waits for a CPU per task (count, latency)", `SELECT {object}, count(*), sum(v.latency) FROM sched_latency v` + objJoin + ` GROUP BY ALL`, "sched_latency"},
	{"Q6 holds of a resource per holder (count, ns)", `SELECT {resource} || ' ' || {object}, count(*), sum(v.dur) FROM resource_holds` + resJoin + `v.holder_id WHERE NOT v.truncated GROUP BY ALL`, "resource_holds"},
	{"Q7 waits for a resource per waiter (count, ns)", `SELECT {resource} || ' ' || {object}, count(*), sum(v.dur) FROM resource_waits` + resJoin + `v.waiter_id WHERE NOT v.truncated GROUP BY ALL`, "resource_waits"},
	{"Q8 round trips per client and server (count, total)", `SELECT {client} || ' -> ' || {server}, count(*), sum(v.total_ns) FROM message_round_trips v
		JOIN objects cl ON cl.run_id = v.run_id AND cl.object_id = v.client_id JOIN objects sv ON sv.run_id = v.run_id AND sv.object_id = v.server_id
		WHERE NOT v.truncated AND NOT v.one_way GROUP BY ALL`, "message_round_trips WHERE NOT one_way"},
}

// keys are a source's key expressions; empty ones are the names
// traceduck gives. party keys the client and server of a message, over
// the object X.
type keys struct{ cpu, holder, object, party string }

func (k keys) expand(q string) string {
	party := cmpOr(k.party, "X.name")
	return strings.NewReplacer("{cpu}", cmpOr(k.cpu, "c.name"), "{holder}", cmpOr(k.holder, "i.holder"), "{object}", cmpOr(k.object, "o.name"),
		"{resource}", "r.name",
		"{client}", strings.ReplaceAll(party, "X.", "cl."), "{server}", strings.ReplaceAll(party, "X.", "sv.")).Replace(q)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// source is a row of the matrix: a trace, how to ingest it, the truth,
// and per question how the truth compares (how) or why the format
// cannot tell (cannot).
type source struct {
	name string
	keys keys
	// make writes or finds the trace in dir (skipping when absent) and
	// returns its path, the ingest options and the truth's answers.
	make   func(t *testing.T, dir string) (string, ingest.Options, recount.Answers)
	how    [nq]string // "exact" or the documented difference
	cannot [nq]string // non-empty: the format cannot tell (or traceduck does not yet), and why
}

const exact = "exact"

// TestConformance ingests every source into its own database, asks the
// eight questions and compares: exactly with the truth where the format
// tells; where it cannot tell, traceduck must give no row (no invented
// number). Each subtest logs its row of the matrix.
func TestConformance(t *testing.T) {
	for _, src := range sources() {
		t.Run(src.name, func(t *testing.T) {
			dir := t.TempDir()
			path, opt, want := src.make(t, dir)
			db := dbtest.Open(t)
			dbtest.Ingest(t, db, path, opt)
			q := db.SQL()
			wants := [nq]map[string]bool{
				rowsNS(want.CPUBusy), rowsHeld(want.CPUHeld), rowsNS(want.Running), rowsSum(want.Instances), rowsSum(want.Latency),
				rowsSum(want.Holds), rowsSum(want.Waits), rowsSum(want.RoundTrips),
			}
			var row []string
			for i, qu := range questions {
				if why := src.cannot[i]; why != "" {
					if n := dbtest.Query(t, q, "SELECT count(*) FROM "+qu.view); n != "0\n" {
						t.Errorf("%s: the format cannot tell (%s), yet traceduck has %s rows in %s", qu.name, why, strings.TrimSpace(n), qu.view)
					}
					row = append(row, "cannot tell ("+why+")")
					continue
				}
				if wants[i] == nil {
					t.Fatalf("%s: the source neither answers nor says why the format cannot tell", qu.name)
				}
				got := lines(dbtest.Query(t, q, src.keys.expand(qu.sql)), i < 3)
				if g, w := sorted(got), sorted(wants[i]); g != w {
					t.Errorf("%s (%s) differs from the truth (- truth, + traceduck):\n%s", qu.name, src.how[i], dbtest.Diff(w, g))
				}
				row = append(row, fmt.Sprintf("%s (%d rows)", src.how[i], len(got)))
			}
			// cpu_utilization is cpu_intervals summed per CPU and holder.
			if a, b := dbtest.Query(t, q, `SELECT cpu, holder, busy, ns FROM cpu_utilization WHERE ns > 0 ORDER BY ALL`),
				dbtest.Query(t, q, `SELECT cpu, holder, busy, sum(dur)::BIGINT FROM cpu_intervals WHERE NOT truncated GROUP BY ALL HAVING sum(dur) > 0 ORDER BY ALL`); a != b {
				t.Errorf("cpu_utilization is not cpu_intervals summed:\n%s", dbtest.Diff(b, a))
			}
			t.Logf("| %s | %s |", src.name, strings.Join(row, " | "))
		})
	}
}

// lines turns a query's text into a set of rows; with ns, rows whose
// last value is 0 (ns) are left out, as on the truth's side: a holder of
// 0 ns may or may not have a zero-length interval.
func lines(text string, ns bool) map[string]bool {
	out := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if l != "" && !(ns && strings.HasSuffix(l, " | 0")) {
			out[l] = true
		}
	}
	return out
}

func sorted(m map[string]bool) string {
	var l []string
	for k := range m {
		l = append(l, k)
	}
	sort.Strings(l)
	return strings.Join(l, "\n") + "\n"
}

func rowsNS(m map[string]int64) map[string]bool {
	if m == nil {
		return nil
	}
	out := map[string]bool{}
	for k, ns := range m {
		if ns != 0 {
			out[fmt.Sprintf("%s | %d", k, ns)] = true
		}
	}
	return out
}

func rowsHeld(m map[recount.Held]int64) map[string]bool {
	if m == nil {
		return nil
	}
	out := map[string]bool{}
	for k, ns := range m {
		if ns != 0 {
			out[fmt.Sprintf("%s | %s | %t | %d", k.CPU, k.Holder, k.Busy, ns)] = true
		}
	}
	return out
}

func rowsSum(m map[string]recount.Sum) map[string]bool {
	if m == nil {
		return nil
	}
	out := map[string]bool{}
	for k, s := range m {
		if s.N != 0 {
			out[fmt.Sprintf("%s | %d | %d", k, s.N, s.NS)] = true
		}
	}
	return out
}

// write writes a trace made by fn to dir/name.
func write(t *testing.T, dir, name string, fn func(*bytes.Buffer) error) string {
	t.Helper()
	var b bytes.Buffer
	if err := fn(&b); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// externalFile is a real trace beside the repository; the test skips
// without it.
func externalFile(t *testing.T, rel string) string {
	t.Helper()
	p := filepath.Join(external, rel)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("no %s beside the repository", p)
	}
	return p
}

func externalGlob(pattern string) []string {
	files, _ := filepath.Glob(filepath.Join(external, pattern))
	return files
}

// noFile is a row for real traces when none is there: it skips.
func noFile(name string) source {
	return source{name: name, make: func(t *testing.T, _ string) (string, ingest.Options, recount.Answers) {
		t.Skipf("no traces beside the repository")
		return "", ingest.Options{}, recount.Answers{}
	}}
}

// qnxKeys key QNX's CPUs by number, threads by "pid/tid", interrupts by
// "irq V" (recount.QNX, tracegen.QNXTruth).
var qnxKeys = keys{
	cpu:   "c.native_id::VARCHAR",
	party: "X.pid || '/' || X.native_id",
	holder: `CASE WHEN h.object_id IS NULL THEN 'none' WHEN h.kind = 'thread' THEN h.pid || '/' || h.native_id
		WHEN h.kind = 'interrupt' THEN 'irq ' || h.native_id ELSE h.kind END`,
	object: "o.pid || '/' || o.native_id",
}

func fail(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func sum(m map[string]tracegen.Sum) map[string]recount.Sum {
	out := map[string]recount.Sum{}
	for k, s := range m {
		out[k] = recount.Sum{N: s.N, NS: s.NS}
	}
	return out
}

func heldFrom(m map[string]map[string]int64, busy func(holder string) bool) map[recount.Held]int64 {
	out := map[recount.Held]int64{}
	for c, hs := range m {
		for h, ns := range hs {
			out[recount.Held{CPU: c, Holder: h, Busy: busy(h)}] += ns
		}
	}
	return out
}
