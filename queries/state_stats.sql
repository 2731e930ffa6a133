-- state_stats_of_reference: (state_stats_of_reference(run := NULL,
-- object_kind := NULL, object_name := NULL, t_from := NULL, t_to := NULL,
-- relative := false)) the definition of state_stats_of (below) in SQL,
-- same parameters and columns: the statistics grouped over the rows of
-- state_trace_level_rows, each state by its name. state_stats_of groups a
-- whole run's rows by their states' symbol ids instead (tests compare
-- the two, format by format).
CREATE OR REPLACE MACRO state_stats_of_reference(run := NULL, object_kind := NULL, object_name := NULL, t_from := NULL, t_to := NULL, relative := false) AS TABLE
-- (The statistics are of known, the durations of the intervals not
-- truncated, NULL for the others, which every aggregate leaves out: one
-- expression per row where a FILTER per aggregate cost a quarter more;
-- the mean is the sum over the count, which is what avg computes, without
-- a third sum per row.)
WITH ss_grouped AS (
    SELECT run_id, object_id, level, state,
           count(known) AS count,
           CAST(coalesce(sum(known), 0) AS BIGINT) AS total_ns,
           sum(known)::DOUBLE / count(known) AS mean_ns,
           min(known) AS min_ns,
           max(known) AS max_ns,
           stddev_samp(known) AS stddev_ns,
           quantile_disc(known, [0.5, 0.9, 0.99]) AS pct,
           count(*) - count(known) AS truncated
    FROM (SELECT run_id, object_id, level, state, CASE WHEN NOT truncated THEN dur END AS known
          FROM state_trace_level_rows(0, -1, run := run, object_kind := object_kind, object_name := object_name, t_from := t_from, t_to := t_to, relative := relative, detail := false))
    GROUP BY run_id, object_id, level, state)
SELECT g.run_id, o.kind, g.object_id, o.name AS object, g.level, g.state,
       CASE WHEN g.level < coalesce(d.depth, 0) THEN coalesce(p.state_up, g.state) END AS parent_state,
       g.count, g.total_ns, g.mean_ns, g.min_ns, g.max_ns, g.stddev_ns,
       g.pct[1] AS p50_ns, g.pct[2] AS p90_ns, g.pct[3] AS p99_ns,
       g.truncated
FROM ss_grouped g
JOIN objects o ON o.run_id = g.run_id AND o.object_id = g.object_id
LEFT JOIN state_level_depth d ON d.run_id = g.run_id AND d.kind = o.kind
LEFT JOIN (SELECT run_id, kind, level, state, any_value(nullif(parent_state, '')) AS state_up
           FROM state_levels GROUP BY ALL) p
       ON p.run_id = g.run_id AND p.kind = o.kind AND p.level = g.level AND p.state = g.state;

