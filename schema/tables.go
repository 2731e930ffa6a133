package schema

import (
	"fmt"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
)

// Table names. Every table carries run_id; one run is one ingested trace.
const (
	TableRuns           = "runs"
	TableObjects        = "objects"
	TableEvents         = "events"
	TableEcoTriples     = "eco_triples"
	TableStateIntervals = "state_intervals"
	TableStateLevels    = "state_levels"
	TableDiagnostics    = "diagnostics"
	TableAggregations   = "aggregations"
	TableHistograms     = "histograms"
	// TableResourceIntervals holds the holds and waits of resources
	// (resources.go); the views resource_holds and resource_waits read it.
	TableResourceIntervals = "resource_intervals"
	TableMessages          = "messages"
	// TablePriorityIntervals holds the priorities of tasks and threads
	// over time (priorities.go); the view priority_inversions reads it.
	TablePriorityIntervals = "priority_intervals"
	// TableClocks holds each run's clock alignment to its system's
	// reference run (clocks.go); the view system_events reads it.
	TableClocks = "clocks"
	// TableStateLevelIntervals holds the state traces of the aggregation
	// levels above 0, merged while the run is written (levels.go); the
	// macro state_trace_levels reads it for the objects that
	// TableStateLevelObjects marks materialized.
	TableStateLevelIntervals = "state_level_intervals"
	TableStateLevelObjects   = "state_level_objects"
	// TableSchedInstances and TableSchedWaits hold the rows of the views
	// task_instances and sched_latency, written at ingest (sched.go), and
	// TableSchedDurations what sched_stats summarizes; TableSchedRuns says
	// which runs have them, TableSchedFallback which objects of those runs
	// the views take from the reference SQL.
	TableSchedInstances = "sched_instances"
	TableSchedWaits     = "sched_waits"
	TableSchedDurations = "sched_durations"
	TableSchedRuns      = "sched_runs"
	TableSchedFallback  = "sched_fallback"
	// TableStateLevelPaths holds the rows of the view state_level_map,
	// made from the run's levels when it ends (levelmap.go).
	TableStateLevelPaths = "state_level_paths"
	// TableEcoTreeNodes holds the nodes of eco_tree's six hierarchies,
	// made when the run ends from its eco-triples (ecotree.go).
	TableEcoTreeNodes = "eco_tree_nodes"
	// TableStateTreeRuns, TableStateTreeNodes and TableStateTreeTargets
	// hold the state statistics tree of whole runs (statetree.go).
	TableStateTreeRuns    = "state_tree_runs"
	TableStateTreeNodes   = "state_tree_nodes"
	TableStateTreeTargets = "state_tree_targets"
	// The report's per-run summaries (queries/report, summary.go): what
	// traceduck report shows of a run, computed once, in the run's ingest
	// (DB.SetSummarize), so that a report over many runs reads a few rows
	// per run instead of computing its views over every event. A run
	// without a summary, or with one of another version, is summarized by
	// the report itself.
	TableReportSummaries   = "report_summaries"
	TableReportValues      = "report_values"
	TableReportBuckets     = "report_hist_buckets"
	TableReportObjects     = "report_objects"
	TableReportStates      = "report_states"
	TableReportDiagnostics = "report_diagnostics"
	TableReportCPULoad     = "report_cpu_load"
)

// ReportTables are the tables of the report's summaries, report_summaries
// first (the one row per run that says a summary is there).
func ReportTables() []string {
	return []string{TableReportSummaries, TableReportValues, TableReportBuckets, TableReportObjects,
		TableReportStates, TableReportDiagnostics, TableReportCPULoad}
}

// TableSymbols is the base table of the strings that events and
// state_intervals keep as symbol ids: the names of classes, events and
// states, dense ids from 0, shared by every run of the database.
//
// Why not VARCHAR columns: DuckDB 1.1 loads a VARCHAR column of few
// values at about 2.2 s per 10M rows on this machine, against 0.3 s for
// an INTEGER one (it appends each string, hashes it for its statistics and
// dictionary, and analyzes it for FSST). events.class, events.event and
// state_intervals.state made half of a 10M-event BTF ingest. The views
// events and state_intervals give them back as strings, in the same
// columns, in the order the rows were written.
const TableSymbols = "symbols"

var symbolsTable = table{name: TableSymbols, doc: "the strings of the symbol columns of events and state_intervals, shared by all runs", columns: []column{
	{"sym", "INTEGER NOT NULL", i32, "dense from 0, in order of first use"},
	{"name", "VARCHAR", str, ""},
}, extra: "PRIMARY KEY (sym)"}

// TableLateSymbols is not a table of the database: the batch, sent last
// by a run, that names the keys of its lateSymbol columns; the sink
// writes each into symbols under the id it gave the key.
const TableLateSymbols = "traceduck_late_symbols"

var lateSymbolsTable = table{name: TableLateSymbols, doc: "the names of a run's late symbols (not a table of the database)", columns: []column{
	{"key", "INTEGER NOT NULL", i32, "the run's key"},
	{"name", "VARCHAR", str, ""},
}}

// TablePruneLevels is not a table of the database either: the batch a
// run sends after its state_level_objects rows when some of the rows it
// wrote to state_level_intervals are not its merged intervals (those of
// an object left to the reference; those made for a sequence the object
// turned out not to be: see per_instance). The sink deletes them, so that
// the views read state_level_intervals without joining it to
// state_level_objects.
const TablePruneLevels = "traceduck_prune_levels"

var pruneLevelsTable = table{name: TablePruneLevels, doc: "a run whose state_level_intervals rows must be pruned (not a table of the database)", columns: []column{
	{"run_id", "INTEGER NOT NULL", i32, ""},
}}

// column is one column of a table: its SQL type and the Arrow type the
// run writer builds it as. The Arrow schema of a table lists exactly the
// table's columns in order, because batches are loaded with
// INSERT INTO t SELECT * FROM batch (see db.go for why never a projection).
type column struct {
	name  string
	sql   string
	arrow arrow.DataType
	doc   string
}

type table struct {
	name    string
	doc     string
	columns []column
	extra   string // table constraints appended to the DDL
	// rows, when set, makes the table a view over the base table of that
	// name, which stores each of its symbol columns as symbol ids
	// (<column>_sym INTEGER, see TableSymbols).
	rows string
}

