package report_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	_ "github.com/traceduck/traceduck/ingest/all"
	"github.com/traceduck/traceduck/internal/chromegen"
	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/internal/qnxenc"
	"github.com/traceduck/traceduck/internal/tracegen"
	"github.com/traceduck/traceduck/queries"
	"github.com/traceduck/traceduck/queries/report"
	"github.com/traceduck/traceduck/schema"
)

// everyFormat writes a generated trace of each format (two BTF runs of
// different seeds and sizes, a run cut short) and returns its path and
// how to ingest it.
func everyFormat(t testing.TB) []genTrace {
	t.Helper()
	dir := t.TempDir()
	type gen = genTrace
	var out []gen
	file := func(name string, write func(w io.Writer) error) string {
		var b bytes.Buffer
		if err := write(&b); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []tracegen.Config{{Events: 20_000, Cores: 2, Tasks: 6, Seed: 3}, {Events: 7_001, Cores: 3, Tasks: 9, Seed: 8}} {
		c := c
		out = append(out, gen{fmt.Sprintf("btf-%d", c.Seed), file(fmt.Sprintf("gen%d.btf", c.Seed), func(w io.Writer) error {
			_, err := tracegen.WriteBTF(w, c)
			return err
		}), ingest.Options{Format: "btf"}})
	}
	for _, kev := range []bool{false, true} {
		h, evs, _, err := tracegen.GenerateQNX(tracegen.QNXConfig{Events: 15_000, CPUs: 2, Seed: 5})
		if err != nil {
			t.Fatal(err)
		}
		name, enc := "gen.txt", qnxenc.WriteText
		if kev {
			name, enc = "gen.kev", qnxenc.WriteKev
		}
		out = append(out, gen{name, file(name, func(w io.Writer) error { return enc(w, h, evs) }), ingest.Options{}})
	}
	for _, style := range []tracegen.TLVStyle{tracegen.TLVStandard, tracegen.TOPPERSASP, tracegen.TOPPERSFMP} {
		cores := 2
		if style == tracegen.TOPPERSASP {
			cores = 1
		}
		var res bytes.Buffer
		log := file("gen-"+style.String()+".log", func(w io.Writer) error {
			_, err := tracegen.WriteTLV(w, &res, tracegen.Config{Events: 10_000, Cores: cores, Tasks: 6, Seed: 3}, style)
			return err
		})
		resPath := file("gen-"+style.String()+".res", func(w io.Writer) error { _, err := w.Write(res.Bytes()); return err })
		out = append(out, gen{style.String(), log, ingest.Options{Format: style.String(), Params: map[string]string{"resources": resPath}}})
	}
	log, desc, _, err := tracegen.GenerateBaget(tracegen.BagetConfig{Events: 5000, CPUs: 3, Seed: 11, ABI: "le32"})
	if err != nil {
		t.Fatal(err)
	}
	d := file("desc.xml", func(w io.Writer) error { _, err := w.Write(desc); return err })
	out = append(out, gen{"baget", file("gen.blog", func(w io.Writer) error { _, err := w.Write(log); return err }),
		ingest.Options{Format: "baget", Params: map[string]string{"description": d}}})
	out = append(out, gen{"dtrace", file("gen.d.txt", func(w io.Writer) error {
		_, err := tracegen.WriteDTrace(w, tracegen.DTraceConfig{Lines: 8000, CPUs: 3, Processes: 3, Threads: 2, Seed: 31, Gap: true})
		return err
	}), ingest.Options{Format: "dtrace"}})
	out = append(out, gen{"ftrace", file("gen.trace", func(w io.Writer) error {
		_, err := tracegen.WriteFtrace(w, tracegen.FtraceConfig{Lines: 8000, CPUs: 3, Processes: 3, Threads: 2, Seed: 7, Waking: true})
		return err
	}), ingest.Options{Format: "ftrace"}})
	out = append(out, gen{"chrome", file("gen.json", func(w io.Writer) error {
		_, err := chromegen.Write(w, chromegen.Config{Seed: 2024, Tasks: 8})
		return err
	}), ingest.Options{Format: "chrome"}})
	return out
}

// genTrace is a generated trace to ingest.
type genTrace struct {
	name, path string
	opt        ingest.Options
}

// everyFormatDB ingests everyFormat's traces into a database whose
// ingests store the report's summaries.
func everyFormatDB(t testing.TB) *schema.DB {
	t.Helper()
	db := openSummarized(t)
	for _, g := range everyFormat(t) {
		opt := g.opt
		opt.Name = g.name
		dbtest.Ingest(t, db, g.path, opt)
	}
	return db
}

// allHists asks for a histogram of every source.
func allHists(t testing.TB) []report.HistSpec {
	t.Helper()
	var out []report.HistSpec
	for _, s := range []string{"response", "start_delay", "sched_latency", "running", "ready", "waiting", "blocked", "response:*_1*", "running:[A-Z]*"} {
		h, err := report.ParseHistSpec(s)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, h)
	}
	return out
}

