// Package report builds traceduck's batch regression reports: metrics
// defined in SQL computed for many runs of one database, each run
// compared with a baseline run, thresholds that fail a CI job, and the
// report as JSON, Markdown (a CI comment) and one self-contained HTML page
// with SVG plots.
package report

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/traceduck/traceduck/queries"
	"github.com/traceduck/traceduck/schema"
)

// Version is the version of the JSON report's layout (docs/report.md); it
// changes when a key is renamed or removed, not when one is added.
const Version = 1

// Options say what a report covers.
type Options struct {
	Database   string      // the database's name, as shown in the report
	Runs       string      // --runs selector (see queries.SelectRuns); empty: every run
	Order      string      // ingest (default), name or tag:KEY (see OrderRuns)
	Baseline   string      // name or run_id; empty: the first run in order
	Metrics    []Metric    // added to DefaultMetrics
	Thresholds []Threshold // --fail-on conditions
	Hists      []HistSpec  // --hist latency histograms
	Top        int         // objects per run in the run tables; 0: 10
	Window     *Window     // --from/--to; nil: the whole runs
	// Recompute computes every run's summary from its tables instead of
	// reading the stored ones (the tests compare the two).
	Recompute bool
	// Expand, when set, creates the views the database lacks (a dataset
	// opened with only the tables of the runs and their summaries:
	// export.OpenDatasetTables); the report calls it on its connection
	// before it computes anything from the runs' tables.
	Expand func(context.Context, *sql.Conn) error
	// Store stores the summaries the report computes (of runs without
	// one of this version) into the database, for the next report; a
	// failure to is Report.StoreErr, and the report goes on. Not with a
	// window, Recompute or a Top over summaryTop, whose summaries are not
	// the runs'.
	Store bool
}

// Report is everything the outputs print. The JSON output is this struct
// (docs/report.md documents its keys).
type Report struct {
	Version    int          `json:"version"`
	Database   string       `json:"database"`
	Baseline   RunRef       `json:"baseline"`
	Runs       []Run        `json:"runs"`
	Metrics    []Metric     `json:"metrics"`
	Values     []Value      `json:"values"`
	Thresholds []Threshold  `json:"thresholds"`
	Crossings  []Crossing   `json:"crossings"`
	Details    []RunDetails `json:"run_details"`
	Hists      []Hist       `json:"histograms"`
	Window     *Window      `json:"window"` // null: the whole runs

	// StoreErr is why the summaries the report computed could not be
	// stored (Options.Store); the report is whole without them.
	StoreErr error `json:"-"`

	index    map[valueKey]int // into Values
	crossed  map[valueKey][]Crossing
	crossedN int // len(Crossings) when crossed was built
}

// RunRef names a run.
type RunRef struct {
	ID   int32  `json:"run_id"`
	Name string `json:"name"`
}

// Value is one metric's value for one key in one run, with the change
// from the baseline's value for the same key when the run is compared
// with the baseline and the baseline has that key.
type Value struct {
	Metric    string   `json:"metric"`
	Key       string   `json:"key"`
	RunID     int32    `json:"run_id"`
	Value     float64  `json:"value"`
	Baseline  *float64 `json:"baseline"`   // the baseline's value
	Change    *float64 `json:"change"`     // value - baseline
	ChangePct *float64 `json:"change_pct"` // 100 * change / |baseline|; null when the baseline is 0
}

// Crossing is a value beyond a threshold.
type Crossing struct {
	Threshold string   `json:"threshold"`
	Metric    string   `json:"metric"`
	Key       string   `json:"key"`
	RunID     int32    `json:"run_id"`
	Run       string   `json:"run"`
	Value     float64  `json:"value"`
	Baseline  *float64 `json:"baseline"`
	Change    *float64 `json:"change"`
	ChangePct *float64 `json:"change_pct"`
}

type valueKey struct {
	metric, key string
	run         int32
}

