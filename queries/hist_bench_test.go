package queries_test

import (
	"context"
	"testing"
)

// BenchmarkHist times the histograms of state durations over a generated
// BTF run of 10 million events on 4 cores (generated and ingested once,
// outside the timings; about a minute):
//
//	go test -run XXX -bench Hist -benchtime 3x ./queries/
//
// It reports the number of intervals histogrammed (intervals/op).
func BenchmarkHist(b *testing.B) {
	ctx := context.Background()
	db := bigRunDB(b)
	var intervals float64
	if err := db.SQL().QueryRowContext(ctx, "SELECT count(*) FROM state_intervals WHERE NOT truncated").Scan(&intervals); err != nil {
		b.Fatal(err)
	}
	all := `'SELECT o.name AS key, s.dur AS value FROM state_intervals s JOIN objects o USING (run_id, object_id) WHERE NOT s.truncated'`
	for _, q := range []struct{ name, sql string }{
		// What `traceduck hist --state running` runs.
		{"quantize_running", `SELECT * FROM hist_quantize('SELECT key, value FROM durations_in_state(''running'')')`},
		// Every complete interval of the run, per object.
		{"quantize_all", `SELECT * FROM hist_quantize(` + all + `)`},
		{"lquantize_all", `SELECT * FROM hist_lquantize(` + all + `, 0, 100000000, 50000)`},
		{"llquantize_all", `SELECT * FROM hist_llquantize(` + all + `, 10, 2, 9, 20)`},
		{"edges_all", `SELECT * FROM hist_edges(` + all + `, [0, 10000, 100000, 1000000, 10000000])`},
		{"quantize_bucket_scalar", `SELECT quantize_bucket(dur) AS b, count(*) FROM state_intervals WHERE NOT truncated GROUP BY b`},
		{"response_times", `SELECT * FROM hist_quantize('FROM durations_between_events(''activate'', ''terminate'', by_instance := true)')`},
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
			b.ReportMetric(intervals, "intervals/op")
		})
	}
}
