package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/traceduck/traceduck/internal/safetext"
)

// ecoOrders are the six hierarchies of the event statistics tree (the
// macro eco_tree), with what their levels below the run show.
var ecoOrders = []string{"eco", "eoc", "ceo", "coe", "oec", "oce"}

func newStatsCmd() *cobra.Command {
	var (
		dbPath string
		run    int32
		order  = "eco"
		sortBy = "name"
		depth  int
		window windowFlags
		output = outputFlags{format: outTable}
	)
	cmd := &cobra.Command{
		Use:   "stats --db FILE [--run N] [--order eco|eoc|ceo|coe|oec|oce] [--depth K] [--sort name|count]",
		Short: "Event statistics: how often each event happened in each context, on each object",
		Long: `Stats prints the event statistics tree of the Baget tracer: the eco-triples
(event, context, main object) of each run, counted and summed up one of six
hierarchies chosen by --order, the order of the dimensions e (event),
c (context) and o (main object):

  eco  class        > event   > context > object
  eoc  class        > event   > object  > context
  ceo  context kind > context > event   > object
  coe  context kind > context > object  > event
  oec  object kind  > object  > event   > context
  oce  object kind  > object  > context > event

Each run is a root (depth 0); --depth K keeps the levels down to K (1 the
groups, 2 events, contexts or objects, 3 pairs, 4 triples, the default).
Siblings are sorted by name, or with --sort count by count, largest first.
An event is named class:event; a missing context or object is (none). The
labels and levels are what the marks of 'traceduck events' name:
--include 'event=T:start' selects the node T:start, and so on.

--from and --to count only the events in [from, to) (ns on the trace's
time base, or with a unit: 1.5ms; with --relative, from each run's first
event; the macro eco_tree_window); a node with none there is left out.

--output table (the default) and markdown print an indented tree with each
node's level, count, share of the run's events and, for a triple, its
eco_id; csv and json print the rows of the SQL macro eco_tree(order), every
column (run_id, pos, depth, level, label, count, eco_id, path and the node's
coordinates).`,
		Example: `  traceduck stats --db t.duckdb --run 1 --depth 2
  traceduck stats --db t.duckdb --order ceo --sort count
  traceduck stats --db t.duckdb --order oec --output csv > tree.csv
  traceduck stats --db t.duckdb --run 1 --depth 2 --from 10ms --to 20ms
  traceduck query --db t.duckdb "SELECT repeat('  ', depth) || label, count FROM eco_tree('coe') WHERE run_id = 1 ORDER BY pos"`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if depth < 0 || depth > 4 {
				return usagef("--depth %d: want 0 (the runs only) to 4 (the triples)", depth)
			}
			if err := window.parse(); err != nil {
				return err
			}
			return runStats(cmd.Context(), dbPath, statsSQL(run, order, sortBy, depth, &window), run, output, cmd.OutOrStdout())
		},
	}
	addDBFlag(cmd, &dbPath, true, "database file (must exist)")
	addRunFlag(cmd, &run)
	cmd.Flags().Var(enumValue{&order, ecoOrders}, "order", "hierarchy: "+strings.Join(ecoOrders, ", "))
	cmd.Flags().IntVar(&depth, "depth", 4, "deepest level shown: 0 runs, 1 groups, 2 events/contexts/objects, 3 pairs, 4 triples")
	cmd.Flags().Var(enumValue{&sortBy, []string{"name", "count"}}, "sort", "siblings by name, or by count largest first")
	addWindowFlags(cmd, &window, "count only the events")
	addOutputFlags(cmd, &output, outputFormats)
	return cmd
}

// statsSQL is the query of the tree. The arguments are checked words and
// numbers, written into the text so that csv and json output can run it
// through queryTo, which takes SQL text alone.
func statsSQL(run int32, order, sortBy string, depth int, window *windowFlags) string {
	where := fmt.Sprintf("depth <= %d", depth)
	if run != 0 {
		where = fmt.Sprintf("run_id = %d AND %s", run, where)
	}
	return fmt.Sprintf("SELECT * FROM eco_tree('%s', sort_by := '%s'%s) WHERE %s ORDER BY run_id, pos", order, sortBy, window.macroArgs(), where)
}

