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
	"regexp"
	"slices"
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

// fileColumn is the column read_parquet(filename = true) adds with each
// row's file name, which views.sql reads the run_id from. DuckDB 1.1
// prunes the files a filter on it rules out only under this name (not
// under a name given as filename = 'NAME'); fileColumnFor gives a table
// that has a column of this name another one.
const fileColumn = "filename"

// table is a base table of the database and its columns in order.
type table struct {
	name    string
	folder  string // its folder in the dataset (tableFolder)
	columns []string
	types   []string
	perRun  bool // has a run_id column: partitioned by run
}

// ParquetResult is what one export wrote.
type ParquetResult struct {
	Files int   // Parquet files written
	Bytes int64 // their total size
}

// baseTables lists the database's tables with their columns: the tables
// of the contract (events and state_intervals are views over the tables
// that store their strings as symbol ids, which are left out) and any
// other base table, not the views of queries/. The runs table comes last:
// its partition is what commits a run (see Writer).
func baseTables(ctx context.Context, db *sql.DB) ([]table, error) {
	rows, err := db.QueryContext(ctx, `
		SELECT c.table_name, c.column_name, c.data_type
		FROM information_schema.columns c
		JOIN information_schema.tables t USING (table_catalog, table_schema, table_name)
		WHERE c.table_schema = 'main' AND c.table_catalog = current_database()
		  AND (list_contains(`+queries.LiteralList(schema.TableNames())+`, c.table_name)
		       OR (t.table_type = 'BASE TABLE' AND NOT list_contains(`+queries.LiteralList(schema.StorageTables())+`, c.table_name)))
		ORDER BY c.table_name = 'runs', c.table_name, c.ordinal_position`)
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
			out = append(out, table{name: name, folder: tableFolder(name)})
		}
		t := &out[len(out)-1]
		t.columns = append(t.columns, col)
		t.types = append(t.types, typ)
		if col == "run_id" {
			t.perRun = true
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 || out[len(out)-1].name != "runs" || !out[len(out)-1].perRun {
		return nil, errors.New("the database has no runs table")
	}
	return out, nil
}

// tableFolder is the name of a table's folder in a dataset: the table's
// name when it is a plain identifier (letters, digits, _), which every
// table of traceduck's is; in any other name (a user's table "../x",
// "/abs", "a b") every other byte is written %XX, so that a folder never
// leaves the dataset, never starts with a dot and never holds a character
// a glob or a Hive partition reads.
func tableFolder(name string) string {
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c == '_' || ('0' <= c && c <= '9') || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	if b.Len() == 0 {
		return "%"
	}
	return b.String()
}

// fileColumnFor is the name of the file name column of t's view:
// fileColumn, or for a table that has a column of that name (a user's),
// one no column of t has.
func fileColumnFor(t table) string {
	name := fileColumn
	for taken := true; taken; {
		taken = false
		for _, c := range t.columns {
			if strings.EqualFold(c, name) {
				name = "traceduck_" + name
				taken = true
			}
		}
	}
	return name
}

// fileOption is read_parquet's option that adds the file name column.
func fileOption(col string) string {
	if col == fileColumn {
		return "filename = true"
	}
	return "filename = " + queries.Literal(col)
}

// runIDExpr reads the run_id of a row from the name of its file
// (.../run_id=N/part-0.parquet): the last folder of the path only, so
// that a folder above the dataset named like a partition (format=btf,
// run_id=9) is not read as one, as read_parquet's hive_partitioning
// would.
func runIDExpr(fileCol, typ string) string {
	return fmt.Sprintf(`CAST(regexp_extract(%s, '[/\\]run_id=([0-9]+)[/\\][^/\\]*$', 1) AS %s)`, queries.Ident(fileCol), typ)
}

// viewsSQL is the text of views.sql: the tables over the dataset's files,
// then the .sql files of queries/ as traceduck installs them. Every path
// is a literal right after "read_parquet(", relative to the dataset's
// folder (OpenDataset makes them absolute).
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
-- (DuckDB splits file_search_path at commas: for a folder whose path holds
-- one, cd into the folder instead.)
--
-- A run is in the dataset once its partition of runs is there: writers
-- write it last, so the other tables keep only the rows of the runs that
-- runs lists, and a run being written, or left half written by a writer
-- that died, is not seen. The run_id of a row is read from its folder's
-- name (run_id=N), the last folder of its path.
-- The overhead model's parameter tables are small and are copied into
-- tables instead (CREATE TABLE IF NOT EXISTS, as traceduck's queries
-- expect them).

