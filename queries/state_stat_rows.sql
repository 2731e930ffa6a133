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
