package queries_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/queries"
	"github.com/traceduck/traceduck/schema"
)

// TestInstallWritesOnlyWhenNeeded opens a database read-only after the
// views were installed: installing again succeeds there because it
// writes nothing. With the marker of another library version, it must
// write, and read-only it fails.
func TestInstallWritesOnlyWhenNeeded(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "i.duckdb")
	db, err := schema.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := queries.Install(ctx, db.SQL()); err != nil {
		t.Fatal(err)
	}
	db.Close()

	install := func() error {
		ro, err := sql.Open("duckdb", path+"?access_mode=read_only")
		if err != nil {
			t.Fatal(err)
		}
		defer ro.Close()
		return queries.Install(ctx, ro)
	}
	if err := install(); err != nil {
		t.Fatalf("installing the same library again wrote to the database: %v", err)
	}

	rw, err := sql.Open("duckdb", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rw.Exec("CREATE OR REPLACE MACRO traceduck_queries_sha256() AS 'an older library'"); err != nil {
		t.Fatal(err)
	}
	rw.Close()
	if err := install(); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Fatalf("installing over another library version: %v, want a refusal to write a read-only database", err)
	}
}
