-- sched_class: (sched_class(format, kind, state)) the scheduling class of
-- an atomic state, the same words for every format: 'running' (on a CPU,
-- doing its work), 'ready' (could run, waits for a CPU: activated and not
-- yet started, preempted, or interrupted), 'waiting' (waits inside a
-- process instance that the format delimits itself: BTF's waiting and
-- parking, off the core, and polling, active waiting that keeps the core
-- busy in cpu_intervals) or 'blocked' (waiting for something, between
-- instances); NULL for states that are not scheduling states (semaphores,
-- signals, TLV attributes other than state=, CPU states).
--   btf   task/isr: running; active, ready; waiting, polling, parking
--   qnx, kev thread: RUNNING; READY; every other state (kernel-call states
--         of instance 1 are left out by sched_intervals)
--   baget thread: thrRun; thrReady, thrInterrupted; thrNotReady
--   dtrace thread: running; runnable; any other (off_cpu, sleeping, ...;
--         call intervals of instance >= 1 are left out by sched_intervals)
--   ftrace thread: running; runnable (woken, or preempted: R, R+); any
--         other (sleeping, uninterruptible, I, T, ...; system-call
--         intervals of instance >= 1 are left out by sched_intervals)
--   tlv, toppers-asp, toppers-fmp: state=RUNNING or state=ACTIVE (an
--         interrupt handler; the running values of TLV's CPU model by
--         default, ingest/tlv/README.md); state=RUNNABLE or state=READY;
--         state=SPINNING, state=PARKED (polling a spin lock and preempted
--         while polling, as BTF's polling and parking: the standard format
--         traceduck's generator writes); any other state=... (case
--         ignored)
-- Example: SELECT sched_class('qnx', 'thread', 'REPLY')  -- 'blocked'
CREATE OR REPLACE MACRO sched_class(format, kind, state) AS
CASE
  WHEN format = 'btf' AND kind IN ('task', 'isr') THEN
    CASE state WHEN 'running' THEN 'running'
               WHEN 'active' THEN 'ready' WHEN 'ready' THEN 'ready'
               WHEN 'waiting' THEN 'waiting' WHEN 'polling' THEN 'waiting' WHEN 'parking' THEN 'waiting' END
  WHEN format IN ('qnx', 'kev') AND kind = 'thread' THEN
    CASE state WHEN 'RUNNING' THEN 'running' WHEN 'READY' THEN 'ready' ELSE 'blocked' END
  WHEN format IN ('dtrace', 'ftrace') AND kind = 'thread' THEN
    CASE state WHEN 'running' THEN 'running' WHEN 'runnable' THEN 'ready' ELSE 'blocked' END
  WHEN format = 'baget' AND kind = 'thread' THEN
    CASE state WHEN 'thrRun' THEN 'running' WHEN 'thrReady' THEN 'ready'
               WHEN 'thrInterrupted' THEN 'ready' WHEN 'thrNotReady' THEN 'blocked' END
  WHEN format IN ('tlv', 'toppers-asp', 'toppers-fmp', 'tlv-archive') AND lower(state) LIKE 'state=%' THEN
    CASE lower(state) WHEN 'state=running' THEN 'running' WHEN 'state=active' THEN 'running'
                      WHEN 'state=runnable' THEN 'ready' WHEN 'state=ready' THEN 'ready'
                      WHEN 'state=spinning' THEN 'waiting' WHEN 'state=parked' THEN 'waiting'
                      ELSE 'blocked' END
END;

-- sched_intervals: the state intervals of tasks, ISRs and threads with
-- their scheduling class (see sched_class): run_id, object_id, kind,
-- object (name), format, instance, state, class, start_ts, end_ts, dur,
-- cpu, truncated, start_seq, end_seq. QNX kernel-call intervals (instance
-- 1), DTrace call intervals (instance = depth >= 1) and ftrace system-call
-- intervals (instance 1, 2) are not scheduling states and are left out.
-- Example: SELECT object, class, sum(dur) FROM sched_intervals GROUP BY ALL
CREATE OR REPLACE VIEW sched_intervals AS
SELECT s.run_id, s.object_id, o.kind, o.name AS object, r.format, s.instance, s.state,
       sched_class(r.format, o.kind, s.state) AS class,
       s.start_ts, s.end_ts, s.dur, s.cpu, s.truncated, s.start_seq, s.end_seq