// Crossed tells whether any threshold was crossed.
func (r *Report) Crossed() bool { return len(r.Crossings) > 0 }

// Value returns the value of a metric for a key in a run.
func (r *Report) Value(metric, key string, run int32) (Value, bool) {
	i, ok := r.index[valueKey{metric, key, run}]
	if !ok {
		return Value{}, false
	}
	return r.Values[i], true
}

// metric returns the metric of that name.
func (r *Report) metric(name string) *Metric {
	for i := range r.Metrics {
		if r.Metrics[i].Name == name {
			return &r.Metrics[i]
		}
	}
	return nil
}

// baselineRun returns the baseline among r.Runs.
func (r *Report) baselineRun() *Run {
	for i := range r.Runs {
		if r.Runs[i].Baseline {
			return &r.Runs[i]
		}
	}
	return nil
}

// OptionError is a mistake in the options (a selector that selects
// nothing, an unknown baseline, a threshold on an unknown metric), as
// opposed to a failure of the work: a command line says so with its usage
// exit code.
type OptionError struct{ Err error }

func (e *OptionError) Error() string { return e.Err.Error() }
func (e *OptionError) Unwrap() error { return e.Err }

// Build computes the report over the database behind db.
func Build(ctx context.Context, db *sql.DB, opt Options) (*Report, error) {
	metrics, err := mergeMetrics(DefaultMetrics(), opt.Metrics)
	if err != nil {
		return nil, err
	}
	for i := range opt.Thresholds {
		t := &opt.Thresholds[i]
		m := findMetric(metrics, t.Metric)
		if m == nil {
			var names []string
			for _, m := range metrics {
				names = append(names, m.Name)
			}
			return nil, &OptionError{fmt.Errorf("--fail-on %q: no metric %s (the metrics: %s)", t.Spec, t.Metric, strings.Join(names, ", "))}
		}
		if err := t.check(m); err != nil {
			return nil, &OptionError{err}
		}
	}
	if opt.Top <= 0 {
		opt.Top = 10
	}

	// The selection first, on a connection of the pool of its own.
	selected, err := queries.SelectRuns(ctx, db, opt.Runs)
	if err != nil {
		return nil, &OptionError{fmt.Errorf("--runs: %w", err)}
	}
	// Temporary tables belong to one connection: the rest of the report
	// runs on one.
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()

	all, err := loadRuns(ctx, conn)
	if err != nil {
		return nil, err
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("%s: no runs (ingest traces with 'traceduck ingest --db %s --name NAME TRACE')", opt.Database, opt.Database)
	}
	var runs []Run
	for _, s := range selected {
		for _, r := range all {
			if r.ID == s.ID {
				runs = append(runs, r)
			}
		}
	}
	if err := OrderRuns(runs, opt.Order); err != nil {
		return nil, &OptionError{err}
	}
	base := runs[0]
	if opt.Baseline != "" {
		if base, err = findBaseline(all, opt.Baseline); err != nil {
			return nil, &OptionError{err}
		}
		if !containsRun(runs, base.ID) {
			// A baseline outside the selection joins the report, first.
			runs = append([]Run{base}, runs...)
		}
	}
	for i := range runs {
		runs[i].Baseline = runs[i].ID == base.ID
		runs[i].Compared = !runs[i].Baseline && runs[i].Format == base.Format
	}

	rep := &Report{
		Version:    Version,
		Database:   opt.Database,
		Baseline:   RunRef{base.ID, base.Name},
		Runs:       runs,
		Metrics:    metrics,
		Thresholds: opt.Thresholds,
		Values:     []Value{},
		Crossings:  []Crossing{},
		Hists:      []Hist{},
		Window:     opt.Window,
		index:      map[valueKey]int{},
	}
	if rep.Thresholds == nil {
		rep.Thresholds = []Threshold{}
	}
	ids := idList(runIDs(runs))
	user := metrics[len(metrics)-len(opt.Metrics):]
	expand := func() error {
		if opt.Expand == nil {
			return nil
		}
		err := opt.Expand(ctx, conn)
		opt.Expand = nil
		return err
	}
	useStored := opt.Window == nil && !opt.Recompute && opt.Top <= summaryTop
	if len(user) > 0 || !useStored {
		if err := expand(); err != nil {
			return nil, err
		}
	}

	// A metric's mistakes show before the long work.
	for i := range user {
		if err := checkColumns(ctx, conn, &user[i]); err != nil {
			return nil, err
		}
	}
	var catalog string
	if err := conn.QueryRowContext(ctx, "SELECT current_database()").Scan(&catalog); err != nil {
		return nil, err
	}
	cat := queries.Ident(catalog) + ".main."

	// The runs' summaries: stored ones of this version, else computed
	// now (live), from the window's rows under --from/--to. With
	// opt.Store, those computed are stored first, for the next report.
	stored := map[int32]bool{}
	var liveRuns []Run
	var storedRuns []int32
	split := func() error {
		if useStored {
			var err error
			drop, err := idTable(ctx, conn, "report_selected", runIDs(runs))
			defer drop()
			if err != nil {
				return err
			}
			if stored, err = storedSummaries(ctx, conn, cat, "temp.main.report_selected"); err != nil {
				return err
			}
		}
		liveRuns, storedRuns = nil, nil
		for _, r := range runs {
			if !stored[r.ID] {
				liveRuns = append(liveRuns, r)
			} else {
				storedRuns = append(storedRuns, r.ID)
			}
		}
		return nil
	}
	if err := split(); err != nil {
		return nil, err
	}
	if len(liveRuns) > 0 {
		if err := expand(); err != nil {
			return nil, err
		}
	}
	if useStored && opt.Store && len(liveRuns) > 0 {
		if rep.StoreErr = storeSummaries(ctx, conn, catalog, liveRuns); rep.StoreErr == nil {
			if err := split(); err != nil {
				return nil, err
			}
		}
	}
	if opt.Window != nil {
		dropWindow, err := applyWindow(ctx, conn, catalog, ids, opt.Window)
		defer dropWindow()
		if err != nil {
			return nil, err
		}
		if err := rep.windowRuns(ctx, conn); err != nil {
			return nil, err
		}
		// The runs' events in the window, for the chunks.
		for i := range liveRuns {
			for _, r := range rep.Runs {
				if r.ID == liveRuns[i].ID {
					liveRuns[i].Events = r.Events
				}
			}
		}
	}
	live := summaryTables{}
	for _, name := range schema.ReportTables()[1:] {
		live[name] = "temp.main." + strings.Replace(name, "report_", "report_live_", 1)
	}
	if len(liveRuns) > 0 {
		dropLive, err := createLiveTables(ctx, conn, live)
		defer dropLive()
		if err != nil {
			return nil, err
		}
	}
	whats := []string{}
	for _, h := range opt.Hists {
		if !contains(whats, h.What) {
			whats = append(whats, h.What)
		}
	}
	if len(liveRuns) > 0 && len(user) == 0 {
		restore, err := limitLiveMemory(ctx, conn)
		if err != nil {
			return nil, err
		}
		defer restore()
	}
	// summarize computes the live summaries of the runs ids, whose views
	// are materialized.
	summarize := func(ids []int32) error {
		return computeSummaries(ctx, conn, idList(ids), live, whats, opt.Top)
	}
	// The views the summaries read (materialize), computed once for the
	// runs of a chunk at a time; for the user's metrics, which may read
	// them for any run, once for every run.
	if len(user) > 0 {
		drop, err := materialize(ctx, conn, catalog, ids, opt.Window != nil)
		defer drop()
		if err == nil && opt.Window != nil {
			err = fixWindowCuts(ctx, conn)
		}
		if err == nil && len(liveRuns) > 0 {
			err = summarize(runIDs(liveRuns))
		}
		if err != nil {
			return nil, err
		}
	} else {
		for _, chunk := range chunks(liveRuns) {
			drop, err := materialize(ctx, conn, catalog, idList(chunk), opt.Window != nil)
			if err == nil && opt.Window != nil {
				err = fixWindowCuts(ctx, conn)
			}
			if err == nil {
				err = summarize(chunk)
			}
			drop()
			if err != nil {
				return nil, err
			}
		}
	}
	// source is the rows of a summaries' table: the stored ones of the
	// runs read, the live ones of the others.
	dropStored, err := idTable(ctx, conn, "report_stored", storedRuns)
	defer dropStored()
	if err != nil {
		return nil, err
	}
	source := func(table string) string {
		var parts []string
		if len(storedRuns) > 0 {
			parts = append(parts, fmt.Sprintf("SELECT * FROM %s%s WHERE run_id IN (SELECT run_id FROM temp.main.report_stored)", cat, table))
		}
		if len(liveRuns) > 0 {
			parts = append(parts, "SELECT * FROM "+live[table])
		}
		return strings.Join(parts, "\nUNION ALL ")
	}

	if err := rep.readValues(ctx, conn, "SELECT run_id, metric, key, value FROM ("+source(schema.TableReportValues)+")"); err != nil {
		return nil, err
	}
	for i := range user {
		if err := rep.computeMetric(ctx, conn, &user[i], ids); err != nil {
			return nil, err
		}
	}
	rep.compare()
	rep.checkThresholds()
	rep.sortCrossings()
	if err := rep.readDetails(ctx, conn, source, opt.Top); err != nil {
		return nil, err
	}
	for _, h := range opt.Hists {
		hist, err := readHist(ctx, conn, h, source(schema.TableReportBuckets))
		if err != nil {
			return nil, err
		}
		pos := rep.runPositions()
		sort.SliceStable(hist.Runs, func(i, j int) bool { return pos[hist.Runs[i].RunID] < pos[hist.Runs[j].RunID] })
		rep.Hists = append(rep.Hists, hist)
	}
	return rep, nil
}

