package bench

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/marcboeker/go-duckdb"

	"github.com/traceduck/traceduck/ingest"
	_ "github.com/traceduck/traceduck/ingest/all" // every format
	"github.com/traceduck/traceduck/ingest/tlv"
	"github.com/traceduck/traceduck/queries"
	"github.com/traceduck/traceduck/schema"
)

// ChildEnv is set in the environment of the child processes tracebench
// runs each measurement in; a program that sees it calls Child instead of
// its main (cmd/tracebench, and the test binary of its test).
const ChildEnv = "TRACEBENCH_CHILD"

// childResult is what a child prints on its standard output (JSON).
type childResult struct {
	Seconds    float64            // wall time of the measured work
	CPUSeconds float64            // user + system time of the measured work
	Events     int64              // events ingested (ingest), rows loaded (csv), standard-format lines written (convert)
	Queries    map[string]float64 // views: seconds per query
	QueriesCPU map[string]float64 // views: CPU seconds (user + system) per query
	Rows       map[string]int64   // views: rows per query
	// PeakRSS is the child's peak resident set (bytes), VmHWM of
	// /proc/self/status at the end. Not the Maxrss of the rusage wait4
	// returns: Go starts a child with clone(CLONE_VM|CLONE_VFORK), and
	// Linux carries the high-water mark of the memory the child shared
	// with its parent until exec into the child's Maxrss, so that figure
	// is never below the parent's own peak.
	PeakRSS int64
}

// Child runs one measurement (args: ingest, convert, csv or views, then its flags)
// and prints its result; it returns the exit code.
func Child(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "tracebench child: want ingest, convert, csv or views")
		return 2
	}
	fs := flag.NewFlagSet("tracebench child "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	format := fs.String("format", "", "ingest: the format")
	var params paramFlag
	fs.Var(&params, "param", "ingest: a format flag k=v (repeatable)")
	dbPath := fs.String("db", "", "the database file")
	cpuProfile := fs.String("cpuprofile", "", "ingest, convert: write a CPU profile of the measured work")
	memProfile := fs.String("memprofile", "", "ingest: write a heap profile at the end of the ingest")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	ctx := context.Background()
	var res childResult
	var err error
	switch args[0] {
	case "ingest":
		if fs.NArg() != 1 {
			fmt.Fprintln(stderr, "tracebench child ingest: want one trace")
			return 2
		}
		res, err = childIngest(ctx, fs.Arg(0), *dbPath, *format, params, *cpuProfile, *memProfile)
	case "convert":
		if fs.NArg() != 1 {
			fmt.Fprintln(stderr, "tracebench child convert: want one log")
			return 2
		}
		res, err = childConvert(ctx, fs.Arg(0), *format, params, *cpuProfile)
	case "csv":
		if fs.NArg() != 1 {
			fmt.Fprintln(stderr, "tracebench child csv: want one BTF file")
			return 2
		}
		res, err = childCSV(ctx, fs.Arg(0), *dbPath)
	case "views":
		res, err = childViews(ctx, *dbPath)
	default:
		err = fmt.Errorf("unknown child %q", args[0])
	}
	if err != nil {
		fmt.Fprintf(stderr, "tracebench child %s: %v\n", args[0], err)
		return 1
	}
	res.PeakRSS = PeakRSS()
	if err := json.NewEncoder(stdout).Encode(res); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	return 0
}

type paramFlag map[string]string

func (p *paramFlag) String() string { return fmt.Sprint(map[string]string(*p)) }
func (p *paramFlag) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok {
		return fmt.Errorf("want k=v, got %q", s)
	}
	if *p == nil {
		*p = paramFlag{}
	}
	(*p)[k] = v
	return nil
}

// PeakRSS is the process's peak resident set in bytes (VmHWM), 0 where
// /proc/self/status does not tell it.
func PeakRSS() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				return 0
			}
			return kb * 1024
		}
	}
	return 0
}

