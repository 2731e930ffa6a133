-- tlv_resources: the resources a rule of TLV's statistics generation
-- rules (.sgr, "BasicRule") names: those whose name is in names or whose
-- kind (TLV's resource type) is in kinds (NULL: none), in the order of
-- the resource file (object_id). Columns: run_id, object_id, resource.
-- Example: SELECT * FROM tlv_resources(NULL, ['Task'], run := 1)
CREATE OR REPLACE MACRO tlv_resources(names, kinds, run := NULL) AS TABLE
SELECT run_id, object_id, name AS resource
FROM objects
WHERE (run IS NULL OR run_id = run) AND kind <> 'cpu'
  AND (coalesce(list_contains(names, name), false) OR coalesce(list_contains(kinds, kind), false))
ORDER BY run_id, object_id;

-- tlv_matching: the events of those resources that a .sgr event names
-- (TLV's BaseEvent): with behavior NULL, the changes of attribute to val
-- (events.event = 'attribute=', value = val: TLV's Attribute and
-- AttributeValue); else the behavior, and when args is not NULL only
-- those whose arguments, in order, are args (TLV compared the argument
-- text; here each argument as written, trimmed). Columns: run_id,
-- object_id, resource, ts, seq.
-- Example: SELECT resource, count(*) FROM tlv_matching(NULL, ['Task'], 'state', 'RUNNING', NULL, NULL) GROUP BY ALL
CREATE OR REPLACE MACRO tlv_matching(names, kinds, attribute, val, behavior, args, run := NULL) AS TABLE
SELECT e.run_id, e.object_id, r.resource, e.ts, e.seq
FROM events e
JOIN tlv_resources(names, kinds, run := run) r ON r.run_id = e.run_id AND r.object_id = e.object_id
WHERE CASE WHEN behavior IS NULL THEN e.event = attribute || '=' AND e.value = val
           ELSE e.event = behavior
                AND (args IS NULL
                     OR coalesce([json_extract_string(e.args, '$."' || k || '"') FOR k IN json_keys(coalesce(e.args, '{}'))], []) = args)
      END;

-- tlv_count: a .sgr Basic rule of Method Count without Interval: per
-- resource (in the resource file's order), how many events it names
-- (tlv_matching); resources without any count 0, as TLV listed them.
-- Columns: run_id, resource, count.
-- Example: SELECT * FROM tlv_count(NULL, ['Task'], 'state', 'RUNNING', NULL, NULL, run := 1)
CREATE OR REPLACE MACRO tlv_count(names, kinds, attribute, val, behavior, args, run := NULL) AS TABLE
SELECT r.run_id, r.resource, count(m.seq) AS count
FROM tlv_resources(names, kinds, run := run) r
LEFT JOIN tlv_matching(names, kinds, attribute, val, behavior, args, run := run) m
       ON m.run_id = r.run_id AND m.object_id = r.object_id
GROUP BY r.run_id, r.object_id, r.resource
ORDER BY r.run_id, r.object_id;

-- tlv_count_windows: a .sgr Basic rule of Method Count with an Interval
-- (width_ns, in ns): the events it names of the first resource it names
-- (TLV drew one series), counted per window [start, start + width_ns)
-- from the run's first event while start is before its last (runs.first_ts,
-- last_ts). Columns: run_id, resource, window_start, window_end, count.
CREATE OR REPLACE MACRO tlv_count_windows(names, kinds, attribute, val, behavior, args, width_ns, run := NULL) AS TABLE
WITH first_res AS (
    SELECT run_id, arg_min(object_id, object_id) AS object_id, arg_min(resource, object_id) AS resource
    FROM tlv_resources(names, kinds, run := run) GROUP BY run_id
), w AS (
    SELECT f.run_id, f.object_id, f.resource, u.first_ts + i * width_ns AS window_start
    FROM first_res f JOIN runs u USING (run_id),
         range(0, CAST(ceil((u.last_ts - u.first_ts) / width_ns) AS BIGINT) + CASE WHEN u.last_ts = u.first_ts THEN 1 ELSE 0 END) t(i)
)
SELECT w.run_id, w.resource, w.window_start, w.window_start + width_ns AS window_end, count(m.seq) AS count
FROM w
LEFT JOIN tlv_matching(names, kinds, attribute, val, behavior, args, run := run) m
       ON m.run_id = w.run_id AND m.object_id = w.object_id
      AND m.ts >= w.window_start AND m.ts < w.window_start + width_ns
GROUP BY ALL
ORDER BY w.run_id, w.window_start;

-- tlv_measure: a .sgr Basic rule of Method Measure with When: per
-- resource (in the resource file's order), the time between each two
-- consecutive events it names (tlv_matching): n gaps, their mean, max and
-- min in ns (NULL when it has fewer than two such events; TLV showed the
-- mean as the value and max and min in its label).
-- Columns: run_id, resource, n, mean_ns, max_ns, min_ns.
-- Example: SELECT * FROM tlv_measure(NULL, ['Task'], 'state', 'RUNNING', NULL, NULL, run := 1)
CREATE OR REPLACE MACRO tlv_measure(names, kinds, attribute, val, behavior, args, run := NULL) AS TABLE
WITH g AS (
    SELECT run_id, object_id, ts - lag(ts) OVER (PARTITION BY run_id, object_id ORDER BY ts, seq) AS gap
    FROM tlv_matching(names, kinds, attribute, val, behavior, args, run := run)
)
SELECT r.run_id, r.resource, count(g.gap) AS n, avg(g.gap) AS mean_ns, max(g.gap) AS max_ns, min(g.gap) AS min_ns
FROM tlv_resources(names, kinds, run := run) r
LEFT JOIN g ON g.run_id = r.run_id AND g.object_id = r.object_id
GROUP BY r.run_id, r.object_id, r.resource
ORDER BY r.run_id, r.object_id;

-- tlv_measure_from_to: a .sgr Basic rule of Method Measure with From and
-- To, for one pair of resources (TLV paired the From rule's resources
-- with the To rule's, in order): for each To event, the time since the
-- last From event strictly before it (none: left out), as TLV measured;
-- n such times, their mean, max and min in ns.
-- Columns: run_id, n, mean_ns, max_ns, min_ns.
-- Example: SELECT * FROM tlv_measure_from_to('TASK1', 'enterSVC', NULL, NULL, ['slp_tsk'], 'TASK1', 'leaveSVC', NULL, NULL, NULL, run := 1)
CREATE OR REPLACE MACRO tlv_measure_from_to(from_res, from_attr, from_val, from_behavior, from_args,
                                            to_res, to_attr, to_val, to_behavior, to_args, run := NULL) AS TABLE
WITH f AS (SELECT run_id, ts FROM tlv_matching([from_res], NULL, from_attr, from_val, from_behavior, from_args, run := run)),
     t AS (SELECT run_id, ts FROM tlv_matching([to_res], NULL, to_attr, to_val, to_behavior, to_args, run := run)),
     d AS (SELECT t.run_id, t.ts - f.ts AS dur FROM t ASOF JOIN f ON f.run_id = t.run_id AND t.ts > f.ts)
SELECT u.run_id, count(d.dur) AS n, avg(d.dur) AS mean_ns, max(d.dur) AS max_ns, min(d.dur) AS min_ns
FROM runs u LEFT JOIN d USING (run_id)
WHERE run IS NULL OR u.run_id = run
GROUP BY u.run_id
ORDER BY u.run_id;
