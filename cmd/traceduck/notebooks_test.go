package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/traceduck/traceduck/internal/clitest"
	"math"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/marcboeker/go-duckdb"

	"github.com/traceduck/traceduck/internal/tracegen"
)

// The notebooks of notebooks/ are tested here, where the demo database can
// be built in-process: their JSON is checked against the nbformat 4.5
// schema's rules, and every SQL statement of their code cells runs on the
// demo database, with traceduck's DuckDB and with a newer DuckDB (the node
// client), whose answers must be the same.

// notebookDir is notebooks/ from this package's directory.
var notebookDir = filepath.Join("..", "..", "notebooks")

// notebookNames are the notebooks the README and notebooks/README.md link.
var notebookNames = []string{"tour", "latency", "regression"}

func TestNotebooks(t *testing.T) {
	books := make([]notebookSQL, len(notebookNames))
	for i, name := range notebookNames {
		data := readFile(t, filepath.Join(notebookDir, name+".ipynb"))
		if err := checkNotebook(data); err != nil {
			t.Fatalf("%s.ipynb: %v", name, err)
		}
		stmts, err := notebookStatements(data)
		if err != nil {
			t.Fatalf("%s.ipynb: %v", name, err)
		}
		books[i] = notebookSQL{name, stmts}
	}
	demo := clitest.DemoCopy(t, t.TempDir(), "demo.duckdb")

	t.Run("demo", func(t *testing.T) {
		for _, nb := range books {
			results, err := runScript(demo, nb.statements, nil)
			if err != nil {
				t.Fatalf("%s.ipynb: %v", nb.name, err)
			}
			// Every query the notebooks show has rows on the demo
			// database, except the comparisons of the regression
			// study, whose runs there are different systems (on two
			// builds of one system, testRegressionNotebook, they have).
			if nb.name != "regression" {
				checkRows(t, nb.name+".ipynb on the demo database", nb.statements, results)
			}
		}
	})
	t.Run("regression", func(t *testing.T) { testRegressionNotebook(t, books[2].statements) })
	t.Run("newer-duckdb", func(t *testing.T) { testNewerDuckDB(t, demo, books) })
}

// checkRows fails the test for a query that gave no rows.
func checkRows(t *testing.T, what string, stmts []string, results []stmtResult) {
	t.Helper()
	for i, r := range results {
		if r.isQuery && len(r.rows) == 0 {
			t.Errorf("%s: no rows from\n%s", what, stmts[i])
		}
	}
}

// notebookSQL is a notebook's SQL statements, in order.
type notebookSQL struct {
	name       string
	statements []string
}

