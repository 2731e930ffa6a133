package report

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/traceduck/traceduck/queries"
	"github.com/traceduck/traceduck/schema"
)

// A run's summary is what a report reads of it unless it computes it
// again: the default metrics' values per key (report_values), the
// buckets of every --hist source per object (report_hist_buckets), and
// its section, the objects by running time with their statistics
// (report_objects, report_states), the most frequent diagnostics
// (report_diagnostics) and the CPU load plot (report_cpu_load);
// report_summaries says it is there, and its version. An ingest computes
// it once (Summarize), so that a report over 1,000 runs reads 1,000 small
// summaries instead of computing its metrics and sections over every
// event of every run. The same code computes it in a report
// (computeSummaries, into temporary tables) for the runs that have none of
// the report's version: runs of an older traceduck, a read-only database,
// a dataset of older jobs, and every run under --from/--to (the window
// changes every number) or with --top over summaryTop.

// summaryFormat numbers the layout of the summaries' tables and what the
// Go code around the queries makes of them: change it when the code
// changes what a summary holds (the SQL is hashed into the version by
// itself).
const summaryFormat = 2

// SummaryVersion is the version of the summaries this traceduck writes
// and reads: a hash of everything that computes them, the SQL of the
// views and macros (queries/*.sql), the default metrics, the queries of
// the run sections and histograms, and summaryFormat. A summary of
// another version is computed again by the report.
func SummaryVersion() string { return summaryVersion }

var summaryVersion = func() string {
	h := sha256.New()
	fmt.Fprintf(h, "format %d\ntop %d\ndiagnostics %d\npoints %d\n", summaryFormat, summaryTop, diagTop, plotPoints)
	for _, s := range []string{queries.LibrarySum(), defaultMetricsSQL, metricValuesSQL, objectsSQL, statesSQL,
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

// summaryTables are the tables a summary is computed into: the stored
// ones (report_values, ...) or their live twins (liveTables), by the
// name of the stored one.
type summaryTables map[string]string

// computeSummaries computes the summaries of the runs ids (a SQL list)
// into t: the default metrics' values, the buckets of the histogram
// sources whats (nil: every one), and each run's section with its keep
// first objects. The views that several of them read (sched_stats, and
// under a window task_instances and sched_latency) must be materialized
// for those runs on conn (materialize).
func computeSummaries(ctx context.Context, conn *sql.Conn, ids string, t summaryTables, whats []string, keep int) error {
	for _, m := range DefaultMetrics() {
		q := fmt.Sprintf(metricValuesSQL, t[schema.TableReportValues], queries.Literal(m.Name), m.SQL, ids)
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: metric %s: %w", m.where(), m.Name, err)
		}
	}
	if err := computeBuckets(ctx, conn, t[schema.TableReportBuckets], ids, whats); err != nil {
		return err
	}
	return computeDetails(ctx, conn, ids, detailTables{t[schema.TableReportObjects], t[schema.TableReportStates],
		t[schema.TableReportDiagnostics], t[schema.TableReportCPULoad]}, keep)
}

// Summarize computes the summary of run id and stores it (the
// report_... tables). It runs once the run is ingested, in a transaction
// of its own on conn (schema.DB.SetSummarize): once per run, sched_stats
// computed once for it (task_instances and sched_latency read the rows
// its ingest wrote).
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
	drop, err := materialize(ctx, conn, catalog, list, false)
	defer drop()
	if err != nil {
		return err
	}
	t := summaryTables{}
	for _, name := range schema.ReportTables() {
		t[name] = cat + name
	}
	if err := computeSummaries(ctx, conn, list, t, nil, summaryTop); err != nil {
		return err
	}
	vals := make([]string, len(ids))
	for i, id := range ids {
		vals[i] = fmt.Sprintf("(%d, %s)", id, queries.Literal(summaryVersion))
	}
	_, err = conn.ExecContext(ctx, "INSERT INTO "+cat+schema.TableReportSummaries+" (run_id, version) VALUES "+strings.Join(vals, ", "))
	return err
}

