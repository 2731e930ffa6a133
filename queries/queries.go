// Package queries owns the SQL of traceduck: the views and macros in the
// .sql files of this directory are embedded and installed into every
// database traceduck writes, so that any DuckDB client sees them.
package queries

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"sort"
)

//go:embed *.sql
var files embed.FS

// Files returns the names of the embedded .sql files in install order.
func Files() []string {
	names, _ := fs.Glob(files, "*.sql")
	sort.Strings(names)
	return names
}

// Source returns the text of one embedded .sql file.
func Source(name string) (string, error) {
	b, err := files.ReadFile(name)
	return string(b), err
}

// Install creates or replaces every view and macro, unless the database
// holds them already: the macro traceduck_queries_sha256(), created last,
// returns the sha256 of the .sql files installed, and a database where it
// matches is left untouched. Opening a database then writes nothing, so
// that one on a full disk still opens, and a crash while installing
// leaves no mark, so the next open installs again.
func Install(ctx context.Context, db *sql.DB) error {
	h := sha256.New()
	for _, name := range Files() {
		text, _ := files.ReadFile(name)
		fmt.Fprintf(h, "%s %d\n%s", name, len(text), text)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	var have string
	if err := db.QueryRowContext(ctx, "SELECT "+libraryMarker+"()").Scan(&have); err == nil && have == sum {
		return nil
	}
	for _, name := range Files() {
		text, err := files.ReadFile(name)
		if err != nil {
			return err
		}
		if _, err := db.ExecContext(ctx, string(text)); err != nil {
			return fmt.Errorf("install queries/%s: %w", name, err)
		}
	}
	if _, err := db.ExecContext(ctx, "CREATE OR REPLACE MACRO "+libraryMarker+"() AS '"+sum+"'"); err != nil {
		return fmt.Errorf("install queries: %w", err)
	}
	return nil
}

// libraryMarker is the macro that tells which .sql files a database holds.
const libraryMarker = "traceduck_queries_sha256"
