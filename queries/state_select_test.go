package queries_test

import (
	"strings"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/dbtest"
)

// TestStateStatsSelected: marks on the state tree of the hand-written
// trace (stateHandBTF) and the rtos-2core sample select rows of
// state_stats; a child's mark overrides its parent's, exclude wins a tie,
// and with no include everything not excluded stays.
func TestStateStatsSelected(t *testing.T) {
	db := dbtest.Open(t)
	dbtest.Ingest(t, db, stateHandBTF, ingest.Options{})
	dbtest.Ingest(t, db, "../samples/btf/rtos-2core.btf", ingest.Options{})
	q := db.SQL()
	rows := func(where string) string {
		return dbtest.Query(t, q, `SELECT run_id, object, level, state FROM state_stats WHERE `+where+` ORDER BY ALL`)
	}
	sel := func(incl, excl, filter string) string {
		return dbtest.Query(t, q, `SELECT run_id, object, level, state FROM state_stats_selected(`+incl+`, `+excl+`) WHERE `+filter+` ORDER BY ALL`)
	}
	for _, c := range []struct{ name, incl, excl, want string }{
		// the CPUs, but Core_0's idle (object and state: a pair beats a kind)
		{"kind, less a pair", `['kind=cpu']`, `['object=Core_0&state=idle']`, `kind = 'cpu' AND NOT (object = 'Core_0' AND state = 'idle')`},
		// every busy but Core_0's (a state against an object: a tie, exclude wins)
		{"tie: exclude wins", `['state=busy']`, `['object=Core_0']`, `state = 'busy' AND object <> 'Core_0'`},
		// an exact name beats a pattern
		{"exact over pattern", `['object=Core_1']`, `['object=Core_*']`, `object = 'Core_1'`},
		// the child's include overrides its parent's exclude
		{"child over parent", `['object=Task_1ms_1&state=running']`, `['kind=task']`, `object = 'Task_1ms_1' AND state = 'running'`},
		// no include: all but the excluded
		{"only excludes", `[]`, `['kind=cpu', 'kind=runnable']`, `kind NOT IN ('cpu', 'runnable')`},
		// level= narrows a state to one level
		{"level", `['state=idle&level=3']`, `[]`, `state = 'idle' AND level = 3`},
		{"all", `['all']`, `['kind=task']`, `kind <> 'task'`},
	} {
		got, want := sel(c.incl, c.excl, "true"), rows(c.want)
		if got != want || want == "" {
			t.Errorf("%s: %s %s:\n%s\nwant\n%s", c.name, c.incl, c.excl, got, want)
		}
	}
	// decided_by names the deciding mark.
	got := dbtest.Query(t, q, `SELECT DISTINCT decided_by FROM state_stats_selected(['kind=cpu'], ['object=Core_0&state=idle'], run := 1) ORDER BY 1`)
	if want := "+kind=cpu\n"; got != want {
		t.Errorf("decided_by: %q, want %q", got, want)
	}
	for _, c := range []struct{ marks, want string }{
		{`['stat=x']`, `mark "stat=x": expected all, kind=, object=, state= or level=, found "stat=x"`},
		{`['kind=cpu&kind=task']`, `mark "kind=cpu&kind=task": two kind= terms`},
		{`['all&kind=cpu']`, `mark "all&kind=cpu": all goes alone`},
		{`['level=x']`, `mark "level=x": level= takes a level number, found "x"`},
		{`['object=']`, `mark "object=": "object=" has no value`},
	} {
		if _, err := q.Exec(`SELECT * FROM state_stats_selected(` + c.marks + `, [])`); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.marks, err, c.want)
		}
	}
}
