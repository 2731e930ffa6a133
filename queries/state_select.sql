-- Selection on the state statistics tree (Baget tracer, seed 4.5 and 6.4,
-- as eco_selection does for the event tree): include and exclude marks
-- on nodes of state_stats_tree choose rows of state_stats. A mark is one
-- or more terms joined by '&':
--   kind=cpu        the objects of a kind (a group)
--   object=Core_0   an object
--   state=idle      a state, at every level it has; with level=N at one
--   all             every row
-- Values are exact, or glob patterns when they hold *, ? or [ (glob_regex,
-- in time linear in the name). Precedence as in eco_selection: of the
-- marks whose terms all match a row, the most specific decides (16 x
-- nodes fixed: an object, a state; + 4 x groups fixed: a kind; + exact
-- terms, level= counting as one), so a child's mark overrides its
-- parent's: state=busy&object=Core_0 beats object=Core_0, which beats
-- kind=cpu; equally specific marks that disagree: exclude wins. A row no
-- mark matches is selected when no include is given, not otherwise.

-- state_marks: (state_marks(includes, excludes)) the marks parsed and
-- checked, one row per term (what state_stats_selected matches against);
-- a malformed mark is an error that quotes it. Columns: mark_no, incl,
-- mark, specificity, term (all, kind, object, state, level), value, exact.
-- Example: SELECT * FROM state_marks(['kind=cpu&state=busy'], ['object=Core_1']);
CREATE OR REPLACE MACRO state_marks(includes, excludes) AS TABLE
WITH marks AS (
    SELECT row_number() OVER (ORDER BY incl DESC, i) AS mark_no, incl, mark
    FROM (SELECT true AS incl, generate_subscripts(includes::VARCHAR[], 1) AS i, unnest(includes::VARCHAR[]) AS mark
          UNION ALL
          SELECT false, generate_subscripts(excludes::VARCHAR[], 1), unnest(excludes::VARCHAR[]))
),
split AS (
    SELECT mark_no, incl, mark, trim(t) AS raw,
           trim(CASE WHEN strpos(t, '=') > 0 THEN left(t, strpos(t, '=') - 1) ELSE t END) AS term,
           CASE WHEN strpos(t, '=') > 0 THEN trim(substr(t, strpos(t, '=') + 1)) END AS value
    FROM (SELECT mark_no, incl, mark, unnest(string_split(mark, '&')) AS t FROM marks)
),
terms AS (
    SELECT mark_no, incl, mark, term, value,
           CASE WHEN mark IS NULL OR trim(mark) = '' THEN error('mark ' || coalesce('"' || mark || '"', 'NULL') || ': empty')
                WHEN raw = '' THEN error('mark "' || mark || '": empty term')
                WHEN term = 'all' AND value IS NOT NULL THEN error('mark "' || mark || '": all takes no value, found "' || raw || '"')
                WHEN term NOT IN ('all', 'kind', 'object', 'state', 'level')
                    THEN error('mark "' || mark || '": expected all, kind=, object=, state= or level=, found "' || raw || '"')
                WHEN term <> 'all' AND coalesce(value, '') = '' THEN error('mark "' || mark || '": "' || raw || '" has no value')
                WHEN term = 'level' AND TRY_CAST(value AS INTEGER) IS NULL THEN error('mark "' || mark || '": level= takes a level number, found "' || value || '"')
                ELSE term END AS checked,
           term = 'level' OR NOT regexp_matches(coalesce(value, ''), '[*?\[]') AS exact
    FROM split
),
counted AS (
    SELECT *,
           count(*) OVER w AS n_terms,
           count(*) FILTER (WHERE term = 'all') OVER w AS n_all,
           count(*) FILTER (WHERE term IN ('object', 'state')) OVER w AS n_node,
           count(*) FILTER (WHERE term = 'kind') OVER w AS n_group,
           count(*) FILTER (WHERE exact AND term <> 'all') OVER w AS n_exact,
           count(*) OVER (PARTITION BY mark_no, term) AS n_same
    FROM terms
    WINDOW w AS (PARTITION BY mark_no)
)
SELECT mark_no, incl, mark,
       CASE WHEN n_all > 0 AND n_terms > 1 THEN error('mark "' || mark || '": all goes alone')
            WHEN n_same > 1 THEN error('mark "' || mark || '": two ' || term || '= terms')
            WHEN checked IS NULL THEN NULL
            ELSE 16 * n_node + 4 * n_group + n_exact END AS specificity,
       term, value, exact
FROM counted
ORDER BY mark_no, term;

-- state_stats_selected: (state_stats_selected(includes, excludes, run :=
-- NULL, t_from := NULL, t_to := NULL, relative := false)) the rows of
-- state_stats (same columns; in a window as state_stats_window) that the
-- marks select,
-- with decided_by (the deciding mark as '+mark' or '-mark'; NULL when no
-- mark matched and the default applied). includes and excludes are lists
-- of marks (VARCHAR[]; [] for none).
-- Example, every CPU's states but Core_1's idle:
--   SELECT object, level, state, total_ns FROM
--   state_stats_selected(['kind=cpu'], ['object=Core_1&state=idle'], run := 1);
CREATE OR REPLACE MACRO state_stats_selected(includes, excludes, run := NULL, t_from := NULL, t_to := NULL, relative := false) AS TABLE
WITH terms AS MATERIALIZED (
    SELECT *, CASE WHEN NOT exact THEN glob_regex(value) END AS re FROM state_marks(includes, excludes)
),
rows AS MATERIALIZED (
    SELECT * FROM state_stats_of(run := run, t_from := t_from, t_to := t_to, relative := relative)
),
matched AS (
    SELECT r.run_id, r.object_id, r.level, r.state, m.mark_no
    FROM rows r CROSS JOIN terms m
    GROUP BY r.run_id, r.object_id, r.level, r.state, m.mark_no
    HAVING bool_and(CASE m.term
        WHEN 'all' THEN true
        WHEN 'kind' THEN CASE WHEN m.exact THEN r.kind = m.value ELSE regexp_full_match(r.kind, m.re) END
        WHEN 'object' THEN CASE WHEN m.exact THEN r.object = m.value ELSE regexp_full_match(r.object, m.re) END
        WHEN 'state' THEN CASE WHEN m.exact THEN r.state = m.value ELSE regexp_full_match(r.state, m.re) END
        WHEN 'level' THEN r.level = TRY_CAST(m.value AS INTEGER)
    END)
),
decided AS (
    SELECT d.run_id, d.object_id, d.level, d.state, k.incl, k.mark
    FROM matched d JOIN (SELECT DISTINCT mark_no, incl, mark, specificity FROM terms) k USING (mark_no)
    QUALIFY row_number() OVER (PARTITION BY d.run_id, d.object_id, d.level, d.state ORDER BY k.specificity DESC, k.incl, k.mark_no) = 1
)
SELECT r.*,
       CASE WHEN d.incl THEN '+' || d.mark WHEN NOT d.incl THEN '-' || d.mark END AS decided_by
FROM rows r
LEFT JOIN decided d ON d.run_id = r.run_id AND d.object_id = r.object_id AND d.level = r.level AND d.state = r.state
WHERE coalesce(d.incl, NOT EXISTS (SELECT 1 FROM terms WHERE incl));
