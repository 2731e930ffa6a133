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