// ResetPeakRSS makes VmHWM the current resident set (Linux 4.0 and
// later; elsewhere nothing happens), so that PeakRSS measures what comes
// next.
func ResetPeakRSS() {
	os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

// cpuTime is the process's user + system time so far.
func cpuTime() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// childIngest is traceduck's whole ingest, as `traceduck ingest` does it:
// open (create) the database, install the views, ingest, close.
func childIngest(ctx context.Context, trace, dbPath, format string, params map[string]string, cpuProfile, memProfile string) (childResult, error) {
	stopProfile, err := startCPUProfile(cpuProfile)
	if err != nil {
		return childResult{}, err
	}
	start, cpu0 := time.Now(), cpuTime()
	db, err := schema.Open(ctx, dbPath)
	if err != nil {
		return childResult{}, err
	}
	if err := queries.Install(ctx, db.SQL()); err != nil {
		db.Close()
		return childResult{}, err
	}
	res, err := ingest.Path(ctx, db, trace, ingest.Options{Format: format, Params: params})
	if err != nil {
		db.Close()
		return childResult{}, err
	}
	if memProfile != "" {
		// the heap as the ingest left it, and everything it allocated
		runtime.GC()
		if err := writeHeapProfile(memProfile); err != nil {
			db.Close()
			return childResult{}, err
		}
	}
	if err := db.Close(); err != nil {
		return childResult{}, err
	}
	out := childResult{Seconds: time.Since(start).Seconds(), CPUSeconds: cpuTime() - cpu0, Events: res.Events}
	stopProfile()
	return out, nil
}

// startCPUProfile starts a CPU profile into path (none when path is
// empty) and returns what stops it and closes the file.
func startCPUProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// childConvert is the TLV rule engine alone, as `traceduck convert LOG
// >/dev/null` runs it: read the raw lines, match the conversion rules,
// expand their outputs into standard-format lines, apply each to the
// resources' state (what the conditions and macros of later lines read)
// and write its text, here into a writer that only counts the lines. No
// database, no tables. The measured time starts once the resource file
// and the rule files are read and parsed (ingest.Configure); it includes
// compiling the rules (tlv.NewReader: milliseconds) and the end of the
// log (the last FMP lines leaving the reorder window, the summary).
func childConvert(ctx context.Context, trace, format string, params map[string]string, cpuProfile string) (childResult, error) {
	ing, err := ingest.Lookup(format)
	if err != nil {
		return childResult{}, err
	}
	configured, err := ingest.Configure(ing, params)
	if err != nil {
		return childResult{}, err
	}
	conv, ok := configured.(*tlv.Ingester)
	if !ok {
		return childResult{}, fmt.Errorf("format %s has no conversion rules", format)
	}
	stopProfile, err := startCPUProfile(cpuProfile)
	if err != nil {
		return childResult{}, err
	}
	defer stopProfile()
	start, cpu0 := time.Now(), cpuTime()
	src, err := ingest.Open(trace)
	if err != nil {
		return childResult{}, err
	}
	defer src.Close()
	var out lineCounter
	if _, err := conv.Convert(ctx, src, &out, false); err != nil {
		return childResult{}, err
	}
	return childResult{Seconds: time.Since(start).Seconds(), CPUSeconds: cpuTime() - cpu0, Events: out.lines}, nil
}

// lineCounter is io.Discard that counts the lines written.
type lineCounter struct{ lines int64 }

func (c *lineCounter) Write(p []byte) (int, error) {
	c.lines += int64(bytes.Count(p, []byte{'\n'}))
	return len(p), nil
}

func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.WriteHeapProfile(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// BaselineSQL loads a BTF file into a plain table with DuckDB's CSV reader:
// the eight fields of a BTF line (the note is optional: null_padding), the
// '#' header lines skipped.
func BaselineSQL(path string) string {
	return `CREATE TABLE btf AS SELECT * FROM read_csv(` + queries.Literal(path) + `,
		auto_detect = false, header = false, delim = ',', quote = '', escape = '', comment = '#', null_padding = true,
		columns = {'ts': 'BIGINT', 'source': 'VARCHAR', 'source_instance': 'BIGINT', 'type': 'VARCHAR',
		           'target': 'VARCHAR', 'target_instance': 'BIGINT', 'event': 'VARCHAR', 'note': 'VARCHAR'})`
}

// childCSV is the baseline: DuckDB's read_csv of the BTF file into a
// plain table of a new database, through the same go-duckdb build.
func childCSV(ctx context.Context, path, dbPath string) (childResult, error) {
	start, cpu0 := time.Now(), cpuTime()
	connector, err := duckdb.NewConnector(dbPath, nil)
	if err != nil {
		return childResult{}, err
	}
	db := sql.OpenDB(connector)
	if _, err := db.ExecContext(ctx, BaselineSQL(path)); err != nil {
		db.Close()
		return childResult{}, err
	}
	var rows int64
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM btf").Scan(&rows); err != nil {
		db.Close()
		return childResult{}, err
	}
	if err := db.Close(); err != nil {
		return childResult{}, err
	}
	return childResult{Seconds: time.Since(start).Seconds(), CPUSeconds: cpuTime() - cpu0, Events: rows}, nil
}

// ViewQueries are the canned analyses tracebench times over a whole run
// (issue 23's list): what `traceduck states`, `stats`, `hist`, `locks`,
// `report` and the scheduling analyses run (the queries of
// queries/*_bench_test.go). Each reads every row of its answer. A view a
// format has no rows for (message_round_trips of BTF) is timed all the
// same: the table shows its rows. {third} and {two_thirds} are the times,
// from the run's first event, a third and two thirds into run 1, written
// as numbers as the command line writes --from and --to (a scalar
// subquery in their place keeps DuckDB from folding the branches of the
// macro that a window leaves out, and takes twice as long).
var ViewQueries = []struct{ Name, SQL string }{
	{"state_stats", `SELECT * FROM state_stats`},
	{"state_stats_window", `SELECT * FROM state_stats_window({third}, {two_thirds}, relative := true)`},
	{"state_stats_tree", `SELECT * FROM state_stats_tree('kos')`},
	{"state_stats_tree kso", `SELECT * FROM state_stats_tree('kso', sort_by := 'total')`},
	{"task_instances", `SELECT object, count(*), quantile_cont(response, 0.99) FROM task_instances WHERE NOT truncated GROUP BY object`},
	{"sched_latency", `SELECT object, after, max(latency) FROM sched_latency GROUP BY ALL`},
	{"sched_stats", `SELECT * FROM sched_stats`},
	{"cpu_load(10ms)", `SELECT cpu, max(load), avg(load) FROM cpu_load(10000000) GROUP BY cpu`},
	{"cpu_utilization", `SELECT * FROM cpu_utilization`},
	{"eco_tree", `SELECT * FROM eco_tree('eco')`},
	{"hist_quantize running", `SELECT * FROM hist_quantize('SELECT key, value FROM durations_in_state(''running'')')`},
	{"resource_holds", `SELECT resource, holder, count(*), sum(dur), max(dur) FROM resource_holds WHERE NOT truncated GROUP BY ALL`},
	{"resource_waits", `SELECT resource, waiter, count(*), sum(dur), max(dur) FROM resource_waits WHERE NOT truncated GROUP BY ALL`},
	{"lock_stats", `SELECT * FROM lock_stats()`},
	{"message_round_trips", `SELECT client, server, count(*), quantile_disc(total_ns, 0.99) FROM message_round_trips WHERE NOT truncated AND NOT one_way GROUP BY ALL`},
}

// ViewRatioTarget is issue 23's target 1: every canned analysis over a
// whole run answers in at most this share of the time the run took to
// ingest.
const ViewRatioTarget = 0.1

// childViews times each view once on an ingested database.
func childViews(ctx context.Context, dbPath string) (childResult, error) {
	db, err := schema.Open(ctx, dbPath)
	if err != nil {
		return childResult{}, err
	}
	defer db.Close()
	var third, twoThirds sql.NullInt64
	if err := db.SQL().QueryRowContext(ctx, `SELECT (last_ts - first_ts) // 3, 2 * ((last_ts - first_ts) // 3) FROM runs WHERE run_id = 1`).Scan(&third, &twoThirds); err != nil {
		return childResult{}, fmt.Errorf("run 1: %w", err)
	}
	bounds := strings.NewReplacer("{third}", nullableInt(third), "{two_thirds}", nullableInt(twoThirds))
	res := childResult{Queries: map[string]float64{}, QueriesCPU: map[string]float64{}, Rows: map[string]int64{}}
	for _, q := range ViewQueries {
		start, cpu0 := time.Now(), cpuTime()
		rows, err := db.SQL().QueryContext(ctx, bounds.Replace(q.SQL))
		if err != nil {
			return childResult{}, fmt.Errorf("%s: %w", q.Name, err)
		}
		var n int64
		for rows.Next() {
			n++
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return childResult{}, fmt.Errorf("%s: %w", q.Name, err)
		}
		res.Queries[q.Name] = time.Since(start).Seconds()
		res.QueriesCPU[q.Name] = cpuTime() - cpu0
		res.Rows[q.Name] = n
	}
	return res, nil
}

// nullableInt is v as SQL: its digits, or NULL.
func nullableInt(v sql.NullInt64) string {
	if !v.Valid {
		return "NULL"
	}
	return strconv.FormatInt(v.Int64, 10)
}
