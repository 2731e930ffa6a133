-- Histograms of durations as table macros: the durations to histogram
-- (state intervals, intervals between two event types) and the
-- histograms of any query's values with the bucket macros of
-- hist_buckets.sql. `traceduck hist` prints these histograms in DTrace's
-- text layout.
--
-- The histogram macros take a query as a string, so that any relation
-- can be histogrammed: a view, a table, the duration macros below,
-- task_instances, a query over literals. Its result must have a column
-- named value (an integer, or a number truncated to one as D does) and
-- may have a column key (one histogram per key, like DTrace's
-- @name[key]) and a column weight (added to the bucket instead of 1, like
-- the increment argument of DTrace's quantize()). Rows whose value is
-- NULL are left out. Each histogram macro returns one row per key and
-- non-empty bucket: key (NULL without a key column), bucket (as the bucket
-- macros return it: the lower edge, -9223372036854775808 for the
-- underflow bucket), label (what DTrace prints in the value column) and
-- count (the sum of the weights), ordered by key and bucket.

-- hist_input: (hist_input(q)) the rows of the query q as (key, value,
-- weight): key NULL and weight 1 when q has no such column, value and
-- weight truncated to BIGINTs (as D stores numbers), rows with a NULL
-- value left out. Example:
-- SELECT * FROM hist_input('SELECT 2.5 AS value') -- NULL | 2 | 1.
CREATE OR REPLACE MACRO hist_input(q) AS TABLE
SELECT key,
       CAST(trunc(value) AS BIGINT) AS value,
       CAST(trunc(coalesce(weight, 1)) AS BIGINT) AS weight
FROM (FROM query(q)
      UNION ALL BY NAME
      SELECT NULL AS key, NULL AS value, NULL AS weight WHERE false)
WHERE value IS NOT NULL;

-- hist_check: (hist_check(message)) one row (ok NULL) when message is
-- NULL, an error with the message otherwise: the histogram macros
-- cross-join it and filter on ok (so that DuckDB keeps it) to refuse
-- invalid parameters even when the query has no rows.
CREATE OR REPLACE MACRO hist_check(message) AS TABLE
SELECT CASE WHEN message IS NOT NULL THEN error(message) END AS ok;

-- hist_quantize: (hist_quantize(q)) DTrace's quantize() histogram of the
-- values of query q (see the head of this file): key, bucket (a power of
-- two, 0, or a negated power of two), label, count. Example:
-- SELECT * FROM hist_quantize('SELECT object AS key, value FROM
-- durations_in_state(''running'')').
CREATE OR REPLACE MACRO hist_quantize(q) AS TABLE
SELECT key, bucket, CAST(bucket AS VARCHAR) AS label, CAST(sum(weight) AS BIGINT) AS count
FROM (SELECT key, quantize_bucket_int(value) AS bucket, weight FROM hist_input(q))
GROUP BY key, bucket
ORDER BY key NULLS FIRST, bucket;

-- hist_lquantize: (hist_lquantize(q, lower, upper, step)) DTrace's
-- lquantize(value, lower, upper, step) histogram of the values of query
-- q: key, bucket, label ("< lower", ">= upper" or the bucket), count.
-- Example: SELECT * FROM hist_lquantize('SELECT dur / 1000 AS value FROM
-- state_intervals', 0, 100, 10).
CREATE OR REPLACE MACRO hist_lquantize(q, lower, upper, step) AS TABLE
SELECT key, bucket, lquantize_label(bucket, lower, upper, step) AS label, CAST(sum(weight) AS BIGINT) AS count
FROM (SELECT key, lquantize_bucket(value, lower, upper, step) AS bucket, weight
      FROM hist_input(q), hist_check(lquantize_check(lower, upper, step)) WHERE ok IS NULL)
GROUP BY key, bucket
ORDER BY key NULLS FIRST, bucket;

-- hist_llquantize: (hist_llquantize(q, factor, low, high, nsteps)) DTrace's
-- llquantize(value, factor, low, high, nsteps) histogram of the values of
-- query q: key, bucket, label ("< factor^low", ">= factor^(high+1)" or the
-- bucket), count. The same buckets as llquantize_bucket, worked out
-- faster: each value's order of magnitude is estimated from its logarithm
-- and joined with a small table of the orders (exact powers, step widths,
-- and those of the orders next to it, for the estimates one off).
-- Example: SELECT * FROM hist_llquantize('SELECT dur AS value FROM
-- state_intervals', 10, 3, 9, 10).
CREATE OR REPLACE MACRO hist_llquantize(q, factor, low, high, nsteps) AS TABLE
WITH pw AS (SELECT llquantize_ipowers(factor, high) AS p, ok
            FROM hist_check(llquantize_check(factor, low, high, nsteps))),
     orders AS (SELECT o, lo, hi, width,
                       lag(lo) OVER (ORDER BY o) AS lo_prev, lag(width) OVER (ORDER BY o) AS width_prev,
                       lead(width) OVER (ORDER BY o) AS width_next
                FROM (SELECT o, p[o + 1] AS lo, p[o + 2] AS hi, p[o + 2] // least(p[o + 2], nsteps) AS width
                      FROM pw, range(low, high + 1) r(o)
                      WHERE ok IS NULL)),
     bounds AS (SELECT p[low + 1] AS first, p[high + 2] AS top FROM pw),
     vals AS (SELECT key, weight, value,
                     least(greatest(value, first), top - 1) AS x,
                     llquantize_estimate(least(greatest(value, first), top - 1), factor, low, high) AS e,
                     first, top
              FROM hist_input(q), bounds)
SELECT key, bucket, llquantize_label(bucket, factor, low, high, nsteps) AS label, CAST(sum(weight) AS BIGINT) AS count
FROM (SELECT key, weight,
             CASE WHEN value < first THEN CAST(-9223372036854775808 AS BIGINT)
                  WHEN value >= top THEN top
                  WHEN x < lo THEN lo_prev + ((x - lo_prev) // width_prev) * width_prev
                  WHEN x >= hi THEN hi + ((x - hi) // width_next) * width_next
                  ELSE lo + ((x - lo) // width) * width END AS bucket
      FROM vals JOIN orders ON orders.o = vals.e)
GROUP BY key, bucket
ORDER BY key NULLS FIRST, bucket;

-- hist_linear: (hist_linear(q, n)) a histogram of the values of query q
-- in n buckets of equal integer width from the smallest value (of all
-- keys) up: width = (max - min) / n + 1, so that the largest value falls
-- into the last bucket. Columns: key, bucket, label, count, and the
-- lower (the smallest value) and width of the buckets, the same on every
-- row. Example: SELECT * FROM hist_linear('SELECT dur AS value FROM
-- state_intervals', 10).
CREATE OR REPLACE MACRO hist_linear(q, n) AS TABLE
WITH vals AS (FROM hist_input(q)),
     params AS (SELECT min(value) AS lower,
                       (max(value) - min(value)) // n + 1 AS width
                FROM vals, hist_check(CASE WHEN n IS NULL OR n < 1 THEN 'hist_linear: the number of buckets must be at least 1' END)
                WHERE ok IS NULL)
SELECT key, bucket, bucket_label(bucket, lower, lower + n * width) AS label,
       CAST(sum(weight) AS BIGINT) AS count, lower, width
FROM (SELECT key, weight, linear_bucket(value, lower, width, n) AS bucket, lower, width FROM vals, params)
GROUP BY key, bucket, lower, width
ORDER BY key NULLS FIRST, bucket;

-- hist_edges: (hist_edges(q, edges)) a histogram of the values of query q
-- in buckets between the given ascending edges [e0, ..., en]: "< e0",
-- [e0, e1), ..., ">= en" (see edges_bucket). Example: SELECT * FROM
-- hist_edges('SELECT dur AS value FROM state_intervals', [0, 10000,
-- 100000, 1000000]).
CREATE OR REPLACE MACRO hist_edges(q, edges) AS TABLE
SELECT key, bucket, bucket_label(bucket, edges[1], edges[len(edges)]) AS label, CAST(sum(weight) AS BIGINT) AS count
FROM (SELECT key, edges_bucket(value, edges) AS bucket, weight FROM hist_input(q), hist_check(edges_check(edges)) WHERE ok IS NULL)
GROUP BY key, bucket
ORDER BY key NULLS FIRST, bucket;

-- durations_in_state: (durations_in_state(state_name, object_kind := NULL,
-- object_name := NULL, run := NULL)) how long objects stayed in a state:
-- one row per complete state interval (truncated ones, cut by the start
-- or end of the trace, are left out) of the state state_name, of objects
-- of kind object_kind and name object_name and of run run when given.
-- Columns: run_id, object_id, kind, object, state, instance, start_ts,
-- end_ts, key (the object's name) and value (the duration in ns), ready
-- for the histogram macros. Example: SELECT * FROM
-- hist_quantize('FROM durations_in_state(''running'', object_kind :=
-- ''task'')').
CREATE OR REPLACE MACRO durations_in_state(state_name, object_kind := NULL, object_name := NULL, run := NULL) AS TABLE
SELECT s.run_id, s.object_id, o.kind, o.name AS object, s.state, s.instance, s.start_ts, s.end_ts,
       o.name AS key, s.dur AS value
FROM state_intervals s
JOIN objects o ON o.run_id = s.run_id AND o.object_id = s.object_id
WHERE NOT s.truncated
  AND s.state = state_name
  AND (object_kind IS NULL OR o.kind = object_kind)
  AND (object_name IS NULL OR o.name = object_name)
  AND (run IS NULL OR s.run_id = run);

-- durations_between_events: (durations_between_events(begin_event,
-- end_event, by_instance := false, begin_class := NULL, end_class :=
-- NULL, run := NULL)) the intervals from an event of type begin_event to
-- the next event of type end_event on the same main object (and, with
-- by_instance, the same target instance): the way a D script measures a
-- latency (self->ts = timestamp at the begin probe; at the end probe,
-- timestamp - self->ts if self->ts is set, then clear it). A begin
-- followed by another begin before any end restarts the interval; an end
-- with no begin before it is left out. The events of each object are
-- taken in time order (trace order among equal times). Columns: run_id,
-- object_id, object, instance (NULL unless by_instance), start_ts,
-- end_ts, start_seq, end_seq, key (the object's name) and value (end_ts
-- - start_ts). Example, BTF response times (activation to termination of
-- each task instance): SELECT * FROM
-- durations_between_events('activate', 'terminate', by_instance := true).
CREATE OR REPLACE MACRO durations_between_events(begin_event, end_event, by_instance := false,
                                                 begin_class := NULL, end_class := NULL, run := NULL) AS TABLE
SELECT p.run_id, p.object_id, o.name AS object, p.instance, p.prev_ts AS start_ts, p.ts AS end_ts,
       p.prev_seq AS start_seq, p.seq AS end_seq, o.name AS key, p.ts - p.prev_ts AS value
FROM (SELECT *,
             lag(is_begin) OVER w AS prev_is_begin,
             lag(ts) OVER w AS prev_ts,
             lag(seq) OVER w AS prev_seq
      FROM (SELECT e.run_id, e.object_id, e.seq, e.ts,
                   CASE WHEN by_instance THEN e.target_instance END AS instance,
                   e.event = begin_event AND (begin_class IS NULL OR e.class = begin_class) AS is_begin,
                   e.event = end_event AND (end_class IS NULL OR e.class = end_class) AS is_end
            FROM events e
            WHERE (e.event = begin_event OR e.event = end_event)
              AND (run IS NULL OR e.run_id = run))
      WHERE is_begin OR is_end
      WINDOW w AS (PARTITION BY run_id, object_id, instance ORDER BY ts, seq)) p
LEFT JOIN objects o ON o.run_id = p.run_id AND o.object_id = p.object_id
WHERE p.is_end AND p.prev_is_begin;

-- durations_in_state_level: (durations_in_state_level(state_name, lvl,
-- object_kind := NULL, object_name := NULL, run := NULL, t_from := NULL,
-- t_to := NULL, relative := false)) how long
-- objects stayed in a state at an aggregation level of state_trace (lvl
-- as there: 0 the atomic states of state_intervals, 1 and up their
-- aggregates in state_levels, -1 a kind's top level): one row per complete
-- interval of the state at that level, selected as in durations_in_state;
-- with t_from and t_to, the intervals clipped to the window as
-- state_trace_levels does (the part inside, complete when the window cut
-- what the trace did not tell).
-- Columns as durations_in_state, and level. Example (BTF: how long each
-- core stayed busy): SELECT * FROM hist_quantize('FROM
-- durations_in_state_level(''busy'', -1, object_kind := ''cpu'')').
CREATE OR REPLACE MACRO durations_in_state_level(state_name, lvl, object_kind := NULL, object_name := NULL, run := NULL, t_from := NULL, t_to := NULL, relative := false) AS TABLE
SELECT run_id, object_id, kind, object, state, instance, start_ts, end_ts,
       object AS key, dur AS value, level
FROM state_trace(lvl, run := run, object_kind := object_kind, object_name := object_name, t_from := t_from, t_to := t_to, relative := relative)
WHERE NOT truncated AND state = state_name;

-- hist_state_levels: (hist_state_levels(state_name, run := NULL,
-- object_kind := NULL, object_name := NULL)) where a state is among the
-- objects selected (as in durations_in_state): one row per run, kind and
-- level. Level 0: the state is in state_intervals; complete counts its
-- complete intervals, truncated the others. A level above: state_levels
-- makes it an aggregate state of that kind at that level (complete and
-- truncated NULL). `traceduck hist --state` tells with it why a state has
-- nothing to count. Example (BTF): SELECT * FROM
-- hist_state_levels('busy') -- 1 | cpu | 2 | NULL | NULL.
CREATE OR REPLACE MACRO hist_state_levels(state_name, run := NULL, object_kind := NULL, object_name := NULL) AS TABLE
SELECT s.run_id, o.kind, 0 AS level,
       count(*) FILTER (WHERE NOT s.truncated) AS complete,
       count(*) FILTER (WHERE s.truncated) AS truncated
FROM state_intervals s
JOIN objects o ON o.run_id = s.run_id AND o.object_id = s.object_id
WHERE s.state = state_name
  AND (run IS NULL OR s.run_id = run)
  AND (object_kind IS NULL OR o.kind = object_kind)
  AND (object_name IS NULL OR o.name = object_name)
GROUP BY s.run_id, o.kind
UNION ALL
SELECT DISTINCT m.run_id, m.kind, m.level, NULL, NULL
FROM state_level_map m
WHERE m.state = state_name AND m.level > 0 AND m.atomic <> state_name
  AND (run IS NULL OR m.run_id = run)
  AND (object_kind IS NULL OR m.kind = object_kind)
  AND (object_name IS NULL OR EXISTS (SELECT 1 FROM objects o
                                      WHERE o.run_id = m.run_id AND o.kind = m.kind AND o.name = object_name))
ORDER BY run_id, kind, level;

-- hist_state_names: (hist_state_names(lvl, run := NULL, object_kind :=
-- NULL, object_name := NULL)) the states of the objects selected (as in
-- durations_in_state) at level lvl (as in state_trace), with their
-- complete intervals and all their intervals, the most complete first.
-- Example: SELECT state FROM hist_state_names(0, run := 1, object_kind :=
-- 'task') LIMIT 5.
CREATE OR REPLACE MACRO hist_state_names(lvl, run := NULL, object_kind := NULL, object_name := NULL) AS TABLE
SELECT state, count(*) FILTER (WHERE NOT truncated) AS complete, count(*) AS intervals
FROM state_trace(lvl, run := run, object_kind := object_kind, object_name := object_name)
GROUP BY state
ORDER BY complete DESC, state;

-- intervals_in_bucket: (intervals_in_bucket(state_name, lo, hi, lvl := 0,
-- object_kind := NULL, object_name := NULL, run := NULL, t_from := NULL,
-- t_to := NULL, relative := false)) the state records behind a bar of a
-- histogram of durations (the Baget tracer's selection by duration range,
-- seed 6.4): the complete intervals of the state at level lvl (as
-- durations_in_state_level selects and, with a window, clips them) whose
-- duration is in [lo, hi) ns (a NULL bound: none). Columns: run_id,
-- object_id, kind, object, state, instance, level, start_ts, end_ts (ns
-- on the trace's time base), dur; in time order per run.
-- Example, the running intervals of 1 ms and more of task Task_1ms_1:
--   SELECT * FROM intervals_in_bucket('running', 1000000, NULL, object_name := 'Task_1ms_1');
CREATE OR REPLACE MACRO intervals_in_bucket(state_name, lo, hi, lvl := 0, object_kind := NULL, object_name := NULL, run := NULL, t_from := NULL, t_to := NULL, relative := false) AS TABLE
WITH bucket AS (
    SELECT CASE WHEN lo IS NULL OR hi IS NULL OR lo < hi THEN lo
                ELSE error('intervals_in_bucket: the bucket [' || lo || ', ' || hi || ') is empty: want lo < hi') END AS b_lo,
           hi AS b_hi
)
SELECT d.run_id, d.object_id, d.kind, d.object, d.state, d.instance, d.level, d.start_ts, d.end_ts, d.value AS dur
FROM durations_in_state_level(state_name, lvl, object_kind := object_kind, object_name := object_name, run := run,
                              t_from := t_from, t_to := t_to, relative := relative) d, bucket b
WHERE (b.b_lo IS NULL OR d.value >= b.b_lo) AND (b.b_hi IS NULL OR d.value < b.b_hi)
ORDER BY d.run_id, d.start_ts, d.object_id;
