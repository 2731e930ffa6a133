-- chrome_resources: the holds and waits of run $run (resource_intervals,
-- docs/semantics.md "Resources: holds and waits") that overlap [$from,
-- $to), clipped to it, for the Chrome export's tracks "RESOURCE holds" and
-- "RESOURCE waits": per resource and relation, by start, the longer first
-- (the order complete events nest in). actor: the holder's or waiter's
-- name; clipped: cut by the window.
SELECT i.resource_id, i.relation, a.name AS actor, i.resource_kind, i.ended,
       greatest(i.start_ts, $from) AS start_ts,
       least(i.end_ts, $to) AS end_ts,
       i.truncated,
       i.start_ts < $from OR i.end_ts > $to AS clipped
FROM resource_intervals i
JOIN objects a ON a.run_id = i.run_id AND a.object_id = i.actor_id
WHERE i.run_id = $run AND (i.end_ts > $from AND i.start_ts < $to
                           OR i.start_ts = i.end_ts AND i.start_ts >= $from AND i.start_ts < $to)
ORDER BY i.resource_id, i.relation, start_ts, end_ts DESC, i.actor_id