// cellIDPattern is the schema's cell_id.
var cellIDPattern = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// checkNotebook checks a notebook against the nbformat 4.5 JSON schema
// (nbformat.v4.5.schema.json: the top-level keys and types, the cells'
// required and allowed keys, ids, sources) and the repository's rules:
// outputs cleared, a first markdown cell that says how to create the
// database, a read-only connection.
func checkNotebook(data []byte) error {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return fmt.Errorf("not JSON: %v", err)
	}
	if err := checkKeys("notebook", top, []string{"cells", "metadata", "nbformat", "nbformat_minor"}, nil); err != nil {
		return err
	}
	var major, minor int
	if err := json.Unmarshal(top["nbformat"], &major); err != nil || major != 4 {
		return fmt.Errorf("nbformat is %s, want 4", top["nbformat"])
	}
	if err := json.Unmarshal(top["nbformat_minor"], &minor); err != nil || minor < 5 {
		return fmt.Errorf("nbformat_minor is %s, want an integer >= 5 (cell ids)", top["nbformat_minor"])
	}
	var meta map[string]json.RawMessage
	if err := json.Unmarshal(top["metadata"], &meta); err != nil || meta == nil {
		return fmt.Errorf("metadata is not an object")
	}
	if ks, ok := meta["kernelspec"]; ok {
		var k struct {
			Name        *string `json:"name"`
			DisplayName *string `json:"display_name"`
		}
		if json.Unmarshal(ks, &k) != nil || k.Name == nil || k.DisplayName == nil {
			return fmt.Errorf("metadata.kernelspec needs the strings name and display_name")
		}
	}
	if li, ok := meta["language_info"]; ok {
		var l struct {
			Name *string `json:"name"`
		}
		if json.Unmarshal(li, &l) != nil || l.Name == nil {
			return fmt.Errorf("metadata.language_info needs the string name")
		}
	}
	var cells []map[string]json.RawMessage
	if err := json.Unmarshal(top["cells"], &cells); err != nil {
		return fmt.Errorf("cells is not an array of objects")
	}
	if len(cells) == 0 {
		return fmt.Errorf("no cells")
	}
	ids := map[string]int{}
	for i, c := range cells {
		where := fmt.Sprintf("cell %d", i+1)
		var kind string
		if err := json.Unmarshal(c["cell_type"], &kind); err != nil {
			return fmt.Errorf("%s: cell_type is %s, want a string", where, c["cell_type"])
		}
		switch kind {
		case "markdown", "raw":
			if err := checkKeys(where, c, []string{"cell_type", "id", "metadata", "source"}, []string{"attachments"}); err != nil {
				return err
			}
		case "code":
			if err := checkKeys(where, c, []string{"cell_type", "execution_count", "id", "metadata", "outputs", "source"}, nil); err != nil {
				return err
			}
			if string(c["execution_count"]) != "null" {
				return fmt.Errorf("%s: execution_count is %s, want null (outputs cleared)", where, c["execution_count"])
			}
			var outputs []json.RawMessage
			if err := json.Unmarshal(c["outputs"], &outputs); err != nil || outputs == nil || len(outputs) != 0 {
				return fmt.Errorf("%s: outputs is %s, want [] (outputs cleared)", where, c["outputs"])
			}
		default:
			return fmt.Errorf("%s: cell_type %q, want markdown, code or raw", where, kind)
		}
		var id string
		if err := json.Unmarshal(c["id"], &id); err != nil || !cellIDPattern.MatchString(id) {
			return fmt.Errorf("%s: id %s is not 1 to 64 of [a-zA-Z0-9_-]", where, c["id"])
		}
		if j, dup := ids[id]; dup {
			return fmt.Errorf("%s: id %q is cell %d's too", where, id, j)
		}
		ids[id] = i + 1
		var cm map[string]json.RawMessage
		if err := json.Unmarshal(c["metadata"], &cm); err != nil || cm == nil {
			return fmt.Errorf("%s: metadata is not an object", where)
		}
		src, err := cellSource(c["source"])
		if err != nil {
			return fmt.Errorf("%s: %v", where, err)
		}
		if i == 0 && (kind != "markdown" || !strings.Contains(src, "go run ./cmd/traceduck demo\n")) {
			return fmt.Errorf("cell 1 is not a markdown cell that says how to create the database (go run ./cmd/traceduck demo)")
		}
	}
	if !bytes.Contains(data, []byte(`duckdb.connect(DB, read_only=True)`)) {
		return fmt.Errorf("no duckdb.connect(DB, read_only=True)")
	}
	return nil
}

// checkKeys checks that an object has every required key and no key other
// than those and the optional ones (the schema's additionalProperties:
// false).
func checkKeys(where string, obj map[string]json.RawMessage, required, optional []string) error {
	for _, k := range required {
		if _, ok := obj[k]; !ok {
			return fmt.Errorf("%s: no %q", where, k)
		}
	}
	allowed := strings.Join(append(append([]string(nil), required...), optional...), " ")
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !strings.Contains(" "+allowed+" ", " "+k+" ") {
			return fmt.Errorf("%s: key %q is not in the schema (%s)", where, k, allowed)
		}
	}
	return nil
}

