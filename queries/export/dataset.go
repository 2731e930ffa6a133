package export

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/traceduck/traceduck/queries"
)

// How jobs write into one dataset at once (docs/export.md, "Jobs at
// once"):
//
//   - A job (one traceduck process writing into the dataset) has a job
//     file, DIR/.claims/job-TOKEN, which it holds locked (flock) for as
//     long as it runs. The kernel drops the lock when the process ends,
//     however it ends (SIGKILL included): a job file nobody holds locked
//     is a dead job's.
//   - A job claims a run_id, and the sha256 of a trace it writes, by
//     hard-linking its job file to DIR/.claims/run_id=N and
//     DIR/.claims/sha256=HEX. link(2) creates the name or fails because
//     it exists, on every POSIX filesystem (NFS included), so two jobs
//     never hold one claim, and the claim is locked from the moment it
//     exists (it is the job file). A claim whose file is not locked is
//     dead.
//   - A run is written into its partition folders under temporary names
//     (NAME.TOKEN.tmp), then each is renamed into place, the runs table's
//     last: a run is in the dataset (committed) once
//     runs/run_id=N/part-0.parquet is there, and readers (views.sql)
//     keep only the rows of committed runs.
//   - Each job first clears what dead jobs left (Cleanup): the partitions
//     of a dead claim's run that is not committed, the temporary files of
//     dead jobs, the partitions of a run that is neither committed nor
//     claimed (left by a traceduck that wrote datasets before claims), and
//     the dead claims. A live claim is never touched: who clears a dead
//     claim holds its lock while it does, so a second cleaner takes the
//     claim for live, and a job can take the run_id again only once the
//     claim is gone.

// claimsDir holds the claims of the jobs writing into a dataset. Its name
// starts with a dot: no table folder does (tableFolder), and Spark and
// Trino skip it.
const claimsDir = ".claims"

const (
	jobPrefix = "job-"
	runPrefix = "run_id="
	shaPrefix = "sha256="
)

// Writer is one job writing into the dataset at a folder: it holds its
// job file locked from NewWriter to Close.
type Writer struct {
	dir    string
	token  string
	job    *os.File
	jobFI  os.FileInfo
	claims map[string]bool

	// step, when not nil, is called at each point of the writer's work
	// where a process may die (each file written, renamed or removed, each
	// claim taken), its clearing of what dead jobs left included: the
	// crash tests kill the process there.
	step func(point string)
}

// NewWriter starts a job writing into the dataset at dir (created when
// missing): it takes its job file, then clears what dead jobs left. step,
// when not nil, is called at each point where the process may die (see
// Writer); nil but in crash tests.
func NewWriter(dir string, step func(point string)) (*Writer, error) {
	if err := os.MkdirAll(filepath.Join(dir, claimsDir), 0o777); err != nil {
		return nil, err
	}
	w := &Writer{dir: dir, claims: map[string]bool{}, step: step}
	for attempt := 0; w.job == nil; attempt++ {
		if attempt == 100 {
			return nil, fmt.Errorf("%s: could not take a job file", filepath.Join(dir, claimsDir))
		}
		var b [8]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, err
		}
		token := hex.EncodeToString(b[:])
		f, fi, err := createLocked(w.claimPath(jobPrefix + token))
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if f == nil {
			continue // a cleaner took it: take another
		}
		host, _ := os.Hostname()
		fmt.Fprintf(f, "pid %d on %s since %s\n", os.Getpid(), host, time.Now().Format(time.RFC3339))
		w.token, w.job, w.jobFI = token, f, fi
	}
	if err := w.Cleanup(); err != nil {
		w.Close()
		return nil, err
	}
	return w, nil
}

