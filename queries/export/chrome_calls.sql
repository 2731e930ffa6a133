-- chrome_calls: the complete service calls of run $run (service_calls)
-- that overlap [$from, $to), clipped to it, for the Chrome export's
-- tracks "OBJECT calls": per object, by start, the longer first (the
-- order complete events nest in). A call whose leave the log timestamps
-- before its enter (asp_short.log's unl_cpu: the log's clock goes back)
-- is a call of no length at its enter, backwards. clipped: cut by the
-- window.
WITH c AS (
    SELECT object_id, call, enter_ts AS start_ts, greatest(leave_ts, enter_ts) AS end_ts,
           leave_ts < enter_ts AS backwards, enter_args, leave_args, cpu
    FROM service_calls
    WHERE run_id = $run AND enter_ts IS NOT NULL AND leave_ts IS NOT NULL
)
SELECT object_id, call, greatest(start_ts, $from) AS start_ts, least(end_ts, $to) AS end_ts,
       backwards, enter_args, leave_args, cpu,
       start_ts < $from OR end_ts > $to AS clipped
FROM c
WHERE end_ts > $from AND start_ts < $to
   OR start_ts = end_ts AND start_ts >= $from AND start_ts < $to
ORDER BY object_id, start_ts, end_ts DESC