// cellSource joins a cell's source: a string, or a list of strings of
// which every one but the last ends with a newline (Jupyter joins them
// without a separator, so a missing newline would join two lines).
func cellSource(raw json.RawMessage) (string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var lines []string
	if err := json.Unmarshal(raw, &lines); err != nil {
		return "", fmt.Errorf("source is neither a string nor a list of strings")
	}
	for i, l := range lines[:max(len(lines)-1, 0)] {
		if !strings.HasSuffix(l, "\n") {
			return "", fmt.Errorf("source line %d does not end with a newline: %q", i+1, l)
		}
	}
	return strings.Join(lines, ""), nil
}

// sqlCall is the convention of notebooks/README.md: every statement is one
// con.sql("""...""") call with the SQL written out.
var (
	sqlCall    = regexp.MustCompile(`con\.sql\(\s*"""((?s:.*?))"""\s*\)`)
	anySQLCall = regexp.MustCompile(`\.(sql|execute|query|executemany)\(`)
)

// notebookStatements extracts the SQL of a notebook's code cells, in
// order. A call that does not follow the convention (SQL in a variable,
// an f-string, con.execute, a backslash that Python would read as an
// escape) is an error, so that no statement escapes the tests.
func notebookStatements(data []byte) ([]string, error) {
	var nb struct {
		Cells []struct {
			CellType string          `json:"cell_type"`
			Source   json.RawMessage `json:"source"`
		} `json:"cells"`
	}
	if err := json.Unmarshal(data, &nb); err != nil {
		return nil, err
	}
	var stmts []string
	for i, c := range nb.Cells {
		if c.CellType != "code" {
			continue
		}
		src, err := cellSource(c.Source)
		if err != nil {
			return nil, fmt.Errorf("cell %d: %v", i+1, err)
		}
		calls := sqlCall.FindAllStringSubmatch(src, -1)
		if n := len(anySQLCall.FindAllString(src, -1)); n != len(calls) {
			return nil, fmt.Errorf("cell %d: %d database calls, %d of them con.sql(\"\"\"SQL\"\"\") with the SQL written out", i+1, n, len(calls))
		}
		for _, m := range calls {
			q := strings.TrimSpace(m[1])
			if strings.Contains(q, `\`) {
				return nil, fmt.Errorf("cell %d: a backslash in the SQL, which Python reads as an escape:\n%s", i+1, q)
			}
			stmts = append(stmts, q)
		}
	}
	if len(stmts) == 0 {
		return nil, fmt.Errorf("no con.sql(\"\"\"...\"\"\") statement")
	}
	return stmts, nil
}

// stmtResult is what one statement gave: column names and rows, values as
// go-duckdb scans them.
type stmtResult struct {
	isQuery bool // a SELECT (or WITH, FROM): its rows are the notebook's output
	columns []string
	rows    [][]any
}

// isQueryStatement tells a query from SET VARIABLE and CREATE TEMP VIEW.
func isQueryStatement(q string) bool {
	w := strings.ToUpper(strings.Fields(q)[0])
	return w == "SELECT" || w == "WITH" || w == "FROM"
}

// runScript runs statements in order on one read-only connection to the
// database at path, as a notebook's session does, then calls after (if
// not nil) on the same connection, which still has the temporary views.
func runScript(path string, stmts []string, after func(*sql.Conn) error) ([]stmtResult, error) {
	ctx := context.Background()
	connector, err := duckdb.NewConnector(path+"?access_mode=read_only", nil)
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(connector)
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	var out []stmtResult
	for _, q := range stmts {
		r, err := queryAll(ctx, conn, q)
		if err != nil {
			return nil, fmt.Errorf("%v\nin:\n%s", err, q)
		}
		r.isQuery = isQueryStatement(q)
		out = append(out, r)
	}
	if after != nil {
		if err := after(conn); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func queryAll(ctx context.Context, conn *sql.Conn, q string, args ...any) (stmtResult, error) {
	rows, err := conn.QueryContext(ctx, q, args...)
	if err != nil {
		return stmtResult{}, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return stmtResult{}, err
	}
	r := stmtResult{columns: cols}
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return stmtResult{}, err
		}
		r.rows = append(r.rows, vals)
	}
	return r, rows.Err()
}

// testRegressionNotebook builds the database the regression notebook
// describes (two builds of one system, ingested with --name and --tag
// build=), the second with one task 1.5 times slower (the generator's
// ExecScale), and checks that the notebook's comparisons find that task
// and only it, and that its CPU busy times are the generator's.
func testRegressionNotebook(t *testing.T, stmts []string) {
	dir := t.TempDir()
	const slow = "Task_10ms_3" // a task of this configuration
	cfg := tracegen.Config{Events: 20000, Cores: 2, Tasks: 5, Seed: 7}
	builds := []struct {
		version string
		scale   map[string]float64
	}{{"1.0", nil}, {"1.1", map[string]float64{slow: 1.5}}}
	db := filepath.Join(dir, "builds.duckdb")
	busyTruth := map[string]int64{} // "build cpu" -> busy ns
	for _, b := range builds {
		cfg.ExecScale = b.scale
		var buf bytes.Buffer
		truth, err := tracegen.WriteBTF(&buf, cfg)
		if err != nil {
			t.Fatal(err)
		}
		for core, ns := range truth.CoreBusy {
			busyTruth[b.version+" "+core] = ns
		}
		trace := writeFile(t, dir, "trace-"+b.version+".btf", buf.Bytes())
		mustRun(t, dir, nil, "ingest", "--db", db, "--name", "v"+b.version, "--tag", "build="+b.version, trace)
	}
	type row struct {
		kind, object string
		execRatio    float64
		regressed    bool
	}
	var regression []row
	busy := map[string]int64{}
	results, err := runScript(db, stmts, func(conn *sql.Conn) error {
		ctx := context.Background()
		rows, err := conn.QueryContext(ctx, `SELECT build, kind, object, exec_p50_ratio, regressed FROM response_regression ORDER BY kind, object`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var build string
			var r row
			if err := rows.Scan(&build, &r.kind, &r.object, &r.execRatio, &r.regressed); err != nil {
				return err
			}
			if build != "1.1" {
				return fmt.Errorf("response_regression compares build %q with the baseline, want 1.1", build)
			}
			regression = append(regression, r)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		rows, err = conn.QueryContext(ctx, `SELECT build, cpu, busy_ns FROM cpu_busy`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var build, cpu string
			var ns int64
			if err := rows.Scan(&build, &cpu, &ns); err != nil {
				return err
			}
			busy[build+" "+cpu] = ns
		}
		return rows.Err()
	})
	if err != nil {
		t.Fatalf("regression.ipynb on two builds: %v", err)
	}
	checkRows(t, "regression.ipynb on two builds", stmts, results)
	// Six processes (five tasks and the ISR) in both builds.
	if len(regression) != 6 {
		t.Fatalf("response_regression has %d rows, want 6 (5 tasks and ISR_Tick): %v", len(regression), regression)
	}
	for _, r := range regression {
		switch {
		case r.object == slow && (r.execRatio < 1.35 || r.execRatio > 1.65 || !r.regressed):
			t.Errorf("%s: exec_p50_ratio %.3f, regressed %v; want about 1.5, regressed", r.object, r.execRatio, r.regressed)
		case r.object != slow && (r.execRatio < 0.85 || r.execRatio > 1.15):
			t.Errorf("%s: exec_p50_ratio %.3f, want about 1 (only %s was made slower)", r.object, r.execRatio, slow)
		}
	}
	if fmt.Sprint(busy) != fmt.Sprint(busyTruth) {
		t.Errorf("cpu_busy busy_ns per build and CPU:\n%v\nthe generator's:\n%v", busy, busyTruth)
	}
}

// nodeClient finds node and the @duckdb/node-api package that .ci/run
// installs in TRACEDUCK_NODE_DIR (default ~/.cache/traceduck-node). Missing,
// the test is skipped, or fails under CI=true.
func nodeClient(t *testing.T) (node, moduleDir string) {
	moduleDir = os.Getenv("TRACEDUCK_NODE_DIR")
	if moduleDir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			t.Fatal(err)
		}
		moduleDir = filepath.Join(home, ".cache", "traceduck-node")
	}
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join(moduleDir, "node_modules", "@duckdb", "node-api", "package.json"))
	}
	if err != nil {
		msg := fmt.Sprintf("DuckDB's node client is not installed (%v): npm install --prefix %s @duckdb/node-api, as .ci/run does, runs this test", err, moduleDir)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return node, moduleDir
}

// clientAnswer is what testdata/duckdb_client.cjs prints.
type clientAnswer struct {
	Version string `json:"version"`
	Package string `json:"package"`
	Scripts []struct {
		Name    string `json:"name"`
		Results []struct {
			Columns []string `json:"columns"`
			Types   []string `json:"types"`
			Rows    [][]any  `json:"rows"`
			Error   string   `json:"error"`
		} `json:"results"`
	} `json:"scripts"`
}

// runClient runs SQL scripts on the database at path with DuckDB's node
// client.
func runClient(t *testing.T, node, moduleDir, path, mode string, scripts []notebookSQL) clientAnswer {
	t.Helper()
	type script struct {
		Name       string   `json:"name"`
		Statements []string `json:"statements"`
	}
	req := struct {
		DB         string   `json:"db"`
		AccessMode string   `json:"access_mode"`
		Scripts    []script `json:"scripts"`
	}{DB: path, AccessMode: mode}
	for _, s := range scripts {
		req.Scripts = append(req.Scripts, script{s.name, s.statements})
	}
	body, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	prog, err := filepath.Abs(filepath.Join("testdata", "duckdb_client.cjs"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, prog, moduleDir)
	cmd.Stdin = bytes.NewReader(body)
	var out, errb bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("node client: %v\n%s", err, errb.String())
	}
	var ans clientAnswer
	dec := json.NewDecoder(&out)
	dec.UseNumber()
	if err := dec.Decode(&ans); err != nil {
		t.Fatalf("node client's answer: %v", err)
	}
	if len(ans.Scripts) != len(scripts) {
		t.Fatalf("node client ran %d scripts, want %d", len(ans.Scripts), len(scripts))
	}
	return ans
}

// testNewerDuckDB opens a copy of the demo database with the newest DuckDB
// the node client ships, read-only: every notebook statement must give
// what traceduck's DuckDB gives. Then traceduck must still open the file,
// append a run and answer; and again after the client opened it
// read-write and wrote a table. A copy written in a newer storage version
// on purpose is what traceduck cannot open.
func testNewerDuckDB(t *testing.T, demo string, books []notebookSQL) {
	node, moduleDir := nodeClient(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "client.duckdb")
	if err := os.WriteFile(db, readFile(t, demo), 0o644); err != nil {
		t.Fatal(err)
	}
	want := make([][]stmtResult, len(books))
	for i, nb := range books {
		r, err := runScript(db, nb.statements, nil)
		if err != nil {
			t.Fatalf("%s.ipynb: %v", nb.name, err)
		}
		want[i] = r
	}

	ans := runClient(t, node, moduleDir, db, "READ_ONLY", books)
	t.Logf("node client: @duckdb/node-api %s, DuckDB %s", ans.Package, ans.Version)
	for i, nb := range books {
		got := ans.Scripts[i].Results
		for j, q := range nb.statements {
			g, w := got[j], want[i][j]
			if g.Error != "" {
				t.Errorf("%s.ipynb, DuckDB %s: %s\nin:\n%s", nb.name, ans.Version, g.Error, q)
				continue
			}
			if !w.isQuery {
				continue
			}
			if err := sameResult(w, g.Columns, g.Types, g.Rows); err != nil {
				t.Errorf("%s.ipynb, DuckDB %s answers otherwise than traceduck's: %v\nin:\n%s", nb.name, ans.Version, err, q)
			}
		}
	}

	// After the read-only client: traceduck appends a run, and the
	// notebooks' queries answer on the file, for it too.
	mustRun(t, dir, nil, "ingest", "--db", db, "--name", "after-client", "--force", seedSample)
	if n := scalar(t, dir, db, "SELECT count(*) FROM task_instances JOIN runs USING (run_id) WHERE name = 'after-client'"); n != "1" {
		t.Errorf("task_instances of the run ingested after the client: %s, want 1", n)
	}
	for _, nb := range books {
		if _, err := runScript(db, nb.statements, nil); err != nil {
			t.Errorf("%s.ipynb after the client and an ingest: %v", nb.name, err)
		}
	}

	// The client opens the file read-write and writes: DuckDB keeps the
	// file's storage version (v1.0.0+, which DuckDB 1.1 reads), so
	// traceduck still opens it, sees the table, and appends.
	rw := runClient(t, node, moduleDir, db, "READ_WRITE", []notebookSQL{{"write", []string{
		"CREATE TABLE client_notes AS SELECT 42 AS answer",
		"CHECKPOINT",
		"SELECT tags['storage_version'] FROM duckdb_databases() WHERE database_name = current_database()",
	}}})
	for _, r := range rw.Scripts[0].Results {
		if r.Error != "" {
			t.Fatalf("node client, read-write: %s", r.Error)
		}
	}
	if v := fmt.Sprint(rw.Scripts[0].Results[2].Rows); v != "[[v1.0.0+]]" {
		t.Errorf("storage version after DuckDB %s wrote the file: %s, want [[v1.0.0+]]", rw.Version, v)
	}
	mustRun(t, dir, nil, "ingest", "--db", db, "--name", "after-write", "--force", seedSample)
	// The new run is the seed example again: as many state_summary rows
	// as the demo's run of it (4).
	if got := scalar(t, dir, db, `SELECT (SELECT answer FROM client_notes) || ' ' ||
		(SELECT count(*) FROM state_summary JOIN runs USING (run_id) WHERE name = 'after-write') || ' ' ||
		(SELECT count(*) FROM state_summary JOIN runs USING (run_id) WHERE name = 'btf-seed-example')`); got != "42 4 4" {
		t.Errorf("after the client wrote the file: client_notes, state_summary rows of the new run and of the demo's: %q, want \"42 4 4\"", got)
	}

	// A copy in the newer storage version (ATTACH ... STORAGE_VERSION):
	// DuckDB 1.1 cannot read it, and traceduck says so.
	upgraded := filepath.Join(dir, "upgraded.duckdb")
	up := runClient(t, node, moduleDir, db, "READ_WRITE", []notebookSQL{{"upgrade", []string{
		"ATTACH '" + upgraded + "' AS upgraded (STORAGE_VERSION 'v1.2.0')",
		"COPY FROM DATABASE client TO upgraded",
		"DETACH upgraded",
	}}})
	for _, r := range up.Scripts[0].Results {
		if r.Error != "" {
			t.Fatalf("node client, copy to storage version v1.2.0: %s", r.Error)
		}
	}
	r := td(t, dir, "query", "--db", upgraded, "SELECT count(*) FROM runs")
	expectExit(t, r, 1, "upgraded.duckdb", "Trying to read a database file with version number")
}

// sameResult compares what traceduck's DuckDB gave (want) with the node
// client's JSON (columns, types, rows): the same columns, the same rows in
// the same order, values equal with numbers compared as numbers (the
// client writes BIGINT, HUGEINT and DECIMAL as strings) and doubles to a
// relative 1e-9 (sums of doubles may be added in another order).
func sameResult(want stmtResult, columns, types []string, rows [][]any) error {
	if strings.Join(want.columns, ",") != strings.Join(columns, ",") {
		return fmt.Errorf("columns %v, want %v", columns, want.columns)
	}
	if len(rows) != len(want.rows) {
		return fmt.Errorf("%d rows, want %d", len(rows), len(want.rows))
	}
	for i, row := range rows {
		for j, v := range row {
			if err := sameValue(want.rows[i][j], v); err != nil {
				return fmt.Errorf("row %d, column %s (%s): %v", i+1, columns[j], types[j], err)
			}
		}
	}
	return nil
}

func sameValue(want, got any) error {
	switch w := want.(type) {
	case nil:
		if got != nil {
			return fmt.Errorf("%v, want NULL", got)
		}
		return nil
	case bool, string:
		if got != want {
			return fmt.Errorf("%v, want %v", got, want)
		}
		return nil
	case int8, int16, int32, int64, uint8, uint16, uint32, uint64, *big.Int:
		wi, _ := new(big.Int).SetString(fmt.Sprint(w), 10)
		gi, ok := new(big.Int).SetString(jsonText(got), 10)
		if !ok || gi.Cmp(wi) != 0 {
			return fmt.Errorf("%v, want %v", got, w)
		}
		return nil
	case float32, float64, duckdb.Decimal:
		var wf float64
		switch w := w.(type) {
		case float32:
			wf = float64(w)
		case float64:
			wf = w
		case duckdb.Decimal:
			wf = w.Float64()
		}
		gf, err := strconv.ParseFloat(jsonText(got), 64)
		if err != nil {
			return fmt.Errorf("%v, want the number %v", got, wf)
		}
		if !(gf == wf || math.IsNaN(gf) && math.IsNaN(wf) || math.Abs(gf-wf) <= 1e-9*math.Max(math.Abs(gf), math.Abs(wf))) {
			return fmt.Errorf("%v, want %v", gf, wf)
		}
		return nil
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Errorf("%v, want the list %v", got, w)
		}
		for i := range w {
			if err := sameValue(w[i], g[i]); err != nil {
				return fmt.Errorf("element %d: %v", i+1, err)
			}
		}
		return nil
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok || len(g) != len(w) {
			return fmt.Errorf("%v, want the struct %v", got, w)
		}
		for k := range w {
			if err := sameValue(w[k], g[k]); err != nil {
				return fmt.Errorf("field %s: %v", k, err)
			}
		}
		return nil
	}
	return errors.New("a value of type " + fmt.Sprintf("%T", want) + ", which the notebooks should not show (numbers, strings, booleans, lists and structs compare)")
}

// jsonText is a JSON value of the client's answer as text: a number as
// written, a string as is ("Infinity", "NaN" and big numbers come as
// strings).
func jsonText(v any) string {
	switch v := v.(type) {
	case json.Number:
		return v.String()
	case string:
		switch v {
		case "Infinity":
			return "+Inf"
		case "-Infinity":
			return "-Inf"
		}
		return v
	}
	return fmt.Sprint(v)
}

// The checks fail on what they are for: each broken notebook is refused
// with its message.
func TestCheckNotebookRejects(t *testing.T) {
	const md = `{"cell_type": "markdown", "id": "a", "metadata": {}, "source": ["go run ./cmd/traceduck demo\n", "first"]}`
	const code = `{"cell_type": "code", "id": "b", "metadata": {}, "source": "con = duckdb.connect(DB, read_only=True)", "outputs": [], "execution_count": null}`
	nb := func(cells ...string) string {
		return `{"cells": [` + strings.Join(cells, ", ") + `], "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3"}}, "nbformat": 4, "nbformat_minor": 5}`
	}
	if err := checkNotebook([]byte(nb(md, code))); err != nil {
		t.Fatalf("a valid notebook: %v", err)
	}
	for _, tc := range []struct{ notebook, want string }{
		{`[]`, `not JSON: json: cannot unmarshal array into Go value of type map[string]json.RawMessage`},
		{strings.Replace(nb(md, code), `"nbformat": 4`, `"nbformat": 3`, 1), `nbformat is 3, want 4`},
		{strings.Replace(nb(md, code), `"nbformat_minor": 5`, `"nbformat_minor": 4`, 1), `nbformat_minor is 4, want an integer >= 5 (cell ids)`},
		{strings.Replace(nb(md, code), `"nbformat": 4,`, `"nbformat": 4, "worksheets": [],`, 1), `notebook: key "worksheets" is not in the schema (cells metadata nbformat nbformat_minor)`},
		{strings.Replace(nb(md, code), `"display_name": "Python 3"`, `"display": "Python 3"`, 1), `metadata.kernelspec needs the strings name and display_name`},
		{nb(md, strings.Replace(code, `"execution_count": null`, `"execution_count": 3`, 1)), `cell 2: execution_count is 3, want null (outputs cleared)`},
		{nb(md, strings.Replace(code, `"outputs": []`, `"outputs": [{"output_type": "stream", "name": "stdout", "text": "x"}]`, 1)), `cell 2: outputs is [{"output_type": "stream", "name": "stdout", "text": "x"}], want [] (outputs cleared)`},
		{nb(md, strings.Replace(code, `, "outputs": []`, ``, 1)), `cell 2: no "outputs"`},
		{nb(md, strings.Replace(code, `"metadata": {}`, `"metadata": {}, "prompt_number": 1`, 1)), `cell 2: key "prompt_number" is not in the schema (cell_type execution_count id metadata outputs source)`},
		{nb(md, strings.Replace(code, `"id": "b"`, `"id": "a"`, 1)), `cell 2: id "a" is cell 1's too`},
		{nb(md, strings.Replace(code, `"id": "b"`, `"id": "b c"`, 1)), `cell 2: id "b c" is not 1 to 64 of [a-zA-Z0-9_-]`},
		{nb(md, strings.Replace(code, `"cell_type": "code"`, `"cell_type": "heading"`, 1)), `cell 2: cell_type "heading", want markdown, code or raw`},
		{nb(strings.Replace(md, `\n", "first"`, `", "first"`, 1), code), `cell 1: source line 1 does not end with a newline: "go run ./cmd/traceduck demo"`},
		{nb(code, md), `cell 1 is not a markdown cell that says how to create the database (go run ./cmd/traceduck demo)`},
		{nb(md, strings.Replace(code, `, read_only=True`, ``, 1)), `no duckdb.connect(DB, read_only=True)`},
	} {
		err := checkNotebook([]byte(tc.notebook))
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s:\ngot  %v\nwant %s", tc.notebook, err, tc.want)
		}
	}
}

