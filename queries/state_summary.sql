-- state_summary: per run and object, how often and how long the object was in
-- each state: the atomic level (0) of state_stats, in its first columns.
-- Intervals cut by the start or the end of the trace (truncated) are left
-- out: their true length is unknown; a state whose every interval was cut
-- has no row. Columns: run_id, kind, object (name), state, count,
-- total_ns, mean_ns, max_ns.
-- Example: SELECT object, total_ns FROM state_summary WHERE kind = 'task'
-- AND state = 'running' ORDER BY total_ns DESC.
CREATE OR REPLACE VIEW state_summary AS
SELECT run_id, kind, object, state, count, total_ns, mean_ns, max_ns
FROM state_stats
WHERE level = 0 AND count > 0;