// createLocked creates the file path (fs.ErrExist if it exists) and
// takes its lock. Between the create and the lock, a cleaner may have
// taken the unlocked file for a dead job's and removed it: then f is nil,
// and the caller takes another name.
func createLocked(path string) (f *os.File, fi os.FileInfo, err error) {
	f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		return nil, nil, err
	}
	if err := lockFile(f); err != nil {
		f.Close()
		os.Remove(path)
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	if fi, err = f.Stat(); err != nil {
		f.Close()
		return nil, nil, err
	}
	if cur, err := os.Stat(path); err != nil || !os.SameFile(fi, cur) {
		f.Close()
		return nil, nil, nil
	}
	return f, fi, nil
}

// Close ends the job: its claims and its job file are removed, then its
// lock is dropped.
func (w *Writer) Close() error {
	if w.job == nil {
		return nil
	}
	for name := range w.claims {
		w.release(name)
	}
	err := os.Remove(w.claimPath(jobPrefix + w.token))
	if cerr := w.job.Close(); err == nil {
		err = cerr
	}
	w.job = nil
	return err
}

func (w *Writer) claimPath(name string) string { return filepath.Join(w.dir, claimsDir, name) }

func (w *Writer) stepAt(format string, args ...any) {
	if w.step != nil {
		w.step(fmt.Sprintf(format, args...))
	}
}

func runClaim(id int32) string { return fmt.Sprintf("%s%d", runPrefix, id) }

// holder is who holds a claim.
type holder int

const (
	heldGone holder = iota // nobody: the name is gone, or names another file than the one judged
	heldByUs
	heldLive
	heldDead
)

// judge tells who holds the claim name. A dead claim is returned opened
// and locked (f): the caller clears what its job left, removes the name,
// then closes f. desc is a live holder's own description (pid, host,
// start).
func (w *Writer) judge(name string) (h holder, f *os.File, desc string, err error) {
	path := w.claimPath(name)
	// This job's own claims are told by name, without opening them: over
	// NFS, flock is a POSIX lock, which the process loses when it closes
	// any descriptor of the file.
	if fi, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return heldGone, nil, "", nil
	} else if err != nil {
		return 0, nil, "", err
	} else if os.SameFile(fi, w.jobFI) {
		return heldByUs, nil, "", nil
	}
	// Read-write: over NFS, an exclusive lock needs a file open for writing.
	f, err = os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return heldGone, nil, "", nil
	}
	if err != nil {
		return 0, nil, "", err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return 0, nil, "", err
	}
	if os.SameFile(fi, w.jobFI) {
		// Our own, linked under this name since the Stat: not possible
		// (a writer is one goroutine), but never unlock our own file.
		return heldByUs, nil, "", nil
	}
	ok, err := tryLockFile(f)
	if err != nil {
		f.Close()
		return 0, nil, "", fmt.Errorf("%s: %w", path, err)
	}
	if !ok {
		var b [256]byte
		n, _ := io.ReadFull(f, b[:])
		f.Close()
		return heldLive, nil, strings.TrimSpace(string(b[:n])), nil
	}
	// Locked by us now: its job is dead, unless the name was removed (the
	// job released it before it ended) or taken again since it was opened.
	if cur, err := os.Stat(path); err != nil || !os.SameFile(fi, cur) {
		f.Close()
		return heldGone, nil, "", nil
	}
	return heldDead, f, "", nil
}

// claim takes the claim name for this job. busy is the description of the
// live job that holds it instead; ours says this job held it already.
func (w *Writer) claim(name string) (ours bool, busy string, err error) {
	for attempt := 0; attempt < 100; attempt++ {
		err := os.Link(w.claimPath(jobPrefix+w.token), w.claimPath(name))
		if err == nil {
			w.claims[name] = true
			return false, "", nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return false, "", err
		}
		h, f, desc, err := w.judge(name)
		if err != nil {
			return false, "", err
		}
		switch h {
		case heldByUs:
			return true, "", nil
		case heldLive:
			if desc == "" {
				desc = "a job that has just started"
			}
			return false, desc, nil
		case heldDead:
			if err := w.reap(name, f); err != nil {
				return false, "", err
			}
		}
	}
	return false, "", fmt.Errorf("%s: could not take the claim", w.claimPath(name))
}