var (
	i32  = arrow.PrimitiveTypes.Int32
	i64  = arrow.PrimitiveTypes.Int64
	f64  = arrow.PrimitiveTypes.Float64
	str  = arrow.BinaryTypes.String
	boo  = arrow.FixedWidthTypes.Boolean
	dict = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	// symbol marks a column that a view reads from a symbol id (a VARCHAR
	// of the contract stored as INTEGER): its batches carry the id, int32.
	symbol arrow.DataType = &symbolType{}
	// lateSymbol marks a symbol column whose names are known only at the
	// end of the run (levels.go: the name of a CPU's process at level 1
	// is decided by CPUTracker.finish). The batches carry the run's own
	// key numbers (dense from 0); the sink gives each key a symbol id of
	// its own when it first meets it, and writes the names into symbols
	// when the run sends them, last (TableLateSymbols). Such a symbol's
	// name may be one that another symbol has too: the views read names
	// by id, and a run looking a name up takes the smallest id.
	lateSymbol arrow.DataType = &symbolType{late: true}
	strList                   = arrow.ListOf(arrow.BinaryTypes.String)
	tstmp                     = &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
)

type symbolType struct {
	arrow.Int32Type
	late bool
}

// derivedType marks a column of a view that is computed from the others
// of its row rather than stored: expr, over the base table's columns
// (r.<name>).
type derivedType struct {
	arrow.Int64Type
	expr string
}

func derived(expr string) arrow.DataType { return &derivedType{expr: expr} }

// derived returns a computed column's expression.
func (c column) derived() (string, bool) {
	d, ok := c.arrow.(*derivedType)
	if !ok {
		return "", false
	}
	return d.expr, true
}

// storedColumns are the columns of a table's batches and base table: all
// but the computed ones.
func (t *table) storedColumns() []column {
	out := make([]column, 0, len(t.columns))
	for _, c := range t.columns {
		if _, ok := c.derived(); !ok {
			out = append(out, c)
		}
	}
	return out
}

// isSymbol tells a symbol column (by type: pointers to zero-size values
// may compare equal), late or not.
func (c column) isSymbol() bool {
	_, ok := c.arrow.(*symbolType)
	return ok
}

// isLateSymbol tells a column of lateSymbol.
func (c column) isLateSymbol() bool {
	t, ok := c.arrow.(*symbolType)
	return ok && t.late
}

