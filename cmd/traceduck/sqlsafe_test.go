package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// The names of sqlSafeTrace's tasks: each could end or bend a SQL literal
// or statement if it were pasted into SQL text. bad\xff\xfe is stored as
// bad\uFFFD (ingest repairs text that is not UTF-8).
var sqlNames = []string{
	"O'Brien",
	"x';DROP TABLE runs;--",
	"semi;colon",
	"dash--dash",
	`"dq"`,
	`back\slash`,
	"bad\xff\xfe",
}

const sqlRunName = "run'; DROP TABLE objects; --"

// sqlSafeTrace is a BTF trace in which each task of sqlNames runs once on
// Core_0 for 100 ns.
func sqlSafeTrace() []byte {
	var b strings.Builder
	b.WriteString("#version 2.1.4\n#timeScale ns\n")
	for i, n := range sqlNames {
		t := 1000 * (i + 1)
		fmt.Fprintf(&b, "%d, Stim, 0, T, %s, 0, activate\n%d, Core_0, 0, T, %s, 0, start\n%d, Core_0, 0, T, %s, 0, terminate\n", t, n, t, n, t+100, n)
	}
	return []byte(b.String())
}

// TestStringsReachSQLSafely ingests tasks, a run name and tags that hold
// quotes, semicolons, "--", backslashes and bytes that are not UTF-8, and
// selects them through every command that takes a name, a tag or a
// selector: each is found as data (the rows it names, no more), and no
// table was touched.
func TestStringsReachSQLSafely(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	trace := writeFile(t, dir, "names.btf", sqlSafeTrace())
	db := filepath.Join(dir, "t.duckdb")
	mustRun(t, dir, nil, "ingest", "--db", db, "--name", sqlRunName,
		"--tag", "owner=O'Brien", "--tag", "note=a;b--c", trace)

	stored := make([]string, len(sqlNames))
	for i, n := range sqlNames {
		stored[i] = strings.ToValidUTF8(n, "\uFFFD")
	}
	want := append([]string(nil), stored...)
	sort.Strings(want)

	// query: the names and tags are in the tables as they were given.
	got := csvColumn(t, mustRun(t, dir, nil, "query", "--db", db, "--output", "csv", "SELECT name FROM objects WHERE kind = 'task' ORDER BY name"), 0)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("task names %q, want %q", got, want)
	}
	if got := scalar(t, dir, db, "SELECT name || '|' || (tags->>'owner') || '|' || (tags->>'note') FROM runs"); got != sqlRunName+"|O'Brien|a;b--c" {
		t.Errorf("run name and tags %q", got)
	}

	// stats: every task in the tree.
	out := mustRun(t, dir, nil, "stats", "--db", db, "--order", "oec", "--output", "csv")
	for _, n := range stored {
		if !strings.Contains(out, n) {
			t.Errorf("stats: %q missing", n)
		}
	}

	for _, n := range stored {
		// events: a mark naming the object selects its three events.
		rows := csvMaps(t, mustRun(t, dir, nil, "events", "--db", db, "--output", "csv", "--include", "object="+n))
		if len(rows) != 3 {
			t.Errorf("events --include object=%s: %d events, want 3", n, len(rows))
		}
		// states: the object's running interval.
		rows = csvMaps(t, mustRun(t, dir, nil, "states", "--db", db, "--output", "csv", "--object", n, "--state", "running"))
		if len(rows) != 1 || rows[0]["object"] != n || rows[0]["total_ns"] != "100" {
			t.Errorf("states --object %s: %v", n, rows)
		}
		// hist: one duration of 100 ns.
		rows = csvMaps(t, mustRun(t, dir, nil, "hist", "--db", db, "--output", "csv", "--state", "running", "--object", n))
		total := 0
		for _, r := range rows {
			c, _ := strconv.Atoi(r["count"])
			total += c
		}
		if total != 1 {
			t.Errorf("hist --state running --object %s: %d values, want 1: %v", n, total, rows)
		}
	}

	// report and export select the run by its name and by a tag.
	report := filepath.Join(dir, "r.json")
	mustRun(t, dir, nil, "report", "--db", db, "--runs", sqlRunName, "--baseline", sqlRunName, "--json", report, "--hist", "running:O'Brien")
	if b := readFile(t, report); !json.Valid(b) || !strings.Contains(string(b), `O'Brien`) {
		t.Errorf("report: %.300s", b)
	}
	mustRun(t, dir, nil, "export", "--db", db, "--parquet", filepath.Join(dir, "ds"), "--runs", "owner=O'Brien")
	if _, err := os.Stat(filepath.Join(dir, "ds", "objects", "run_id=1")); err != nil {
		t.Errorf("export --runs owner=O'Brien: %v", err)
	}
	chrome := mustRun(t, dir, nil, "export", "--db", db, "--run", "1", "--chrome", "-")
	if !json.Valid([]byte(chrome)) {
		t.Errorf("export --chrome: not JSON")
	}
	for _, n := range stored {
		b, _ := json.Marshal(n)
		if !strings.Contains(chrome, strings.Trim(string(b), `"`)) {
			t.Errorf("export --chrome: %s missing", b)
		}
	}

	// Nothing was dropped or changed.
	if got := scalar(t, dir, db, "SELECT (SELECT count(*) FROM runs) || '/' || (SELECT count(*) FROM objects WHERE kind = 'task') || '/' || (SELECT count(*) FROM events)"); got != "1/7/21" {
		t.Errorf("runs/tasks/events after the commands: %s, want 1/7/21", got)
	}
}

// csvMaps reads CSV output into maps by column name.
func csvMaps(t *testing.T, out string) []map[string]string {
	t.Helper()
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatalf("%v in %q", err, out)
	}
	if len(recs) == 0 {
		return nil
	}
	var rows []map[string]string
	for _, r := range recs[1:] {
		m := map[string]string{}
		for i, c := range recs[0] {
			m[c] = r[i]
		}
		rows = append(rows, m)
	}
	return rows
}

// csvColumn is column i of CSV output, without the header.
func csvColumn(t *testing.T, out string, i int) []string {
	t.Helper()
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatalf("%v in %q", err, out)
	}
	var col []string
	for _, r := range recs[1:] {
		col = append(col, r[i])
	}
	return col
}
