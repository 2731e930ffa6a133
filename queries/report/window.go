package report

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/traceduck/traceduck/queries"
)

// Window is report --from/--to: the part of each run the report covers,
// [From, To) in ns on the trace's time base, or, Relative, from each
// run's first event (nil: no bound). docs/report.md ("A time window")
// says what each metric counts of what the window cuts.
type Window struct {
	From     *int64 `json:"from_ns"`
	To       *int64 `json:"to_ns"`
	Relative bool   `json:"relative"`
}

// String is the window as the report's header prints it.
func (w *Window) String() string {
	bound := func(p *int64, none string) string {
		if p == nil {
			return none
		}
		return fmtDuration(float64(*p))
	}
	origin := "on the trace's time base"
	if w.Relative {
		origin = "from each run's first event"
	}
	return fmt.Sprintf("[%s, %s) %s", bound(w.From, "start"), bound(w.To, "end"), origin)
}

// windowNote says, under the window in the Markdown and HTML reports,
// what the numbers count of it.
const windowNote = "each run's events, duration, time shares and CPU load are those inside the window; " +
	"instances, waits and round trips the window cuts are left out, as those the trace cuts."

// windowTables are what applyWindow creates, in the order it creates
// them; dropped in the reverse order. The names of the tables and views
// of the library (runs, events, state_intervals, ...) shadow them for the
// report's connection: DuckDB looks in the temp catalog first, in the
// report's queries and in the views they read alike.
var windowTables = []struct{ name, kind string }{
	{"report_window", "TABLE"},
	{"report_window_cuts", "TABLE"},
	{"state_intervals", "TABLE"},
	{"resource_intervals", "TABLE"},
	{"messages", "TABLE"},
	{"priority_intervals", "TABLE"},
	{"runs", "TABLE"},
	{"events", "VIEW"},
}