// tables is the table contract of DESIGN.md. Times are BIGINT nanoseconds
// on the trace's own time base.
var tables = []table{
	{name: TableRuns, doc: "one row per ingested trace", columns: []column{
		{"run_id", "INTEGER NOT NULL", i32, "run number in this database, from 1"},
		{"name", "VARCHAR", str, "--name, or the file's base name"},
		{"source", "VARCHAR", str, "path of the ingested file, '-' for standard input"},
		{"format", "VARCHAR", str, "ingester that read it"},
		{"sha256", "VARCHAR", str, "hex sha256 of the file's bytes"},
		{"ingested_at", "TIMESTAMPTZ", tstmp, "when the ingest committed"},
		{"time_unit", "VARCHAR", str, "the source's time unit (ns, us, cycles, ...)"},
		{"ns_per_unit", "DOUBLE", f64, "ts = raw * ns_per_unit"},
		{"event_count", "BIGINT", i64, "rows in events"},
		{"first_ts", "BIGINT", i64, "smallest event ts"},
		{"last_ts", "BIGINT", i64, "largest event ts"},
		{"meta", "JSON", str, "header attributes of the trace"},
		{"tags", "JSON", str, "user --tag k=v"},
	}, extra: "PRIMARY KEY (run_id)"},
	{name: TableObjects, doc: "one row per traced entity", columns: []column{
		{"run_id", "INTEGER NOT NULL", i32, ""},
		{"object_id", "INTEGER NOT NULL", i32, "dense per run, from 1"},
		{"kind", "VARCHAR", dict, "task, isr, runnable, thread, process, interrupt, cpu, semaphore, ..."},
		{"name", "VARCHAR", str, "name as the trace writes it"},
		{"native_id", "BIGINT", i64, "the trace's numeric id (tid, pid, core index, ...)"},
		{"pid", "BIGINT", i64, "owning process id, where the format has one"},
		{"parent_id", "INTEGER", i32, "object_id of the owner (thread -> process)"},
		{"attrs", "JSON", str, "format-specific attributes"},
	}},
	{name: TableEvents, doc: "one row per event, in trace order", rows: "event_rows", columns: []column{
		{"run_id", "INTEGER NOT NULL", i32, ""},
		{"seq", "BIGINT NOT NULL", i64, "ordinal in the run, from 1"},
		{"ts", "BIGINT", i64, "ns"},
		{"ts_raw", "BIGINT", i64, "timestamp in the source unit, kept where the conversion to ns loses information"},
		{"cpu", "INTEGER", i32, "processor the event happened on"},
		{"class", "VARCHAR", symbol, "event class (BTF: target type)"},
		{"event", "VARCHAR", symbol, "event name (BTF: action)"},
		{"context_id", "INTEGER", i32, "object in whose context it happened (BTF: source)"},
		{"object_id", "INTEGER", i32, "main object (BTF: target)"},
		{"source_instance", "BIGINT", i64, ""},
		{"target_instance", "BIGINT", i64, ""},
		{"value", "VARCHAR", str, "the event's value as written (BTF: note)"},
		{"args", "JSON", str, "other fields"},
		{"eco_id", "INTEGER", i32, "the event's eco-triple"},
		{"src_line", "BIGINT", i64, "line in the source file (binary formats: byte offset)"},
	}},
	{name: TableEcoTriples, doc: "one row per distinct (class, event, context, object)", columns: []column{
		{"run_id", "INTEGER NOT NULL", i32, ""},
		{"eco_id", "INTEGER NOT NULL", i32, "dense per run, from 1"},
		{"class", "VARCHAR", dict, ""},
		{"event", "VARCHAR", dict, ""},
		{"context_id", "INTEGER", i32, ""},
		{"object_id", "INTEGER", i32, ""},
		{"count", "BIGINT", i64, "events with this triple"},
	}},
	// The event statistics tree (queries/eco_tree.sql, eco_tree) of each
	// of its six orders, as numbers: ranking, grouping and sorting the
	// triples' names took eco_tree longer than a tenth of the ingest on
	// runs of many triples, and it is the same tree at every query. The
	// view names the nodes from their eco_id; a time window counts a node's
	// events in the leaves from pos to last_pos. The SQL definition stays as
	// eco_tree_reference, which tests compare these rows with; a run
	// without rows here (an older traceduck's) is answered by it.
	{name: TableEcoTreeNodes, doc: "one row per node of the event statistics tree of each order (eco_tree): its place in the depth-first order by name", columns: []column{
		{"run_id", "INTEGER NOT NULL", i32, ""},
		{"ord_no", "INTEGER", i32, "the order (ord of eco_tree): 1 eco, 2 eoc, 3 ceo, 4 coe, 5 oec, 6 oce"},
		{"depth", "INTEGER", i32, "0 the run, 1 group, 2 event/context/object, 3 pair, 4 triple"},
		{"pos", "INTEGER", i32, "place in the run's depth-first order, siblings by name (eco_tree's sort_by := 'name'), from 1"},
		{"parent_pos", "INTEGER", i32, "pos of its parent (NULL for the run)"},
		{"last_pos", "INTEGER", i32, "pos of the last node of its subtree (a triple: pos itself)"},
		{"count", "BIGINT", i64, "events under the node"},
		{"eco_id", "INTEGER", i32, "the smallest eco_id under the node (a triple: its own): its names are the node's"},
	}},
	// The state statistics tree (queries/state_tree.sql, state_stats_tree)
	// of whole runs, both orders, made when the run ends from the
	// statistics the writer kept of every node while the intervals closed
	// (statetree.go): grouping two million durations per query, and
	// building the tree, took the view more than a tenth of the ingest. A
	// percentile the writer could not tell exactly (it keeps a histogram of
	// each node's durations, not the durations) is left NULL here with its
	// targets in state_tree_targets: the view reads only the durations in
	// that bucket of the histogram. The SQL definition stays as
	// state_stats_tree_reference, which tests compare the view with; a run
	// without its row in state_tree_runs (an older traceduck's, or one
	// whose levels the views merge: state_level_objects) is answered by the
	// SQL.
	{name: TableStateTreeRuns, doc: "one row per run whose state statistics tree (state_stats_tree) was written at ingest into state_tree_nodes", columns: []column{
		{"run_id", "INTEGER NOT NULL", i32, ""},
		{"nodes", "BIGINT", i64, "its rows in state_tree_nodes (both orders)"},
	}},
	{name: TableStateTreeNodes, doc: "one row per node of the state statistics tree of each order (state_stats_tree of a whole run), in depth-first order", columns: []column{
		{"run_id", "INTEGER NOT NULL", i32, ""},
		{"ord_no", "INTEGER", i32, "the order (ord of state_stats_tree): 1 kos, 2 kso"},
		{"pos", "INTEGER", i32, "place in the run's depth-first order, siblings by label (sort_by := 'name'), from 1"},
		{"pos_total", "INTEGER", i32, "place in the depth-first order with siblings by total, largest first (sort_by := 'total')"},
		{"depth", "INTEGER", i32, "0 run, 1 kind, then objects and states"},
		{"node", "VARCHAR", str, "run, kind, object, state"},
		{"label", "VARCHAR", str, "the kind, object or state (NULL for the run: the view names it)"},
		{"level", "INTEGER", i32, "a state node's aggregation level"},
		{"count", "BIGINT", i64, "its intervals not truncated"},
		{"total_ns", "BIGINT", i64, ""},
		{"max_ns", "BIGINT", i64, ""},
		{"p50_ns", "BIGINT", i64, "NULL when count is 0, or when state_tree_targets has its targets (since 2026-11-27 only when the ingest could not write its temporary file of durations)"},
		{"p90_ns", "BIGINT", i64, ""},
		{"p99_ns", "BIGINT", i64, ""},
		{"truncated", "BIGINT", i64, "its intervals cut by the start or the end of the trace"},
		{"path", "VARCHAR[]", strList, "the labels from depth 1 down"},
		{"kind", "VARCHAR", str, ""},
		{"object_id", "INTEGER", i32, ""},
		{"object", "VARCHAR", str, ""},
		{"state", "VARCHAR", str, ""},
	}},
	{name: TableStateTreeTargets, doc: "one row per percentile of a state_tree_nodes row that the ingest could not tell, and group of intervals (object, level, state) under the node with durations in the percentile's bucket: the view takes the rank-th smallest duration of a node's rows here", rows: "state_tree_target_rows", columns: []column{
		{"run_id", "INTEGER NOT NULL", i32, ""},
		{"ord_no", "INTEGER", i32, ""},
		{"pos", "INTEGER", i32, "the node (state_tree_nodes.pos)"},
		{"pct", "INTEGER", i32, "1 p50, 2 p90, 3 p99"},
		{"object_id", "INTEGER", i32, ""},
		{"level", "INTEGER", i32, ""},
		{"state", "VARCHAR", symbol, "the state at level 0 (NULL above, or a NULL state)"},
		{"level_state", "VARCHAR", lateSymbol, "the state at the levels above 0"},
		{"lo", "BIGINT", i64, "ns: the bucket's least duration"},
		{"hi", "BIGINT", i64, "ns: its greatest"},
		{"rank", "BIGINT", i64, "the percentile is the rank-th smallest duration in the bucket, among the node's rows"},
	}},
	{name: TableStateIntervals, doc: "one row per time an object spent in one state", rows: "state_interval_rows", columns: []column{
		{"run_id", "INTEGER NOT NULL", i32, ""},
		{"object_id", "INTEGER", i32, ""},
		{"instance", "BIGINT", i64, "object instance (BTF task instance); 0 where the format has none"},
		{"state", "VARCHAR", symbol, ""},
		{"start_ts", "BIGINT", i64, "ns"},
		{"end_ts", "BIGINT", i64, "ns"},
		{"dur", "BIGINT", derived("r.end_ts - r.start_ts"), "end_ts - start_ts (computed by the view, not stored: 8M fewer values to load for a 10M-event BTF trace)"},
		{"cpu", "INTEGER", i32, "processor of the event that opened the interval"},
		{"start_seq", "BIGINT", i64, "event that opened it"},
		{"end_seq", "BIGINT", i64, "event that closed it (NULL when truncated)"},
		{"truncated", "BOOLEAN", boo, "cut by the start or the end of the trace"},
	}},
	{name: TableStateLevels, doc: "aggregation of a state to the next level", columns: []column{
		{"run_id", "INTEGER NOT NULL", i32, ""},
		{"kind", "VARCHAR", dict, "object kind the state belongs to"},
		{"state", "VARCHAR", str, "state at this level"},
		{"level", "INTEGER", i32, "0 = atomic state as in state_intervals"},
		{"parent_state", "VARCHAR", str, "the state it aggregates into at level+1"},
	}},
	// What each state named in state_levels is at every level of its kind
	// (the view state_level_map): its SQL looks each step up in a MAP,
	// which DuckDB scans, 0.6-0.9 s for the thousands of states of a large
	// run's processors, in every view that knows whether a CPU is busy
	// (cpu_intervals). The SQL stays as state_level_map_reference, which
	// tests compare these rows with; a run without rows here (an older
	// traceduck's) is answered by it.
	{name: TableStateLevelPaths, doc: "one row per state named in state_levels and level of its kind: what the state is at that level (the rows of the view state_level_map)", columns: []column{
		{"run_id", "INTEGER NOT NULL", i32, ""},
		{"kind", "VARCHAR", dict, "object kind"},
		{"atomic", "VARCHAR", str, "the state taken at level 0"},
		{"level", "INTEGER", i32, "0 to the kind's depth"},
		{"state", "VARCHAR", str, "what atomic is at that level"},
	}},
	{name: TableDiagnostics, doc: "one row per problem found in the input", columns: []column{
		{"run_id", "INTEGER NOT NULL", i32, ""},
		{"src_line", "BIGINT", i64, "first line (binary: byte offset) where it was seen"},
		{"seq", "BIGINT", i64, "first event it concerns"},
		{"severity", "VARCHAR", dict, "info, warning, error"},
		{"message", "VARCHAR", str, ""},
		{"count", "BIGINT", i64, "how many times it was seen"},
	}},
	// The two tables of printed aggregations (DTrace printa and its
	// default END output, bpftrace maps): what a tracing script computed
	// in the kernel, as opposed to the events it printed. A histogram is
	// identified within a run by (agg, key); ingest/dtrace/README.md says
	// how agg, title and key are read from the text.
	{name: TableAggregations, doc: "one row per key of a scalar aggregation (count, sum, avg, min, max, ...) printed in the trace", columns: []column{
		{"run_id", "INTEGER NOT NULL", i32, ""},
		{"agg", "VARCHAR", dict, "the aggregation: bpftrace @name; DTrace #N, N its order of printing in the file"},
		{"title", "VARCHAR", dict, "heading printed just above the aggregation (a printf before printa); NULL when none"},
		{"key", "VARCHAR", str, "the key as printed: its lines trimmed, joined by a newline; '' for an aggregation without key"},
		{"keys", "JSON", str, "the key's fields as a list of strings (split of the printed key, see the format's README)"},
		{"value", "BIGINT", i64, "the value as printed (may be negative)"},
		{"src_line", "BIGINT", i64, "line of the value"},
	}},
	{name: TableHistograms, doc: "one row per bucket of a distribution (DTrace quantize, lquantize, llquantize; bpftrace hist, lhist) printed in the trace", columns: []column{
		{"run_id", "INTEGER NOT NULL", i32, ""},
		{"agg", "VARCHAR", dict, "as in aggregations"},
		{"title", "VARCHAR", dict, "as in aggregations"},
		{"key", "VARCHAR", str, "as in aggregations"},
		{"keys", "JSON", str, "as in aggregations"},
		{"func", "VARCHAR", dict, "quantize, lquantize, llquantize (DTrace: inferred from the printed values), hist, lhist (bpftrace); NULL when the values do not tell"},
		{"label", "VARCHAR", str, "the bucket as printed: 1024, < 0, >= 170, [2, 4)"},
		{"bucket_lo", "BIGINT", i64, "smallest value the bucket holds; NULL for an underflow bucket (no lower bound)"},
		{"bucket_hi", "BIGINT", i64, "first value past the bucket (exclusive); NULL for an overflow bucket (no upper bound)"},
		{"count", "BIGINT", i64, "the count printed (a weighted quantize can make it negative)"},
		{"src_line", "BIGINT", i64, "line of the bucket's row"},
	}},
	// Holds and waits have a table of their own rather than being state
	// intervals of the resource (docs/semantics.md, "Resources: holds and
	// waits"): a hold or a wait relates two objects, several of them are
	// open on one resource at once, and the resource's own states (BTF's
	// free, used, full, overfull) and their statistics stay as they are.
	{name: TableResourceIntervals, doc: "one row per time a task, thread or ISR held a resource (semaphore, mutex, lock, queue, ...) or waited for one", columns: []column{
		{"run_id", "INTEGER NOT NULL", i32, ""},
		{"resource_id", "INTEGER", i32, "the resource's object"},
		{"resource_kind", "VARCHAR", dict, "semaphore, mutex, lock, queue, ... (the format's word; the object's kind by default)"},
		{"relation", "VARCHAR", dict, "hold: the actor held (owned, was assigned) the resource; wait: it waited for it"},
		{"actor_id", "INTEGER", i32, "the task, thread or ISR that held it or waited for it"},
		{"actor_instance", "BIGINT", i64, "the actor's instance where the format numbers them (BTF: the source instance); NULL otherwise"},
		{"start_ts", "BIGINT", i64, "ns: the assignment (hold), the request that blocked (wait); the run's first event when it began before the trace"},
		{"end_ts", "BIGINT", i64, "ns: the release (hold), the assignment or giving up (wait); the run's last event when the trace ended first"},
		{"dur", "BIGINT", i64, "end_ts - start_ts"},
		{"start_seq", "BIGINT", i64, "event that opened it (NULL when it began before the trace)"},
		{"end_seq", "BIGINT", i64, "event that closed it (NULL when the trace ended first)"},
		{"ended", "VARCHAR", dict, "released (hold), assigned or gave_up (wait); NULL when the trace ended first"},
		{"truncated", "BOOLEAN", boo, "cut by the start or the end of the trace"},
	}},
	// Messages between tasks or threads (docs/semantics.md, "Messages:
	// round trips"): one row per message, written by the run's
	// MessageTracker (messages.go) when the message ends, from what a
	// format's state machine tells it (send, receive, reply). The view
	// message_round_trips (queries/messages.sql) adds the names and the
	// durations.
	{name: TableMessages, doc: "one row per message sent between tasks or threads (a round trip: send, receive, reply; a one-way message: send, receive)", columns: []column{
		{"run_id", "INTEGER NOT NULL", i32, ""},
		{"msg_id", "BIGINT", i64, "the trace's id of the message (QNX: a message's rcvid, a pulse's scoid); NULL when it has none"},
		{"one_way", "BOOLEAN", boo, "a one-way message (QNX: a pulse): no reply is expected"},
		{"client_id", "INTEGER", i32, "the sender (the context of the send); NULL when the trace does not tell"},
		{"server_id", "INTEGER", i32, "the receiver: the thread that received it, else the receiver the send names (QNX: the server process)"},
		{"channel_id", "INTEGER", i32, "the channel or connection it went through (kind channel); NULL when the trace does not name one"},
		{"send_ts", "BIGINT", i64, "ns; NULL when the send is not in the trace"},
		{"receive_ts", "BIGINT", i64, "ns; NULL when the receive is not in the trace"},
		{"reply_ts", "BIGINT", i64, "ns, the reply delivered to the client; NULL for a one-way message, and when the reply is not in the trace"},
		{"send_seq", "BIGINT", i64, "event of the send"},
		{"receive_seq", "BIGINT", i64, "event of the receive"},
		{"reply_seq", "BIGINT", i64, "event of the reply"},
		{"truncated", "BOOLEAN", boo, "one of its events (send, receive, reply; a one-way message: send, receive) is not in the trace"},
	}},
	// Priorities of tasks and threads over time (docs/semantics.md,
	// "Priorities"): a table of their own rather than state intervals of
	// the task, so that sched_intervals, state_stats and the histograms of
	// task states stay what the trace says of its scheduling, and so that
	// priorities stay numbers the views can compare. Written by the run's
	// PriorityTracker (priorities.go).
	{name: TablePriorityIntervals, doc: "one row per time a task or thread kept one base and one effective priority", columns: []column{
		{"run_id", "INTEGER NOT NULL", i32, ""},
		{"object_id", "INTEGER", i32, "the task or thread"},
		{"base", "BIGINT", i64, "its base priority, the format's number (created with, or set by set_priority, chg_pri); NULL when the format tells only the priority it runs at"},
		{"effective", "BIGINT", i64, "the priority it runs at, the format's number: the base, or raised by priority inheritance or a ceiling"},
		{"urgency", "BIGINT", i64, "effective on one scale for every format, larger is more urgent: the number where larger numbers are more urgent (runs.meta.priority_order = higher_first: FreeRTOS, QNX), its negation where smaller ones are (lower_first: TOPPERS/ITRON)"},
		{"start_ts", "BIGINT", i64, "ns: the change (or the first time the trace told it)"},
		{"end_ts", "BIGINT", i64, "ns: the next change; the run's last event when the trace ended first"},
		{"dur", "BIGINT", i64, "end_ts - start_ts"},
		{"start_seq", "BIGINT", i64, "event that told it"},
		{"end_seq", "BIGINT", i64, "event that changed it (NULL when the trace ended first)"},
		{"truncated", "BOOLEAN", boo, "cut by the end of the trace"},
	}},
	// The clock of a run of a system (docs/semantics.md, "Aligned time"): a
	// table of its own rather than columns of runs, because a run's row is
	// written once by its ingest and says what the trace is, while a
	// clock alignment is a judgment about several runs together, made
	// (and remade, as runs join the system or the user corrects it) after
	// they are all in, by traceduck align; its rows are replaced without
	// touching runs, and a database of an older traceduck gains the table
	// when opened. Written by DB.SetClocks (clocks.go), never by an ingest.
	// The reference is the system's run whose source is reference, not a
	// run id in a column: run_id is the only column an export renumbers.
	{name: TableClocks, doc: "one row per run of a system whose clock is aligned to the system's reference run: aligned = ts + offset_ns + round((ts - ref_ts) * drift_ppm / 1e6)", columns: []column{
		{"run_id", "INTEGER NOT NULL", i32, ""},
		{"offset_ns", "BIGINT", i64, "ns to add to the run's ts at ref_ts to get the reference clock's time"},
		{"drift_ppm", "DOUBLE", f64, "how much faster the reference clock runs than the run's, in ppm (1 ppm = 1 µs per s); 0 when not estimated"},
		{"ref_ts", "BIGINT", i64, "the run's time at which offset_ns applies (drift counts from it)"},
		{"offset_lo_ns", "BIGINT", i64, "smallest offset at ref_ts that the messages allow (with any drift in the drift bounds); NULL: no bound on this side"},
		{"offset_hi_ns", "BIGINT", i64, "largest; NULL: no bound on this side"},
		{"drift_lo_ppm", "DOUBLE", f64, "smallest drift the messages allow; NULL when drift was not estimated"},
		{"drift_hi_ppm", "DOUBLE", f64, "largest; NULL when drift was not estimated"},
		{"source", "VARCHAR", str, "reference (the run of the system whose clock aligned times are on: offset 0, drift 0), user (given), messages (estimated from the messages), none (no message with an aligned run: offset 0 assumed)"},
		{"sent", "BIGINT", i64, "messages the run sent to aligned runs that the estimate used"},
		{"received", "BIGINT", i64, "messages it received from them"},
		{"note", "VARCHAR", str, "what the estimate rests on, in words (one-sided bound, inconsistent messages, ...)"},
	}},
	// The state traces of the aggregation levels above 0 (queries/
	// state_aggregation.sql, state_trace_levels: the intervals of an
	// object mapped up the levels of state_levels, and those of the same
	// state that meet merged), written while the run is read (levels.go)
	// so that state_stats and every reader of the levels above 0 scan
	// them instead of merging millions of intervals per query. The SQL
	// definition stays as state_trace_levels_reference; a test per format
	// proves these rows equal its rows.
	{name: TableStateLevelIntervals, doc: "one row per time an object spent in one state at an aggregation level above 0 (the merged intervals of state_trace_levels)", rows: "state_level_interval_rows", columns: []column{
		{"run_id", "INTEGER NOT NULL", i32, ""},
		{"object_id", "INTEGER", i32, ""},
		{"instance", "BIGINT", i64, "the instance of its parts; NULL when they came from several"},
		{"level", "INTEGER", i32, "aggregation level, 1 and up (state_levels)"},
		{"state", "VARCHAR", lateSymbol, "the state at that level"},
		{"start_ts", "BIGINT", i64, "ns: the start of its first part"},
		{"end_ts", "BIGINT", i64, "ns: the end of its last part"},
		{"dur", "BIGINT", derived("r.end_ts - r.start_ts"), "end_ts - start_ts (computed by the view)"},
		{"cpu", "INTEGER", i32, "processor of its parts; NULL when they ran on several, or one is not known"},
		{"start_seq", "BIGINT", i64, "event that opened its first part"},
		{"end_seq", "BIGINT", i64, "event that closed its last part (NULL when cut by the end of the trace)"},
		{"parts", "BIGINT", i64, "the state_intervals rows it is made of"},
		{"truncated", "BOOLEAN", boo, "a part was cut by the start or the end of the trace"},
		{"per_instance", "BOOLEAN", boo, "NULL: a merged interval of the object whichever its sequences; false: one of an object that is one sequence, made of intervals of several instances; true: one of an object whose instances are each a sequence, where the intervals came as if the object were one (the ingest made both, and kept the ones state_level_objects.per_instance says)"},
	}},
	// Which objects' merged intervals are in state_level_intervals: one
	// row per object whose kind has levels (state_level_depth). An object
	// whose intervals could not be merged while the run was read (levels.go
	// says when) is marked not materialized, and the views compute its
	// levels from state_intervals with the reference SQL, as they do for
	// every object of a run written by a traceduck before this table
	// (which has no row here).
	{name: TableStateLevelObjects, doc: "one row per object whose kind has aggregation levels: whether its merged intervals are in state_level_intervals", columns: []column{
		{"run_id", "INTEGER NOT NULL", i32, ""},
		{"object_id", "INTEGER", i32, ""},
		{"materialized", "BOOLEAN", boo, "true: its intervals at the levels above 0 are the rows of state_level_intervals; false: the views merge them from state_intervals (state_trace_levels_reference)"},
		{"per_instance", "BOOLEAN", boo, "its intervals overlap, so each of its instances is a sequence of its own (state_trace_levels_reference, step 2); NULL when not materialized"},
	}},
	// The scheduling rows (schema/sched.go): the views task_instances and
	// sched_latency (queries/sched.sql) computed from the state intervals
	// by windows over each object's intervals, which took longer than the
	// ingest on large runs, written by the state tracker as it closes the
	// intervals. The SQL stays as the reference (task_instances_reference,
	// sched_latency_reference) that tests compare these rows with; a run
	// without a row in sched_runs (an older traceduck's) and the objects of
	// sched_fallback are answered by it.
	{name: TableSchedInstances, rows: "sched_instance_rows", doc: "one row per task instance (the rows of the view task_instances, without names)", columns: []column{
		{"run_id", "INTEGER NOT NULL", i32, ""},
		{"object_id", "INTEGER", i32, "the task, ISR or thread"},
		{"instance", "BIGINT", i64, "BTF's instance number; else 1, 2, ... per object (and state instance)"},
		{"woke_from", "VARCHAR", symbol, "the state before its activation, when it woke from a blocked state"},
		{"activation_ts", "BIGINT", i64, "ns"},
		{"start_ts", "BIGINT", i64, "first time running; NULL if never"},
		{"end_ts", "BIGINT", i64, "ns"},
		{"response", "BIGINT", derived("r.end_ts - r.activation_ts"), "end_ts - activation_ts"},
		{"start_delay", "BIGINT", derived("r.start_ts - r.activation_ts"), "start_ts - activation_ts"},
		{"exec", "BIGINT", i64, "ns running"},
		{"ready", "BIGINT", i64, "ns ready"},
		{"waiting", "BIGINT", i64, "ns waiting (BTF: waiting, polling, parking)"},
		{"preemptions", "BIGINT", i64, "times it went from running to ready"},
		{"migrations", "BIGINT", i64, "times it ran on another CPU than the time before"},
		{"truncated", "BOOLEAN", boo, "cut by the start or the end of the trace"},
	}},
	{name: TableSchedWaits, doc: "one row per wait of a task, ISR or thread for a CPU (the rows of the view sched_latency, without names)", columns: []column{
		{"run_id", "INTEGER NOT NULL", i32, ""},
		{"object_id", "INTEGER", i32, "the task, ISR or thread"},
		{"ready_ts", "BIGINT", i64, "ns: it became ready"},
		{"run_ts", "BIGINT", i64, "ns: it started running"},
		{"cpu", "INTEGER", i32, "the CPU it then ran on"},
		{"preempted", "BOOLEAN", boo, "ready after running (a preemption); false: after a blocked state or at activation (a wake-up)"},
		{"truncated", "BOOLEAN", boo, "the wait began at the start of the trace"},
	}},
	// Not the state intervals again: only what sched_stats needs of each,
	// as numbers (the class is a code: a VARCHAR of few values loads
	// several times slower, see TableSymbols), so that sched_stats reads
	// five narrow columns instead of decoding and classifying every state
	// interval's name.
	{name: TableSchedDurations, doc: "one row per state interval of a task, ISR or thread with a scheduling class (the intervals of sched_intervals, reduced to what the view sched_stats summarizes)", columns: []column{
		{"run_id", "INTEGER NOT NULL", i32, ""},
		{"object_id", "INTEGER", i32, "the task, ISR or thread"},
		{"class", "INTEGER", i32, "the scheduling class (sched_class): 1 running, 2 ready, 3 waiting, 4 blocked"},
		{"dur", "BIGINT", i64, "end_ts - start_ts"},
		{"truncated", "BOOLEAN", boo, "cut by the start or the end of the trace"},
	}},
	{name: TableSchedRuns, doc: "one row per run whose task_instances and sched_latency rows were written at ingest", columns: []column{
		{"run_id", "INTEGER NOT NULL", i32, ""},
		{"intervals", "BIGINT", i64, "state intervals with a scheduling class the ingest walked (rows written to sched_durations)"},
		{"instances", "BIGINT", i64, "rows written to sched_instances"},
		{"waits", "BIGINT", i64, "rows written to sched_waits"},
		{"fallback", "BIGINT", i64, "objects in sched_fallback"},
	}},
	{name: TableSchedFallback, doc: "one row per object whose task_instances and sched_latency rows the views take from the reference SQL, and why", columns: []column{
		{"run_id", "INTEGER NOT NULL", i32, ""},
		{"object_id", "INTEGER", i32, ""},
		{"reason", "VARCHAR", dict, "kind changed, intervals out of order, tie in a wait, instance reused, too many instances ended out of order (schema/sched.go)"},
	}},
	// The report's summaries (docs/report.md, "Scale"): rows the ingest
	// computes from the run's own tables with the report's SQL
	// (queries/report/metrics.sql and summary.go) and that traceduck
	// report reads instead of computing them again. Derived data, like
	// the views: version says what computed it, and a report computes a
	// summary of another version (or a missing one) again itself.
	// Rows, not a JSON document per run: DuckDB rewrites a table's last
	// row group at every checkpoint; with a run's section as one JSON
	// string (16 KB), an ingest after 500 runs ran out of its 128 MiB at a
	// checkpoint, which DuckDB took for a fatal error.
	{name: TableReportSummaries, doc: "one row per run whose report summary is stored (in the other report_ tables)", columns: []column{
		{"run_id", "INTEGER NOT NULL", i32, ""},
		{"version", "VARCHAR", str, "what computed the summary (a hash of the SQL of the views and metrics it ran); a report uses only summaries of its own version"},
	}},
	{name: TableReportValues, doc: "one row per default metric of traceduck report (queries/report/metrics.sql) and key of a run: the metric's value", columns: []column{
		{"run_id", "INTEGER NOT NULL", i32, ""},
		{"metric", "VARCHAR", str, "the metric's name (response_p99, cpu_load, ...)"},
		{"key", "VARCHAR", str, "an object's or a CPU's name, '' for the run"},
		{"value", "DOUBLE", f64, "the metric's value for the key in the run"},
	}},
	{name: TableReportBuckets, doc: "one row per latency of report --hist, object and power-of-two bucket of a run: how many values fell in it", columns: []column{
		{"run_id", "INTEGER NOT NULL", i32, ""},
		{"what", "VARCHAR", str, "the latency: response, start_delay, sched_latency, running, ready, waiting, blocked"},
		{"object", "VARCHAR", str, "the object's name"},
		{"bucket", "BIGINT", i64, "the bucket's lower edge in ns (quantize_bucket_int: 0, then powers of two)"},
		{"count", "BIGINT", i64, "values in [bucket, 2 bucket)"},
	}},
	{name: TableReportObjects, doc: "one row per task, ISR or thread name of a run, the first 50 by running time: the report's run section", columns: []column{
		{"run_id", "INTEGER NOT NULL", i32, ""},
		{"rank", "BIGINT", i64, "1 for the longest running time (ties by name)"},
		{"object", "VARCHAR", str, "the objects' name (objects of one name are one)"},
		{"kind", "VARCHAR", str, "their kind"},
		{"running_ns", "BIGINT", i64, "time running (sched_stats, complete intervals)"},
		{"running_share", "DOUBLE", f64, "of the run's duration"},
		{"instances", "BIGINT", i64, "complete instances (task_instances)"},
		{"response_p50_ns", "BIGINT", i64, "median response time, nearest rank"},
		{"response_p90_ns", "BIGINT", i64, ""},
		{"response_p99_ns", "BIGINT", i64, ""},
		{"response_max_ns", "BIGINT", i64, ""},
	}},
	{name: TableReportStates, doc: "one row per object of report_objects and scheduling class: its sched_stats row (of the object of that name with the longest running time)", columns: []column{
		{"run_id", "INTEGER NOT NULL", i32, ""},
		{"object", "VARCHAR", str, ""},
		{"class", "VARCHAR", str, "running, ready, waiting, blocked"},
		{"count", "BIGINT", i64, ""},
		{"total_ns", "BIGINT", i64, ""},
		{"mean_ns", "DOUBLE", f64, ""},
		{"p50_ns", "BIGINT", i64, ""},
		{"p90_ns", "BIGINT", i64, ""},
		{"p99_ns", "BIGINT", i64, ""},
		{"max_ns", "BIGINT", i64, ""},
		{"share", "DOUBLE", f64, "of the object's known time"},
	}},
	{name: TableReportDiagnostics, doc: "one row per diagnostic message of a run, the 5 most frequent", columns: []column{
		{"run_id", "INTEGER NOT NULL", i32, ""},
		{"rank", "BIGINT", i64, "1 for the most frequent"},
		{"severity", "VARCHAR", str, ""},
		{"message", "VARCHAR", str, ""},
		{"count", "BIGINT", i64, ""},
	}},
	{name: TableReportCPULoad, doc: "one row per CPU and window of a run: the report's CPU load plot (the macro cpu_load, about 150 windows over the run)", columns: []column{
		{"run_id", "INTEGER NOT NULL", i32, ""},
		{"cpu", "VARCHAR", str, "the CPU's name"},
		{"window_ns", "BIGINT", i64, "the windows' length"},
		{"t_ns", "BIGINT", i64, "the window's start, from the run's first event"},
		{"load", "DOUBLE", f64, "0..1"},
	}},
}