FROM state_intervals s
JOIN runs r ON r.run_id = s.run_id
JOIN objects o ON o.run_id = s.run_id AND o.object_id = s.object_id
WHERE sched_class(r.format, o.kind, s.state) IS NOT NULL
  AND NOT (r.format IN ('qnx', 'kev', 'dtrace', 'ftrace') AND s.instance <> 0);

-- sched_fallback_objects: the objects whose task_instances, sched_latency
-- and sched_stats rows were not written at ingest, which those views take
-- from their references (task_instances_reference, ...): every object of
-- a run without a row in sched_runs (ingested by an older traceduck), and
-- those of sched_fallback (schema/sched.go says why an object is there).
-- Columns: run_id, object_id.
-- Example: SELECT count(*) FROM sched_fallback_objects
CREATE OR REPLACE VIEW sched_fallback_objects AS
SELECT o.run_id, o.object_id FROM objects o ANTI JOIN sched_runs m ON m.run_id = o.run_id
UNION ALL
SELECT run_id, object_id FROM sched_fallback;

-- sched_neighbours_of: (sched_neighbours_of(fallback)) sched_neighbours
-- (below) of every object when fallback is false; when true, only of
-- sched_fallback_objects. task_instances and sched_latency read those
-- objects' rows from the references (task_instances_reference(fallback :=
-- true)) through it: the filter is applied before the window, which
-- DuckDB does not push a filter through.
-- Example: SELECT count(*) FROM sched_neighbours_of(true)
CREATE OR REPLACE MACRO sched_neighbours_of(fallback) AS TABLE
SELECT *,
       lag(class) OVER w AS prev_class,
       lag(state) OVER w AS prev_state,
       lag(end_ts) OVER w AS prev_end,
       lead(class) OVER w AS next_class,
       lead(start_ts) OVER w AS next_start,
       lead(cpu) OVER w AS next_cpu
FROM (
  SELECT * FROM sched_intervals WHERE NOT fallback
  UNION ALL
  SELECT s.* FROM sched_intervals s
  SEMI JOIN sched_fallback_objects f ON f.run_id = s.run_id AND f.object_id = s.object_id
  WHERE fallback
)
WINDOW w AS (PARTITION BY run_id, object_id, instance ORDER BY start_ts, end_ts, start_seq NULLS FIRST);

-- sched_neighbours: sched_intervals with what comes before and after each
-- interval of the same object and instance (the sequence task_instances
-- and sched_latency walk): prev_class, prev_state, prev_end, next_class,
-- next_start, next_cpu (NULL at the ends). Intervals are ordered by
-- start_ts, then end_ts (a zero-length interval at a time comes before
-- the one that replaced it), then start_seq; an interval without one (a
-- state known from the start of the trace, truncated) comes first: it
-- was there before whatever began at the trace's first instant.
-- Example: SELECT object, state, prev_state FROM sched_neighbours WHERE prev_end <> start_ts
CREATE OR REPLACE VIEW sched_neighbours AS
SELECT * FROM sched_neighbours_of(false);

