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

// summaryTop is how many objects of a run (by running time) its summary
// keeps, with their scheduling statistics: a report with --top up to it
// reads the summaries; one with a larger --top computes every run's
// summary again.
const summaryTop = 50

// diagTop is how many diagnostics (the most frequent) a run's section
// shows.
const diagTop = 5

// runSummary is what the report shows of a run in its section, for any
// --top up to the objects it holds: computed by computeDetails, stored
// as report_summaries.details (JSON) by an ingest.
type runSummary struct {
	CPULoad     *CPULoad      `json:"cpu_load"`
	Objects     []ObjectStats `json:"objects"`     // by running time, the first summaryTop (or --top)
	States      []StateStats  `json:"states"`      // of those objects, in their order
	Diagnostics []DiagRow     `json:"diagnostics"` // the diagTop most frequent
}

func newRunSummary() *runSummary {
	return &runSummary{Objects: []ObjectStats{}, States: []StateStats{}, Diagnostics: []DiagRow{}}
}

// details is the run's section with its top objects.
func (s *runSummary) details(id int32, top int) RunDetails {
	d := RunDetails{RunID: id, CPULoad: s.CPULoad, Objects: s.Objects, States: []StateStats{}, Diagnostics: s.Diagnostics}
	if len(d.Objects) > top {
		d.Objects = d.Objects[:top]
	}
	keep := map[string]bool{}
	for _, o := range d.Objects {
		keep[o.Object] = true
	}
	for _, st := range s.States {
		if keep[st.Object] {
			d.States = append(d.States, st)
		}
	}
	return d
}

// The queries of a run's section (computeDetails); part of the
// summaries' version.
const (
	// topObjectsSQL: the objects by running time (%[1]d of them), with
	// their response times, of the runs %[2]s. Objects of one name are
	// one object, as in the metrics.
	topObjectsSQL = `
WITH running AS (
  SELECT run_id, object, min(kind) AS kind, sum(total_ns)::BIGINT AS running_ns
  FROM sched_stats WHERE class = 'running' AND run_id IN %[2]s
  GROUP BY run_id, object
), ranked AS (
  SELECT *, row_number() OVER (PARTITION BY run_id ORDER BY running_ns DESC, object) AS rank
  FROM running
), responses AS (
  SELECT run_id, object, count(*) AS instances,
         quantile_disc(response, [0.5, 0.9, 0.99]) AS q, max(response) AS mx
  FROM task_instances WHERE NOT truncated AND run_id IN %[2]s
  GROUP BY run_id, object
)
SELECT k.run_id, k.object, k.kind, k.running_ns,
       k.running_ns / nullif(r.last_ts - r.first_ts, 0),
       coalesce(p.instances, 0), p.q[1], p.q[2], p.q[3], p.mx
FROM ranked k
JOIN runs r ON r.run_id = k.run_id
LEFT JOIN responses p ON p.run_id = k.run_id AND p.object = k.object
WHERE k.rank <= %[1]d
ORDER BY k.run_id, k.rank`

	// stateStatsSQL: the scheduling statistics of every object of the
	// runs %[1]s (objects of one name summed as in the metrics would mix
	// percentiles: the object of that name with the longest running time,
	// the first by object_id of those, stands for the name).
	stateStatsSQL = `
WITH pick AS (
  SELECT run_id, object, first(object_id ORDER BY total_ns DESC, object_id) AS object_id
  FROM sched_stats WHERE class = 'running' AND run_id IN %[1]s
  GROUP BY run_id, object
)
SELECT s.run_id, s.object, s.class, s.count, s.total_ns, s.mean_ns, s.p50_ns, s.p90_ns, s.p99_ns, s.max_ns, s.share
FROM sched_stats s JOIN pick p ON p.run_id = s.run_id AND p.object_id = s.object_id
WHERE s.run_id IN %[1]s
ORDER BY s.run_id, s.object,
         CASE s.class WHEN 'running' THEN 1 WHEN 'ready' THEN 2 WHEN 'waiting' THEN 3 ELSE 4 END`

	// diagnosticsSQL: the %[1]d most frequent diagnostics of the runs %[2]s.
	diagnosticsSQL = `
SELECT run_id, severity, message, cnt FROM (
  SELECT run_id, coalesce(severity, '') AS severity, coalesce(message, '') AS message,
         sum(count)::BIGINT AS cnt,
         row_number() OVER (PARTITION BY run_id ORDER BY sum(count) DESC, severity, message) AS rank
  FROM diagnostics WHERE run_id IN %[2]s
  GROUP BY run_id, severity, message)
WHERE rank <= %[1]d
ORDER BY run_id, rank`

	// spansSQL: the runs' durations, for the CPU load plots' windows.
	spansSQL = `SELECT run_id, coalesce(last_ts, 0) - coalesce(first_ts, 0) FROM runs WHERE run_id IN %s ORDER BY run_id`

	// cpuLoadSQL: the CPU load of run %[2]d in windows of %[1]d ns, from
	// its first event.
	cpuLoadSQL = `
SELECT l.cpu, l.window_start - r.first_ts, l.load
FROM cpu_load(%[1]d, run := %[2]d) l JOIN runs r ON r.run_id = l.run_id
ORDER BY l.cpu, l.window_start`
)

