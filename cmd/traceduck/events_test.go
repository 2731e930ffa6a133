package main

import (
	"encoding/csv"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestEventsSeedExample: the example on the BTF chapter's listing:
// of its two T events started or terminated on a core, the start on Core_0
// is selected, the terminate on Core_1 excluded.
func TestEventsSeedExample(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "t.duckdb")
	mustRun(t, dir, nil, "ingest", "--db", db, seedSample)
	got := mustRun(t, dir, nil, "events", "--db", db, "--include", "event=T:start", "--exclude", "context=Core_1")
	want := `run_id  seq   ts  cpu  class  event  context  object   value  args  eco_id  src_line
------  ---  ---  ---  -----  -----  -------  -------  -----  ----  ------  --------
     1    3  100    0  T      start  Core_0   T_1MS_0  NULL   NULL       3         7
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// A child's mark overrides its parent's: T without its starts, plus
	// the runnable events (an include of their class).
	got = mustRun(t, dir, nil, "events", "--db", db, "--include", "class=T", "--exclude", "event=start", "--include", "event=R:start", "-o", "csv")
	want = "run_id,seq,ts,cpu,class,event,context,object,value,args,eco_id,src_line\r\n" +
		"1,2,0,,T,activate,S_1MS,T_1MS_0,,,2,6\r\n" +
		"1,4,100,0,R,start,T_1MS_1,Runnable_0,,,4,8\r\n" +
		"1,6,25100,1,T,terminate,Core_1,T_1MS_0,,,6,10\r\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestEventsRangeAndLimit: on the 2-core BTF and the QNX samples, the
// selection with a time range counts what a plain query over events and
// objects counts, --limit keeps the first events in order, --run one run.
func TestEventsRangeAndLimit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "t.duckdb")
	mustRun(t, dir, nil, "ingest", "--db", db, samplePath(t, "btf/rtos-2core.btf"), samplePath(t, "qnx/neutrino-2cpu.txt"))
	count := func(args ...string) int {
		out := mustRun(t, dir, nil, append([]string{"events", "--db", db, "-o", "csv"}, args...)...)
		recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		return len(recs) - 1
	}
	for _, tc := range []struct {
		args []string
		sql  string
	}{
		{[]string{"--include", "object=Task_2ms_*", "--from", "10ms", "--to", "20000000"},
			`SELECT count(*) FROM events e JOIN objects o ON o.run_id = e.run_id AND o.object_id = e.object_id
			 WHERE o.name LIKE 'Task\_2ms\_%' ESCAPE '\' AND e.ts >= 10000000 AND e.ts < 20000000`},
		{[]string{"--include", "event=THRUNNING", "--exclude", "context.kind=interrupt"},
			`SELECT count(*) FROM events e LEFT JOIN objects c ON c.run_id = e.run_id AND c.object_id = e.context_id
			 WHERE e.event = 'THRUNNING' AND c.kind IS DISTINCT FROM 'interrupt'`},
		{[]string{"--run", "2", "--exclude", "class=INT", "--exclude", "class=THREAD"},
			`SELECT count(*) FROM events WHERE run_id = 2 AND class NOT IN ('INT', 'THREAD')`},
		{[]string{"--from", "1s"}, `SELECT count(*) FROM events WHERE ts >= 1000000000`},
		// A number with a fraction and a unit, read exactly.
		{[]string{"--from", "1.5ms", "--to", "0.0025s"}, `SELECT count(*) FROM events WHERE ts >= 1500000 AND ts < 2500000`},
	} {
		want := scalar(t, dir, db, tc.sql)
		if got := count(tc.args...); want == "0" || want != strconv.Itoa(got) {
			t.Errorf("events %q: %d events, want %s", tc.args, got, want)
		}
	}
	got := mustRun(t, dir, nil, "events", "--db", db, "--run", "2", "--include", "class=INT", "--limit", "3", "-o", "csv")
	want := mustRun(t, dir, nil, "query", "--db", db, "-o", "csv", `SELECT e.run_id, e.seq, e.ts, e.cpu, e.class, e.event,
		coalesce(c.name, '(none)') AS context, coalesce(o.name, '(none)') AS object, e.value, e.args, e.eco_id, e.src_line
		FROM events e LEFT JOIN objects c ON c.run_id = e.run_id AND c.object_id = e.context_id
		LEFT JOIN objects o ON o.run_id = e.run_id AND o.object_id = e.object_id
		WHERE e.run_id = 2 AND e.class = 'INT' ORDER BY e.seq LIMIT 3`)
	if got != want || strings.Count(got, "\r\n") != 4 {
		t.Errorf("--limit 3:\n%s\nwant\n%s", got, want)
	}
}

func TestEventsErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "t.duckdb")
	mustRun(t, dir, nil, "ingest", "--db", db, seedSample)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--include", "bogus"}, 2, `mark "bogus": expected all, class=, event=, context.kind=, context=, object.kind=, object= or eco=, found "bogus"`},
		{[]string{"--exclude", "event=T:start&class=T"}, 2, `mark "event=T:start&class=T": two terms on one dimension`},
		{[]string{"--include", "eco=x"}, 2, `mark "eco=x": eco= takes an eco_id, found "x"`},
		{[]string{"--include", "it's"}, 2, `mark "it's": expected all`},
		{[]string{"--from", "10xs"}, 2, `--from 10xs: unknown unit "xs" (s, ms, us, ns)`},
		{[]string{"--to", "later"}, 2, `--to later: expected a whole number of ns, or a number with a unit (s, ms, us, ns), found "later"`},
		{[]string{"--to", "5ps"}, 2, `--to 5ps: unit "ps" is finer than the ns of the events table`},
		{[]string{"--from", "99999999999s"}, 2, `--from 99999999999s: out of range: expected at most 9223372036854775807 ns (about 292 years) either way, found 99999999999000000000 ns`},
		{[]string{"--from", "1.2345678ms"}, 2, `--from 1.2345678ms: expected a whole number of ns, found 1234567.8 ns`},
		{[]string{"--from", "1.5"}, 2, `--from 1.5: expected a whole number of ns, found 1.5 ns`},
		{[]string{"--from", "-0.5ns"}, 2, `--from -0.5ns: expected a whole number of ns, found -0.5 ns`},
		{[]string{"--from", ".ms"}, 2, `--from .ms: expected a whole number of ns, or a number with a unit (s, ms, us, ns), found ".ms"`},
		{[]string{"--limit", "-1"}, 2, `--limit -1: want 0 (all) or more`},
		{[]string{"--run", "3"}, 2, `--run 3: no such run (the runs: 1 `},
		{[]string{"x"}, 2, `unknown command "x"`},
	} {
		r := td(t, dir, append([]string{"events", "--db", db}, tc.args...)...)
		expectExit(t, r, tc.code, tc.want)
	}
}
