package main

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/queries"
	"github.com/traceduck/traceduck/queries/dtracefmt"
)

// histArgs are the flags of traceduck hist.
type histArgs struct {
	dbPath                string
	run                   int32
	state, kind, object   string
	level                 int
	pool                  bool
	sqlText               string
	quantize              bool
	lquantize, llquantize string
	linear                int64
	buckets               string
	unit                  string
	window                windowFlags
	selectBucket          string
	output                outputFlags
}

// outDTrace is hist's default output: DTrace's text layout.
const outDTrace = "dtrace"

func newHistCmd() *cobra.Command {
	a := histArgs{output: outputFlags{format: outDTrace}, unit: "ns"}
	cmd := &cobra.Command{
		Use:   "hist [--db FILE] (--state STATE [--level L] [--kind K] [--object NAME] [--run N | --pool] | --sql QUERY) [--quantize | --lquantize L,U[,S] | --llquantize F,L,H,N | --linear N | --buckets EDGES] [--unit U]",
		Short: "Histograms of durations or of any query's values, printed as DTrace prints them",
		Long: `Hist prints histograms the way DTrace prints its quantize(), lquantize() and
llquantize() aggregations, byte for byte, with DTrace's bucketing.

What is counted:
  --state STATE     how long objects stayed in the state STATE (complete state
                    intervals, in ns), one histogram per object; --kind and
                    --object select the objects, --run the run. Needs --db.
                    Without --run, each run has its own histograms, headed
                    "run N: NAME" (--output: columns run_id and run);
                    --pool pools the runs instead (objects of the same name
                    in several runs make one histogram) and says so.
                    --level L takes STATE at an aggregation level of
                    state_levels, as state_trace(L) does: 0 (the default)
                    the states of state_intervals, 1 and up their
                    aggregates (BTF's tasks, busy), -1 a kind's top level.
                    A state with nothing to count is an error that says
                    why: unknown (the states there are listed), an
                    aggregate (the --level to give), or only truncated
                    intervals.
  --sql QUERY       the rows of any query: (value), (key, value) or
                    (key, value, weight). A key gives one histogram per key,
                    like DTrace's @name[key] (NULL in every row: one histogram
                    without a key); a weight is added to the bucket instead
                    of 1, like quantize()'s increment. Values and weights are
                    truncated to integers, as D does; rows whose value is NULL
                    are left out. Without --db the query runs in an empty
                    database in memory (for a query over literals).
                    Statements before the last one (CREATE TEMP MACRO ...)
                    are run first.

The buckets (one of, --quantize by default):
  --quantize            powers of two, a zero bucket, negatives mirrored
  --lquantize L,U[,S]   lquantize(v, L, U, S): steps of S (default 1) from L up
                        to U, with "< L" and ">= U" rows
  --llquantize F,L,H,N  llquantize(v, F, L, H, N): orders of magnitude F^L to
                        F^H, each cut into N steps
  --linear N            N buckets of equal width from the smallest value to the
                        largest, printed like lquantize
  --buckets EDGES       buckets between ascending edges, e.g. 0,10us,100us,1ms,
                        printed like lquantize ("< first", ">= last")
A histogram has at most 2097152 (2^21) buckets: --linear and --buckets are
refused past it; DTrace's own limits keep --lquantize (65535 levels) and
--llquantize (1200664 buckets at most) below it. The histograms printed
together (those of a run, or of --sql) have at most 2097152 rows: past it
they are refused before any is printed.

--unit us|ms|s divides the values (ns) before bucketing, as a D script does
with (timestamp - self->ts) / 1000; an edge with a unit is converted to it.
The parameters are checked as DTrace's compiler checks them and refused in its
words.

Histograms of several keys are printed in DTrace's order: ascending by the sum
of count x bucket value, then by the count at zero, then by key. String keys
are printed as DTrace prints them ("  " and the key in 50 columns), integer
keys right-aligned. --output table, csv, json or markdown prints the non-empty
buckets as rows instead (key, bucket, label, count).

The same histograms are SQL table macros (hist_quantize('query'),
hist_lquantize('query', L, U, S), ...; see queries/hist_tables.sql).`,
		Example: `  traceduck hist --db t.duckdb --state running --kind task
  traceduck hist --db t.duckdb --state running --kind task --pool
  traceduck hist --db t.duckdb --state running --object Task_1ms_1 --run 1 --lquantize 0,1000000,50000
  traceduck hist --db t.duckdb --state busy --level -1 --kind cpu --unit us
  traceduck hist --db t.duckdb --sql "SELECT object, value FROM durations_between_events('activate', 'terminate', by_instance := true)" --unit us
  traceduck hist --sql "SELECT * FROM (VALUES (3), (5), (8), (1000)) t(v)" --buckets 0,4,10,100`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runHist(cmd.Context(), a, cmd.Flags().Changed, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	addDBFlag(cmd, &a.dbPath, false, "database file (must exist; without it --sql runs in an empty database in memory)")
	addRunFlag(cmd, &a.run)
	f.StringVar(&a.state, "state", "", "histogram how long objects stayed in this state")
	f.StringVar(&a.kind, "kind", "", "with --state: objects of this kind only (task, thread, ...)")
	f.StringVar(&a.object, "object", "", "with --state: the object of this name only")
	f.IntVar(&a.level, "level", 0, "with --state: the aggregation level of the state, as state_trace: 0 the states of state_intervals, 1 and up their aggregates, -1 a kind's top")
	f.BoolVar(&a.pool, "pool", false, "with --state and no --run: pool the runs (one histogram per object name over every run) instead of one set of histograms per run")
	f.StringVar(&a.sqlText, "sql", "", "histogram the rows of this query: (value), (key, value) or (key, value, weight)")
	f.BoolVar(&a.quantize, "quantize", false, "DTrace's quantize(): powers of two (the default)")
	f.StringVar(&a.lquantize, "lquantize", "", "DTrace's lquantize(): LOWER,UPPER[,STEP]")
	f.StringVar(&a.llquantize, "llquantize", "", "DTrace's llquantize(): FACTOR,LOW,HIGH,NSTEPS")
	f.Int64Var(&a.linear, "linear", 0, "N buckets (at most 2097152) of equal width from the smallest to the largest value")
	f.StringVar(&a.buckets, "buckets", "", "buckets between these ascending edges, e.g. 0,10us,100us,1ms")
	f.Var(enumValue{&a.unit, []string{"ns", "us", "ms", "s"}}, "unit", "divide the values (ns) by this unit first: ns, us, ms, s")
	addWindowFlags(cmd, &a.window, "with --state: only the intervals, clipped to [from, to),")
	f.StringVar(&a.selectBucket, "select-bucket", "", "with --state: list the intervals whose duration is in [LO, HI) instead (LO..HI, in --unit or with units: 1ms..2ms; an empty side is open)")
	outputs := append([]string{outDTrace}, outputFormats...)
	addOutputFlags(cmd, &a.output, outputs)
	return cmd
}

// unitNS is the ns in one --unit.
var unitNS = map[string]int64{"ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000}

// histSpec reads the bucket flags into a Spec; the number of them given
// must be at most one.
func histSpec(a histArgs, changed func(string) bool) (dtracefmt.Spec, error) {
	var given []string
	for _, f := range []string{"quantize", "lquantize", "llquantize", "linear", "buckets"} {
		if changed(f) {
			given = append(given, "--"+f)
		}
	}
	if len(given) > 1 {
		return dtracefmt.Spec{}, usagef("%s: give one kind of buckets", strings.Join(given, ", "))
	}
	var s dtracefmt.Spec
	switch {
	case changed("lquantize"):
		n, err := histInts("--lquantize", a.lquantize, 2, 3, "LOWER,UPPER[,STEP]")
		if err != nil {
			return s, err
		}
		s = dtracefmt.Spec{Kind: dtracefmt.LQuantize, Lower: n[0], Upper: n[1], Step: 1}
		if len(n) == 3 {
			s.Step = n[2]
		}
	case changed("llquantize"):
		n, err := histInts("--llquantize", a.llquantize, 4, 4, "FACTOR,LOW,HIGH,NSTEPS")
		if err != nil {
			return s, err
		}
		s = dtracefmt.Spec{Kind: dtracefmt.LLQuantize, Factor: n[0], Low: n[1], High: n[2], NSteps: n[3]}
	case changed("linear"):
		if a.linear < 1 {
			return s, usagef("--linear %d: the number of buckets must be at least 1", a.linear)
		}
		if a.linear > dtracefmt.MaxBuckets {
			return s, usagef("--linear %d: expected at most %d buckets, found %d", a.linear, dtracefmt.MaxBuckets, a.linear)
		}
		s = dtracefmt.Spec{Kind: dtracefmt.Linear, Levels: a.linear}
		return s, nil // lower and width come from the values
	case changed("buckets"):
		edges, err := histEdges(a.buckets, a.unit)
		if err != nil {
			return s, err
		}
		s = dtracefmt.Spec{Kind: dtracefmt.Edges, Edges: edges}
	default:
		s = dtracefmt.Spec{Kind: dtracefmt.Quantize}
	}
	if err := s.Check(); err != nil {
		return s, usagef("%v", err)
	}
	return s, nil
}

// histInts reads a comma-separated list of min to max integers.
func histInts(flag, v string, min, max int, form string) ([]int64, error) {
	parts := strings.Split(v, ",")
	if len(parts) < min || len(parts) > max {
		return nil, usagef("%s %q: expected %s", flag, v, form)
	}
	out := make([]int64, len(parts))
	for i, p := range parts {
		n, err := strconv.ParseInt(strings.TrimSpace(p), 10, 64)
		if err != nil {
			return nil, usagef("%s %q: %q is not an integer (expected %s)", flag, v, strings.TrimSpace(p), form)
		}
		out[i] = n
	}
	return out, nil
}

// histEdges reads --buckets: integers in the unit of the values (after
// --unit), or with a time unit (10us), converted to it exactly.
func histEdges(v, unit string) ([]int64, error) {
	per := unitNS[unit]
	var edges []int64
	for _, p := range strings.Split(v, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			return nil, usagef("--buckets %q: an empty edge", v)
		}
		end := len(p)
		for end > 0 && (p[end-1] < '0' || p[end-1] > '9') {
			end--
		}
		if end == len(p) { // a bare number: already in the values' unit
			n, err := strconv.ParseInt(p, 10, 64)
			if err != nil {
				return nil, usagef("--buckets %q: %q is not an integer or an integer with a unit (ns, us, ms, s)", v, p)
			}
			edges = append(edges, n)
			continue
		}
		if _, ok := ingest.LookupTimeUnit(p[end:]); !ok {
			return nil, usagef("--buckets %q: %q: unknown unit %q (ns, us, ms, s)", v, p, p[end:])
		}
		ns, err := parseEventsTime(p)
		if err != nil {
			return nil, usagef("--buckets %q: %q: %v", v, p, err)
		}
		if ns%per != 0 {
			return nil, usagef("--buckets %q: %q is not a whole number of %s (--unit)", v, p, unit)
		}
		edges = append(edges, ns/per)
	}
	return edges, nil
}

func runHist(ctx context.Context, a histArgs, changed func(string) bool, w, stderr io.Writer) error {
	spec, err := histSpec(a, changed)
	if err != nil {
		return err
	}
	switch {
	case a.state == "" && a.sqlText == "":
		return usagef("give --state STATE or --sql QUERY")
	case a.state != "" && a.sqlText != "":
		return usagef("--state and --sql: give one")
	case a.sqlText != "" && (a.kind != "" || a.object != "" || a.run != 0 || a.pool || changed("level")):
		return usagef("--kind, --object, --run, --pool and --level select the objects of --state, not the rows of --sql")
	case a.pool && a.run != 0:
		return usagef("--pool and --run: give one (--run keeps one run, --pool pools every run)")
	case a.state != "" && a.dbPath == "":
		return usagef("--state needs --db")
	case a.selectBucket != "" && a.state == "":
		return usagef("--select-bucket lists the intervals of --state: give --state")
	case a.sqlText != "" && (a.window.from != "" || a.window.to != "" || a.window.relative):
		return usagef("--from, --to and --relative window the intervals of --state, not the rows of --sql")
	}
	if err := a.window.parse(); err != nil {
		return err
	}
	path := a.dbPath
	if path == "" {
		path = memoryDB
	}
	db, err := openExistingDB(ctx, path)
	if err != nil {
		return err
	}
	defer db.Close()
	conn, err := db.SQL().Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()

	if a.state != "" {
		if err := checkRunExists(ctx, conn, a.run); err != nil {
			return err
		}
		if a.selectBucket != "" {
			return bucketIntervals(ctx, conn, a, w)
		}
		return stateHists(ctx, conn, a, spec, w, stderr)
	}
	src, err := sqlSource(ctx, conn, a.sqlText)
	if err != nil {
		return err
	}
	return writeHists(ctx, conn, a, spec, src, w)
}

// writeHists prints the histograms of src's rows.
func writeHists(ctx context.Context, conn *sql.Conn, a histArgs, spec dtracefmt.Spec, src histSource, w io.Writer) error {
	src = withUnit(src, a.unit)
	text := histQuery(spec, src.query)
	if a.output.format != outDTrace {
		return queryTo(ctx, conn, "SELECT key, bucket, label, count FROM ("+text+")", newResultWriter(a.output, w))
	}
	hists, err := readHists(ctx, conn, text, src, &spec)
	if err != nil {
		return err
	}
	return dtracefmt.Write(w, spec, hists)
}

// withUnit divides the values of src by --unit.
func withUnit(src histSource, unit string) histSource {
	if per := unitNS[unit]; per > 1 {
		src.query = fmt.Sprintf("SELECT * REPLACE (CAST(trunc(value) AS BIGINT) // %d AS value) FROM (%s)", per, src.query)
	}
	return src
}

// histRun is a run that has intervals of the state.
type histRun struct {
	id   int32
	name string
}

// stateHists prints the histograms of --state: of the run --run, of each
// run that has intervals of the state (headed by the run), or of the
// runs pooled (--pool, said so). A state with nothing to count is an
// error saying why (stateMissing).
func stateHists(ctx context.Context, conn *sql.Conn, a histArgs, spec dtracefmt.Spec, w, stderr io.Writer) error {
	rows, err := conn.QueryContext(ctx, "SELECT d.run_id, r.name FROM "+durationsCall(a, a.run)+
		" d JOIN runs r ON r.run_id = d.run_id GROUP BY d.run_id, r.name ORDER BY d.run_id")
	if err != nil {
		return err
	}
	var runs []histRun
	for rows.Next() {
		var r histRun
		if err := rows.Scan(&r.id, &r.name); err != nil {
			rows.Close()
			return err
		}
		runs = append(runs, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if len(runs) == 0 && a.window.set() {
		whole := a
		whole.window = windowFlags{}
		var n int64
		if err := conn.QueryRowContext(ctx, "SELECT count(*) FROM "+durationsCall(whole, a.run)).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return fmt.Errorf("no complete interval of state %q in the window (--from %s --to %s%s) among the objects of %s; it has %d in the whole trace",
				a.state, cmp.Or(a.window.from, "-"), cmp.Or(a.window.to, "-"), map[bool]string{true: ", relative to each run's first event"}[a.window.relative], histSelection(a), n)
		}
	}
	if len(runs) == 0 {
		return stateMissing(ctx, conn, a)
	}
	switch {
	case a.run != 0:
		return writeHists(ctx, conn, a, spec, stateSource(a, a.run), w)
	case a.pool:
		names := make([]string, len(runs))
		for i, r := range runs {
			names[i] = fmt.Sprintf("%d (%s)", r.id, cellText(r.name))
		}
		note := fmt.Sprintf("pooled %d %s: %s", len(runs), oneOrMany(len(runs), "run", "runs"), strings.Join(names, ", "))
		if a.output.format == outDTrace {
			fmt.Fprintf(w, "%s\n\n", note)
		} else {
			writeMessage(stderr, note)
		}
		return writeHists(ctx, conn, a, spec, stateSource(a, 0), w)
	}
	if a.output.format != outDTrace {
		parts := make([]string, len(runs))
		for i, r := range runs {
			src := withUnit(stateSource(a, r.id), a.unit)
			parts[i] = fmt.Sprintf("SELECT %d AS run_id, %s AS run, key, bucket, label, count FROM (%s)", r.id, queries.Literal(r.name), histQuery(spec, src.query))
		}
		return queryTo(ctx, conn, "SELECT * FROM ("+strings.Join(parts, "\nUNION ALL\n")+") ORDER BY run_id, key NULLS FIRST, bucket", newResultWriter(a.output, w))
	}
	for _, r := range runs {
		fmt.Fprintf(w, "run %d: %s\n\n", r.id, cellText(r.name))
		src := withUnit(stateSource(a, r.id), a.unit)
		s := spec // --linear: its own bounds per run
		text := histQuery(s, src.query)
		hists, err := readHists(ctx, conn, text, src, &s)
		if err != nil {
			return err
		}
		if err := dtracefmt.Write(w, s, hists); err != nil {
			return err
		}
	}
	return nil
}

// oneOrMany is one for 1, else many.
func oneOrMany(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// stateMissing is the error of a --state with no complete interval in
// the selection: the state is unknown there (the states there are named),
// an aggregate of state_levels at another level (the --level to give), or
// has only truncated intervals.
func stateMissing(ctx context.Context, conn *sql.Conn, a histArgs) error {
	sel := histSelection(a)
	rows, err := conn.QueryContext(ctx, "SELECT run_id, kind, level, coalesce(complete, 0), coalesce(truncated, 0) FROM "+
		fmt.Sprintf("hist_state_levels(%s, run := %s, object_kind := %s, object_name := %s)", queries.Literal(a.state), runArg(a.run), optLiteral(a.kind), optLiteral(a.object)))
	if err != nil {
		return err
	}
	var atomic, truncated int64
	var aggregates []string
	levels := map[int]bool{}
	for rows.Next() {
		var run int32
		var kind string
		var level int
		var c, tr int64
		if err := rows.Scan(&run, &kind, &level, &c, &tr); err != nil {
			rows.Close()
			return err
		}
		if level == 0 {
			atomic += c + tr
			truncated += tr
			continue
		}
		if !levels[level] {
			levels[level] = true
		}
		aggregates = append(aggregates, fmt.Sprintf("level %d of kind %s in run %d", level, kind, run))
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	at := ""
	if a.level != 0 {
		at = fmt.Sprintf(" at level %d", a.level)
	}
	switch {
	case a.level == 0 && atomic > 0:
		return fmt.Errorf("state %q has no complete interval among the objects of %s: its %d %s cut by the start or the end of the trace (the histograms count complete intervals)",
			a.state, sel, truncated, oneOrMany(int(truncated), "interval is", "intervals are"))
	case len(aggregates) > 0 && a.level == 0:
		lvl := 0
		for l := range levels {
			if lvl == 0 || l < lvl {
				lvl = l
			}
		}
		return fmt.Errorf("state %q is an aggregated state (state_levels: %s), not a state of state_intervals: give --level %d (or in SQL: state_trace(%d, ...), durations_in_state_level(%s, %d, ...))",
			a.state, firstFew(aggregates, 3), lvl, lvl, queries.Literal(a.state), lvl)
	}
	names, n, err := stateNames(ctx, conn, a)
	if err != nil {
		return err
	}
	msg := fmt.Sprintf("no complete interval of state %q%s among the objects of %s", a.state, at, sel)
	switch {
	case a.level != 0 && atomic > 0:
		msg += "; it is a state of state_intervals: leave out --level"
	case a.level != 0 && len(aggregates) > 0:
		msg += fmt.Sprintf("; it is at %s", firstFew(aggregates, 3))
	}
	if n == 0 {
		return fmt.Errorf("%s: they have no state intervals%s", msg, at)
	}
	return fmt.Errorf("%s; the states there%s: %s", msg, at, firstFew(names, 8))
}

// stateNames returns the states of the selection at --level, the most
// complete intervals first, quoted, and how many there are.
func stateNames(ctx context.Context, conn *sql.Conn, a histArgs) ([]string, int, error) {
	rows, err := conn.QueryContext(ctx, fmt.Sprintf("SELECT state FROM hist_state_names(%d, run := %s, object_kind := %s, object_name := %s)",
		a.level, runArg(a.run), optLiteral(a.kind), optLiteral(a.object)))
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, 0, err
		}
		names = append(names, strconv.Quote(s))
	}
	return names, len(names), rows.Err()
}

// firstFew joins the first n of list, and says how many more there are.
func firstFew(list []string, n int) string {
	if len(list) <= n {
		return strings.Join(list, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(list[:n], ", "), len(list)-n)
}

// histSelection names the objects --run, --kind and --object select.
func histSelection(a histArgs) string {
	var parts []string
	if a.run != 0 {
		parts = append(parts, fmt.Sprintf("run %d", a.run))
	} else {
		parts = append(parts, "every run")
	}
	if a.kind != "" {
		parts = append(parts, fmt.Sprintf("kind %q", a.kind))
	}
	if a.object != "" {
		parts = append(parts, fmt.Sprintf("object %q", a.object))
	}
	return strings.Join(parts, ", ")
}

// histSource is the query whose (key, value, weight) rows are counted.
type histSource struct {
	query   string
	keyed   bool
	keySize int // 0: a string key; 1, 2, 4, 8: an integer key of that size
}

// stateSource is the durations of --state in run (0: every run).
func stateSource(a histArgs, run int32) histSource {
	return histSource{query: "SELECT key, value FROM " + durationsCall(a, run), keyed: true}
}

// durationsCall is the table macro call of the complete intervals of
// --state at --level in run (0: every run).
func durationsCall(a histArgs, run int32) string {
	sel := fmt.Sprintf("object_kind := %s, object_name := %s, run := %s", optLiteral(a.kind), optLiteral(a.object), runArg(run))
	if a.window.set() {
		// the window clips the intervals, at level 0 too
		return fmt.Sprintf("durations_in_state_level(%s, %d, %s%s)", queries.Literal(a.state), a.level, sel, a.window.macroArgs())
	}
	if a.level == 0 {
		return fmt.Sprintf("durations_in_state(%s, %s)", queries.Literal(a.state), sel)
	}
	return fmt.Sprintf("durations_in_state_level(%s, %d, %s)", queries.Literal(a.state), a.level, sel)
}

// optLiteral is s as an SQL literal, NULL when empty.
func optLiteral(s string) string {
	if s == "" {
		return "NULL"
	}
	return queries.Literal(s)
}

// runArg is a run id as an SQL argument, NULL for 0.
func runArg(run int32) string {
	if run == 0 {
		return "NULL"
	}
	return strconv.Itoa(int(run))
}

// intKeySizes are the integer types a key keeps as a number, by size.
var intKeySizes = map[string]int{
	"TINYINT": 1, "UTINYINT": 1, "SMALLINT": 2, "USMALLINT": 2,
	"INTEGER": 4, "UINTEGER": 4, "BIGINT": 8, "UBIGINT": 8,
}

// sqlSource runs the statements of --sql before the last one and names
// the columns of the last one key, value and weight by position.
func sqlSource(ctx context.Context, conn *sql.Conn, script string) (histSource, error) {
	var stmts []string
	for _, s := range splitStatements(script) {
		if s = strings.TrimSpace(s); s != "" && !onlyComments(s) {
			stmts = append(stmts, s)
		}
	}
	if len(stmts) == 0 {
		return histSource{}, usagef("--sql: no query")
	}
	for _, s := range stmts[:len(stmts)-1] {
		if _, err := conn.ExecContext(ctx, s); err != nil {
			return histSource{}, err
		}
	}
	last := stmts[len(stmts)-1]
	rows, err := conn.QueryContext(ctx, "DESCRIBE "+last)
	if err != nil {
		return histSource{}, fmt.Errorf("--sql: %w", err)
	}
	var types []string
	for rows.Next() {
		var name, typ string
		var null, key, def, extra sql.NullString
		if err := rows.Scan(&name, &typ, &null, &key, &def, &extra); err != nil {
			rows.Close()
			return histSource{}, err
		}
		types = append(types, typ)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return histSource{}, err
	}
	names := map[int]string{1: "value", 2: "key, value", 3: "key, value, weight"}[len(types)]
	if names == "" {
		return histSource{}, usagef("--sql: the query returns %d columns; give (value), (key, value) or (key, value, weight)", len(types))
	}
	for i, name := range strings.Split(names, ", ") {
		if name != "key" && !numericType(types[i]) {
			return histSource{}, usagef("--sql: the %s column is %s, not a number", name, types[i])
		}
	}
	src := histSource{query: fmt.Sprintf("SELECT * FROM (\n%s\n) AS hist_rows(%s)", last, names), keyed: len(types) > 1}
	if src.keyed {
		if size, ok := intKeySizes[types[0]]; ok {
			src.keySize = size
		} else if types[0] != "VARCHAR" {
			src.query = fmt.Sprintf("SELECT * REPLACE (CAST(key AS VARCHAR) AS key) FROM (%s)", src.query)
		}
	}
	return src, nil
}

// numericType reports whether a DuckDB type is a number.
func numericType(t string) bool {
	return column{Type: t}.numeric()
}

// histQuery is the SQL of the histogram: one of the hist_* table macros
// over the source query.
func histQuery(s dtracefmt.Spec, source string) string {
	q := queries.Literal(source)
	switch s.Kind {
	case dtracefmt.LQuantize:
		return fmt.Sprintf("SELECT * FROM hist_lquantize(%s, %d, %d, %d)", q, s.Lower, s.Upper, s.Step)
	case dtracefmt.LLQuantize:
		return fmt.Sprintf("SELECT * FROM hist_llquantize(%s, %d, %d, %d, %d)", q, s.Factor, s.Low, s.High, s.NSteps)
	case dtracefmt.Linear:
		return fmt.Sprintf("SELECT * FROM hist_linear(%s, %d)", q, s.Levels)
	case dtracefmt.Edges:
		e := make([]string, len(s.Edges))
		for i, v := range s.Edges {
			e[i] = strconv.FormatInt(v, 10)
		}
		return fmt.Sprintf("SELECT * FROM hist_edges(%s, [%s]::BIGINT[])", q, strings.Join(e, ", "))
	}
	return fmt.Sprintf("SELECT * FROM hist_quantize(%s)", q)
}

// readHists reads the buckets of the histogram query into one Hist per
// key. For --linear it sets the spec's lower bound and width, which the
// query works out from the values.
func readHists(ctx context.Context, conn *sql.Conn, text string, src histSource, spec *dtracefmt.Spec) ([]dtracefmt.Hist, error) {
	cols := "key, bucket, count, NULL, NULL"
	if spec.Kind == dtracefmt.Linear {
		cols = "key, bucket, count, lower, width"
	}
	rows, err := conn.QueryContext(ctx, "SELECT "+cols+" FROM ("+text+")")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	index := map[dtracefmt.Key]int{}
	var hists []dtracefmt.Hist
	nullKey, key := false, false
	for rows.Next() {
		var (
			keyValue      any
			bucket, count int64
			lower, width  sql.NullInt64
		)
		if err := rows.Scan(&keyValue, &bucket, &count, &lower, &width); err != nil {
			return nil, err
		}
		if lower.Valid {
			spec.Lower, spec.Step = lower.Int64, width.Int64
		}
		k, err := histKey(keyValue, src)
		if err != nil {
			return nil, err
		}
		nullKey, key = nullKey || k.None, key || !k.None
		if nullKey && key {
			return nil, fmt.Errorf("some rows have a NULL key and some have not: give every row a key (coalesce(key, ...)), or none")
		}
		i, ok := index[k]
		if !ok {
			i = len(hists)
			index[k] = i
			hists = append(hists, dtracefmt.Hist{Key: k, Counts: map[int64]int64{}})
		}
		hists[i].Counts[bucket] += count
	}
	// The layout is for reading: a key is shown on one line, escaped
	// (after the grouping, so that two keys stay two).
	for i := range hists {
		if k := &hists[i].Key; !k.None && k.Size == 0 {
			k.Str = cellText(k.Str)
		}
	}
	return hists, rows.Err()
}

// histKey turns a key as the driver returns it into a dtracefmt.Key: no
// key without a key column or when the key is NULL.
func histKey(v any, src histSource) (dtracefmt.Key, error) {
	if !src.keyed || v == nil {
		return dtracefmt.Key{None: true}, nil
	}
	var n int64
	switch v := v.(type) {
	case string:
		return dtracefmt.StringKey(v), nil
	case int8:
		n = int64(v)
	case int16:
		n = int64(v)
	case int32:
		n = int64(v)
	case int64:
		n = v
	case uint8:
		n = int64(v)
	case uint16:
		n = int64(v)
	case uint32:
		n = int64(v)
	case uint64:
		n = int64(v) // the same bits, as DTrace prints a uint64_t key (%lld)
	default:
		return dtracefmt.StringKey(fmt.Sprint(v)), nil
	}
	if src.keySize == 0 {
		return dtracefmt.StringKey(strconv.FormatInt(n, 10)), nil
	}
	return dtracefmt.IntKey(n, src.keySize), nil
}

// bucketIntervals lists the intervals of --state whose duration is in
// the --select-bucket range (the macro intervals_in_bucket): the state
// records behind a histogram bar, with their times (ns on the trace's
// time base).
func bucketIntervals(ctx context.Context, conn *sql.Conn, a histArgs, w io.Writer) error {
	lo, hi, ok := strings.Cut(a.selectBucket, "..")
	if !ok {
		return usagef("--select-bucket %q: want LO..HI (1ms..2ms, 100..; an empty side is open)", a.selectBucket)
	}
	var bounds [2]string
	var ns [2]int64
	for i, p := range []string{lo, hi} {
		p = strings.TrimSpace(p)
		bounds[i] = "NULL"
		if p == "" {
			continue
		}
		v, err := bucketBound(p, a.unit)
		if err != nil {
			return usagef("--select-bucket %q: %q: %v", a.selectBucket, p, err)
		}
		bounds[i], ns[i] = fmt.Sprint(v), v
	}
	if bounds[0] != "NULL" && bounds[1] != "NULL" && ns[0] >= ns[1] {
		return usagef("--select-bucket %q: the bucket is empty (want LO < HI)", a.selectBucket)
	}
	text := fmt.Sprintf("SELECT * FROM intervals_in_bucket(%s, %s, %s, lvl := %d, object_kind := %s, object_name := %s, run := %s%s)",
		queries.Literal(a.state), bounds[0], bounds[1], a.level, optLiteral(a.kind), optLiteral(a.object), runArg(a.run), a.window.macroArgs())
	output := a.output
	if output.format == outDTrace {
		output.format = outTable
	}
	return queryTo(ctx, conn, text, newResultWriter(output, w))
}

// bucketBound reads one side of --select-bucket in ns: a bare number is
// in --unit, a number with a unit is read as --from is.
func bucketBound(p, unit string) (int64, error) {
	if n, err := strconv.ParseInt(p, 10, 64); err == nil {
		per := unitNS[unit]
		if n > math.MaxInt64/per || n < math.MinInt64/per {
			return 0, fmt.Errorf("out of range")
		}
		return n * per, nil
	}
	return parseEventsTime(p)
}