// release gives up a claim of this job.
func (w *Writer) release(name string) {
	if w.claims[name] {
		os.Remove(w.claimPath(name))
		delete(w.claims, name)
	}
}

// reap clears what the dead job of the claim name (held locked as f)
// left, then removes the name.
func (w *Writer) reap(name string, f *os.File) error {
	defer f.Close()
	switch {
	case strings.HasPrefix(name, runPrefix):
		id, ok := partitionID(name)
		if ok {
			if err := w.clearRun(id); err != nil {
				return err
			}
		}
	case strings.HasPrefix(name, jobPrefix):
		if err := w.removeTemps(strings.TrimPrefix(name, jobPrefix)); err != nil {
			return err
		}
	}
	if err := os.Remove(w.claimPath(name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	w.stepAt("removed the dead claim %s", name)
	return nil
}

// tableFolders lists the dataset's table folders.
func (w *Writer) tableFolders() ([]string, error) {
	entries, err := os.ReadDir(w.dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// committed says whether run id is in the dataset.
func (w *Writer) committed(id int32) (bool, error) {
	_, err := os.Stat(filepath.Join(w.dir, "runs", runClaim(id), partFile))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// clearRun removes what a job that died left of run id: every partition
// of the run when it is not committed, else only temporary files in its
// partitions (a dead job that was replacing it had not begun to).
func (w *Writer) clearRun(id int32) error {
	done, err := w.committed(id)
	if err != nil {
		return err
	}
	folders, err := w.tableFolders()
	if err != nil {
		return err
	}
	for _, t := range folders {
		part := filepath.Join(w.dir, t, runClaim(id))
		if !done {
			if _, err := os.Lstat(part); err != nil {
				continue
			}
			if err := os.RemoveAll(part); err != nil {
				return err
			}
			w.stepAt("removed %s", filepath.Join(t, runClaim(id)))
			continue
		}
		entries, err := os.ReadDir(part)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if _, ok := tempToken(e.Name()); ok {
				if err := os.Remove(filepath.Join(part, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
					return err
				}
			}
		}
	}
	return nil
}

// tempToken is the job token of a temporary file's name
// (part-0.parquet.TOKEN.tmp, views.sql.TOKEN.tmp; an older traceduck put
// its pid where the token is); ok is false for a name of another kind.
func tempToken(name string) (token string, ok bool) {
	rest, ok := strings.CutSuffix(name, ".tmp")
	if !ok {
		return "", false
	}
	for _, base := range []string{partFile + ".", ViewsFile + "."} {
		if t, ok := strings.CutPrefix(rest, base); ok && t != "" && !strings.ContainsAny(t, "./") {
			return t, true
		}
	}
	return "", false
}

// tempFiles lists the temporary files of the dataset's folder and of its
// table folders (a temporary file in a run's partition goes with the
// run: clearRun).
func (w *Writer) tempFiles() ([]string, error) {
	folders, err := w.tableFolders()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, d := range append([]string{"."}, folders...) {
		entries, err := os.ReadDir(filepath.Join(w.dir, d))
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return nil, err
		}
		for _, e := range entries {
			if _, ok := tempToken(e.Name()); ok && !e.IsDir() {
				out = append(out, filepath.Join(w.dir, d, e.Name()))
			}
		}
	}
	return out, nil
}

// removeTemps removes the temporary files of the job with token.
func (w *Writer) removeTemps(token string) error {
	files, err := w.tempFiles()
	if err != nil {
		return err
	}
	for _, f := range files {
		if t, _ := tempToken(filepath.Base(f)); t == token {
			if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			w.stepAt("removed %s", f)
		}
	}
	return nil
}

// Cleanup clears what jobs that died left in the dataset: their dead
// claims with the partitions of their runs that are not committed and
// their temporary files, and the partitions of runs that are neither
// committed nor claimed. It never touches what a live job holds.
func (w *Writer) Cleanup() error {
	if !canJudge {
		return nil
	}
	entries, err := os.ReadDir(filepath.Join(w.dir, claimsDir))
	if err != nil {
		return err
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, jobPrefix) && !strings.HasPrefix(name, runPrefix) && !strings.HasPrefix(name, shaPrefix) {
			continue
		}
		h, f, _, err := w.judge(name)
		if err != nil {
			return err
		}
		if h == heldDead {
			if err := w.reap(name, f); err != nil {
				return err
			}
		}
	}

	// Temporary files of no live job (a job removes its own before it
	// ends; a name without a job's token is an older traceduck's).
	temps, err := w.tempFiles()
	if err != nil {
		return err
	}
	for _, path := range temps {
		token, _ := tempToken(filepath.Base(path))
		if token == w.token {
			continue
		}
		h, f, _, err := w.judge(jobPrefix + token)
		if err != nil {
			return err
		}
		switch h {
		case heldDead:
			if err := w.reap(jobPrefix+token, f); err != nil {
				return err
			}
		case heldGone:
			if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			w.stepAt("removed %s", path)
		}
	}

	// Partitions of runs neither committed nor claimed. They are cleared
	// under a claim of the run_id, so that no job takes the id meanwhile.
	claimed := map[int32]bool{}
	if entries, err = os.ReadDir(filepath.Join(w.dir, claimsDir)); err != nil {
		return err
	}
	for _, e := range entries {
		if id, ok := partitionID(e.Name()); ok {
			claimed[id] = true
		}
	}
	folders, err := w.tableFolders()
	if err != nil {
		return err
	}
	orphans := map[int32]bool{}
	for _, t := range folders {
		parts, err := os.ReadDir(filepath.Join(w.dir, t))
		if err != nil {
			return err
		}
		for _, p := range parts {
			id, ok := partitionID(p.Name())
			if !ok || claimed[id] || orphans[id] {
				continue
			}
			done, err := w.committed(id)
			if err != nil {
				return err
			}
			if !done {
				orphans[id] = true
			}
		}
	}
	ids := make([]int32, 0, len(orphans))
	for id := range orphans {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		ours, busy, err := w.claim(runClaim(id))
		if err != nil {
			return err
		}
		if ours || busy != "" {
			continue
		}
		err = w.clearRun(id)
		w.release(runClaim(id))
		if err != nil {
			return err
		}
	}
	return nil
}

// claimNewRun claims the next run_id of the dataset: one above every run
// committed, being written or claimed.
func (w *Writer) claimNewRun() (int32, error) {
	next := int32(1)
	for _, d := range []string{"runs", claimsDir} {
		entries, err := os.ReadDir(filepath.Join(w.dir, d))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return 0, err
		}
		for _, e := range entries {
			if id, ok := partitionID(e.Name()); ok && id >= next {
				next = id + 1
			}
		}
	}
	for ; next > 0; next++ {
		ours, busy, err := w.claim(runClaim(next))
		if err != nil {
			return 0, err
		}
		if ours || busy != "" {
			continue
		}
		// A job may have committed the id and released it since the
		// listing.
		done, err := w.committed(next)
		if err != nil {
			return 0, err
		}
		if done {
			w.release(runClaim(next))
			continue
		}
		return next, nil
	}
	return 0, fmt.Errorf("%s: no run_id left", w.dir)
}

// inside checks that path is inside the dataset's folder.
func (w *Writer) inside(path string) error {
	rel, err := filepath.Rel(w.dir, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return fmt.Errorf("%s: outside the dataset %s, not written", path, w.dir)
	}
	return nil
}

// copyPart writes the rows of query into target's temporary name
// (TARGET.TOKEN.tmp) and returns that name.
func (w *Writer) copyPart(ctx context.Context, db *sql.DB, query, target string) (string, error) {
	if err := w.inside(target); err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o777); err != nil {
		return "", err
	}
	tmp := target + "." + w.token + ".tmp"
	if _, err := db.ExecContext(ctx, fmt.Sprintf("COPY (%s) TO %s (FORMAT parquet, COMPRESSION zstd)", query, queries.Literal(tmp))); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("%s: %w", target, err)
	}
	return tmp, nil
}

