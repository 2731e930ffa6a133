-- cpu_intervals: what held each CPU when, for every format: run_id,
-- cpu_id (the CPU object), cpu (its name), holder (the name of the task,
-- ISR, thread or interrupt on it; 'idle' when idle), holder_id (its object,
-- NULL when idle or not known as an object), busy, start_ts, end_ts, dur,
-- truncated.
--   btf, qnx, kev, dtrace, ftrace: the intervals of the cpu objects; their
--         state is the holder's name, 'idle' when idle (dtrace:
--         'switching', the dispatcher between two threads, is busy).
--   baget: the intervals of the cpu objects; cpuThr/cpuIntr with the
--         holder's object_id as instance, cpuIdle.
--   tlv, toppers-*: the objects of kind Context (TOPPERS: the running
--         context of a processor), state name=HOLDER; name=None or
--         name=idle is idle.
-- Example: SELECT cpu, holder, sum(dur) FROM cpu_intervals WHERE NOT truncated GROUP BY ALL
CREATE OR REPLACE VIEW cpu_intervals AS
WITH cpu_states AS (
  SELECT s.run_id, s.object_id AS cpu_id, c.name AS cpu, r.format, s.state, s.instance,
         CASE WHEN r.format = 'baget' THEN CASE WHEN s.state = 'cpuIdle' THEN 'idle' END
              WHEN r.format IN ('tlv', 'toppers-asp', 'toppers-fmp', 'tlv-archive') THEN
                   CASE WHEN lower(s.state) IN ('name=none', 'name=idle') THEN 'idle' ELSE substr(s.state, 6) END
              ELSE s.state END AS named,
         s.start_ts, s.end_ts, s.dur, s.truncated
  FROM state_intervals s
  JOIN runs r ON r.run_id = s.run_id
  JOIN objects c ON c.run_id = s.run_id AND c.object_id = s.object_id
  WHERE (c.kind = 'cpu' AND r.format IN ('btf', 'qnx', 'kev', 'baget', 'dtrace', 'ftrace'))
     OR (lower(c.kind) = 'context' AND r.format IN ('tlv', 'toppers-asp', 'toppers-fmp', 'tlv-archive') AND lower(s.state) LIKE 'name=%')
), by_name AS (
  -- holders named by a state: the first object of that name that is not a CPU
  SELECT run_id, name, min(object_id) AS object_id
  FROM objects WHERE kind <> 'cpu' AND lower(kind) <> 'context'
  GROUP BY run_id, name
)
SELECT c.run_id, c.cpu_id, c.cpu,
       CASE WHEN c.format = 'baget' THEN coalesce(c.named, h.name, c.state) ELSE c.named END AS holder,
       CASE WHEN c.format = 'baget' THEN h.object_id ELSE n.object_id END AS holder_id,
       coalesce(c.named, '') <> 'idle' AS busy,
       c.start_ts, c.end_ts, c.dur, c.truncated
FROM cpu_states c
-- equality joins only (a condition on the format here would make DuckDB
-- join by nested loops); the CASEs above pick the one that applies
LEFT JOIN objects h ON h.run_id = c.run_id AND h.object_id = c.instance
LEFT JOIN by_name n ON n.run_id = c.run_id AND n.name = c.named;

-- cpu_load_by_holder: (cpu_load_by_holder(window_ns)) per run, CPU, time
-- window and holder: the time the holder held the CPU in the window (ns)
-- and its share of the window. Windows are [first_ts + k*window_ns,
-- first_ts + (k+1)*window_ns) from the run's first event; the last one
-- ends at the run's last event. Intervals are clipped to the windows.
-- Columns: run_id, cpu, window_start, window_end, holder, busy, ns, share.
-- Example: SELECT * FROM cpu_load_by_holder(10000000) WHERE busy ORDER BY share DESC LIMIT 10
CREATE OR REPLACE MACRO cpu_load_by_holder(window_ns) AS TABLE
WITH iv AS (
  SELECT i.run_id, i.cpu, i.holder, i.busy, i.start_ts, i.end_ts, r.first_ts, r.last_ts,
         (i.start_ts - r.first_ts) // window_ns AS k_lo,
         (i.end_ts - 1 - r.first_ts) // window_ns AS k_hi
  FROM cpu_intervals i JOIN runs r ON r.run_id = i.run_id
  WHERE i.end_ts > i.start_ts
), spans AS (
  -- most intervals lie in one window; only the others are unnested
  SELECT * EXCLUDE (k_lo, k_hi), k_lo AS k FROM iv WHERE k_lo = k_hi
  UNION ALL
  SELECT * EXCLUDE (k_lo, k_hi), unnest(range(k_lo, k_hi + 1)) AS k FROM iv WHERE k_lo < k_hi
), windows AS (
  SELECT run_id, cpu, holder, busy, k, min(first_ts) + k * window_ns AS ws,
         least(min(first_ts) + (k + 1) * window_ns, min(last_ts)) AS we,
         sum(least(end_ts, first_ts + (k + 1) * window_ns) - greatest(start_ts, first_ts + k * window_ns))::BIGINT AS ns
  FROM spans
  GROUP BY run_id, cpu, k, holder, busy
)
SELECT run_id, cpu, ws AS window_start, we AS window_end, holder, busy, ns, ns / (we - ws) AS share
FROM windows;

-- cpu_load: (cpu_load(window_ns)) per run, CPU and time window (as in
-- cpu_load_by_holder): busy_ns (time some task, ISR, thread or interrupt
-- held the CPU), known_ns (time its state is known: idle or busy), and
-- load = busy_ns / the window's length. A window in which the CPU's state
-- is never known is absent.
-- Example: SELECT cpu, window_start, round(load, 3) FROM cpu_load(10000000) ORDER BY ALL
CREATE OR REPLACE MACRO cpu_load(window_ns) AS TABLE
SELECT run_id, cpu, window_start, window_end,
       coalesce(sum(ns) FILTER (WHERE busy), 0)::BIGINT AS busy_ns,
       sum(ns)::BIGINT AS known_ns,
       coalesce(sum(ns) FILTER (WHERE busy), 0) / (window_end - window_start) AS load
FROM cpu_load_by_holder(window_ns)
GROUP BY run_id, cpu, window_start, window_end;

-- cpu_utilization: per run, CPU and holder over the whole run: ns held
-- (complete intervals only) and the share of the CPU's known time.
-- Columns: run_id, cpu, holder, busy, ns, share.
-- Example: SELECT cpu, holder, round(100 * share, 1) AS pct FROM cpu_utilization ORDER BY ns DESC
CREATE OR REPLACE VIEW cpu_utilization AS
SELECT run_id, cpu, holder, busy, sum(dur)::BIGINT AS ns,
       sum(dur) / sum(sum(dur)) OVER (PARTITION BY run_id, cpu) AS share
FROM cpu_intervals
WHERE NOT truncated
GROUP BY run_id, cpu, holder, busy;
