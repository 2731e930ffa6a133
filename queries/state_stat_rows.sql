-- state_stat_rows: (state_stat_rows(run := NULL)) the rows
-- state_stats groups for whole runs, those of state_trace_level_rows(0,
-- -1, run := run) with only what the statistics read: run_id, object_id,
-- level, state_sym (the state's id in symbols; NULL where state is given),
-- state (NULL where state_sym is given), truncated, dur. Read from the
-- tables that store the intervals (state_interval_rows,
-- state_level_interval_rows), each state as its symbol id: grouping on an
-- integer, and naming the groups after (state_stat_names), costs about
-- half of grouping on the names, which the views state_intervals and
-- state_level_intervals look up row by row. The levels of the objects
-- whose merged intervals were not stored (state_level_objects) come from
-- state_trace_levels_reference, by name. A Parquet dataset, which has the
-- intervals by name only, replaces this macro by
-- state_stat_rows_reference (queries/dataset/state_stat_rows.sql
-- replaces this file in a dataset).
-- Example: SELECT level, count(*) FROM state_stat_rows(run := 1) GROUP BY level.
CREATE OR REPLACE MACRO state_stat_rows(run := NULL) AS TABLE
SELECT * FROM state_stat_rows_stored(run := run)
UNION ALL
SELECT * FROM state_stat_rows_unstored(run := run);

-- state_stat_rows_stored: (state_stat_rows_stored(run := NULL)) the rows
-- of state_stat_rows read from the tables that store the intervals, each
-- state by its symbol id (state NULL); same columns.
-- state_stat_rows_unstored: (state_stat_rows_unstored(run := NULL)) the
-- rest, by name (state_sym NULL): the levels above 0 of the objects
-- whose merged intervals were not stored, none on a database written by
-- this traceduck. (Apart so that a query reads the second once: each
-- reference to it plans and runs the merge of state_trace_levels_reference,
-- 0.05 CPU-s at a million events for no rows, and state_stats_tree read
-- state_stat_rows three times.)
-- Example: SELECT count(*) FROM state_stat_rows_unstored().
CREATE OR REPLACE MACRO state_stat_rows_stored(run := NULL) AS TABLE
SELECT run_id, object_id, 0::BIGINT AS level, state_sym, NULL::VARCHAR AS state, truncated, end_ts - start_ts AS dur
FROM state_interval_rows
WHERE run IS NULL OR run_id = run
UNION ALL
SELECT run_id, object_id, level::BIGINT, state_sym, NULL::VARCHAR, truncated, end_ts - start_ts
FROM state_level_interval_rows
WHERE run IS NULL OR run_id = run;

CREATE OR REPLACE MACRO state_stat_rows_unstored(run := NULL) AS TABLE
SELECT run_id, object_id, level, NULL::INTEGER AS state_sym, state, truncated, dur
FROM state_trace_levels_reference(0, -1, run := run, unstored := true)
WHERE level > 0;

-- state_stat_rows_reference: (state_stat_rows_reference(run :=
-- NULL)) the rows of state_stat_rows with every state by name (the
-- rows of state_trace_level_rows(0, -1)); what a Parquet dataset reads.
-- Example: SELECT level, count(*) FROM state_stat_rows_reference(run := 1) GROUP BY level.
CREATE OR REPLACE MACRO state_stat_rows_reference(run := NULL) AS TABLE
SELECT run_id, object_id, level, NULL::INTEGER AS state_sym, state, truncated, dur
FROM state_trace_level_rows(0, -1, run := run, detail := false);

-- state_stat_names: (state_stat_names()) the names of the symbol ids of
-- state_stat_rows: sym, name (the symbols table; none in a Parquet
-- dataset). Example: SELECT * FROM state_stat_names() LIMIT 5.
CREATE OR REPLACE MACRO state_stat_names() AS TABLE
SELECT sym, name FROM symbols;

-- state_tree_stored_runs: (state_tree_stored_runs(run := NULL)) the runs
-- whose state statistics tree the ingest wrote (state_tree_runs): run_id.
-- None in a Parquet dataset (its file replaces this one), whose trees
-- state_stats_tree computes.
-- Example: SELECT count(*) FROM state_tree_stored_runs().
CREATE OR REPLACE MACRO state_tree_stored_runs(run := NULL) AS TABLE
SELECT run_id FROM state_tree_runs WHERE run IS NULL OR run_id = run;

-- state_tree_stored: (state_tree_stored(ord_n, run := NULL, whole := true)) the nodes of
-- the state statistics trees the ingest wrote, of order ord_n (1 kos, 2
-- kso): the rows of state_tree_nodes, each percentile the ingest could not
-- tell taken here: the rank-th smallest of the node's durations in the
-- bucket state_tree_targets names (a scan of the intervals, joined to the
-- targets on their group and the bucket's bounds, and a sort of each
-- bucket's durations only). whole := false: none (the view's windows;
-- nothing is read).
-- Example: SELECT pos, label, p99_ns FROM state_tree_stored(1, run := 1) ORDER BY pos LIMIT 5.
CREATE OR REPLACE MACRO state_tree_stored(ord_n, run := NULL, whole := true) AS TABLE
WITH
-- (a NULL state as -1: a join on equal integers is the fast one)
targets AS (
    SELECT run_id, pos, pct, rank, object_id, level::BIGINT AS level,
           coalesce(state_sym, level_state_sym, -1) AS sym, lo, hi
    FROM state_tree_target_rows
    WHERE whole AND ord_no = ord_n AND (run IS NULL OR run_id = run)
),
cand AS (
    SELECT t.run_id, t.pos, t.pct, t.rank, r.dur
    FROM state_stat_rows_stored(run := run) r
    JOIN targets t
      ON t.run_id = r.run_id AND t.object_id = r.object_id AND t.level = r.level
     AND t.sym = coalesce(r.state_sym, -1)
    WHERE NOT r.truncated AND r.dur BETWEEN t.lo AND t.hi
),
pcts AS (
    SELECT run_id, pos,
           max(v) FILTER (WHERE pct = 1) AS p50, max(v) FILTER (WHERE pct = 2) AS p90,
           max(v) FILTER (WHERE pct = 3) AS p99
    FROM (SELECT run_id, pos, pct, list_sort(list(dur))[any_value(rank)] AS v
          FROM cand GROUP BY run_id, pos, pct)
    GROUP BY run_id, pos
)
SELECT n.* REPLACE (coalesce(n.p50_ns, p.p50) AS p50_ns, coalesce(n.p90_ns, p.p90) AS p90_ns,
                    coalesce(n.p99_ns, p.p99) AS p99_ns)
FROM state_tree_nodes n
LEFT JOIN pcts p ON p.run_id = n.run_id AND p.pos = n.pos
WHERE whole AND n.ord_no = ord_n AND (run IS NULL OR n.run_id = run);