// rename moves a temporary file into place and counts it.
func (w *Writer) rename(tmp, target string, res *ParquetResult) error {
	if err := os.Rename(tmp, target); err != nil {
		os.Remove(tmp)
		return err
	}
	st, err := os.Stat(target)
	if err != nil {
		return err
	}
	res.Files++
	res.Bytes += st.Size()
	return nil
}

// writeShared writes views.sql and the tables without a run_id, before
// any run is committed, so that a dataset with a run can be read.
func (w *Writer) writeShared(ctx context.Context, db *sql.DB, tables []table, res *ParquetResult) error {
	text, err := viewsSQL(tables)
	if err != nil {
		return err
	}
	views := filepath.Join(w.dir, ViewsFile)
	tmp := views + "." + w.token + ".tmp"
	if err := os.WriteFile(tmp, []byte(text), 0o666); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, views); err != nil {
		os.Remove(tmp)
		return err
	}
	w.stepAt("wrote %s", ViewsFile)
	for _, t := range tables {
		if t.perRun {
			continue
		}
		target := filepath.Join(w.dir, t.folder, partFile)
		tmp, err := w.copyPart(ctx, db, "SELECT * FROM "+queries.Ident(t.name), target)
		if err != nil {
			return err
		}
		if err := w.rename(tmp, target, res); err != nil {
			return err
		}
		w.stepAt("wrote %s", filepath.Join(t.folder, partFile))
	}
	return nil
}