// applyWindow narrows what the report's connection sees to the window.
// Built before the materialized views (materialize), which then read the
// windowed rows:
//  1. report_window: each selected run's window, lo and hi in ns (NULL:
//     no bound), with --relative from its first event.
//  2. report_window_cuts: the scheduling intervals (sched_intervals) that
//     cross a window edge, before anything is clipped: an instance or a
//     wait for a CPU that begins (ends) at an edge began before it (ends
//     after it) exactly when one of its object's intervals crosses that
//     edge (fixWindowCuts).
//  3. state_intervals: clipped to the window (state_intervals_window): a
//     clipped interval counts the part inside, so running shares, CPU
//     load and state totals count the time in the window.
//  4. resource_intervals: holds and waits that overlap the window,
//     clipped, and truncated where the window cut them: a wait's length
//     is the metric, and the part inside is not it.
//  5. messages: those with a send, receive or reply inside; the events
//     outside are not in the window, so the message is truncated, as when
//     the trace cut it.
//  6. priority_intervals: clipped, like the states.
//  7. runs: first_ts and last_ts are the window's edges within the run,
//     event_count the events inside: a run's duration (the denominator of
//     shares and rates) is the time of the run in the window.
//  8. events: a view of the events inside.
func applyWindow(ctx context.Context, conn *sql.Conn, catalog, ids string, w *Window) (drop func(), err error) {
	drop = func() {
		for i := len(windowTables) - 1; i >= 0; i-- {
			t := windowTables[i]
			_, _ = conn.ExecContext(context.WithoutCancel(ctx), "DROP "+t.kind+" IF EXISTS temp.main."+t.name)
		}
	}
	drop() // what an interrupted report left on this connection
	cat := queries.Ident(catalog) + ".main."
	bound := func(p *int64) string {
		if p == nil {
			return "NULL::BIGINT"
		}
		if w.Relative {
			return fmt.Sprintf("%d + first_ts", *p)
		}
		return fmt.Sprint(*p)
	}
	arg := func(p *int64) string {
		if p == nil {
			return "NULL"
		}
		return fmt.Sprint(*p)
	}
	// A half-open window [lo, hi): lo or hi NULL is no bound.
	inWindow := func(ts string) string {
		return fmt.Sprintf("(w.lo IS NULL OR %[1]s >= w.lo) AND (w.hi IS NULL OR %[1]s < w.hi)", ts)
	}
	steps := []string{
		fmt.Sprintf(`CREATE TEMP TABLE report_window AS
SELECT run_id, first_ts, last_ts, %s AS lo, %s AS hi FROM %sruns WHERE run_id IN %s`, bound(w.From), bound(w.To), cat, ids),

		fmt.Sprintf(`CREATE TEMP TABLE report_window_cuts AS
SELECT s.run_id, s.object_id, s.instance, s.format, s.class, 'lo' AS edge
FROM %[1]ssched_intervals s JOIN report_window w ON w.run_id = s.run_id
WHERE s.class <> 'blocked' AND s.start_ts < w.lo AND s.end_ts >= w.lo
UNION ALL
SELECT s.run_id, s.object_id, s.instance, s.format, s.class, 'hi' AS edge
FROM %[1]ssched_intervals s JOIN report_window w ON w.run_id = s.run_id
WHERE s.class <> 'blocked' AND s.start_ts <= w.hi AND s.end_ts > w.hi`, cat),

		fmt.Sprintf(`CREATE TEMP TABLE state_intervals AS
SELECT * FROM %sstate_intervals_window(%s, %s, relative := %t) WHERE run_id IN %s`, cat, arg(w.From), arg(w.To), w.Relative, ids),

		fmt.Sprintf(`CREATE TEMP TABLE resource_intervals AS
SELECT i.* REPLACE (
         CASE WHEN w.lo IS NULL OR i.start_ts >= w.lo THEN i.start_ts ELSE w.lo END AS start_ts,
         CASE WHEN w.hi IS NULL OR i.end_ts <= w.hi THEN i.end_ts ELSE w.hi END AS end_ts,
         (CASE WHEN w.hi IS NULL OR i.end_ts <= w.hi THEN i.end_ts ELSE w.hi END)
           - (CASE WHEN w.lo IS NULL OR i.start_ts >= w.lo THEN i.start_ts ELSE w.lo END) AS dur,
         CASE WHEN w.lo IS NULL OR i.start_ts >= w.lo THEN i.start_seq END AS start_seq,
         CASE WHEN w.hi IS NULL OR i.end_ts <= w.hi THEN i.end_seq END AS end_seq,
         CASE WHEN w.hi IS NULL OR i.end_ts <= w.hi THEN i.ended END AS ended,
         i.truncated OR coalesce(i.start_ts < w.lo, false) OR coalesce(i.end_ts > w.hi, false) AS truncated)
FROM %sresource_intervals i JOIN report_window w ON w.run_id = i.run_id
WHERE (w.lo IS NULL OR i.end_ts > w.lo OR i.start_ts = i.end_ts AND i.start_ts >= w.lo)
  AND (w.hi IS NULL OR i.start_ts < w.hi)`, cat),

		fmt.Sprintf(`CREATE TEMP TABLE messages AS
SELECT m.* REPLACE (
         CASE WHEN %[2]s THEN m.send_ts END AS send_ts,
         CASE WHEN %[3]s THEN m.receive_ts END AS receive_ts,
         CASE WHEN %[4]s THEN m.reply_ts END AS reply_ts,
         CASE WHEN %[2]s THEN m.send_seq END AS send_seq,
         CASE WHEN %[3]s THEN m.receive_seq END AS receive_seq,
         CASE WHEN %[4]s THEN m.reply_seq END AS reply_seq,
         m.truncated OR NOT (%[2]s) AND m.send_ts IS NOT NULL
                     OR NOT (%[3]s) AND m.receive_ts IS NOT NULL
                     OR NOT (%[4]s) AND m.reply_ts IS NOT NULL AS truncated)
FROM %[1]smessages m JOIN report_window w ON w.run_id = m.run_id
WHERE (%[2]s) OR (%[3]s) OR (%[4]s)`, cat, inWindow("m.send_ts"), inWindow("m.receive_ts"), inWindow("m.reply_ts")),

		fmt.Sprintf(`CREATE TEMP TABLE priority_intervals AS
SELECT p.* REPLACE (
         CASE WHEN w.lo IS NULL OR p.start_ts >= w.lo THEN p.start_ts ELSE w.lo END AS start_ts,
         CASE WHEN w.hi IS NULL OR p.end_ts <= w.hi THEN p.end_ts ELSE w.hi END AS end_ts,
         (CASE WHEN w.hi IS NULL OR p.end_ts <= w.hi THEN p.end_ts ELSE w.hi END)
           - (CASE WHEN w.lo IS NULL OR p.start_ts >= w.lo THEN p.start_ts ELSE w.lo END) AS dur,
         CASE WHEN w.lo IS NULL OR p.start_ts >= w.lo THEN p.start_seq END AS start_seq,
         CASE WHEN w.hi IS NULL OR p.end_ts <= w.hi THEN p.end_seq END AS end_seq,
         p.truncated AND (w.hi IS NULL OR p.end_ts <= w.hi) AS truncated)
FROM %spriority_intervals p JOIN report_window w ON w.run_id = p.run_id
WHERE (w.lo IS NULL OR p.end_ts > w.lo OR p.start_ts = p.end_ts AND p.start_ts >= w.lo)
  AND (w.hi IS NULL OR p.start_ts < w.hi)`, cat),

		// A window outside a run leaves it 0 ns long, first_ts = last_ts.
		fmt.Sprintf(`CREATE TEMP TABLE runs AS
WITH edges AS (
  SELECT run_id,
         CASE WHEN lo IS NULL OR lo < first_ts THEN first_ts ELSE lo END AS a,
         CASE WHEN hi IS NULL OR hi > last_ts THEN last_ts ELSE hi END AS b
  FROM report_window)
SELECT r.* REPLACE (
         (SELECT count(*) FROM %[1]sevents e JOIN report_window w ON w.run_id = e.run_id
          WHERE e.run_id = r.run_id AND %[2]s) AS event_count,
         CASE WHEN d.a <= d.b THEN d.a ELSE d.b END AS first_ts,
         d.b AS last_ts)
FROM %[1]sruns r JOIN edges d ON d.run_id = r.run_id`, cat, inWindow("e.ts")),

		fmt.Sprintf(`CREATE TEMP VIEW events AS
SELECT e.* FROM %sevents e JOIN temp.main.report_window w ON w.run_id = e.run_id
WHERE %s`, cat, inWindow("e.ts")),
	}
	for i, q := range steps {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return drop, fmt.Errorf("report: the window's %s: %w", windowTables[i].name, err)
		}
	}
	return drop, nil
}

