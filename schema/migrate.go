package schema

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// migrateToSymbols converts a database written before events and
// state_intervals kept their strings as symbol ids (see TableSymbols),
// when they were tables with VARCHAR columns. In one transaction:
//  1. the tables of ids and the symbols are created;
//  2. every string of a symbol column becomes a symbol (ids in name order);
//  3. the rows are copied to the tables of ids, in the order they were
//     stored (rowid), each string replaced by its id;
//  4. the old tables give way to the views.
//
// A failure leaves the database as it was, and Open says why.
func migrateToSymbols(ctx context.Context, db *sql.DB) error {
	var old []table
	for _, t := range tables {
		if t.rows == "" {
			continue
		}
		var n int
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM duckdb_tables()
			WHERE database_name = current_database() AND schema_name = 'main' AND table_name = ?`, t.name).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			old = append(old, t)
		}
	}
	if len(old) == 0 {
		return nil
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	stmts := []string{tableDDL(symbolsTable)}
	var names []string
	for _, t := range old {
		stmts = append(stmts, tableDDL(t))
		for _, c := range t.columns {
			if c.isSymbol() {
				names = append(names, fmt.Sprintf("SELECT %s AS name FROM %s", c.name, t.name))
			}
		}
	}
	stmts = append(stmts, fmt.Sprintf(`INSERT INTO %s
		SELECT CAST(row_number() OVER (ORDER BY name) - 1 AS INTEGER), name
		FROM (%s) WHERE name IS NOT NULL`, TableSymbols, strings.Join(names, " UNION ")))
	for _, t := range old {
		var cols, joins []string
		for i, c := range t.storedColumns() {
			if !c.isSymbol() {
				cols = append(cols, "x."+c.name)
				continue
			}
			cols = append(cols, fmt.Sprintf("s%d.sym", i))
			joins = append(joins, fmt.Sprintf("LEFT JOIN %s s%d ON s%d.name = x.%s", TableSymbols, i, i, c.name))
		}
		stmts = append(stmts,
			fmt.Sprintf("INSERT INTO %s SELECT %s FROM %s x %s ORDER BY x.rowid",
				t.rows, strings.Join(cols, ", "), t.name, strings.Join(joins, " ")),
			"DROP TABLE "+t.name,
			viewDDL(t, "CREATE VIEW"))
	}
	for _, s := range stmts {
		if _, err := tx.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("convert the tables of an older traceduck (events, state_intervals) to symbol ids: %w", err)
		}
	}
	return tx.Commit()
}
