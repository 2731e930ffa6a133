//go:build linux

package safety_test

import (
	"context"
	"database/sql"
	"fmt"
	"github.com/traceduck/traceduck/internal/clitest"
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/traceduck/traceduck/queries/export"
)

// datasetCheck knows what a dataset's committed runs must hold: per
// run, the fingerprint of a run of the same trace content.
type datasetCheck struct {
	t    *testing.T
	ds   string
	ref  map[int32]map[string]string // run -> table -> fingerprint it must have
	seen map[int32]bool              // runs known committed
	// views: check also runs every view and macro (checkAll).
	views bool
	// tmp is the jobs' temporary directory (TMPDIR), where each makes its
	// scratch folder (export.NewScratch).
	tmp string
}

// datasetTables lists the tables of a dataset that have a run_id: the
// views views.sql makes over the Parquet files.
func datasetTables(t *testing.T, db *sql.DB) []string {
	t.Helper()
	tables := names(t, db, `SELECT v.view_name FROM duckdb_views() v JOIN duckdb_columns() c ON c.table_name = v.view_name
		WHERE v.sql LIKE '%read_parquet%' AND c.column_name = 'run_id' AND NOT v.internal ORDER BY 1`)
	if len(tables) < 7 {
		t.Fatalf("only %d tables with run_id in the dataset: %v", len(tables), tables)
	}
	return tables
}