-- state_stats_of_runs: (state_stats_of_runs(run := NULL)) the rows of
-- state_stats of whole runs (all of them, or one): the statistics
-- grouped over state_stat_rows, by the states' symbol ids, and named
-- after. What state_stats and state_stats_of without a kind, name or
-- window answer; columns as state_stats. (A macro of its own because
-- DuckDB plans every branch of a query, even one a constant leaves out:
-- the view would plan the windowed branch of state_stats_of too, a sixth
-- of its CPU time on ftrace's 1M events.)
-- Example: SELECT state, count, p99_ns FROM state_stats_of_runs(run := 1) WHERE level = 0.
CREATE OR REPLACE MACRO state_stats_of_runs(run := NULL) AS TABLE
-- (The statistics are of known, the durations of the intervals not
-- truncated, NULL for the others, which every aggregate leaves out: one
-- expression per row where a FILTER per aggregate cost a quarter more;
-- the mean is the sum over the count, which is what avg computes, without
-- a third sum per row. The rows with a symbol id are grouped on four
-- integers, those by name (the levels of objects whose merged intervals
-- were not stored, every row of a Parquet dataset) on the name, in a
-- group-by of their own: a fifth key, NULL in every stored row, cost a
-- tenth of the view. The percentiles leave the group-by as three
-- columns, not a list: every join after it copies its rows, and with a
-- list in them the joins that name and place the groups cost as much as
-- the statistics on a run of 43,000 groups, ftrace's 1M events.)
WITH ss_rows AS (
    SELECT run_id, object_id, level, state_sym, state, CASE WHEN NOT truncated THEN dur END AS known
    FROM state_stat_rows(run := run)),
ss_grouped AS (
    SELECT run_id, object_id, level, state_sym, NULL::VARCHAR AS state,
           count(known) AS count,
           CAST(coalesce(sum(known), 0) AS BIGINT) AS total_ns,
           sum(known)::DOUBLE / count(known) AS mean_ns,
           min(known) AS min_ns,
           max(known) AS max_ns,
           stddev_samp(known) AS stddev_ns,
           quantile_disc(known, [0.5, 0.9, 0.99]) AS pct,
           count(*) - count(known) AS truncated
    FROM ss_rows
    WHERE state_sym IS NOT NULL
    GROUP BY run_id, object_id, level, state_sym
    UNION ALL
    SELECT run_id, object_id, level, NULL::INTEGER, state,
           count(known),
           CAST(coalesce(sum(known), 0) AS BIGINT),
           sum(known)::DOUBLE / count(known),
           min(known),
           max(known),
           stddev_samp(known),
           quantile_disc(known, [0.5, 0.9, 0.99]),
           count(*) - count(known)
    FROM ss_rows
    WHERE state_sym IS NULL
    GROUP BY run_id, object_id, level, state),
ss_named AS (
    SELECT g.* EXCLUDE (state_sym, state, pct), coalesce(g.state, y.name) AS state,
           g.pct[1] AS p50_ns, g.pct[2] AS p90_ns, g.pct[3] AS p99_ns
    FROM ss_grouped g
    LEFT JOIN state_stat_names() y ON y.sym = g.state_sym)
SELECT g.run_id, o.kind, g.object_id, o.name AS object, g.level, g.state,
       CASE WHEN g.level < coalesce(d.depth, 0) THEN coalesce(p.state_up, g.state) END AS parent_state,
       g.count, g.total_ns, g.mean_ns, g.min_ns, g.max_ns, g.stddev_ns,
       g.p50_ns, g.p90_ns, g.p99_ns,
       g.truncated
FROM ss_named g
JOIN objects o ON o.run_id = g.run_id AND o.object_id = g.object_id
LEFT JOIN state_level_depth d ON d.run_id = g.run_id AND d.kind = o.kind
LEFT JOIN (SELECT run_id, kind, level, state, any_value(nullif(parent_state, '')) AS state_up
           FROM state_levels GROUP BY ALL) p
       ON p.run_id = g.run_id AND p.kind = o.kind AND p.level = g.level AND p.state = g.state;

-- state_stats_of_levels: (state_stats_of_levels(run := NULL,
-- object_kind := NULL, object_name := NULL, t_from := NULL, t_to := NULL,
-- relative := false)) the rows of state_stats_of, same parameters and
-- columns, grouped over state_trace_level_rows, each state by its name,
-- whatever the parameters: what state_stats_of answers with a kind, a
-- name or a window, and state_stats_window always (without planning the
-- whole-run branch of state_stats_of, which DuckDB plans even where a
-- constant leaves it out).
-- Example: SELECT state, count, p99_ns FROM state_stats_of_levels(object_kind := 'cpu') WHERE level = 2.
CREATE OR REPLACE MACRO state_stats_of_levels(run := NULL, object_kind := NULL, object_name := NULL, t_from := NULL, t_to := NULL, relative := false) AS TABLE
-- (The statistics as in state_stats_of_runs. The groups have a
-- state_sym, NULL in each row, and are named with state_stat_names,
-- though there is no id to name: the SQL that grouped whole runs and
-- windows alike. Without them DuckDB built three hash joins on the
-- groups, not on the small tables, 15% slower on ftrace's cpus at 1M
-- events.)
WITH ss_grouped AS (
    SELECT run_id, object_id, level, state_sym, state,
           count(known) AS count,
           CAST(coalesce(sum(known), 0) AS BIGINT) AS total_ns,
           sum(known)::DOUBLE / count(known) AS mean_ns,
           min(known) AS min_ns,
           max(known) AS max_ns,
           stddev_samp(known) AS stddev_ns,
           quantile_disc(known, [0.5, 0.9, 0.99]) AS pct,
           count(*) - count(known) AS truncated
    FROM (SELECT run_id, object_id, level, NULL::INTEGER AS state_sym, state, CASE WHEN NOT truncated THEN dur END AS known
          FROM state_trace_level_rows(0, -1, run := run, object_kind := object_kind, object_name := object_name, t_from := t_from, t_to := t_to, relative := relative, detail := false))
    GROUP BY run_id, object_id, level, state_sym, state),
ss_named AS (
    SELECT g.* EXCLUDE (state_sym, state), coalesce(g.state, y.name) AS state
    FROM ss_grouped g
    LEFT JOIN state_stat_names() y ON y.sym = g.state_sym)
SELECT g.run_id, o.kind, g.object_id, o.name AS object, g.level, g.state,
       CASE WHEN g.level < coalesce(d.depth, 0) THEN coalesce(p.state_up, g.state) END AS parent_state,
       g.count, g.total_ns, g.mean_ns, g.min_ns, g.max_ns, g.stddev_ns,
       g.pct[1] AS p50_ns, g.pct[2] AS p90_ns, g.pct[3] AS p99_ns,
       g.truncated
FROM ss_named g
JOIN objects o ON o.run_id = g.run_id AND o.object_id = g.object_id
LEFT JOIN state_level_depth d ON d.run_id = g.run_id AND d.kind = o.kind
LEFT JOIN (SELECT run_id, kind, level, state, any_value(nullif(parent_state, '')) AS state_up
           FROM state_levels GROUP BY ALL) p
       ON p.run_id = g.run_id AND p.kind = o.kind AND p.level = g.level AND p.state = g.state;

-- state_stats_of: (state_stats_of(run := NULL, object_kind := NULL,
-- object_name := NULL, t_from := NULL, t_to := NULL, relative := false))
-- the rows of state_stats (see below) of one run, the objects of one
-- kind, of one name, in the time window [t_from, t_to) (intervals clipped
-- to it, as state_trace_levels does; relative: from each run's first
-- event), computed for those objects alone:
-- on a run of millions of intervals, much faster than a WHERE on
-- state_stats other than on run_id and level (which DuckDB pushes down
-- itself; kind and object it cannot push below the merge's window).
-- Columns as state_stats. (Whole runs, without kind, name or window, are
-- state_stats_of_runs; the rest state_stats_of_levels, grouped over
-- state_trace_level_rows by name. state_stats_of_reference is the
-- definition, by name throughout.)
-- Example: SELECT state, count, p99_ns FROM state_stats_of(object_kind := 'cpu') WHERE level = 2.
CREATE OR REPLACE MACRO state_stats_of(run := NULL, object_kind := NULL, object_name := NULL, t_from := NULL, t_to := NULL, relative := false) AS TABLE
-- (Which branch is read folds to a constant.)
SELECT * FROM state_stats_of_runs(run := run)
WHERE (object_kind IS NULL AND object_name IS NULL AND t_from IS NULL AND t_to IS NULL) IS TRUE
UNION ALL
SELECT * FROM state_stats_of_levels(run := run, object_kind := object_kind, object_name := object_name, t_from := t_from, t_to := t_to, relative := relative)
WHERE (object_kind IS NULL AND object_name IS NULL AND t_from IS NULL AND t_to IS NULL) IS NOT TRUE;

-- state_stats: per run, object and aggregation level, the statistics of
-- each state's realisations (seed 6.4: total, mean and maximum duration,
-- and more): the intervals of state_trace_levels(0, -1), so level 0 counts
-- state_intervals rows and each level above counts the merged intervals of
-- that level (see state_aggregation.sql: the total of a state at level L
-- is the sum of the totals of the states mapped into it from L - 1; its
-- count can be smaller, consecutive realisations being one there).
-- Intervals cut by the start or the end of the trace (truncated; at a
-- level above 0, a merged interval with such a part) have no known length:
-- they are left out of every statistic and counted in truncated.
-- Columns: run_id, kind, object_id, object (name), level, state,
-- parent_state (what state becomes at level + 1; NULL at the top), count,
-- total_ns, mean_ns, min_ns, max_ns, stddev_ns (sample standard deviation,
-- n - 1 in the denominator; NULL for fewer than 2), p50_ns, p90_ns,
-- p99_ns, truncated (intervals left out). NULL statistics when every
-- interval was truncated (count 0).
-- Percentiles are DuckDB's quantile_disc, the nearest-rank definition: pQ
-- is the duration of rank max(1, ceil(Q/100 * count)) in ascending order,
-- always a duration that occurred (durations 1..10: p50 = 5, p90 = 9, p99
-- = 10).
-- Example: SELECT object, state, count, total_ns, p99_ns FROM state_stats
-- WHERE kind = 'task' AND level = 0 AND state = 'running' ORDER BY total_ns DESC.
CREATE OR REPLACE VIEW state_stats AS
SELECT * FROM state_stats_of_runs();

-- state_stats_window: (state_stats_window(t1, t2, run := NULL, relative :=
-- false)) state_stats over the time window [t1, t2) (ns on the trace's
-- time base; relative := true: ns from each run's first event): every
-- interval clipped to the window counts the part inside it (seed 6.4's
-- statistics of a chosen stretch of the trace). Same columns as
-- state_stats. On the BTF seed example, T_1MS_0 runs 100..25100, so
-- state_stats_window(1000, 11000) gives it one running interval of
-- 10000 ns.
-- Example: SELECT object, state, count, total_ns FROM
-- state_stats_window(1000, 11000, run := 1) WHERE level = 0 ORDER BY ALL.
CREATE OR REPLACE MACRO state_stats_window(t1, t2, run := NULL, relative := false) AS TABLE
SELECT * FROM state_stats_of_levels(run := run,
    t_from := CASE WHEN t1 IS NULL OR t2 IS NULL OR t1 < t2 THEN t1
                   ELSE error('state_stats_window: the window [' || t1 || ', ' || t2 || ') is empty: want t1 < t2') END,
    t_to := t2, relative := relative);
