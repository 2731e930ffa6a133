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
	"github.com/traceduck/traceduck/internal/sqltx"
	"io/fs"
	"regexp"
	"sort"
	"strings"
)

//go:embed *.sql
var files embed.FS

//go:embed dataset/*.sql
var datasetFiles embed.FS

// DatasetSource returns the text of one embedded .sql file as a Parquet
// dataset has it (queries/export writes the library into the dataset's
// views.sql): the file of that name in dataset/ when there is one, which
// defines the same macros without the tables where a database stores
// symbol ids (a dataset has none), else the file itself.
func DatasetSource(name string) (string, error) {
	if b, err := datasetFiles.ReadFile("dataset/" + name); err == nil {
		return string(b), nil
	}
	return Source(name)
}

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
// matches, and which holds every view, macro and table of the files, is
// left untouched. Opening a database then writes nothing, so
// that one on a full disk still opens, and a crash while installing
// leaves no mark, so the next open installs again.
func Install(ctx context.Context, db *sql.DB) error {
	sum := librarySum()
	var have string
	if err := db.QueryRowContext(ctx, "SELECT "+libraryMarker+"()").Scan(&have); err == nil && have == sum {
		// The files match; the objects must still be there (a user may
		// have dropped a view through query, DROP VIEW state_summary).
		if all, err := allInstalled(ctx, db); err != nil || all {
			return err
		}
	}
	// One transaction: one commit (a sync of the file) instead of one per
	// statement, which made a new database's first open take 1.4 s more on
	// a loaded machine; and a crash leaves nothing half installed.
	err := sqltx.Run(ctx, db, func(tx *sql.Tx) error {
		for _, name := range Files() {
			text, err := files.ReadFile(name)
			if err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, string(text)); err != nil {
				return fmt.Errorf("queries/%s: %w", name, err)
			}
		}
		_, err := tx.ExecContext(ctx, "CREATE OR REPLACE MACRO "+libraryMarker+"() AS '"+sum+"'")
		return err
	})
	if err != nil {
		return fmt.Errorf("install queries: %w", err)
	}
	return nil
}

// Installed tells whether the database holds this library, every view,
// macro and table of it, as Install would leave it (it writes nothing).
func Installed(ctx context.Context, db *sql.DB) (bool, error) {
	var have string
	if err := db.QueryRowContext(ctx, "SELECT "+libraryMarker+"()").Scan(&have); err != nil || have != librarySum() {
		return false, nil
	}
	return allInstalled(ctx, db)
}

// LibrarySum is the sha256 (hex) of the .sql files: what the views and
// macros of this traceduck are. Anything derived from them and stored
// (the report's summaries) records it, to tell when it is stale.
func LibrarySum() string { return librarySum() }

// librarySum is the sha256 of the .sql files.
func librarySum() string {
	h := sha256.New()
	for _, name := range Files() {
		text, _ := files.ReadFile(name)
		fmt.Fprintf(h, "%s %d\n%s", name, len(text), text)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// created matches what the .sql files create: views, macros and tables.
var created = regexp.MustCompile(`(?im)^\s*CREATE\s+(?:OR\s+REPLACE\s+)?(VIEW|MACRO|TABLE)\s+(?:IF\s+NOT\s+EXISTS\s+)?([a-z_][a-z_0-9]*)`)

// Objects lists what the .sql files create, by kind ("view", "macro",
// "table"): name -> kind.
func Objects() map[string]string {
	out := map[string]string{}
	for _, name := range Files() {
		text, _ := files.ReadFile(name)
		for _, m := range created.FindAllStringSubmatch(string(text), -1) {
			out[strings.ToLower(m[2])] = strings.ToLower(m[1])
		}
	}
	return out
}

// allInstalled tells whether every view, macro and table of the library
// is in the database.
func allInstalled(ctx context.Context, db *sql.DB) (bool, error) {
	rows, err := db.QueryContext(ctx, `SELECT view_name, 'view' FROM duckdb_views() WHERE NOT internal AND schema_name = 'main'
		UNION ALL SELECT DISTINCT function_name, 'macro' FROM duckdb_functions() WHERE function_type IN ('macro', 'table_macro') AND schema_name = 'main'
		UNION ALL SELECT table_name, 'table' FROM duckdb_tables() WHERE schema_name = 'main'`)
	if err != nil {
		return false, fmt.Errorf("list the views and macros: %w", err)
	}
	defer rows.Close()
	have := map[string]string{}
	for rows.Next() {
		var name, kind string
		if err := rows.Scan(&name, &kind); err != nil {
			return false, err
		}
		have[strings.ToLower(name)] = kind
	}
	if err := rows.Err(); err != nil {
		return false, err
	}
	for name, kind := range Objects() {
		if have[name] != kind {
			return false, nil
		}
	}
	return true, nil
}

// libraryMarker is the macro that tells which .sql files a database holds.
const libraryMarker = "traceduck_queries_sha256"