var jsonExtension = arrow.NewMetadata([]string{"ARROW:extension:name", "ARROW:extension:metadata"}, []string{"arrow.json", ""})

func lookupTable(name string) *table {
	for i := range tables {
		if tables[i].name == name {
			return &tables[i]
		}
	}
	if name == TableSymbols {
		return &symbolsTable
	}
	if name == TableLateSymbols {
		return &lateSymbolsTable
	}
	if name == TablePruneLevels {
		return &pruneLevelsTable
	}
	panic("schema: no table " + name)
}

// stored returns the base table that holds a table's rows: itself, or the
// table of symbol ids under its view.
func stored(name string) string {
	if t := lookupTable(name); t.rows != "" {
		return t.rows
	}
	return name
}

// StorageTables lists the base tables that are not tables of the contract
// but hold the rows of its views (see TableSymbols). An export of a
// database reads the views instead.
func StorageTables() []string {
	out := []string{TableSymbols}
	for _, t := range tables {
		if t.rows != "" {
			out = append(out, t.rows)
		}
	}
	return out
}

// storedName is the name of a column in the base table.
func (c column) storedName() string {
	if c.isSymbol() {
		return c.name + "_sym"
	}
	return c.name
}

// DDL returns the statements that create whatever does not exist yet: the
// base tables, the symbols, then the views over the tables of symbol ids.
// A view is not replaced when it exists, so that opening a database
// writes nothing.
func DDL() string {
	var b strings.Builder
	for _, t := range append(tables[:len(tables):len(tables)], symbolsTable) {
		b.WriteString(tableDDL(t))
	}
	for _, t := range tables {
		if t.rows != "" {
			b.WriteString(viewDDL(t, "CREATE VIEW IF NOT EXISTS"))
		}
	}
	return b.String()
}

