-- Selection by markers (Baget tracer, seed 4.5): nodes of the event
-- statistics tree are marked "include" or "exclude", in any of its six
-- hierarchies; the marks are resolved to a set of eco-triples first, then
-- the events are selected through their eco_id.
--
-- A mark is one or more terms joined by '&', each naming a node's
-- coordinate as eco_tree's level and label do:
--   class=T              event group (class)
--   event=T:start        event 'start' of class T; event=start: in any class
--   context.kind=cpu     context kind        context=Core_1   context
--   object.kind=task     main object kind    object=T_1MS_0   main object
--   eco=5                one triple by its eco_id (eco_ids are per run: in
--                        every run unless the query keeps one run_id)
--   all                  the root: every triple
-- Values are exact, or glob patterns when they hold *, ? or [ (matched through
-- glob_regex, in time linear in the name: object=T_1MS_*); a name holding '&'
-- is matched with ? in its place. A missing class, event, context or object is
-- named (none) (a Chrome event without cat: class=(none), event=(none):name). Terms of
-- one mark must name different dimensions (event: class or event;
-- context: context.kind or context; object: object.kind or object; eco
-- covers all three): 'event=T:start&context=Core_1' is the (event,
-- context) node of hierarchy eco, 'object.kind=task&context.kind=cpu' a
-- node no single hierarchy shows, which is allowed.
--
-- Precedence. Of the marks whose terms all match a triple, the most
-- specific decides (a child's mark overrides its parent's, in every
-- hierarchy alike). Specificity compares, in this order: the number of
-- dimensions fixed to one event, context or object (eco counts 3), then
-- the number fixed to a group (class or kind), then the number of exact
-- terms (not a pattern; an event with its class: event=start, in any
-- class, is not exact). So all < group < single node < pair < triple,
-- object=T_1MS_0 beats object=T_1MS_*, and event=R:start beats
-- event=start. No dimension outranks another: of
-- equally specific marks that disagree, exclude wins, so
-- include event=T:start, exclude context=Core_1 keeps the T:start events
-- everywhere but on Core_1. A triple no mark matches is selected when
-- there is no include mark at all (only excludes: everything else), not
-- selected otherwise; mark 'all' sets that default explicitly
-- (include all, exclude class=T, include event=T:start).

-- eco_marks: (eco_marks(includes, excludes)) the marks parsed and
-- checked, one row per term: what eco_selection matches the eco-triples
-- against. includes and excludes are lists of marks (VARCHAR[]; [] for
-- none); a malformed mark is an error that quotes it.
-- Columns: mark_no (marks numbered in the order given, includes first),
-- incl (include or exclude), mark (as given), specificity (16 x nodes
-- fixed + 4 x groups fixed + exact terms; the larger decides), level (all,
-- class, event, context.kind, context, object.kind, object, eco), value
-- (NULL for all), exact (false for a glob pattern and an event without
-- its class).
-- Example: SELECT * FROM eco_marks(['event=T:start&context=Core_*'], ['all']);
CREATE OR REPLACE MACRO eco_marks(includes, excludes) AS TABLE
WITH
-- one row per mark, numbered in the order given (includes first)
marks AS (
    SELECT row_number() OVER (ORDER BY incl DESC, i) AS mark_no, incl, mark
    FROM (SELECT true AS incl, generate_subscripts(includes::VARCHAR[], 1) AS i,
                 unnest(includes::VARCHAR[]) AS mark
          UNION ALL
          SELECT false, generate_subscripts(excludes::VARCHAR[], 1), unnest(excludes::VARCHAR[]))
),
-- one row per term: its level and value
split AS (
    SELECT mark_no, incl, mark, trim(term) AS term,
           trim(CASE WHEN strpos(term, '=') > 0 THEN left(term, strpos(term, '=') - 1) ELSE term END) AS level,
           CASE WHEN strpos(term, '=') > 0 THEN trim(substr(term, strpos(term, '=') + 1)) END AS value
    FROM (SELECT mark_no, incl, mark, unnest(string_split(mark, '&')) AS term FROM marks)
),
-- the terms checked, with the dimension each fixes (e, c, o; eco all
-- three; '' for all), whether it names a group, and whether it is exact:
-- no pattern, and an event with its class (event=start, in any class, is
-- not one node)
terms AS (
    SELECT mark_no, incl, mark, level, value,
           CASE WHEN mark IS NULL OR trim(mark) = '' THEN error('mark ' || coalesce('"' || mark || '"', 'NULL') || ': empty')
                WHEN term = '' THEN error('mark "' || mark || '": empty term')
                WHEN level = 'all' AND value IS NOT NULL THEN error('mark "' || mark || '": all takes no value, found "' || term || '"')
                WHEN level NOT IN ('all', 'class', 'event', 'context.kind', 'context', 'object.kind', 'object', 'eco')
                    THEN error('mark "' || mark || '": expected all, class=, event=, context.kind=, context=, object.kind=, object= or eco=, found "' || term || '"')
                WHEN level <> 'all' AND coalesce(value, '') = '' THEN error('mark "' || mark || '": "' || term || '" has no value')
                WHEN level = 'eco' AND TRY_CAST(value AS INTEGER) IS NULL THEN error('mark "' || mark || '": eco= takes an eco_id, found "' || value || '"')
                ELSE CASE level WHEN 'all' THEN '' WHEN 'eco' THEN 'eco'
                                WHEN 'class' THEN 'e' WHEN 'event' THEN 'e'
                                WHEN 'context.kind' THEN 'c' WHEN 'context' THEN 'c'
                                ELSE 'o' END
           END AS dims,
           level IN ('class', 'context.kind', 'object.kind') AS is_group,
           level = 'eco' OR (NOT regexp_matches(coalesce(value, ''), '[*?\[]')
                             AND (level <> 'event' OR strpos(value, ':') > 0)) AS exact
    FROM split
),
-- per mark: how many terms fix each dimension, nodes, groups, exact values
counted AS (
    SELECT *,
           count(*) OVER w AS n_terms,
           count(*) FILTER (WHERE dims = 'e') OVER w AS n_e,
           count(*) FILTER (WHERE dims = 'c') OVER w AS n_c,
           count(*) FILTER (WHERE dims = 'o') OVER w AS n_o,
           count(*) FILTER (WHERE dims = 'eco') OVER w AS n_eco,
           count(*) FILTER (WHERE level = 'all') OVER w AS n_all,
           count(*) FILTER (WHERE dims IN ('e', 'c', 'o') AND NOT is_group) OVER w AS n_node,
           count(*) FILTER (WHERE is_group) OVER w AS n_group,
           count(*) FILTER (WHERE exact AND dims IN ('e', 'c', 'o')) OVER w AS n_exact
    FROM terms
    WINDOW w AS (PARTITION BY mark_no)
)
SELECT mark_no, incl, mark,
       CASE WHEN n_all > 0 AND n_terms > 1 THEN error('mark "' || mark || '": all goes alone')
            WHEN (n_eco > 0 AND n_terms > 1) OR n_e > 1 OR n_c > 1 OR n_o > 1
                THEN error('mark "' || mark || '": two terms on one dimension (event: class, event; context: context.kind, context; object: object.kind, object; eco: all three)')
            ELSE 16 * (n_node + 3 * n_eco) + 4 * n_group + n_exact + 3 * n_eco
       END AS specificity,
       level, value, exact
FROM counted
ORDER BY mark_no, level;

-- eco_selection: (eco_selection(includes, excludes)) every eco-triple of
-- every run, with whether the marks select it and which mark decided.
-- includes and excludes are lists of marks as in eco_marks.
-- Columns: run_id, eco_id, selected (BOOLEAN), decided_by (the deciding
-- mark as '+mark' or '-mark'; NULL when no mark matched and the default
-- applied), count (the triple's events), class, event, context_kind,
-- context, object_kind, object (names; '(none)' where missing, the class
-- and the event too).
-- Example, what the marks select in run 1 and why:
--   SELECT * FROM eco_selection(['event=T:start'], ['context=Core_1'])
--   WHERE run_id = 1 ORDER BY eco_id;
-- Marks kept in a table work as lists too:
--   SELECT * FROM eco_selection((SELECT list(mark) FROM my_marks WHERE incl),
--                               (SELECT list(mark) FROM my_marks WHERE NOT incl));
CREATE OR REPLACE MACRO eco_selection(includes, excludes) AS TABLE
WITH
-- a pattern's regular expression, made once per term (glob_regex: GLOB
-- itself backtracks, exponentially in the stars)
terms AS (SELECT *, CASE WHEN NOT exact THEN glob_regex(value) END AS re FROM eco_marks(includes, excludes)),
triples AS (
    SELECT t.run_id, t.eco_id, t.count, coalesce(t.class, '(none)') AS class, coalesce(t.event, '(none)') AS event,
           coalesce(c.kind, '(none)') AS context_kind, coalesce(c.name, '(none)') AS context,
           coalesce(o.kind, '(none)') AS object_kind, coalesce(o.name, '(none)') AS object
    FROM eco_triples t
    LEFT JOIN objects c ON c.run_id = t.run_id AND c.object_id = t.context_id
    LEFT JOIN objects o ON o.run_id = t.run_id AND o.object_id = t.object_id
),
-- every (triple, mark) whose terms all match
matched AS (
    SELECT x.run_id, x.eco_id, m.mark_no
    FROM triples x
    CROSS JOIN terms m
    GROUP BY x.run_id, x.eco_id, m.mark_no
    HAVING bool_and(CASE m.level
        WHEN 'all' THEN true
        WHEN 'eco' THEN x.eco_id = TRY_CAST(m.value AS INTEGER)
        WHEN 'class' THEN CASE WHEN m.exact THEN x.class = m.value ELSE regexp_full_match(x.class, m.re) END
        WHEN 'event' THEN CASE WHEN m.exact THEN x.class || ':' || x.event = m.value OR x.event = m.value
                               ELSE regexp_full_match(x.class || ':' || x.event, m.re) OR regexp_full_match(x.event, m.re) END
        WHEN 'context.kind' THEN CASE WHEN m.exact THEN x.context_kind = m.value ELSE regexp_full_match(x.context_kind, m.re) END
        WHEN 'context' THEN CASE WHEN m.exact THEN x.context = m.value ELSE regexp_full_match(x.context, m.re) END
        WHEN 'object.kind' THEN CASE WHEN m.exact THEN x.object_kind = m.value ELSE regexp_full_match(x.object_kind, m.re) END
        WHEN 'object' THEN CASE WHEN m.exact THEN x.object = m.value ELSE regexp_full_match(x.object, m.re) END
    END)
),
-- per triple the deciding mark: most specific, exclude before include on
-- a tie, then the first given
decided AS (
    SELECT d.run_id, d.eco_id, r.incl, r.mark
    FROM matched d JOIN (SELECT DISTINCT mark_no, incl, mark, specificity FROM terms) r USING (mark_no)
    QUALIFY row_number() OVER (PARTITION BY d.run_id, d.eco_id ORDER BY r.specificity DESC, r.incl, r.mark_no) = 1
)
SELECT x.run_id, x.eco_id,
       coalesce(d.incl, NOT EXISTS (SELECT 1 FROM terms WHERE incl)) AS selected,
       CASE WHEN d.incl THEN '+' || d.mark WHEN NOT d.incl THEN '-' || d.mark END AS decided_by,
       x.count, x.class, x.event, x.context_kind, x.context, x.object_kind, x.object
FROM triples x
LEFT JOIN decided d ON d.run_id = x.run_id AND d.eco_id = x.eco_id
ORDER BY x.run_id, x.eco_id;

-- selected_events: (selected_events(includes, excludes)) the events whose
-- eco-triple eco_selection(includes, excludes) selects, with names
-- resolved: the triples are chosen first, then one scan of events keeps
-- those with a chosen eco_id. Unordered (sorting every selected event
-- before a LIMIT made a 10M-event run three times slower): add ORDER BY
-- run_id, seq for trace order; a WHERE on run_id or ts prunes the scan.
-- Columns: run_id, seq, ts, cpu, class, event, context (name), object
-- (name), value, args, eco_id, src_line (as in events; '(none)' where the
-- event has no context or object).
-- Example, the T:start events of run 1 except those on Core_1, first 10 after 1 ms:
--   SELECT * FROM selected_events(['event=T:start'], ['context=Core_1'])
--   WHERE run_id = 1 AND ts >= 1000000 ORDER BY run_id, seq LIMIT 10;
CREATE OR REPLACE MACRO selected_events(includes, excludes) AS TABLE
SELECT e.run_id, e.seq, e.ts, e.cpu, e.class, e.event, s.context, s.object,
       e.value, e.args, e.eco_id, e.src_line
FROM events e
JOIN (SELECT * FROM eco_selection(includes, excludes) WHERE selected) s
  ON s.run_id = e.run_id AND s.eco_id = e.eco_id;
