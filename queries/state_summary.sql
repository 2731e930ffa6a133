-- state_summary: per run and object, how often and how long the object was in
-- each state. Intervals cut by the start or the end of the trace (truncated)
-- are left out: their true length is unknown.
CREATE OR REPLACE VIEW state_summary AS
SELECT s.run_id,
       o.kind,
       o.name AS object,
       s.state,
       count(*) AS count,
       sum(s.dur) AS total_ns,
       avg(s.dur) AS mean_ns,
       max(s.dur) AS max_ns
FROM state_intervals s
JOIN objects o ON o.run_id = s.run_id AND o.object_id = s.object_id
WHERE NOT s.truncated
GROUP BY s.run_id, o.kind, o.name, s.state;
