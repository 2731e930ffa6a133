package queries_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/tracegen"
	"github.com/traceduck/traceduck/queries"
	"github.com/traceduck/traceduck/schema"
)

// bigRun is the database the benchmarks of the views share: one generated
// BTF run of 10 million events on 4 cores and 12 tasks, generated and
// ingested once per test binary (about a minute), outside every timing.
// Only benchmarks ask for it; TestMain removes it.
var bigRun struct {
	once sync.Once
	dir  string
	db   *schema.DB
	err  error
}

func bigRunDB(b *testing.B) *schema.DB {
	b.Helper()
	bigRun.once.Do(func() {
		ctx := context.Background()
		dir, err := os.MkdirTemp("", "traceduck-bench-")
		if err != nil {
			bigRun.err = err
			return
		}
		bigRun.dir = dir
		path := filepath.Join(dir, "big.btf")
		f, err := os.Create(path)
		if err != nil {
			bigRun.err = err
			return
		}
		_, err = tracegen.WriteBTF(f, tracegen.Config{Events: 10_000_000, Cores: 4, Tasks: 12, Seed: 1})
		f.Close()
		if err != nil {
			bigRun.err = err
			return
		}
		db, err := schema.Open(ctx, filepath.Join(dir, "big.duckdb"))
		if err != nil {
			bigRun.err = err
			return
		}
		bigRun.db = db
		if bigRun.err = queries.Install(ctx, db.SQL()); bigRun.err != nil {
			return
		}
		_, bigRun.err = ingest.Path(ctx, db, path, ingest.Options{})
		os.Remove(path)
	})
	if bigRun.err != nil {
		b.Fatal(bigRun.err)
	}
	return bigRun.db
}

func TestMain(m *testing.M) {
	code := m.Run()
	if bigRun.db != nil {
		bigRun.db.Close()
	}
	if bigRun.dir != "" {
		os.RemoveAll(bigRun.dir)
	}
	os.Exit(code)
}
