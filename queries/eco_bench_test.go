package queries_test

import (
	"context"
	"testing"
)

// BenchmarkEcoViews times the event statistics tree and the selection by
// marks over a generated BTF run of 10 million events on 4 cores
// (bigRunDB):
//
//	go test -run XXX -bench EcoViews -benchtime 3x ./queries/
//
// The tree reads only eco_triples (hundreds of rows whatever the length
// of the run); the selection resolves the marks on eco_triples, then
// scans events once, joined by eco_id.
func BenchmarkEcoViews(b *testing.B) {
	ctx := context.Background()
	db := bigRunDB(b)
	for _, q := range []struct{ name, sql string }{
		{"eco_tree_eco", `SELECT * FROM eco_tree('eco')`},
		{"eco_tree_oce_by_count", `SELECT * FROM eco_tree('oce', sort_by := 'count')`},
		{"eco_selection", `SELECT * FROM eco_selection(['class=T', 'event=R:start&context.kind=task'], ['context=Core_1', 'object=Task_1*'])`},
		// Every selected event, every column read (count alone would let
		// DuckDB skip the names and the ordering).
		{"selected_events_all", `SELECT count(*), sum(ts), max(length(context) + length(object)), max(seq)
			FROM selected_events(['class=T', 'event=R:start&context.kind=task'], ['context=Core_1', 'object=Task_1*'])`},
		// What `traceduck events --from 5s --limit 100` asks.
		{"selected_events_from_limit", `SELECT * FROM selected_events(['event=T:start'], ['context=Core_1'])
			WHERE ts >= 5000000000 ORDER BY run_id, seq LIMIT 100`},
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
