package report

import (
	"context"
	"database/sql"
	"fmt"
	"math"
)

// RunDetails is what the report shows of one run on its own.
type RunDetails struct {
	RunID       int32         `json:"run_id"`
	CPULoad     *CPULoad      `json:"cpu_load"`    // null when the trace tells no CPU states
	Objects     []ObjectStats `json:"objects"`     // the top objects by running time
	States      []StateStats  `json:"states"`      // sched_stats of those objects
	Diagnostics []DiagRow     `json:"diagnostics"` // the most frequent messages
}

// CPULoad is the load of each CPU in consecutive windows of the run
// (the macro cpu_load): about plotPoints windows whatever the run's length.
type CPULoad struct {
	WindowNS int64       `json:"window_ns"`
	CPUs     []CPUSeries `json:"cpus"`
}

// CPUSeries is one CPU's load: [start of the window - the run's first_ts
// in ns, load 0..1] pairs; a window whose state is unknown is absent.
type CPUSeries struct {
	CPU    string       `json:"cpu"`
	Points [][2]float64 `json:"points"`
}

// ObjectStats is one of the top objects of a run (by running time).
type ObjectStats struct {
	Object       string  `json:"object"`
	Kind         string  `json:"kind"`
	RunningNS    int64   `json:"running_ns"`
	RunningShare float64 `json:"running_share"` // of the run's duration
	Instances    int64   `json:"instances"`     // complete instances (task_instances)
	ResponseP50  *int64  `json:"response_p50_ns"`
	ResponseP90  *int64  `json:"response_p90_ns"`
	ResponseP99  *int64  `json:"response_p99_ns"`
	ResponseMax  *int64  `json:"response_max_ns"`
}

// StateStats is a row of sched_stats: an object's intervals in one
// scheduling class (running, ready, waiting, blocked).
type StateStats struct {
	Object  string   `json:"object"`
	Class   string   `json:"class"`
	Count   int64    `json:"count"`
	TotalNS int64    `json:"total_ns"`
	MeanNS  *float64 `json:"mean_ns"`
	P50NS   *int64   `json:"p50_ns"`
	P90NS   *int64   `json:"p90_ns"`
	P99NS   *int64   `json:"p99_ns"`
	MaxNS   *int64   `json:"max_ns"`
	Share   *float64 `json:"share"` // of the object's known time
}

// DiagRow is one diagnostic message and how often it was seen.
type DiagRow struct {
	Severity string `json:"severity"`
	Message  string `json:"message"`
	Count    int64  `json:"count"`
}

// plotPoints is about how many windows a CPU load plot has.
const plotPoints = 150

// loadWindow is the window of a run's CPU load plot: duration/plotPoints
// rounded up to 1, 2 or 5 times a power of ten (so that runs of about the
// same length share a window, and one query serves them).
func loadWindow(duration int64) int64 {
	w := float64(duration) / plotPoints
	if w <= 1 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(w)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= w {
			return int64(m * p)
		}
	}
	return int64(10 * p)
}

// summaryTop is how many objects of a run (by running time) its summary
// keeps, with their scheduling statistics: a report with --top up to it
// reads the summaries; one with a larger --top computes every run's
// summary again.
const summaryTop = 50

// diagTop is how many diagnostics (the most frequent) a run's section
// shows.
const diagTop = 5

