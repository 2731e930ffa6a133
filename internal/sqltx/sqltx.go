// Package sqltx runs statements in one transaction on one connection.
package sqltx

import (
	"context"
	"database/sql"
)

// Run runs f in a transaction of its own on a connection of db, and
// commits when f returns nil (rolls back otherwise). A DuckDB file syncs
// its write-ahead log once per commit: statements run one by one commit
// and sync one by one.
func Run(ctx context.Context, db *sql.DB, f func(tx *sql.Tx) error) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := f(tx); err != nil {
		return err
	}
	return tx.Commit()
}