// SQL that a test could not run is refused: in a variable, an f-string,
// con.execute, or with a backslash.
func TestNotebookStatementsConvention(t *testing.T) {
	nb := func(src string) []byte {
		s, _ := json.Marshal(src)
		return []byte(`{"cells": [{"cell_type": "code", "source": ` + string(s) + `}]}`)
	}
	got, err := notebookStatements(nb("a = con.sql(\"\"\"\nSELECT 1\n\"\"\").df()\ncon.sql(  \"\"\"SET VARIABLE x = 2\"\"\" )"))
	if err != nil || strings.Join(got, "|") != "SELECT 1|SET VARIABLE x = 2" {
		t.Errorf("two statements: %q, %v", got, err)
	}
	for _, tc := range []struct{ src, want string }{
		{`q = "SELECT 1"` + "\ncon.sql(q)", `cell 1: 1 database calls, 0 of them con.sql("""SQL""") with the SQL written out`},
		{`con.sql(f"""SELECT {x}""")`, `cell 1: 1 database calls, 0 of them con.sql("""SQL""") with the SQL written out`},
		{`con.sql("""SELECT 1""")` + "\n" + `con.execute("""SELECT 2""")`, `cell 1: 2 database calls, 1 of them con.sql("""SQL""") with the SQL written out`},
		{`con.sql("""SELECT 'a\nb'""")`, "cell 1: a backslash in the SQL, which Python reads as an escape:\nSELECT 'a\\nb'"},
		{`print(1)`, `no con.sql("""...""") statement`},
	} {
		_, err := notebookStatements(nb(tc.src))
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s:\ngot  %v\nwant %s", tc.src, err, tc.want)
		}
	}
}