`)
	// runs first: the other views read it.
	ordered := append([]table{tables[len(tables)-1]}, tables[:len(tables)-1]...)
	for _, t := range ordered {
		if !t.perRun {
			fmt.Fprintf(&b, "CREATE TABLE IF NOT EXISTS %s AS SELECT * FROM read_parquet(%s);\n",
				queries.Ident(t.name), queries.Literal(t.folder+"/"+partFile))
			continue
		}
		fileCol := fileColumnFor(t)
		var cols []string
		for i, c := range t.columns {
			if c == "run_id" {
				cols = append(cols, runIDExpr(fileCol, t.types[i])+" AS run_id")
				continue
			}
			cols = append(cols, queries.Ident(c))
		}
		fmt.Fprintf(&b, "CREATE OR REPLACE VIEW %s AS SELECT %s\nFROM read_parquet(%s, hive_partitioning = false, %s)",
			queries.Ident(t.name), strings.Join(cols, ", "), queries.Literal(t.folder+"/*/*.parquet"), fileOption(fileCol))
		if t.name == "runs" {
			b.WriteString(";\n")
			continue
		}
		// Only the rows of committed runs.
		fmt.Fprintf(&b, "\nWHERE run_id IN (SELECT run_id FROM runs);\n")
	}
	for _, name := range queries.Files() {
		text, err := queries.DatasetSource(name)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "\n-- queries/%s\n%s\n", name, strings.TrimRight(text, "\n"))
	}
	return b.String(), nil
}

// duckPath is dir as an absolute path that DuckDB's read_parquet reads
// as it is: its glob characters (* ? [) are each written as a class of
// one character ([*]), DuckDB's only way to escape them. DuckDB takes a
// backslash for a path separator, so a Unix path that holds one cannot be
// given to it.
func duckPath(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if filepath.Separator == '/' && strings.Contains(abs, `\`) {
		return "", fmt.Errorf("%s: DuckDB cannot read a path that holds a backslash (it takes it for a separator); rename the folder", dir)
	}
	return strings.NewReplacer("[", "[[]", "*", "[*]", "?", "[?]").Replace(abs), nil
}

// DatasetRuns returns the run_ids the dataset at dir holds: the runs
// whose partition of the runs table is there (a run's commit), in order.
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
		id, ok := partitionID(e.Name())
		if !ok || !e.IsDir() {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, "runs", e.Name(), partFile)); err == nil {
			ids = append(ids, id)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids, nil
}

// partitionID reads "run_id=N".
func partitionID(name string) (int32, bool) {
	v, ok := strings.CutPrefix(name, "run_id=")
	if !ok || v == "" || v[0] == '+' || v[0] == '-' {
		return 0, false
	}
	id, err := strconv.ParseInt(v, 10, 32)
	return int32(id), err == nil && id > 0
}

// DatasetRun is a run the dataset holds.
type DatasetRun struct {
	ID     int32
	Name   string
	SHA256 string
}

// datasetRuns reads the committed runs of the dataset at dir through db,
// by id.
func datasetRuns(ctx context.Context, db *sql.DB, dir string) (map[int32]DatasetRun, error) {
	out := map[int32]DatasetRun{}
	ids, err := DatasetRuns(dir)
	if err != nil || len(ids) == 0 {
		return out, err
	}
	base, err := duckPath(dir)
	if err != nil {
		return nil, err
	}
	rows, err := db.QueryContext(ctx, fmt.Sprintf(`SELECT %s, name, sha256
		FROM read_parquet(%s, hive_partitioning = false, filename = true)`,
		runIDExpr(fileColumn, "INTEGER"), queries.Literal(base+"/runs/*/"+partFile)))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	defer rows.Close()
	for rows.Next() {
		var r DatasetRun
		var name, sha sql.NullString
		if err := rows.Scan(&r.ID, &name, &sha); err != nil {
			return nil, err
		}
		r.Name, r.SHA256 = name.String, sha.String
		out[r.ID] = r
	}
	return out, rows.Err()
}

// OpenDataset opens the dataset at dir as views.sql tells a DuckDB user
// to, in an empty in-memory database on one connection, with the paths of
// views.sql made absolute (DuckDB's glob characters escaped) instead of
// setting file_search_path, which DuckDB splits at commas. The caller
// closes it.
func OpenDataset(ctx context.Context, dir string) (*sql.DB, error) {
	text, err := datasetViews(dir)
	if err != nil {
		return nil, err
	}
	db, err := memoryDB()
	if err != nil {
		return nil, err
	}
	if _, err := db.ExecContext(ctx, text); err != nil {
		db.Close()
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, ViewsFile), err)
	}
	return db, nil
}

// OpenDatasetTables is OpenDataset creating only the views of the tables
// named (runs among them) and the macros of queries/base_glob.sql (the
// globs, glob_regex); all, called on the database's connection, creates
// the rest of views.sql, as OpenDataset does. DuckDB binds every view it
// creates, and each view that reads a table lists the folders of its runs
// again: opening a dataset of 1,000 runs whole listed 1,000 folders 259
// times (18-23 s at a load of 13), where a report that reads the runs'
// summaries needs four tables. A views.sql that does not read as
// traceduck writes it is run whole.
func OpenDatasetTables(ctx context.Context, dir string, tables ...string) (db *sql.DB, all func(context.Context, *sql.Conn) error, err error) {
	text, err := datasetViews(dir)
	if err != nil {
		return nil, nil, err
	}
	part, ok := viewsOf(text, tables, []string{"base_glob.sql"})
	if !ok {
		part = text
	}
	if db, err = memoryDB(); err != nil {
		return nil, nil, err
	}
	if _, err := db.ExecContext(ctx, part); err != nil {
		db.Close()
		return nil, nil, fmt.Errorf("%s: %w", filepath.Join(dir, ViewsFile), err)
	}
	all = func(ctx context.Context, conn *sql.Conn) error {
		if !ok {
			return nil
		}
		if _, err := conn.ExecContext(ctx, text); err != nil {
			return fmt.Errorf("%s: %w", filepath.Join(dir, ViewsFile), err)
		}
		ok = false // done
		return nil
	}
	return db, all, nil
}

// datasetViews reads the text of the dataset's views.sql, its paths made
// absolute.
func datasetViews(dir string) (string, error) {
	text, err := os.ReadFile(filepath.Join(dir, ViewsFile))
	if err != nil {
		return "", fmt.Errorf("%s: not a traceduck dataset (no %s; write one with 'traceduck export --parquet %s')", dir, ViewsFile, dir)
	}
	ids, err := DatasetRuns(dir)
	if err != nil {
		return "", err
	}
	if len(ids) == 0 {
		return "", fmt.Errorf("%s: the dataset holds no run (none is complete)", dir)
	}
	base, err := duckPath(dir)
	if err != nil {
		return "", err
	}
	return strings.ReplaceAll(string(text), "read_parquet('",
		"read_parquet('"+strings.ReplaceAll(base, "'", "''")+string(filepath.Separator)), nil
}

// memoryDB is an empty in-memory database on one connection.
func memoryDB() (*sql.DB, error) {
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	db.SetConnMaxLifetime(0)
	db.SetMaxIdleConns(1)
	return db, nil
}

// libraryMark starts each file of queries/ in views.sql (viewsSQL).
const libraryMark = "\n-- queries/"

// tableStatement names the table a statement of views.sql creates.
var tableStatement = regexp.MustCompile(`^CREATE (?:OR REPLACE VIEW|TABLE IF NOT EXISTS) "((?:[^"]|"")*)"`)

