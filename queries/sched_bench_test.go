package queries_test

import (
	"context"
	"testing"
)

// BenchmarkSchedViews times the scheduling views over a generated BTF run
// of 10 million events on 4 cores (generated and ingested once, outside
// the timings; about a minute):
//
//	go test -run XXX -bench SchedViews -benchtime 1x ./queries/
func BenchmarkSchedViews(b *testing.B) {
	ctx := context.Background()
	db := bigRunDB(b)
	for _, q := range []struct{ name, sql string }{
		{"task_instances", `SELECT object, count(*), quantile_cont(response, 0.99) FROM task_instances WHERE NOT truncated GROUP BY object`},
		{"sched_latency", `SELECT object, after, max(latency) FROM sched_latency GROUP BY ALL`},
		{"cpu_load_10ms", `SELECT cpu, max(load), avg(load) FROM cpu_load(10000000) GROUP BY cpu`},
		{"cpu_utilization", `SELECT * FROM cpu_utilization`},
	} {
		b.Run(q.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				rows, err := db.SQL().QueryContext(ctx, q.sql)
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				for rows.Next() {
					n++
				}
				if err := rows.Err(); err != nil || n == 0 {
					b.Fatalf("%d rows, %v", n, err)
				}
				rows.Close()
			}
		})
	}
}
