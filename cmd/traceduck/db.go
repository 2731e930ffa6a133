package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"regexp"
	"strings"

	"github.com/traceduck/traceduck/queries"
	"github.com/traceduck/traceduck/queries/report"
	"github.com/traceduck/traceduck/schema"
)

// memoryDB is the --db value of a database that lives in memory only.
const memoryDB = ":memory:"

// openDB opens the database at path, creating the file and its tables when
// they are missing, and installs the views and macros of queries/ (every
// database traceduck writes gets them, so that any DuckDB client sees
// them).
//
// A path that exists must be a regular file: DuckDB would open a named
// pipe and wait for a writer forever, and read a device as if it were a
// database.
func openDB(ctx context.Context, path string) (*schema.DB, error) {
	dsn := path
	if path == memoryDB {
		dsn = "" // go-duckdb's name of an in-memory database
	} else if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: is %s, not a database file", path, fileKind(st.Mode()))
	}
	db, err := schema.Open(ctx, dsn)
	if err != nil {
		return nil, openError(path, err)
	}
	if err := queries.Install(ctx, db.SQL()); err != nil {
		db.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	// Every run ingested gets the report's summary (docs/report.md, "Scale").
	db.SetSummarize(report.Summarize)
	return db, nil
}

// openExistingDB is openDB for a database that must already exist: a
// query on a path that names no file is a mistake, not a reason to create
// an empty database.
func openExistingDB(ctx context.Context, path string) (*schema.DB, error) {
	if path != memoryDB {
		_, err := os.Stat(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: no such database (create one with 'traceduck ingest --db %s TRACE' or 'traceduck demo --db %s')", path, path, path)
		}
		if err != nil {
			return nil, err
		}
	}
	db, err := openDB(ctx, path)
	if err != nil && path != memoryDB && !writable(path) {
		return openReadOnly(ctx, path)
	}
	return db, err
}

// writable tells whether this process may write the file at path.
func writable(path string) bool {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return false
	}
	f.Close()
	return true
}

// openReadOnly opens a database this process may not write (another
// user's, mode 444, a read-only file system): its tables and views are
// read as they are. When its views are not those of this traceduck (or
// some are missing), a warning on standard error says so.
func openReadOnly(ctx context.Context, path string) (*schema.DB, error) {
	db, err := schema.OpenReadOnly(ctx, path)
	if err != nil {
		return nil, openError(path, err)
	}
	ok, err := queries.Installed(ctx, db.SQL())
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if !ok {
		warnf(ctx, "%s: opened read-only (this process may not write it): its views are not those of this traceduck and may be stale or missing", path)
	}
	return db, nil
}

// stderrKey holds, in a command's context, where warnings go.
type stderrKey struct{}

// warnf prints a warning line "traceduck: warning: ..." on the command's
// standard error.
func warnf(ctx context.Context, format string, args ...any) {
	if w, ok := ctx.Value(stderrKey{}).(io.Writer); ok {
		fmt.Fprintf(w, "traceduck: warning: "+format+"\n", args...)
	}
}

// fileKind names what a path that is not a regular file is.
func fileKind(mode fs.FileMode) string {
	switch {
	case mode.IsDir():
		return "a directory"
	case mode&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case mode&fs.ModeSocket != 0:
		return "a socket"
	case mode&fs.ModeCharDevice != 0:
		return "a character device"
	case mode&fs.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
}

// lockHolder finds the process that holds a database's lock in DuckDB's
// message: Could not set lock on file "F": Conflicting lock is held in
// PROGRAM (PID N).
var lockHolder = regexp.MustCompile(`Conflicting lock is held in (.*) \(PID (\d+)\)`)

// driverPrefix is what go-duckdb puts before DuckDB's own message when a
// database cannot be opened.
const driverPrefix = "database/sql/driver: could not open database: duckdb error: "

// openError words DuckDB's refusal to open a database: its own message is
// buried under two driver prefixes, and the one about a database another
// process has open (DuckDB lets one process at a time open a database
// file, and does not wait for it) ends in a web link and does not say
// what to do. Other errors are returned as they are.
func openError(path string, err error) error {
	msg := err.Error()
	if !strings.Contains(msg, "Could not set lock on file") {
		if _, duck, ok := strings.Cut(msg, driverPrefix); ok {
			return fmt.Errorf("%s: cannot open the database: %s", path, duck)
		}
		return err
	}
	holder := "another process"
	if m := lockHolder.FindStringSubmatch(msg); m != nil {
		holder = fmt.Sprintf("another process (PID %s, %s)", m[2], m[1])
	}
	return fmt.Errorf("%s: database is locked by %s: DuckDB lets one process at a time open a database file; try again when that one has finished", path, holder)
}

// withRunConn opens the existing database at dbPath, checks that --run
// (0: every run) names a run, and calls fn with one connection: the
// common start of the commands that read a database.
func withRunConn(ctx context.Context, dbPath string, run int32, fn func(conn *sql.Conn) error) error {
	db, err := openExistingDB(ctx, dbPath)
	if err != nil {
		return err
	}
	defer db.Close()
	conn, err := db.SQL().Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := checkRunExists(ctx, conn, run); err != nil {
		return err
	}
	return fn(conn)
}
