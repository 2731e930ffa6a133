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

// BenchmarkStateViews times the state statistics, the aggregated traces
// and the interval helpers over the shared generated BTF run of 10 million
// events (bigRunDB):
//
//	go test -run XXX -bench StateViews -benchtime 3x ./queries/
//
// TRACEDUCK_BENCH_DB=FILE uses the database in FILE instead, generating
// it there when it does not exist, so that it survives the test binary.
func BenchmarkStateViews(b *testing.B) {
	ctx := context.Background()
	var db *schema.DB
	if path := os.Getenv("TRACEDUCK_BENCH_DB"); path != "" {
		db = stateBenchDB(b, path)
		defer db.Close()
	} else {
		db = bigRunDB(b)
	}
	for _, q := range []struct{ name, sql string }{
		// Every row, every column: all objects at every level.
		{"state_stats_all", `SELECT * FROM state_stats`},
		// What 'traceduck states --kind task' asks (level 0), and the
		// same with a WHERE on the view, which DuckDB pushes down for the
		// level.
		{"state_stats_tasks_level0", `SELECT * FROM state_stats_of(object_kind := 'task') WHERE level = 0`},
		{"state_stats_view_tasks_level0", `SELECT * FROM state_stats WHERE kind = 'task' AND level = 0`},
		// What 'traceduck states --kind cpu --level -1' asks.
		{"state_stats_cpu_top", `SELECT s.* FROM state_stats_of(object_kind := 'cpu') s LEFT JOIN state_level_depth d USING (run_id, kind)
			WHERE s.level = state_level_at(-1, d.depth)`},
		// What 'traceduck states --object Core_0 --level all' asks.
		{"state_stats_one_core", `SELECT * FROM state_stats_of(object_name := 'Core_0')`},
		// The busy/idle trace of the cores, every interval read.
		{"state_trace_cpu_busy_idle", `SELECT count(*), sum(dur), max(start_ts), sum(parts) FROM state_trace(-1, object_kind := 'cpu')`},
		{"state_at", `SELECT * FROM state_at(5000000000)`},
		{"intervals_overlapping_10ms", `SELECT object, state, sum(clip_dur) FROM intervals_overlapping(5000000000, 5010000000) GROUP BY ALL`},
		// What each core was running when each task was activated: every
		// activation (a point) against every core interval.
		{"interval_intersect_activations", `
			WITH act AS (SELECT run_id, ts AS start_ts, ts AS end_ts, object_id FROM events WHERE class = 'T' AND event = 'activate'),
			     core AS (SELECT * FROM state_trace(0, object_kind := 'cpu'))
			SELECT count(*), count(DISTINCT b.state) FROM interval_intersect('act', 'core')`},
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

// stateBenchDB opens the database at path, with the views installed,
// filling it first with bigRunDB's run when the file does not exist.
func stateBenchDB(b *testing.B, path string) *schema.DB {
	ctx := context.Background()
	_, statErr := os.Stat(path)
	db, err := schema.Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	if err := queries.Install(ctx, db.SQL()); err != nil {
		b.Fatal(err)
	}
	if statErr != nil {
		btf := filepath.Join(b.TempDir(), "big.btf")
		f, err := os.Create(btf)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := tracegen.WriteBTF(f, tracegen.Config{Events: 10_000_000, Cores: 4, Tasks: 12, Seed: 1}); err != nil {
			b.Fatal(err)
		}
		f.Close()
		if _, err := ingest.Path(ctx, db, btf, ingest.Options{}); err != nil {
			b.Fatal(err)
		}
	}
	return db
}
