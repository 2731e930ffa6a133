package export_test

import (
	"bytes"
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
	"github.com/traceduck/traceduck/internal/tracegen"
	"github.com/traceduck/traceduck/queries"
	"github.com/traceduck/traceduck/queries/align"
	"github.com/traceduck/traceduck/queries/export"
	"github.com/traceduck/traceduck/queries/report"
	"github.com/traceduck/traceduck/schema"
)

// sampleDB ingests runs of five formats, so that every table has rows
// (aggregations and histograms from DTrace's aggregation output), as run
// 6 a generated BTF trace with a priority inversion (priorities and
// priority_inversions), as run 7 a generated TOPPERS/ASP log
// (service_calls), and as runs 8 and 9 two generated Baget machines of
// one system that exchanged messages, their clocks aligned (clocks,
// system_messages).
func sampleDB(t *testing.T) *schema.DB {
	t.Helper()
	db := dbtest.Open(t)
	db.SetSummarize(report.Summarize) // the report's summaries, as traceduck ingests
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
			// their state trees' unknown percentiles left to the view,
			// as an older traceduck wrote them: state_tree_targets
			// round-trips too
			opt.TreeTargets = true
		}
		dbtest.Ingest(t, db, p, opt)
	}
	inv := filepath.Join(t.TempDir(), "inversion.btf")
	f, err := os.Create(inv)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tracegen.WriteBTF(f, tracegen.Config{Events: 5_000, Cores: 1, Tasks: 2, Seed: 1, Inversion: true}); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	dbtest.Ingest(t, db, inv, ingest.Options{})
	// Run 7: a generated TOPPERS/ASP log, for its service calls.
	asp, res := filepath.Join(t.TempDir(), "asp.log"), filepath.Join(t.TempDir(), "asp.res")
	var logBuf, resBuf bytes.Buffer
	if _, err := tracegen.WriteTLV(&logBuf, &resBuf, tracegen.Config{Events: 3_000, Cores: 1, Tasks: 3, Seed: 1}, tracegen.TOPPERSASP); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(asp, logBuf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(res, resBuf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	dbtest.Ingest(t, db, asp, ingest.Options{Format: "toppers-asp", Params: map[string]string{"resources": res}})
	ms, _, err := tracegen.GenerateBagetSystem([]tracegen.BagetConfig{{Events: 500, Seed: 1}, {Events: 500, Seed: 2, Clock: tracegen.BagetClock{OffsetNS: 20_000}}})
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range ms {
		desc, log := filepath.Join(t.TempDir(), "minirtos.xml"), filepath.Join(t.TempDir(), fmt.Sprintf("node%d.blog", i))
		if err := os.WriteFile(desc, m.Description, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(log, m.Log, 0o644); err != nil {
			t.Fatal(err)
		}
		dbtest.Ingest(t, db, log, ingest.Options{Format: "baget", Tags: [][2]string{{"system", "net"}}, Params: map[string]string{"description": desc}})
	}
	clocks, err := align.System(context.Background(), db, "net", align.SystemOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.SetClocks(context.Background(), clocks); err != nil {
		t.Fatal(err)
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
	db := sampleDB(t)
	dir := filepath.Join(t.TempDir(), "dataset")
	res := exportRuns(t, db.SQL(), dir, 1, 2, 3, 4, 5, 6, 7, 8, 9)
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
		w, g := contents(t, db.SQL(), rel, "1,2,3,4,5,6,7,8,9"), contents(t, pq, rel, "1,2,3,4,5,6,7,8,9")
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
	// all but the four tables of an overhead specification (overhead --spec),
	// the table of measured overheads (overhead --measured),
	// sched_fallback and the view sched_fallback_objects (no sample has an
	// object whose scheduling rows are left to the reference).
	if nonEmpty < len(want)-7 {
		t.Errorf("only %d of %d tables and views hold rows", nonEmpty, len(want))
	}
	for _, table := range []string{"events", "aggregations", "histograms", "state_intervals"} {
		if n := dbtest.Query(t, pq, "SELECT count(*) > 0 FROM "+table); n != "true\n" {
			t.Errorf("dataset's %s is empty", table)
		}
	}
}

// exportRuns exports runs of db into the dataset at dir and checks that
// each kept its run_id.
func exportRuns(t *testing.T, db *sql.DB, dir string, runs ...int32) export.ParquetResult {
	t.Helper()
	w, err := export.NewWriter(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	placed, res, err := w.Export(context.Background(), db, runs)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range placed {
		if p.From != p.To {
			t.Fatalf("run %d written as run %d", p.From, p.To)
		}
	}
	return res
}

// TestParquetUserWay reads a dataset as docs/export.md tells a DuckDB
// user to (file_search_path, then the text of views.sql), and as
// OpenDataset does: the same runs.
func TestParquetUserWay(t *testing.T) {
	db := sampleDB(t)
	dir := filepath.Join(t.TempDir(), "dataset")
	exportRuns(t, db.SQL(), dir, 1, 3)
	text, err := os.ReadFile(filepath.Join(dir, export.ViewsFile))
	if err != nil {
		t.Fatal(err)
	}
	user, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer user.Close()
	user.SetMaxOpenConns(1)
	if _, err := user.Exec("SET file_search_path = " + queries.Literal(dir)); err != nil {
		t.Fatal(err)
	}
	if _, err := user.Exec(string(text)); err != nil {
		t.Fatal(err)
	}
	const q = "SELECT run_id, count(*) FROM state_summary GROUP BY run_id ORDER BY run_id"
	got, want := dbtest.Query(t, user, q), dbtest.Query(t, readDataset(t, dir), q)
	if got != want || !strings.HasPrefix(got, "1 | ") || !strings.Contains(got, "\n3 | ") {
		t.Errorf("the user's way:\n%s\nOpenDataset:\n%s", got, want)
	}
}

// TestParquetKeepAndRenumber: runs keep their ids; a second database's
// runs that the dataset holds under their ids as other traces go to new
// ids, its runs of traces the dataset holds replace those (the same
// sha256); exporting the first database again replaces its own runs and
// touches no other.
func TestParquetKeepAndRenumber(t *testing.T) {
	ctx := context.Background()
	a := sampleDB(t)
	dir := t.TempDir()
	exportRuns(t, a.SQL(), dir, 1, 3)

	// b: run 1 the trace of a's run 2, run 2 the trace of a's run 3, run
	// 3 the trace of a's run 1 again.
	b := dbtest.Open(t)
	for _, p := range []string{"../../samples/qnx/neutrino-2cpu.txt", "../../samples/baget/minirtos-2cpu.blog", "../../samples/btf/rtos-2core.btf"} {
		dbtest.Ingest(t, b, p, ingest.Options{})
	}
	w, err := export.NewWriter(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	placed, _, err := w.Export(ctx, b.SQL(), []int32{1, 2, 3})
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range placed {
		s := fmt.Sprintf("%d->%d", p.From, p.To)
		if p.Replaced {
			s += " replaced"
		}
		if p.Over != nil {
			s += fmt.Sprintf(" over %d (%s)", p.Over.ID, p.Over.Name)
		}
		got = append(got, s)
	}
	// b's run 1 (neutrino) finds another trace under its id (a's run 1):
	// a new id, one above the dataset's and the ones the others take; b's
	// run 2 (minirtos) replaces the dataset's run 3, the same trace; b's
	// run 3 (rtos-2core) finds another trace under its id and replaces the
	// dataset's run 1, the same trace.
	if want := "1->4 over 1 (rtos-2core), 2->3 replaced, 3->1 replaced over 3 (minirtos-2cpu)"; strings.Join(got, ", ") != want {
		t.Errorf("placed %s\nwant   %s", strings.Join(got, ", "), want)
	}
	const q = "SELECT run_id, name, format FROM runs ORDER BY run_id"
	if got := dbtest.Query(t, readDataset(t, dir), q); got != "1 | rtos-2core | btf\n3 | minirtos-2cpu | baget\n4 | neutrino-2cpu | qnx\n" {
		t.Errorf("dataset's runs:\n%s", got)
	}
	// a again: its runs keep their ids, replacing themselves.
	exportRuns(t, a.SQL(), dir, 1, 3)
	if got := dbtest.Query(t, readDataset(t, dir), q); got != "1 | rtos-2core | btf\n3 | minirtos-2cpu | baget\n4 | neutrino-2cpu | qnx\n" {
		t.Errorf("dataset's runs after a again:\n%s", got)
	}
}

// TestOpenDatasetTables: a dataset opened with some tables only has
// them, with the rows OpenDataset gives, and the glob macros; all() then
// gives everything else, as OpenDataset does.
func TestOpenDatasetTables(t *testing.T) {
	ctx := context.Background()
	db := sampleDB(t)
	dir := filepath.Join(t.TempDir(), "dataset")
	exportRuns(t, db.SQL(), dir, 1, 2, 3)
	whole := readDataset(t, dir)
	lite, all, err := export.OpenDatasetTables(ctx, dir, "runs", "report_values")
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	for _, rel := range []string{"runs", "report_values"} {
		if w, g := contents(t, whole, rel, "1,2,3"), contents(t, lite, rel, "1,2,3"); w != g || w == "" {
			t.Errorf("%s differs:\n%s", rel, dbtest.Diff(w, g))
		}
	}
	if got := dbtest.Query(t, lite, "SELECT regexp_full_match('Task_1', glob_regex('Task_*'))"); got != "true\n" {
		t.Errorf("glob_regex: %s", got)
	}
	for _, rel := range []string{"events", "state_summary", "report_summaries"} {
		if _, err := lite.Exec("SELECT count(*) FROM " + rel); err == nil {
			t.Errorf("%s is there before all()", rel)
		}
	}
	conn, err := lite.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := all(ctx, conn); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	want, got := relations(t, whole), relations(t, lite)
	if strings.Join(want, " ") != strings.Join(got, " ") {
		t.Fatalf("relations after all():\nwhole %v\nlite  %v", want, got)
	}
	if w, g := contents(t, whole, "state_summary", "1,2,3"), contents(t, lite, "state_summary", "1,2,3"); w != g {
		t.Errorf("state_summary differs:\n%s", dbtest.Diff(w, g))
	}
}
