package report

import (
	"context"
	"database/sql"
	"fmt"
	"github.com/traceduck/traceduck/queries"
	"sort"
	"strconv"
	"strings"
)

// Run is one run of the report, with what the runs table says of it.
type Run struct {
	ID       int32             `json:"run_id"`
	Name     string            `json:"name"`
	Format   string            `json:"format"`
	Source   string            `json:"source"`
	Tags     map[string]string `json:"tags"`
	Events   int64             `json:"events"`
	FirstTS  int64             `json:"first_ts"`
	LastTS   int64             `json:"last_ts"`
	Duration int64             `json:"duration_ns"`
	CPUs     int               `json:"cpus"` // CPUs whose state the trace tells (cpu_utilization)
	// Baseline is true for the run the others are compared with;
	// Compared for the runs compared with it (same format).
	Baseline bool `json:"baseline"`
	Compared bool `json:"compared"`
}

// label is how a run is named in tables and plots.
func (r *Run) label() string {
	if r.Name != "" {
		return r.Name
	}
	return "run " + strconv.Itoa(int(r.ID))
}

// loadRuns reads every run of the database in run_id order.
func loadRuns(ctx context.Context, conn *sql.Conn) ([]Run, error) {
	rows, err := conn.QueryContext(ctx, `SELECT run_id, coalesce(name, ''), coalesce(format, ''), coalesce(source, ''),
		coalesce(CAST(tags AS VARCHAR), '{}'), coalesce(event_count, 0), coalesce(first_ts, 0), coalesce(last_ts, 0)
		FROM runs ORDER BY run_id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var runs []Run
	for rows.Next() {
		var r Run
		var tags string
		if err := rows.Scan(&r.ID, &r.Name, &r.Format, &r.Source, &tags, &r.Events, &r.FirstTS, &r.LastTS); err != nil {
			return nil, err
		}
		if t, err := queries.ParseTags(tags); err == nil {
			r.Tags = t
		} else {
			r.Tags = map[string]string{}
		}
		r.Duration = r.LastTS - r.FirstTS
		runs = append(runs, r)
	}
	return runs, rows.Err()
}

// OrderRuns sorts the runs for the trends: "ingest" (run_id, as given),
// "name", or "tag:KEY" (numerically when every run's value is a number;
// runs without the tag last); ties in run_id order.
func OrderRuns(runs []Run, order string) error {
	sort.SliceStable(runs, func(i, j int) bool { return runs[i].ID < runs[j].ID }) // ties in run_id order
	switch {
	case order == "" || order == "ingest":
	case order == "name":
		sort.SliceStable(runs, func(i, j int) bool { return runs[i].Name < runs[j].Name })
	case strings.HasPrefix(order, "tag:") && len(order) > len("tag:"):
		key := strings.TrimPrefix(order, "tag:")
		numeric := true
		for _, r := range runs {
			if v, ok := r.Tags[key]; ok {
				if _, err := strconv.ParseFloat(v, 64); err != nil {
					numeric = false
				}
			}
		}
		sort.SliceStable(runs, func(i, j int) bool {
			a, okA := runs[i].Tags[key]
			b, okB := runs[j].Tags[key]
			if okA != okB {
				return okA
			}
			if numeric {
				x, _ := strconv.ParseFloat(a, 64)
				y, _ := strconv.ParseFloat(b, 64)
				return x < y
			}
			return a < b
		})
	default:
		return fmt.Errorf("--order %q: expected ingest, name or tag:KEY", order)
	}
	return nil
}

// findBaseline returns the run a --baseline NAME|ID names among all runs:
// a number is a run_id when such a run exists, else a name; a name must
// be unique.
func findBaseline(all []Run, spec string) (Run, error) {
	if id, err := strconv.ParseInt(spec, 10, 32); err == nil {
		for _, r := range all {
			if int64(r.ID) == id {
				return r, nil
			}
		}
	}
	var found []Run
	for _, r := range all {
		if r.Name == spec {
			found = append(found, r)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return Run{}, fmt.Errorf("--baseline %s: no run has this name or run_id (the runs: %s)", spec, runList(all))
	}
	var ids []string
	for _, r := range found {
		ids = append(ids, strconv.Itoa(int(r.ID)))
	}
	return Run{}, fmt.Errorf("--baseline %s: %d runs have this name (run_id %s): give the run_id", spec, len(found), strings.Join(ids, ", "))
}

// runList names the runs for a message, at most ten.
func runList(all []Run) string {
	var parts []string
	for i, r := range all {
		if i == 10 {
			parts = append(parts, fmt.Sprintf("... %d more", len(all)-10))
			break
		}
		parts = append(parts, fmt.Sprintf("%d %s", r.ID, r.Name))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
