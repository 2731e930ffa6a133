package schema

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"github.com/traceduck/traceduck/internal/sqltx"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/marcboeker/go-duckdb"
)

// DB is a traceduck database: a DuckDB file holding the tables.
type DB struct {
	Path      string
	ReadOnly  bool // opened by OpenReadOnly
	sql       *sql.DB
	mem       memory.Allocator
	summarize SummarizeFunc
}

// SummarizeFunc computes and stores what is derived from a run once it is
// ingested, on conn, in a transaction (DB.Summarize): the report's per-run
// summaries (queries/report.Summarize, which this package cannot import).
type SummarizeFunc func(ctx context.Context, conn *sql.Conn, runID int32) error

// SetSummarize sets what Summarize computes (nil: nothing). traceduck's
// commands set the report's summaries (cmd/traceduck openDB), which the
// ingest computes once a run is in (ingest.Result.SummaryErr).
func (db *DB) SetSummarize(f SummarizeFunc) { db.summarize = f }

// Summarize computes and stores the summary of run id (SetSummarize), in
// a transaction of its own, once the run's ingest committed: on every
// DuckDB thread, its memory limited as an ingest's. A summary that fails
// (DuckDB ran out of memory on a long run, Ctrl-C) leaves the run as it
// is, without one, which a report computes itself.
func (db *DB) Summarize(ctx context.Context, id int32) (err error) {
	if db.summarize == nil {
		return nil
	}
	// What the run's ingest left on Go's heap (the parser's buffers, the
	// state tree's nodes and groups: 522k nodes of 120 bytes for a
	// 10M-event QNX run) is garbage now; Go would keep it from the OS for
	// minutes, under DuckDB's memory for the summary, the peak of the
	// whole ingest.
	debug.FreeOSMemory()
	defer func() {
		if err != nil && outOfMemory(err) {
			err = fmt.Errorf("DuckDB ran out of memory (it may use %d MiB): %w", summaryMemoryLimit>>20, err)
		}
	}()
	conn, err := db.sql.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	restore, parallel, err := limitMemory(ctx, conn, summaryMemoryLimit)
	if err != nil {
		return err
	}
	defer restore()
	if err := parallel(); err != nil {
		return err
	}
	if _, err := conn.ExecContext(ctx, "BEGIN TRANSACTION"); err != nil {
		return err
	}
	if err := db.summarize(ctx, conn, id); err != nil {
		_, _ = conn.ExecContext(context.Background(), "ROLLBACK")
		return err
	}
	_, err = conn.ExecContext(ctx, "COMMIT")
	return err
}

// Open opens (creating when missing) the database at path and creates the
// tables that do not exist yet. The caller installs the query library.
func Open(ctx context.Context, path string) (*DB, error) {
	connector, err := duckdb.NewConnector(path, nil)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	removeStaleTemp(path)
	db := sql.OpenDB(connector)
	if err := migrateToSymbols(ctx, db); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if err := createTables(ctx, db); err != nil {
		db.Close()
		return nil, fmt.Errorf("create tables in %s: %w", path, err)
	}
	return &DB{Path: path, sql: db, mem: DefaultAllocator}, nil
}

// createTables creates the tables and their views where missing, in one
// transaction: one commit, one sync of the file, instead of one per
// statement (a new database took about a second longer to open on a
// loaded machine), and a crash leaves none of them half made.
func createTables(ctx context.Context, db *sql.DB) error {
	return sqltx.Run(ctx, db, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, DDL())
		return err
	})
}

// removeStaleTemp removes what a process that died (killed, or DuckDB
// aborting it) left in the database's temporary directory, FILE.tmp/:
// DuckDB removes its own spilled blocks as it goes and at close, but not
// those of an earlier process, which can be hundreds of MB. Called once
// the database is open, so this process holds its lock: no other process
// has it open.
func removeStaleTemp(path string) {
	if path == "" || path == ":memory:" {
		return
	}
	dir := path + ".tmp"
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "duckdb_temp_") && e.Type().IsRegular() {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
	os.Remove(dir) // only when empty
}

// OpenReadOnly opens an existing database without writing to it (a file
// this process may not write): no table is created or migrated, and
// nothing can be ingested.
func OpenReadOnly(ctx context.Context, path string) (*DB, error) {
	connector, err := duckdb.NewConnector(path+"?access_mode=read_only", nil)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return &DB{Path: path, sql: sql.OpenDB(connector), mem: DefaultAllocator, ReadOnly: true}, nil
}