// writeRun writes run from of db as run to of the dataset (claimed by this
// job): every table's partition under its temporary name, then each
// renamed into place, the runs table's last (the commit). With replace,
// the dataset holds run to (the same trace): it is taken out (its runs
// partition removed) just before the renames, so that a reader never sees
// the old files mixed with the new.
func (w *Writer) writeRun(ctx context.Context, db *sql.DB, tables []table, from, to int32, replace bool, res *ParquetResult) (err error) {
	var tmps, targets []string
	oldIntact := replace
	defer func() {
		if err == nil {
			return
		}
		for _, tmp := range tmps {
			os.Remove(tmp)
		}
		if !oldIntact {
			w.removeRun(to)
		}
	}()
	for _, t := range tables {
		if !t.perRun {
			continue
		}
		var cols []string
		for _, c := range t.columns {
			if c != "run_id" {
				cols = append(cols, queries.Ident(c))
			}
		}
		q := fmt.Sprintf("SELECT %s FROM %s WHERE run_id = %d", strings.Join(cols, ", "), queries.Ident(t.name), from)
		target := filepath.Join(w.dir, t.folder, runClaim(to), partFile)
		tmp, err := w.copyPart(ctx, db, q, target)
		if err != nil {
			return err
		}
		tmps, targets = append(tmps, tmp), append(targets, target)
		w.stepAt("wrote %s of run %d", t.name, to)
	}
	if replace {
		oldIntact = false
		if err := os.Remove(targets[len(targets)-1]); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		w.stepAt("took out run %d", to)
	}
	for i := range tmps {
		if err := w.rename(tmps[i], targets[i], res); err != nil {
			return err
		}
		w.stepAt("renamed %s", targets[i])
	}
	return nil
}

// removeRun removes every partition of run id (a run this job failed to
// write).
func (w *Writer) removeRun(id int32) {
	folders, _ := w.tableFolders()
	for _, t := range folders {
		os.RemoveAll(filepath.Join(w.dir, t, runClaim(id)))
	}
}

// runInfo is a run of the database being written.
type runInfo struct {
	id        int32
	name, sha string
	hasSHA256 bool
}

func readRunInfo(ctx context.Context, db *sql.DB, id int32) (runInfo, error) {
	r := runInfo{id: id}
	var name, sha sql.NullString
	err := db.QueryRowContext(ctx, "SELECT name, sha256 FROM runs WHERE run_id = ?", id).Scan(&name, &sha)
	if errors.Is(err, sql.ErrNoRows) {
		return r, fmt.Errorf("no run %d", id)
	}
	r.name, r.sha, r.hasSHA256 = name.String, sha.String, sha.Valid && sha.String != ""
	return r, err
}