// tableDDL creates the base table of t: a symbol column is stored as
// <column>_sym INTEGER in the table t.rows.
func tableDDL(t table) string {
	var b strings.Builder
	name, doc := t.name, t.doc
	if t.rows != "" {
		name, doc = t.rows, fmt.Sprintf("the rows of the view %s, its strings as symbol ids", t.name)
	}
	fmt.Fprintf(&b, "-- %s: %s\nCREATE TABLE IF NOT EXISTS %s (\n", name, doc, name)
	cols := t.storedColumns()
	for i, c := range cols {
		sep := ","
		if i == len(cols)-1 && t.extra == "" {
			sep = ""
		}
		typ := c.sql
		if c.isSymbol() {
			typ = "INTEGER"
		}
		fmt.Fprintf(&b, "    %s %s%s\n", c.storedName(), typ, sep)
	}
	if t.extra != "" {
		fmt.Fprintf(&b, "    %s\n", t.extra)
	}
	b.WriteString(");\n")
	return b.String()
}

// viewDDL is the view of a table kept as symbol ids. The names are looked
// up in one list per query (a range join fills any gap in the ids with
// NULL): unlike a join, a list lookup keeps the rows in the order of the
// base table, the order they were written in.
func viewDDL(t table, create string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "-- %s: %s\n%s %s AS\nSELECT ", t.name, t.doc, create, t.name)
	for i, c := range t.columns {
		if i > 0 {
			b.WriteString(", ")
		}
		if expr, ok := c.derived(); ok {
			fmt.Fprintf(&b, "%s AS %s", expr, c.name)
		} else if c.isSymbol() {
			fmt.Fprintf(&b, "s.names[r.%s + 1] AS %s", c.storedName(), c.name)
		} else {
			fmt.Fprintf(&b, "r.%s", c.name)
		}
	}
	fmt.Fprintf(&b, "\nFROM %s r, (SELECT list(y.name ORDER BY i.i) AS names\n"+
		"      FROM range((SELECT coalesce(max(sym) + 1, 0) FROM %s)) i(i) LEFT JOIN %s y ON y.sym = i.i) s;\n",
		t.rows, TableSymbols, TableSymbols)
	return b.String()
}

