package dbtest

import (
	"database/sql"
	"fmt"
	"testing"
)

// SchedCounts are what CheckSched found in a database.
type SchedCounts struct {
	Instances, Waits int64 // rows of task_instances and sched_latency
	Stats            int64 // rows of sched_stats
	Fallback         int64 // objects whose rows the views take from the reference
	Stored           int64 // runs whose rows were written at ingest (sched_runs)
}

// CheckSched asserts that task_instances, sched_latency and sched_stats,
// whose rows are computed from what is written at ingest
// (schema/sched.go), hold exactly the rows of their SQL references
// (task_instances_reference, sched_latency_reference,
// sched_stats_reference), and returns the counts. Every database Open makes is checked at the end of
// its test.
func CheckSched(t testing.TB, db *sql.DB) SchedCounts {
	t.Helper()
	var c SchedCounts
	for _, v := range []struct {
		view string
		n    *int64
	}{{"task_instances", &c.Instances}, {"sched_latency", &c.Waits}, {"sched_stats", &c.Stats}} {
		diff := fmt.Sprintf(`SELECT '-' AS side, * FROM (FROM %[1]s_reference() EXCEPT ALL FROM %[1]s)
			UNION ALL SELECT '+', * FROM (FROM %[1]s EXCEPT ALL FROM %[1]s_reference())`, v.view)
		var n int64
		if err := db.QueryRow("SELECT count(*) FROM (" + diff + ")").Scan(&n); err != nil {
			t.Errorf("compare %s with its reference: %v", v.view, err)
			continue
		}
		if n > 0 {
			t.Errorf("%s differs from %s_reference() in %d rows (- reference, + view), the first:\n%s",
				v.view, v.view, n, Query(t, db, diff+" ORDER BY ALL LIMIT 20"))
		}
		if err := db.QueryRow("SELECT count(*) FROM " + v.view).Scan(v.n); err != nil {
			t.Errorf("%s: %v", v.view, err)
		}
	}
	if err := db.QueryRow("SELECT (SELECT count(*) FROM sched_fallback), (SELECT count(*) FROM sched_runs)").Scan(&c.Fallback, &c.Stored); err != nil {
		t.Errorf("sched_fallback: %v", err)
	}
	return c
}