// SQL is the database/sql handle, for queries.
func (db *DB) SQL() *sql.DB { return db.sql }

// SetAllocator sets the Arrow allocator runs are built with (tests use a
// checked allocator to prove nothing leaks).
func (db *DB) SetAllocator(mem memory.Allocator) { db.mem = mem }

// Close closes the database.
func (db *DB) Close() error { return db.sql.Close() }

// DuplicateError refuses a file already ingested.
type DuplicateError struct {
	SHA256 string
	RunID  int32
	Name   string
}

func (e *DuplicateError) Error() string {
	return fmt.Sprintf("already ingested as run %d (%s, sha256 %s); use --force to ingest it again", e.RunID, e.Name, e.SHA256[:min(12, len(e.SHA256))])
}

// FindSHA256 returns the run that holds a file with that hash, if any.
func (db *DB) FindSHA256(ctx context.Context, sum string) (*DuplicateError, error) {
	return findSHA256(ctx, db.sql, sum, 0)
}

type queryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// findSHA256 looks for a run with that hash other than run except.
func findSHA256(ctx context.Context, q queryer, sum string, except int32) (*DuplicateError, error) {
	if sum == "" {
		return nil, nil
	}
	d := DuplicateError{SHA256: sum}
	err := q.QueryRowContext(ctx, "SELECT run_id, name FROM runs WHERE sha256 = ? AND run_id <> ? ORDER BY run_id LIMIT 1", sum, except).Scan(&d.RunID, &d.Name)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &d, nil
}

// IngestOptions are the run-level settings of one ingest.
type IngestOptions struct {
	Force bool // ingest even when a run with the same sha256 exists
	// SHA256 computes the hash of the input once it has been read (for
	// standard input it is known only at the end). When set, it overrides
	// RunInfo.SHA256.
	SHA256 func() string
	// BatchRows overrides DefaultBatchRows (tests).
	BatchRows int
	// CoarseTree makes every dense histogram of the state tree coarse, as
	// a run does once it has made maxFineDense fine ones (tests).
	CoarseTree bool
	// TreeTargets leaves the percentiles of the state tree that its
	// histograms cannot tell to state_stats_tree (state_tree_targets), as
	// a traceduck before 2026-11-27 did, instead of taking them from the
	// run's durations at its end (tests of the view's path for such
	// databases).
	TreeTargets bool
	// BeforeCommit, when set, is called once the run is written and
	// checked, just before COMMIT (the crash tests of cmd/traceduck stop
	// the process there).
	BeforeCommit func()
}

