-- state_stats_tree_reference: (state_stats_tree_reference(ord, run :=
-- NULL, object_kind := NULL, sort_by := 'name', t_from := NULL, t_to :=
-- NULL, relative := false)) the definition of state_stats_tree (below)
-- in SQL, same parameters and columns: each node keyed by the list of
-- the labels above it, the states' chains passed up a MAP per kind (a
-- DuckDB MAP lookup scans the map), the missing states and the order
-- found by joins on those lists. state_stats_tree gives the same rows
-- with integer node ids and parent links (tests compare the two, format
-- by format). The definition: the state
-- statistics tree of the Baget tracer (seed 6.4): per run, the object
-- kinds, the objects and the hierarchy of their states (the aggregation
-- levels of state_levels, the top level first), each node with the
-- statistics of its intervals: count, total, mean, max and p50/p90/p99
-- (nearest rank) of the complete ones, and how many were truncated (left
-- out). ord chooses the hierarchy:
--   kos: run | kind | object | top state | ... | level-0 state
--        (the seed's: each object's own state hierarchy)
--   kso: run | kind | top state | ... | level-0 state | object
--        (each kind's state hierarchy, pooled over its objects, with the
--        objects under the atomic states)
-- A state node's intervals are those of the state at its level (of its
-- object in kos; of every object of the kind in kso, pooled: the
-- percentiles are of the pooled durations); a run, kind or object node's
-- are the top-level intervals under it (each object's coarsest states, so
-- its total is the time the object's state is known). A state keeps its
-- name up the levels where state_levels does not aggregate it.
-- object_kind keeps the objects of one kind (the run's node then sums
-- theirs alone). t_from,
-- t_to and relative clip the intervals to a window, as state_stats_window
-- does. Rows in depth-first order, siblings by label (sort_by := 'name')
-- or by total, largest first (sort_by := 'total').
-- Columns: run_id, pos (from 1, the run), depth (0 run, 1 kind, then
-- objects and states), node (run, kind, object, state), label, level (a
-- state node's aggregation level; NULL otherwise), count, total_ns,
-- mean_ns, max_ns, p50_ns, p90_ns, p99_ns, truncated, path (the labels
-- from depth 1 down), kind, object_id, object (NULL above an object in
-- kos, and on kso's state nodes), state.
-- Example, the CPUs of run 1, their busy/idle and what made them up:
--   SELECT repeat('  ', depth) || label, total_ns, count, max_ns
--   FROM state_stats_tree('kos', run := 1) WHERE kind = 'cpu' ORDER BY pos;
CREATE OR REPLACE MACRO state_stats_tree_reference(ord, run := NULL, object_kind := NULL, sort_by := 'name', t_from := NULL, t_to := NULL, relative := false) AS TABLE
WITH
params AS (
    SELECT CASE WHEN ord::VARCHAR IN ('kos', 'kso') THEN ord::VARCHAR
                ELSE error('state_stats_tree: order ' || coalesce('"' || ord::VARCHAR || '"', 'NULL') || ' is not one of kos, kso') END AS ord,
           CASE WHEN sort_by::VARCHAR IN ('name', 'total') THEN sort_by::VARCHAR
                ELSE error('state_stats_tree: sort_by ' || coalesce('"' || sort_by::VARCHAR || '"', 'NULL') || ' is not one of name, total') END AS sort_by
),
-- The statistics of every node are those of its intervals (known: the
-- duration of those not truncated, NULL for the others, which every
-- statistic leaves out; the mean is the sum over the count, as avg
-- computes it), grouped by object, not by kind, where they can be (the
-- kind and the names joined to the groups after, not to every interval);
-- the groups an order does not show are not computed (ord folds to a
-- constant: a WHERE on it removes a whole branch).
--
-- the objects with the depth of their kind's levels (their top level)
objs AS (
    SELECT o.run_id, o.object_id, o.kind, coalesce(d.depth, 0) AS depth
    FROM objects o
    LEFT JOIN state_level_depth d ON d.run_id = o.run_id AND d.kind = o.kind
    WHERE (run IS NULL OR o.run_id = run) AND (object_kind IS NULL OR o.kind = object_kind)
),
-- state nodes: per object (kos's, and kso's object leaves at level 0)
-- and pooled over the kind (kso's)
state_groups AS MATERIALIZED (
    SELECT g.run_id, 'state' AS node, o.kind, g.object_id, g.level, g.state, g.count, g.total_ns, g.mean_ns,
           g.max_ns, g.pct, g.truncated
    FROM (SELECT run_id, object_id, level, state,
                 count(known) AS count,
                 CAST(coalesce(sum(known), 0) AS BIGINT) AS total_ns,
                 sum(known)::DOUBLE / count(known) AS mean_ns,
                 max(known) AS max_ns,
                 quantile_disc(known, [0.5, 0.9, 0.99]) AS pct,
                 count(*) - count(known) AS truncated
          FROM (SELECT run_id, object_id, level, state, CASE WHEN NOT truncated THEN dur END AS known
                FROM state_trace_level_rows(0, -1, run := run, object_kind := object_kind, t_from := t_from, t_to := t_to, relative := relative))
          WHERE ord::VARCHAR = 'kos' OR level = 0
          GROUP BY run_id, object_id, level, state) g
    JOIN objects o ON o.run_id = g.run_id AND o.object_id = g.object_id
    UNION ALL
    SELECT run_id, 'pooled', kind, NULL, level, state,
           count(known),
           CAST(coalesce(sum(known), 0) AS BIGINT),
           sum(known)::DOUBLE / count(known),
           max(known),
           quantile_disc(known, [0.5, 0.9, 0.99]),
           count(*) - count(known)
    FROM (SELECT r.run_id, o.kind, r.level, r.state, CASE WHEN NOT r.truncated THEN r.dur END AS known
          FROM state_trace_level_rows(0, -1, run := run, object_kind := object_kind, t_from := t_from, t_to := t_to, relative := relative) r
          JOIN objs o ON o.run_id = r.run_id AND o.object_id = r.object_id
          WHERE ord::VARCHAR = 'kso')
    GROUP BY run_id, kind, level, state
),
depths AS (
    SELECT k.run_id, k.kind, coalesce(d.depth, 0) AS depth
    FROM (SELECT DISTINCT run_id, kind FROM state_groups) k
    LEFT JOIN state_level_depth d ON d.run_id = k.run_id AND d.kind = k.kind
),
-- per run and kind, the map 'level:state' -> the state at level + 1
ups AS (
    SELECT run_id, kind, map_from_entries(list({'k': level || ':' || state, 'v': parent})) AS up
    FROM (SELECT run_id, kind, level, state, any_value(nullif(parent_state, '')) AS parent
          FROM state_levels WHERE run IS NULL OR run_id = run GROUP BY ALL)
    WHERE parent IS NOT NULL
    GROUP BY run_id, kind
),
-- every state at every level with its chain: the states above it, from
-- the top level down to it (the state passed up the map once per level,
-- as state_level_map does)
chains AS MATERIALIZED (
    SELECT s.run_id, s.kind, s.level, s.state, d.depth,
           list_transform(range(d.depth, s.level - 1, -1),
               l -> list_reduce(list_concat([s.state], list_transform(range(s.level, l), x -> CAST(x AS VARCHAR))),
                                (acc, x) -> coalesce(map_extract(u.up, x || ':' || acc)[1], acc))) AS chain
    FROM (SELECT DISTINCT run_id, kind, level, state FROM state_groups) s
    JOIN depths d ON d.run_id = s.run_id AND d.kind = s.kind
    LEFT JOIN ups u ON u.run_id = s.run_id AND u.kind = s.kind
),
-- the nodes and the intervals they sum up: (node, keys) grouped
grouped AS (
    -- run, kind and (kos) object nodes: the top-level intervals under
    -- them (their states not read)
    SELECT t.run_id, t.node, t.kind, t.object_id, o.name AS object, t.level, t.state, t.count, t.total_ns,
           t.mean_ns, t.max_ns, t.pct, t.truncated
    FROM (SELECT run_id,
                 CASE WHEN GROUPING(kind) = 1 THEN 'run' WHEN GROUPING(object_id) = 1 THEN 'kind' ELSE 'object' END AS node,
                 kind, object_id, NULL::INTEGER AS level, NULL::VARCHAR AS state,
                 count(known) AS count,
                 CAST(coalesce(sum(known), 0) AS BIGINT) AS total_ns,
                 sum(known)::DOUBLE / count(known) AS mean_ns,
                 max(known) AS max_ns,
                 quantile_disc(known, [0.5, 0.9, 0.99]) AS pct,
                 count(*) - count(known) AS truncated
          FROM (SELECT r.run_id, o.kind, r.object_id, CASE WHEN NOT r.truncated THEN r.dur END AS known
                FROM state_trace_level_rows(0, -1, run := run, object_kind := object_kind, t_from := t_from, t_to := t_to, relative := relative) r
                JOIN objs o ON o.run_id = r.run_id AND o.object_id = r.object_id AND o.depth = r.level)
          GROUP BY GROUPING SETS ((run_id), (run_id, kind), (run_id, kind, object_id))) t
    LEFT JOIN objects o ON o.run_id = t.run_id AND o.object_id = t.object_id
    UNION ALL
    SELECT g.run_id, g.node, g.kind, g.object_id, o.name, g.level, g.state, g.count, g.total_ns, g.mean_ns,
           g.max_ns, g.pct, g.truncated
    FROM state_groups g
    LEFT JOIN objects o ON o.run_id = g.run_id AND o.object_id = g.object_id
),
-- each node's place: its key (label and id per depth from 1), and what it
-- is in the chosen order (kso's object leaves are the object's level-0
-- states)
placed AS (
    SELECT g.*, p.ord, p.sort_by,
           CASE
             WHEN g.node = 'run' THEN []
             WHEN g.node = 'kind' THEN [{'l': g.kind, 'i': -1}]
             WHEN g.node = 'object' AND p.ord = 'kos' THEN [{'l': g.kind, 'i': -1}, {'l': g.object, 'i': g.object_id}]
             WHEN g.node = 'state' AND p.ord = 'kos'
               THEN list_concat([{'l': g.kind, 'i': -1}, {'l': g.object, 'i': g.object_id}], list_transform(c.chain, s -> {'l': s, 'i': -1}))
             WHEN g.node = 'pooled' AND p.ord = 'kso'
               THEN list_concat([{'l': g.kind, 'i': -1}], list_transform(c.chain, s -> {'l': s, 'i': -1}))
             WHEN g.node = 'state' AND p.ord = 'kso' AND g.level = 0
               THEN list_concat(list_concat([{'l': g.kind, 'i': -1}], list_transform(c.chain, s -> {'l': s, 'i': -1})), [{'l': g.object, 'i': g.object_id}])
           END AS key
    FROM grouped g
    CROSS JOIN params p
    LEFT JOIN chains c ON c.run_id = g.run_id AND c.kind = g.kind AND c.level = g.level AND c.state = g.state
),
present AS MATERIALIZED (
    SELECT * FROM placed WHERE key IS NOT NULL
),
-- a state above one that has intervals may have none at its own level
-- (its only intervals were 0 ns there, which the levels above level 0
-- leave out): it is a node all the same, with count 0; so is an object
-- whose states have intervals but none at its top level (a 0 ns one, cut
-- by a window), its kind and its run
kept AS MATERIALIZED (
    SELECT * FROM present
    UNION ALL
    SELECT DISTINCT ON (p.run_id, p.key[1:r.n])
           p.run_id,
           CASE WHEN r.n = 1 THEN 'kind' WHEN r.n = 2 AND p.ord = 'kos' THEN 'object'
                WHEN p.ord = 'kos' THEN 'state' ELSE 'pooled' END AS node,
           p.kind, CASE WHEN p.ord = 'kos' AND r.n >= 2 THEN p.object_id END,
           CASE WHEN p.ord = 'kos' AND r.n >= 2 THEN p.object END,
           CASE WHEN r.n > CASE WHEN p.ord = 'kos' THEN 2 ELSE 1 END THEN p.level + len(p.key) - r.n END,
           CASE WHEN r.n > CASE WHEN p.ord = 'kos' THEN 2 ELSE 1 END THEN p.key[r.n].l END,
           0, 0, NULL, NULL, NULL, 0,
           p.ord, p.sort_by, p.key[1:r.n]
    FROM present p
    CROSS JOIN LATERAL (SELECT unnest(range(1, len(p.key))) AS n) r
    WHERE (p.node = 'state' AND p.ord = 'kos' OR p.node = 'pooled')
      AND NOT EXISTS (SELECT 1 FROM present q WHERE q.run_id = p.run_id AND q.key = p.key[1:r.n])
    UNION ALL
    SELECT DISTINCT ON (p.run_id) p.run_id, 'run', NULL, NULL, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0,
           p.ord, p.sort_by, []
    FROM present p
    WHERE NOT EXISTS (SELECT 1 FROM present q WHERE q.run_id = p.run_id AND q.node = 'run')
),
-- per node, the totals of its ancestors and its own, down its key (to
-- sort siblings by total, largest first)
ancestors AS (
    SELECT k.run_id, k.key,
           list({'t': -a.total_ns, 'l': k.key[r.n].l, 'i': k.key[r.n].i} ORDER BY r.n) AS total_key
    FROM kept k
    CROSS JOIN LATERAL (SELECT unnest(range(1, len(k.key) + 1)) AS n) r
    JOIN kept a ON a.run_id = k.run_id AND a.key = k.key[1:r.n]
    GROUP BY k.run_id, k.key
),
ranked AS (
    SELECT k.*, len(k.key) AS depth, coalesce(a.total_key, []) AS total_key
    FROM kept k
    LEFT JOIN ancestors a ON a.run_id = k.run_id AND a.key = k.key
)
SELECT r.run_id,
       row_number() OVER (PARTITION BY r.run_id ORDER BY
           CASE WHEN r.sort_by = 'total' THEN r.total_key
                ELSE list_transform(r.key, x -> {'t': 0, 'l': x.l, 'i': x.i}) END) AS pos,
       r.depth,
       CASE WHEN r.node = 'pooled' THEN 'state' WHEN r.node = 'state' AND r.ord = 'kso' THEN 'object' ELSE r.node END AS node,
       CASE WHEN r.depth = 0 THEN coalesce(n.name, 'run ' || r.run_id) ELSE r.key[r.depth].l END AS label,
       CASE WHEN r.node IN ('state', 'pooled') AND NOT (r.node = 'state' AND r.ord = 'kso') THEN r.level END AS level,
       r.count, r.total_ns, r.mean_ns, r.max_ns,
       r.pct[1] AS p50_ns, r.pct[2] AS p90_ns, r.pct[3] AS p99_ns,
       r.truncated,
       list_transform(r.key, x -> x.l) AS path,
       r.kind,
       CASE WHEN r.node IN ('object', 'state') THEN r.object_id END AS object_id,
       CASE WHEN r.node IN ('object', 'state') THEN r.object END AS object,
       r.state
FROM ranked r
LEFT JOIN runs n ON n.run_id = r.run_id
ORDER BY r.run_id, pos;

-- state_stats_tree: (state_stats_tree(ord, run := NULL, object_kind :=
-- NULL, sort_by := 'name', t_from := NULL, t_to := NULL, relative :=
-- false)) the state statistics tree of the Baget tracer (seed 6.4): per
-- run, the object kinds, the objects and the hierarchy of their states
-- (the aggregation levels of state_levels, the top level first), each
-- node with the statistics of its intervals: count, total, mean, max and
-- p50/p90/p99 (nearest rank) of the complete ones, and how many were
-- truncated (left out). ord chooses the hierarchy:
--   kos: run | kind | object | top state | ... | level-0 state
--        (the seed's: each object's own state hierarchy)
--   kso: run | kind | top state | ... | level-0 state | object
--        (each kind's state hierarchy, pooled over its objects, with the
--        objects under the atomic states)
-- A state node's intervals are those of the state at its level (of its
-- object in kos; of every object of the kind in kso, pooled: the
-- percentiles are of the pooled durations); a run, kind or object node's
-- are the top-level intervals under it (each object's coarsest states, so
-- its total is the time the object's state is known). A state keeps its
-- name up the levels where state_levels does not aggregate it; a state
-- above one that has intervals may have none at its own level (its only
-- intervals were 0 ns there, which the levels above level 0 leave out):
-- it is a node all the same, with count 0. object_kind keeps the objects
-- of one kind (the run's node then sums theirs alone). t_from, t_to and
-- relative clip the intervals to a window, as state_stats_window does.
-- Rows in depth-first order, siblings by label (sort_by := 'name') or by
-- total, largest first (sort_by := 'total'; then by label), objects of
-- one name by object_id.
-- Columns: run_id, pos (from 1, the run), depth (0 run, 1 kind, then
-- objects and states), node (run, kind, object, state), label, level (a
-- state node's aggregation level; NULL otherwise), count, total_ns,
-- mean_ns, max_ns, p50_ns, p90_ns, p99_ns, truncated, path (the labels
-- from depth 1 down), kind, object_id, object (NULL above an object in
-- kos, and on kso's state nodes), state.
-- (How: the statistics grouped per object where they can be, on
-- integer keys (the states' symbol ids, a number per kind) and named
-- after; each node an integer id and a link to its parent, a state's
-- parent found in state_levels, one level at a time; the depth-first order from each
-- node's rank among its siblings, down from the run. The reference,
-- state_stats_tree_reference, keys the nodes by lists of labels: 30-60
-- times slower on a run of a million events.)
-- Example, the CPUs of run 1, their busy/idle and what made them up:
--   SELECT repeat('  ', depth) || label, total_ns, count, max_ns
--   FROM state_stats_tree('kos', run := 1) WHERE kind = 'cpu' ORDER BY pos;
CREATE OR REPLACE MACRO state_stats_tree(ord, run := NULL, object_kind := NULL, sort_by := 'name', t_from := NULL, t_to := NULL, relative := false) AS TABLE
WITH RECURSIVE
sst_params AS (
    SELECT CASE WHEN ord::VARCHAR IN ('kos', 'kso') THEN ord::VARCHAR
                ELSE error('state_stats_tree: order ' || coalesce('"' || ord::VARCHAR || '"', 'NULL') || ' is not one of kos, kso') END AS ord,
           CASE WHEN sort_by::VARCHAR IN ('name', 'total') THEN sort_by::VARCHAR
                ELSE error('state_stats_tree: sort_by ' || coalesce('"' || sort_by::VARCHAR || '"', 'NULL') || ' is not one of name, total') END AS sort_by
),
-- whole runs whose trees the ingest wrote (state_tree_stored) are read;
-- the others (and every run under object_kind or a window) computed: the
-- runs to compute, each row source below joined to them first (when
-- there are none, DuckDB stops each scan at its first rows)
sst_stored AS MATERIALIZED (
    SELECT run_id FROM state_tree_stored_runs(run := run)
    WHERE object_kind IS NULL AND t_from IS NULL AND t_to IS NULL
),
sst_todo AS MATERIALIZED (
    SELECT run_id FROM runs
    WHERE (run IS NULL OR run_id = run) AND run_id NOT IN (SELECT run_id FROM sst_stored)
),
-- the objects with the depth of their kind's levels (their top level)
-- and a number per kind (kind_no: the groups are keyed by integers, and
-- named after)
sst_objs AS (
    SELECT o.run_id, o.object_id, o.kind, dense_rank() OVER (ORDER BY o.kind) AS kind_no, o.name,
           coalesce(d.depth, 0) AS depth
    FROM objects o
    SEMI JOIN sst_todo t ON t.run_id = o.run_id
    LEFT JOIN state_level_depth d ON d.run_id = o.run_id AND d.kind = o.kind
    WHERE (run IS NULL OR o.run_id = run) AND (object_kind IS NULL OR o.kind = object_kind)
),
sst_kinds AS (SELECT DISTINCT run_id, kind_no, kind, depth FROM sst_objs),
-- the rows the statistics read (known: the duration of those not
-- truncated). Whole runs: those of state_stat_rows_stored, each state by
-- its symbol id (grouped on integers, named once grouped), and of
-- state_stat_rows_unstored, by name (the objects the ingest left to the
-- reference, and the runs of an older traceduck); else
-- state_trace_level_rows, by name. The branch not read
-- folds away. (The rows by name materialized: each reference to them
-- plans and runs their macro again.)
sst_sym_rows AS (
    SELECT r.run_id, r.object_id, r.level, r.state_sym, CASE WHEN NOT r.truncated THEN r.dur END AS known
    FROM state_stat_rows_stored(run := run) r
    SEMI JOIN sst_todo t ON t.run_id = r.run_id
    WHERE (object_kind IS NULL AND t_from IS NULL AND t_to IS NULL) IS TRUE),
sst_name_rows AS MATERIALIZED (
    SELECT r.run_id, r.object_id, r.level, r.state, CASE WHEN NOT r.truncated THEN r.dur END AS known
    FROM state_stat_rows_unstored(run := run) r
    SEMI JOIN sst_todo t ON t.run_id = r.run_id
    WHERE (object_kind IS NULL AND t_from IS NULL AND t_to IS NULL) IS TRUE
    UNION ALL
    SELECT run_id, object_id, level, state, CASE WHEN NOT truncated THEN dur END
    FROM state_trace_level_rows(0, -1, run := run, object_kind := object_kind, t_from := t_from, t_to := t_to,
                                relative := relative, detail := false)
    WHERE (object_kind IS NULL AND t_from IS NULL AND t_to IS NULL) IS NOT TRUE),
-- (kso) the kinds and levels where rows by name are pooled: the
-- objects of a kind may be stored (rows by symbol id) and left to the
-- reference (rows by name) alike, and a state pooled over them is one
-- group, by name, not one of each
sst_mixed AS MATERIALIZED (
    SELECT DISTINCT r.run_id, o.kind_no, r.level
    FROM sst_name_rows r
    JOIN sst_objs o ON o.run_id = r.run_id AND o.object_id = r.object_id
    WHERE ord::VARCHAR = 'kso'),
-- the statistic groups, by node kind nk: 0 run, 1 kind, 2 object (kos),
-- 3 state (kos: of an object; kso: pooled over the kind, object_id
-- NULL), 4 object under a level-0 state (kso). The groups an order does
-- not show are not computed (ord folds to a constant). The percentiles
-- leave each group-by as three columns, not a list (a list carried
-- through the joins after it made DuckDB build their hash tables on the
-- groups).
sst_groups AS MATERIALIZED (
    SELECT g.run_id, CASE WHEN ord::VARCHAR = 'kos' THEN 3 ELSE 4 END AS nk, o.kind, g.object_id, o.name AS object,
           g.level, coalesce(g.state, y.name) AS state, o.depth, g.count, g.total_ns, g.mean_ns, g.max_ns,
           g.p50_ns, g.p90_ns, g.p99_ns, g.truncated
    FROM (SELECT run_id, object_id, level, state_sym, NULL::VARCHAR AS state, count, total_ns, mean_ns, max_ns,
                 pct[1] AS p50_ns, pct[2] AS p90_ns, pct[3] AS p99_ns, truncated
          FROM (SELECT run_id, object_id, level, state_sym,
                       count(known) AS count,
                       CAST(coalesce(sum(known), 0) AS BIGINT) AS total_ns,
                       sum(known)::DOUBLE / count(known) AS mean_ns,
                       max(known) AS max_ns,
                       quantile_disc(known, [0.5, 0.9, 0.99]) AS pct,
                       count(*) - count(known) AS truncated
                FROM sst_sym_rows
                WHERE ord::VARCHAR = 'kos' OR level = 0
                GROUP BY run_id, object_id, level, state_sym)
          UNION ALL
          SELECT run_id, object_id, level, NULL::INTEGER, state, count, total_ns, mean_ns, max_ns,
                 pct[1], pct[2], pct[3], truncated
          FROM (SELECT run_id, object_id, level, state,
                       count(known) AS count,
                       CAST(coalesce(sum(known), 0) AS BIGINT) AS total_ns,
                       sum(known)::DOUBLE / count(known) AS mean_ns,
                       max(known) AS max_ns,
                       quantile_disc(known, [0.5, 0.9, 0.99]) AS pct,
                       count(*) - count(known) AS truncated
                FROM sst_name_rows
                WHERE ord::VARCHAR = 'kos' OR level = 0
                GROUP BY run_id, object_id, level, state)) g
    JOIN sst_objs o ON o.run_id = g.run_id AND o.object_id = g.object_id
    LEFT JOIN state_stat_names() y ON y.sym = g.state_sym
    UNION ALL
    SELECT p.run_id, 3, k.kind, NULL, NULL, p.level, coalesce(p.state, y.name), k.depth,
           p.count, p.total_ns, p.mean_ns, p.max_ns, p.p50_ns, p.p90_ns, p.p99_ns, p.truncated
    FROM (SELECT run_id, kind_no, level, state_sym, NULL::VARCHAR AS state, count, total_ns, mean_ns, max_ns,
                 pct[1] AS p50_ns, pct[2] AS p90_ns, pct[3] AS p99_ns, truncated
          FROM (SELECT r.run_id, o.kind_no, r.level, r.state_sym,
                       count(r.known) AS count,
                       CAST(coalesce(sum(r.known), 0) AS BIGINT) AS total_ns,
                       sum(r.known)::DOUBLE / count(r.known) AS mean_ns,
                       max(r.known) AS max_ns,
                       quantile_disc(r.known, [0.5, 0.9, 0.99]) AS pct,
                       count(*) - count(r.known) AS truncated
                FROM sst_sym_rows r
                JOIN sst_objs o ON o.run_id = r.run_id AND o.object_id = r.object_id
                ANTI JOIN sst_mixed m ON m.run_id = r.run_id AND m.kind_no = o.kind_no AND m.level = r.level
                WHERE ord::VARCHAR = 'kso'
                GROUP BY r.run_id, o.kind_no, r.level, r.state_sym)
          UNION ALL
          SELECT run_id, kind_no, level, NULL::INTEGER, state, count, total_ns, mean_ns, max_ns,
                 pct[1], pct[2], pct[3], truncated
          FROM (SELECT r.run_id, o.kind_no, r.level, r.state,
                       count(r.known) AS count,
                       CAST(coalesce(sum(r.known), 0) AS BIGINT) AS total_ns,
                       sum(r.known)::DOUBLE / count(r.known) AS mean_ns,
                       max(r.known) AS max_ns,
                       quantile_disc(r.known, [0.5, 0.9, 0.99]) AS pct,
                       count(*) - count(r.known) AS truncated
                FROM (SELECT run_id, object_id, level, state, known FROM sst_name_rows
                      UNION ALL
                      -- the stored rows of a kind and level pooled with
                      -- rows by name, named one by one
                      SELECT r.run_id, r.object_id, r.level, y.name, r.known
                      FROM sst_sym_rows r
                      JOIN sst_objs o ON o.run_id = r.run_id AND o.object_id = r.object_id
                      SEMI JOIN sst_mixed m ON m.run_id = r.run_id AND m.kind_no = o.kind_no AND m.level = r.level
                      LEFT JOIN state_stat_names() y ON y.sym = r.state_sym) r
                JOIN sst_objs o ON o.run_id = r.run_id AND o.object_id = r.object_id
                WHERE ord::VARCHAR = 'kso'
                GROUP BY r.run_id, o.kind_no, r.level, r.state)) p
    JOIN sst_kinds k ON k.run_id = p.run_id AND k.kind_no = p.kind_no
    LEFT JOIN state_stat_names() y ON y.sym = p.state_sym
    UNION ALL
    -- run, kind and object nodes: the top-level intervals under them
    SELECT t.run_id, t.nk, k.kind, t.object_id, o.name, NULL, NULL, NULL,
           t.count, t.total_ns, t.mean_ns, t.max_ns, t.p50_ns, t.p90_ns, t.p99_ns, t.truncated
    FROM (SELECT * EXCLUDE (pct), pct[1] AS p50_ns, pct[2] AS p90_ns, pct[3] AS p99_ns FROM (
          SELECT r.run_id,
                 CASE WHEN GROUPING(o.kind_no) = 1 THEN 0 WHEN GROUPING(r.object_id) = 1 THEN 1 ELSE 2 END AS nk,
                 o.kind_no, r.object_id,
                 count(r.known) AS count,
                 CAST(coalesce(sum(r.known), 0) AS BIGINT) AS total_ns,
                 sum(r.known)::DOUBLE / count(r.known) AS mean_ns,
                 max(r.known) AS max_ns,
                 quantile_disc(r.known, [0.5, 0.9, 0.99]) AS pct,
                 count(*) - count(r.known) AS truncated
          FROM (SELECT run_id, object_id, level, known FROM sst_sym_rows
                UNION ALL
                SELECT run_id, object_id, level, known FROM sst_name_rows) r
          JOIN sst_objs o ON o.run_id = r.run_id AND o.object_id = r.object_id AND o.depth = r.level
          GROUP BY GROUPING SETS ((r.run_id), (r.run_id, o.kind_no), (r.run_id, o.kind_no, r.object_id)))) t
    LEFT JOIN sst_kinds k ON k.run_id = t.run_id AND k.kind_no = t.kind_no
    LEFT JOIN sst_objs o ON o.run_id = t.run_id AND o.object_id = t.object_id
),
-- per run, kind, level and state: the state it becomes at level + 1
sst_up AS (
    SELECT run_id, kind, level, state, any_value(nullif(parent_state, '')) AS parent
    FROM state_levels WHERE run IS NULL OR run_id = run GROUP BY ALL
),
-- the state nodes and every state above them, up to the top level
sst_above(run_id, kind, object_id, object, level, state, depth) AS (
    SELECT run_id, kind, object_id, object, level, state, depth FROM sst_groups WHERE nk = 3
    UNION
    SELECT a.run_id, a.kind, a.object_id, a.object, a.level + 1, coalesce(u.parent, a.state), a.depth
    FROM sst_above a
    LEFT JOIN sst_up u ON u.run_id = a.run_id AND u.kind = a.kind AND u.level = a.level AND u.state = a.state
    WHERE a.level < a.depth
),
-- (computed once: each reference to a recursive CTE runs it again)
sst_above_m AS MATERIALIZED (SELECT * FROM sst_above),
sst_nodes AS MATERIALIZED (
    SELECT n.*,
           -- the parent's key
           CASE WHEN n.nk = 1 THEN 0 WHEN n.nk = 2 THEN 1 WHEN n.nk = 4 THEN 3
                WHEN n.nk = 3 AND n.level < n.depth THEN 3 WHEN ord::VARCHAR = 'kos' THEN 2 ELSE 1 END AS p_nk,
           CASE WHEN n.nk > 1 THEN n.kind END AS p_kind,
           CASE WHEN n.nk = 3 THEN n.object_id END AS p_object_id,
           CASE WHEN n.nk = 4 THEN 0 WHEN n.nk = 3 AND n.level < n.depth THEN n.level + 1 END AS p_level,
           CASE WHEN n.nk = 4 THEN n.state WHEN n.nk = 3 AND n.level < n.depth THEN coalesce(u.parent, n.state) END AS p_state,
           row_number() OVER () AS id
    FROM (SELECT run_id, nk, kind, object_id, object, level, state, depth, count, total_ns, mean_ns, max_ns,
                 p50_ns, p90_ns, p99_ns, truncated
          FROM sst_groups WHERE nk <> 2 OR ord::VARCHAR = 'kos'
          UNION ALL
          SELECT a.run_id, 3, a.kind, a.object_id, a.object, a.level, a.state, a.depth, 0, 0, NULL, NULL, NULL, NULL, NULL, 0
          FROM sst_above_m a
          ANTI JOIN (SELECT * FROM sst_groups WHERE nk = 3) g
               ON g.run_id = a.run_id AND g.kind = a.kind AND g.object_id IS NOT DISTINCT FROM a.object_id
              AND g.level = a.level AND g.state IS NOT DISTINCT FROM a.state
          UNION ALL
          -- the objects (kos), kinds and runs above states, without
          -- top-level intervals
          SELECT DISTINCT a.run_id, 2, a.kind, a.object_id, a.object, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, NULL, NULL, 0
          FROM sst_above_m a
          ANTI JOIN (SELECT * FROM sst_groups WHERE nk = 2) g ON g.run_id = a.run_id AND g.object_id = a.object_id
          WHERE ord::VARCHAR = 'kos'
          UNION ALL
          SELECT DISTINCT a.run_id, 1, a.kind, NULL, NULL, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, NULL, NULL, 0
          FROM sst_above_m a
          ANTI JOIN (SELECT * FROM sst_groups WHERE nk = 1) g ON g.run_id = a.run_id AND g.kind = a.kind
          UNION ALL
          SELECT DISTINCT a.run_id, 0, NULL, NULL, NULL, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, NULL, NULL, 0
          FROM sst_above_m a
          ANTI JOIN (SELECT * FROM sst_groups WHERE nk = 0) g ON g.run_id = a.run_id) n
    LEFT JOIN sst_up u ON u.run_id = n.run_id AND u.kind = n.kind AND u.level = n.level AND u.state = n.state
),
sst_linked AS MATERIALIZED (
    SELECT n.id, n.run_id, n.nk, n.kind, n.object_id, n.object, n.level, n.state, n.count, n.total_ns, n.mean_ns,
           n.max_ns, n.p50_ns, n.p90_ns, n.p99_ns, n.truncated, p.id AS parent_id,
           CASE WHEN n.nk IN (2, 4) THEN n.object WHEN n.nk = 1 THEN n.kind ELSE n.state END AS label
    FROM sst_nodes n
    LEFT JOIN sst_nodes p ON p.run_id = n.run_id AND p.nk = n.p_nk AND p.kind IS NOT DISTINCT FROM n.p_kind
         AND p.object_id IS NOT DISTINCT FROM n.p_object_id AND p.level IS NOT DISTINCT FROM n.p_level
         AND p.state IS NOT DISTINCT FROM n.p_state
),
sst_ranked AS MATERIALIZED (
    SELECT l.*,
           row_number() OVER (PARTITION BY l.run_id, l.parent_id ORDER BY
               CASE WHEN p.sort_by = 'total' THEN -l.total_ns ELSE 0 END, l.label,
               CASE WHEN l.nk IN (2, 4) THEN l.object_id ELSE -1 END) AS rank
    FROM sst_linked l CROSS JOIN sst_params p
    WHERE p.ord IS NOT NULL
),
-- down from each run: the ranks, as a text that sorts as their list
-- (ten digits each; a window sorts a text much faster than a list), and
-- the labels from depth 1
sst_walk(id, ranks, path) AS (
    SELECT id, '', []::VARCHAR[] FROM sst_ranked WHERE nk = 0
    UNION ALL
    SELECT c.id, w.ranks || lpad(c.rank::VARCHAR, 10, '0'), list_append(w.path, c.label)
    FROM sst_walk w JOIN sst_ranked c ON c.parent_id = w.id
),
sst_walk_m AS MATERIALIZED (SELECT * FROM sst_walk),
-- (the order apart from the wide rows: a window sorts what it carries)
sst_pos AS (
    SELECT w.id, row_number() OVER (PARTITION BY r.run_id ORDER BY w.ranks) AS pos
    FROM sst_walk_m w JOIN (SELECT id, run_id FROM sst_ranked) r ON r.id = w.id
)
SELECT r.run_id,
       w.pos,
       len(k.path) AS depth,
       CASE WHEN r.nk = 0 THEN 'run' WHEN r.nk = 1 THEN 'kind' WHEN r.nk = 3 THEN 'state' ELSE 'object' END AS node,
       CASE WHEN r.nk = 0 THEN coalesce(n.name, 'run ' || r.run_id) ELSE r.label END AS label,
       CASE WHEN r.nk = 3 THEN r.level END AS level,
       r.count, r.total_ns, r.mean_ns, r.max_ns,
       r.p50_ns, r.p90_ns, r.p99_ns,
       r.truncated,
       k.path,
       r.kind,
       r.object_id,
       r.object,
       r.state
FROM sst_ranked r
JOIN sst_pos w ON w.id = r.id
JOIN sst_walk_m k ON k.id = r.id
LEFT JOIN runs n ON n.run_id = r.run_id
UNION ALL
-- the trees the ingest wrote
SELECT s.run_id,
       CASE WHEN p.sort_by = 'total' THEN s.pos_total ELSE s.pos END,
       s.depth, s.node,
       CASE WHEN s.node = 'run' THEN coalesce(n.name, 'run ' || s.run_id) ELSE s.label END,
       s.level, s.count, s.total_ns,
       CASE WHEN s.count > 0 THEN s.total_ns::DOUBLE / s.count END,
       s.max_ns, s.p50_ns, s.p90_ns, s.p99_ns, s.truncated, s.path, s.kind, s.object_id, s.object, s.state
FROM state_tree_stored(CASE WHEN ord::VARCHAR = 'kos' THEN 1 ELSE 2 END, run := run,
                       whole := object_kind IS NULL AND t_from IS NULL AND t_to IS NULL) s
SEMI JOIN sst_stored t ON t.run_id = s.run_id
CROSS JOIN sst_params p
LEFT JOIN runs n ON n.run_id = s.run_id
ORDER BY run_id, pos;
