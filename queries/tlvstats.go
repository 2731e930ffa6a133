package queries

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"strings"
)

// TLVEvent is an event a TLV statistics generation rule names (TLV's
// BaseEvent; ingest/tlv reads them from .sgr files).
type TLVEvent struct {
	Names, Types     []string // resources by name, by type (objects.kind)
	Attribute, Value string   // an attribute's change to a value, or
	Behavior         string   // a behavior,
	Args             []string // with these arguments when HasArgs
	HasArgs          bool
}

// TLVStat is a Basic rule of a .sgr file.
type TLVStat struct {
	Method   string  // Count or Measure
	Interval float64 // Count: window width in the log's time unit (runs.meta TimeScale); 0 none
	When     *TLVEvent
	From, To *TLVEvent
}

// args are the macro arguments of an event: names, kinds, attribute,
// val, behavior, args.
func (e *TLVEvent) args() string {
	list := func(l []string) string {
		if len(l) == 0 {
			return "NULL"
		}
		return LiteralList(l)
	}
	lit := func(s string) string {
		if s == "" {
			return "NULL"
		}
		return Literal(s)
	}
	a := "NULL"
	if e.HasArgs {
		a = "CAST(" + LiteralList(e.Args) + " AS VARCHAR[])"
	}
	if e.Behavior != "" {
		return fmt.Sprintf("%s, %s, NULL, NULL, %s, %s", list(e.Names), list(e.Types), lit(e.Behavior), a)
	}
	return fmt.Sprintf("%s, %s, %s, %s, NULL, NULL", list(e.Names), list(e.Types), lit(e.Attribute), lit(e.Value))
}

// tlvTimeScales are ns per unit of TLV's TimeScale.
var tlvTimeScales = map[string]float64{"s": 1e9, "ms": 1e6, "us": 1e3, "ns": 1, "ps": 1e-3, "fs": 1e-6}

// TLVStatSQL returns the query that computes a Basic rule over run (0:
// every run) with the macros of tlv_stats.sql. An Interval is converted
// to ns by the run's TimeScale (runs.meta, TLV's runs; "us", TLV's
// default, when none), which must be one over the runs it reads.
func TLVStatSQL(ctx context.Context, db *sql.DB, s TLVStat, run int32) (string, error) {
	runArg := "NULL"
	if run != 0 {
		runArg = fmt.Sprint(run)
	}
	switch {
	case s.Method == "Count" && s.When != nil && s.Interval > 0:
		rows, err := db.QueryContext(ctx, `SELECT DISTINCT coalesce(meta->>'TimeScale', 'us') FROM runs WHERE ? = 0 OR run_id = ?`, run, run)
		if err != nil {
			return "", err
		}
		var scales []string
		for rows.Next() {
			var sc string
			if err := rows.Scan(&sc); err != nil {
				rows.Close()
				return "", err
			}
			scales = append(scales, sc)
		}
		rows.Close()
		if len(scales) != 1 {
			return "", fmt.Errorf("Interval %g: the runs have the time units %s: give --run N", s.Interval, strings.Join(scales, ", "))
		}
		per, ok := tlvTimeScales[scales[0]]
		if !ok {
			return "", fmt.Errorf("Interval %g: the run's TimeScale %q is not one of s, ms, us, ns, ps, fs", s.Interval, scales[0])
		}
		w := math.Round(s.Interval * per)
		if w < 1 || w > math.MaxInt64/2 {
			return "", fmt.Errorf("Interval %g %s: expected at least 1 ns", s.Interval, scales[0])
		}
		return fmt.Sprintf("SELECT * FROM tlv_count_windows(%s, %d, run := %s)", s.When.args(), int64(w), runArg), nil
	case s.Method == "Count" && s.When != nil:
		return fmt.Sprintf("SELECT * FROM tlv_count(%s, run := %s)", s.When.args(), runArg), nil
	case s.Method == "Measure" && s.When != nil:
		return fmt.Sprintf("SELECT * FROM tlv_measure(%s, run := %s)", s.When.args(), runArg), nil
	case s.Method == "Measure" && s.From != nil && s.To != nil:
		// TLV pairs the From's resources with the To's, in order: the
		// resources, in the resource file's order, of each side's names
		// and types.
		from, to := s.From, s.To
		pairs := fmt.Sprintf(`WITH f AS (SELECT run_id, resource, row_number() OVER (PARTITION BY run_id ORDER BY object_id) AS i FROM tlv_resources(%s, %s, run := %s)),
     t AS (SELECT run_id, resource, row_number() OVER (PARTITION BY run_id ORDER BY object_id) AS i FROM tlv_resources(%s, %s, run := %s))
SELECT f.run_id, f.resource AS from_resource, t.resource AS to_resource, f.i FROM f JOIN t USING (run_id, i) ORDER BY f.run_id, f.i`,
			listOrNull(from.Names), listOrNull(from.Types), runArg, listOrNull(to.Names), listOrNull(to.Types), runArg)
		rows, err := db.QueryContext(ctx, pairs)
		if err != nil {
			return "", err
		}
		var parts []string
		for rows.Next() {
			var r int32
			var fr, tr string
			var i int64
			if err := rows.Scan(&r, &fr, &tr, &i); err != nil {
				rows.Close()
				return "", err
			}
			one := func(name string, e *TLVEvent) string {
				// the event's arguments without its resources
				a := (&TLVEvent{Names: []string{name}, Attribute: e.Attribute, Value: e.Value, Behavior: e.Behavior, Args: e.Args, HasArgs: e.HasArgs}).args()
				return strings.TrimPrefix(a, LiteralList([]string{name})+", NULL, ")
			}
			parts = append(parts, fmt.Sprintf("SELECT run_id, %s AS from_resource, %s AS to_resource, %d AS pair, n, mean_ns, max_ns, min_ns FROM tlv_measure_from_to(%s, %s, %s, %s, run := %d)",
				Literal(fr), Literal(tr), i, Literal(fr), one(fr, from), Literal(tr), one(tr, to), r))
		}
		if err := rows.Close(); err != nil {
			return "", err
		}
		if len(parts) == 0 {
			return "SELECT NULL::INTEGER AS run_id, NULL AS from_resource, NULL AS to_resource, NULL::BIGINT AS pair, NULL::BIGINT AS n, NULL::DOUBLE AS mean_ns, NULL::BIGINT AS max_ns, NULL::BIGINT AS min_ns WHERE false", nil
		}
		return "SELECT run_id, from_resource, to_resource, n, mean_ns, max_ns, min_ns FROM (" + strings.Join(parts, "\nUNION ALL\n") + ") ORDER BY run_id, pair", nil
	}
	return "", fmt.Errorf("a Basic rule of Method %q: expected Count with When, or Measure with When or with From and To", s.Method)
}

func listOrNull(l []string) string {
	if len(l) == 0 {
		return "NULL"
	}
	return LiteralList(l)
}