// Ingest writes one run in one transaction: it calls fill with a
// RunWriter, and commits only when fill and the writer both succeed. On
// any error, cancellation included, the transaction is rolled back and the
// database is left exactly as it was.
func (db *DB) Ingest(ctx context.Context, info RunInfo, opt IngestOptions, fill func(*RunWriter) error) (runID int32, err error) {
	defer func() {
		if err != nil && outOfMemory(err) {
			err = fmt.Errorf("DuckDB ran out of memory (an ingest may use %d MiB), nothing of it was written: %w", ingestMemoryLimit>>20, err)
		}
	}()
	conn, err := db.sql.Conn(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	restore, _, err := ingestSettings(ctx, conn)
	if err != nil {
		return 0, err
	}
	defer restore()
	if gc := debug.SetGCPercent(ingestGCPercent); gc < ingestGCPercent {
		debug.SetGCPercent(gc) // a lower one (GOGC) is kept
	} else {
		defer debug.SetGCPercent(gc)
	}
	// The transaction is driven by plain statements on this one connection
	// because the Arrow views are registered on that connection.
	if _, err := conn.ExecContext(ctx, "BEGIN TRANSACTION"); err != nil {
		return 0, err
	}
	committed := false
	defer func() {
		if !committed {
			// A fresh context: the rollback must happen even when ctx is
			// what was cancelled.
			_, rbErr := conn.ExecContext(context.Background(), "ROLLBACK")
			if rbErr != nil && err == nil {
				err = rbErr
			}
		}
	}()
	if err := conn.QueryRowContext(ctx, nextRunIDQuery()).Scan(&info.RunID); err != nil {
		return 0, err
	}
	sink, err := newDuckSink(ctx, conn)
	if err != nil {
		return 0, err
	}
	defer sink.close()
	if opt.SHA256 != nil {
		// computed at the end; the run row is written at Finish
		info.SHA256 = ""
	}
	w := NewRunWriter(info, sink, db.mem)
	if opt.CoarseTree {
		w.tree.fineLeft = 0
	}
	w.tree.keepTargets = opt.TreeTargets
	if db.Path != "" && db.Path != ":memory:" {
		// beside the database: TMPDIR may be a tmpfs, memory (12 bytes an
		// interval: 2 GB at 100M events)
		w.tree.spill.dir = filepath.Dir(db.Path)
	}
	if opt.BatchRows > 0 {
		w.SetBatchRows(opt.BatchRows)
	}
	if opt.SHA256 != nil {
		w.lateSHA = opt.SHA256
	}
	if err := fill(w); err != nil {
		w.Abort()
		return 0, err
	}
	if err := ctx.Err(); err != nil {
		w.Abort()
		return 0, err
	}
	if err := w.Finish(time.Now()); err != nil {
		return 0, err
	}
	if err := sink.flushSymbols(); err != nil {
		return 0, err
	}
	if !opt.Force {
		if dup, err := findSHA256(ctx, conn, w.info.SHA256, info.RunID); err != nil {
			return 0, err
		} else if dup != nil {
			return 0, dup
		}
	}
	if opt.BeforeCommit != nil {
		opt.BeforeCommit()
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		return 0, err
	}
	committed = true
	return info.RunID, nil
}

// nextRunIDQuery gives the next run's id: one more than any run_id in any
// table, not only in runs. A run id is never given twice: a user who
// dropped or emptied runs (DROP TABLE runs CASCADE through query) left the
// other tables' rows of those runs, and a new run under their id would mix
// with them.
func nextRunIDQuery() string {
	var parts []string
	for _, t := range tables {
		for _, c := range t.columns {
			if c.name == "run_id" {
				parts = append(parts, "(SELECT max(run_id) FROM "+stored(t.name)+")")
				break
			}
		}
	}
	return "SELECT coalesce(greatest(" + strings.Join(parts, ", ") + "), 0) + 1"
}

// ingestMemoryLimit bounds DuckDB's memory while a run is loaded. DuckDB
// keeps the row groups of a transaction in memory until COMMIT unless its
// memory limit makes it evict them (they are already written to the
// file): without a bound the BTF benchmark peaked at 235, 303 and 500 MB
// at 1M, 3M and 10M events (25 MB more per million, the size of the rows
// in the database); with 128 MiB, at 236, 322 and 354 MB.
const ingestMemoryLimit = 128 << 20

// LimitMemory sets DuckDB's memory limit (global to the database
// instance) to at most limit until restore: a report computing the runs'
// summaries. A lower limit is kept.
func LimitMemory(ctx context.Context, conn *sql.Conn, limit int64) (restore func(), err error) {
	restore, parallel, err := limitMemory(ctx, conn, limit)
	if err != nil {
		return nil, err
	}
	if err := parallel(); err != nil {
		restore()
		return nil, err
	}
	return restore, nil
}

// summaryMemoryLimit bounds DuckDB's memory while a run's summary is
// computed (Summarize). On a 10M-event BTF run (before task_instances and
// sched_latency were stored), the summary ran out of memory with 128 MiB;
// with 256 MiB it took 212 s at a load of 15 and a peak RSS of 500 MB,
// with 512 MiB 224 s and 1.03 GB, with 4 GiB 160 s and 1.9 GB (the
// ingest itself: 124 s).
const summaryMemoryLimit = 256 << 20

// outOfMemory tells DuckDB's refusal to go past its memory limit (a
// batch, or the COMMIT of a run whose long strings it must hold until
// then: DuckDB 1.1 keeps a transaction's strings longer than about 50
// KiB in memory until COMMIT).
func outOfMemory(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "Out of Memory Error") || strings.Contains(msg, "failed to pin block")
}

// ingestGCPercent is Go's GOGC while a run is loaded. What the heap
// holds then is mostly the buffer pool's batches, pointer-free bytes that
// cost the collector almost nothing to mark; with the default of 100 the
// garbage of a long ingest (record and stream wrappers, dictionaries) was
// let grow to twice that before a collection, so the peak RSS of a
// 50M-event BTF ingest was 1.22x that of a 5M one.
const ingestGCPercent = 25