// BusyError says that another live job holds a claim this one needs.
type BusyError struct {
	What   string // what is busy, in words
	Holder string // the holder's description (pid, host, start)
}

func (e *BusyError) Error() string { return fmt.Sprintf("%s (%s)", e.What, e.Holder) }

// DuplicateError says that the dataset already holds the trace.
type DuplicateError struct {
	Dir string
	ID  int32 // the dataset's run with the same sha256
}

func (e *DuplicateError) Error() string {
	return fmt.Sprintf("already in %s as run %d (same sha256)", e.Dir, e.ID)
}

// AddRun writes run of db (a database that holds the trace just ingested)
// into the dataset as a new run, under the next free run_id, and returns
// that id. Unless force, a trace the dataset holds (the same sha256) is
// refused (*DuplicateError), as is one another live job is writing into
// it (*BusyError): the sha256 is claimed before the dataset's runs are
// looked at, so that of jobs ingesting one trace at once only one writes
// it.
func (w *Writer) AddRun(ctx context.Context, db *sql.DB, run int32, force bool) (int32, ParquetResult, error) {
	var res ParquetResult
	tables, err := baseTables(ctx, db)
	if err != nil {
		return 0, res, err
	}
	info, err := readRunInfo(ctx, db, run)
	if err != nil {
		return 0, res, err
	}
	if !force && info.hasSHA256 {
		sha := shaPrefix + info.sha
		_, busy, err := w.claim(sha)
		if err != nil {
			return 0, res, err
		}
		if busy != "" {
			return 0, res, &BusyError{What: "another job is writing the same trace (same sha256) into " + w.dir + " now", Holder: busy}
		}
		defer w.release(sha)
		w.stepAt("claimed %s", sha)
		have, err := datasetRuns(ctx, db, w.dir)
		if err != nil {
			return 0, res, err
		}
		if id := sameTrace(have, info.sha, nil); id != 0 {
			return 0, res, &DuplicateError{Dir: w.dir, ID: id}
		}
	}
	id, err := w.claimNewRun()
	if err != nil {
		return 0, res, err
	}
	defer w.release(runClaim(id))
	w.stepAt("claimed run_id=%d", id)
	if err := w.writeShared(ctx, db, tables, &res); err != nil {
		return 0, res, err
	}
	if err := w.writeRun(ctx, db, tables, run, id, false, &res); err != nil {
		return 0, res, err
	}
	return id, res, nil
}

// sameTrace is the lowest run_id of have with the sha256 sha that is not
// in skip, 0 when none.
func sameTrace(have map[int32]DatasetRun, sha string, skip map[int32]bool) int32 {
	best := int32(0)
	for id, r := range have {
		if r.SHA256 == sha && sha != "" && !skip[id] && (best == 0 || id < best) {
			best = id
		}
	}
	return best
}

// Placed says where Export wrote a run of the database.
type Placed struct {
	From, To int32
	Name     string
	// Replaced: run To of the dataset held the same trace (the same
	// sha256), and was replaced.
	Replaced bool
	// Over is the dataset's run From when it holds another trace, which
	// made the run go to a new run_id instead.
	Over *DatasetRun
}

