// Package export writes what a traceduck database holds in the formats
// other tools read: a Hive-partitioned Parquet dataset (DuckDB, Spark,
// Trino, any Parquet engine) and Chrome trace event JSON (Perfetto UI,
// chrome://tracing).
package export

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	_ "github.com/marcboeker/go-duckdb" // the driver of OpenDataset's in-memory database

	"github.com/traceduck/traceduck/queries"
	"github.com/traceduck/traceduck/schema"
)

// ViewsFile is the name of the SQL file beside a dataset's tables that
// recreates the tables (as views over the Parquet files) and every
// traceduck view and macro.
const ViewsFile = "views.sql"

// partFile is the one Parquet file of a table's partition. Files are
// written under a temporary name (ending .tmp) and renamed, so a reader's
// glob (*.parquet) never sees half a file.
const partFile = "part-0.parquet"

// table is a base table of the database and its columns in order.
type table struct {
	name    string
	columns []string
	types   []string
	perRun  bool // has a run_id column: partitioned by run
}

// Mapping says which run of the database goes to which run_id of the
// dataset: export keeps the ids, ingest --parquet gives each new run an
// id no other job took.
type Mapping struct {
	From, To int32
}

// ParquetResult is what one export wrote.
type ParquetResult struct {
	Files int   // Parquet files written
	Bytes int64 // their total size
}

// Parquet writes the runs of db named by runs (database run_id -> dataset
// run_id) into the dataset at dir: one folder per table, one partition
// folder per run (dir/events/run_id=3/part-0.parquet; the run_id column
// lives in the folder name, Hive style), the tables without a run_id (the
// DTrace overhead model's parameters) as dir/<table>/part-0.parquet, and
// dir/views.sql. A run already in the dataset is replaced file by file.
func Parquet(ctx context.Context, db *sql.DB, dir string, runs []Mapping) (ParquetResult, error) {
	var res ParquetResult
	if len(runs) == 0 {
		return res, errors.New("no run to export")
	}
	tables, err := baseTables(ctx, db)
	if err != nil {
		return res, err
	}
	write := func(target, query string) error {
		if err := os.MkdirAll(filepath.Dir(target), 0o777); err != nil {
			return err
		}
		// A name of this process's own: jobs writing into one dataset at
		// once all rewrite the tables without a run_id.
		tmp := fmt.Sprintf("%s.%d-%d.tmp", target, os.Getpid(), res.Files)
		if _, err := db.ExecContext(ctx, fmt.Sprintf("COPY (%s) TO %s (FORMAT parquet, COMPRESSION zstd)", query, queries.Literal(tmp))); err != nil {
			os.Remove(tmp)
			return fmt.Errorf("%s: %w", target, err)
		}
		if err := os.Rename(tmp, target); err != nil {
			return err
		}
		st, err := os.Stat(target)
		if err != nil {
			return err
		}
		res.Files++
		res.Bytes += st.Size()
		return nil
	}
	for _, t := range tables {
		if !t.perRun {
			if err := write(filepath.Join(dir, t.name, partFile), "SELECT * FROM "+queries.Ident(t.name)); err != nil {
				return res, err
			}
			continue
		}
		var cols []string
		for _, c := range t.columns {
			if c != "run_id" {
				cols = append(cols, queries.Ident(c))
			}
		}
		for _, m := range runs {
			q := fmt.Sprintf("SELECT %s FROM %s WHERE run_id = %d", strings.Join(cols, ", "), queries.Ident(t.name), m.From)
			target := filepath.Join(dir, t.name, fmt.Sprintf("run_id=%d", m.To), partFile)
			if err := write(target, q); err != nil {
				return res, err
			}
		}
	}
	text, err := viewsSQL(tables)
	if err != nil {
		return res, err
	}
	views := filepath.Join(dir, ViewsFile)
	tmp := fmt.Sprintf("%s.%d.tmp", views, os.Getpid())
	if err := os.WriteFile(tmp, []byte(text), 0o666); err != nil {
		return res, err
	}
	return res, os.Rename(tmp, views)
}