// ArrowSchema returns the Arrow schema of a table's record batches, which
// are the rows of its base table: a symbol column is its id (<column>_sym,
// int32) and a computed column is not there.
func ArrowSchema(name string) *arrow.Schema {
	cols := lookupTable(name).storedColumns()
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		fields[i] = arrow.Field{Name: c.storedName(), Type: c.arrow, Nullable: !strings.Contains(c.sql, "NOT NULL")}
		if c.isSymbol() {
			fields[i].Type = i32
		}
		if c.sql == "JSON" {
			// Marked as Arrow's JSON extension, DuckDB takes the strings as
			// JSON as they are; a plain string column would be cast to
			// JSON, which parses every value and made loading QNX events
			// (all with args) several times slower. The writers make only
			// valid JSON; tests check it (internal/dbtest).
			fields[i].Metadata = jsonExtension
		}
	}
	return arrow.NewSchema(fields, nil)
}

// TempTableDDL creates a temporary table name with the columns of the
// table (its stored columns, their SQL types): a twin of the table on one
// connection.
func TempTableDDL(table, name string) string {
	var cols []string
	for _, c := range lookupTable(table).storedColumns() {
		typ := c.sql
		if c.isSymbol() {
			typ = "INTEGER"
		}
		cols = append(cols, c.storedName()+" "+typ)
	}
	return "CREATE TEMP TABLE " + name + " (" + strings.Join(cols, ", ") + ")"
}

