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
// slower in each run. The runs are ingested as traceduck ingests them,
// with their report summaries, which the report reads; the sub-benchmark
// live computes every summary again instead (what a report over runs of
// an older traceduck does, and what every report did before the
// summaries). Generating and ingesting the runs (a few minutes) is
// outside the timing; TRACEDUCK_BENCH_REPORT_DB=FILE keeps the database
// in FILE from one run to the next:
//
//	go test -run XXX -bench Report100Runs -benchtime 1x ./queries/report/
func BenchmarkReport100Runs(b *testing.B) {
	benchReport(b, 100, os.Getenv("TRACEDUCK_BENCH_REPORT_DB"))
}

// BenchmarkReport1000Runs is BenchmarkReport100Runs over 1,000 runs, run
// only when TRACEDUCK_BENCH_REPORT1000_DB names the database to keep them
// in: generating and ingesting them took 48 minutes on the 2-core
// development machine.
//
//	TRACEDUCK_BENCH_REPORT1000_DB=/tmp/runs1000.duckdb go test -run XXX -bench Report1000Runs -benchtime 1x -timeout 3h ./queries/report/
func BenchmarkReport1000Runs(b *testing.B) {
	path := os.Getenv("TRACEDUCK_BENCH_REPORT1000_DB")
	if path == "" {
		b.Skip("set TRACEDUCK_BENCH_REPORT1000_DB=FILE to generate (once) and report over 1,000 runs")
	}
	benchReport(b, 1000, path)
}

func benchReport(b *testing.B, runs int, path string) {
	ctx := context.Background()
	if path == "" {
		path = filepath.Join(b.TempDir(), "runs.duckdb")
	}
	db, err := schema.Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if err := queries.Install(ctx, db.SQL()); err != nil {
		b.Fatal(err)
	}
	db.SetSummarize(report.Summarize)
	if err := writeBenchRuns(b, db, runs); err != nil {
		b.Fatal(err)
	}
	th, err := report.ParseThreshold("response_p99 > +10%")
	if err != nil {
		b.Fatal(err)
	}
	for _, live := range []bool{false, true} {
		name := "summaries"
		if live {
			name = "live"
		}
		b.Run(name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				rep, err := report.Build(ctx, db.SQL(), report.Options{Database: "runs.duckdb", Thresholds: []report.Threshold{th}, Recompute: live})
				if err != nil {
					b.Fatal(err)
				}
				for _, write := range []func(io.Writer) error{rep.WriteHTML, rep.WriteJSON, rep.WriteMarkdown} {
					if err := write(io.Discard); err != nil {
						b.Fatal(err)
					}
				}
				if len(rep.Runs) != runs || !rep.Crossed() {
					b.Fatalf("%d runs, crossed %v", len(rep.Runs), rep.Crossed())
				}
			}
		})
	}
}

// writeBenchRuns generates and ingests the runs the database does not
// hold yet (r001, r002, ...: a database kept from an interrupted
// benchmark is completed).
func writeBenchRuns(b *testing.B, db *schema.DB, runs int) error {
	b.Helper()
	var have int
	if err := db.SQL().QueryRow("SELECT count(*) FROM runs").Scan(&have); err != nil {
		return err
	}
	cfg := tracegen.Config{Events: 100_000, Cores: 4, Tasks: 12, Seed: 1}
	probe, err := tracegen.WriteBTF(io.Discard, tracegen.Config{Events: 100, Cores: cfg.Cores, Tasks: cfg.Tasks, Seed: cfg.Seed})
	if err != nil {
		return err
	}
	var tasks []string
	for name := range probe.Running {
		if name != "ISR_Tick" {
			tasks = append(tasks, name)
		}
	}
	sort.Strings(tasks)
	dir := b.TempDir()
	for i := have; i < runs; i++ {
		c := cfg
		// Each run differs: one task 0.2% slower per run, the last runs
		// of each hundred past a +10% threshold; in each further hundred,
		// another task 0.5% slower than in the one before.
		c.ExecScale = map[string]float64{tasks[0]: 1 + float64(i%100)/500}
		if i >= 100 {
			c.ExecScale[tasks[1]] = 1 + float64(i/100)/200
		}
		trace := filepath.Join(dir, "run.btf")
		f, err := os.Create(trace)
		if err != nil {
			return err
		}
		_, err = tracegen.WriteBTF(f, c)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		res, err := ingest.Path(context.Background(), db, trace, ingest.Options{Name: fmt.Sprintf("r%03d", i+1)})
		if err == nil {
			err = res.SummaryErr
		}
		if err != nil {
			return err
		}
		if (i+1)%100 == 0 {
			b.Logf("%d runs ingested", i+1)
		}
	}
	return nil
}

// BenchmarkSummarizeIngest times the ingest of a generated BTF run (the
// benchmark's 4-core system of 12 tasks) with and without the report's
// summary, which the ingest computes in its transaction: the difference
// is what the summary costs an ingest.
//
//	go test -run XXX -bench SummarizeIngest -benchtime 1x -count 3 ./queries/report/
func BenchmarkSummarizeIngest(b *testing.B) {
	for _, events := range []int{100_000, 1_000_000} {
		dir := b.TempDir()
		trace := filepath.Join(dir, "run.btf")
		f, err := os.Create(trace)
		if err != nil {
			b.Fatal(err)
		}
		_, err = tracegen.WriteBTF(f, tracegen.Config{Events: events, Cores: 4, Tasks: 12, Seed: 1})
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			b.Fatal(err)
		}
		for _, summarize := range []bool{false, true} {
			name := fmt.Sprintf("%dk/plain", events/1000)
			if summarize {
				name = fmt.Sprintf("%dk/summary", events/1000)
			}
			b.Run(name, func(b *testing.B) {
				ctx := context.Background()
				for i := 0; i < b.N; i++ {
					b.StopTimer()
					path := filepath.Join(b.TempDir(), "run.duckdb")
					db, err := schema.Open(ctx, path)
					if err != nil {
						b.Fatal(err)
					}
					if err := queries.Install(ctx, db.SQL()); err != nil {
						b.Fatal(err)
					}
					if summarize {
						db.SetSummarize(report.Summarize)
					}
					b.StartTimer()
					res, err := ingest.Path(ctx, db, trace, ingest.Options{})
					if err == nil {
						err = res.SummaryErr
					}
					if err != nil {
						b.Fatal(err)
					}
					b.StopTimer()
					db.Close()
				}
			})
		}
	}
}