// reportJSON builds a report and returns its JSON.
func reportJSON(t testing.TB, db *schema.DB, opt report.Options) string {
	t.Helper()
	rep, err := report.Build(context.Background(), db.SQL(), opt)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := rep.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestSummariesEqualLive: a report that reads the summaries the ingests
// stored says exactly what one that computes every run's summary from
// its tables says, on a run of every format, for every --hist source, a
// few --top and several baselines (runs of each format compared with a
// baseline of theirs).
func TestSummariesEqualLive(t *testing.T) {
	db := everyFormatDB(t)
	var runs, summaries int
	if err := db.SQL().QueryRow(`SELECT (SELECT count(*) FROM runs), (SELECT count(*) FROM report_summaries WHERE version = ?)`,
		report.SummaryVersion()).Scan(&runs, &summaries); err != nil {
		t.Fatal(err)
	}
	if runs != 11 || summaries != runs {
		t.Fatalf("%d runs, %d summaries", runs, summaries)
	}
	th, err := report.ParseThreshold("response_p99 > +10%")
	if err != nil {
		t.Fatal(err)
	}
	for _, opt := range []report.Options{
		{Hists: allHists(t)},
		{Baseline: "btf-8", Top: 3, Thresholds: []report.Threshold{th}},
		{Baseline: "gen.txt", Top: 50},
		{Baseline: "toppers-fmp", Runs: "toppers-asp,toppers-fmp,tlv"},
		{Baseline: "baget"}, {Baseline: "dtrace"}, {Baseline: "ftrace"}, {Baseline: "chrome"},
	} {
		opt.Database = "db"
		stored := reportJSON(t, db, opt)
		opt.Recompute = true
		live := reportJSON(t, db, opt)
		if stored != live {
			t.Errorf("baseline %q, top %d: the report from the stored summaries differs from the live one:\n%s", opt.Baseline, opt.Top, dbtest.Diff(live, stored))
		}
	}
}

// TestSummariesMissingOrStale: the report reads the stored summaries
// (a stored value changed shows), and computes again itself, with the
// same numbers, those it cannot use: of another version (an older
// traceduck's), missing (a run ingested before there were summaries), or
// all of them in a database without the summaries' tables, or opened
// read-only.
func TestSummariesMissingOrStale(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "runs.duckdb")
	db, err := schema.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { db.Close() }()
	if err := queries.Install(ctx, db.SQL()); err != nil {
		t.Fatal(err)
	}
	db.SetSummarize(report.Summarize)
	for i, g := range everyFormat(t)[:4] {
		opt := g.opt
		opt.Name = g.name
		if i == 3 {
			db.SetSummarize(nil) // ingested without a summary
		}
		dbtest.Ingest(t, db, g.path, opt)
	}
	opt := report.Options{Database: "runs.duckdb", Hists: allHists(t)}
	live := func() string {
		o := opt
		o.Recompute = true
		return reportJSON(t, db, o)
	}()
	check := func(what string) {
		t.Helper()
		if got := reportJSON(t, db, opt); got != live {
			t.Errorf("%s: the report differs from the live one:\n%s", what, dbtest.Diff(live, got))
		}
	}
	check("a run without a summary")
	exec := func(q string) {
		t.Helper()
		if _, err := db.SQL().Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// The summaries are what the report reads.
	exec(`UPDATE report_values SET value = value + 1 WHERE run_id = 2 AND metric = 'event_rate'`)
	if got := reportJSON(t, db, opt); got == live {
		t.Fatal("a stored value changed and the report did not change: it does not read the summaries")
	}
	exec(`UPDATE report_summaries SET version = 'older' WHERE run_id = 2`)
	check("a summary of another version")
	exec(`UPDATE report_summaries SET version = NULL WHERE run_id = 1`)
	check("a summary without a version")
	exec(`DELETE FROM report_summaries WHERE run_id = 3`)
	check("a summary missing")

	// A report that stores what it computed: every run then has a summary
	// of this version, which the next report reads.
	current := func() string {
		t.Helper()
		return dbtest.Query(t, db.SQL(), `SELECT run_id, count(*) FROM report_summaries WHERE version = ? GROUP BY run_id ORDER BY run_id`, report.SummaryVersion())
	}
	if got := current(); got != "" {
		t.Fatalf("before: current summaries (run_id | count):\n%s", got)
	}
	store := opt
	store.Store = true
	rep, err := report.Build(ctx, db.SQL(), store)
	if err != nil || rep.StoreErr != nil {
		t.Fatalf("report storing the summaries: %v, %v", err, rep.StoreErr)
	}
	if got := current(); got != "1 | 1\n2 | 1\n3 | 1\n4 | 1\n" {
		t.Fatalf("after: current summaries (run_id | count):\n%s", got)
	}
	if got := dbtest.Query(t, db.SQL(), `SELECT count(*) FROM report_summaries`); got != "4\n" {
		t.Errorf("summaries of another version left: %s", got)
	}
	check("summaries a report stored")
	exec(`UPDATE report_values SET value = value + 1 WHERE run_id = 3 AND metric = 'event_rate'`)
	if got := reportJSON(t, db, opt); got == live {
		t.Fatal("the report does not read the summaries a report stored")
	}

	// A database of a traceduck before the summaries, opened read-only.
	exec(`DROP TABLE report_objects`)
	check("a summary table missing")
	for _, table := range schema.ReportTables() {
		exec("DROP TABLE IF EXISTS " + table)
	}
	check("no summary tables")
	db.Close()
	if db, err = schema.OpenReadOnly(ctx, path); err != nil {
		t.Fatal(err)
	}
	check("no summary tables, read-only")
	rep, err = report.Build(ctx, db.SQL(), store)
	if err != nil || rep.StoreErr == nil {
		t.Errorf("storing into a database without the summaries' tables, read-only: %v, %v", err, rep.StoreErr)
	}
}

// TestSummaryWindowLive: under --from/--to every run is summarized again
// from the window's rows, whatever is stored.
func TestSummaryWindowLive(t *testing.T) {
	db := everyFormatDB(t)
	from := int64(0)
	to := int64(20_000_000)
	opt := report.Options{Database: "db", Window: &report.Window{From: &from, To: &to, Relative: true}, Hists: allHists(t)}
	a := reportJSON(t, db, opt)
	if _, err := db.SQL().Exec(`UPDATE report_values SET value = value + 1`); err != nil {
		t.Fatal(err)
	}
	if b := reportJSON(t, db, opt); a != b {
		t.Errorf("a window read the stored summaries:\n%s", dbtest.Diff(a, b))
	}
	if !strings.Contains(a, `"window": {`) {
		t.Error("no window in the report")
	}
}

// TestSummaryGolden: what a run's stored summary holds, for the first run
// of the regression example. The summary's version changes by itself
// with the SQL that computes it; a change of what the Go code makes of
// the rows needs summaryFormat bumped, or a report would read summaries
// the older code stored as if this code had computed them.
func TestSummaryGolden(t *testing.T) {
	db, _, _ := regressionDB(t)
	var b strings.Builder
	for _, q := range []string{
		`SELECT metric, key, value FROM report_values WHERE run_id = 1 ORDER BY ALL`,
		`SELECT what, object, bucket, count FROM report_hist_buckets WHERE run_id = 1 ORDER BY ALL`,
		`SELECT * EXCLUDE (run_id) FROM report_objects WHERE run_id = 1 ORDER BY rank`,
		`SELECT * EXCLUDE (run_id) FROM report_states WHERE run_id = 1 ORDER BY ALL`,
		`SELECT * EXCLUDE (run_id) FROM report_diagnostics WHERE run_id = 1 ORDER BY rank`,
		`SELECT * EXCLUDE (run_id) FROM report_cpu_load WHERE run_id = 1 ORDER BY ALL`,
	} {
		b.WriteString(dbtest.Query(t, db.SQL(), q))
		b.WriteByte('\n')
	}
	want, err := os.ReadFile("testdata/summary.txt")
	if err == nil && string(want) != b.String() && !*dbtest.Update {
		t.Errorf("testdata/summary.txt differs: if the Go code (not the SQL) changed what a summary holds, bump summaryFormat (summary.go); then run with -update and review the diff:\n%s", dbtest.Diff(string(want), b.String()))
		return
	}
	dbtest.Golden(t, "testdata/summary.txt", b.String())
}

// TestSummaryFailureKeepsRun: a summary that fails (DuckDB out of memory
// on a long run, an interrupt) leaves the run in, without a summary
// (nothing of the failed one is kept), and says why; a report computes
// it.
func TestSummaryFailureKeepsRun(t *testing.T) {
	db := dbtest.Open(t)
	boom := errors.New("out of memory")
	db.SetSummarize(func(ctx context.Context, conn *sql.Conn, id int32) error {
		if err := report.Summarize(ctx, conn, id); err != nil {
			return err
		}
		return boom // after it wrote its rows
	})
	g := everyFormat(t)[0]
	res, err := ingest.Path(context.Background(), db, g.path, g.opt)
	if err != nil || !errors.Is(res.SummaryErr, boom) {
		t.Fatalf("ingest: %v, summary: %v", err, res.SummaryErr)
	}
	counts := "SELECT (SELECT count(*) FROM runs)"
	for _, table := range schema.ReportTables() {
		counts += ", (SELECT count(*) FROM " + table + ")"
	}
	if got := dbtest.Query(t, db.SQL(), counts); got != "1 | 0 | 0 | 0 | 0 | 0 | 0 | 0\n" {
		t.Errorf("runs, then the rows of the summaries' tables: %s", got)
	}
	opt := report.Options{Database: "db", Hists: allHists(t)}
	got := reportJSON(t, db, opt)
	opt.Recompute = true
	if live := reportJSON(t, db, opt); got != live {
		t.Errorf("the report differs from the live one:\n%s", dbtest.Diff(live, got))
	}
}
