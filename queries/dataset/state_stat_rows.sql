-- queries/state_stat_rows.sql as a Parquet dataset (queries/export) has
-- it: a dataset has no tables of symbol ids (state_interval_rows,
-- state_level_interval_rows, symbols), its state_intervals and
-- state_level_intervals hold the states by name. Same macros, same
-- columns, same rows.

-- state_stat_rows_reference: the rows state_stats groups for whole
-- runs, every state by name (see queries/state_stat_rows.sql).
CREATE OR REPLACE MACRO state_stat_rows_reference(run := NULL) AS TABLE
SELECT run_id, object_id, level, NULL::INTEGER AS state_sym, state, truncated, dur
FROM state_trace_level_rows(0, -1, run := run, detail := false);

-- state_stat_rows: in a dataset, the reference.
CREATE OR REPLACE MACRO state_stat_rows(run := NULL) AS TABLE
SELECT * FROM state_stat_rows_reference(run := run);

-- state_stat_rows_stored: in a dataset, none (no symbol ids);
-- state_stat_rows_unstored: every row, by name (the reference).
CREATE OR REPLACE MACRO state_stat_rows_stored(run := NULL) AS TABLE
SELECT * FROM state_stat_rows_reference(run := run) WHERE false;

CREATE OR REPLACE MACRO state_stat_rows_unstored(run := NULL) AS TABLE
SELECT * FROM state_stat_rows_reference(run := run);

-- state_stat_names: no symbol ids to name.
CREATE OR REPLACE MACRO state_stat_names() AS TABLE
SELECT NULL::INTEGER AS sym, NULL::VARCHAR AS name WHERE false;

-- state_tree_stored_runs: in a dataset, none (the targets' states are
-- symbol ids): state_stats_tree computes every tree.
CREATE OR REPLACE MACRO state_tree_stored_runs(run := NULL) AS TABLE
SELECT NULL::INTEGER AS run_id WHERE false;

-- state_tree_stored: in a dataset, no rows.
CREATE OR REPLACE MACRO state_tree_stored(ord_n, run := NULL, whole := true) AS TABLE
SELECT NULL::INTEGER AS run_id, NULL::INTEGER AS ord_no, NULL::INTEGER AS pos, NULL::INTEGER AS pos_total,
       NULL::INTEGER AS depth, NULL::VARCHAR AS node, NULL::VARCHAR AS label, NULL::INTEGER AS level,
       NULL::BIGINT AS count, NULL::BIGINT AS total_ns, NULL::BIGINT AS max_ns, NULL::BIGINT AS p50_ns,
       NULL::BIGINT AS p90_ns, NULL::BIGINT AS p99_ns, NULL::BIGINT AS truncated, NULL::VARCHAR[] AS path,
       NULL::VARCHAR AS kind, NULL::INTEGER AS object_id, NULL::VARCHAR AS object, NULL::VARCHAR AS state
WHERE false;
