-- The default metrics of traceduck report.
--
-- Each metric is a block: a header line "-- metric: NAME", optional
-- "-- unit: ns|ratio|count|per_s|number" and "-- better: lower|higher"
-- lines, comment lines describing it, then one SQL query returning the
-- columns run_id, key, value: one value per run and key (an object's name,
-- a CPU's name, '' for the run as a whole). A --metrics FILE adds blocks in
-- the same form. The report compares each (metric, key) of a run with the
-- same (metric, key) of the baseline run.
--
-- Before the metrics run, the report copies the rows of the selected runs
-- of task_instances, sched_latency and sched_stats into temporary tables
-- of the same names, so that these views are computed once per report,
-- not once per metric that reads them (and sched_neighbours, which the
-- first two walk, once for both).

-- metric: running_share
-- unit: ratio
-- better: lower
-- Per task, ISR or thread (key: its name): the time it was running
-- (complete intervals) as a share of the run's duration, first to last
-- event. An object runs on one CPU at a time, so at most 1.
SELECT s.run_id, s.object AS key,
       sum(s.total_ns) / any_value(nullif(r.last_ts - r.first_ts, 0)) AS value
FROM sched_stats s JOIN runs r ON r.run_id = s.run_id
WHERE s.class = 'running'
GROUP BY s.run_id, s.object;

-- metric: response_p50
-- unit: ns
-- better: lower
-- Per task, ISR or thread: the median response time of its instances
-- (task_instances: activation to end), nearest rank, instances cut by the
-- start or the end of the trace left out.
SELECT run_id, object AS key, quantile_disc(response, 0.5) AS value
FROM task_instances WHERE NOT truncated
GROUP BY run_id, object;

-- metric: response_p99
-- unit: ns
-- better: lower
-- Per task, ISR or thread: the 99th percentile of the response times of
-- its instances, nearest rank (the response of rank ceil(0.99 n)).
SELECT run_id, object AS key, quantile_disc(response, 0.99) AS value
FROM task_instances WHERE NOT truncated
GROUP BY run_id, object;

-- metric: response_max
-- unit: ns
-- better: lower
-- Per task, ISR or thread: the longest response time of its instances.
SELECT run_id, object AS key, max(response) AS value
FROM task_instances WHERE NOT truncated
GROUP BY run_id, object;

-- metric: sched_latency_p99
-- unit: ns
-- better: lower
-- Per task, ISR or thread: the 99th percentile (nearest rank) of its
-- waits for a CPU (sched_latency: ready until running, after a wakeup or
-- a preemption).
SELECT run_id, object AS key, quantile_disc(latency, 0.99) AS value
FROM sched_latency WHERE NOT truncated
GROUP BY run_id, object;

-- metric: round_trip_p99
-- unit: ns
-- better: lower
-- Per client and server (key: "CLIENT -> SERVER", their names): the 99th
-- percentile (nearest rank) of the round trips the client sent the server
-- (message_round_trips: total_ns, from the send until the reply was
-- delivered), complete ones only (one-way messages and truncated round
-- trips left out).
SELECT run_id, client || ' -> ' || server AS key, quantile_disc(total_ns, 0.99) AS value
FROM message_round_trips
WHERE NOT one_way AND NOT truncated
GROUP BY run_id, client, server;

-- metric: resource_wait_p99
-- unit: ns
-- better: lower
-- Per resource (key: its name, a semaphore, mutex, ...): the 99th
-- percentile (nearest rank) of the waits for it (resource_waits: from the
-- request that blocked until the assignment or the giving up), complete
-- ones only; docs/semantics.md ("Resources: holds and waits") says which
-- formats tell waits.
SELECT run_id, resource AS key, quantile_disc(dur, 0.99) AS value
FROM resource_waits
WHERE NOT truncated
GROUP BY run_id, resource;

-- metric: cpu_load
-- unit: ratio
-- better: lower
-- Per CPU (key: its name): the share of the time its state is known
-- during which something (a task, ISR, thread or interrupt) ran on it
-- (cpu_utilization: complete intervals).
SELECT run_id, cpu AS key,
       coalesce(sum(ns) FILTER (WHERE busy), 0) / nullif(sum(ns), 0) AS value
FROM cpu_utilization
GROUP BY run_id, cpu;

-- metric: event_rate
-- unit: per_s
-- better: lower
-- Per run (key ''): events per second of trace time, first to last event.
SELECT run_id, '' AS key, event_count / ((last_ts - first_ts) / 1e9) AS value
FROM runs
WHERE last_ts > first_ts;

-- metric: diagnostics
-- unit: count
-- better: lower
-- Per run and severity (key: error, warning, info): how many problems the
-- ingest found in the input (the counts of table diagnostics); 0 when
-- none.
SELECT r.run_id, s.severity AS key, coalesce(sum(d.count), 0) AS value
FROM runs r
CROSS JOIN (VALUES ('error'), ('warning'), ('info')) s(severity)
LEFT JOIN diagnostics d ON d.run_id = r.run_id AND d.severity = s.severity
GROUP BY r.run_id, s.severity;
