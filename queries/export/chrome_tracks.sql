-- chrome_tracks: the objects of run ? that get a track in the Chrome
-- export, with the process they are shown in.
--   CPUs (kind cpu) are threads of one process "CPUs".
--   Objects with a pid (QNX, ftrace, DTrace threads) are threads of that
--   process, named after the process object when there is one.
--   Every other object is a thread of a process named after its kind
--   (task, isr, semaphore...).
-- A resource with holds or waits has a track even without states or
-- events of its own (a QNX mutex): its holds' and waits' tracks are shown
-- beside it.
-- counter: a signal or counter whose states are all numbers; its states
-- become counter events instead of slices.
-- Columns: object_id, kind, name, native_id, group_key, group_name,
-- group_order, counter.
WITH used AS (
    SELECT DISTINCT object_id FROM state_intervals WHERE run_id = $run
    UNION
    SELECT DISTINCT object_id FROM events WHERE run_id = $run AND object_id IS NOT NULL
    UNION
    SELECT DISTINCT resource_id FROM resource_intervals WHERE run_id = $run
), numeric AS (
    SELECT object_id, bool_and(TRY_CAST(state AS DOUBLE) IS NOT NULL) AS all_numbers
    FROM state_intervals WHERE run_id = $run GROUP BY object_id
)
SELECT o.object_id, o.kind, o.name, o.native_id,
       CASE WHEN o.kind = 'cpu' THEN 'cpus'
            WHEN o.pid IS NOT NULL AND o.kind <> 'process' THEN 'pid:' || o.pid
            ELSE 'kind:' || o.kind END AS group_key,
       CASE WHEN o.kind = 'cpu' THEN 'CPUs'
            WHEN o.pid IS NOT NULL AND o.kind <> 'process' THEN coalesce(p.name || ' (pid ' || o.pid || ')', 'pid ' || o.pid)
            ELSE o.kind END AS group_name,
       CASE WHEN o.kind = 'cpu' THEN 0
            WHEN o.pid IS NOT NULL AND o.kind <> 'process' THEN 1
            ELSE 2 END AS group_order,
       coalesce(lower(o.kind) IN ('signal', 'counter') AND n.all_numbers, false) AS counter
FROM objects o
SEMI JOIN used u ON u.object_id = o.object_id
LEFT JOIN numeric n ON n.object_id = o.object_id
LEFT JOIN (SELECT native_id, any_value(name) AS name FROM objects
           WHERE run_id = $run AND kind = 'process' GROUP BY native_id) p ON p.native_id = o.pid
WHERE o.run_id = $run
ORDER BY group_order, group_key, o.object_id
