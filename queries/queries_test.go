package queries_test

import (
	"context"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/queries"
	"github.com/traceduck/traceduck/schema"
)

// TestViews writes a run with known events and intervals through the
// RunWriter and checks what the views say about it.
func TestViews(t *testing.T) {
	ctx := context.Background()
	db, err := schema.Open(ctx, filepath.Join(t.TempDir(), "v.duckdb"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := queries.Install(ctx, db.SQL()); err != nil {
		t.Fatal(err)
	}
	// Installing again replaces, it does not fail.
	if err := queries.Install(ctx, db.SQL()); err != nil {
		t.Fatal(err)
	}
	for run := 1; run <= 2; run++ {
		_, err := db.Ingest(ctx, schema.RunInfo{Name: "r"}, schema.IngestOptions{}, func(w *schema.RunWriter) error {
			a := w.Object("task", "A")
			core := w.Object("cpu", "C0")
			cls, start, stop := w.Sym("T"), w.Sym("start"), w.Sym("preempt")
			running, ready := w.Sym("running"), w.Sym("ready")
			// A runs 10..30 (20), ready 30..35 (5), runs 35..60 (25),
			// then ready from 60 until the end of the trace at 100:
			// truncated, left out.
			for _, s := range []struct {
				ts     int64
				ev, st schema.Sym
			}{{10, start, running}, {30, stop, ready}, {35, start, running}, {60, stop, ready}} {
				seq, err := w.Event(&schema.Event{TS: s.ts, CPU: 0, Class: cls, Event: s.ev, Context: core, Object: a,
					SourceInstance: schema.NoInstance, TargetInstance: 0})
				if err != nil {
					return err
				}
				if err := w.Transition(a, 0, s.ts, s.st, seq, 0); err != nil {
					return err
				}
			}
			_, err := w.Event(&schema.Event{TS: 100, CPU: schema.NoCPU, Class: w.Sym("SIM"), Event: w.Sym("finalize"),
				Context: schema.NoObject, Object: schema.NoObject, SourceInstance: schema.NoInstance, TargetInstance: schema.NoInstance})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	got := dbtest.Query(t, db.SQL(), "SELECT * FROM event_counts ORDER BY run_id, class, event")
	want := `1 | SIM | finalize | 1
1 | T | preempt | 2
1 | T | start | 2
2 | SIM | finalize | 1
2 | T | preempt | 2
2 | T | start | 2
`
	if got != want {
		t.Errorf("event_counts:\n%s\nwant\n%s", got, want)
	}
	got = dbtest.Query(t, db.SQL(), "SELECT * FROM state_summary WHERE run_id = 2 ORDER BY state")
	want = `2 | task | A | ready | 1 | 5 | 5 | 5
2 | task | A | running | 2 | 45 | 22.5 | 25
`
	if got != want {
		t.Errorf("state_summary:\n%s\nwant\n%s", got, want)
	}
}

// TestEveryViewHasAComment checks the house rule: a "-- name: ..." comment
// right before each view or macro says what it answers.
func TestEveryViewHasAComment(t *testing.T) {
	create := regexp.MustCompile(`(?im)^CREATE OR REPLACE (?:VIEW|MACRO|TEMP MACRO) +(\w+)`)
	for _, f := range queries.Files() {
		text, err := queries.Source(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range create.FindAllStringSubmatchIndex(text, -1) {
			name := text[m[2]:m[3]]
			if !strings.Contains(text[:m[0]], "-- "+name+":") {
				t.Errorf("%s: %s has no \"-- %s: ...\" comment before it", f, name, name)
			}
		}
	}
}

// TestDatasetSources: a file of queries/dataset/, which replaces its
// namesake in a Parquet dataset, creates the same macros and views, each
// with its comment; at least one does (state_stat_rows.sql).
func TestDatasetSources(t *testing.T) {
	create := regexp.MustCompile(`(?im)^CREATE OR REPLACE (?:VIEW|MACRO|TEMP MACRO) +(\w+)`)
	names := func(text string) []string {
		var out []string
		for _, m := range create.FindAllStringSubmatchIndex(text, -1) {
			name := text[m[2]:m[3]]
			if !strings.Contains(text[:m[0]], "-- "+name+":") {
				t.Errorf("%s has no \"-- %s: ...\" comment before it", name, name)
			}
			out = append(out, name)
		}
		sort.Strings(out)
		return out
	}
	replaced := 0
	for _, f := range queries.Files() {
		lib, err := queries.Source(f)
		if err != nil {
			t.Fatal(err)
		}
		ds, err := queries.DatasetSource(f)
		if err != nil {
			t.Fatal(err)
		}
		if ds == lib {
			continue
		}
		replaced++
		if got, want := strings.Join(names(ds), " "), strings.Join(names(lib), " "); got != want {
			t.Errorf("dataset/%s creates %s, queries/%s %s", f, got, f, want)
		}
	}
	if replaced == 0 {
		t.Error("no file of queries/dataset/ replaces one of queries/")
	}
}
