package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// goldenQueries are run with every --output format and compared with
// testdata/query-NAME.FORMAT.golden (go test -update rewrites them).
var goldenQueries = []struct{ name, sql string }{
	{"basic", "SELECT 1 AS a, 'x' AS b, NULL AS c, 2.5 AS d"},
	{"mixed", `SELECT * FROM (VALUES
		(1, 'plain', NULL, 2.5::DOUBLE, '{"k": [1, 2], "s": "<&>"}'::JSON, true),
		(-20, 'comma, "quote" | pipe', 'two' || chr(10) || 'lines', -0.125::DOUBLE, NULL, false),
		(300000, 'ßüé日本', '', 1e21::DOUBLE, '[]'::JSON, NULL)
	) t(n, s, maybe, f, j, ok) ORDER BY n`},
	{"empty", "SELECT 1 AS a, 'x' AS b WHERE false"},
}

func TestQueryGolden(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, q := range goldenQueries {
		for _, format := range outputFormats {
			got := mustRun(t, dir, nil, "query", "--db", ":memory:", "--output", format, q.sql)
			path := filepath.Join("testdata", "query-"+q.name+"."+format+".golden")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("query %s --output %s:\ngot:\n%s\nwant:\n%s", q.name, format, got, want)
			}
		}
	}
}

// The golden outputs are what they claim to be.
func TestQueryOutputsParse(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sql := goldenQueries[1].sql
	// json: an array of objects; JSON columns embedded, not strings.
	var rows []map[string]any
	out := mustRun(t, dir, nil, "query", "--db", ":memory:", "-o", "json", sql)
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("json output does not parse: %v\n%s", err, out)
	}
	if len(rows) != 3 {
		t.Fatalf("json: %d rows, want 3", len(rows))
	}
	if j, ok := rows[1]["j"].(map[string]any); !ok || j["s"] != "<&>" {
		t.Errorf("json column not embedded as JSON: %#v", rows[1]["j"])
	}
	if rows[0]["n"] != float64(-20) || rows[0]["j"] != nil || rows[2]["ok"] != nil {
		t.Errorf("json values: %#v", rows)
	}
	// csv: RFC 4180, CRLF, quoted fields.
	out = mustRun(t, dir, nil, "query", "--db", ":memory:", "-o", "csv", sql)
	if !strings.HasPrefix(out, "n,s,maybe,f,j,ok\r\n") {
		t.Errorf("csv header: %q", out)
	}
	if !strings.Contains(out, "-20,\"comma, \"\"quote\"\" | pipe\",\"two\nlines\",-0.125,,false\r\n") {
		t.Errorf("csv quoting: %q", out)
	}
}

func TestQueryStdin(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sql := "SELECT 6 * 7 AS answer"
	arg := mustRun(t, dir, nil, "query", "--db", ":memory:", sql)
	dash := mustRun(t, dir, []byte(sql), "query", "--db", ":memory:", "-")
	none := mustRun(t, dir, []byte(sql+";\n"), "query", "--db", ":memory:")
	if arg != "answer\n------\n    42\n" || dash != arg || none != arg {
		t.Errorf("argument %q, '-' %q, no argument %q", arg, dash, none)
	}
}

func TestQuerySeveralStatements(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := mustRun(t, dir, nil, "query", "--db", ":memory:", "-o", "csv",
		"CREATE TEMP TABLE t AS SELECT range AS i FROM range(3); -- a ; in a comment\n"+
			"INSERT INTO t VALUES (10); SELECT sum(i) AS total, ';' AS semi FROM t;")
	if out != "total,semi\r\n13,;\r\n" {
		t.Errorf("got %q", out)
	}
}

func TestQueryDuckDBError(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := td(t, dir, "query", "--db", ":memory:", "SELECT * FROM nosuch_table")
	expectExit(t, r, 1, "Catalog Error: Table with name nosuch_table does not exist")
	r = td(t, dir, "query", "--db", ":memory:", "SELEC 1")
	expectExit(t, r, 1, `Parser Error: syntax error at or near "SELEC"`)
	if strings.Contains(r.stderr, "--help") {
		t.Errorf("a DuckDB error is no usage error:\n%s", r)
	}
	// An error in an earlier statement stops the script.
	r = td(t, dir, "query", "--db", ":memory:", "SELECT 1/'x'; SELECT 1")
	expectExit(t, r, 1, "Error")
}

func TestQueryMissingDatabase(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := td(t, dir, "query", "--db", "missing.duckdb", "SELECT 1")
	expectExit(t, r, 1, "missing.duckdb: no such database")
	if _, err := os.Stat(filepath.Join(dir, "missing.duckdb")); err == nil {
		t.Error("query created the missing database")
	}
}

func TestQueryDatabase(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "t.duckdb")
	mustRun(t, dir, nil, "ingest", "--db", db, "--tag", "build=42", "--tag", "board=rev 2", seedSample)
	// JSON columns of the tables come out as JSON.
	var rows []struct {
		Name string            `json:"name"`
		Tags map[string]string `json:"tags"`
	}
	out := mustRun(t, dir, nil, "query", "--db", db, "-o", "json", "SELECT name, tags FROM runs")
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(rows) != 1 || rows[0].Name != "seed-example" || rows[0].Tags["build"] != "42" || rows[0].Tags["board"] != "rev 2" {
		t.Errorf("runs: %s", out)
	}
	// The views are there, the table output aligns and right-aligns numbers.
	out = mustRun(t, dir, nil, "query", "--db", db,
		"SELECT object, total_ns FROM state_summary WHERE kind='task' AND state='running' ORDER BY total_ns DESC")
	want := "object   total_ns\n-------  --------\nT_1MS_0     25000\n"
	if out != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
	// Markdown of the same.
	out = mustRun(t, dir, nil, "query", "--db", db, "-o", "markdown", "SELECT class, count FROM event_counts WHERE class = 'T' AND event = 'start'")
	if out != "| class | count |\n| ----- | ----: |\n| T     |     1 |\n" {
		t.Errorf("markdown:\n%s", out)
	}
	// query does not change what the database holds.
	before := scalar(t, dir, db, "SELECT count(*) FROM events")
	if after := scalar(t, dir, db, "SELECT count(*) FROM events"); before != after || before != "6" {
		t.Errorf("events %s then %s, want 6", before, after)
	}
}
