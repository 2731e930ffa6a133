package schema

import (
	"context"
	"database/sql"
	"fmt"
	"math"
)

// Clock is a row of the table clocks: how a run's times map onto the
// clock of its system's reference run (docs/semantics.md, "Aligned
// time"). Bounds are nil where the messages give none.
type Clock struct {
	RunID              int32
	OffsetNS           int64
	DriftPPM           float64
	RefTS              int64
	OffsetLo, OffsetHi *int64
	DriftLo, DriftHi   *float64
	Source             string // ClockReference, ClockUser, ClockMessages, ClockNone
	Sent, Received     int64
	Note               string
}

// The sources of a clock.
const (
	ClockReference = "reference"
	ClockUser      = "user"
	ClockMessages  = "messages"
	ClockNone      = "none"
)

// MaxDriftPPM bounds a clock's drift: clocks of real machines drift by
// tens of ppm; past 1000 ppm (1 ms per s) the time base is not the same
// unit, which alignment does not fix.
const MaxDriftPPM = 1000

// Aligned maps a time of the clock's run onto the reference clock:
// ts + offset_ns + round((ts - ref_ts) * drift_ppm / 1e6), the very
// expression the view system_events computes (in DOUBLE, rounding half
// away from zero, as DuckDB's round does).
func (c Clock) Aligned(ts int64) int64 {
	return ts + c.OffsetNS + int64(math.Round(float64(ts-c.RefTS)*c.DriftPPM/1e6))
}

// SetClocks replaces the clocks of the given runs, in one transaction:
// every run must exist, once, and a drift be within ±MaxDriftPPM. (One
// row per run is kept here rather than by a primary key: DuckDB 1.1
// refuses to insert a key deleted in the same transaction.)
func (db *DB) SetClocks(ctx context.Context, clocks []Clock) error {
	tx, err := db.sql.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	seen := map[int32]bool{}
	for _, c := range clocks {
		if seen[c.RunID] {
			return fmt.Errorf("clocks: run %d twice", c.RunID)
		}
		seen[c.RunID] = true
		var n int
		if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM runs WHERE run_id = ?", c.RunID).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("clocks: no run %d", c.RunID)
		}
		if math.IsNaN(c.DriftPPM) || math.Abs(c.DriftPPM) > MaxDriftPPM {
			return fmt.Errorf("clocks: run %d: a drift of %g ppm, want -%d..%d", c.RunID, c.DriftPPM, MaxDriftPPM, MaxDriftPPM)
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM "+TableClocks+" WHERE run_id = ?", c.RunID); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO "+TableClocks+" VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			c.RunID, c.OffsetNS, c.DriftPPM, c.RefTS, nullable(c.OffsetLo), nullable(c.OffsetHi),
			nullable(c.DriftLo), nullable(c.DriftHi), c.Source, c.Sent, c.Received, sql.NullString{String: c.Note, Valid: c.Note != ""}); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// Clocks returns the clocks of the runs tagged system=system, by run_id.
func (db *DB) Clocks(ctx context.Context, system string) ([]Clock, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT k.run_id, k.offset_ns, k.drift_ppm, k.ref_ts,
		k.offset_lo_ns, k.offset_hi_ns, k.drift_lo_ppm, k.drift_hi_ppm, k.source, k.sent, k.received, coalesce(k.note, '')
		FROM `+TableClocks+` k JOIN runs r ON r.run_id = k.run_id WHERE r.tags->>'system' = ? ORDER BY k.run_id`, system)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Clock
	for rows.Next() {
		var c Clock
		var olo, ohi sql.NullInt64
		var dlo, dhi sql.NullFloat64
		if err := rows.Scan(&c.RunID, &c.OffsetNS, &c.DriftPPM, &c.RefTS, &olo, &ohi, &dlo, &dhi,
			&c.Source, &c.Sent, &c.Received, &c.Note); err != nil {
			return nil, err
		}
		if olo.Valid {
			c.OffsetLo = &olo.Int64
		}
		if ohi.Valid {
			c.OffsetHi = &ohi.Int64
		}
		if dlo.Valid {
			c.DriftLo = &dlo.Float64
		}
		if dhi.Valid {
			c.DriftHi = &dhi.Float64
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

func nullable[T int64 | float64](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}
