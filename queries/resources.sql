-- resource_holds: each time a task, thread or ISR held a resource (a
-- semaphore, mutex, lock, queue, ...: it owned it, was assigned it), in
-- every format that tells (docs/semantics.md, "Resources: holds and
-- waits"): from the assignment to the release. Several holders of one
-- resource at once are several rows (a counting semaphore); a holder
-- assigned a resource it holds already (a recursive mutex) holds it until
-- it gives the last assignment back. A hold still open at the end of the
-- trace ends at the run's last event, and one released before the trace
-- said it began starts at the run's first event: both are truncated, and
-- their true length is unknown. Columns: run_id, resource_id, resource
-- (its name), resource_kind (semaphore, mutex, ...: the format's word),
-- holder_id, holder (its name), start_ts, end_ts, dur (ns), truncated.
-- Example: SELECT resource, holder, count(*), sum(dur) FROM resource_holds
-- WHERE NOT truncated GROUP BY ALL ORDER BY ALL
CREATE OR REPLACE VIEW resource_holds AS
SELECT i.run_id, i.resource_id, r.name AS resource, i.resource_kind,
       i.actor_id AS holder_id, a.name AS holder,
       i.start_ts, i.end_ts, i.dur, i.truncated
FROM resource_intervals i
JOIN objects r ON r.run_id = i.run_id AND r.object_id = i.resource_id
JOIN objects a ON a.run_id = i.run_id AND a.object_id = i.actor_id
WHERE i.relation = 'hold';

-- resource_waits: each time a task, thread or ISR waited for a resource,
-- from its request that blocked until it was assigned the resource or gave
-- up (docs/semantics.md, "Resources: holds and waits"). A request granted
-- at once is no wait. A wait still open at the end of the trace, or one
-- that ended before the trace said it began, is truncated.
-- Columns: run_id, resource_id, resource, resource_kind, waiter_id,
-- waiter (its name), start_ts, end_ts, dur (ns), truncated.
-- Example: SELECT resource, waiter, count(*), max(dur) FROM resource_waits
-- WHERE NOT truncated GROUP BY ALL ORDER BY ALL
CREATE OR REPLACE VIEW resource_waits AS
SELECT i.run_id, i.resource_id, r.name AS resource, i.resource_kind,
       i.actor_id AS waiter_id, a.name AS waiter,
       i.start_ts, i.end_ts, i.dur, i.truncated
FROM resource_intervals i
JOIN objects r ON r.run_id = i.run_id AND r.object_id = i.resource_id
JOIN objects a ON a.run_id = i.run_id AND a.object_id = i.actor_id
WHERE i.relation = 'wait';

-- lock_stats: (lock_stats(run := NULL)) per run and resource, what
-- `traceduck locks` prints (docs/semantics.md, "Resources: holds and
-- waits"): holders (distinct actors that held it), holds (complete ones)
-- and their time (total, max, p99, nearest rank); waiters, waits (complete
-- ones) and their time; the longest complete wait, its waiter and when it
-- began (longest_waiter, longest_wait_ts, longest_wait_ns), to find it on
-- the timeline; acquisitions (assignments the trace shows: holds whose
-- start is in it), waited (waits that ended in an assignment) and
-- contention = waited / acquisitions, the share of acquisitions that had
-- to wait; truncated counts the holds and waits cut by the start or the
-- end of the trace, left out of the statistics. Where a format tells waits
-- but not holds (QNX, TLV/TOPPERS) the hold columns and contention are
-- NULL: the acquisitions that did not wait are not in the trace.
-- Example: SELECT resource, holds, waits, contention, wait_p99_ns FROM
-- lock_stats(run := 1) ORDER BY wait_total_ns DESC NULLS LAST
CREATE OR REPLACE MACRO lock_stats(run := NULL) AS TABLE
WITH iv AS (
    SELECT i.* FROM resource_intervals i WHERE run IS NULL OR i.run_id = run
),
h AS (
    SELECT run_id, resource_id,
           count(DISTINCT actor_id) AS holders,
           count(*) FILTER (WHERE NOT truncated) AS holds,
           sum(dur) FILTER (WHERE NOT truncated) AS hold_total_ns,
           max(dur) FILTER (WHERE NOT truncated) AS hold_max_ns,
           quantile_disc(dur, 0.99) FILTER (WHERE NOT truncated) AS hold_p99_ns,
           count(*) FILTER (WHERE start_seq IS NOT NULL) AS acquisitions,
           count(*) FILTER (WHERE truncated) AS truncated
    FROM iv WHERE relation = 'hold' GROUP BY run_id, resource_id
),
w AS (
    SELECT run_id, resource_id,
           count(DISTINCT actor_id) AS waiters,
           count(*) FILTER (WHERE NOT truncated) AS waits,
           sum(dur) FILTER (WHERE NOT truncated) AS wait_total_ns,
           max(dur) FILTER (WHERE NOT truncated) AS wait_max_ns,
           quantile_disc(dur, 0.99) FILTER (WHERE NOT truncated) AS wait_p99_ns,
           count(*) FILTER (WHERE ended = 'assigned') AS waited,
           count(*) FILTER (WHERE truncated) AS truncated
    FROM iv WHERE relation = 'wait' GROUP BY run_id, resource_id
),
longest AS (
    SELECT run_id, resource_id, actor_id, start_ts, dur
    FROM iv WHERE relation = 'wait' AND NOT truncated
    QUALIFY row_number() OVER (PARTITION BY run_id, resource_id ORDER BY dur DESC, start_ts, actor_id) = 1
),
res AS (
    SELECT run_id, resource_id, min(resource_kind) AS resource_kind FROM iv GROUP BY run_id, resource_id
)
SELECT res.run_id, res.resource_id, r.name AS resource, res.resource_kind,
       h.holders, h.holds, h.hold_total_ns, h.hold_max_ns, h.hold_p99_ns,
       coalesce(w.waiters, 0) AS waiters, coalesce(w.waits, 0) AS waits,
       w.wait_total_ns, w.wait_max_ns, w.wait_p99_ns,
       a.name AS longest_waiter, l.start_ts AS longest_wait_ts, l.dur AS longest_wait_ns,
       h.acquisitions, CASE WHEN h.run_id IS NOT NULL THEN coalesce(w.waited, 0) END AS waited,
       CASE WHEN h.acquisitions > 0 THEN coalesce(w.waited, 0) / h.acquisitions END AS contention,
       coalesce(h.truncated, 0) + coalesce(w.truncated, 0) AS truncated
FROM res
JOIN objects r ON r.run_id = res.run_id AND r.object_id = res.resource_id
LEFT JOIN h ON h.run_id = res.run_id AND h.resource_id = res.resource_id
LEFT JOIN w ON w.run_id = res.run_id AND w.resource_id = res.resource_id
LEFT JOIN longest l ON l.run_id = res.run_id AND l.resource_id = res.resource_id
LEFT JOIN objects a ON a.run_id = l.run_id AND a.object_id = l.actor_id;
