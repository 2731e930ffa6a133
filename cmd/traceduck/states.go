package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/traceduck/traceduck/queries"
)

func newStatesCmd() *cobra.Command {
	var (
		dbPath string
		run    int32
		kind   string
		object string
		state  string
		level  = "0"
		window windowFlags
		tree   bool
		marks  [2][]string // includes, excludes
		order  = "kos"
		sortBy = "name"
		output = outputFlags{format: outTable}
	)
	cmd := &cobra.Command{
		Use:   "states --db FILE [--run N] [--kind K] [--object NAME] [--state S] [--level L|all] [--tree [--order kos|kso] [--sort name|total]]",
		Short: "State statistics: how often and how long each object was in each state, p99 included",
		Long: `States prints the state statistics of the view state_stats: per run, object
and state, how many times the object was in the state and for how long (total,
mean, min, the 50th, 90th and 99th percentiles, max, standard deviation, in
ns), and how many intervals were cut by the start or the end of the trace and
left out (truncated).

--level picks the aggregation level of the states (table state_levels):
0, the default, is the atomic states as the trace gives them (a task's
running, ready, ...; the task a core runs); each level above maps them up
(BTF: running -> on_cpu, the task a core runs -> tasks -> busy) and merges
consecutive intervals that meet in the same state, so a core's busy period
is one interval however many tasks ran in it. A negative level counts from
the top: -1 is each kind's coarsest level (a core's busy/idle). A level
above a kind's deepest is its top. --level all prints every level.

Percentiles are nearest-rank (DuckDB's quantile_disc): the duration of rank
ceil(p/100 * count), a duration that occurred. The standard deviation is the
sample one (n - 1), empty for a single interval.

--from and --to keep the window [from, to) of each run (ns on the trace's
time base, or with a unit: 1.5ms, 250us; with --relative, from each run's
first event): every interval is clipped to it and counts the part inside
(the macro state_stats_window). An interval cut by the end of the trace is
known inside a window that ends before it.

Rows are sorted by run, kind, object, level, then the longest total first.

--include and --exclude mark nodes of the state statistics tree, as
'traceduck events' does on the event tree (the macro state_stats_selected):
kind=cpu, object=Core_0, state=idle, level=N, & to combine, all; values
exact or glob patterns. The most specific mark that matches a row decides
(object and state are nodes, kind a group), exclude on a tie, so a child's
mark overrides its parent's: --include kind=cpu --exclude
'object=Core_1&state=idle'. With no --include, every row no mark excludes.

--tree prints the state statistics tree of the Baget tracer instead (the
macro state_stats_tree): per run, the object kinds, the objects and each
object's hierarchy of states, the top level first, every node with count,
total, mean, max, p99 and truncated. --order kso puts each kind's state
hierarchy first, pooled over its objects, with the objects under the
atomic states. Siblings are sorted by name, or with --sort total by total
time, largest first. A run, kind or object node sums its top-level
intervals (its total is the time its state is known). --run, --kind and
the window apply; table and markdown indent the nodes, csv and json print
every column of state_stats_tree.`,
		Example: `  traceduck states --db t.duckdb --kind task
  traceduck states --db t.duckdb --kind cpu --level -1
  traceduck states --db t.duckdb --run 2 --object Core_0 --level all
  traceduck states --db t.duckdb --kind thread --state RUNNING --output csv > running.csv
  traceduck states --db t.duckdb --kind task --from 10ms --to 20ms --relative
  traceduck states --db t.duckdb --run 1 --kind cpu --tree --sort total
  traceduck states --db t.duckdb --level all --include kind=cpu --exclude 'object=Core_1&state=idle'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			lvl, all, err := parseStateLevel(level)
			if err != nil {
				return err
			}
			if err := window.parse(); err != nil {
				return err
			}
			if tree {
				for _, f := range []string{"object", "state", "level", "include", "exclude"} {
					if cmd.Flags().Changed(f) {
						return usagef("--%s and --tree: the tree has every object, state and level (--run and --kind select)", f)
					}
				}
				return runStatesTree(cmd.Context(), dbPath, statesTreeSQL(run, kind, order, sortBy, &window), run, output, cmd.OutOrStdout())
			}
			if cmd.Flags().Changed("order") || cmd.Flags().Changed("sort") {
				return usagef("--order and --sort are for --tree")
			}
			ctx := cmd.Context()
			return withRunConn(ctx, dbPath, run, func(conn *sql.Conn) error {
				if len(marks[0])+len(marks[1]) > 0 {
					if err := checkMarks(ctx, conn, "SELECT * FROM state_marks("+queries.LiteralList(marks[0])+", "+queries.LiteralList(marks[1])+")"); err != nil {
						return markError(err)
					}
				}
				kind, err := resolveKind(ctx, conn, run, kind)
				if err != nil {
					return err
				}
				out := &countingWriter{resultWriter: newResultWriter(output, cmd.OutOrStdout())}
				if err := queryTo(ctx, conn, statesSQL(run, kind, object, state, lvl, all, &window, marks), out); err != nil || out.rows > 0 {
					return err
				}
				return explainEmptyStates(ctx, conn, selection{run: run, kind: kind, object: object, state: state, level: lvl, levelAll: all, window: &window})
			})
		},
	}
	addDBFlag(cmd, &dbPath, true, "database file (must exist)")
	addRunFlag(cmd, &run)
	cmd.Flags().StringVar(&kind, "kind", "", "only objects of this kind (task, thread, cpu, ...)")
	cmd.Flags().StringVar(&object, "object", "", "only the objects of this name")
	cmd.Flags().StringArrayVar(&marks[0], "include", nil, "select the rows under this node of the state tree (repeatable)")
	cmd.Flags().StringArrayVar(&marks[1], "exclude", nil, "leave out the rows under this node of the state tree (repeatable)")
	cmd.Flags().BoolVar(&tree, "tree", false, "print the state statistics tree (kinds, objects, the state hierarchy)")
	cmd.Flags().Var(enumValue{&order, []string{"kos", "kso"}}, "order", "with --tree: kos kind > object > states; kso kind > states > object")
	cmd.Flags().Var(enumValue{&sortBy, []string{"name", "total"}}, "sort", "with --tree: siblings by name, or by total time largest first")
	cmd.Flags().StringVar(&state, "state", "", "only this state (a name at the chosen level)")
	cmd.Flags().StringVar(&level, "level", "0", "aggregation level: 0 atomic, 1, 2, ... coarser; -1 the top; all")
	addWindowFlags(cmd, &window, "only the intervals")
	addOutputFlags(cmd, &output, outputFormats)
	return cmd
}

// parseStateLevel reads --level: an integer, or all.
func parseStateLevel(s string) (level int, all bool, err error) {
	if s == "all" {
		return 0, true, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 32)
	if err != nil {
		return 0, false, usagef("--level %q: want an integer (0 atomic, -1 the top) or all", s)
	}
	return int(n), false, nil
}

// statesSQL is the query of the statistics: the checked level is written
// into the text, names as SQL string literals. The run, kind and object
// go to state_stats_of, which computes the statistics of those objects
// alone.
func statesSQL(run int32, kind, object, state string, level int, all bool, window *windowFlags, marks [2][]string) string {
	lit := func(s string) string {
		if s == "" {
			return "NULL"
		}
		return queries.Literal(s)
	}
	runArg := "NULL"
	if run != 0 {
		runArg = fmt.Sprint(run)
	}
	var where []string
	source := `state_stats_of(run := ` + runArg + `, object_kind := ` + lit(kind) + `, object_name := ` + lit(object) + window.macroArgs() + `)`
	if len(marks[0])+len(marks[1]) > 0 {
		source = `state_stats_selected(` + queries.LiteralList(marks[0]) + `, ` + queries.LiteralList(marks[1]) + `, run := ` + runArg + window.macroArgs() + `)`
		if kind != "" {
			where = append(where, "s.kind = "+queries.Literal(kind))
		}
		if object != "" {
			where = append(where, "s.object = "+queries.Literal(object))
		}
	}
	if state != "" {
		where = append(where, "s.state = "+queries.Literal(state))
	}
	if !all {
		where = append(where, fmt.Sprintf("s.level = state_level_at(%d, d.depth)", level))
	}
	cond := ""
	if len(where) > 0 {
		cond = "\nWHERE " + strings.Join(where, " AND ")
	}
	return `SELECT s.run_id, s.kind, s.object, s.level, s.state, s.count, s.total_ns,
       round(s.mean_ns, 1) AS mean_ns, s.min_ns, s.p50_ns, s.p90_ns, s.p99_ns, s.max_ns,
       round(s.stddev_ns, 1) AS stddev_ns, s.truncated
FROM ` + source + ` s
LEFT JOIN state_level_depth d ON d.run_id = s.run_id AND d.kind = s.kind` + cond + `
ORDER BY s.run_id, s.kind, s.object, s.object_id, s.level, s.total_ns DESC, s.state`
}

// runStates prints the statistics of text; checks, when not empty, is a
// query that checks the marks first (a malformed one is a usage error).
func runStates(ctx context.Context, dbPath, text string, run int32, output outputFlags, w io.Writer, checks ...string) error {
	return withRunConn(ctx, dbPath, run, func(conn *sql.Conn) error {
		for _, c := range checks {
			if c == "" {
				continue
			}
			if err := checkMarks(ctx, conn, c); err != nil {
				return markError(err)
			}
		}
		return queryTo(ctx, conn, text, newResultWriter(output, w))
	})
}

// statesTreeSQL is the query of the tree: the run, the kind (a literal),
// the checked order and sort word, the window.
func statesTreeSQL(run int32, kind, order, sortBy string, window *windowFlags) string {
	runArg := "NULL"
	if run != 0 {
		runArg = fmt.Sprint(run)
	}
	kindArg := "NULL"
	if kind != "" {
		kindArg = queries.Literal(kind)
	}
	return fmt.Sprintf("SELECT * FROM state_stats_tree('%s', run := %s, object_kind := %s, sort_by := '%s'%s) ORDER BY run_id, pos", order, runArg, kindArg, sortBy, window.macroArgs())
}

// runStatesTree prints the tree: csv and json every column, table and
// markdown the node indented by depth (two no-break spaces per depth in
// markdown, where leading blanks vanish) and its statistics.
func runStatesTree(ctx context.Context, dbPath, text string, run int32, output outputFlags, w io.Writer) error {
	if output.format == outCSV || output.format == outJSON {
		return runStates(ctx, dbPath, text, run, output, w)
	}
	indent := "  "
	if output.format == outMarkdown {
		indent = "&nbsp;&nbsp;"
	}
	return runStates(ctx, dbPath, "SELECT repeat('"+indent+"', depth) || label AS node, coalesce(level::VARCHAR, '') AS level, count, total_ns, round(mean_ns, 1) AS mean_ns, max_ns, p99_ns, truncated FROM ("+text+") ORDER BY run_id, pos", run, output, w)
}