-- task_instances_reference: (task_instances_reference(fallback := false))
-- the SQL definition of task_instances (below), computed from the state
-- intervals by windows over sched_neighbours: the reference that the rows
-- written at ingest (sched_instances) are tested against, format by
-- format, and what task_instances answers for the objects whose rows were
-- not written (fallback := true keeps only those: see sched_neighbours_of).
-- Same columns as task_instances.
-- Example: SELECT * FROM task_instances EXCEPT ALL SELECT * FROM task_instances_reference()
CREATE OR REPLACE MACRO task_instances_reference(fallback := false) AS TABLE
WITH seq AS (
  SELECT * FROM sched_neighbours WHERE NOT fallback
  UNION ALL
  SELECT * FROM sched_neighbours_of(true) WHERE fallback
), jobs AS (
  -- BTF numbers its instances; elsewhere an instance starts after a
  -- blocked state or a gap (a running count of the starts numbers them)
  SELECT *, instance AS job, NULL AS woke FROM seq WHERE format = 'btf'
  UNION ALL
  SELECT *,
         (sum(CASE WHEN prev_class IS NULL OR prev_class = 'blocked' OR prev_end <> start_ts THEN 1 ELSE 0 END)
           OVER (PARTITION BY run_id, object_id, instance ORDER BY start_ts, end_ts, start_seq NULLS FIRST ROWS UNBOUNDED PRECEDING))::BIGINT AS job,
         CASE WHEN prev_class = 'blocked' AND prev_end = start_ts THEN prev_state END AS woke
  FROM seq
  WHERE format <> 'btf' AND class <> 'blocked'
), moves AS (
  SELECT *,
         lag(cpu) OVER (PARTITION BY run_id, object_id, instance, job, class ORDER BY start_ts, end_ts, start_seq NULLS FIRST) AS prev_run_cpu
  FROM jobs
)
SELECT run_id, object_id, any_value(kind) AS kind, any_value(object) AS object, job AS instance,
       max(woke) AS woke_from,
       min(start_ts) AS activation_ts,
       min(start_ts) FILTER (WHERE class = 'running') AS start_ts,
       max(end_ts) AS end_ts,
       max(end_ts) - min(start_ts) AS response,
       min(start_ts) FILTER (WHERE class = 'running') - min(start_ts) AS start_delay,
       coalesce(sum(dur) FILTER (WHERE class = 'running'), 0)::BIGINT AS exec,
       coalesce(sum(dur) FILTER (WHERE class = 'ready'), 0)::BIGINT AS ready,
       coalesce(sum(dur) FILTER (WHERE class = 'waiting'), 0)::BIGINT AS waiting,
       count(*) FILTER (WHERE class = 'ready' AND prev_class = 'running' AND prev_end = start_ts) AS preemptions,
       count(*) FILTER (WHERE class = 'running' AND cpu <> prev_run_cpu) AS migrations,
       bool_or(truncated) AS truncated
FROM moves
GROUP BY run_id, object_id, instance, job;

-- task_instances: one row per process instance (job) of a task, ISR or
-- thread: from its activation until it ends (per format:
-- docs/semantics.md, "Task instances, response times, scheduling
-- latency").
--   BTF: the instance the trace numbers (activate .. terminate).
--   Other formats: a maximal run of contiguous running/ready intervals of
--   one object, from becoming ready (or running) after a blocked state
--   until it blocks again: a QNX thread from READY to its next blocking
--   state, a TOPPERS task from RUNNABLE to WAITING or DORMANT, a Baget
--   thread from thrReady to thrNotReady. A gap in the intervals (state
--   unknown) ends an instance too.
--   DTrace: its threads' states come from on-cpu and off-cpu only (no
--   wakeup): an instance begins at the thread's first on-cpu after it
--   blocked, so its response leaves out the wait on a run queue after
--   the wakeup (ingest/dtrace/README.md, "State intervals"), and its
--   waits for a CPU (sched_latency) are the preemptions only.
-- Columns: run_id, object_id, kind, object, instance (BTF's number, else
-- 1, 2, ... per object), woke_from (the state before activation; NULL at
-- the object's first interval and for BTF), activation_ts, start_ts (first
-- time running; NULL if never), end_ts, response (end_ts - activation_ts),
-- start_delay (start_ts - activation_ts), exec (time running), ready (time
-- ready, start_delay included), waiting (BTF: time waiting, polling or
-- parking), preemptions (times it went from running to ready: preempted
-- by a task or an interrupt), migrations (times it ran on another CPU than
-- the time before), truncated (cut by the start or end of the trace:
-- leave those out of statistics).
-- The rows are written at ingest (sched_instances, schema/sched.go) as
-- the state intervals close; task_instances_reference is the SQL they
-- equal, and answers for runs ingested by an older traceduck.
-- Example: SELECT object, quantile_cont(response, 0.99) FROM task_instances
--          WHERE NOT truncated GROUP BY object
CREATE OR REPLACE VIEW task_instances AS
SELECT i.run_id, i.object_id, o.kind, o.name AS object, i.instance, i.woke_from,
       i.activation_ts, i.start_ts, i.end_ts, i.response, i.start_delay,
       i.exec, i.ready, i.waiting, i.preemptions, i.migrations, i.truncated
