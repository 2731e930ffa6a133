// Package queries owns the SQL of traceduck: the views and macros in the
// .sql files of this directory are embedded and installed into every
// database traceduck writes, so that any DuckDB client sees them.
package queries

import (
	"context"
	"database/sql"
	"embed"
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

// Install creates or replaces every view and macro.
func Install(ctx context.Context, db *sql.DB) error {
	for _, name := range Files() {
		text, err := files.ReadFile(name)
		if err != nil {
			return err
		}
		if _, err := db.ExecContext(ctx, string(text)); err != nil {
			return fmt.Errorf("install queries/%s: %w", name, err)
		}
	}
	return nil
}