// runPrints is the rows of every run in every table of the dataset, as
// counts and hash sums of the rows without run_id (and without the
// columns of runs that differ between two ingests of one trace content):
// run -> table -> fingerprint, for each of runs (a table without rows of
// a run: "0 rows, hash 0"). One query per table. stray lists the tables
// that show rows of a run not in runs.
func runPrints(t *testing.T, db *sql.DB, runs []int32) (prints map[int32]map[string]string, stray []string) {
	t.Helper()
	tables := datasetTables(t, db)
	out := map[int32]map[string]string{}
	for _, id := range runs {
		out[id] = map[string]string{}
		for _, table := range tables {
			out[id][table] = "0 rows, hash 0"
		}
	}
	for _, table := range tables {
		exclude := map[string]bool{"run_id": true}
		if table == "runs" {
			for _, c := range []string{"name", "source", "sha256", "ingested_at", "tags"} {
				exclude[c] = true
			}
		}
		var cols []string
		for _, c := range names(t, db, "SELECT column_name FROM duckdb_columns() WHERE table_name = '"+table+"' ORDER BY column_index") {
			if !exclude[c] {
				cols = append(cols, `"`+c+`"`)
			}
		}
		q := fmt.Sprintf(`SELECT run_id, count(*), coalesce(sum(hash(row(%s))::HUGEINT), 0)::VARCHAR FROM %s GROUP BY run_id`,
			strings.Join(cols, ", "), table)
		rows, err := db.Query(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		for rows.Next() {
			var id int32
			var n int64
			var sum string
			if err := rows.Scan(&id, &n, &sum); err != nil {
				t.Fatal(err)
			}
			if out[id] == nil {
				stray = append(stray, fmt.Sprintf("%s: %d rows of run %d", table, n, id))
				continue
			}
			out[id][table] = fmt.Sprintf("%d rows, hash %s", n, sum)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
	}
	return out, stray
}

// runPrint is runPrints of one run.
func runPrint(t *testing.T, db *sql.DB, run int32) map[string]string {
	t.Helper()
	prints, _ := runPrints(t, db, []int32{run})
	return prints[run]
}

// openDS opens the dataset as query --parquet does.
func openDS(t *testing.T, ds string) *sql.DB {
	t.Helper()
	db, err := export.OpenDataset(context.Background(), ds)
	if err != nil {
		t.Fatalf("the dataset does not open: %v", err)
	}
	return db
}

// committedRuns lists the runs whose partition of runs is there.
func committedRuns(t *testing.T, ds string) []int32 {
	t.Helper()
	ids, err := export.DatasetRuns(ds)
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// expect records that run, when committed, must hold what run like holds
// (a run of the same trace content).
func (c *datasetCheck) expect(run int32, like map[string]string) {
	if c.ref == nil {
		c.ref = map[int32]map[string]string{}
	}
	c.ref[run] = like
}

// check opens the dataset and checks that readers see exactly the runs
// committed, each whole (the fingerprint of its trace content), and no
// row of any other run; runs committed before stay committed. It
// returns the runs committed.
func (c *datasetCheck) check(when string, content map[string]string) []int32 {
	c.t.Helper()
	ids := committedRuns(c.t, c.ds)
	if c.seen == nil {
		c.seen = map[int32]bool{}
	}
	now := map[int32]bool{}
	for _, id := range ids {
		now[id] = true
	}
	for id := range c.seen {
		if !now[id] {
			c.t.Fatalf("%s: run %d, committed before, is gone", when, id)
		}
	}
	db := openDS(c.t, c.ds)
	defer db.Close()
	var want strings.Builder
	for _, id := range ids {
		fmt.Fprintf(&want, "%d\n", id)
	}
	if got := strings.Join(names(c.t, db, "SELECT run_id::VARCHAR FROM runs ORDER BY run_id"), "\n"); got+"\n" != want.String() && !(got == "" && want.Len() == 0) {
		c.t.Fatalf("%s: the runs view lists %q, the dataset's committed runs are %q", when, got, want.String())
	}
	prints, stray := runPrints(c.t, db, ids)
	for _, s := range stray {
		c.t.Errorf("%s: a run not committed is seen: %s", when, s)
	}
	for _, id := range ids {
		if !c.seen[id] && c.ref[id] == nil {
			c.expect(id, content)
		}
		c.seen[id] = true
		for table, w := range c.ref[id] {
			if got := prints[id][table]; got != w {
				c.t.Errorf("%s: run %d in %s: %s, want %s (a whole run)", when, id, table, got, w)
			}
		}
	}
	if c.views {
		checkViewsAnswer(c.t, db, when)
	}
	return ids
}

// checkAll is check, then every view and macro answers (a few seconds
// once the dataset holds tens of runs: done where the files on disk are
// the most mixed, every time with TRACEDUCK_CRASH_LONG=1; the rows of
// every table are checked at every kill, and views.sql is replaced whole,
// by a rename).
func (c *datasetCheck) checkAll(when string, content map[string]string) []int32 {
	c.t.Helper()
	c.views = true
	defer func() { c.views = false }()
	return c.check(when, content)
}

// clean checks that the dataset holds nothing but its committed runs: no
// temporary file, no claim, no partition of a run not committed, and a
// partition of every table for every committed run.
func (c *datasetCheck) clean(when string) {
	c.t.Helper()
	committed := map[string]bool{}
	for _, id := range committedRuns(c.t, c.ds) {
		committed[fmt.Sprintf("run_id=%d", id)] = true
	}
	// A dead job's scratch folder (its run's database) is removed by the
	// next job; a job that ends removes its own.
	if m, _ := filepath.Glob(filepath.Join(c.tmp, "traceduck-ingest-*")); c.tmp != "" && len(m) != 0 {
		c.t.Errorf("%s: %d scratch folders left in TMPDIR, the first %s", when, len(m), filepath.Base(m[0]))
	}
	if ents, err := os.ReadDir(filepath.Join(c.ds, ".claims")); err == nil && len(ents) != 0 {
		var n []string
		for _, e := range ents {
			n = append(n, e.Name())
		}
		c.t.Errorf("%s: claims left: %v", when, n)
	}
	err := filepath.WalkDir(c.ds, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(c.ds, p)
		if strings.HasSuffix(p, ".tmp") {
			c.t.Errorf("%s: temporary file left: %s", when, rel)
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), "run_id=") && !committed[d.Name()] {
			c.t.Errorf("%s: partition of a run not committed: %s", when, rel)
		}
		return nil
	})
	if err != nil {
		c.t.Fatal(err)
	}
	folders, _ := os.ReadDir(c.ds)
	for _, f := range folders {
		if !f.IsDir() || strings.HasPrefix(f.Name(), ".") || strings.HasPrefix(f.Name(), "overhead") || f.Name() == "probe_costs" {
			continue
		}
		for part := range committed {
			if _, err := os.Stat(filepath.Join(c.ds, f.Name(), part, "part-0.parquet")); err != nil {
				c.t.Errorf("%s: committed %s has no file in %s", when, part, f.Name())
			}
		}
	}
}

// TestCrashSafeIngestParquet kills `traceduck ingest --parquet` with
// SIGKILL at steps of its write into a dataset (each claim taken, each
// file written, renamed or removed: every one with
// TRACEDUCK_CRASH_LONG=1, else 8 of them: the claims, views.sql and
// those around the run's files), then at random moments of a larger
// ingest, and as it clears what a dead one left. After each kill, readers
// (views.sql, as query --parquet reads it) see exactly the runs
// committed, each whole, and no row of another; runs committed before
// stay; at the kills where the files are the most mixed (the run's first
// file renamed, its last but the runs file, the commit, a dead job's run
// half cleared) every view and macro answers. The next ingest clears what the dead one left (temporary files,
// claims, partitions of runs not committed) and ingests the same file,
// unless the dead one had committed it whole.
func TestCrashSafeIngestParquet(t *testing.T) {
	dir := t.TempDir()
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // the jobs' scratch folders, checked by clean
	ds := filepath.Join(dir, "ds")
	clitest.MustRun(t, dir, nil, "ingest", "--parquet", ds, clitest.SeedSample)
	c := &datasetCheck{t: t, ds: ds, tmp: tmp}
	db := openDS(t, ds)
	seedPrint := runPrint(t, db, 1)
	db.Close()
	c.checkAll("after the first run", seedPrint)
	c.clean("after the first run")

	phase := time.Now()
	// 1. The steps of one job: with TRACEDUCK_CRASH_LONG=1 every one, else
	// the claims, views.sql, and those around the run's files (the first
	// written, the last written, the first renamed, the last two renamed:
	// the runs file is the commit). A job with nothing to clear
	// takes 3 + S + 2R steps (the sha256 and the run_id claimed, views.sql,
	// S tables without a run_id, then R files of its run written and R
	// renamed): its step N+1 is never reached. Each step ingests a copy of
	// the seed sample of its own (another sha256, the same rows).
	long := os.Getenv(crashLongEnv) == "1"
	shared, perRun := datasetShape(t, ds)
	last := 3 + shared + 2*perRun
	pick := map[int]bool{1: true, 2: true, 3: true,
		3 + shared + 1: true, 3 + shared + perRun: true, 3 + shared + perRun + 1: true,
		last - 1: true, last: true, last + 1: true}
	steps := 0
	for step := 1; ; step++ {
		if !long && !pick[step] {
			continue
		}
		trace := clitest.SampleCopy(t, dir, fmt.Sprintf("step%d.btf", step), fmt.Sprint("step ", step))
		args := []string{"ingest", "--parquet", ds, trace}
		stop := fmt.Sprintf("parquet-step-%d", step)
		p := clitest.Start(t, dir, stop, nil, args...)
		select {
		case <-p.Stopped():
		case <-p.Done():
		}
		if r := p.Ended(); r != nil {
			// It ended by itself: every step is done.
			if r.Code != 0 {
				t.Fatalf("ingest without a kill: %s", r)
			}
			if step != last+1 {
				t.Fatalf("the job ended by itself before its step %d: it has %d steps, not 3 + %d + 2*%d", step, step-1, shared, perRun)
			}
			c.check("after an ingest that was not killed", seedPrint)
			c.clean("after an ingest that was not killed")
			break
		}
		if step > last {
			t.Fatalf("the job stopped at its step %d, past the %d it has (3 + %d + 2*%d)", step, last, shared, perRun)
		}
		steps++
		point := p.StderrText()
		p.Kill()
		when := "killed at " + strings.TrimSpace(strings.TrimPrefix(point, "traceduck: stopped at "))
		before := len(c.seen)
		if long || step == 3+shared+perRun+1 || step >= last-1 {
			c.checkAll(when, seedPrint)
		} else {
			c.check(when, seedPrint)
		}
		done := len(c.seen) > before // the dead job had committed its run
		if done != (step == last) {
			t.Errorf("%s: committed %v; a job commits at its last step (%d)", when, done, last)
		}
		r := clitest.Td(t, dir, args...)
		if done {
			clitest.ExpectExit(t, r, 1, trace+": already in "+ds+" as run ")
		} else if r.Code != 0 {
			t.Fatalf("%s: the same ingest again: %s", when, r)
		}
		c.check(when+", then the same ingest again", seedPrint)
		c.clean(when + ", then the same ingest again")
	}
	if perRun < 9 {
		t.Errorf("the job writes %d tables of its run, want at least 9", perRun)
	}
	t.Logf("killed at %d of its %d steps (%v)", steps, last, time.Since(phase).Round(time.Second))

	// 2. Random moments of a larger ingest (--force: a run it committed
	// before it was killed does not stop the next), each kill checked,
	// the dead job's leftovers cleared by the next job.
	big := filepath.Join(dir, "big.btf")
	writeBigBTF(t, big, 100_000)
	bigArgs := []string{"ingest", "--parquet", ds, "--force", big}
	claims := filepath.Join(ds, ".claims")
	start := time.Now()
	p := clitest.Start(t, dir, "", nil, bigArgs...)
	var claimed time.Time
	p.WaitFor("a run_id to be claimed", func() bool {
		m, _ := filepath.Glob(filepath.Join(claims, "run_id=*"))
		return len(m) > 0
	})
	claimed = time.Now()
	if r := p.Wait(); r.Code != 0 {
		t.Fatalf("big ingest: %s", r)
	}
	write := time.Since(claimed)
	t.Logf("big ingest: %v, of which %v from the run_id's claim to the end", time.Since(start), write)
	ids := committedRuns(t, ds)
	bigRun := ids[len(ids)-1]
	db = openDS(t, ds)
	bigPrint := runPrint(t, db, bigRun)
	db.Close()
	c.expect(bigRun, bigPrint)
	c.check("after the big ingest", bigPrint)

	rng := rand.New(rand.NewSource(20))
	kills := 2
	if long {
		kills = 12
	}
	for i := 0; i < kills; i++ {
		p := clitest.Start(t, dir, "", nil, bigArgs...)
		p.WaitFor("a run_id to be claimed", func() bool {
			m, _ := filepath.Glob(filepath.Join(claims, "run_id=*"))
			return len(m) > 0
		})
		f := rng.Float64()
		time.Sleep(time.Duration(f * float64(write)))
		p.KillOrDone()
		if long {
			c.checkAll(fmt.Sprintf("killed at %.0f%% of the write", 100*f), bigPrint)
		} else {
			c.check(fmt.Sprintf("killed at %.0f%% of the write", 100*f), bigPrint)
		}
		// A refused ingest (the seed sample is there) still clears what
		// the dead one left first.
		clitest.ExpectExit(t, clitest.Td(t, dir, "ingest", "--parquet", ds, clitest.SeedSample), 1, "already in "+ds+" as run 1")
		c.clean(fmt.Sprintf("killed at %.0f%% of the write, then a refused ingest", 100*f))
	}

	// 3. A job killed as it clears what a dead one left: the next one
	// finishes.
	p = clitest.Start(t, dir, "parquet-step-15", nil, bigArgs...)
	p.WaitStopped()
	p.Kill()
	c.check("killed in the middle of its run", bigPrint)
	p = clitest.Start(t, dir, "parquet-step-2", nil, "ingest", "--parquet", ds, clitest.SeedSample)
	p.WaitStopped()
	if s := p.StderrText(); !strings.Contains(s, "(removed ") {
		t.Errorf("the second job did not stop in its cleanup: %s", s)
	}
	p.Kill()
	c.checkAll("killed as it cleared a dead job's run", bigPrint)
	clitest.ExpectExit(t, clitest.Td(t, dir, "ingest", "--parquet", ds, clitest.SeedSample), 1, "already in "+ds+" as run 1")
	c.clean("after a job killed in its cleanup, then a refused ingest")
}

// datasetShape counts the dataset's tables without a run_id (a file
// TABLE/part-0.parquet) and with one (a folder TABLE/run_id=1).
func datasetShape(t *testing.T, ds string) (shared, perRun int) {
	t.Helper()
	ents, err := os.ReadDir(ds)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if _, err := os.Stat(filepath.Join(ds, e.Name(), "part-0.parquet")); err == nil {
			shared++
		}
		if _, err := os.Stat(filepath.Join(ds, e.Name(), "run_id=1", "part-0.parquet")); err == nil {
			perRun++
		}
	}
	return shared, perRun
}

