package tlv

import (
	"path/filepath"
	"testing"

	"github.com/traceduck/traceduck/internal/dbtest"
)

// TestExample is README.md's example: a made-up log format supported by a
// rule file, a resource header and a resource file, and nothing else.
func TestExample(t *testing.T) {
	dir := filepath.Join("testdata", "example")
	db := dbtest.Open(t)
	run := ingestTLV(t, db, "tlv", filepath.Join(dir, "tiny.log"), filepath.Join(dir, "tiny.res"), dir, dir)
	if run.Events != 22 {
		t.Errorf("%d events, want 22", run.Events)
	}
	for _, c := range []struct{ q, want string }{
		// README: time each thread spent in each state (complete intervals).
		{`SELECT object, state, total_ns FROM state_summary
		  WHERE kind = 'Thread' AND state LIKE 'state=%' ORDER BY object, state`,
			"idle | state=ready | 80000\nidle | state=running | 775000\nmotor | state=blocked | 772000\nmotor | state=ready | 313000\nmotor | state=running | 595000\nsensor | state=running | 300000\n"},
		// README: who gave and took the semaphore, in whose context.
		{`SELECT e.ts, e.event, e.args->>'by', c.name, e.cpu FROM events e JOIN objects c USING (run_id)
		  WHERE c.object_id = e.context_id AND e.class = 'Semaphore' ORDER BY e.seq`,
			"180000 | sem_take | motor | motor | 0\n960000 | sem_give | uart | uart | 0\n"},
		// README: who held the processor, and the load: the idle thread
		// holds it idle (CPU key "Idle"), the interrupt nests over it.
		{`SELECT cpu, holder, busy, ns FROM cpu_utilization ORDER BY holder`,
			"cpu 0 | idle | false | 765000\ncpu 0 | motor | true | 595000\ncpu 0 | sensor | true | 300000\ncpu 0 | uart | true | 20000\n"},
		{`SELECT src_line, count, message FROM diagnostics`,
			"5 | 1 | no rule matches lines like \"motor: waiting for the encoder\" (skipped); first at line 5: \"motor: waiting for the encoder\"\n"},
	} {
		if got := dbtest.Query(t, db.SQL(), c.q); got != c.want {
			t.Errorf("%s:\n%s\nwant:\n%s", c.q, got, c.want)
		}
	}
	dbtest.Golden(t, filepath.Join(dir, "tiny.golden"), dbtest.Dump(t, db.SQL()))
}

// TestLineClass: a line's shape names runs of digits {n} and doubles the
// line's own braces, so a literal # or {n} in a line cannot read as the
// placeholder.
func TestLineClass(t *testing.T) {
	for in, want := range map[string]string{
		"#1#slp_tsk()":                "#{n}#slp_tsk()",
		"[#] ###slp_tsk()":            "[#] ###slp_tsk()",
		"task 12 took {n} ticks (3)":  "task {n} took {{n}} ticks ({n})",
		"[1926926] System logging 1.": "[{n}] System logging {n}.",
	} {
		if got := lineClass(in); got != want {
			t.Errorf("lineClass(%q) = %q, want %q", in, got, want)
		}
	}
}
