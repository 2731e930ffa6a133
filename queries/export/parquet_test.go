package export_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	_ "github.com/traceduck/traceduck/ingest/all"
	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/queries"
	"github.com/traceduck/traceduck/queries/export"
	"github.com/traceduck/traceduck/schema"
)

// sampleDB ingests runs of five formats, so that every table has rows
// (aggregations and histograms from DTrace's aggregation output).
func sampleDB(t *testing.T) *schema.DB {
	t.Helper()
	db := dbtest.Open(t)
	for _, p := range []string{
		"../../samples/btf/rtos-2core.btf",
		"../../samples/qnx/neutrino-2cpu.txt",
		"../../samples/baget/minirtos-2cpu.blog",
		"../../samples/dtrace/sched-syscalls.txt",
		"../../ingest/dtrace/testdata/aggregations/default.txt",
	} {
		// Two runs of one system, for system_events.
		opt := ingest.Options{}
		if strings.Contains(p, "samples/btf") || strings.Contains(p, "samples/qnx") {
			opt.Tags = [][2]string{{"system", "rig"}}
		}
		dbtest.Ingest(t, db, p, opt)
	}
	// The overhead model's parameter tables, the ones without a run_id.
	params, err := queries.ReadOverheadParams("")
	if err != nil {
		t.Fatal(err)
	}
	if err := params.Load(context.Background(), db.SQL()); err != nil {
		t.Fatal(err)
	}
	return db
}

// readDataset opens the dataset in dir as its views.sql tells a user to.
func readDataset(t *testing.T, dir string) *sql.DB {
	t.Helper()
	pq, err := export.OpenDataset(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pq.Close() })
	return pq
}

// relations lists the tables and views a database has, but the tables
// that store the rows of events and state_intervals (a dataset has the
// views' rows instead).
func relations(t *testing.T, db *sql.DB) []string {
	t.Helper()
	storage := map[string]bool{}
	for _, n := range schema.StorageTables() {
		storage[n] = true
	}
	var out []string
	for _, n := range strings.Fields(dbtest.Query(t, db, `
		SELECT table_name FROM information_schema.tables
		WHERE table_schema = 'main' AND table_catalog = current_database() ORDER BY table_name`)) {
		if !storage[n] {
			out = append(out, n)
		}
	}
	return out
}

// contents returns a relation's rows in a canonical order, doubles to nine
// significant digits (a sum computed in another order may differ in the
// last bit), restricted to the runs listed when it has a run_id.
func contents(t *testing.T, db *sql.DB, rel string, runs string) string {
	t.Helper()
	desc, err := db.Query("DESCRIBE SELECT * FROM " + rel)
	if err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
	var exprs []string
	hasRun := false
	for desc.Next() {
		var name, typ string
		var null, key, def, extra sql.NullString
		if err := desc.Scan(&name, &typ, &null, &key, &def, &extra); err != nil {
			t.Fatal(err)
		}
		q := `"` + name + `"`
		switch {
		case typ == "DOUBLE" || typ == "FLOAT":
			q = "printf('%.9g', " + q + ")"
		case strings.HasSuffix(typ, "DOUBLE[]"):
			q = "list_transform(" + q + ", x -> printf('%.9g', x))"
		}
		exprs = append(exprs, q)
		hasRun = hasRun || name == "run_id"
	}
	desc.Close()
	where := ""
	if hasRun {
		where = " WHERE run_id IN (" + runs + ")"
	}
	return dbtest.Query(t, db, "SELECT "+strings.Join(exprs, ", ")+" FROM "+rel+where+" ORDER BY ALL")
}

