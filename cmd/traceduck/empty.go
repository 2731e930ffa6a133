package main

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/traceduck/traceduck/queries"
)

// An answer with no row is still exit 0 (an empty answer is an answer),
// but a filter that matches nothing is most often a typo or a wrong
// guess about the trace: the commands then say on standard error what
// exists nearby, in one line: "traceduck: note: ...".

// countingWriter counts the rows a resultWriter wrote.
type countingWriter struct {
	resultWriter
	rows int64
}

func (c *countingWriter) row(vals []any) error {
	c.rows++
	return c.resultWriter.row(vals)
}

// noteEmpty prints the note on the command's standard error.
func noteEmpty(ctx context.Context, format string, args ...any) {
	if w, ok := ctx.Value(stderrKey{}).(io.Writer); ok {
		writeMessage(w, "note: "+fmt.Sprintf(format, args...))
	}
}

// selection is what a command's flags selected, for the note of an
// empty answer.
type selection struct {
	run                 int32 // 0: every run
	kind, object, state string
	level               int // of state; levelAll: every level
	levelAll            bool
	window              *windowFlags
	noRelative          bool // the command has no --relative (export --chrome)
}

// runWhere is the condition on run_id of the selection ("true" for
// every run).
func (s selection) runWhere(col string) string {
	if s.run == 0 {
		return "true"
	}
	return fmt.Sprintf("%s = %d", col, s.run)
}

func (s selection) runName() string {
	if s.run == 0 {
		return "any run"
	}
	return fmt.Sprintf("run %d", s.run)
}

// resolveKind returns the object kind the database spells as kind, case
// ignored (a TLV run's kinds are Task, Semaphore: --kind task finds
// them); kind itself when none or several match.
func resolveKind(ctx context.Context, conn *sql.Conn, run int32, kind string) (string, error) {
	if kind == "" {
		return "", nil
	}
	s := selection{run: run}
	kinds, err := queryStrings(ctx, conn, "SELECT DISTINCT kind FROM objects WHERE "+s.runWhere("run_id")+" AND lower(kind) = lower("+queries.Literal(kind)+") ORDER BY kind")
	if err != nil || len(kinds) != 1 {
		return kind, err
	}
	return kinds[0], nil
}

// queryStrings reads the first column of a query's rows.
func queryStrings(ctx context.Context, conn *sql.Conn, q string) ([]string, error) {
	rows, err := conn.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s sql.NullString
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		if s.Valid {
			out = append(out, s.String)
		}
	}
	return out, rows.Err()
}

// listNote names at most ten of names for a note.
func listNote(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	var out []string
	for i, n := range names {
		if i == 10 {
			out = append(out, fmt.Sprintf("... %d more", len(names)-10))
			break
		}
		out = append(out, cellText(n))
	}
	return strings.Join(out, ", ")
}

// explainEmptyStates finds why a state selection matched nothing: a kind,
// an object or a state the run does not have (or has at another level),
// or a window outside the run. It prints the first reason found, or a
// plain note.
func explainEmptyStates(ctx context.Context, conn *sql.Conn, s selection) error {
	if s.kind != "" {
		kinds, err := queryStrings(ctx, conn, "SELECT DISTINCT kind FROM objects WHERE "+s.runWhere("run_id")+" ORDER BY kind")
		if err != nil {
			return err
		}
		if !slices.Contains(kinds, s.kind) {
			noteEmpty(ctx, "no object of kind %s in %s (its kinds: %s)", cellText(s.kind), s.runName(), listNote(kinds))
			return nil
		}
	}
	kindWhere := "true"
	if s.kind != "" {
		kindWhere = "kind = " + queries.Literal(s.kind)
	}
	if s.object != "" {
		names, err := queryStrings(ctx, conn, "SELECT DISTINCT name FROM objects WHERE "+s.runWhere("run_id")+" AND "+kindWhere+" ORDER BY name LIMIT 100000")
		if err != nil {
			return err
		}
		if !slices.Contains(names, s.object) {
			what := "object"
			if s.kind != "" {
				what = s.kind
			}
			noteEmpty(ctx, "no %s named %s in %s%s", cellText(what), cellText(s.object), s.runName(), closestNote(s.object, names))
			return nil
		}
	}
	if s.state != "" {
		objWhere := ""
		if s.object != "" {
			objWhere = " AND o.name = " + queries.Literal(s.object)
		}
		// the states of the selected objects at every level: the atomic
		// ones, and those state_levels maps them to
		levels, err := conn.QueryContext(ctx, `WITH atoms AS (
				SELECT DISTINCT s.run_id, o.kind, s.state FROM state_intervals s JOIN objects o USING (run_id, object_id)
				WHERE `+s.runWhere("s.run_id")+` AND `+strings.ReplaceAll(kindWhere, "kind", "o.kind")+objWhere+`)
			SELECT DISTINCT 0, state, kind FROM atoms
			UNION SELECT DISTINCT m.level, m.state, m.kind FROM state_level_map m
			JOIN atoms a ON a.run_id = m.run_id AND a.kind = m.kind AND a.state = m.atomic WHERE m.level > 0
			ORDER BY 1, 2 LIMIT 100000`)
		if err != nil {
			return err
		}
		var states []string
		atLevel := map[string]string{}
		for levels.Next() {
			var lvl int
			var st, kind string
			if err := levels.Scan(&lvl, &st, &kind); err != nil {
				levels.Close()
				return err
			}
			if _, seen := atLevel[st]; !seen {
				states = append(states, st)
				atLevel[st] = fmt.Sprintf("level %d of kind %s", lvl, kind)
			}
			if st == s.state && (s.levelAll || lvl == s.level) {
				atLevel[st] = "" // present where asked
			}
		}
		levels.Close()
		where, found := atLevel[s.state]
		switch {
		case !found:
			noteEmpty(ctx, "no state %s in %s%s", cellText(s.state), s.runName(), closestNote(s.state, states))
			return nil
		case where != "" && !s.levelAll:
			noteEmpty(ctx, "state %s is a state of %s, not of level %d: give --level %s", cellText(s.state), cellText(where), s.level, strings.Fields(where)[1])
			return nil
		}
	}
	if s.window != nil && s.window.set() {
		if ok, err := explainWindow(ctx, conn, s); ok || err != nil {
			return err
		}
	}
	noteEmpty(ctx, "nothing in %s matches the selection", s.runName())
	return nil
}