// ingestSettings sets DuckDB up for loading a run and returns what puts
// the settings back:
//   - one thread: each INSERT reads one Arrow batch, which DuckDB scans on
//     one thread; a second thread only waits for work (go-duckdb runs a
//     statement through DuckDB's pending-result loop, which spins) on the
//     core the ingester parses on. Measured on the 10M-event BTF
//     benchmark: 21.6 s and 1.7 cores with DuckDB's default of 2 threads,
//     13.4 s and 1.6 cores with 1;
//   - a memory limit of at most ingestMemoryLimit (a lower one is kept),
//     so that memory does not grow with the length of the trace.
//
// Both settings are global to the database instance: a query running
// beside an ingest in the same process gets them too.
func ingestSettings(ctx context.Context, conn *sql.Conn) (restore func(), parallel func() error, err error) {
	return limitMemory(ctx, conn, ingestMemoryLimit)
}

// limitMemory is ingestSettings with a memory limit of at most limit;
// parallel sets the threads back (restore does too).
func limitMemory(ctx context.Context, conn *sql.Conn, memLimit int64) (restore func(), parallel func() error, err error) {
	var threads int64
	var limit string
	if err := conn.QueryRowContext(ctx, "SELECT current_setting('threads'), current_setting('memory_limit')").Scan(&threads, &limit); err != nil {
		return nil, nil, fmt.Errorf("read DuckDB settings: %w", err)
	}
	var undo []string
	restore = func() {
		for _, stmt := range undo {
			conn.ExecContext(context.Background(), stmt)
		}
	}
	parallel = func() error { return nil }
	if threads != 1 {
		if _, err := conn.ExecContext(ctx, "SET threads = 1"); err != nil {
			return nil, nil, fmt.Errorf("set DuckDB threads: %w", err)
		}
		back := fmt.Sprintf("SET threads = %d", threads)
		undo = append(undo, back)
		parallel = func() error {
			_, err := conn.ExecContext(ctx, back)
			return err
		}
	}
	if n, ok := parseByteSize(limit); ok && n > memLimit {
		// Set back from DuckDB's print of it, which is rounded down to
		// one decimal ("18.8 GiB"): half a last digit more is nearest to
		// what it was. Not RESET: in DuckDB 1.1 it changes the setting but
		// not the buffer pool's limit.
		_, unit, _ := strings.Cut(limit, " ")
		one, _ := parseByteSize("1 " + unit)
		back := fmt.Sprintf("SET memory_limit = '%dKiB'", (n+one/20)>>10)
		if _, err := conn.ExecContext(ctx, fmt.Sprintf("SET memory_limit = '%dMiB'", memLimit>>20)); err != nil {
			restore()
			return nil, nil, fmt.Errorf("set DuckDB memory_limit: %w", err)
		}
		undo = append(undo, back)
	}
	return restore, parallel, nil
}

