-- Aggregated state traces: the multilayer model of the Baget tracer (seed
-- sections 2.6 and 6). Level 0 is the atomic state of state_intervals; a
-- row (kind, state, level, parent_state) of state_levels says that, for
-- objects of that kind, state at that level aggregates into parent_state at
-- level + 1. A state with no row at a level keeps its name at the next one
-- (Baget: "an atomic state that is not aggregated at a level keeps its
-- name there"); an empty or NULL parent_state marks a top. A kind's depth
-- is one more than the highest level with a non-empty parent_state, so its
-- levels are 0..depth; a kind with no state_levels rows has only level 0.
--
-- Levels in the macros below may count from the top: -1 is a kind's top
-- level, -2 the one below it (never below 0); a level above a kind's
-- depth is its top. state_trace(-1) is therefore "busy/idle" (BTF, QNX) or
-- the coarsest CPU states (Baget) whatever the format's depth.

-- state_level_depth: per run and object kind with state_levels rows, the
-- deepest aggregation level. Columns: run_id, kind, depth (levels 0..depth
-- exist). Example: SELECT * FROM state_level_depth WHERE kind = 'cpu'
-- (BTF: 3 -- the holder at 0 and 1, tasks/isrs/idle, busy/idle).
CREATE OR REPLACE VIEW state_level_depth AS
SELECT run_id, kind, max(level) + 1 AS depth
FROM state_levels
WHERE coalesce(parent_state, '') <> ''
GROUP BY run_id, kind;

-- state_level_at: (state_level_at(lvl, depth)) the level that lvl names
-- for a kind whose deepest level is depth (NULL: none, only level 0):
-- lvl itself, at most depth; a negative lvl counts from the top, -1 being
-- depth, never below 0. Example: state_level_at(-1, 2) = 2,
-- state_level_at(5, 2) = 2, state_level_at(-4, 2) = 0.
CREATE OR REPLACE MACRO state_level_at(lvl, depth) AS
CASE WHEN lvl < 0 THEN greatest(coalesce(depth, 0) + 1 + lvl, 0) ELSE least(lvl, coalesce(depth, 0)) END;

-- state_level_map_reference: (state_level_map_reference(unstored :=
-- false)) the definition of state_level_map in SQL, same columns. Each
-- kind's rows become one map from 'level:state' to the parent, which the
-- state is passed through once per level (list_reduce), not a recursive
-- CTE: a plan with a recursive CTE gets no IE_JOIN from DuckDB 1.1, and
-- interval_intersect over state_trace needs one. A DuckDB MAP lookup scans
-- the map, so this takes time in the number of states times the map's
-- size (0.6-0.9 s of CPU for the 7,000 states of the processors of a
-- 1M-event ftrace run): state_level_map reads the rows the ingest wrote
-- (state_level_paths) instead, and this macro only for the runs without
-- them (unstored := true keeps only those: the runs of a database written
-- by a traceduck before that table). Tests compare the two.
-- Example: SELECT * FROM state_level_map EXCEPT ALL SELECT * FROM state_level_map_reference()
CREATE OR REPLACE MACRO state_level_map_reference(unstored := false) AS TABLE
WITH slm_parent AS (
    SELECT run_id, kind, level, state, any_value(nullif(parent_state, '')) AS parent
    FROM state_levels
    WHERE NOT unstored OR run_id NOT IN (SELECT run_id FROM state_level_paths)
    GROUP BY run_id, kind, level, state),
slm_kind AS (
    SELECT p.run_id, p.kind, d.depth,
           map_from_entries(list({'k': p.level || ':' || p.state, 'v': p.parent})) AS up,
           list_distinct(list(p.state)) AS states
    FROM slm_parent p
    JOIN state_level_depth d ON d.run_id = p.run_id AND d.kind = p.kind
    GROUP BY p.run_id, p.kind, d.depth),
slm_rows AS (
    SELECT run_id, kind, up, atomic, unnest(range(depth + 1)) AS level
    FROM (SELECT run_id, kind, depth, up, unnest(states) AS atomic FROM slm_kind))
SELECT run_id, kind, atomic, level,
       -- map_extract, not up[key]: up[key] is a list of the values in DuckDB
       -- 1.1 but the value itself from 1.2 on, whose [1] is its first letter.
       list_reduce(list_concat([atomic], list_transform(range(level), l -> CAST(l AS VARCHAR))),
                   (s, l) -> coalesce(map_extract(up, l || ':' || s)[1], s)) AS state
FROM slm_rows;

-- state_level_map: per run and kind with levels, every state named in
-- state_levels taken as a level-0 state, and what it is at each level
-- 0..depth. Columns: run_id, kind, atomic (the state at level 0), level,
-- state (its aggregate at that level). A state that state_levels never
-- names keeps its name at every level (the macros below use coalesce for
-- it). The rows are those the ingest wrote (state_level_paths,
-- schema/levelmap.go); a run without them is answered by
-- state_level_map_reference, the SQL definition.
-- Example: SELECT level, state FROM state_level_map WHERE run_id = 1 AND
-- kind = 'cpu' AND atomic = 'Task_1ms_1' ORDER BY level (BTF: Task_1ms_1,
-- tasks, busy).
CREATE OR REPLACE VIEW state_level_map AS
SELECT run_id, kind, atomic, level::BIGINT AS level, state FROM state_level_paths
UNION ALL
SELECT * FROM state_level_map_reference(unstored := true);

-- state_intervals_window: (state_intervals_window(t_from, t_to, run :=
-- NULL, relative := false)) the rows of state_intervals in the time window
-- [t_from, t_to) (ns on the trace's time base, NULL: no bound; relative :=
-- true: ns from each run's first event), clipped to it: a clipped interval
-- counts the part inside, its start_seq (end_seq) is NULL where the window
-- cut it, and it is truncated only if the trace cut it on a side the
-- window does not (an interval cut by the end of the trace, its true end
-- unknown, is known inside a window that ends before it). An interval of
-- 0 ns at t_from is inside. Same columns as state_intervals; the windows
-- of state_trace_levels, state_stats_window and report --from/--to.
-- Example: SELECT object_id, state, sum(dur) FROM
-- state_intervals_window(1000, 11000, run := 1) GROUP BY ALL
CREATE OR REPLACE MACRO state_intervals_window(t_from, t_to, run := NULL, relative := false) AS TABLE
SELECT s.run_id, s.object_id, s.instance, s.state,
       CASE WHEN w.lo IS NULL OR s.start_ts >= w.lo THEN s.start_ts ELSE w.lo END AS start_ts,
       CASE WHEN w.hi IS NULL OR s.end_ts <= w.hi THEN s.end_ts ELSE w.hi END AS end_ts,
       (CASE WHEN w.hi IS NULL OR s.end_ts <= w.hi THEN s.end_ts ELSE w.hi END)
         - (CASE WHEN w.lo IS NULL OR s.start_ts >= w.lo THEN s.start_ts ELSE w.lo END) AS dur,
       s.cpu,
       CASE WHEN w.lo IS NULL OR s.start_ts >= w.lo THEN s.start_seq END AS start_seq,
       CASE WHEN w.hi IS NULL OR s.end_ts <= w.hi THEN s.end_seq END AS end_seq,
       s.truncated AND NOT (
           (s.start_seq IS NULL OR s.end_seq IS NULL)
           AND (s.start_seq IS NOT NULL OR s.start_ts < w.lo)
           AND (s.end_seq IS NOT NULL OR s.end_ts > w.hi)) IS TRUE AS truncated
FROM state_intervals s
JOIN (SELECT run_id, t_from + CASE WHEN relative THEN first_ts ELSE 0 END AS lo,
             t_to + CASE WHEN relative THEN first_ts ELSE 0 END AS hi
      FROM runs WHERE run IS NULL OR run_id = run) w ON w.run_id = s.run_id
WHERE (run IS NULL OR s.run_id = run)
  AND (w.lo IS NULL OR s.end_ts > w.lo OR s.start_ts = s.end_ts AND s.start_ts >= w.lo)
  AND (w.hi IS NULL OR s.start_ts < w.hi);

-- state_trace_levels_reference: (state_trace_levels_reference(lo, hi,
-- run := NULL, object_kind := NULL, object_name := NULL, t_from := NULL,
-- t_to := NULL, relative := false, unstored := false)) the definition of
-- state_trace_levels in SQL, same parameters and columns: it merges the
-- intervals at every query. state_trace_levels reads the merged intervals
-- that the ingest wrote (state_level_intervals) instead, and this macro
-- only for the objects that state_level_objects does not mark
-- materialized (unstored := true keeps only those objects, whose kind has
-- levels): the objects of a run written by a traceduck before that table,
-- and those whose intervals the ingest could not merge as they came
-- (schema/levels.go). Tests compare the two, format by format.
--
-- Level 0 is state_intervals as the format recorded them, one row each.
-- At every level above, the intervals are mapped up and merged:
--  1. Map each interval's state to the level. Leave out intervals of 0 ns:
--     they come from several events at one timestamp (a BTF core passes
--     through idle for 0 ns at every task switch) and would split every
--     busy period in two.
--  2. Cut the intervals into sequences: an object's intervals are one
--     sequence when no two of them overlap in time (a CPU, a BTF task
--     whose instances follow one another, a CPU, whose instance is the
--     object it runs); when some do (a QNX thread's state and its
--     kernel call, a BTF task activated again before its last instance
--     ended), each instance is its own sequence. Only objects whose
--     instances' spans overlap are checked interval by interval.
--  3. In each sequence, intervals of the same state at the level that
--     meet (one starts where the other ended) are one. The intervals of a
--     sequence do not overlap and none is 0 ns, so nothing lies between
--     two that meet; a gap or another state in between keeps them apart.
--  4. Find the runs of intervals that meet with one running sum per
--     sequence and state, in time order: end_ts minus the total duration
--     of the intervals so far is the same for intervals that meet and
--     grows at every gap. Collapse each run into one interval.
-- So at level L a state's count is how often the object entered it (no
-- more than the sum of the counts of the states below it at L - 1), and
-- its total is the sum of the durations of the intervals mapped to it.
-- Example: SELECT level, state, start_ts, dur, parts FROM
-- state_trace_levels_reference(0, -1) WHERE object = 'Core_0' ORDER BY level, start_ts.
CREATE OR REPLACE MACRO state_trace_levels_reference(lo, hi, run := NULL, object_kind := NULL, object_name := NULL, t_from := NULL, t_to := NULL, relative := false, unstored := false) AS TABLE
WITH sti_objects AS (
    SELECT o.run_id, o.object_id, o.kind, o.name, d.depth
    FROM objects o
    LEFT JOIN state_level_depth d ON d.run_id = o.run_id AND d.kind = o.kind
    WHERE (run IS NULL OR o.run_id = run)
      AND (object_kind IS NULL OR o.kind = object_kind)
      AND (object_name IS NULL OR o.name = object_name)
      AND (NOT unstored OR d.depth >= 1 AND NOT EXISTS (
          SELECT 1 FROM state_level_objects m
          WHERE m.run_id = o.run_id AND m.object_id = o.object_id AND m.materialized))),
sti_levels AS (
    SELECT run_id, object_id, kind,
           unnest(range(state_level_at(lo, depth), state_level_at(hi, depth) + 1)) AS level
    FROM sti_objects),
sti_window AS (
    SELECT * FROM state_intervals_window(t_from, t_to, run := run, relative := relative)),
sti_mapped AS (
    SELECT s.run_id, s.object_id, s.instance,
           l.level, coalesce(m.state, s.state) AS state,
           s.start_ts, s.end_ts, s.end_ts - s.start_ts AS dur, s.cpu, s.start_seq, s.end_seq, s.truncated
    FROM sti_window s
    JOIN sti_levels l ON l.run_id = s.run_id AND l.object_id = s.object_id
    LEFT JOIN state_level_map m
           ON m.run_id = s.run_id AND m.kind = l.kind AND m.atomic = s.state AND m.level = l.level),
sti_spans AS (
    -- a CPU's intervals never overlap (one holder at a time, whatever
    -- their instances: docs/semantics.md), so CPUs are one sequence
    SELECT s.run_id, s.object_id, s.instance, min(s.start_ts) AS first_ts, max(s.end_ts) AS last_ts
    FROM state_intervals s SEMI JOIN sti_objects o ON o.run_id = s.run_id AND o.object_id = s.object_id AND o.kind <> 'cpu'
    WHERE run IS NULL OR s.run_id = run
    GROUP BY s.run_id, s.object_id, s.instance),