// The queries of a run's section (computeDetails): each fills a table of
// the summaries (report_objects, report_states, report_diagnostics,
// report_cpu_load) or its live twin; part of the summaries' version.
const (
	// objectsSQL: the objects of the runs %[3]s by running time, the
	// first %[2]d, with their response times, into %[1]s. Objects of one
	// name are one object, as in the metrics.
	objectsSQL = `INSERT INTO %[1]s
WITH running AS (
  SELECT run_id, object, min(kind) AS kind, sum(total_ns)::BIGINT AS running_ns
  FROM sched_stats WHERE class = 'running' AND run_id IN %[3]s
  GROUP BY run_id, object
), ranked AS (
  SELECT *, row_number() OVER (PARTITION BY run_id ORDER BY running_ns DESC, object) AS rank
  FROM running
), responses AS (
  SELECT run_id, object, count(*) AS instances,
         quantile_disc(response, [0.5, 0.9, 0.99]) AS q, max(response) AS mx
  FROM task_instances WHERE NOT truncated AND run_id IN %[3]s
  GROUP BY run_id, object
)
SELECT k.run_id, k.rank, k.object, k.kind, k.running_ns,
       k.running_ns / nullif(r.last_ts - r.first_ts, 0),
       coalesce(p.instances, 0), p.q[1], p.q[2], p.q[3], p.mx
FROM ranked k
JOIN runs r ON r.run_id = k.run_id
LEFT JOIN responses p ON p.run_id = k.run_id AND p.object = k.object
WHERE k.rank <= %[2]d`

	// statesSQL: the scheduling statistics of the objects of the runs
	// %[3]s that %[2]s holds, into %[1]s (objects of one name summed as in
	// the metrics would mix percentiles: the object of that name with the
	// longest running time, the first by object_id of those, stands for
	// the name).
	statesSQL = `INSERT INTO %[1]s
WITH pick AS (
  SELECT run_id, object, first(object_id ORDER BY total_ns DESC, object_id) AS object_id
  FROM sched_stats WHERE class = 'running' AND run_id IN %[3]s
  GROUP BY run_id, object
)
SELECT s.run_id, s.object, s.class, s.count, s.total_ns, s.mean_ns, s.p50_ns, s.p90_ns, s.p99_ns, s.max_ns, s.share
FROM sched_stats s JOIN pick p ON p.run_id = s.run_id AND p.object_id = s.object_id
JOIN %[2]s o ON o.run_id = s.run_id AND o.object = s.object
WHERE s.run_id IN %[3]s`

	// diagnosticsSQL: the %[2]d most frequent diagnostics of the runs
	// %[3]s, into %[1]s.
	diagnosticsSQL = `INSERT INTO %[1]s
SELECT run_id, rank, severity, message, cnt FROM (
  SELECT run_id, coalesce(severity, '') AS severity, coalesce(message, '') AS message,
         sum(count)::BIGINT AS cnt,
         row_number() OVER (PARTITION BY run_id ORDER BY sum(count) DESC, severity, message) AS rank
  FROM diagnostics WHERE run_id IN %[3]s
  GROUP BY run_id, severity, message)
WHERE rank <= %[2]d`

	// spansSQL: the runs' durations, for the CPU load plots' windows.
	spansSQL = `SELECT run_id, coalesce(last_ts, 0) - coalesce(first_ts, 0) FROM runs WHERE run_id IN %s ORDER BY run_id`

	// cpuLoadSQL: the CPU load of run %[3]d in windows of %[2]d ns, from
	// its first event, into %[1]s (cpu_load's run parameter: its windows
	// are made for that run alone, so that a run of a long span cannot
	// make another's plot fail or wait). A window whose load is not a
	// number is left out, as one whose state is unknown.
	cpuLoadSQL = `INSERT INTO %[1]s
SELECT l.run_id, l.cpu, %[2]d, l.window_start - r.first_ts, l.load
FROM cpu_load(%[2]d, run := %[3]d) l JOIN runs r ON r.run_id = l.run_id
WHERE isfinite(l.load)`
)

// detailTables are the tables a run's section is computed into, as
// summaryTables.
type detailTables struct{ objects, states, diagnostics, cpuLoad string }