// Export writes runs of db into the dataset. A run keeps its run_id
// unless the dataset holds another trace (another sha256) under it: then
// it takes the next free run_id. A run whose trace the dataset holds
// (the same sha256) replaces that run, under its run_id. A run of the
// dataset whose sha256 differs is never replaced. Runs are written one by
// one: on an error, the runs before it stay written.
func (w *Writer) Export(ctx context.Context, db *sql.DB, runs []int32) ([]Placed, ParquetResult, error) {
	var res ParquetResult
	if len(runs) == 0 {
		return nil, res, errors.New("no run to export")
	}
	tables, err := baseTables(ctx, db)
	if err != nil {
		return nil, res, err
	}
	infos := make([]runInfo, len(runs))
	for i, id := range runs {
		if infos[i], err = readRunInfo(ctx, db, id); err != nil {
			return nil, res, err
		}
	}
	plan, err := w.plan(ctx, db, infos)
	if err != nil {
		return nil, res, err
	}
	if err := w.writeShared(ctx, db, tables, &res); err != nil {
		return nil, res, err
	}
	var placed []Placed
	for i, info := range infos {
		p := plan[i]
		if p.To == 0 {
			if p.To, err = w.claimNewRun(); err != nil {
				return placed, res, err
			}
			w.stepAt("claimed run_id=%d", p.To)
		}
		if err := w.exportRun(ctx, db, tables, info, p, &res); err != nil {
			return placed, res, err
		}
		placed = append(placed, p)
	}
	return placed, res, nil
}

// exportRun writes one run of Export under its claims, then releases them.
func (w *Writer) exportRun(ctx context.Context, db *sql.DB, tables []table, info runInfo, p Placed, res *ParquetResult) error {
	defer w.release(runClaim(p.To))
	if info.hasSHA256 {
		// Keeps an ingest --parquet of the same trace from adding it again
		// while it is out of the dataset.
		sha := shaPrefix + info.sha
		_, busy, err := w.claim(sha)
		if err != nil {
			return err
		}
		if busy != "" {
			return &BusyError{What: fmt.Sprintf("another job is writing the trace of run %d (%s, same sha256) into %s now", info.id, info.name, w.dir), Holder: busy}
		}
		defer w.release(sha)
		w.stepAt("claimed %s", sha)
	}
	return w.writeRun(ctx, db, tables, info.id, p.To, p.Replaced, res)
}

// plan decides where each run goes and claims the run_ids it keeps or
// replaces; a run left with To 0 takes a new run_id when its turn comes.
func (w *Writer) plan(ctx context.Context, db *sql.DB, infos []runInfo) ([]Placed, error) {
	have, err := datasetRuns(ctx, db, w.dir)
	if err != nil {
		return nil, err
	}
	plan := make([]Placed, len(infos))
	taken := map[int32]bool{}
	decide := func() {
		for i, info := range infos {
			p := Placed{From: info.id, Name: info.name}
			h, held := have[info.id]
			switch {
			case held && info.hasSHA256 && h.SHA256 == info.sha && !taken[info.id]:
				p.To, p.Replaced = info.id, true
			case sameTrace(have, info.sha, taken) != 0 && info.hasSHA256:
				p.To, p.Replaced = sameTrace(have, info.sha, taken), true
			case !held && !taken[info.id]:
				p.To = info.id
			}
			if held && h.SHA256 != info.sha && p.To != info.id {
				h := h
				p.Over = &h
			}
			if p.To != 0 {
				taken[p.To] = true
			}
			plan[i] = p
		}
	}
	decide()
	for i := range plan {
		if plan[i].To == 0 {
			continue
		}
		ours, busy, err := w.claim(runClaim(plan[i].To))
		if err != nil {
			return nil, err
		}
		if busy != "" {
			return nil, &BusyError{What: fmt.Sprintf("run %d of %s is being written by another job", plan[i].To, w.dir), Holder: busy}
		}
		if ours {
			return nil, fmt.Errorf("run %d of %s planned twice", plan[i].To, w.dir)
		}
	}
	// Under the claims, nothing changes the runs planned; the dataset may
	// have changed between the listing and the claims.
	now, err := datasetRuns(ctx, db, w.dir)
	if err != nil {
		return nil, err
	}
	for i := range plan {
		p := &plan[i]
		if p.To == 0 {
			continue
		}
		h, held := now[p.To]
		if p.Replaced == held && (!held || h.SHA256 == infos[i].sha) {
			continue
		}
		w.release(runClaim(p.To))
		p.To, p.Replaced = 0, false
		if held && p.Over == nil && h.ID == p.From {
			h := h
			p.Over = &h
		}
	}
	return plan, nil
}
