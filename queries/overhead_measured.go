package queries

import (
	"context"
	"database/sql"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// MeasuredFile is a CSV of measured overheads (traceduck overhead
// --measured FILE): one line per session or run, "SESSION,PCT", PCT the
// share of one CPU in percent that tracing was measured to cost. An
// optional first line "session,measured_pct" is a header; '#' starts a
// comment line; blank lines are skipped.
type MeasuredFile struct {
	Path string
	Rows []MeasuredRow
}

// MeasuredRow is one line of a MeasuredFile.
type MeasuredRow struct {
	Line    int
	Session string // a spec session's or a run's name, or a run's number
	Pct     float64
}

// ParseMeasuredCSV reads a MeasuredFile. Errors read FILE:LINE: what was
// expected, what was found.
func ParseMeasuredCSV(path string, r io.Reader) (*MeasuredFile, error) {
	data, err := readAllBounded(path, r)
	if err != nil {
		return nil, err
	}
	cr := csv.NewReader(strings.NewReader(string(data)))
	cr.FieldsPerRecord = -1
	cr.Comment = '#'
	cr.TrimLeadingSpace = true
	mf := &MeasuredFile{Path: path}
	seen := map[string]int{}
	for first := true; ; first = false {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, fmt.Errorf("%s:%d: expected CSV fields (session,measured_pct), found %v", path, pe.Line, pe.Err)
			}
			return nil, err
		}
		line, _ := cr.FieldPos(0)
		at := func(format string, args ...any) error {
			return fmt.Errorf("%s:%d: %s", path, line, fmt.Sprintf(format, args...))
		}
		if len(rec) != 2 {
			return nil, at("expected 2 fields (session,measured_pct), found %d", len(rec))
		}
		name, pct := strings.TrimSpace(rec[0]), strings.TrimSpace(rec[1])
		if first && strings.EqualFold(name, "session") && strings.EqualFold(pct, "measured_pct") {
			continue
		}
		if name == "" {
			return nil, at("session: expected a session or run name or a run number, found an empty field")
		}
		v, err := parseNumber(strings.TrimSuffix(pct, "%"))
		if err != nil {
			return nil, at("measured_pct: expected a number >= 0 (percent of one CPU), found %q", pct)
		}
		if prev, dup := seen[name]; dup {
			return nil, at("expected a new session, found %q again (first on line %d)", name, prev)
		}
		seen[name] = line
		mf.Rows = append(mf.Rows, MeasuredRow{Line: line, Session: name, Pct: v})
	}
	if len(mf.Rows) == 0 {
		return nil, fmt.Errorf("%s: expected session,measured_pct lines, found none", path)
	}
	return mf, nil
}