// computeDetails computes the sections of the runs ids (a SQL list, none
// empty) with their keep first objects into t.
func computeDetails(ctx context.Context, conn *sql.Conn, ids string, t detailTables, keep int) error {
	for _, q := range []struct{ what, sql string }{
		{"top objects", fmt.Sprintf(objectsSQL, t.objects, keep, ids)},
		{"state statistics", fmt.Sprintf(statesSQL, t.states, t.objects, ids)},
		{"diagnostics", fmt.Sprintf(diagnosticsSQL, t.diagnostics, diagTop, ids)},
	} {
		if _, err := conn.ExecContext(ctx, q.sql); err != nil {
			return fmt.Errorf("report: %s: %w", q.what, err)
		}
	}
	var spans [][2]int64
	rows, err := conn.QueryContext(ctx, fmt.Sprintf(spansSQL, ids))
	if err != nil {
		return fmt.Errorf("report: runs: %w", err)
	}
	for rows.Next() {
		var id, dur int64
		if err := rows.Scan(&id, &dur); err != nil {
			rows.Close()
			return err
		}
		spans = append(spans, [2]int64{id, dur})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, sp := range spans {
		if _, err := conn.ExecContext(ctx, fmt.Sprintf(cpuLoadSQL, t.cpuLoad, loadWindow(sp[1]), sp[0])); err != nil {
			return fmt.Errorf("report: cpu_load: %w", err)
		}
	}
	return nil
}

// readDetails reads the sections of the runs from the summaries' tables
// (src returns the query of a table's rows, of the stored summaries and
// the live ones), with their top first objects, in the order of r.Runs.
func (r *Report) readDetails(ctx context.Context, conn *sql.Conn, src func(table string) string, top int) error {
	at := map[int32]*RunDetails{}
	r.Details = make([]RunDetails, len(r.Runs))
	for i := range r.Runs {
		r.Details[i] = RunDetails{RunID: r.Runs[i].ID, Objects: []ObjectStats{}, States: []StateStats{}, Diagnostics: []DiagRow{}}
		at[r.Runs[i].ID] = &r.Details[i]
	}
	query := func(what, q string, scan func(rows *sql.Rows) error) error {
		rows, err := conn.QueryContext(ctx, q)
		if err != nil {
			return fmt.Errorf("report: %s: %w", what, err)
		}
		defer rows.Close()
		for rows.Next() {
			if err := scan(rows); err != nil {
				return err
			}
		}
		return rows.Err()
	}
	objects := fmt.Sprintf("(%s) WHERE rank <= %d", src("report_objects"), top)
	err := query("top objects", "SELECT run_id, object, kind, running_ns, running_share, instances, response_p50_ns, response_p90_ns, response_p99_ns, response_max_ns FROM "+
		objects+" ORDER BY run_id, rank", func(rows *sql.Rows) error {
		var id int32
		var o ObjectStats
		var share sql.NullFloat64
		if err := rows.Scan(&id, &o.Object, &o.Kind, &o.RunningNS, &share, &o.Instances, &o.ResponseP50, &o.ResponseP90, &o.ResponseP99, &o.ResponseMax); err != nil {
			return err
		}
		if s := nullFloat(share); s != nil {
			o.RunningShare = *s
		}
		if d := at[id]; d != nil {
			d.Objects = append(d.Objects, o)
		}
		return nil
	})
	if err != nil {
		return err
	}
	err = query("state statistics", `SELECT s.run_id, s.object, s.class, s.count, s.total_ns, s.mean_ns, s.p50_ns, s.p90_ns, s.p99_ns, s.max_ns, s.share
FROM (`+src("report_states")+`) s JOIN (SELECT * FROM `+objects+`) o ON o.run_id = s.run_id AND o.object = s.object
ORDER BY s.run_id, o.rank, CASE s.class WHEN 'running' THEN 1 WHEN 'ready' THEN 2 WHEN 'waiting' THEN 3 ELSE 4 END`, func(rows *sql.Rows) error {
		var id int32
		var s StateStats
		var mean, share sql.NullFloat64
		if err := rows.Scan(&id, &s.Object, &s.Class, &s.Count, &s.TotalNS, &mean, &s.P50NS, &s.P90NS, &s.P99NS, &s.MaxNS, &share); err != nil {
			return err
		}
		s.MeanNS, s.Share = nullFloat(mean), nullFloat(share)
		if d := at[id]; d != nil {
			d.States = append(d.States, s)
		}
		return nil
	})
	if err != nil {
		return err
	}
	err = query("diagnostics", "SELECT run_id, severity, message, count FROM ("+src("report_diagnostics")+") ORDER BY run_id, rank", func(rows *sql.Rows) error {
		var id int32
		var d DiagRow
		if err := rows.Scan(&id, &d.Severity, &d.Message, &d.Count); err != nil {
			return err
		}
		if x := at[id]; x != nil {
			x.Diagnostics = append(x.Diagnostics, d)
		}
		return nil
	})
	if err != nil {
		return err
	}
	err = query("cpu_load", "SELECT run_id, cpu, window_ns, t_ns, load FROM ("+src("report_cpu_load")+") ORDER BY run_id, cpu, t_ns", func(rows *sql.Rows) error {
		var id int32
		var cpu string
		var w, t int64
		var load float64
		if err := rows.Scan(&id, &cpu, &w, &t, &load); err != nil {
			return err
		}
		d := at[id]
		if d == nil {
			return nil
		}
		if d.CPULoad == nil {
			d.CPULoad = &CPULoad{WindowNS: w}
		}
		n := len(d.CPULoad.CPUs)
		if n == 0 || d.CPULoad.CPUs[n-1].CPU != cpu {
			d.CPULoad.CPUs = append(d.CPULoad.CPUs, CPUSeries{CPU: cpu})
			n++
		}
		s := &d.CPULoad.CPUs[n-1]
		s.Points = append(s.Points, [2]float64{float64(t), load})
		return nil
	})
	if err != nil {
		return err
	}
	for i := range r.Runs {
		if l := at[r.Runs[i].ID].CPULoad; l != nil {
			r.Runs[i].CPUs = len(l.CPUs)
		}
	}
	return nil
}

func nullFloat(v sql.NullFloat64) *float64 {
	if !v.Valid || math.IsNaN(v.Float64) || math.IsInf(v.Float64, 0) {
		return nil
	}
	f := v.Float64
	return &f
}
