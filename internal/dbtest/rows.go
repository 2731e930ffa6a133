package dbtest

import (
	"database/sql"
	"sort"
	"strings"
	"testing"
)

// SameRows compares the rows of q, as Query writes them, with want, in
// any order, and reports the difference under what.
func SameRows(t testing.TB, db *sql.DB, what string, want []string, q string, args ...any) {
	t.Helper()
	got := strings.Split(strings.TrimSuffix(Query(t, db, q, args...), "\n"), "\n")
	if len(got) == 1 && got[0] == "" {
		got = nil
	}
	w := append([]string(nil), want...)
	sort.Strings(got)
	sort.Strings(w)
	if g, ws := strings.Join(got, "\n"), strings.Join(w, "\n"); g != ws {
		t.Errorf("%s:\n%s", what, Diff(ws+"\n", g+"\n"))
	}
}

// SameCPURows compares what cpu_utilization adds up (held: "cpu | holder
// | ns"; busy: "cpu | busy ns") and the complete running intervals of each
// thread of run (runs: "thread | ns") with a simulator's rows (the DTrace
// and ftrace generators': tracegen.CPUSums.Rows).
func SameCPURows(t testing.TB, db *sql.DB, run int32, held, busy, runs []string) {
	t.Helper()
	SameRows(t, db, "held per CPU and holder", held, `SELECT cpu, holder, ns FROM cpu_utilization WHERE run_id = $1`, run)
	SameRows(t, db, "busy per CPU", busy, `SELECT cpu, coalesce(sum(ns) FILTER (WHERE busy), 0) FROM cpu_utilization WHERE run_id = $1 GROUP BY cpu`, run)
	SameRows(t, db, "running per thread", runs, `SELECT o.name, sum(s.dur) FROM state_intervals s JOIN objects o USING (run_id, object_id)
		WHERE s.run_id = $1 AND o.kind = 'thread' AND s.instance = 0 AND s.state = 'running' AND NOT s.truncated GROUP BY o.name`, run)
}