// createLiveTables creates the tables of live (the temporary twins of
// the summaries' tables, by their names), which hold the summaries a
// report computes; drop removes them.
func createLiveTables(ctx context.Context, conn *sql.Conn, live summaryTables) (drop func(), err error) {
	drop = func() {
		for _, name := range live {
			_, _ = conn.ExecContext(context.WithoutCancel(ctx), "DROP TABLE IF EXISTS "+name)
		}
	}
	drop() // what an interrupted report left on this connection
	for table, name := range live {
		if _, err := conn.ExecContext(ctx, schema.TempTableDDL(table, strings.TrimPrefix(name, "temp.main."))); err != nil {
			return drop, err
		}
	}
	return drop, nil
}

// readValues reads the default metrics' values from the summaries (from:
// a query of report_values' columns).
func (r *Report) readValues(ctx context.Context, conn *sql.Conn, from string) error {
	defaults := DefaultMetrics()
	rows, err := conn.QueryContext(ctx, from)
	if err != nil {
		return fmt.Errorf("report: the metrics' values: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var v Value
		if err := rows.Scan(&v.RunID, &v.Metric, &v.Key, &v.Value); err != nil {
			return err
		}
		m := findMetric(defaults, v.Metric)
		if m == nil || math.IsNaN(v.Value) || math.IsInf(v.Value, 0) {
			continue // no JSON for it, and nothing to compare
		}
		if err := r.addValue(m, v); err != nil {
			return err
		}
	}
	return rows.Err()
}

// addValue adds a value of metric m; a second one for its run and key is
// an error.
func (r *Report) addValue(m *Metric, v Value) error {
	k := valueKey{m.Name, v.Key, v.RunID}
	if _, dup := r.index[k]; dup {
		return fmt.Errorf("%s: metric %s: expected one row per run and key, found two for run %d and key %q", m.where(), m.Name, v.RunID, v.Key)
	}
	r.index[k] = len(r.Values)
	r.Values = append(r.Values, v)
	return nil
}

func runIDs(runs []Run) []int32 {
	out := make([]int32, len(runs))
	for i, r := range runs {
		out[i] = r.ID
	}
	return out
}

// mergeMetrics appends the user's metrics to the defaults; a name defined
// twice is an error.
func mergeMetrics(defaults, user []Metric) ([]Metric, error) {
	out := append([]Metric(nil), defaults...)
	for _, m := range user {
		if prev := findMetric(out, m.Name); prev != nil {
			return nil, fmt.Errorf("%s: metric %s: already defined at %s", m.where(), m.Name, prev.where())
		}
		out = append(out, m)
	}
	return out, nil
}

func findMetric(ms []Metric, name string) *Metric {
	for i := range ms {
		if ms[i].Name == name {
			return &ms[i]
		}
	}
	return nil
}

func containsRun(runs []Run, id int32) bool {
	for _, r := range runs {
		if r.ID == id {
			return true
		}
	}
	return false
}

// materializedViews are the views that several metrics and the run
// details read: each is computed once, for the selected runs, into a
// temporary table of the same name, which DuckDB finds before the view
// (the temp catalog comes first in its search path) — in the queries of
// the report and in the views that read it, too. task_instances,
// sched_latency and sched_stats are computed from rows written at ingest
// (sched.sql), which a window does not clip (applyWindow shadows
// state_intervals): under a window they are computed from the clipped
// intervals by their references instead (from). Without one,
// task_instances and sched_latency are read in place (stored) unless
// the runs are small (copyStoredEvents).
var materializedViews = []struct {
	name, from string
	stored     bool
}{
	{"task_instances", "task_instances_reference()", true},
	{"sched_latency", "sched_latency_reference()", true},
	{"sched_stats", "sched_stats_reference()", false},
}

// copyStoredEvents: runs of at most this many events (together) have
// their stored views copied too. DuckDB plans task_instances (with its
// fallback to the reference) in about 40 ms, and four metrics read it:
// copied once, a 6-event run's summary took 0.25 CPU-s instead of 0.5.
// On long runs the copy costs more than it saves, in time and memory:
// the summary of a 100M-event BTF run took 86 CPU-s and peaked at
// 790 MB with the copies, 58 CPU-s and 580 MB without.
const copyStoredEvents = 1_000_000

// stepViews are computed first under a window, for the references above
// to read, and dropped once these are made: task_instances_reference and
// sched_latency_reference both walk sched_neighbours (a window over every
// scheduling interval), which is then computed once instead of twice (on
// 100 runs of 100k events, 23 s instead of 38 s, for about the same
// memory).
var stepViews = []string{"sched_neighbours"}

// materialize creates the temporary tables; drop removes them, so that
// the connection, back in its pool, sees the views again.
func materialize(ctx context.Context, conn *sql.Conn, catalog, ids string, window bool) (drop func(), err error) {
	type step struct{ name, from string }
	var steps []step
	all := append([]string(nil), stepViews...)
	var events int64
	if err := conn.QueryRowContext(ctx, fmt.Sprintf("SELECT coalesce(sum(event_count), 0)::BIGINT FROM %s.main.runs WHERE run_id IN %s", queries.Ident(catalog), ids)).Scan(&events); err != nil {
		return func() {}, err
	}
	small := events <= copyStoredEvents
	if window {
		for _, v := range stepViews {
			steps = append(steps, step{v, v})
		}
	}
	for _, v := range materializedViews {
		all = append(all, v.name)
		switch {
		case window:
			steps = append(steps, step{v.name, v.from})
		case !v.stored || small:
			steps = append(steps, step{v.name, v.name})
		}
	}
	dropTables := func(names []string) {
		for _, v := range names {
			_, _ = conn.ExecContext(context.WithoutCancel(ctx), "DROP TABLE IF EXISTS temp.main."+v)
		}
	}
	drop = func() { dropTables(all) }
	drop() // what an interrupted report left on this connection
	for _, v := range steps {
		q := fmt.Sprintf("CREATE TEMP TABLE %s AS SELECT * FROM %s.main.%s WHERE run_id IN %s", v.name, queries.Ident(catalog), v.from, ids)
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return drop, fmt.Errorf("report: %s of the selected runs: %w", v.name, err)
		}
		if v.name == "sched_latency" {
			dropTables(stepViews)
		}
	}
	return drop, nil
}

