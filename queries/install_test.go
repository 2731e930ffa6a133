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

// TestInstallRecreatesDroppedViews: a view or macro of the library that a
// user dropped (DROP VIEW state_summary through query) is created again at
// the next open, although the library's checksum still matches.
func TestInstallRecreatesDroppedViews(t *testing.T) {
	ctx := context.Background()
	db, err := schema.Open(ctx, filepath.Join(t.TempDir(), "i.duckdb"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := queries.Install(ctx, db.SQL()); err != nil {
		t.Fatal(err)
	}
	objs := queries.Objects()
	if objs["state_summary"] != "view" || objs["traceduck_queries_sha256"] != "" || len(objs) < 20 {
		t.Fatalf("the library's objects: %v", objs)
	}
	var macro string
	for name, kind := range objs {
		if kind == "macro" {
			macro = name
			break
		}
	}
	for _, drop := range []string{"DROP VIEW state_summary", "DROP MACRO " + macro, "DROP MACRO TABLE " + macro} {
		if _, err := db.SQL().Exec(drop); err != nil {
			continue // a macro is dropped by one of the two forms
		}
		if err := queries.Install(ctx, db.SQL()); err != nil {
			t.Fatal(err)
		}
		var n int
		if err := db.SQL().QueryRow("SELECT count(*) FROM duckdb_views() WHERE view_name = 'state_summary'").Scan(&n); err != nil || n != 1 {
			t.Errorf("after %s: state_summary %d (%v)", drop, n, err)
		}
		if err := db.SQL().QueryRow("SELECT count(*) FROM duckdb_functions() WHERE function_name = ?", macro).Scan(&n); err != nil || n == 0 {
			t.Errorf("after %s: macro %s %d (%v)", drop, macro, n, err)
		}
	}
}
