-- cpu_intervals: what held each CPU when, in every format, as the CPU
-- model writes it (docs/semantics.md, "Who holds a CPU"): the state
-- intervals of the objects of kind cpu, whose instance is the holder's
-- object_id (0 when nothing runs) and whose state is the holder's name.
-- Columns: run_id, cpu_id (the CPU object), cpu (its name), holder (the
-- task, ISR, thread, interrupt or idle task on it; 'idle' when nothing
-- runs), holder_id (its object; NULL when nothing runs), busy (the
-- state's top aggregation level is 'busy': anything but nothing and an
-- idle task), start_ts, end_ts, dur, truncated.
-- Example: SELECT cpu, holder, sum(dur) FROM cpu_intervals WHERE NOT truncated GROUP BY ALL
CREATE OR REPLACE VIEW cpu_intervals AS
WITH cpu_tops AS (
  -- each CPU state's top level (level 3: busy or idle)
  SELECT m.run_id, m.atomic AS state, m.state AS top
  FROM state_level_map m
  JOIN state_level_depth d ON d.run_id = m.run_id AND d.kind = m.kind AND d.depth = m.level
  WHERE m.kind = 'cpu'
)
SELECT s.run_id, s.object_id AS cpu_id, c.name AS cpu,
       -- a run written before the CPU model has instance 0 throughout:
       -- its busy states keep their names
       CASE WHEN s.instance > 0 OR t.top = 'busy' THEN s.state ELSE 'idle' END AS holder,
       CASE WHEN s.instance > 0 THEN s.instance::INTEGER END AS holder_id,
       coalesce(t.top = 'busy', false) AS busy,
       s.start_ts, s.end_ts, s.dur, s.truncated
FROM state_intervals s
JOIN objects c ON c.run_id = s.run_id AND c.object_id = s.object_id
LEFT JOIN cpu_tops t ON t.run_id = s.run_id AND t.state = s.state
WHERE c.kind = 'cpu';

-- cpu_load_by_holder: (cpu_load_by_holder(window_ns, run := NULL)) per
-- run, CPU, time window and holder: the time the holder held the CPU in
-- the window (ns) and its share of the window. Windows are
-- [first_ts + k*window_ns, first_ts + (k+1)*window_ns) from the run's
-- first event; the last one ends at the run's last event. Intervals are
-- clipped to the windows. run, when given, keeps one run: its windows are
-- the only ones made, where a WHERE run_id = N on the result is applied
-- after every run's windows are (DuckDB does not push it below them), so
-- that a long run with small windows costs only the query that asks for
-- it. A run spans at most 2^62 ns and window_ns is positive, so no window
-- edge overflows; the number of windows is the span / window_ns (the
-- command line bounds it: docs/bad-input.md).
-- Columns: run_id, cpu, window_start, window_end, holder, busy, ns, share.
-- Example: SELECT * FROM cpu_load_by_holder(10000000, run := 1) WHERE busy ORDER BY share DESC LIMIT 10
CREATE OR REPLACE MACRO cpu_load_by_holder(window_ns, run := NULL) AS TABLE
WITH iv AS MATERIALIZED (
  -- read twice below: computed once (DuckDB inlines a CTE otherwise)
  SELECT i.run_id, i.cpu, i.holder, i.busy, i.start_ts, i.end_ts, r.first_ts, r.last_ts,
         (i.start_ts - r.first_ts) // window_ns AS k_lo,
         (i.end_ts - 1 - r.first_ts) // window_ns AS k_hi
  FROM cpu_intervals i JOIN runs r ON r.run_id = i.run_id
  WHERE i.end_ts > i.start_ts AND (run IS NULL OR i.run_id = run)
), spans AS (
  -- most intervals lie in one window; only the others are unnested
  SELECT * EXCLUDE (k_lo, k_hi), k_lo AS k FROM iv WHERE k_lo = k_hi
  UNION ALL
  SELECT * EXCLUDE (k_lo, k_hi), unnest(range(k_lo, k_hi + 1)) AS k FROM iv WHERE k_lo < k_hi
), edges AS (
  -- ws + least(window_ns, x - ws), not least(ws + window_ns, x): the sum
  -- would overflow for a window wider than the room left above ws
  SELECT *, first_ts + k * window_ns AS ws FROM spans
), windows AS (
  SELECT run_id, cpu, holder, busy, k, min(ws) AS ws,
         min(ws) + least(window_ns, min(last_ts) - min(ws)) AS we,
         sum(ws + least(window_ns, end_ts - ws) - greatest(start_ts, ws))::BIGINT AS ns
  FROM edges
  GROUP BY run_id, cpu, k, holder, busy
)
SELECT run_id, cpu, ws AS window_start, we AS window_end, holder, busy, ns, ns / (we - ws) AS share
FROM windows;