// viewsOf is the part of a views.sql text (viewsSQL) that creates the
// tables named and the files of queries/ named; ok is false when the text
// does not read as viewsSQL writes it or lacks one of them.
func viewsOf(text string, tables, files []string) (part string, ok bool) {
	i := strings.Index(text, libraryMark)
	if i < 0 {
		return "", false
	}
	var b strings.Builder
	found := 0
	// The tables: a statement from each line that starts with CREATE.
	lines := strings.SplitAfter(text[:i], "\n")
	for j := 0; j < len(lines); j++ {
		m := tableStatement.FindStringSubmatch(lines[j])
		if m == nil || !slices.Contains(tables, strings.ReplaceAll(m[1], `""`, `"`)) {
			continue
		}
		found++
		for ; j < len(lines); j++ {
			b.WriteString(lines[j])
			if strings.HasSuffix(strings.TrimSpace(lines[j]), ";") {
				break
			}
		}
	}
	if found != len(tables) {
		return "", false
	}
	// The files of queries/.
	for _, sec := range strings.Split(text[i:], libraryMark)[1:] {
		name, _, _ := strings.Cut(sec, "\n")
		if slices.Contains(files, name) {
			b.WriteString(libraryMark + sec)
			found++
		}
	}
	return b.String(), found == len(tables)+len(files)
}
