package report

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/traceduck/traceduck/queries"
	"github.com/traceduck/traceduck/schema"
)

// A run's summary is what a report reads of it unless it computes it
// again: the default metrics' values per key (report_values), the
// buckets of every --hist source per object (report_hist_buckets) and
// its section, the objects by running time with their statistics, the
// most frequent diagnostics and the CPU load plot (report_summaries). An
// ingest computes it once (Summarize, in the run's transaction), so that
// a report over 1,000 runs reads 1,000 small summaries instead of
// computing task_instances and sched_latency over every event of every
// run. The same code computes it in a report (computeSummaries) for the
// runs that have none of the report's version: runs of an older
// traceduck, a read-only database, a dataset of older jobs, and every run
// under --from/--to (the window changes every number) or with --top over
// summaryTop.

// summaryFormat numbers the way the Go code of this file, details.go and
// hist.go turns the queries' rows into a summary: change it when the code
// changes what a summary holds (the SQL is hashed into the version by
// itself).
const summaryFormat = 1

// SummaryVersion is the version of the summaries this traceduck writes
// and reads: a hash of everything that computes them, the SQL of the
// views and macros (queries/*.sql), the default metrics, the queries of
// the run sections and histograms, and summaryFormat. A summary of
// another version is computed again by the report.
func SummaryVersion() string { return summaryVersion }

var summaryVersion = func() string {
	h := sha256.New()
	fmt.Fprintf(h, "format %d\ntop %d\ndiagnostics %d\npoints %d\n", summaryFormat, summaryTop, diagTop, plotPoints)
	for _, s := range []string{queries.LibrarySum(), defaultMetricsSQL, metricValuesSQL, topObjectsSQL, stateStatsSQL,
		diagnosticsSQL, spansSQL, cpuLoadSQL, histBucketsSQL} {
		fmt.Fprintf(h, "%d\n%s", len(s), s)
	}
	for _, s := range histSources {
		fmt.Fprintf(h, "%q %d\n%s", s.whats, len(s.sql), s.sql)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}()

// metricValuesSQL computes a metric (%[3]s, named %[2]s) for the runs
// %[4]s into the table %[1]s (run_id, metric, key, value): the rows of
// report_values.
const metricValuesSQL = `INSERT INTO %[1]s
SELECT CAST(run_id AS INTEGER), %[2]s, coalesce(CAST(key AS VARCHAR), ''), CAST(value AS DOUBLE)
FROM (%[3]s
) AS metric WHERE run_id IN %[4]s AND value IS NOT NULL`

// summaryTables are where computeSummaries writes the values and buckets.
type summaryTables struct{ values, buckets string }

// computeSummaries computes the summaries of the runs ids (a SQL list):
// the default metrics' values into t.values, the buckets of the
// histogram sources whats (nil: every one) into t.buckets, and each
// run's section with its keep first objects, returned. The views that
// several of them read (task_instances, sched_latency, sched_stats) must
// be materialized for those runs on conn (materialize).
func computeSummaries(ctx context.Context, conn *sql.Conn, ids string, t summaryTables, whats []string, keep int) (map[int32]*runSummary, error) {
	for _, m := range DefaultMetrics() {
		q := fmt.Sprintf(metricValuesSQL, t.values, queries.Literal(m.Name), m.SQL, ids)
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return nil, fmt.Errorf("%s: metric %s: %w", m.where(), m.Name, err)
		}
	}
	if err := computeBuckets(ctx, conn, t.buckets, ids, whats); err != nil {
		return nil, err
	}
	return computeDetails(ctx, conn, ids, keep)
}

// Summarize computes the summary of run id and stores it (report_values,
// report_hist_buckets, report_summaries). It runs in the run's ingest
// transaction on conn (schema.DB.SetSummarize): once per run, the views
// task_instances, sched_latency and sched_stats computed once for it.
func Summarize(ctx context.Context, conn *sql.Conn, id int32) error {
	var catalog string
	if err := conn.QueryRowContext(ctx, "SELECT current_database()").Scan(&catalog); err != nil {
		return err
	}
	return summarizeInto(ctx, conn, catalog, []int32{id})
}

