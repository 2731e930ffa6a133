-- chrome_events: the events of run $run in [$from, $to) that the slices
-- do not already show: those of objects without state intervals, and
-- those without an object. context: the name of the context the event
-- happened in.
SELECT e.ts, e.class, e.event, e.object_id, c.name AS context, e.value, e.args, e.cpu
FROM events e
LEFT JOIN objects c ON c.run_id = e.run_id AND c.object_id = e.context_id
WHERE e.run_id = $run AND e.ts >= $from AND e.ts < $to
  AND NOT EXISTS (SELECT 1 FROM state_intervals s WHERE s.run_id = e.run_id AND s.object_id = e.object_id)
ORDER BY e.ts, e.seq