// checkColumns tells whether a metric's query returns run_id, key, value
// (DuckDB plans it without running it).
func checkColumns(ctx context.Context, conn *sql.Conn, m *Metric) error {
	rows, err := conn.QueryContext(ctx, "SELECT * FROM ("+m.SQL+"\n) AS metric LIMIT 0")
	if err != nil {
		return fmt.Errorf("%s: metric %s: %w", m.where(), m.Name, err)
	}
	cols, err := rows.Columns()
	rows.Close()
	if err != nil {
		return fmt.Errorf("%s: metric %s: %w", m.where(), m.Name, err)
	}
	if strings.Join(cols, ", ") != "run_id, key, value" {
		return fmt.Errorf("%s: metric %s: expected the columns run_id, key, value, found %s", m.where(), m.Name, strings.Join(cols, ", "))
	}
	return nil
}

// computeMetric runs one metric's query for the selected runs.
func (r *Report) computeMetric(ctx context.Context, conn *sql.Conn, m *Metric, ids string) error {
	q := "SELECT CAST(run_id AS INTEGER), coalesce(CAST(key AS VARCHAR), ''), CAST(value AS DOUBLE) FROM (" + m.SQL +
		"\n) AS metric WHERE run_id IN " + ids + " AND value IS NOT NULL"
	rows, err := conn.QueryContext(ctx, q)
	if err != nil {
		return fmt.Errorf("%s: metric %s: %w", m.where(), m.Name, err)
	}
	defer rows.Close()
	for rows.Next() {
		var v Value
		if err := rows.Scan(&v.RunID, &v.Key, &v.Value); err != nil {
			return fmt.Errorf("%s: metric %s: %w", m.where(), m.Name, err)
		}
		if math.IsNaN(v.Value) || math.IsInf(v.Value, 0) {
			continue // no JSON for it, and nothing to compare
		}
		v.Metric = m.Name
		if err := r.addValue(m, v); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("%s: metric %s: %w", m.where(), m.Name, err)
	}
	return nil
}