// summarizeInto computes the summaries of the runs ids and stores them
// in the summaries' tables of catalog, in the caller's transaction.
func summarizeInto(ctx context.Context, conn *sql.Conn, catalog string, ids []int32) error {
	cat := queries.Ident(catalog) + ".main."
	list := idList(ids)
	drop, err := materialize(ctx, conn, catalog, list)
	defer drop()
	if err != nil {
		return err
	}
	sums, err := computeSummaries(ctx, conn, list, summaryTables{cat + schema.TableReportValues, cat + schema.TableReportBuckets}, nil, summaryTop)
	if err != nil {
		return err
	}
	for _, id := range ids {
		s := sums[id]
		if s == nil {
			s = newRunSummary()
		}
		details, err := json.Marshal(s)
		if err != nil {
			return fmt.Errorf("report: the summary of run %d: %w", id, err)
		}
		if _, err := conn.ExecContext(ctx, "INSERT INTO "+cat+schema.TableReportSummaries+" VALUES (?, ?, ?)", id, summaryVersion, string(details)); err != nil {
			return err
		}
	}
	return nil
}

// chunkEvents bounds the events of the runs a report summarizes at once
// (their task_instances and sched_latency are held in temporary tables
// meanwhile): the memory of a report over many runs without summaries
// does not grow with their number.
const chunkEvents = 5_000_000

// chunks splits runs into groups of at most chunkEvents events (a
// longer run alone).
func chunks(runs []Run) [][]int32 {
	var out [][]int32
	var cur []int32
	var n int64
	for _, r := range runs {
		if len(cur) > 0 && n+r.Events > chunkEvents {
			out = append(out, cur)
			cur, n = nil, 0
		}
		cur = append(cur, r.ID)
		n += r.Events
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// storeSummaries computes the summaries of runs and stores them in the
// database of conn, replacing any of another version, a chunk of runs
// per transaction.
func storeSummaries(ctx context.Context, conn *sql.Conn, catalog string, runs []Run) error {
	cat := queries.Ident(catalog) + ".main."
	for _, ids := range chunks(runs) {
		err := func() (err error) {
			if _, err := conn.ExecContext(ctx, "BEGIN TRANSACTION"); err != nil {
				return err
			}
			defer func() {
				if err != nil {
					_, _ = conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
				}
			}()
			for _, t := range summaryTableNames {
				if _, err := conn.ExecContext(ctx, "DELETE FROM "+cat+t+" WHERE run_id IN "+idList(ids)); err != nil {
					return err
				}
			}
			if err := summarizeInto(ctx, conn, catalog, ids); err != nil {
				return err
			}
			_, err = conn.ExecContext(ctx, "COMMIT")
			return err
		}()
		if err != nil {
			return err
		}
	}
	return nil
}

// summaryTableNames are the tables of the stored summaries.
var summaryTableNames = []string{schema.TableReportSummaries, schema.TableReportValues, schema.TableReportBuckets}

// storedSummaries reads the sections of the runs ids that have a summary
// of this version (none when the database or dataset has no summary
// tables: an older traceduck's).
func storedSummaries(ctx context.Context, conn *sql.Conn, cat, ids string) (map[int32]*runSummary, error) {
	out := map[int32]*runSummary{}
	var n int
	if err := conn.QueryRowContext(ctx, `SELECT count(DISTINCT table_name) FROM information_schema.tables
		WHERE table_catalog = current_database() AND table_schema = 'main' AND list_contains(`+queries.LiteralList(summaryTableNames)+`, table_name)`).Scan(&n); err != nil {
		return nil, err
	}
	if n < len(summaryTableNames) {
		return out, nil
	}
	rows, err := conn.QueryContext(ctx, "SELECT run_id, details FROM "+cat+schema.TableReportSummaries+
		" WHERE version = ? AND run_id IN "+ids+" ORDER BY run_id", summaryVersion)
	if err != nil {
		return nil, fmt.Errorf("report: the stored summaries: %w", err)
	}
	defer rows.Close()
	bad := map[int32]bool{}
	for rows.Next() {
		var id int32
		var details sql.NullString
		if err := rows.Scan(&id, &details); err != nil {
			return nil, err
		}
		s := newRunSummary()
		if _, dup := out[id]; dup || !details.Valid || json.Unmarshal([]byte(details.String), s) != nil {
			bad[id] = true // computed again
			continue
		}
		if s.Objects == nil {
			s.Objects = []ObjectStats{}
		}
		if s.States == nil {
			s.States = []StateStats{}
		}
		if s.Diagnostics == nil {
			s.Diagnostics = []DiagRow{}
		}
		out[id] = s
	}
	for id := range bad {
		delete(out, id)
	}
	return out, rows.Err()
}

// idList is run ids as a SQL list: (1, 2, 3), sorted.
func idList(ids []int32) string {
	s := append([]int32(nil), ids...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	parts := make([]string, len(s))
	for i, id := range s {
		parts[i] = strconv.Itoa(int(id))
	}
	return "(" + strings.Join(parts, ", ") + ")"
}
