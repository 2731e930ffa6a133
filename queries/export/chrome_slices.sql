-- chrome_slices: the state intervals of run $run that overlap [$from,
-- $to), clipped to it, in the order the Chrome export writes them: by
-- start, the longer first, so that an interval that contains another comes
-- before it (complete events nest in the order they are read).
-- clipped: the interval was cut by the window.
SELECT object_id, state, instance, cpu,
       greatest(start_ts, $from) AS start_ts,
       least(end_ts, $to) AS end_ts,
       truncated,
       start_ts < $from OR end_ts > $to AS clipped
FROM state_intervals
WHERE run_id = $run AND end_ts > $from AND start_ts < $to
   OR run_id = $run AND start_ts = end_ts AND start_ts >= $from AND start_ts < $to
ORDER BY start_ts, end_ts DESC, object_id, instance
