package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/traceduck/traceduck/internal/safetext"

	"github.com/traceduck/traceduck/queries/export"
)

func newQueryCmd() *cobra.Command {
	var (
		dbPath  string
		dataset string
		output  = outputFlags{format: outTable}
	)
	cmd := &cobra.Command{
		Use:   "query (--db FILE | --parquet DIR) [--output table|csv|json|markdown] [flags] [SQL | -]",
		Short: "Run SQL over a database and print the result",
		Long: `Query runs SQL over the database: the tables (runs, objects, events,
eco_triples, state_intervals, state_levels, diagnostics) and the views
(event_counts, state_summary). The SQL is the argument, or standard input
when the argument is "-" or absent. Several statements separated by ';' are
run in order and the result of the last one is printed.

The database must exist (":memory:" is an empty database in memory). The
traceduck tables and views are created in it where missing, and the views
brought up to date with this traceduck, before the SQL runs. A database
this process may not write (another user's, mode 444) is opened read-only,
as it is; a warning says so when its views are not this traceduck's.

--parquet DIR queries a Parquet dataset (traceduck export --parquet, ingest
--parquet) instead: an empty database in memory reads DIR/views.sql, so the
tables and every view answer over the files, as in any DuckDB client.

Output formats:
  table     aligned columns, a header and a rule; numbers right-aligned, NULL as NULL
  csv       RFC 4180: a header line, CRLF line ends; NULL as an empty field
  json      an array of objects, one per row; JSON columns embedded as JSON
  markdown  a GitHub table

The tables, views and macros every database has: traceduck views (and
traceduck views NAME for one of them).

DuckDB's errors are printed as DuckDB words them; the exit code is then 1.`,
		Example: `  traceduck query --db t.duckdb "SELECT object, total_ns FROM state_summary WHERE kind='task' AND state='running' ORDER BY total_ns DESC"
  traceduck query --db t.duckdb --output csv "SELECT * FROM event_counts" > counts.csv
  echo "SELECT run_id, name, meta FROM runs" | traceduck query --db t.duckdb --output json
  traceduck query --parquet dataset/ "SELECT run_id, object, total_ns FROM state_summary WHERE state = 'running'"`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) <= 1 {
				return nil
			}
			// query t.duckdb "SELECT 1": the database given as an argument
			if dbPath == "" && dataset == "" {
				return usagef("give the database with --db FILE (or a dataset with --parquet DIR): traceduck query --db %s %s", cellText(shellQuote(safetext.Cut(args[0], 100))), cellText(sqlQuote(safetext.Cut(args[1], 100))))
			}
			return usagef("query takes one SQL text (or - for standard input), found %d arguments: quote the SQL", len(args))
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			var text string
			if len(args) == 1 && args[0] != "-" {
				text = args[0]
			} else {
				b, err := io.ReadAll(cmd.InOrStdin())
				if err != nil {
					return fmt.Errorf("read SQL from standard input: %w", err)
				}
				text = string(b)
			}
			if lastStatement(text) == "" {
				return usagef("no SQL to run: give it as the argument or on standard input")
			}
			if (dbPath == "") == (dataset == "") {
				return usagef("give --db FILE or --parquet DIR (one of them)")
			}
			if dataset != "" {
				return runDatasetQuery(cmd.Context(), dataset, text, output, cmd.OutOrStdout())
			}
			return runQuery(cmd.Context(), dbPath, text, output, cmd.OutOrStdout())
		},
	}
	addDBFlag(cmd, &dbPath, false, `database file (must exist; ":memory:" for an empty one)`)
	cmd.Flags().StringVar(&dataset, "parquet", "", "query this Parquet dataset instead of a database")
	addOutputFlags(cmd, &output, outputFormats)
	return cmd
}

func runQuery(ctx context.Context, dbPath, text string, output outputFlags, w io.Writer) error {
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
	return queryTo(ctx, conn, text, newResultWriter(output, w))
}

// runDatasetQuery is runQuery over a Parquet dataset.
func runDatasetQuery(ctx context.Context, dir, text string, output outputFlags, w io.Writer) error {
	db, err := export.OpenDataset(ctx, dir)
	if err != nil {
		return err
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return queryTo(ctx, conn, text, newResultWriter(output, w))
}

// queryTo runs a SQL script on conn and writes the result of its last
// statement.
func queryTo(ctx context.Context, conn *sql.Conn, text string, out resultWriter) error {
	rows, err := conn.QueryContext(ctx, text)
	if err != nil {
		return err
	}
	defer rows.Close()
	types, err := rows.ColumnTypes()
	if err != nil {
		return err
	}
	cols := make([]column, len(types))
	for i, t := range types {
		cols[i] = column{Name: t.Name(), Type: t.DatabaseTypeName()}
	}
	describe(ctx, conn, lastStatement(text), cols)

	if err := out.begin(cols); err != nil {
		return err
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		if err := out.row(vals); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	return out.end()
}

// describe asks DuckDB for the types of the last statement's result
// columns as DuckDB names them: the driver reports a JSON column as
// VARCHAR, DESCRIBE says JSON. When DESCRIBE does not apply (the statement
// is no query) or disagrees on the columns, the driver's types stay.
func describe(ctx context.Context, conn *sql.Conn, stmt string, cols []column) {
	if stmt == "" || len(cols) == 0 {
		return
	}
	rows, err := conn.QueryContext(ctx, "DESCRIBE "+stmt)
	if err != nil {
		return
	}
	defer rows.Close()
	names, err := rows.Columns()
	if err != nil || len(names) < 2 {
		return
	}
	var got []column
	vals := make([]any, len(names))
	ptrs := make([]any, len(names))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if rows.Scan(ptrs...) != nil {
			return
		}
		name, ok1 := vals[0].(string)
		typ, ok2 := vals[1].(string)
		if !ok1 || !ok2 {
			return
		}
		got = append(got, column{Name: name, Type: typ})
	}
	if rows.Err() != nil || len(got) != len(cols) {
		return
	}
	for i := range got {
		if got[i].Name != cols[i].Name {
			return
		}
	}
	for i := range cols {
		cols[i].Type = got[i].Type
	}
}