// baseTables lists the database's tables with their columns: the tables
// of the contract (events and state_intervals are views over the tables
// that store their strings as symbol ids, which are left out) and any
// other base table, not the views of queries/.
func baseTables(ctx context.Context, db *sql.DB) ([]table, error) {
	rows, err := db.QueryContext(ctx, `
		SELECT c.table_name, c.column_name, c.data_type
		FROM information_schema.columns c
		JOIN information_schema.tables t USING (table_catalog, table_schema, table_name)
		WHERE c.table_schema = 'main' AND c.table_catalog = current_database()
		  AND (list_contains(`+queries.LiteralList(schema.TableNames())+`, c.table_name)
		       OR (t.table_type = 'BASE TABLE' AND NOT list_contains(`+queries.LiteralList(schema.StorageTables())+`, c.table_name)))
		ORDER BY c.table_name, c.ordinal_position`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []table
	for rows.Next() {
		var name, col, typ string
		if err := rows.Scan(&name, &col, &typ); err != nil {
			return nil, err
		}
		if len(out) == 0 || out[len(out)-1].name != name {
			out = append(out, table{name: name})
		}
		t := &out[len(out)-1]
		t.columns = append(t.columns, col)
		t.types = append(t.types, typ)
		if col == "run_id" {
			t.perRun = true
		}
	}
	return out, rows.Err()
}

// viewsSQL is the text of views.sql: the tables over the dataset's files,
// then the .sql files of queries/ as traceduck installs them.
func viewsSQL(tables []table) (string, error) {
	var b strings.Builder
	b.WriteString(`-- traceduck dataset: the tables of a traceduck database as Parquet files,
-- one folder per table and, for the tables of runs, one folder per run
-- (<table>/run_id=N/part-0.parquet). This file recreates the tables as
-- views over those files, then every traceduck view and macro.
--
-- Paths are relative to the dataset's folder. In DuckDB:
--   SET file_search_path = '/path/to/dataset';
--   .read /path/to/dataset/views.sql        (the duckdb CLI; or execute this text)
-- The overhead model's parameter tables are small and are copied into
-- tables instead (CREATE TABLE IF NOT EXISTS, as traceduck's queries
-- expect them).

`)
	for _, t := range tables {
		if !t.perRun {
			fmt.Fprintf(&b, "CREATE TABLE IF NOT EXISTS %s AS SELECT * FROM read_parquet(%s);\n",
				queries.Ident(t.name), queries.Literal(t.name+"/"+partFile))
			continue
		}
		runIDType := "INTEGER"
		var cols []string
		for i, c := range t.columns {
			cols = append(cols, queries.Ident(c))
			if c == "run_id" {
				runIDType = t.types[i]
			}
		}
		fmt.Fprintf(&b, "CREATE OR REPLACE VIEW %s AS SELECT %s\nFROM read_parquet(%s, hive_partitioning = true, hive_types = {'run_id': %s});\n",
			queries.Ident(t.name), strings.Join(cols, ", "), queries.Literal(t.name+"/*/*.parquet"), runIDType)
	}
	for _, name := range queries.Files() {
		text, err := queries.Source(name)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "\n-- queries/%s\n%s\n", name, strings.TrimRight(text, "\n"))
	}
	return b.String(), nil
}

// DatasetRuns returns the run_ids the dataset at dir holds (the partition
// folders of its runs table), in order.
func DatasetRuns(dir string) ([]int32, error) {
	entries, err := os.ReadDir(filepath.Join(dir, "runs"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var ids []int32
	for _, e := range entries {
		if id, ok := partitionID(e.Name()); ok && e.IsDir() {
			ids = append(ids, id)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids, nil
}

// ClaimRunID reserves the next free run_id of the dataset at dir by
// creating its partition folder of the runs table: mkdir either creates a
// folder or fails because it exists, on every filesystem, so jobs that
// ingest into one dataset at once never take the same id.
func ClaimRunID(dir string) (int32, error) {
	if err := os.MkdirAll(filepath.Join(dir, "runs"), 0o777); err != nil {
		return 0, err
	}
	ids, err := DatasetRuns(dir)
	if err != nil {
		return 0, err
	}
	next := int32(1)
	if len(ids) > 0 {
		next = ids[len(ids)-1] + 1
	}
	for ; next > 0; next++ {
		err := os.Mkdir(filepath.Join(dir, "runs", fmt.Sprintf("run_id=%d", next)), 0o777)
		if err == nil {
			return next, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return 0, err
		}
	}
	return 0, fmt.Errorf("%s: no run_id left", dir)
}

// partitionID reads "run_id=N".
func partitionID(name string) (int32, bool) {
	v, ok := strings.CutPrefix(name, "run_id=")
	if !ok {
		return 0, false
	}
	id, err := strconv.ParseInt(v, 10, 32)
	return int32(id), err == nil && id > 0
}

// DatasetHolds returns the dataset run_id of a run of the dataset at dir
// whose file has the sha256 of run in db, or 0 when it holds none.
func DatasetHolds(ctx context.Context, db *sql.DB, dir string, run int32) (int32, error) {
	files, err := filepath.Glob(filepath.Join(globEscape(dir), "runs", "run_id=*", partFile))
	if err != nil || len(files) == 0 {
		return 0, err
	}
	var id sql.NullInt32
	err = db.QueryRowContext(ctx, fmt.Sprintf(`
		SELECT min(d.run_id) FROM read_parquet(%s, hive_partitioning = true) d
		JOIN runs r ON r.sha256 = d.sha256 WHERE r.run_id = ?`,
		queries.Literal(filepath.Join(dir, "runs", "*", partFile))), run).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", dir, err)
	}
	return id.Int32, nil
}

// RemoveRun removes every partition of run id from the dataset at dir:
// what a failed ingest into the dataset leaves behind.
func RemoveRun(dir string, id int32) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var first error
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, e.Name(), fmt.Sprintf("run_id=%d", id))); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// globEscape quotes the characters filepath.Glob treats as patterns.
func globEscape(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `*`, `\*`, `?`, `\?`, `[`, `\[`)
	return r.Replace(s)
}

// OpenDataset opens the dataset at dir as views.sql tells a DuckDB user
// to: an empty in-memory database on one connection (file_search_path is
// the connection's), file_search_path set to dir, views.sql run. The
// caller closes it.
func OpenDataset(ctx context.Context, dir string) (*sql.DB, error) {
	text, err := os.ReadFile(filepath.Join(dir, ViewsFile))
	if err != nil {
		return nil, fmt.Errorf("%s: not a traceduck dataset (no %s; write one with 'traceduck export --parquet %s')", dir, ViewsFile, dir)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	db.SetConnMaxLifetime(0)
	db.SetMaxIdleConns(1)
	if _, err := db.ExecContext(ctx, "SET file_search_path = "+queries.Literal(abs)); err != nil {
		db.Close()
		return nil, err
	}
	if _, err := db.ExecContext(ctx, string(text)); err != nil {
		db.Close()
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, ViewsFile), err)
	}
	return db, nil
}