FROM sched_instances i
JOIN objects o ON o.run_id = i.run_id AND o.object_id = i.object_id
SEMI JOIN sched_runs m ON m.run_id = i.run_id
ANTI JOIN sched_fallback f ON f.run_id = i.run_id AND f.object_id = i.object_id
UNION ALL
SELECT * FROM task_instances_reference(fallback := true);

-- sched_latency_reference: (sched_latency_reference(fallback := false))
-- the SQL definition of sched_latency (below) from sched_neighbours: the
-- reference of the rows written at ingest (sched_waits), as
-- task_instances_reference is of task_instances. Same columns as
-- sched_latency.
-- Example: SELECT * FROM sched_latency EXCEPT ALL SELECT * FROM sched_latency_reference()
CREATE OR REPLACE MACRO sched_latency_reference(fallback := false) AS TABLE
WITH seq AS (
  SELECT * FROM sched_neighbours WHERE NOT fallback
  UNION ALL
  SELECT * FROM sched_neighbours_of(true) WHERE fallback
), waits AS (
  -- number the runs of contiguous ready intervals
  SELECT *,
         sum(CASE WHEN prev_class = 'ready' AND prev_end = start_ts THEN 0 ELSE 1 END)
           OVER (PARTITION BY run_id, object_id, instance ORDER BY start_ts, end_ts, start_seq NULLS FIRST ROWS UNBOUNDED PRECEDING) AS wait_no
  FROM seq
  WHERE class = 'ready'
)
SELECT run_id, object_id, any_value(kind) AS kind, any_value(object) AS object,
       min(start_ts) AS ready_ts,
       max(next_start) FILTER (WHERE next_class = 'running' AND next_start = end_ts) AS run_ts,
       max(next_start) FILTER (WHERE next_class = 'running' AND next_start = end_ts) - min(start_ts) AS latency,
       max(next_cpu) FILTER (WHERE next_class = 'running' AND next_start = end_ts) AS cpu,
       CASE WHEN arg_min(prev_class, start_ts) = 'running' AND arg_min(prev_end, start_ts) = min(start_ts)
            THEN 'preemption' ELSE 'wakeup' END AS after,
       bool_or(truncated) AS truncated
FROM waits
GROUP BY run_id, object_id, instance, wait_no
HAVING count(*) FILTER (WHERE next_class = 'running' AND next_start = end_ts) = 1;

-- sched_latency: every wait of a task, ISR or thread for a CPU: a run of
-- contiguous ready intervals that ends when it starts running (per
-- format: docs/semantics.md). Columns:
-- run_id, object_id, kind, object, ready_ts (it became ready), run_ts (it
-- started running), latency (run_ts - ready_ts), cpu (the CPU it then ran
-- on), after ('wakeup': ready after a blocked state or at activation;
-- 'preemption': ready after running), truncated (the wait began at the
-- start of the trace).
-- The rows are written at ingest (sched_waits, schema/sched.go);
-- sched_latency_reference is the SQL they equal.
-- Example: SELECT object, after, max(latency) FROM sched_latency GROUP BY ALL
CREATE OR REPLACE VIEW sched_latency AS
SELECT w.run_id, w.object_id, o.kind, o.name AS object, w.ready_ts, w.run_ts,
       w.run_ts - w.ready_ts AS latency, w.cpu,
       CASE WHEN w.preempted THEN 'preemption' ELSE 'wakeup' END AS after, w.truncated
FROM sched_waits w
JOIN objects o ON o.run_id = w.run_id AND o.object_id = w.object_id
SEMI JOIN sched_runs m ON m.run_id = w.run_id
ANTI JOIN sched_fallback f ON f.run_id = w.run_id AND f.object_id = w.object_id
UNION ALL
SELECT * FROM sched_latency_reference(fallback := true);