// TestIngestParquetSameFileRace runs several `ingest --parquet` of one
// file into one dataset at once, again and again: exactly one writes it,
// the others are refused (the file is in the dataset, or another job is
// writing it), and the dataset holds one run.
func TestIngestParquetSameFileRace(t *testing.T) {
	dir := t.TempDir()
	const rounds, jobs = 8, 4
	for round := 0; round < rounds; round++ {
		ds := filepath.Join(dir, fmt.Sprintf("ds%d", round))
		results := make([]clitest.Result, jobs)
		var wg sync.WaitGroup
		for i := 0; i < jobs; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				results[i] = clitest.Td(t, dir, "ingest", "--parquet", ds, clitest.SeedSample)
			}(i)
		}
		wg.Wait()
		ok := 0
		for _, r := range results {
			switch {
			case r.Code == 0:
				ok++
			case strings.HasPrefix(r.Stderr, "traceduck: "+clitest.SeedSample+": already in "+ds+" as run 1 (same sha256); --force ingests it again\n"),
				strings.HasPrefix(r.Stderr, "traceduck: "+clitest.SeedSample+": another job is writing the same trace (same sha256) into "+ds+" now (pid "):
				clitest.ExpectExit(t, r, 1, "--force ingests it again")
			default:
				t.Errorf("round %d: %s", round, r)
			}
		}
		if ok != 1 {
			t.Errorf("round %d: %d jobs wrote the file, want 1", round, ok)
		}
		if ids := committedRuns(t, ds); len(ids) != 1 {
			t.Errorf("round %d: the dataset holds runs %v of one file, want one", round, ids)
		}
		c := &datasetCheck{t: t, ds: ds}
		c.clean(fmt.Sprintf("round %d", round))
	}
}

