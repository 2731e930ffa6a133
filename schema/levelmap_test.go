package schema_test

import (
	"context"
	"testing"

	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/schema"
)

// TestLevelPathsByHand: the rows of state_level_map the writer makes of
// levels declared in every way a format can: a chain over three levels, a
// state that keeps its name at a level (no row there), a state named only
// at a level above 0 (taken as a level-0 state too), a top marked by an
// empty parent, the same state declared twice at one level (the first
// parent kept, as there is one state_levels row), a kind whose only rows
// are tops (no levels: no rows), names that are not UTF-8 (repaired), and
// the CPU model's levels; equal to state_level_map_reference.
func TestLevelPathsByHand(t *testing.T) {
	db := dbtest.Open(t)
	_, err := db.Ingest(context.Background(), schema.RunInfo{Name: t.Name(), Format: "btf"}, schema.IngestOptions{BatchRows: 4}, func(w *schema.RunWriter) error {
		lv := w.StateLevel
		lv("task", "running", 0, "active")
		lv("task", "ready", 0, "active")
		lv("task", "active", 1, "alive")
		lv("task", "waiting", 1, "alive") // named at level 1 only
		lv("task", "alive", 2, "")        // a top
		lv("task", "dead", 0, "")
		lv("task", "running", 0, "other") // declared again: the first parent stays
		lv("task", "bad\xffname", 0, "odd\xfe")
		lv("task", "odd\xfe", 1, "alive")
		lv("sem", "free", 0, "") // tops only: no levels
		lv("sem", "used", 0, "")
		c := w.CPUs()
		a := w.Object("task", "A")
		idle := w.Object("task", "idle_task")
		c.Declare(idle, schema.HolderSpec{Role: schema.RoleIdle})
		must(t, c.Run(0, a, 10, 1), c.Run(0, idle, 20, 2), c.Idle(0, 30, 3))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := dbtest.CheckLevelMap(t, db.SQL()); n == 0 {
		t.Fatal("state_level_map has no rows")
	}
	got := dbtest.Query(t, db.SQL(), `SELECT atomic, list(state ORDER BY level) FROM state_level_map WHERE kind = 'task' GROUP BY ALL ORDER BY ALL`)
	want := "active | [active active alive]\n" + // named at level 1: itself at 0 and 1
		"alive | [alive alive alive]\n" +
		"bad\uFFFDname | [bad\uFFFDname odd\uFFFD alive]\n" +
		"dead | [dead dead dead]\n" +
		"odd\uFFFD | [odd\uFFFD odd\uFFFD alive]\n" +
		"ready | [ready active alive]\n" +
		"running | [running active alive]\n" +
		"waiting | [waiting waiting alive]\n"
	if got != want {
		t.Errorf("state_level_map of task:\n%s\nwant:\n%s", got, want)
	}
	if n := dbtest.Query(t, db.SQL(), `SELECT count(*) FROM state_level_paths WHERE kind = 'sem'`); n != "0\n" {
		t.Errorf("a kind without levels has %s rows", n)
	}
}