// Load matches every row to a session or run that f selects, by name (a
// spec session's or a run's, as overhead prints it) or by run number, and
// stores the figures in overhead_measured (total_pct; sys and usr
// unknown; a run's by the sha256 of its trace), replacing what it held for
// those sessions and traces, in one transaction. A row matching nothing, a
// name of two runs, or two rows for runs of the same file, is an error.
func (m *MeasuredFile) Load(ctx context.Context, db *sql.DB, f OverheadFilter) error {
	type key struct {
		session string
		runID   sql.NullInt32
		sha256  sql.NullString
	}
	rows, err := db.QueryContext(ctx, "SELECT session, run_id, (SELECT max(ovr.sha256) FROM runs ovr WHERE ovr.run_id = o.run_id) "+
		"FROM overhead_share(1.0) o WHERE "+f.where()+" ORDER BY "+f.order())
	if err != nil {
		return err
	}
	var all []key
	for rows.Next() {
		var k key
		if err := rows.Scan(&k.session, &k.runID, &k.sha256); err != nil {
			rows.Close()
			return err
		}
		all = append(all, k)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	describe := func(k key) string {
		if k.runID.Valid {
			return fmt.Sprintf("run %d", k.runID.Int32)
		}
		return fmt.Sprintf("session %s", k.session)
	}
	matched := make([]key, len(m.Rows))
	firstLine := map[key]int{}
	type trace struct {
		run  int32
		line int
	}
	traces := map[string]trace{}
	for i, r := range m.Rows {
		at := func(format string, args ...any) error {
			return fmt.Errorf("%s:%d: %s", m.Path, r.Line, fmt.Sprintf(format, args...))
		}
		var hits []key
		if n, err := strconv.ParseInt(r.Session, 10, 32); err == nil {
			for _, k := range all {
				if k.runID.Valid && int64(k.runID.Int32) == n {
					hits = append(hits, k)
				}
			}
		}
		if len(hits) == 0 {
			for _, k := range all {
				if k.session == r.Session {
					hits = append(hits, k)
				}
			}
		}
		switch {
		case len(hits) == 0:
			var names []string
			for i, k := range all {
				if i == 10 {
					names = append(names, "...")
					break
				}
				names = append(names, k.session)
			}
			return at("expected a session or run of the prediction (%s), found %q", strings.Join(names, ", "), r.Session)
		case len(hits) > 1:
			var ids []string
			for _, k := range hits {
				ids = append(ids, describe(k))
			}
			return at("expected a name of one session or run, found %q naming %s: give the run number", r.Session, strings.Join(ids, " and "))
		}
		if prev, dup := firstLine[hits[0]]; dup {
			return at("expected a new session, found %s again (first on line %d)", describe(hits[0]), prev)
		}
		firstLine[hits[0]] = r.Line
		if k := hits[0]; k.runID.Valid {
			if !k.sha256.Valid {
				return at("expected a run with the sha256 of its trace, found run %d without one", k.runID.Int32)
			}
			if prev, dup := traces[k.sha256.String]; dup {
				return at("expected one measurement per traced file, found run %d, the same file as run %d (line %d)", k.runID.Int32, prev.run, prev.line)
			}
			traces[k.sha256.String] = trace{k.runID.Int32, r.Line}
		}
		matched[i] = hits[0]
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for i, r := range m.Rows {
		k := matched[i]
		var err error
		if k.runID.Valid {
			_, err = tx.ExecContext(ctx, "DELETE FROM overhead_measured WHERE run_sha256 = ?", k.sha256.String)
		} else {
			_, err = tx.ExecContext(ctx, "DELETE FROM overhead_measured WHERE run_sha256 IS NULL AND session = ?", k.session)
		}
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO overhead_measured VALUES (?, ?, NULL, NULL, ?, ?)",
			k.session, k.sha256, r.Pct, fmt.Sprintf("%s:%d", m.Path, r.Line)); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// OverheadCompareSQL is the query that prints a prediction at cpuHz
// beside the measured overhead (overhead_vs_measured): per session or run
// the predicted sys, usr and total with the total's band, the measured total, the error in
// percentage points and relative to the measurement, and whether the
// measurement lies in the band; then a row "total": expression (7) summed
// over the sessions that have a measurement (their load on one system, as
// if they ran at once), with the same columns. Percentages are rounded to
// 4 decimals as the paper prints them, relative errors to 2.
func OverheadCompareSQL(cpuHz float64, f OverheadFilter) string {
	hz := strconv.FormatFloat(cpuHz, 'g', -1, 64)
	runCol, runNull := "run_id, ", "CAST(NULL AS INTEGER) AS run_id, "
	if !f.AllRuns && f.RunID == 0 {
		runCol, runNull = "", ""
	}
	return `WITH v AS (SELECT * FROM overhead_vs_measured(CAST(` + hz + ` AS DOUBLE)) WHERE ` + f.where() + `),
t AS (SELECT sum(sys_pct) AS sys, sum(usr_pct) AS usr, sum(predicted_pct) AS p, sum(low_pct) AS lo, sum(high_pct) AS hi, sum(measured_pct) AS m, count(*) AS n
      FROM v WHERE measured_pct IS NOT NULL)
SELECT session, ` + runCol + `round(sys_pct, 4) AS sys_pct, round(usr_pct, 4) AS usr_pct, round(predicted_pct, 4) AS predicted_pct, round(low_pct, 4) AS low_pct,
       round(high_pct, 4) AS high_pct, round(measured_pct, 4) AS measured_pct, round(error_pct, 4) AS error_pct,
       round(rel_error_pct, 2) AS rel_error_pct, in_band
FROM (SELECT *, 0 AS total_row FROM v
      UNION ALL BY NAME
      SELECT 'total' AS session, ` + runNull + `sys AS sys_pct, usr AS usr_pct, p AS predicted_pct, lo AS low_pct, hi AS high_pct, m AS measured_pct,
             p - m AS error_pct, (p - m) / nullif(m, 0) * 100 AS rel_error_pct, m BETWEEN lo AND hi AS in_band,
             1 AS total_row
      FROM t WHERE n > 0)
ORDER BY total_row, ` + f.order()
}

// HasMeasured reports whether a session or run that f selects has a
// measured overhead in overhead_measured.
func HasMeasured(ctx context.Context, db *sql.DB, f OverheadFilter) (bool, error) {
	var n int
	err := db.QueryRowContext(ctx, "SELECT count(*) FROM overhead_vs_measured(1.0) WHERE measured_pct IS NOT NULL AND ("+f.where()+")").Scan(&n)
	return n > 0, err
}
