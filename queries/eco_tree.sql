-- eco_tree_reference: (eco_tree_reference(ord, sort_by := 'name', t_from
-- := NULL, t_to := NULL, relative := false, unstored := false)) the
-- definition of eco_tree in SQL, same parameters and columns: it ranks,
-- groups and sorts the triples' names at every query. eco_tree reads the
-- nodes that the ingest wrote (eco_tree_nodes) instead, and this macro
-- only for the runs without them (unstored := true keeps only those): the
-- runs of a database written by a traceduck before that table. Tests
-- compare the two, format by format.
-- Example: SELECT * FROM eco_tree('coe') EXCEPT ALL SELECT * FROM eco_tree_reference('coe')
CREATE OR REPLACE MACRO eco_tree_reference(ord, sort_by := 'name', t_from := NULL, t_to := NULL, relative := false, unstored := false) AS TABLE
WITH
-- the arguments, checked once: a bad one is an error even on an empty database
params AS (
    SELECT CASE WHEN ord::VARCHAR IN ('eco', 'eoc', 'ceo', 'coe', 'oec', 'oce') THEN ord::VARCHAR
                ELSE error('eco_tree: order ' || coalesce('"' || ord::VARCHAR || '"', 'NULL')
                           || ' is not one of eco, eoc, ceo, coe, oec, oce') END AS ord,
           CASE WHEN sort_by::VARCHAR IN ('name', 'count') THEN sort_by::VARCHAR
                ELSE error('eco_tree: sort_by ' || coalesce('"' || sort_by::VARCHAR || '"', 'NULL')
                           || ' is not one of name, count') END AS sort_by,
           CASE WHEN t_from IS NULL AND t_to IS NULL THEN false
                WHEN t_from IS NULL OR t_to IS NULL OR t_from < t_to THEN true
                ELSE error('eco_tree: the window [' || t_from || ', ' || t_to || ') is empty: want t_from < t_to') END AS windowed
),
-- in a window, the events of each triple in [t_from, t_to)
in_window AS (
    SELECT e.run_id, e.eco_id, count(*) AS count
    FROM events e
    JOIN (SELECT run_id, CASE WHEN relative THEN first_ts ELSE 0 END AS origin FROM runs) o ON o.run_id = e.run_id
    WHERE (t_from IS NOT NULL OR t_to IS NOT NULL)
      AND (t_from IS NULL OR e.ts >= t_from + o.origin) AND (t_to IS NULL OR e.ts < t_to + o.origin)
    GROUP BY e.run_id, e.eco_id
),
-- one row per triple with its names, and where each dimension stands in
-- the order (pe, pc, po: 1, 2 or 3); computed once (DuckDB inlines a CTE
-- read several times otherwise)
triples AS MATERIALIZED (
    SELECT t.run_id, t.eco_id, CASE WHEN p.windowed THEN w.count ELSE t.count END AS count, coalesce(t.class, '(none)') AS class, coalesce(t.event, '(none)') AS event,
           coalesce(c.kind, '(none)') AS context_kind, coalesce(c.name, '(none)') AS context, t.context_id,
           coalesce(o.kind, '(none)') AS object_kind, coalesce(o.name, '(none)') AS object, t.object_id,
           strpos(p.ord, 'e') AS pe, strpos(p.ord, 'c') AS pc, strpos(p.ord, 'o') AS po
    FROM eco_triples t
    CROSS JOIN params p
    LEFT JOIN in_window w ON w.run_id = t.run_id AND w.eco_id = t.eco_id
    LEFT JOIN objects c ON c.run_id = t.run_id AND c.object_id = t.context_id
    LEFT JOIN objects o ON o.run_id = t.run_id AND o.object_id = t.object_id
    WHERE (NOT p.windowed OR w.count IS NOT NULL)
      AND t.run_id IN (SELECT run_id FROM runs
                       WHERE NOT unstored OR run_id NOT IN (SELECT run_id FROM eco_tree_nodes WHERE depth = 0))
),
-- each triple once per depth 0..4, keeping only the coordinates the node at
-- that depth fixes: the dimension at position p is fixed below depth p
-- (depth > p); the group of the first dimension from depth 1
nodes AS (
    SELECT run_id, depth, pe, pc, po,
           CASE WHEN depth > pe OR (pe = 1 AND depth >= 1) THEN class END AS class,
           CASE WHEN depth > pe THEN event END AS event,
           CASE WHEN depth > pc OR (pc = 1 AND depth >= 1) THEN context_kind END AS context_kind,
           CASE WHEN depth > pc THEN context END AS context,
           CASE WHEN depth > pc THEN context_id END AS context_id,
           CASE WHEN depth > po OR (po = 1 AND depth >= 1) THEN object_kind END AS object_kind,
           CASE WHEN depth > po THEN object END AS object,
           CASE WHEN depth > po THEN object_id END AS object_id,
           eco_id, count
    FROM triples, range(0, 5) r(depth)
),
-- the nodes: triples with the same coordinates at a depth are one node
grouped AS (
    SELECT run_id, depth, pe, pc, po, class, event, context_kind, context, context_id,
           object_kind, object, object_id,
           sum(count)::BIGINT AS count,
           min(CASE WHEN depth = 4 THEN eco_id END) AS eco_id
    FROM nodes
    GROUP BY ALL
),
-- the node's path: per place k (1..depth) its label l_k and the id i_k
-- that tells equal labels apart (-1 where the label alone identifies the
-- node); NULL past the node's depth. Place 1 is the group of the first
-- dimension, place k > 1 the dimension at position k - 1. Computed once
-- (read five times through places and ranked, each read of a CTE not
-- materialized is planned anew: 0.02 CPU-s of planning, which eco_tree
-- pays too for its runs without nodes).
keyed AS MATERIALIZED (
    SELECT *,
           CASE WHEN depth >= 1 THEN CASE 1 WHEN pe THEN class WHEN pc THEN context_kind ELSE object_kind END END AS l1,
           CASE WHEN depth >= 1 THEN -1 END AS i1,
           CASE WHEN depth >= 2 THEN CASE 1 WHEN pe THEN class || ':' || event WHEN pc THEN context ELSE object END END AS l2,
           CASE WHEN depth >= 2 THEN CASE 1 WHEN pe THEN -1 WHEN pc THEN context_id ELSE object_id END END AS i2,
           CASE WHEN depth >= 3 THEN CASE 2 WHEN pe THEN class || ':' || event WHEN pc THEN context ELSE object END END AS l3,
           CASE WHEN depth >= 3 THEN CASE 2 WHEN pe THEN -1 WHEN pc THEN context_id ELSE object_id END END AS i3,
           CASE WHEN depth >= 4 THEN CASE 3 WHEN pe THEN class || ':' || event WHEN pc THEN context ELSE object END END AS l4,
           CASE WHEN depth >= 4 THEN CASE 3 WHEN pe THEN -1 WHEN pc THEN context_id ELSE object_id END END AS i4
    FROM grouped
),
-- each place's label as a number: its rank among the labels (and ids) at
-- that place of every path of the run, so that siblings, which share the
-- places before, keep their order. Ranked on the distinct labels and
-- joined back: windows and sorts over numbers, not over every node's
-- strings (or lists of structs, which cost DuckDB seconds on 70k nodes).
places AS (
    SELECT run_id, 1 AS place, l1 AS l, i1 AS i FROM keyed WHERE depth >= 1
    UNION SELECT run_id, 2, l2, i2 FROM keyed WHERE depth >= 2
    UNION SELECT run_id, 3, l3, i3 FROM keyed WHERE depth >= 3
    UNION SELECT run_id, 4, l4, i4 FROM keyed WHERE depth >= 4
),
-- (computed once: read four times by ranked)
place_ranks AS MATERIALIZED (
    SELECT run_id, place, l, i, dense_rank() OVER (PARTITION BY run_id, place ORDER BY l, i) AS r FROM places
),
ranked AS (
    SELECT k.*, p1.r AS r1, p2.r AS r2, p3.r AS r3, p4.r AS r4
    FROM keyed k
    LEFT JOIN place_ranks p1 ON p1.run_id = k.run_id AND p1.place = 1 AND p1.l = k.l1 AND p1.i IS NOT DISTINCT FROM k.i1
    LEFT JOIN place_ranks p2 ON p2.run_id = k.run_id AND p2.place = 2 AND p2.l = k.l2 AND p2.i IS NOT DISTINCT FROM k.i2
    LEFT JOIN place_ranks p3 ON p3.run_id = k.run_id AND p3.place = 3 AND p3.l = k.l3 AND p3.i IS NOT DISTINCT FROM k.i3
    LEFT JOIN place_ranks p4 ON p4.run_id = k.run_id AND p4.place = 4 AND p4.l = k.l4 AND p4.i IS NOT DISTINCT FROM k.i4
),
-- the counts of the node's ancestors at depths 1..3 (and its own), to
-- sort by count: c_k is the count of the node's ancestor at depth k
counted AS (
    SELECT *,
           CASE WHEN depth >= 1 THEN max(count) FILTER (WHERE depth = 1) OVER (PARTITION BY run_id, r1) END AS c1,
           CASE WHEN depth >= 2 THEN max(count) FILTER (WHERE depth = 2) OVER (PARTITION BY run_id, r1, r2) END AS c2,
           CASE WHEN depth >= 3 THEN max(count) FILTER (WHERE depth = 3) OVER (PARTITION BY run_id, r1, r2, r3) END AS c3,
           CASE WHEN depth >= 4 THEN count END AS c4
    FROM ranked
)
-- Depth-first order is the order of the paths, place by place (with
-- sort_by := 'count', the ancestor's count first, largest first): a node
-- has NULL past its depth, which sorts first, so it comes right before
-- its subtree, and the subtree before the node's next sibling.
SELECT n.run_id,
       row_number() OVER (PARTITION BY n.run_id ORDER BY
           CASE WHEN p.sort_by = 'count' THEN -n.c1 END NULLS FIRST, n.r1 NULLS FIRST,
           CASE WHEN p.sort_by = 'count' THEN -n.c2 END NULLS FIRST, n.r2 NULLS FIRST,
           CASE WHEN p.sort_by = 'count' THEN -n.c3 END NULLS FIRST, n.r3 NULLS FIRST,
           CASE WHEN p.sort_by = 'count' THEN -n.c4 END NULLS FIRST, n.r4 NULLS FIRST) AS pos,
       n.depth,
       CASE n.depth WHEN 0 THEN 'run'
                    WHEN 1 THEN CASE 1 WHEN n.pe THEN 'class' WHEN n.pc THEN 'context.kind' ELSE 'object.kind' END
                    ELSE CASE n.depth - 1 WHEN n.pe THEN 'event' WHEN n.pc THEN 'context' ELSE 'object' END
       END AS level,
       CASE n.depth WHEN 0 THEN r.name WHEN 1 THEN n.l1 WHEN 2 THEN n.l2 WHEN 3 THEN n.l3 ELSE n.l4 END AS label,
       n.count,
       n.eco_id,
       [n.l1, n.l2, n.l3, n.l4][1:n.depth] AS path,
       n.class, n.event, n.context_kind, n.context, n.object_kind, n.object, n.context_id, n.object_id
FROM counted n
CROSS JOIN params p
LEFT JOIN runs r ON r.run_id = n.run_id
ORDER BY n.run_id, pos;

-- eco_tree: (eco_tree(ord, sort_by := 'name', t_from := NULL, t_to :=
-- NULL, relative := false)) the event statistics tree of
-- the Baget tracer (seed, 4.3-4.4): the eco-triples (event, context, main
-- object) of every run summed up one of six hierarchies, chosen by ord, the
-- order of the three dimensions e (event), c (context), o (main object):
--   eco: class        | event   | (event, context)   | (event, context, object)
--   eoc: class        | event   | (event, object)    | (event, object, context)
--   ceo: context kind | context | (context, event)   | (context, event, object)
--   coe: context kind | context | (context, object)  | (context, object, event)
--   oec: object kind  | object  | (object, event)    | (object, event, context)
--   oce: object kind  | object  | (object, context)  | (object, context, event)
-- The top level groups the first dimension (the event's class, the
-- context's or the object's kind); a missing context or object is the
-- node '(none)' of kind '(none)'. One row per node, in depth-first order:
-- a run's root, then each node followed by its subtree, siblings by label
-- (sort_by := 'name') or by count, largest first (sort_by := 'count'),
-- ties by label. Equal labels of different objects stay apart (by
-- object_id).
-- Columns:
--   run_id
--   pos           the row's place in the run's depth-first order, from 1 (the root)
--   depth         0 the run, 1 group, 2 event/context/object, 3 pair, 4 triple
--   level         what the node names: run, class, event, context.kind,
--                 context, object.kind or object (the words of the marks
--                 of eco_selection: level=label marks this node)
--   label         the node's name: run name, class, 'class:event', kind or object name;
--                 a missing class, event, context or object is named (none)
--                 (a Chrome event without cat), as eco_selection's marks name it
--   count         events under the node
--   eco_id        the triple of a depth-4 node (NULL above)
--   path          the labels from depth 1 down to the node
--   class, event, context_kind, context, object_kind, object, context_id,
--   object_id     the node's coordinates: what it fixes, NULL for what it does not
-- t_from and t_to (ns on the trace's time base; relative := true: from
-- each run's first event) count only the events in [t_from, t_to); a triple (and a run) with none there has no node
-- (eco_tree_window below).
-- The nodes are those the ingest wrote (eco_tree_nodes: the tree of every
-- order as numbers, in depth-first order by name, schema/ecotree.go),
-- named from the triple each points to; in a window, each node counts the
-- events in the window of the triples of its subtree (the leaves from pos
-- to last_pos) and the nodes are placed again; by count, siblings are
-- ordered by the counts of their ancestors (parent_pos). A run without
-- those rows (ingested by a traceduck before them) is answered by
-- eco_tree_reference, the SQL definition.
-- Indent label by depth to print the tree (what `traceduck stats` does).
-- Example, how often each event happened in each context, first 3 levels:
--   SELECT repeat('  ', depth - 1) || label AS node, count
--   FROM eco_tree('eco') WHERE run_id = 1 AND depth BETWEEN 1 AND 3 ORDER BY pos;
CREATE OR REPLACE MACRO eco_tree(ord, sort_by := 'name', t_from := NULL, t_to := NULL, relative := false) AS TABLE
WITH
-- the arguments, checked once: a bad one is an error even on an empty database
params AS (
    SELECT CASE WHEN ord::VARCHAR IN ('eco', 'eoc', 'ceo', 'coe', 'oec', 'oce') THEN ord::VARCHAR
                ELSE error('eco_tree: order ' || coalesce('"' || ord::VARCHAR || '"', 'NULL')
                           || ' is not one of eco, eoc, ceo, coe, oec, oce') END AS ord,
           CASE WHEN sort_by::VARCHAR IN ('name', 'count') THEN sort_by::VARCHAR
                ELSE error('eco_tree: sort_by ' || coalesce('"' || sort_by::VARCHAR || '"', 'NULL')
                           || ' is not one of name, count') END AS sort_by,
           CASE WHEN t_from IS NULL AND t_to IS NULL THEN false
                WHEN t_from IS NULL OR t_to IS NULL OR t_from < t_to THEN true
                ELSE error('eco_tree: the window [' || t_from || ', ' || t_to || ') is empty: want t_from < t_to') END AS windowed
),
-- the order's nodes (ord a constant: the scan skips the other orders')
et_nodes AS (
    SELECT * FROM eco_tree_nodes
    WHERE ord_no = list_position(['eco', 'eoc', 'ceo', 'coe', 'oec', 'oce'], ord::VARCHAR)
),
-- whole runs: the nodes as they are
et_whole AS (
    SELECT run_id, pos, parent_pos, depth, count, eco_id
    FROM et_nodes
    WHERE t_from IS NULL AND t_to IS NULL
),
-- in a window: the events of each triple in [t_from, t_to)
et_in_window AS (
    SELECT e.run_id, e.eco_id, count(*) AS count
    FROM events e
    JOIN (SELECT run_id, CASE WHEN relative THEN first_ts ELSE 0 END AS origin FROM runs) o ON o.run_id = e.run_id
    WHERE (t_from IS NOT NULL OR t_to IS NOT NULL)
      AND (t_from IS NULL OR e.ts >= t_from + o.origin) AND (t_to IS NULL OR e.ts < t_to + o.origin)
    GROUP BY e.run_id, e.eco_id
),
-- the triples that are one leaf with another (a missing class or event
-- and one named '(none)'), each with the leaf's eco_id, the smallest
et_merged AS (
    SELECT run_id, eco_id,
           min(eco_id) OVER (PARTITION BY run_id, coalesce(class, '(none)'), coalesce(event, '(none)'), context_id, object_id) AS leaf
    FROM eco_triples
    WHERE (t_from IS NOT NULL OR t_to IS NOT NULL)
      AND (class IS NULL OR event IS NULL OR class = '(none)' OR event = '(none)')
),
-- the leaves in depth-first order, with the events in the window of
-- those up to each
et_leaves AS MATERIALIZED (
    SELECT n.run_id, n.pos, coalesce(w.count, 0) AS count,
           sum(coalesce(w.count, 0)) OVER (PARTITION BY n.run_id ORDER BY n.pos ROWS UNBOUNDED PRECEDING) AS upto
    FROM et_nodes n
    LEFT JOIN (SELECT w.run_id, coalesce(m.leaf, w.eco_id) AS eco_id, sum(w.count) AS count
               FROM et_in_window w LEFT JOIN et_merged m ON m.run_id = w.run_id AND m.eco_id = w.eco_id
               GROUP BY ALL) w ON w.run_id = n.run_id AND w.eco_id = n.eco_id
    WHERE (t_from IS NOT NULL OR t_to IS NOT NULL) AND n.depth = 4
),
-- each node's events in the window: those of its leaves, the first at
-- pos + 4 - depth (straight down), the last at last_pos; the nodes
-- without any are left out
et_counted AS MATERIALIZED (
    SELECT n.run_id, n.pos, n.parent_pos, n.depth, l.upto - f.upto + f.count AS count, n.eco_id
    FROM et_nodes n
    JOIN et_leaves f ON f.run_id = n.run_id AND f.pos = n.pos + 4 - n.depth
    JOIN et_leaves l ON l.run_id = n.run_id AND l.pos = n.last_pos
    WHERE (t_from IS NOT NULL OR t_to IS NOT NULL) AND l.upto - f.upto + f.count > 0
),
-- the nodes kept, with their counts: the whole run's, or the window's
et_kept AS MATERIALIZED (
    SELECT * FROM et_whole
    WHERE sort_by::VARCHAR = 'count'
    UNION ALL
    SELECT * FROM et_counted
    WHERE sort_by::VARCHAR = 'count'
),
-- placed: by name, a whole run's as stored, a window's numbered again in
-- that order; by count, siblings by their counts, largest first, ties by
-- name: the order of the path of (count, pos) of the ancestors at depths
-- 1..4 (a_k, c_k: the node itself at its depth, NULL below it), its
-- parents p1, p2, p3 up
et_placed AS (
    SELECT run_id, pos, depth, count, eco_id
    FROM et_whole
    WHERE sort_by::VARCHAR = 'name'
    UNION ALL
    SELECT run_id, row_number() OVER (PARTITION BY run_id ORDER BY pos) AS pos, depth, count, eco_id
    FROM et_counted
    WHERE sort_by::VARCHAR = 'name'
    UNION ALL
    SELECT run_id,
           row_number() OVER (PARTITION BY run_id ORDER BY
               -c1 NULLS FIRST, a1 NULLS FIRST, -c2 NULLS FIRST, a2 NULLS FIRST,
               -c3 NULLS FIRST, a3 NULLS FIRST, -c4 NULLS FIRST, a4 NULLS FIRST) AS pos,
           depth, count, eco_id
    FROM (
        SELECT n.run_id, n.depth, n.count, n.eco_id,
               CASE n.depth - 1 WHEN 0 THEN n.pos WHEN 1 THEN p1.pos WHEN 2 THEN p2.pos WHEN 3 THEN p3.pos END AS a1,
               CASE n.depth - 1 WHEN 0 THEN n.count WHEN 1 THEN p1.count WHEN 2 THEN p2.count WHEN 3 THEN p3.count END AS c1,
               CASE n.depth - 2 WHEN 0 THEN n.pos WHEN 1 THEN p1.pos WHEN 2 THEN p2.pos END AS a2,
               CASE n.depth - 2 WHEN 0 THEN n.count WHEN 1 THEN p1.count WHEN 2 THEN p2.count END AS c2,
               CASE n.depth - 3 WHEN 0 THEN n.pos WHEN 1 THEN p1.pos END AS a3,
               CASE n.depth - 3 WHEN 0 THEN n.count WHEN 1 THEN p1.count END AS c3,
               CASE n.depth WHEN 4 THEN n.pos END AS a4,
               CASE n.depth WHEN 4 THEN n.count END AS c4
        FROM et_kept n
        LEFT JOIN et_kept p1 ON p1.run_id = n.run_id AND p1.pos = n.parent_pos
        LEFT JOIN et_kept p2 ON p2.run_id = p1.run_id AND p2.pos = p1.parent_pos
        LEFT JOIN et_kept p3 ON p3.run_id = p2.run_id AND p3.pos = p2.parent_pos)
    WHERE sort_by::VARCHAR = 'count'
),
-- each node with the names of its triple, and where each dimension
-- stands in the order (pe, pc, po: 1, 2 or 3)
et_named AS (
    SELECT n.run_id, n.pos::BIGINT AS pos, n.depth::BIGINT AS depth, n.count::BIGINT AS count, n.eco_id,
           coalesce(t.class, '(none)') AS class, coalesce(t.event, '(none)') AS event,
           coalesce(c.kind, '(none)') AS context_kind, coalesce(c.name, '(none)') AS context, t.context_id,
           coalesce(o.kind, '(none)') AS object_kind, coalesce(o.name, '(none)') AS object, t.object_id,
           strpos(p.ord, 'e') AS pe, strpos(p.ord, 'c') AS pc, strpos(p.ord, 'o') AS po
    FROM et_placed n
    CROSS JOIN params p
    JOIN eco_triples t ON t.run_id = n.run_id AND t.eco_id = n.eco_id
    LEFT JOIN objects c ON c.run_id = t.run_id AND c.object_id = t.context_id
    LEFT JOIN objects o ON o.run_id = t.run_id AND o.object_id = t.object_id
),
-- the coordinates the node fixes (as eco_tree_reference's nodes), the
-- run's name at the root; the runs without nodes from eco_tree_reference
et_fixed AS (
    SELECT n.run_id, n.pos, n.depth, n.count,
           CASE WHEN n.depth = 4 THEN n.eco_id END AS eco_id,
           CASE WHEN n.depth > n.pe OR (n.pe = 1 AND n.depth >= 1) THEN n.class END AS class,
           CASE WHEN n.depth > n.pe THEN n.event END AS event,
           CASE WHEN n.depth > n.pc OR (n.pc = 1 AND n.depth >= 1) THEN n.context_kind END AS context_kind,
           CASE WHEN n.depth > n.pc THEN n.context END AS context,
           CASE WHEN n.depth > n.pc THEN n.context_id END AS context_id,
           CASE WHEN n.depth > n.po OR (n.po = 1 AND n.depth >= 1) THEN n.object_kind END AS object_kind,
           CASE WHEN n.depth > n.po THEN n.object END AS object,
           CASE WHEN n.depth > n.po THEN n.object_id END AS object_id,
           CASE WHEN n.depth = 0 THEN r.name END AS run_name
    FROM et_named n
    LEFT JOIN runs r ON r.run_id = n.run_id
    UNION ALL
    SELECT t.run_id, t.pos, t.depth, t.count, t.eco_id,
           t.class, t.event, t.context_kind, t.context, t.context_id, t.object_kind, t.object, t.object_id,
           CASE WHEN t.depth = 0 THEN t.label END
    FROM eco_tree_reference(ord, sort_by := sort_by, t_from := t_from, t_to := t_to, relative := relative, unstored := true) t
),
-- sorted, then the labels of the path (as eco_tree_reference's keyed):
-- the strings made from the coordinates after the sort, which carries
-- fewer of them (a projection keeps the order; so do pe, pc and po, the
-- order's constants, made again after it); DuckDB sorts a payload with
-- a LIST column (the path) several times slower (0.28 s of 0.46 on a
-- 1M-event QNX run)
et_keyed AS (
    SELECT *,
           CASE WHEN depth >= 1 THEN CASE 1 WHEN pe THEN class WHEN pc THEN context_kind ELSE object_kind END END AS l1,
           CASE WHEN depth >= 2 THEN CASE 1 WHEN pe THEN class || ':' || event WHEN pc THEN context ELSE object END END AS l2,
           CASE WHEN depth >= 3 THEN CASE 2 WHEN pe THEN class || ':' || event WHEN pc THEN context ELSE object END END AS l3,
           CASE WHEN depth >= 4 THEN CASE 3 WHEN pe THEN class || ':' || event WHEN pc THEN context ELSE object END END AS l4
    FROM (SELECT *, strpos(ord::VARCHAR, 'e') AS pe, strpos(ord::VARCHAR, 'c') AS pc, strpos(ord::VARCHAR, 'o') AS po
          FROM (SELECT * FROM et_fixed ORDER BY run_id, pos))
)
SELECT run_id, pos, depth,
       CASE depth WHEN 0 THEN 'run'
                  WHEN 1 THEN CASE 1 WHEN pe THEN 'class' WHEN pc THEN 'context.kind' ELSE 'object.kind' END
                  ELSE CASE depth - 1 WHEN pe THEN 'event' WHEN pc THEN 'context' ELSE 'object' END
       END AS level,
       CASE depth WHEN 0 THEN run_name WHEN 1 THEN l1 WHEN 2 THEN l2 WHEN 3 THEN l3 ELSE l4 END AS label,
       count,
       eco_id,
       [l1, l2, l3, l4][1:depth] AS path,
       class, event, context_kind, context, object_kind, object, context_id, object_id
FROM et_keyed;

-- eco_tree_window: (eco_tree_window(ord, t1, t2, sort_by := 'name',
-- relative := false)) the
-- event statistics tree of the events in the time window [t1, t2) (ns on
-- the trace's time base): eco_tree(ord, t_from := t1, t_to := t2), same
-- columns. Nodes with no event in the window are left out.
-- Example: SELECT repeat('  ', depth) || label, count FROM
-- eco_tree_window('eco', 0, 10000000) WHERE run_id = 1 ORDER BY pos;
CREATE OR REPLACE MACRO eco_tree_window(ord, t1, t2, sort_by := 'name', relative := false) AS TABLE
SELECT * FROM eco_tree(ord, sort_by := sort_by, t_from := t1, t_to := t2, relative := relative);
