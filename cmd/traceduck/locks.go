package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/traceduck/traceduck/queries"
)

func newLocksCmd() *cobra.Command {
	var (
		dbPath   string
		run      int32
		resource string
		output   = outputFlags{format: outTable}
	)
	cmd := &cobra.Command{
		Use:   "locks --db FILE [--run N] [--resource PATTERN]",
		Short: "Who held each semaphore, mutex or lock, who waited for it, how long, and how contended it was",
		Long: `Locks prints, per run and resource (semaphore, mutex, lock, queue, ...), the
statistics of the SQL macro lock_stats (docs/semantics.md, "Resources: holds
and waits"):

  holders, holds        distinct actors that held it; complete holds
  hold total/max/p99    their time, ns (p99 nearest rank)
  waiters, waits        distinct actors that waited; complete waits
  wait total/max/p99    their time, ns
  longest wait          its waiter and its start (ns, the trace's time base,
                        as in the events table), to find it on the timeline
  contention            the share of acquisitions the trace shows that had to
                        wait first (waits that ended in an assignment, over
                        assignments)
  truncated             holds and waits cut by the start or the end of the
                        trace, left out of the statistics

A format that tells waits but not holds (QNX, TLV/TOPPERS: an uncontended
lock leaves no trace there) has no hold columns and no contention: they are
empty, not zero.

--resource keeps the resources whose name matches the glob pattern (* any
characters, ? one, [abc] a class). Rows are sorted by run, then the longest
total wait first.

--output table (the default) and markdown print the main columns; csv and
json print every column of lock_stats (resource_id, resource_kind,
acquisitions, waited too).`,
		Example: `  traceduck locks --db t.duckdb
  traceduck locks --db t.duckdb --run 3 --resource 'mutex *'
  traceduck locks --db t.duckdb --output csv > locks.csv
  traceduck query --db t.duckdb "SELECT resource, contention FROM lock_stats(run := 1) ORDER BY contention DESC"`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			wide := output.format == outCSV || output.format == outJSON
			return runLocks(cmd.Context(), dbPath, locksSQL(run, resource, wide), run, output, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	addDBFlag(cmd, &dbPath, true, "database file (must exist)")
	addRunFlag(cmd, &run)
	cmd.Flags().StringVar(&resource, "resource", "", "only resources whose name matches this glob pattern")
	addOutputFlags(cmd, &output, outputFormats)
	return cmd
}

// locksSQL is the query of lock_stats for the run (0: all) and the
// resources matching pattern (empty: all); wide keeps every column.
func locksSQL(run int32, pattern string, wide bool) string {
	runArg := "NULL"
	if run != 0 {
		runArg = fmt.Sprint(run)
	}
	cols := `run_id, resource, holders, holds, hold_total_ns, hold_max_ns, hold_p99_ns,
       waiters, waits, wait_total_ns, wait_max_ns, wait_p99_ns,
       longest_waiter, longest_wait_ts, round(contention, 3) AS contention, truncated`
	if wide {
		cols = "*"
	}
	where := ""
	if pattern != "" {
		where = "\nWHERE regexp_full_match(resource, glob_regex(" + queries.Literal(pattern) + "))"
	}
	return "SELECT " + cols + " FROM lock_stats(run := " + runArg + ")" + where +
		"\nORDER BY run_id, wait_total_ns DESC NULLS LAST, hold_total_ns DESC NULLS LAST, resource, resource_id"
}

// runLocks prints the statistics, and says on stderr why there is no row
// when there is none: a run without holds or waits is usually a format
// that cannot tell them, not a system without locks.
func runLocks(ctx context.Context, dbPath, text string, run int32, output outputFlags, w, errw io.Writer) error {
	return withRunConn(ctx, dbPath, run, func(conn *sql.Conn) error {
		var n int64
		if err := conn.QueryRowContext(ctx, "SELECT count(*) FROM ("+text+")").Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			fmt.Fprintln(errw, "traceduck: no holds or waits of a resource in the selection; docs/semantics.md (\"Resources: holds and waits\") says which formats tell them")
		}
		return queryTo(ctx, conn, text, newResultWriter(output, w))
	})
}