-- cpu_load: (cpu_load(window_ns, run := NULL)) per run, CPU and time
-- window (as in cpu_load_by_holder; run keeps one run): busy_ns (time
-- some task, ISR, thread or interrupt held the CPU: not an idle task, not
-- nothing), known_ns (time its holder is known: idle or busy), and load =
-- busy_ns / the window's length. A window in which the CPU's holder is
-- never known is absent. What makes a CPU busy in each format:
-- docs/semantics.md. The sums of cpu_load_by_holder over the holders,
-- computed without the holders' names: grouped by the CPU's object, then
-- by its name (on a 10M-event BTF run, 2.3 s instead of 6 s).
-- Example: SELECT cpu, window_start, round(load, 3) FROM cpu_load(10000000, run := 1) ORDER BY ALL
CREATE OR REPLACE MACRO cpu_load(window_ns, run := NULL) AS TABLE
WITH iv AS MATERIALIZED (
  -- read twice below: computed once (DuckDB inlines a CTE otherwise)
  SELECT i.run_id, i.cpu_id, i.busy, i.start_ts, i.end_ts, r.first_ts, r.last_ts,
         (i.start_ts - r.first_ts) // window_ns AS k_lo,
         (i.end_ts - 1 - r.first_ts) // window_ns AS k_hi
  FROM cpu_intervals i JOIN runs r ON r.run_id = i.run_id
  WHERE i.end_ts > i.start_ts AND (run IS NULL OR i.run_id = run)
), spans AS (
  -- most intervals lie in one window; only the others are unnested
  SELECT * EXCLUDE (k_lo, k_hi), k_lo AS k FROM iv WHERE k_lo = k_hi
  UNION ALL
  SELECT * EXCLUDE (k_lo, k_hi), unnest(range(k_lo, k_hi + 1)) AS k FROM iv WHERE k_lo < k_hi
), edges AS (
  -- as in cpu_load_by_holder: no sum overflows
  SELECT *, first_ts + k * window_ns AS ws FROM spans
), windows AS (
  SELECT run_id, cpu_id, k, min(ws) AS ws,
         min(ws) + least(window_ns, min(last_ts) - min(ws)) AS we,
         sum(ws + least(window_ns, end_ts - ws) - greatest(start_ts, ws)) FILTER (WHERE busy) AS busy_ns,
         sum(ws + least(window_ns, end_ts - ws) - greatest(start_ts, ws)) AS known_ns
  FROM edges
  GROUP BY run_id, cpu_id, k
)
SELECT w.run_id, c.name AS cpu, w.ws AS window_start, w.we AS window_end,
       coalesce(sum(w.busy_ns), 0)::BIGINT AS busy_ns,
       sum(w.known_ns)::BIGINT AS known_ns,
       coalesce(sum(w.busy_ns), 0) / (w.we - w.ws) AS load
FROM windows w
JOIN objects c ON c.run_id = w.run_id AND c.object_id = w.cpu_id
GROUP BY w.run_id, c.name, w.ws, w.we;

-- cpu_utilization: per run, CPU and holder over the whole run: ns held
-- (complete intervals only) and the share of the CPU's known time
-- (holders and busy as in cpu_intervals; docs/semantics.md).
-- Columns: run_id, cpu, holder, busy, ns, share.
-- Example: SELECT cpu, holder, round(100 * share, 1) AS pct FROM cpu_utilization ORDER BY ns DESC
CREATE OR REPLACE VIEW cpu_utilization AS
SELECT run_id, cpu, holder, busy, sum(dur)::BIGINT AS ns,
       sum(dur) / sum(sum(dur)) OVER (PARTITION BY run_id, cpu) AS share
FROM cpu_intervals
WHERE NOT truncated
GROUP BY run_id, cpu, holder, busy;
