package queries_test

import (
	"os"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/queries"
)

// TestReference keeps docs/queries.md equal to what the .sql files say;
// regenerate it with -update.
func TestReference(t *testing.T) {
	got := queries.Reference()
	const path = "../docs/queries.md"
	if *dbtest.Update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("%s is stale: run go test ./queries -run TestReference -update and review the diff", path)
	}
	// Every view and macro is on the page, with its comment.
	for _, name := range []string{"event_counts", "task_instances", "cpu_load", "system_timeline", "sched_class"} {
		if !strings.Contains(got, "## "+name) && !strings.Contains(got, ", "+name) {
			t.Errorf("%s is not on the page", name)
		}
	}
}
