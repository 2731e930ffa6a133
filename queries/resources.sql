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