// fixWindowCuts marks the task instances and waits for a CPU that the
// window cut truncated, once materialize has computed them from the
// clipped intervals: a clipped instance's response is not its response.
// One that begins at the window's start began before it when an interval
// of its object (BTF: of its instance) that is part of an instance (not
// blocked) crossed the start, and one that ends at the window's end goes
// on after it when such an interval crosses the end (report_window_cuts).
// A wait for a CPU cut by the end has no start of running in the window,
// so sched_latency has no row for it already.
func fixWindowCuts(ctx context.Context, conn *sql.Conn) error {
	for _, q := range []string{
		`UPDATE temp.main.task_instances t SET truncated = true
WHERE NOT t.truncated AND EXISTS (
  SELECT 1 FROM temp.main.report_window_cuts c JOIN temp.main.report_window w ON w.run_id = c.run_id
  WHERE c.run_id = t.run_id AND c.object_id = t.object_id AND (c.format <> 'btf' OR c.instance = t.instance)
    AND (c.edge = 'lo' AND t.activation_ts = w.lo OR c.edge = 'hi' AND t.end_ts = w.hi))`,
		`UPDATE temp.main.sched_latency t SET truncated = true
WHERE NOT t.truncated AND EXISTS (
  SELECT 1 FROM temp.main.report_window_cuts c JOIN temp.main.report_window w ON w.run_id = c.run_id
  WHERE c.run_id = t.run_id AND c.object_id = t.object_id AND c.class = 'ready'
    AND c.edge = 'lo' AND t.ready_ts = w.lo)`,
	} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			name, _, _ := strings.Cut(strings.TrimPrefix(q, "UPDATE temp.main."), " ")
			return fmt.Errorf("report: %s cut by the window: %w", name, err)
		}
	}
	return nil
}

// windowRuns reads the runs' events, first and last times and duration
// in the window (the temp table runs).
func (r *Report) windowRuns(ctx context.Context, conn *sql.Conn) error {
	in, err := loadRuns(ctx, conn)
	if err != nil {
		return err
	}
	for i := range r.Runs {
		for _, w := range in {
			if w.ID == r.Runs[i].ID {
				r.Runs[i].Events, r.Runs[i].FirstTS, r.Runs[i].LastTS, r.Runs[i].Duration = w.Events, w.FirstTS, w.LastTS, w.Duration
			}
		}
	}
	return nil
}