// parseByteSize reads a size as DuckDB prints its memory_limit ("19.2
// GiB", "256.0 MiB", "1000 bytes").
func parseByteSize(s string) (int64, bool) {
	num, unit, _ := strings.Cut(strings.TrimSpace(s), " ")
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v < 0 {
		return 0, false
	}
	mul := map[string]float64{"bytes": 1, "B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40,
		"KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12}[unit]
	if mul == 0 {
		return 0, false
	}
	return int64(v * mul), true
}

// duckSink loads record batches through DuckDB's Arrow scan: the batch is
// registered as a view and copied with INSERT INTO t SELECT * FROM view.
// Always SELECT *: with go-duckdb v1.8.2 (DuckDB 1.1) a projection of
// some columns of a registered Arrow view crashes the process
// (go-duckdb issue 321); the Arrow schemas match the tables column for
// column so that no projection is ever needed.
//
// The writer numbers a run's symbols from 0 (see TableSymbols); the sink
// turns them into the database's (symbols.go, runSymbols).
type duckSink struct {
	ctx   context.Context
	conn  *sql.Conn
	arrow *duckdb.Arrow
	views map[string]bool
	syms  runSymbols
}

func newDuckSink(ctx context.Context, conn *sql.Conn) (*duckSink, error) {
	s := &duckSink{ctx: ctx, conn: conn, views: map[string]bool{}}
	s.syms.next = -1
	s.syms.maxCached = maxCachedSymbols
	err := conn.Raw(func(dc any) error {
		var err error
		s.arrow, err = duckdb.NewArrowFromConn(dc.(driver.Conn))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("duckdb arrow: %w", err)
	}
	return s, nil
}

func (s *duckSink) Put(table string, rec arrow.Record) error {
	if table == TableSymbols {
		return s.putSymbols(rec)
	}
	if table == TableLateSymbols {
		if err := s.putLateSymbols(rec); err != nil {
			return fmt.Errorf("load %s: %w", TableSymbols, err)
		}
		return nil
	}
	if table == TablePruneLevels {
		if err := s.pruneLevels(rec); err != nil {
			return fmt.Errorf("prune %s: %w", TableStateLevelIntervals, err)
		}
		return nil
	}
	if err := s.translate(table, rec); err != nil {
		return fmt.Errorf("load %s: %w", table, err)
	}
	if err := s.insert(stored(table), rec); err != nil {
		return fmt.Errorf("load %s: %w", table, err)
	}
	return nil
}

// pruneLevels deletes the rows of state_level_intervals of the runs of
// rec that are not their objects' merged intervals (TablePruneLevels),
// given their state_level_objects rows.
func (s *duckSink) pruneLevels(rec arrow.Record) error {
	runs := rec.Column(0).(*array.Int32)
	for i := 0; i < runs.Len(); i++ {
		if _, err := s.conn.ExecContext(s.ctx, `DELETE FROM `+stored(TableStateLevelIntervals)+` r USING `+TableStateLevelObjects+` m
			WHERE r.run_id = $1 AND m.run_id = $1 AND m.object_id = r.object_id
			  AND (NOT m.materialized OR r.per_instance IS NOT NULL AND r.per_instance <> m.per_instance)`, runs.Value(i)); err != nil {
			return err
		}
	}
	return nil
}

// insert copies rec into the table target.
func (s *duckSink) insert(target string, rec arrow.Record) error {
	view := "traceduck_batch_" + strings.ReplaceAll(target, ".", "_")
	rdr := newOneShotReader(rec)
	defer rdr.Release()
	// A statement interrupted (a cancelled ingest) stops reading before
	// the end of the stream, where the reader lets go of the record: it
	// must be let go of here, once DuckDB is done with the stream.
	defer rdr.drop()
	release, err := s.arrow.RegisterView(rdr, view)
	if err != nil {
		return fmt.Errorf("register batch: %w", err)
	}
	defer release()
	s.views[view] = true
	if _, err := s.conn.ExecContext(s.ctx, "INSERT INTO "+target+" SELECT * FROM "+view); err != nil {
		return err
	}
	// Drop the view at once: it points at a stream that is freed on return.
	if _, err := s.conn.ExecContext(s.ctx, "DROP VIEW "+view); err != nil {
		return err
	}
	delete(s.views, view)
	return nil
}

func (s *duckSink) close() {
	for v := range s.views {
		s.conn.ExecContext(context.Background(), "DROP VIEW IF EXISTS "+v)
	}
	if s.syms.temp {
		s.conn.ExecContext(context.Background(), "DROP TABLE IF EXISTS temp."+newSymbolsTable)
	}
}

// oneShotReader streams one record and lets go of it as soon as the
// consumer has read past it. go-duckdb v1.8.2's RegisterView frees the
// exported C stream without calling its release callback, so the reader
// stays referenced by a cgo handle for the life of the process; letting go
// of the record at end of stream keeps that to a few bytes per batch
// instead of the whole batch.
type oneShotReader struct {
	refs   atomic.Int64
	schema *arrow.Schema
	rec    arrow.Record
	cur    arrow.Record
	read   bool
}

var _ array.RecordReader = (*oneShotReader)(nil)

func newOneShotReader(rec arrow.Record) *oneShotReader {
	rec.Retain()
	r := &oneShotReader{schema: rec.Schema(), rec: rec}
	r.refs.Store(1)
	return r
}

func (r *oneShotReader) Retain() { r.refs.Add(1) }

func (r *oneShotReader) Release() {
	if r.refs.Add(-1) == 0 {
		r.drop()
	}
}

func (r *oneShotReader) drop() {
	if r.rec != nil {
		r.rec.Release()
		r.rec = nil
	}
	r.cur = nil
}

func (r *oneShotReader) Schema() *arrow.Schema { return r.schema }

func (r *oneShotReader) Next() bool {
	if !r.read && r.rec != nil {
		r.read = true
		r.cur = r.rec
		return true
	}
	r.drop()
	return false
}

func (r *oneShotReader) Record() arrow.Record { return r.cur }

func (r *oneShotReader) Err() error { return nil }
