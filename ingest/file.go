package ingest

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/traceduck/traceduck/schema"
)

// Options are the settings of one `traceduck ingest` of one path.
type Options struct {
	Format  string      // empty: detect
	Name    string      // run name; empty: the file's base name
	Tags    [][2]string // --tag k=v
	Force   bool        // ingest again a file already in the database
	SkipBad bool        // bad lines to diagnostics instead of stopping
	// IdleTasks are --idle-task patterns: CPU holders whose name matches
	// one are idle tasks (schema.GlobRegexp, docs/semantics.md).
	IdleTasks []string
	Params    map[string]string // format flags (see Configurable)
	// Progress, when set, is called with the Source before the ingest
	// starts so that the caller can poll BytesRead.
	Progress func(src *Source)
	// BatchRows overrides schema.DefaultBatchRows (tests).
	BatchRows int
	// CoarseTree makes every dense histogram of the state tree coarse
	// (schema.IngestOptions; tests).
	CoarseTree bool
	// TreeTargets leaves the state tree's unknown percentiles to the
	// view (schema.IngestOptions; tests).
	TreeTargets bool
	// BeforeCommit is schema.IngestOptions.BeforeCommit (tests).
	BeforeCommit func()
}

// Result is what one ingest produced.
type Result struct {
	RunID  int32
	Format string
	Events int64
	// Counts are the run's rows and problems, for the line an ingest
	// prints; zero (but Events) when they could not be read back.
	Counts schema.RunCounts
	// SummaryErr is why the run's summary (schema.DB.Summarize) could not
	// be stored; the run is in the database all the same.
	SummaryErr error
}

// Path ingests the trace at path ("-" for standard input) as one run of
// db, in one transaction.
//
// A file is hashed beside the ingest rather than before it (hashing a
// 567 MB BTF file took 0.5 s, all before the first event): a duplicate is
// refused as soon as its hash is known, which stops the ingest, and the
// hash is checked again inside the transaction (schema).
//
// A path that is not a regular file (standard input, a named pipe, a
// device) is a stream: it is read once, hashed as it is read, and its
// format is detected from its first bytes like any other's.
func Path(ctx context.Context, db *schema.DB, path string, opt Options) (Result, error) {
	src, err := OpenContext(ctx, path)
	if err != nil {
		return Result{}, err
	}
	defer src.Close()
	if !src.File() {
		return Opened(ctx, db, src, opt)
	}
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	var sum string
	var hashErr error
	hashed := make(chan struct{})
	go func() {
		defer close(hashed)
		if sum, hashErr = FileSHA256(path); hashErr != nil || opt.Force {
			return
		}
		if dup, err := db.FindSHA256(ctx, sum); err != nil {
			if ctx.Err() == nil {
				hashErr = err
			}
		} else if dup != nil {
			stop(dup)
		}
	}()
	src.NoHash() // the goroutine hashes the file
	res, err := opened(ctx, db, src, func() (string, error) { <-hashed; return sum, hashErr }, opt)
	<-hashed
	var dup *schema.DuplicateError
	if errors.As(context.Cause(ctx), &dup) {
		return Result{}, fmt.Errorf("%s: %w", path, dup)
	}
	return res, err // opened returns hashErr when the ingest itself succeeded
}

// Opened ingests an opened source (standard input, a test's bytes), its
// sha256 computed as it is read.
func Opened(ctx context.Context, db *schema.DB, src *Source, opt Options) (Result, error) {
	return opened(ctx, db, src, src.SHA256, opt)
}

// opened ingests src; sum returns its sha256 once it has been read.
func opened(ctx context.Context, db *schema.DB, src *Source, sum func() (string, error), opt Options) (Result, error) {
	var ing Ingester
	var err error
	if opt.Format != "" {
		ing, err = Lookup(opt.Format)
	} else {
		ing, err = Detect(src)
	}
	if err != nil {
		return Result{}, err
	}
	if ing, err = Configure(ing, opt.Params); err != nil {
		return Result{}, err
	}
	name := opt.Name
	if name == "" {
		name = RunName(src.Name)
	}
	info := schema.RunInfo{Name: name, Source: src.Name, Format: ing.Format().Name, Tags: opt.Tags, SkipBad: opt.SkipBad, IdleTasks: opt.IdleTasks, Offsets: ing.Format().Offsets}
	iopt := schema.IngestOptions{Force: opt.Force, BatchRows: opt.BatchRows, CoarseTree: opt.CoarseTree, TreeTargets: opt.TreeTargets, BeforeCommit: opt.BeforeCommit}
	var hashErr error
	iopt.SHA256 = func() string {
		s, err := sum()
		hashErr = err
		return s
	}
	if opt.Progress != nil {
		opt.Progress(src)
	}
	var events int64
	id, err := db.Ingest(ctx, info, iopt, func(w *schema.RunWriter) error {
		if err := ing.Ingest(ctx, src, w); err != nil {
			return err
		}
		events = w.Events()
		return nil
	})
	if err == nil && hashErr != nil {
		err = hashErr
	}
	if err != nil {
		if dup, ok := err.(*schema.DuplicateError); ok {
			return Result{}, fmt.Errorf("%s: %w", src.Name, dup)
		}
		return Result{}, err
	}
	res := Result{RunID: id, Format: ing.Format().Name, Events: events}
	// The run is committed: counting its rows cannot fail it, and its
	// summary (schema.DB.SetSummarize) may fail without taking it out.
	if c, err := db.RunCounts(ctx, id, src.Name, ing.Format().Offsets); err == nil {
		res.Counts = c
	}
	res.Counts.Events = events
	res.SummaryErr = db.Summarize(ctx, id)
	return res, nil
}

// RunName is the default run name of a path: its base name without the
// extension; "stdin" for "-".
func RunName(path string) string {
	if path == "-" {
		return "stdin"
	}
	base := filepath.Base(path)
	return strings.TrimSuffix(base, filepath.Ext(base))
}