// runPositions maps a run_id to the run's place in the report.
func (r *Report) runPositions() map[int32]int {
	pos := map[int32]int{}
	for i, run := range r.Runs {
		pos[run.ID] = i
	}
	return pos
}

// compare fills in the changes from the baseline and puts the values in
// a stable order: metric (as defined), key, run (report order).
func (r *Report) compare() {
	base := r.baselineRun()
	pos := r.runPositions()
	compared := map[int32]bool{}
	for _, run := range r.Runs {
		compared[run.ID] = run.Compared
	}
	for i := range r.Values {
		v := &r.Values[i]
		if !compared[v.RunID] {
			continue
		}
		b, ok := r.Value(v.Metric, v.Key, base.ID)
		if !ok {
			continue
		}
		bv, change := b.Value, v.Value-b.Value
		v.Baseline, v.Change = &bv, &change
		if bv != 0 {
			pct := 100 * change / math.Abs(bv)
			v.ChangePct = &pct
		}
	}
	order := map[string]int{}
	for i, m := range r.Metrics {
		order[m.Name] = i
	}
	sort.SliceStable(r.Values, func(i, j int) bool {
		a, b := &r.Values[i], &r.Values[j]
		if a.Metric != b.Metric {
			return order[a.Metric] < order[b.Metric]
		}
		if a.Key != b.Key {
			return a.Key < b.Key
		}
		return pos[a.RunID] < pos[b.RunID]
	})
	for i, v := range r.Values {
		r.index[valueKey{v.Metric, v.Key, v.RunID}] = i
	}
}