// TestParquetRoundTrip exports every run and reads the dataset back with
// DuckDB through views.sql: every table and every view has the rows it has
// in the database.
func TestParquetRoundTrip(t *testing.T) {
	ctx := context.Background()
	db := sampleDB(t)
	dir := filepath.Join(t.TempDir(), "dataset")
	var maps []export.Mapping
	for id := int32(1); id <= 5; id++ {
		maps = append(maps, export.Mapping{From: id, To: id})
	}
	res, err := export.Parquet(ctx, db.SQL(), dir, maps)
	if err != nil {
		t.Fatal(err)
	}
	if res.Files == 0 || res.Bytes == 0 {
		t.Fatalf("wrote %d files, %d bytes", res.Files, res.Bytes)
	}
	if _, err := os.Stat(filepath.Join(dir, "events", "run_id=3", "part-0.parquet")); err != nil {
		t.Errorf("the layout the issue names: %v", err)
	}
	pq := readDataset(t, dir)

	want, got := relations(t, db.SQL()), relations(t, pq)
	if strings.Join(want, " ") != strings.Join(got, " ") {
		t.Fatalf("relations:\ndatabase %v\ndataset  %v", want, got)
	}
	nonEmpty := 0
	for _, rel := range want {
		w, g := contents(t, db.SQL(), rel, "1,2,3,4,5"), contents(t, pq, rel, "1,2,3,4,5")
		if w != g {
			t.Errorf("%s differs:\n%s", rel, dbtest.Diff(w, g))
		}
		if w != "" {
			nonEmpty++
		} else {
			t.Logf("%s is empty on the samples", rel)
		}
	}
	// The comparison means something only when the relations hold rows:
	// all but the four tables of an overhead specification (overhead --spec).
	if nonEmpty < len(want)-4 {
		t.Errorf("only %d of %d tables and views hold rows", nonEmpty, len(want))
	}
	for _, table := range []string{"events", "aggregations", "histograms", "state_intervals"} {
		if n := dbtest.Query(t, pq, "SELECT count(*) > 0 FROM "+table); n != "true\n" {
			t.Errorf("dataset's %s is empty", table)
		}
	}
}

// TestParquetSubsetAndRenumber exports two runs under new ids, then a
// third into the same dataset: the dataset holds the three, renumbered,
// with the database's rows.
func TestParquetSubsetAndRenumber(t *testing.T) {
	ctx := context.Background()
	db := sampleDB(t)
	dir := t.TempDir()
	if _, err := export.Parquet(ctx, db.SQL(), dir, []export.Mapping{{From: 1, To: 10}, {From: 3, To: 11}}); err != nil {
		t.Fatal(err)
	}
	id, err := export.ClaimRunID(dir)
	if err != nil || id != 12 {
		t.Fatalf("ClaimRunID = %d, %v; want 12", id, err)
	}
	if _, err := export.Parquet(ctx, db.SQL(), dir, []export.Mapping{{From: 2, To: id}}); err != nil {
		t.Fatal(err)
	}
	ids, err := export.DatasetRuns(dir)
	if err != nil || fmt.Sprint(ids) != "[10 11 12]" {
		t.Fatalf("DatasetRuns = %v, %v", ids, err)
	}
	pq := readDataset(t, dir)
	for _, c := range []struct{ from, to int }{{1, 10}, {3, 11}, {2, 12}} {
		for _, table := range []string{"runs", "objects", "events", "state_intervals", "eco_triples"} {
			q := fmt.Sprintf("SELECT * EXCLUDE (run_id) FROM %s WHERE run_id = %%d ORDER BY ALL", table)
			w, g := dbtest.Query(t, db.SQL(), fmt.Sprintf(q, c.from)), dbtest.Query(t, pq, fmt.Sprintf(q, c.to))
			if w != g || w == "" {
				t.Errorf("%s of run %d (dataset run %d) differs or is empty:\n%s", table, c.from, c.to, dbtest.Diff(w, g))
			}
		}
	}
	// A view reads across the renumbered runs.
	if got := dbtest.Query(t, pq, "SELECT list(DISTINCT run_id ORDER BY run_id) FROM state_summary"); got != "[10 11 12]\n" {
		t.Errorf("state_summary's runs = %s", got)
	}
}

// TestClaimRunIDConcurrent: jobs claiming ids at once never share one.
func TestClaimRunIDConcurrent(t *testing.T) {
	dir := t.TempDir()
	const jobs = 16
	ids := make(chan int32, jobs)
	errs := make(chan error, jobs)
	for i := 0; i < jobs; i++ {
		go func() {
			id, err := export.ClaimRunID(dir)
			ids <- id
			errs <- err
		}()
	}
	seen := map[int32]bool{}
	for i := 0; i < jobs; i++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
		id := <-ids
		if seen[id] {
			t.Errorf("run_id %d claimed twice", id)
		}
		seen[id] = true
	}
	for id := int32(1); id <= jobs; id++ {
		if !seen[id] {
			t.Errorf("run_id %d not claimed; claimed %v", id, seen)
		}
	}
}
