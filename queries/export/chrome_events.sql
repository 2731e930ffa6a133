-- chrome_events: the events of run $run in [$from, $to) that no slice
-- shows: every event but those that opened or closed a state interval of
-- their own object (those are the slices' ends: TLV's attribute changes,
-- BTF's transitions), and those that entered or left a complete service
-- call (service_calls: the slices of the tracks "OBJECT calls"). So the
-- behaviors of a resource that has states (TLV's dispatch, activate,
-- preempt, a handler's enter and leave, a call that never returned) are
-- instants on its track. context: the name of the context the event
-- happened in.
WITH shown AS (
    SELECT object_id, start_seq AS seq FROM state_intervals WHERE run_id = $run AND start_seq IS NOT NULL
    UNION
    SELECT object_id, end_seq FROM state_intervals WHERE run_id = $run AND end_seq IS NOT NULL
    UNION
    SELECT object_id, enter_seq FROM service_calls WHERE run_id = $run AND enter_seq IS NOT NULL AND leave_seq IS NOT NULL
    UNION
    SELECT object_id, leave_seq FROM service_calls WHERE run_id = $run AND enter_seq IS NOT NULL AND leave_seq IS NOT NULL
)
SELECT e.ts, e.class, e.event, e.object_id, c.name AS context, e.value, e.args, e.cpu
FROM events e
LEFT JOIN objects c ON c.run_id = e.run_id AND c.object_id = e.context_id
ANTI JOIN shown s ON s.object_id = e.object_id AND s.seq = e.seq
WHERE e.run_id = $run AND e.ts >= $from AND e.ts < $to
ORDER BY e.ts, e.seq
