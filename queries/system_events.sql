-- system_events: the events of every run tagged as part of a system (tag
-- system=NAME: runs ingested in one call, or with --system NAME), with the
-- system, the run's name, and the context and main object by name, so that
-- the logs of interacting machines read as one table (Baget tracer, seed
-- 4.4). Times are each run's own time base: merging in time order assumes
-- the machines' clocks agree.
CREATE OR REPLACE VIEW system_events AS
SELECT r.tags->>'system' AS system, e.run_id, r.name AS run_name, e.seq, e.ts, e.cpu,
       e.class, e.event, c.name AS context, o.name AS object, e.value, e.args
FROM events e
JOIN runs r ON r.run_id = e.run_id
LEFT JOIN objects c ON c.run_id = e.run_id AND c.object_id = e.context_id
LEFT JOIN objects o ON o.run_id = e.run_id AND o.object_id = e.object_id
WHERE r.tags->>'system' IS NOT NULL;

-- system_timeline: (system_timeline(name)) the events of one system in time order; events
-- at the same time in run order, then in each run's own order.
CREATE OR REPLACE MACRO system_timeline(name) AS TABLE
SELECT * FROM system_events WHERE system = name ORDER BY ts, run_id, seq;
