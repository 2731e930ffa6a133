package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"math"
	"math/big"
	"strings"

	"github.com/spf13/cobra"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/safetext"
	"github.com/traceduck/traceduck/queries"
)

func newEventsCmd() *cobra.Command {
	var (
		dbPath             string
		run                int32
		includes, excludes []string
		window             windowFlags
		limit              int64
		output             = outputFlags{format: outTable}
	)
	cmd := &cobra.Command{
		Use:   "events --db FILE [--include MARK]... [--exclude MARK]... [--from TS] [--to TS] [--limit N] [--run N]",
		Short: "List the events selected by include/exclude marks on the event statistics tree",
		Long: `Events lists events in run and trace order, selected as the Baget tracer does:
include and exclude marks on nodes of the event statistics tree (see
'traceduck stats') choose a set of eco-triples, and the events of those
triples are listed. The SQL macros are eco_selection(includes, excludes)
(which triples, and which mark decided) and selected_events(includes,
excludes).

A mark is one or more terms joined by '&':
  class=T              event group (class)
  event=T:start        event start of class T (event=start: in any class)
  context.kind=cpu     context kind         context=Core_1   a context
  object.kind=task     main object kind     object=T_1MS_0   a main object
  eco=5                one triple by its eco_id (per run: use --run)
  all                  every triple
Values are exact, or glob patterns when they hold *, ? or [. A missing
context or object is named (none). 'event=T:start&context=Core_1' is the
pair node (T:start, Core_1); terms of one mark name different dimensions.

The most specific mark that matches a triple decides, so a child's mark
overrides its parent's in any hierarchy: a triple beats a pair, a pair an
event, context or object, those a class or kind, and an exact name a
pattern (event=start, in any class, counts as a pattern against
event=R:start). Of equally specific marks that disagree, exclude wins:
--include event=T:start --exclude context=Core_1 keeps the T:start events
except those on Core_1. A triple no
mark matches is selected when no --include is given (only excludes:
everything else), not selected otherwise; 'all' sets that explicitly.

--from and --to keep the events with from <= ts < to: nanoseconds on the
trace's time base, or a number with a unit (s, ms, us, ns: 10ms, 1.5ms);
with --relative, from each run's first event. The ts column printed is on
the trace's time base either way. --limit N stops after N events (0: all).`,
		Example: `  traceduck events --db t.duckdb --include 'event=T:start' --exclude 'context=Core_1'
  traceduck events --db t.duckdb --run 1 --include 'object=Task_2ms_*' --from 10ms --to 20ms
  traceduck events --db t.duckdb --include all --exclude class=INT --include 'event=INT:INT_ENTR&context=(none)' --limit 20
  traceduck query --db t.duckdb "SELECT * FROM eco_selection(['event=T:start'], ['context=Core_1']) WHERE run_id = 1"`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := window.parse(); err != nil {
				return err
			}
			if limit < 0 {
				return usagef("--limit %d: want 0 (all) or more", limit)
			}
			q := eventsQuery{run: run, includes: includes, excludes: excludes, window: window, limit: limit}
			return runEvents(cmd.Context(), dbPath, q, output, cmd.OutOrStdout())
		},
	}
	addDBFlag(cmd, &dbPath, true, "database file (must exist)")
	addRunFlag(cmd, &run)
	cmd.Flags().StringArrayVar(&includes, "include", nil, "select the events under this node (repeatable)")
	cmd.Flags().StringArrayVar(&excludes, "exclude", nil, "leave out the events under this node (repeatable)")
	addWindowFlags(cmd, &window, "only events")
	cmd.Flags().Int64Var(&limit, "limit", 0, "at most N events (0: all)")
	addOutputFlags(cmd, &output, outputFormats)
	return cmd
}

// eventsQuery is what `traceduck events` selects.
type eventsQuery struct {
	run                int32
	includes, excludes []string
	window             windowFlags
	limit              int64
}

// marksSQL checks the marks: eco_marks parses them and raises an error
// that quotes a malformed one. Every column is read: DuckDB computes only
// the columns a query uses, and the checks are in all of them.
func (q eventsQuery) marksSQL() string {
	return fmt.Sprintf("SELECT * FROM eco_marks(%s, %s)", queries.LiteralList(q.includes), queries.LiteralList(q.excludes))
}