// computeDetails computes the sections of the runs ids (a SQL list, none
// empty) with their keep first objects; every run of ids has one.
func computeDetails(ctx context.Context, conn *sql.Conn, ids string, keep int) (map[int32]*runSummary, error) {
	at := map[int32]*runSummary{}
	var spans [][2]int64
	rows, err := conn.QueryContext(ctx, fmt.Sprintf(spansSQL, ids))
	if err != nil {
		return nil, fmt.Errorf("report: runs: %w", err)
	}
	for rows.Next() {
		var id, dur int64
		if err := rows.Scan(&id, &dur); err != nil {
			rows.Close()
			return nil, err
		}
		spans = append(spans, [2]int64{id, dur})
		at[int32(id)] = newRunSummary()
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, sp := range spans {
		if err := loadCPULoad(ctx, conn, int32(sp[0]), sp[1], at[int32(sp[0])]); err != nil {
			return nil, err
		}
	}

	// 1. The top objects by running time, with their response times.
	rows, err = conn.QueryContext(ctx, fmt.Sprintf(topObjectsSQL, keep, ids))
	if err != nil {
		return nil, fmt.Errorf("report: top objects: %w", err)
	}
	for rows.Next() {
		var id int32
		var o ObjectStats
		var share sql.NullFloat64
		if err := rows.Scan(&id, &o.Object, &o.Kind, &o.RunningNS, &share, &o.Instances, &o.ResponseP50, &o.ResponseP90, &o.ResponseP99, &o.ResponseMax); err != nil {
			rows.Close()
			return nil, err
		}
		if s := nullFloat(share); s != nil {
			o.RunningShare = *s
		}
		if d := at[id]; d != nil {
			d.Objects = append(d.Objects, o)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}

	// 2. Their scheduling statistics.
	rows, err = conn.QueryContext(ctx, fmt.Sprintf(stateStatsSQL, ids))
	if err != nil {
		return nil, fmt.Errorf("report: state statistics: %w", err)
	}
	for rows.Next() {
		var id int32
		var s StateStats
		var mean, share sql.NullFloat64
		if err := rows.Scan(&id, &s.Object, &s.Class, &s.Count, &s.TotalNS, &mean, &s.P50NS, &s.P90NS, &s.P99NS, &s.MaxNS, &share); err != nil {
			rows.Close()
			return nil, err
		}
		s.MeanNS, s.Share = nullFloat(mean), nullFloat(share)
		d := at[id]
		if d == nil {
			continue
		}
		for _, o := range d.Objects {
			if o.Object == s.Object {
				d.States = append(d.States, s)
				break
			}
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	// The states in the order of the objects.
	for _, d := range at {
		rank := map[string]int{}
		for i, o := range d.Objects {
			rank[o.Object] = i
		}
		sort.SliceStable(d.States, func(i, j int) bool { return rank[d.States[i].Object] < rank[d.States[j].Object] })
	}

	// 3. The most frequent diagnostics.
	rows, err = conn.QueryContext(ctx, fmt.Sprintf(diagnosticsSQL, diagTop, ids))
	if err != nil {
		return nil, fmt.Errorf("report: diagnostics: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int32
		var d DiagRow
		if err := rows.Scan(&id, &d.Severity, &d.Message, &d.Count); err != nil {
			return nil, err
		}
		if s := at[id]; s != nil {
			s.Diagnostics = append(s.Diagnostics, d)
		}
	}
	return at, rows.Err()
}

// loadCPULoad reads the CPU load series of one run (cpu_load's run
// parameter: its windows are made for that run alone, so that a run of a
// long span cannot make another's plot fail or wait). A window whose load
// is not a number is left out, as one whose state is unknown.
func loadCPULoad(ctx context.Context, conn *sql.Conn, id int32, duration int64, d *runSummary) error {
	w := loadWindow(duration)
	rows, err := conn.QueryContext(ctx, fmt.Sprintf(cpuLoadSQL, w, id))
	if err != nil {
		return fmt.Errorf("report: cpu_load: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var cpu string
		var start int64
		var load float64
		if err := rows.Scan(&cpu, &start, &load); err != nil {
			return err
		}
		if math.IsNaN(load) || math.IsInf(load, 0) {
			continue
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
		s.Points = append(s.Points, [2]float64{float64(start), load})
	}
	return rows.Err()
}

func nullFloat(v sql.NullFloat64) *float64 {
	if !v.Valid || math.IsNaN(v.Float64) || math.IsInf(v.Float64, 0) {
		return nil
	}
	f := v.Float64
	return &f
}
