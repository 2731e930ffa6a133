-- priority_inversions: each time a task or thread of priority H waited for
-- a resource held by one of lower priority L, while that holder was ready
-- (preempted, not running) and a task of a priority M between them (L < M
-- < H) held the CPU the holder was preempted on: the holder could not run
-- to give the resource back, and the waiter waited for the middle task
-- (docs/semantics.md, "Priority inversions"). Priorities are the
-- effective ones at each instant (priority_intervals.urgency: raised by
-- inheritance or a ceiling where the trace tells, on one scale for every
-- format), so a holder that inherited the waiter's priority is no
-- inversion; a task whose priority the trace does not tell takes part in
-- none (ISRs and interrupts, which hold the CPU above every task, neither).
-- Waits and holds are those of resource_waits and resource_holds (their
-- truncated ones too), "ready" is sched_intervals' class, who holds the
-- CPU is cpu_intervals'. One row per maximal interval of one (resource,
-- high, low, middle, cpu): the pieces where every condition holds,
-- joined where they touch. Columns: run_id, resource, high (the waiter),
-- low (the holder), middle (the task on the CPU), start_ts, end_ts, dur
-- (ns), resource_id, high_id, low_id, middle_id, cpu (the CPU's name).
-- Example: SELECT resource, high, low, middle, count(*), sum(dur)
--          FROM priority_inversions GROUP BY ALL ORDER BY sum(dur) DESC
CREATE OR REPLACE VIEW priority_inversions AS
WITH waits AS (
  -- each wait, cut into the spans of one priority of the waiter
  SELECT i.run_id, i.resource_id, i.actor_id AS high_id, p.urgency AS hu,
         greatest(i.start_ts, p.start_ts) AS s, least(i.end_ts, p.end_ts) AS e
  FROM resource_intervals i
  JOIN priority_intervals p ON p.run_id = i.run_id AND p.object_id = i.actor_id
   AND p.start_ts < i.end_ts AND p.end_ts > i.start_ts
  WHERE i.relation = 'wait'
), held AS (
  -- ... while another task held the resource at a lower priority
  SELECT w.run_id, w.resource_id, w.high_id, w.hu, h.actor_id AS low_id, q.urgency AS lu,
         greatest(w.s, h.start_ts, q.start_ts) AS s, least(w.e, h.end_ts, q.end_ts) AS e
  FROM waits w
  JOIN resource_intervals h ON h.run_id = w.run_id AND h.resource_id = w.resource_id
   AND h.relation = 'hold' AND h.actor_id <> w.high_id
   AND h.start_ts < w.e AND h.end_ts > w.s
  JOIN priority_intervals q ON q.run_id = w.run_id AND q.object_id = h.actor_id
   AND q.start_ts < least(w.e, h.end_ts) AND q.end_ts > greatest(w.s, h.start_ts)
  WHERE q.urgency < w.hu
), ready AS (
  -- ... and was ready (preempted) on a CPU
  SELECT h.*, r.cpu AS cpu_no, greatest(h.s, r.start_ts) AS rs, least(h.e, r.end_ts) AS re
  FROM held h
  JOIN sched_intervals r ON r.run_id = h.run_id AND r.object_id = h.low_id
   AND r.class = 'ready' AND r.start_ts < h.e AND r.end_ts > h.s
  WHERE h.s < h.e
), middle AS (
  -- ... which a task of a priority between them held. The run and the
  -- CPU are compared as differences, so that DuckDB joins on the time
  -- ranges alone (an inequality join, in n log n): as equalities, it
  -- would hash the few CPUs and compare every ready interval with every
  -- interval of its CPU (8.5 s instead of 2.8 s on a 2M-event trace)
  SELECT r.run_id, r.resource_id, r.high_id, r.low_id, c.holder_id AS middle_id, c.cpu,
         greatest(r.rs, c.start_ts, m.start_ts) AS s, least(r.re, c.end_ts, m.end_ts) AS e
  FROM ready r
  JOIN objects co ON co.run_id = r.run_id AND co.kind = 'cpu' AND co.native_id = r.cpu_no
  JOIN cpu_intervals c ON c.start_ts < r.re AND c.end_ts > r.rs
   AND c.run_id - r.run_id = 0 AND c.cpu_id - co.object_id = 0
   AND c.holder_id NOT IN (r.low_id, r.high_id)
  JOIN priority_intervals m ON m.run_id = r.run_id AND m.object_id = c.holder_id
   AND m.start_ts < least(r.re, c.end_ts) AND m.end_ts > greatest(r.rs, c.start_ts)
  WHERE r.rs < r.re AND m.urgency > r.lu AND m.urgency < r.hu
), pieces AS (
  SELECT *,
         CASE WHEN s <= max(e) OVER (PARTITION BY run_id, resource_id, high_id, low_id, middle_id, cpu
                                     ORDER BY s, e ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
              THEN 0 ELSE 1 END AS starts
  FROM middle
  WHERE s < e
), islands AS (
  SELECT *, sum(starts) OVER (PARTITION BY run_id, resource_id, high_id, low_id, middle_id, cpu
                              ORDER BY s, e ROWS UNBOUNDED PRECEDING) AS island
  FROM pieces
)
SELECT i.run_id, any_value(ro.name) AS resource, any_value(ho.name) AS high,
       any_value(lo.name) AS low, any_value(mo.name) AS middle,
       min(i.s) AS start_ts, max(i.e) AS end_ts, max(i.e) - min(i.s) AS dur,
       i.resource_id, i.high_id, i.low_id, i.middle_id, i.cpu
FROM islands i
JOIN objects ro ON ro.run_id = i.run_id AND ro.object_id = i.resource_id
JOIN objects ho ON ho.run_id = i.run_id AND ho.object_id = i.high_id
JOIN objects lo ON lo.run_id = i.run_id AND lo.object_id = i.low_id
JOIN objects mo ON mo.run_id = i.run_id AND mo.object_id = i.middle_id
GROUP BY i.run_id, i.resource_id, i.high_id, i.low_id, i.middle_id, i.cpu, i.island;
