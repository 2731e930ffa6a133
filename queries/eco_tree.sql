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
-- the order (pe, pc, po: 1, 2 or 3)
triples AS (
    SELECT t.run_id, t.eco_id, CASE WHEN p.windowed THEN w.count ELSE t.count END AS count, coalesce(t.class, '(none)') AS class, coalesce(t.event, '(none)') AS event,
           coalesce(c.kind, '(none)') AS context_kind, coalesce(c.name, '(none)') AS context, t.context_id,
           coalesce(o.kind, '(none)') AS object_kind, coalesce(o.name, '(none)') AS object, t.object_id,
           strpos(p.ord, 'e') AS pe, strpos(p.ord, 'c') AS pc, strpos(p.ord, 'o') AS po
    FROM eco_triples t
    CROSS JOIN params p
    LEFT JOIN in_window w ON w.run_id = t.run_id AND w.eco_id = t.eco_id
    LEFT JOIN objects c ON c.run_id = t.run_id AND c.object_id = t.context_id
    LEFT JOIN objects o ON o.run_id = t.run_id AND o.object_id = t.object_id
    WHERE NOT p.windowed OR w.count IS NOT NULL
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
-- the node's path: per level its label and the id that tells equal
-- labels apart (-1 where the label alone identifies the node)
keyed AS (
    SELECT *,
           [CASE 1 WHEN pe THEN {'l': class, 'i': -1}
                   WHEN pc THEN {'l': context_kind, 'i': -1}
                   ELSE {'l': object_kind, 'i': -1} END,
            CASE 1 WHEN pe THEN {'l': class || ':' || event, 'i': -1}
                   WHEN pc THEN {'l': context, 'i': context_id}
                   ELSE {'l': object, 'i': object_id} END,
            CASE 2 WHEN pe THEN {'l': class || ':' || event, 'i': -1}
                   WHEN pc THEN {'l': context, 'i': context_id}
                   ELSE {'l': object, 'i': object_id} END,
            CASE 3 WHEN pe THEN {'l': class || ':' || event, 'i': -1}
                   WHEN pc THEN {'l': context, 'i': context_id}
                   ELSE {'l': object, 'i': object_id} END
           ][1:depth] AS key
    FROM grouped
),
-- the counts of the node's ancestors at depths 1..3, to sort by count
counted AS (
    SELECT *,
           max(count) FILTER (WHERE depth = 1) OVER (PARTITION BY run_id, key[1:1]) AS c1,
           max(count) FILTER (WHERE depth = 2) OVER (PARTITION BY run_id, key[1:2]) AS c2,
           max(count) FILTER (WHERE depth = 3) OVER (PARTITION BY run_id, key[1:3]) AS c3
    FROM keyed
)
-- Depth-first order is the order of the paths as lists: a list sorts
-- right after its prefix, before the prefix's next sibling.
SELECT n.run_id,
       row_number() OVER (PARTITION BY n.run_id ORDER BY
           CASE WHEN p.sort_by = 'count'
                THEN list_transform(list_zip(n.key, [n.c1, n.c2, n.c3, n.count][1:n.depth]),
                                    x -> {'c': -x[2], 'l': x[1].l, 'i': x[1].i})
                ELSE list_transform(n.key, x -> {'c': 0, 'l': x.l, 'i': x.i}) END) AS pos,
       n.depth,
       CASE n.depth WHEN 0 THEN 'run'
                    WHEN 1 THEN CASE 1 WHEN n.pe THEN 'class' WHEN n.pc THEN 'context.kind' ELSE 'object.kind' END
                    ELSE CASE n.depth - 1 WHEN n.pe THEN 'event' WHEN n.pc THEN 'context' ELSE 'object' END
       END AS level,
       CASE WHEN n.depth = 0 THEN r.name ELSE n.key[n.depth].l END AS label,
       n.count,
       n.eco_id,
       list_transform(n.key, x -> x.l) AS path,
       n.class, n.event, n.context_kind, n.context, n.object_kind, n.object, n.context_id, n.object_id
FROM counted n
CROSS JOIN params p
LEFT JOIN runs r ON r.run_id = n.run_id
ORDER BY n.run_id, pos;

-- eco_tree_window: (eco_tree_window(ord, t1, t2, sort_by := 'name',
-- relative := false)) the
-- event statistics tree of the events in the time window [t1, t2) (ns on
-- the trace's time base): eco_tree(ord, t_from := t1, t_to := t2), same
-- columns. Nodes with no event in the window are left out.
-- Example: SELECT repeat('  ', depth) || label, count FROM
-- eco_tree_window('eco', 0, 10000000) WHERE run_id = 1 ORDER BY pos;
CREATE OR REPLACE MACRO eco_tree_window(ord, t1, t2, sort_by := 'name', relative := false) AS TABLE
SELECT * FROM eco_tree(ord, sort_by := sort_by, t_from := t1, t_to := t2, relative := relative);
