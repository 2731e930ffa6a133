package report_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/tracegen"
	"github.com/traceduck/traceduck/queries"
	"github.com/traceduck/traceduck/queries/report"
	"github.com/traceduck/traceduck/schema"
)

// BenchmarkReport100Runs times a whole report (metrics, thresholds, run
// details, the HTML, JSON and Markdown outputs) over 100 runs of 100k
// events each: one generated 4-core system of 12 tasks, one task a little
// slower in each run. Generating and ingesting the runs (a few minutes)
// is outside the timing; TRACEDUCK_BENCH_REPORT_DB=FILE keeps the
// database in FILE from one run to the next:
//
//	go test -run XXX -bench Report100Runs -benchtime 1x ./queries/report/
func BenchmarkReport100Runs(b *testing.B) {
	ctx := context.Background()
	path := os.Getenv("TRACEDUCK_BENCH_REPORT_DB")
	if path == "" {
		path = filepath.Join(b.TempDir(), "runs.duckdb")
	}
	_, statErr := os.Stat(path)
	db, err := schema.Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if err := queries.Install(ctx, db.SQL()); err != nil {
		b.Fatal(err)
	}
	if statErr != nil {
		writeBenchRuns(b, db)
	}
	th, err := report.ParseThreshold("response_p99 > +10%")
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rep, err := report.Build(ctx, db.SQL(), report.Options{Database: "runs.duckdb", Thresholds: []report.Threshold{th}})
		if err != nil {
			b.Fatal(err)
		}
		for _, write := range []func(io.Writer) error{rep.WriteHTML, rep.WriteJSON, rep.WriteMarkdown} {
			if err := write(io.Discard); err != nil {
				b.Fatal(err)
			}
		}
		if len(rep.Runs) != 100 || !rep.Crossed() {
			b.Fatalf("%d runs, crossed %v", len(rep.Runs), rep.Crossed())
		}
	}
}

// writeBenchRuns generates and ingests the 100 runs.
func writeBenchRuns(b *testing.B, db *schema.DB) {
	b.Helper()
	cfg := tracegen.Config{Events: 100_000, Cores: 4, Tasks: 12, Seed: 1}
	probe, err := tracegen.WriteBTF(io.Discard, tracegen.Config{Events: 100, Cores: cfg.Cores, Tasks: cfg.Tasks, Seed: cfg.Seed})
	if err != nil {
		b.Fatal(err)
	}
	var tasks []string
	for name := range probe.Running {
		if name != "ISR_Tick" {
			tasks = append(tasks, name)
		}
	}
	sort.Strings(tasks)
	dir := b.TempDir()
	for i := 0; i < 100; i++ {
		c := cfg
		// Each run differs: one task 0.2% slower per run, the last runs
		// past a +10% threshold.
		c.ExecScale = map[string]float64{tasks[0]: 1 + float64(i)/500}
		trace := filepath.Join(dir, "run.btf")
		f, err := os.Create(trace)
		if err != nil {
			b.Fatal(err)
		}
		_, err = tracegen.WriteBTF(f, c)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			b.Fatal(err)
		}
		if _, err := ingest.Path(context.Background(), db, trace, ingest.Options{Name: fmt.Sprintf("r%03d", i+1)}); err != nil {
			b.Fatal(err)
		}
	}
}
