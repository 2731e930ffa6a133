package report

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"sort"
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

// loadDetails fills r.Details (in the order of r.Runs).
func (r *Report) loadDetails(ctx context.Context, conn *sql.Conn, ids string, top int) error {
	at := map[int32]*RunDetails{}
	r.Details = make([]RunDetails, len(r.Runs))
	for i := range r.Runs {
		r.Details[i] = RunDetails{RunID: r.Runs[i].ID, Objects: []ObjectStats{}, States: []StateStats{}, Diagnostics: []DiagRow{}}
		at[r.Runs[i].ID] = &r.Details[i]
	}
	if err := r.loadCPULoad(ctx, conn, at); err != nil {
		return err
	}

	// 1. The top objects by running time, with their response times.
	rows, err := conn.QueryContext(ctx, fmt.Sprintf(`
WITH running AS (
  SELECT run_id, object, any_value(kind) AS kind, sum(total_ns)::BIGINT AS running_ns
  FROM sched_stats WHERE class = 'running'
  GROUP BY run_id, object
), ranked AS (
  SELECT *, row_number() OVER (PARTITION BY run_id ORDER BY running_ns DESC, object) AS rank
  FROM running
), responses AS (
  SELECT run_id, object, count(*) AS instances,
         quantile_disc(response, [0.5, 0.9, 0.99]) AS q, max(response) AS mx
  FROM task_instances WHERE NOT truncated
  GROUP BY run_id, object
)
SELECT k.run_id, k.object, k.kind, k.running_ns,
       k.running_ns / nullif(r.last_ts - r.first_ts, 0),
       coalesce(p.instances, 0), p.q[1], p.q[2], p.q[3], p.mx
FROM ranked k
JOIN runs r ON r.run_id = k.run_id
LEFT JOIN responses p ON p.run_id = k.run_id AND p.object = k.object
WHERE k.rank <= %d AND k.run_id IN %s
ORDER BY k.run_id, k.rank`, top, ids))
	if err != nil {
		return fmt.Errorf("report: top objects: %w", err)
	}
	for rows.Next() {
		var id int32
		var o ObjectStats
		var share sql.NullFloat64
		if err := rows.Scan(&id, &o.Object, &o.Kind, &o.RunningNS, &share, &o.Instances, &o.ResponseP50, &o.ResponseP90, &o.ResponseP99, &o.ResponseMax); err != nil {
			rows.Close()
			return err
		}
		o.RunningShare = share.Float64
		at[id].Objects = append(at[id].Objects, o)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}

	// 2. Their scheduling statistics (objects of one name summed as in
	// the metrics would mix percentiles: the object of that name with
	// the longest running time stands for the name).
	rows, err = conn.QueryContext(ctx, fmt.Sprintf(`
WITH pick AS (
  SELECT run_id, object, arg_max(object_id, total_ns) AS object_id
  FROM sched_stats WHERE class = 'running'
  GROUP BY run_id, object
)
SELECT s.run_id, s.object, s.class, s.count, s.total_ns, s.mean_ns, s.p50_ns, s.p90_ns, s.p99_ns, s.max_ns, s.share
FROM sched_stats s JOIN pick p ON p.run_id = s.run_id AND p.object_id = s.object_id
WHERE s.run_id IN %s
ORDER BY s.run_id, s.object,
         CASE s.class WHEN 'running' THEN 1 WHEN 'ready' THEN 2 WHEN 'waiting' THEN 3 ELSE 4 END`, ids))
	if err != nil {
		return fmt.Errorf("report: state statistics: %w", err)
	}
	for rows.Next() {
		var id int32
		var s StateStats
		var mean, share sql.NullFloat64
		if err := rows.Scan(&id, &s.Object, &s.Class, &s.Count, &s.TotalNS, &mean, &s.P50NS, &s.P90NS, &s.P99NS, &s.MaxNS, &share); err != nil {
			rows.Close()
			return err
		}
		s.MeanNS, s.Share = nullFloat(mean), nullFloat(share)
		d := at[id]
		for _, o := range d.Objects {
			if o.Object == s.Object {
				d.States = append(d.States, s)
				break
			}
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	// The states in the order of the objects.
	for _, d := range r.Details {
		rank := map[string]int{}
		for i, o := range d.Objects {
			rank[o.Object] = i
		}
		sort.SliceStable(d.States, func(i, j int) bool { return rank[d.States[i].Object] < rank[d.States[j].Object] })
	}

	// 3. The most frequent diagnostics.
	rows, err = conn.QueryContext(ctx, fmt.Sprintf(`
SELECT run_id, severity, message, cnt FROM (
  SELECT run_id, coalesce(severity, '') AS severity, coalesce(message, '') AS message,
         sum(count)::BIGINT AS cnt,
         row_number() OVER (PARTITION BY run_id ORDER BY sum(count) DESC, severity, message) AS rank
  FROM diagnostics WHERE run_id IN %s
  GROUP BY run_id, severity, message)
WHERE rank <= 5
ORDER BY run_id, rank`, ids))
	if err != nil {
		return fmt.Errorf("report: diagnostics: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int32
		var d DiagRow
		if err := rows.Scan(&id, &d.Severity, &d.Message, &d.Count); err != nil {
			return err
		}
		at[id].Diagnostics = append(at[id].Diagnostics, d)
	}
	return rows.Err()
}

// loadCPULoad reads the CPU load series, one query per run (cpu_load's
// run parameter: its windows are made for that run alone, so that a run
// of a long span cannot make another's plot fail or wait), and the number
// of CPUs of each run.
func (r *Report) loadCPULoad(ctx context.Context, conn *sql.Conn, at map[int32]*RunDetails) error {
	for _, run := range r.Runs {
		w := loadWindow(run.Duration)
		rows, err := conn.QueryContext(ctx, fmt.Sprintf(`
SELECT l.run_id, l.cpu, l.window_start - r.first_ts, l.load
FROM cpu_load(%d, run := %d) l JOIN runs r ON r.run_id = l.run_id
ORDER BY l.cpu, l.window_start`, w, run.ID))
		if err != nil {
			return fmt.Errorf("report: cpu_load: %w", err)
		}
		for rows.Next() {
			var id int32
			var cpu string
			var start int64
			var load float64
			if err := rows.Scan(&id, &cpu, &start, &load); err != nil {
				rows.Close()
				return err
			}
			d := at[id]
			if d.CPULoad == nil {
				d.CPULoad = &CPULoad{WindowNS: w}
			}
			n := len(d.CPULoad.CPUs)
			if n == 0 || d.CPULoad.CPUs[n-1].CPU != cpu {
				d.CPULoad.CPUs = append(d.CPULoad.CPUs, CPUSeries{CPU: cpu})
				n++
			}
			s := &d.CPULoad.CPUs[n-1]
			s.Points = append(s.Points, [2]float64{float64(start), load})
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
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