func runStats(ctx context.Context, dbPath, text string, run int32, output outputFlags, w io.Writer) error {
	return withRunConn(ctx, dbPath, run, func(conn *sql.Conn) error {
		if output.format == outCSV || output.format == outJSON {
			return queryTo(ctx, conn, text, newResultWriter(output, w))
		}
		return printTree(ctx, conn, text, output.format == outMarkdown, newResultWriter(output, w))
	})
}

// printTree writes the tree as rows of (node, level, count, %, eco_id),
// the node's label indented two spaces per depth (in markdown, where
// leading blanks vanish, two no-break spaces).
func printTree(ctx context.Context, conn *sql.Conn, text string, markdown bool, out resultWriter) error {
	rows, err := conn.QueryContext(ctx, "SELECT depth, level, label, count, eco_id, max(count) FILTER (WHERE depth = 0) OVER (PARTITION BY run_id) FROM ("+text+") ORDER BY run_id, pos")
	if err != nil {
		return err
	}
	defer rows.Close()
	indent := "  "
	if markdown {
		indent = "&nbsp;&nbsp;"
	}
	cols := []column{{"node", "VARCHAR"}, {"level", "VARCHAR"}, {"count", "BIGINT"}, {"%", "DECIMAL"}, {"eco_id", "INTEGER"}}
	if err := out.begin(cols); err != nil {
		return err
	}
	for rows.Next() {
		var (
			depth        int
			level, label string
			count, total int64
			eco          sql.NullInt32
		)
		if err := rows.Scan(&depth, &level, &label, &count, &eco, &total); err != nil {
			return err
		}
		share := "100.0"
		if total > 0 {
			share = fmt.Sprintf("%.1f", 100*float64(count)/float64(total))
		}
		var ecoID any
		if eco.Valid {
			ecoID = eco.Int32
		} else {
			ecoID = ""
		}
		if err := out.row([]any{strings.Repeat(indent, depth) + label, level, count, share, ecoID}); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	return out.end()
}

// checkRunExists fails when --run names no run: a usage error (exit 2,
// as report's unknown --baseline), naming the runs there are.
func checkRunExists(ctx context.Context, conn queryer, run int32) error {
	if run == 0 {
		return nil
	}
	var n int
	if err := conn.QueryRowContext(ctx, "SELECT count(*) FROM runs WHERE run_id = ?", run).Scan(&n); err != nil {
		return err
	}
	if n == 0 {
		runs, err := runList(ctx, conn)
		if err != nil {
			return err
		}
		return usagef("--run %d: no such run (the runs: %s)", run, runs)
	}
	return nil
}

// queryer is what checkRunExists needs of a *sql.DB or *sql.Conn.
type queryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// runList names the runs of a database for a message, at most ten, as
// report names them: "1 v1, 2 v2, ... 3 more"; "none" for none.
func runList(ctx context.Context, conn queryer) (string, error) {
	var total int
	if err := conn.QueryRowContext(ctx, "SELECT count(*) FROM runs").Scan(&total); err != nil {
		return "", err
	}
	rows, err := conn.QueryContext(ctx, "SELECT run_id, coalesce(name, '') FROM runs ORDER BY run_id LIMIT 10")
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var parts []string
	for rows.Next() {
		var id int32
		var name string
		if err := rows.Scan(&id, &name); err != nil {
			return "", err
		}
		parts = append(parts, fmt.Sprintf("%d %s", id, cellText(safetext.Cut(name, 60))))
	}
	if err := rows.Err(); err != nil {
		return "", err
	}
	if total > len(parts) {
		parts = append(parts, fmt.Sprintf("... %d more", total-len(parts)))
	}
	if len(parts) == 0 {
		return "none", nil
	}
	return strings.Join(parts, ", "), nil
}