// checkThresholds lists every value beyond a threshold. A value threshold
// applies to every run; a change threshold to the runs compared with the
// baseline, for the keys the baseline has. A relative change from a
// baseline of 0 is infinite (crossing any limit in its direction).
func (r *Report) checkThresholds() {
	names := map[int32]string{}
	for _, run := range r.Runs {
		names[run.ID] = run.label()
	}
	for ti := range r.Thresholds {
		t := &r.Thresholds[ti]
		for _, v := range r.Values {
			if v.Metric != t.Metric || !t.matches(v.Key) {
				continue
			}
			var x float64
			switch t.Mode {
			case ModeValue:
				x = v.Value
			case ModeChange:
				if v.Change == nil {
					continue
				}
				x = *v.Change
			case ModeRelative:
				switch {
				case v.Change == nil:
					continue
				case v.ChangePct != nil:
					x = *v.ChangePct
				case *v.Change == 0:
					x = 0
				default:
					x = math.Inf(int(math.Copysign(1, *v.Change)))
				}
			}
			if t.crossed(x) {
				r.Crossings = append(r.Crossings, Crossing{
					Threshold: t.Spec, Metric: v.Metric, Key: v.Key, RunID: v.RunID, Run: names[v.RunID],
					Value: v.Value, Baseline: v.Baseline, Change: v.Change, ChangePct: v.ChangePct,
				})
			}
		}
	}
}