// sql is the query of the events.
func (q eventsQuery) sql() string {
	var where []string
	if q.run != 0 {
		where = append(where, fmt.Sprintf("e.run_id = %d", q.run))
	}
	if w := q.window.eventsWhere("e.ts", "r.first_ts"); w != "" {
		where = append(where, w)
	}
	text := fmt.Sprintf("SELECT e.* FROM selected_events(%s, %s) e", queries.LiteralList(q.includes), queries.LiteralList(q.excludes))
	if q.window.relative {
		text += " JOIN runs r ON r.run_id = e.run_id"
	}
	if len(where) > 0 {
		text += " WHERE " + strings.Join(where, " AND ")
	}
	text += " ORDER BY e.run_id, e.seq"
	if q.limit > 0 {
		text += fmt.Sprintf(" LIMIT %d", q.limit)
	}
	return text
}

func runEvents(ctx context.Context, dbPath string, q eventsQuery, output outputFlags, w io.Writer) error {
	return withRunConn(ctx, dbPath, q.run, func(conn *sql.Conn) error {
		if err := checkMarks(ctx, conn, q.marksSQL()); err != nil {
			return markError(err)
		}
		out := &countingWriter{resultWriter: newResultWriter(output, w)}
		if err := queryTo(ctx, conn, q.sql(), out); err != nil || out.rows > 0 {
			return err
		}
		return explainEmptyEvents(ctx, conn, selection{run: q.run, window: &q.window}, q.includes, q.excludes)
	})
}

// checkMarks runs the marks' check and reads every row.
func checkMarks(ctx context.Context, conn *sql.Conn, text string) error {
	rows, err := conn.QueryContext(ctx, text)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
	}
	return rows.Err()
}

// markError turns DuckDB's error about a malformed mark into a usage
// error worded as eco_marks words it.
func markError(err error) error {
	msg := err.Error()
	if i := strings.Index(msg, "mark "); i >= 0 && strings.Contains(msg, "Invalid Input Error") {
		return usagef("%s", msg[i:])
	}
	return err
}

// parseEventsTime reads a time: a whole number of nanoseconds, or a
// number with a unit (s, ms, us, ns, ...): 10ms, 1.5ms, 2.25us, read
// exactly, as long as it is a whole number of ns.
func parseEventsTime(s string) (int64, error) {
	s = strings.TrimSpace(s)
	i := 0
	neg := false
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		neg = s[i] == '-'
		i++
	}
	start := i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	digits := s[start:i]
	frac := ""
	if i < len(s) && s[i] == '.' {
		j := i + 1
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		frac, i = s[i+1:j], j
	}
	if digits == "" && frac == "" {
		return 0, fmt.Errorf("expected a whole number of ns, or a number with a unit (s, ms, us, ns), found %s", safetext.Quote(s))
	}
	unit, mul := s[i:], uint64(1)
	if unit != "" {
		u, ok := ingest.LookupTimeUnit(unit)
		if !ok {
			return 0, fmt.Errorf("unknown unit %s (s, ms, us, ns)", safetext.Quote(unit))
		}
		if u.Div != 1 {
			return 0, fmt.Errorf("unit %q is finer than the ns of the events table", unit)
		}
		mul = u.Mul
	}
	// ns = digits.frac * mul, exactly: (digits frac) * mul / 10^len(frac).
	n, ok := new(big.Int).SetString(digits+frac, 10)
	if !ok {
		n = new(big.Int)
	}
	n.Mul(n, new(big.Int).SetUint64(mul))
	if neg {
		n.Neg(n)
	}
	scale := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(len(frac))), nil)
	q, r := new(big.Int).QuoRem(n, scale, new(big.Int))
	if r.Sign() != 0 {
		return 0, fmt.Errorf("expected a whole number of ns, found %s ns", decimalText(n, len(frac)))
	}
	if !q.IsInt64() {
		return 0, fmt.Errorf("out of range: expected at most %d ns (about 292 years) either way, found %s ns", int64(math.MaxInt64), q)
	}
	return q.Int64(), nil
}

// decimalText is n / 10^scale in decimal, without trailing zeros.
func decimalText(n *big.Int, scale int) string {
	s := new(big.Int).Abs(n).String()
	if len(s) <= scale {
		s = strings.Repeat("0", scale-len(s)+1) + s
	}
	s = strings.TrimRight(s[:len(s)-scale]+"."+s[len(s)-scale:], "0")
	s = strings.TrimSuffix(s, ".")
	if n.Sign() < 0 {
		s = "-" + s
	}
	return s
}
