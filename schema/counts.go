package schema

import (
	"context"
	"database/sql"
	"fmt"
)

// RunCounts are what one run holds, for the line an ingest prints: its
// rows in the main tables, and its problems by severity (occurrences,
// repeats counted) with the first error or, when none, the first warning.
type RunCounts struct {
	Events, Intervals int64
	// Aggregations and Histograms count the aggregations printed in the
	// trace (DTrace #N, bpftrace @name) and the distributions (one per
	// key of a quantize-like aggregation); AggValues and Buckets their
	// rows.
	Aggregations, AggValues, Histograms, Buckets int64
	Errors, Warnings, Infos                      int64
	// FirstAt and First are the first error (else warning): where it is,
	// FILE:LINE (FILE@OFFSET for formats whose positions are byte
	// offsets; FILE alone when it has no position), and its message; ""
	// when there is none.
	FirstAt, First string
	// FoundBeside is the file the format took from beside the trace (a
	// TLV log's resource file, a Baget log's description; runs.meta
	// found_beside), "" when none.
	FoundBeside string
	// FoundBundled is the bundled file the format read because the trace
	// named it and nothing beside the trace did (a Baget log's
	// description; runs.meta found_bundled), "" when none.
	FoundBundled string
}

// RunCounts counts the rows of a run that was just ingested; offsets says
// whether its src_line values are byte offsets.
func (db *DB) RunCounts(ctx context.Context, runID int32, source string, offsets bool) (RunCounts, error) {
	var c RunCounts
	err := db.sql.QueryRowContext(ctx, fmt.Sprintf(`SELECT
		(SELECT coalesce(event_count, 0) FROM runs WHERE run_id = $1),
		(SELECT count(*) FROM %[1]s WHERE run_id = $1),
		(SELECT count(DISTINCT agg) FROM %[2]s WHERE run_id = $1),
		(SELECT count(*) FROM %[2]s WHERE run_id = $1),
		(SELECT count(DISTINCT (agg, key)) FROM %[3]s WHERE run_id = $1),
		(SELECT count(*) FROM %[3]s WHERE run_id = $1),
		(SELECT coalesce(sum(count), 0) FROM %[4]s WHERE run_id = $1 AND severity = 'error'),
		(SELECT coalesce(sum(count), 0) FROM %[4]s WHERE run_id = $1 AND severity = 'warning'),
		(SELECT coalesce(sum(count), 0) FROM %[4]s WHERE run_id = $1 AND severity = 'info'),
		(SELECT coalesce(meta->>'found_beside', '') FROM runs WHERE run_id = $1),
		(SELECT coalesce(meta->>'found_bundled', '') FROM runs WHERE run_id = $1)`,
		"state_interval_rows", TableAggregations, TableHistograms, TableDiagnostics), runID).
		Scan(&c.Events, &c.Intervals, &c.Aggregations, &c.AggValues, &c.Histograms, &c.Buckets, &c.Errors, &c.Warnings, &c.Infos, &c.FoundBeside, &c.FoundBundled)
	if err != nil {
		return c, err
	}
	if c.Errors+c.Warnings == 0 {
		return c, nil
	}
	var line sql.NullInt64
	var msg string
	err = db.sql.QueryRowContext(ctx, `SELECT src_line, message FROM `+TableDiagnostics+`
		WHERE run_id = $1 AND severity IN ('error', 'warning')
		ORDER BY severity = 'warning', src_line NULLS LAST LIMIT 1`, runID).Scan(&line, &msg)
	if err != nil {
		return c, err
	}
	c.First = msg
	switch {
	case !line.Valid:
		c.FirstAt = source
	case offsets:
		c.FirstAt = fmt.Sprintf("%s@%d", source, line.Int64)
	default:
		c.FirstAt = fmt.Sprintf("%s:%d", source, line.Int64)
	}
	return c, nil
}