// Columns returns the column names of a table, in order.
func Columns(name string) []string {
	t := lookupTable(name)
	out := make([]string, len(t.columns))
	for i, c := range t.columns {
		out[i] = c.name
	}
	return out
}

// DerivedTables lists the tables whose rows an ingest computes from the
// state intervals and eco-triples it writes (sched.go, levels.go,
// ecotree.go), rather than from the trace: the rows of views that have a
// SQL reference.
func DerivedTables() []string {
	return []string{TableSchedInstances, TableSchedWaits, TableSchedDurations, TableSchedRuns, TableSchedFallback,
		TableStateLevelIntervals, TableStateLevelObjects, TableStateLevelPaths, TableEcoTreeNodes,
		TableStateTreeRuns, TableStateTreeNodes, TableStateTreeTargets}
}

// TableNames lists the tables in the order they are created.
func TableNames() []string {
	out := make([]string, len(tables))
	for i, t := range tables {
		out[i] = t.name
	}
	return out
}

// TableDoc is a table's description and its columns with theirs (the
// table contract as traceduck views prints it); ok is false for a name
// that is no table.
func TableDoc(name string) (doc string, cols [][2]string, ok bool) {
	for _, t := range tables {
		if t.name != name {
			continue
		}
		for _, c := range t.columns {
			cols = append(cols, [2]string{c.name, c.doc})
		}
		return t.doc, cols, true
	}
	return "", nil, false
}