sti_span_overlap AS (
    SELECT DISTINCT run_id, object_id
    FROM (SELECT run_id, object_id,
                 first_ts < max(last_ts) OVER (PARTITION BY run_id, object_id ORDER BY first_ts, last_ts
                                              ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS overlapping
          FROM sti_spans)
    WHERE overlapping),
sti_overlap AS (
    SELECT DISTINCT run_id, object_id
    FROM (SELECT s.run_id, s.object_id,
                 s.start_ts < max(s.end_ts) OVER (PARTITION BY s.run_id, s.object_id
                                                 ORDER BY s.start_ts, s.end_ts
                                                 ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS overlapping
          FROM state_intervals s SEMI JOIN sti_span_overlap m ON m.run_id = s.run_id AND m.object_id = s.object_id)
    WHERE overlapping),
sti_keyed AS (
    SELECT x.*,
           CASE WHEN ov.object_id IS NULL THEN 0 ELSE x.instance END AS timeline,
           x.end_ts - sum(x.dur) OVER (
               PARTITION BY x.run_id, x.object_id, timeline, x.level, x.state ORDER BY x.start_ts
               ROWS UNBOUNDED PRECEDING) AS run_key
    FROM sti_mapped x
    LEFT JOIN sti_overlap ov ON ov.run_id = x.run_id AND ov.object_id = x.object_id
    WHERE x.level > 0 AND x.dur > 0),
sti_traces AS (
    SELECT run_id, object_id, instance, level, state, start_ts, end_ts, dur, cpu,
           start_seq, end_seq, 1::BIGINT AS parts, truncated
    FROM sti_mapped
    WHERE level = 0
    UNION ALL
    SELECT run_id, object_id,
           CASE WHEN min(instance) = max(instance) THEN min(instance) END AS instance,
           level, state,
           min(start_ts) AS start_ts, max(end_ts) AS end_ts, max(end_ts) - min(start_ts) AS dur,
           CASE WHEN min(cpu) = max(cpu) AND count(cpu) = count(*) THEN min(cpu) END AS cpu,
           arg_min_null(start_seq, start_ts) AS start_seq,
           arg_max_null(end_seq, end_ts) AS end_seq,
           count(*) AS parts,
           bool_or(truncated) AS truncated
    FROM sti_keyed
    GROUP BY run_id, object_id, timeline, level, state, run_key)
SELECT t.run_id, o.kind, t.object_id, o.name AS object, t.instance, t.level, t.state,
       t.start_ts, t.end_ts, t.dur, t.cpu, t.start_seq, t.end_seq, t.parts, t.truncated
FROM sti_traces t
JOIN sti_objects o ON o.run_id = t.run_id AND o.object_id = t.object_id;

-- state_trace_level_rows: (state_trace_level_rows(lo, hi, run := NULL,
-- object_kind := NULL, object_name := NULL, t_from := NULL, t_to :=
-- NULL, relative := false)) the rows of state_trace_levels (below),
-- without the object's kind and name: run_id, object_id, instance, level,
-- state, start_ts, end_ts, dur, cpu, start_seq, end_seq, parts,
-- truncated. Level 0 is state_intervals; the levels above are read from
-- state_level_intervals, where the ingest wrote them merged, for the
-- objects that state_level_objects marks materialized, and merged by
-- state_trace_levels_reference for the others. In a window, a merged
-- interval that crosses a bound is clipped to it, and its parts,
-- instance, cpu, seqs and truncated are those of its parts inside (what
-- merging the clipped intervals gives). state_stats_of aggregates these
-- rows and names the objects after, on far fewer rows. With detail :=
-- false, such a clipped interval is not made again of its parts: its
-- instance, cpu, start_seq, end_seq and parts are NULL, and truncated is
-- found among its truncated parts alone (a merged interval that crosses
-- the window, such as a CPU busy through all of it, has as many parts
-- inside as the window has intervals): what the statistics, which read
-- only its level, state, dur and truncated, need.
-- Example: SELECT level, count(*) FROM state_trace_level_rows(0, -1, run := 1) GROUP BY level.
CREATE OR REPLACE MACRO state_trace_level_rows(lo, hi, run := NULL, object_kind := NULL, object_name := NULL, t_from := NULL, t_to := NULL, relative := false, detail := true) AS TABLE
WITH stl_objects AS (
    SELECT o.run_id, o.object_id,
           state_level_at(lo, d.depth) AS lv_lo, state_level_at(hi, d.depth) AS lv_hi,
           coalesce(m.materialized, false) AS stored
    FROM objects o
    LEFT JOIN state_level_depth d ON d.run_id = o.run_id AND d.kind = o.kind
    LEFT JOIN state_level_objects m ON m.run_id = o.run_id AND m.object_id = o.object_id
    WHERE (run IS NULL OR o.run_id = run)
      AND (object_kind IS NULL OR o.kind = object_kind)
      AND (object_name IS NULL OR o.name = object_name)),
stl_bounds AS (
    SELECT run_id, t_from + CASE WHEN relative THEN first_ts ELSE 0 END AS w_lo,
           t_to + CASE WHEN relative THEN first_ts ELSE 0 END AS w_hi
    FROM runs WHERE run IS NULL OR run_id = run),
-- Level 0. Without a window, kind or name, and with every object's level
-- 0 asked (lo = 0, hi < 0: the whole stack), the intervals as they are:
-- no join per row.
stl_level0 AS (
    SELECT s.run_id, s.object_id, s.instance, 0::BIGINT AS level, s.state, s.start_ts, s.end_ts, s.dur, s.cpu,
           s.start_seq, s.end_seq, 1::BIGINT AS parts, s.truncated
    FROM state_intervals s
    WHERE (lo = 0 AND hi < 0 AND object_kind IS NULL AND object_name IS NULL AND t_from IS NULL AND t_to IS NULL) IS TRUE
      AND (run IS NULL OR s.run_id = run)
    UNION ALL
    SELECT s.run_id, s.object_id, s.instance, 0::BIGINT AS level, s.state, s.start_ts, s.end_ts, s.dur, s.cpu,
           s.start_seq, s.end_seq, 1::BIGINT AS parts, s.truncated
    FROM state_intervals_window(t_from, t_to, run := run, relative := relative) s
    -- (the level test apart from the join, which it would make a nested loop)
    SEMI JOIN (SELECT run_id, object_id FROM stl_objects WHERE lv_lo <= 0 AND lv_hi >= 0) o
           ON o.run_id = s.run_id AND o.object_id = s.object_id
    WHERE (lo = 0 AND hi < 0 AND object_kind IS NULL AND object_name IS NULL AND t_from IS NULL AND t_to IS NULL) IS NOT TRUE),
-- The levels above 0: state_level_intervals holds the merged intervals of
-- the materialized objects only (the ingest pruned the others). Every
-- stored row when every level above 0 of every object is asked (lo 0 or
-- 1, hi -1, no kind or name); else the levels asked of each object, one
-- row each (hash joins on equal columns: a range in a join makes DuckDB
-- loop).
stl_stored_levels AS (
    SELECT run_id, object_id, unnest(range(greatest(lv_lo, 1), lv_hi + 1))::INTEGER AS level
    FROM stl_objects WHERE stored),
stl_stored AS (
    SELECT r.run_id, r.object_id, r.instance, r.level::BIGINT AS level, r.state, r.start_ts, r.end_ts,
           r.cpu, r.start_seq, r.end_seq, r.parts, r.truncated
    FROM state_level_intervals r
    WHERE (lo BETWEEN 0 AND 1 AND hi = -1 AND object_kind IS NULL AND object_name IS NULL) IS TRUE
      AND (run IS NULL OR r.run_id = run)
    UNION ALL
    SELECT r.run_id, r.object_id, r.instance, r.level::BIGINT AS level, r.state, r.start_ts, r.end_ts,
           r.cpu, r.start_seq, r.end_seq, r.parts, r.truncated
    FROM state_level_intervals r
    SEMI JOIN stl_stored_levels o ON o.run_id = r.run_id AND o.object_id = r.object_id AND o.level = r.level
    WHERE (lo BETWEEN 0 AND 1 AND hi = -1 AND object_kind IS NULL AND object_name IS NULL) IS NOT TRUE
      AND (run IS NULL OR r.run_id = run)),
-- without a window, every stored row as it is
stl_whole AS (
    SELECT run_id, object_id, instance, level, state, start_ts, end_ts, end_ts - start_ts AS dur, cpu,
           start_seq, end_seq, parts, truncated
    FROM stl_stored
    WHERE t_from IS NULL AND t_to IS NULL),
-- in a window: the rows inside as they are, those across a bound made
-- again of their parts inside
stl_in AS (
    SELECT r.*, (w.w_lo IS NULL OR r.start_ts >= w.w_lo) AND (w.w_hi IS NULL OR r.end_ts <= w.w_hi) AS inside
    FROM stl_stored r JOIN stl_bounds w ON w.run_id = r.run_id
    WHERE (t_from IS NOT NULL OR t_to IS NOT NULL)
      AND (w.w_lo IS NULL OR r.end_ts > w.w_lo) AND (w.w_hi IS NULL OR r.start_ts < w.w_hi)),
stl_cut AS (
    SELECT c.run_id, c.object_id,
           CASE WHEN min(s.instance) = max(s.instance) THEN min(s.instance) END AS instance,
           c.level, c.state, min(s.start_ts) AS start_ts, max(s.end_ts) AS end_ts,
           max(s.end_ts) - min(s.start_ts) AS dur,
           CASE WHEN min(s.cpu) = max(s.cpu) AND count(s.cpu) = count(*) THEN min(s.cpu) END AS cpu,
           arg_min_null(s.start_seq, s.start_ts) AS start_seq,
           arg_max_null(s.end_seq, s.end_ts) AS end_seq,
           count(*) AS parts,
           bool_or(s.truncated) AS truncated
    FROM (SELECT * FROM stl_in WHERE NOT inside AND detail) c
    JOIN state_intervals_window(t_from, t_to, run := run, relative := relative) s
      ON s.run_id = c.run_id AND s.object_id = c.object_id
     AND s.start_ts >= c.start_ts AND s.end_ts <= c.end_ts AND s.end_ts > s.start_ts
     AND (c.instance IS NULL OR s.instance = c.instance)
    GROUP BY c.run_id, c.object_id, c.instance, c.level, c.state, c.start_ts),
-- without detail: clipped (its parts meet, so the parts inside run from
-- the bound to its end or the other bound), truncated when a part inside
-- is (only a truncated interval can be; few are)
stl_cut_parts AS (
    SELECT DISTINCT c.run_id, c.object_id, c.instance, c.level, c.start_ts
    FROM (SELECT * FROM stl_in WHERE NOT inside AND truncated AND NOT detail) c
    JOIN (SELECT * FROM state_intervals_window(t_from, t_to, run := run, relative := relative) WHERE truncated) s
      ON s.run_id = c.run_id AND s.object_id = c.object_id
     AND s.start_ts >= c.start_ts AND s.end_ts <= c.end_ts AND s.end_ts > s.start_ts
     AND (c.instance IS NULL OR s.instance = c.instance)),
stl_clipped AS (
    SELECT c.run_id, c.object_id, NULL::BIGINT AS instance, c.level, c.state,
           greatest(c.start_ts, coalesce(w.w_lo, c.start_ts)) AS start_ts,
           least(c.end_ts, coalesce(w.w_hi, c.end_ts)) AS end_ts,
           least(c.end_ts, coalesce(w.w_hi, c.end_ts)) - greatest(c.start_ts, coalesce(w.w_lo, c.start_ts)) AS dur,
           NULL::INTEGER AS cpu, NULL::BIGINT AS start_seq, NULL::BIGINT AS end_seq, NULL::BIGINT AS parts,
           p.run_id IS NOT NULL AS truncated
    FROM (SELECT * FROM stl_in WHERE NOT inside AND NOT detail) c
    JOIN stl_bounds w ON w.run_id = c.run_id
    LEFT JOIN stl_cut_parts p ON p.run_id = c.run_id AND p.object_id = c.object_id AND p.level = c.level
         AND p.start_ts = c.start_ts AND p.instance IS NOT DISTINCT FROM c.instance),
stl_rows AS (
    SELECT * FROM stl_level0
    UNION ALL
    SELECT * FROM stl_whole
    UNION ALL
    SELECT run_id, object_id, instance, level, state, start_ts, end_ts, end_ts - start_ts AS dur, cpu,
           start_seq, end_seq, parts, truncated
    FROM stl_in WHERE inside
    UNION ALL
    SELECT * FROM stl_cut
    UNION ALL
    SELECT * FROM stl_clipped
    UNION ALL
    SELECT run_id, object_id, instance, level, state, start_ts, end_ts, dur, cpu, start_seq, end_seq, parts, truncated
    FROM state_trace_levels_reference(lo, hi, run := run, object_kind := object_kind, object_name := object_name,
                                      t_from := t_from, t_to := t_to, relative := relative, unstored := true)
    WHERE level > 0)
SELECT * FROM stl_rows;

-- state_trace_levels: (state_trace_levels(lo, hi, run := NULL,
-- object_kind := NULL, object_name := NULL, t_from := NULL, t_to :=
-- NULL, relative := false)) the state traces of every
-- object at each level lo..hi (levels as above: negative from the top,
-- clamped to each kind's 0..depth); run, object_kind and object_name, when
-- given, keep one run, the objects of one kind, of one name (filtering
-- here, before the merge, is much faster on a large run than a WHERE on
-- the result, which DuckDB cannot push below the merge's window). Columns:
-- run_id, kind, object_id, object (name), instance (NULL when the merged
-- intervals came from several), level, state (the state at that level),
-- start_ts, end_ts, dur, cpu (NULL when the merged intervals ran on
-- several CPUs), start_seq (event that opened the first part), end_seq
-- (event that closed the last; NULL when cut by the end of the trace),
-- parts (how many state_intervals rows it is made of), truncated (some
-- part was cut by the start or the end of the trace, so the true length
-- is unknown).
--
-- t_from and t_to (ns on the trace's time base, NULL: no bound; with
-- relative := true, ns from each run's first event) keep the window
-- [t_from, t_to): intervals that cross a bound are clipped to it
-- before anything else and count the part inside; start_seq (end_seq) is
-- NULL where the window cut the interval. A clipped interval is truncated
-- only if the trace cut it on a side the window does not: an interval cut
-- by the end of the trace (its true end unknown) is known inside a window
-- that ends before it. (Merging clipped intervals at the levels above is
-- clipping the merged ones: clipping keeps which intervals meet.)
--
-- Level 0 is state_intervals as the format recorded them, one row each;
-- every level above is the intervals mapped up the levels and merged as
-- state_trace_levels_reference (above) defines it, which the ingest did
-- (state_trace_level_rows says where each row comes from).
-- So at level L a state's count is how often the object entered it (no
-- more than the sum of the counts of the states below it at L - 1), and
-- its total is the sum of the durations of the intervals mapped to it.
-- Example: SELECT level, state, start_ts, dur, parts FROM
-- state_trace_levels(0, -1) WHERE object = 'Core_0' ORDER BY level, start_ts.
CREATE OR REPLACE MACRO state_trace_levels(lo, hi, run := NULL, object_kind := NULL, object_name := NULL, t_from := NULL, t_to := NULL, relative := false) AS TABLE
SELECT t.run_id, o.kind, t.object_id, o.name AS object, t.instance, t.level, t.state,
       t.start_ts, t.end_ts, t.dur, t.cpu, t.start_seq, t.end_seq, t.parts, t.truncated
FROM state_trace_level_rows(lo, hi, run := run, object_kind := object_kind, object_name := object_name,
                            t_from := t_from, t_to := t_to, relative := relative) t
JOIN objects o ON o.run_id = t.run_id AND o.object_id = t.object_id;

-- state_trace: (state_trace(level, run := NULL, object_kind := NULL,
-- object_name := NULL, t_from := NULL, t_to := NULL, relative := false))
-- the state trace of every object (or of those
-- selected as in state_trace_levels) at one aggregation level:
-- state_trace_levels(level, level). Level 0 is state_intervals with
-- names; -1 the top. Columns as state_trace_levels. Examples:
--   CPU busy/idle:        SELECT object, state, start_ts, dur FROM state_trace(-1, object_kind := 'cpu')
--   threads/interrupts:   SELECT * FROM state_trace(1, run := 1, object_kind := 'cpu')   (BTF: level 2, tasks/isrs/idle)
--   per process (QNX):    SELECT * FROM state_trace(1, run := 3, object_kind := 'cpu')   (procnto, usr/bin/app_1, ...)
CREATE OR REPLACE MACRO state_trace(lvl, run := NULL, object_kind := NULL, object_name := NULL, t_from := NULL, t_to := NULL, relative := false) AS TABLE
SELECT * FROM state_trace_levels(lvl, lvl, run := run, object_kind := object_kind, object_name := object_name, t_from := t_from, t_to := t_to, relative := relative);