// chunkEvents bounds the events of the runs a report summarizes at once
// (their sched_stats, and under a window task_instances and
// sched_latency, are held in temporary tables meanwhile), and liveMemoryLimit DuckDB's memory meanwhile: the memory
// of a report over many runs without summaries does not grow with their
// number. With 5M events and DuckDB's default limit, a report that
// summarized 505 runs of 100k events peaked at 1.7 GB; over 1,000 such
// runs, 1,105 MB with 512 MiB and 787 MB with 256 MiB, the ingest's
// summary limit, in the same time.
const (
	chunkEvents     = 2_000_000
	liveMemoryLimit = 256 << 20
)

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

// limitLiveMemory limits DuckDB's memory to liveMemoryLimit while a
// report computes summaries over a database file, which spills what is
// beyond it into its temporary directory (FILE.tmp). Not over an
// in-memory database (a Parquet dataset's): its temporary directory is
// .tmp in the working directory, which a report should not write; its
// limit stays, and the chunks (chunkEvents) bound its memory.
func limitLiveMemory(ctx context.Context, conn *sql.Conn) (restore func(), err error) {
	var file bool
	if err := conn.QueryRowContext(ctx, `SELECT path IS NOT NULL FROM duckdb_databases() WHERE database_name = current_database()`).Scan(&file); err != nil || !file {
		return func() {}, err
	}
	return schema.LimitMemory(ctx, conn, liveMemoryLimit)
}

// storeSummaries computes the summaries of runs and stores them in the
// database of conn, replacing any of another version, a chunk of runs
// per transaction.
func storeSummaries(ctx context.Context, conn *sql.Conn, catalog string, runs []Run) error {
	cat := queries.Ident(catalog) + ".main."
	restore, err := limitLiveMemory(ctx, conn)
	if err != nil {
		return err
	}
	defer restore()
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
			for _, t := range schema.ReportTables() {
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

// storedSummaries returns the runs of the table ids (run_id) that have a
// summary of this version (none when the database or dataset has not
// every summaries' table: an older traceduck's).
func storedSummaries(ctx context.Context, conn *sql.Conn, cat, ids string) (map[int32]bool, error) {
	out := map[int32]bool{}
	tables := schema.ReportTables()
	var n int
	if err := conn.QueryRowContext(ctx, `SELECT count(DISTINCT table_name) FROM information_schema.tables
		WHERE table_catalog = current_database() AND table_schema = 'main' AND list_contains(`+queries.LiteralList(tables)+`, table_name)`).Scan(&n); err != nil {
		return nil, err
	}
	if n < len(tables) {
		return out, nil
	}
	rows, err := conn.QueryContext(ctx, "SELECT DISTINCT run_id FROM "+cat+schema.TableReportSummaries+
		" WHERE version = ? AND run_id IN (SELECT run_id FROM "+ids+")", summaryVersion)
	if err != nil {
		return nil, fmt.Errorf("report: the stored summaries: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int32
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out[id] = true
	}
	return out, rows.Err()
}

// idTable creates the temporary table name (run_id) holding ids; drop
// removes it. Queries of the summaries' tables select runs by a join with
// it, not by a list of constants: a Parquet dataset's views prune their
// files by such a list, which took 4-6 s per query for 1,000 runs
// (against 0.3-0.4 s to read every file).
func idTable(ctx context.Context, conn *sql.Conn, name string, ids []int32) (drop func(), err error) {
	drop = func() { _, _ = conn.ExecContext(context.WithoutCancel(ctx), "DROP TABLE IF EXISTS temp.main."+name) }
	drop()
	if _, err := conn.ExecContext(ctx, "CREATE TEMP TABLE "+name+" (run_id INTEGER)"); err != nil {
		return drop, err
	}
	if len(ids) > 0 {
		vals := make([]string, len(ids))
		for i, id := range ids {
			vals[i] = "(" + strconv.Itoa(int(id)) + ")"
		}
		if _, err := conn.ExecContext(ctx, "INSERT INTO temp.main."+name+" VALUES "+strings.Join(vals, ", ")); err != nil {
			return drop, err
		}
	}
	return drop, nil
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
