package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/traceduck/traceduck/queries"
	"github.com/traceduck/traceduck/schema"
)

// memoryDB is the --db value of a database that lives in memory only.
const memoryDB = ":memory:"

// openDB opens the database at path, creating the file and its tables when
// they are missing, and installs the views and macros of queries/ (every
// database traceduck writes gets them, so that any DuckDB client sees
// them).
func openDB(ctx context.Context, path string) (*schema.DB, error) {
	dsn := path
	if path == memoryDB {
		dsn = "" // go-duckdb's name of an in-memory database
	}
	db, err := schema.Open(ctx, dsn)
	if err != nil {
		return nil, err
	}
	if err := queries.Install(ctx, db.SQL()); err != nil {
		db.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return db, nil
}

// openExistingDB is openDB for a database that must already exist: a
// query on a path that names no file is a mistake, not a reason to create
// an empty database.
func openExistingDB(ctx context.Context, path string) (*schema.DB, error) {
	if path != memoryDB {
		st, err := os.Stat(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: no such database (create one with 'traceduck ingest --db %s TRACE' or 'traceduck demo --db %s')", path, path, path)
		}
		if err != nil {
			return nil, err
		}
		if st.IsDir() {
			return nil, fmt.Errorf("%s: is a directory, not a database file", path)
		}
	}
	return openDB(ctx, path)
}