-- sched_stats_reference: (sched_stats_reference(fallback := false)) the SQL
-- definition of sched_stats (below), from sched_intervals: the reference
-- of what sched_stats computes from the intervals' lengths written at
-- ingest (sched_durations), as task_instances_reference is of
-- task_instances; fallback := true keeps sched_fallback_objects. Same
-- columns as sched_stats.
-- Example: SELECT * FROM sched_stats EXCEPT ALL SELECT * FROM sched_stats_reference()
CREATE OR REPLACE MACRO sched_stats_reference(fallback := false) AS TABLE
WITH iv AS (
  SELECT * FROM sched_intervals WHERE NOT fallback
  UNION ALL
  SELECT s.* FROM sched_intervals s
  SEMI JOIN sched_fallback_objects f ON f.run_id = s.run_id AND f.object_id = s.object_id
  WHERE fallback
), g AS (
  SELECT run_id, any_value(kind) AS kind, object_id, any_value(object) AS object, class,
         count(*) FILTER (WHERE NOT truncated) AS count,
         coalesce(sum(dur) FILTER (WHERE NOT truncated), 0)::BIGINT AS total_ns,
         avg(dur) FILTER (WHERE NOT truncated) AS mean_ns,
         max(dur) FILTER (WHERE NOT truncated) AS max_ns,
         quantile_disc(dur, [0.5, 0.9, 0.99]) FILTER (WHERE NOT truncated) AS pct,
         count(*) FILTER (WHERE truncated) AS truncated
  FROM iv
  GROUP BY run_id, object_id, class
)
SELECT run_id, kind, object_id, object, class, count, total_ns, mean_ns, max_ns,
       pct[1] AS p50_ns, pct[2] AS p90_ns, pct[3] AS p99_ns,
       total_ns / nullif(sum(total_ns) OVER (PARTITION BY run_id, object_id), 0) AS share,
       truncated
FROM g;

-- sched_stats: per run, task/ISR/thread and scheduling class (running,
-- ready, waiting, blocked: see sched_class), the statistics of its
-- intervals, the same words for every format (state_stats has them by each
-- format's own state names). Truncated intervals are left out and
-- counted. Columns: run_id, kind, object_id, object, class, count,
-- total_ns, mean_ns, max_ns, p50_ns, p90_ns, p99_ns (nearest rank, as
-- state_stats), share (of the object's known time), truncated.
-- Computed from the lengths and classes of the intervals written at
-- ingest (sched_durations, schema/sched.go), not from their names.
-- Example: SELECT object, total_ns, p99_ns FROM sched_stats
--          WHERE class = 'running' ORDER BY total_ns DESC
CREATE OR REPLACE VIEW sched_stats AS
WITH g AS (
  SELECT d.run_id, d.object_id, d.class,
         count(*) FILTER (WHERE NOT d.truncated) AS count,
         coalesce(sum(d.dur) FILTER (WHERE NOT d.truncated), 0)::BIGINT AS total_ns,
         avg(d.dur) FILTER (WHERE NOT d.truncated) AS mean_ns,
         max(d.dur) FILTER (WHERE NOT d.truncated) AS max_ns,
         quantile_disc(d.dur, [0.5, 0.9, 0.99]) FILTER (WHERE NOT d.truncated) AS pct,
         count(*) FILTER (WHERE d.truncated) AS truncated
  FROM sched_durations d
  SEMI JOIN sched_runs m ON m.run_id = d.run_id
  ANTI JOIN sched_fallback f ON f.run_id = d.run_id AND f.object_id = d.object_id
  GROUP BY d.run_id, d.object_id, d.class
)
SELECT g.run_id, o.kind, g.object_id, o.name AS object,
       CASE g.class WHEN 1 THEN 'running' WHEN 2 THEN 'ready' WHEN 3 THEN 'waiting' WHEN 4 THEN 'blocked' END AS class,
       g.count, g.total_ns, g.mean_ns, g.max_ns,
       g.pct[1] AS p50_ns, g.pct[2] AS p90_ns, g.pct[3] AS p99_ns,
       g.total_ns / nullif(sum(g.total_ns) OVER (PARTITION BY g.run_id, g.object_id), 0) AS share,
       g.truncated
FROM g
JOIN objects o ON o.run_id = g.run_id AND o.object_id = g.object_id
UNION ALL
SELECT * FROM sched_stats_reference(fallback := true);
