-- event_counts: how many events of each class and event name every run holds.
CREATE OR REPLACE VIEW event_counts AS
SELECT run_id, class, event, count(*) AS count
FROM events
GROUP BY run_id, class, event;
