package queries_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/tracegen"
	"github.com/traceduck/traceduck/queries"
	"github.com/traceduck/traceduck/schema"
)

// BenchmarkEcoViews times the event statistics tree and the selection by
// marks over a generated BTF run of 10 million events on 4 cores
// (generated and ingested once, outside the timings; about a minute):
//
//	go test -run XXX -bench EcoViews -benchtime 3x ./queries/
//
// The tree reads only eco_triples (hundreds of rows whatever the length
// of the run); the selection resolves the marks on eco_triples, then
// scans events once, joined by eco_id.
func BenchmarkEcoViews(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	path := filepath.Join(dir, "big.btf")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := tracegen.WriteBTF(f, tracegen.Config{Events: 10_000_000, Cores: 4, Tasks: 12, Seed: 1}); err != nil {
		b.Fatal(err)
	}
	f.Close()
	db, err := schema.Open(ctx, filepath.Join(dir, "big.duckdb"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if err := queries.Install(ctx, db.SQL()); err != nil {
		b.Fatal(err)
	}
	if _, err := ingest.Path(ctx, db, path, ingest.Options{}); err != nil {
		b.Fatal(err)
	}
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