// Describe says what crossed in words: "response_p99 of Task_1 in v3:
// 2.659 ms -> 3.672 ms, +1.013 ms (+38.1%)".
func (r *Report) Describe(c Crossing) string {
	m := r.metric(c.Metric)
	s := fmt.Sprintf("%s of %s in %s: ", c.Metric, keyLabel(c.Key), c.Run)
	if c.Baseline != nil {
		s += fmtValue(m.Unit, *c.Baseline) + " -> "
	}
	s += fmtValue(m.Unit, c.Value)
	if c.Change != nil {
		s += ", " + changeText(m.Unit, c.Change, c.ChangePct)
	}
	return s
}

// sortCrossings orders the crossings by threshold (as given), run (report
// order), metric (as defined) and key.
func (r *Report) sortCrossings() {
	pos := r.runPositions()
	th := map[string]int{}
	for i, t := range r.Thresholds {
		if _, dup := th[t.Spec]; !dup {
			th[t.Spec] = i
		}
	}
	mi := map[string]int{}
	for i, m := range r.Metrics {
		mi[m.Name] = i
	}
	sort.SliceStable(r.Crossings, func(i, j int) bool {
		a, b := &r.Crossings[i], &r.Crossings[j]
		switch {
		case th[a.Threshold] != th[b.Threshold]:
			return th[a.Threshold] < th[b.Threshold]
		case pos[a.RunID] != pos[b.RunID]:
			return pos[a.RunID] < pos[b.RunID]
		case mi[a.Metric] != mi[b.Metric]:
			return mi[a.Metric] < mi[b.Metric]
		}
		return a.Key < b.Key
	})
}

// crossingsOf returns the crossings of one metric, key and run (an index
// built at the first call: the outputs ask for every value of every run).
func (r *Report) crossingsOf(metric, key string, run int32) []Crossing {
	if r.crossed == nil || r.crossedN != len(r.Crossings) {
		r.crossed, r.crossedN = map[valueKey][]Crossing{}, len(r.Crossings)
		for _, c := range r.Crossings {
			k := valueKey{c.Metric, c.Key, c.RunID}
			r.crossed[k] = append(r.crossed[k], c)
		}
	}
	return r.crossed[valueKey{metric, key, run}]
}