// TestIngestParquetLiveJobKept: a job that is still writing (stopped in
// the middle of its run) keeps its claims and files while other jobs
// clear the dataset and write theirs; once it is dead, the next job
// clears them.
func TestIngestParquetLiveJobKept(t *testing.T) {
	dir := t.TempDir()
	ds := filepath.Join(dir, "ds")
	clitest.MustRun(t, dir, nil, "ingest", "--parquet", ds, clitest.SeedSample)
	a := clitest.SampleCopy(t, dir, "a.btf", "a")
	p := clitest.Start(t, dir, "parquet-step-14", nil, "ingest", "--parquet", ds, a)
	p.WaitStopped()
	listing := func() []string {
		var out []string
		filepath.WalkDir(ds, func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && !strings.HasSuffix(path, "views.sql") && !strings.Contains(path, "overhead") && !strings.Contains(path, "probe_costs") {
				rel, _ := filepath.Rel(ds, path)
				out = append(out, rel)
			}
			return nil
		})
		sort.Strings(out)
		return out
	}
	held := listing()
	var tmps, claims int
	for _, f := range held {
		if strings.HasSuffix(f, ".tmp") && strings.Contains(f, "run_id=2") {
			tmps++
		}
		if strings.HasPrefix(f, ".claims/run_id=2") || strings.HasPrefix(f, ".claims/sha256=") {
			claims++
		}
	}
	if tmps == 0 || claims != 2 {
		t.Fatalf("the stopped job holds %d temporary files of run 2 and %d claims: %v", tmps, claims, held)
	}

	b := clitest.SampleCopy(t, dir, "b.btf", "b")
	if out := clitest.MustRun(t, dir, nil, "ingest", "--parquet", ds, b); !strings.HasPrefix(out, "run 3: ") {
		t.Errorf("another job: %s, want run 3 (2 is claimed)", out)
	}
	// The other job cleared nothing of the live one's.
	after := listing()
	have := map[string]bool{}
	for _, f := range after {
		have[f] = true
	}
	for _, f := range held {
		if !have[f] && !strings.HasPrefix(f, ".claims/job-") {
			t.Errorf("a live job's file was removed: %s", f)
		}
	}
	// Its file is being written: refused, not written twice.
	clitest.ExpectExit(t, clitest.Td(t, dir, "ingest", "--parquet", ds, a), 1,
		a+": another job is writing the same trace (same sha256) into "+ds+" now (pid ")

	p.Kill()
	if out := clitest.MustRun(t, dir, nil, "ingest", "--parquet", ds, a); !strings.HasPrefix(out, "run 4: ") {
		t.Errorf("after the job died, its file: %s, want run 4 (one above the runs there)", out)
	}
	c := &datasetCheck{t: t, ds: ds}
	c.clean("after the live job died and its file was ingested")
	if ids := committedRuns(t, ds); fmt.Sprint(ids) != "[1 3 4]" {
		t.Errorf("runs %v, want [1 3 4] (2 was the dead job's)", ids)
	}
}