// explainWindow notes a window that lies outside the selected runs'
// events; it tells whether it did.
func explainWindow(ctx context.Context, conn *sql.Conn, s selection) (bool, error) {
	rows, err := conn.QueryContext(ctx, "SELECT run_id, first_ts, last_ts FROM runs WHERE "+s.runWhere("run_id")+" AND first_ts IS NOT NULL ORDER BY run_id")
	if err != nil {
		return false, err
	}
	defer rows.Close()
	type span struct {
		id          int32
		first, last int64
	}
	var spans []span
	for rows.Next() {
		var sp span
		if err := rows.Scan(&sp.id, &sp.first, &sp.last); err != nil {
			return false, err
		}
		spans = append(spans, sp)
	}
	if err := rows.Err(); err != nil || len(spans) == 0 {
		return false, err
	}
	w := s.window
	for _, sp := range spans {
		lo, hi := int64(-1<<62), int64(1<<62)
		origin := int64(0)
		if w.relative {
			origin = sp.first
		}
		if w.lo != nil {
			lo = *w.lo + origin
		}
		if w.hi != nil {
			hi = *w.hi + origin
		}
		if lo <= sp.last && hi > sp.first {
			return false, nil // this run overlaps the window
		}
	}
	sp := spans[0]
	hint := ""
	if !w.relative && !s.noRelative {
		hint = "; --relative counts --from and --to from each run's first event"
	}
	what := fmt.Sprintf("run %d's events lie in [%s, %s]", sp.id, fmtNS(sp.first), fmtNS(sp.last))
	if len(spans) > 1 {
		what = fmt.Sprintf("no selected run has events there (run %d's lie in [%s, %s])", sp.id, fmtNS(sp.first), fmtNS(sp.last))
	}
	noteEmpty(ctx, "the window [%s, %s) holds nothing: %s%s", cellText(cmp.Or(w.from, "start")), cellText(cmp.Or(w.to, "end")), what, hint)
	return true, nil
}

// fmtNS prints ns with the largest unit that keeps it readable.
func fmtNS(ns int64) string {
	switch a := max(ns, -ns); {
	case a >= 1e9:
		return fmt.Sprintf("%.6g s", float64(ns)/1e9)
	case a >= 1e6:
		return fmt.Sprintf("%.6g ms", float64(ns)/1e6)
	case a >= 1e3:
		return fmt.Sprintf("%.6g us", float64(ns)/1e3)
	}
	return fmt.Sprintf("%d ns", ns)
}

// ecoLabels is, per level a mark names, the SQL of the labels the event
// tree has at that level (as eco_tree and eco_marks name them).
var ecoLabels = map[string]string{
	"class":        "coalesce(t.class, '(none)')",
	"event":        "coalesce(t.class, '(none)') || ':' || coalesce(t.event, '(none)')",
	"context":      "coalesce(c.name, '(none)')",
	"context.kind": "coalesce(c.kind, '(none)')",
	"object":       "coalesce(o.name, '(none)')",
	"object.kind":  "coalesce(o.kind, '(none)')",
}

// explainEmptyEvents finds an --include mark whose exact value names
// nothing in the selected runs (a typo: event=T:strat) and notes the
// closest labels; else a window outside the runs; else a plain note.
func explainEmptyEvents(ctx context.Context, conn *sql.Conn, s selection, includes, excludes []string) error {
	rows, err := conn.QueryContext(ctx, fmt.Sprintf("SELECT DISTINCT level, value FROM eco_marks(%s, %s) WHERE incl AND exact ORDER BY ALL",
		queries.LiteralList(includes), queries.LiteralList(excludes)))
	if err != nil {
		return err
	}
	var terms [][2]string
	for rows.Next() {
		var level, value string
		if err := rows.Scan(&level, &value); err != nil {
			rows.Close()
			return err
		}
		terms = append(terms, [2]string{level, value})
	}
	rows.Close()
	for _, t := range terms {
		expr, ok := ecoLabels[t[0]]
		if !ok {
			continue
		}
		labels, err := queryStrings(ctx, conn, "SELECT DISTINCT "+expr+" AS l FROM eco_triples t "+
			"LEFT JOIN objects c ON c.run_id = t.run_id AND c.object_id = t.context_id "+
			"LEFT JOIN objects o ON o.run_id = t.run_id AND o.object_id = t.object_id WHERE "+s.runWhere("t.run_id")+" ORDER BY l LIMIT 100000")
		if err != nil {
			return err
		}
		if !slices.Contains(labels, t[1]) {
			noteEmpty(ctx, "no %s %s in %s%s", t[0], cellText(t[1]), s.runName(), closestNote(t[1], labels))
			return nil
		}
	}
	if s.window != nil && s.window.set() {
		if ok, err := explainWindow(ctx, conn, s); ok || err != nil {
			return err
		}
	}
	noteEmpty(ctx, "no event in %s matches the selection", s.runName())
	return nil
}
