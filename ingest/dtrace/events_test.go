package dtrace

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/schema"
	"golang.org/x/tools/txtar"
)

// readEvents feeds text to an eventReader line by line, as the ingester
// does, and returns the numbers of the lines it left to the caller.
func readEvents(ctx context.Context, w *schema.RunWriter, text []byte) (left []int64, err error) {
	r := newEventReader(w, w.Info().Source)
	lr := ingest.NewLineReader(bytes.NewReader(text))
	err = lr.Each(ctx, w.Info().Source, "DTrace", func(line []byte, n int64) error {
		ok, err := r.Line(n, line)
		if !ok {
			left = append(left, n)
		}
		return err
	})
	if err != nil {
		return left, err
	}
	return left, r.End()
}

// ingestEvents writes text as one run of db through the event reader
// alone and returns the lines it left.
func ingestEvents(t testing.TB, db *schema.DB, name string, text []byte, skipBad bool) ([]int64, error) {
	t.Helper()
	return ingestEventsBatch(t, db, name, text, skipBad, 7)
}

// ingestEventsBatch is ingestEvents with batches of batchRows rows (the
// golden tests use tiny ones, to cross batch boundaries).
func ingestEventsBatch(t testing.TB, db *schema.DB, name string, text []byte, skipBad bool, batchRows int) ([]int64, error) {
	t.Helper()
	var left []int64
	info := schema.RunInfo{Name: name, Source: name, Format: "dtrace", SHA256: strconv.Itoa(len(text)) + name, SkipBad: skipBad}
	_, err := db.Ingest(context.Background(), info, schema.IngestOptions{Force: true, BatchRows: batchRows}, func(w *schema.RunWriter) error {
		var err error
		left, err = readEvents(context.Background(), w, text)
		return err
	})
	return left, err
}

// The queries that show a run's tables in the golden files, by name.
var goldenQueries = []struct{ name, sql string }{
	{"events", `SELECT e.seq, e.ts, coalesce(e.ts_raw::VARCHAR, '-'), coalesce(e.cpu::VARCHAR, '-'), e.class, e.event, coalesce(c.name, '-'), coalesce(o.name, '-'), coalesce(e.args::VARCHAR, '-'), e.src_line
		FROM events e LEFT JOIN objects c ON c.run_id = e.run_id AND c.object_id = e.context_id LEFT JOIN objects o ON o.run_id = e.run_id AND o.object_id = e.object_id
		WHERE e.run_id = $1 ORDER BY e.seq`},
	{"objects", `SELECT o.object_id, o.kind, o.name, coalesce(o.native_id::VARCHAR, '-'), coalesce(o.pid::VARCHAR, '-'), coalesce(p.name, '-')
		FROM objects o LEFT JOIN objects p ON p.run_id = o.run_id AND p.object_id = o.parent_id WHERE o.run_id = $1 ORDER BY o.object_id`},
	// a CPU's instance is its holder's object (written by the CPU
	// tracker): its name is shown
	{"intervals", `SELECT o.name, CASE WHEN o.kind = 'cpu' THEN coalesce(h.name, '-') ELSE s.instance::VARCHAR END, s.state, s.start_ts, s.end_ts,
		coalesce(s.cpu::VARCHAR, '-'), coalesce(s.start_seq::VARCHAR, '-'), coalesce(s.end_seq::VARCHAR, '-'), s.truncated
		FROM state_intervals s JOIN objects o USING (run_id, object_id)
		LEFT JOIN objects h ON h.run_id = s.run_id AND h.object_id = s.instance AND o.kind = 'cpu'
		WHERE s.run_id = $1 ORDER BY s.object_id, CASE WHEN o.kind = 'cpu' THEN 0 ELSE s.instance END, s.start_ts, s.start_seq`},
	{"levels", `SELECT kind, state, level, parent_state FROM state_levels WHERE run_id = $1 ORDER BY kind, level, state`},
	{"diagnostics", `SELECT coalesce(src_line::VARCHAR, '-'), severity, count, message FROM diagnostics WHERE run_id = $1 ORDER BY src_line, message`},
	{"meta", `SELECT time_unit, ns_per_unit, event_count, coalesce(first_ts::VARCHAR, '-'), coalesce(last_ts::VARCHAR, '-'), meta FROM runs WHERE run_id = $1`},
}

// TestEventsGolden: each testdata/events/*.txtar holds an event output
// (trace.txt), its comment says what it shows, and the other files hold
// the tables it must give and the lines the reader must leave ("left").
// Run with -update to rewrite them, then review the diff.
func TestEventsGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/events/*.txtar")
	if len(files) == 0 {
		t.Fatal("no testdata/events/*.txtar")
	}
	db := dbtest.Open(t)
	for _, path := range files {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var trace []byte
			for _, f := range ar.Files {
				if f.Name == "trace.txt" {
					trace = f.Data
				}
			}
			if trace == nil {
				t.Fatal("no trace.txt")
			}
			left, err := ingestEvents(t, db, filepath.Base(path), trace, false)
			if err != nil {
				t.Fatal(err)
			}
			var runID int32
			if err := db.SQL().QueryRow("SELECT max(run_id) FROM runs").Scan(&runID); err != nil {
				t.Fatal(err)
			}
			got := []txtar.File{{Name: "trace.txt", Data: trace}}
			var l strings.Builder
			for _, n := range left {
				l.WriteString(strconv.FormatInt(n, 10))
				l.WriteByte('\n')
			}
			got = append(got, txtar.File{Name: "left", Data: []byte(l.String())})
			for _, q := range goldenQueries {
				got = append(got, txtar.File{Name: q.name, Data: []byte(dbtest.Query(t, db.SQL(), q.sql, runID))})
			}
			want := ar.Files
			if *dbtest.Update {
				ar.Files = got
				if err := os.WriteFile(path, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if len(want) != len(got) {
				t.Fatalf("%d sections, want %d (run with -update)", len(got), len(want))
			}
			for i := range got {
				if want[i].Name != got[i].Name || string(want[i].Data) != string(got[i].Data) {
					t.Errorf("-- %s --\ngot:\n%s\nwant:\n%s", got[i].Name, got[i].Data, want[i].Data)
				}
			}
		})
	}
}

// TestEventsThenAggregations: an output whose script prints events and,
// at its END, aggregations (as syscalls.d with an @ added would) gives
// both: the event lines to events and state intervals, the blocks after
// them to aggregations and histograms, through the dtrace ingester.
func TestEventsThenAggregations(t *testing.T) {
	text := `#traceduck-events 1 unit=ns timestamp cpu pid tid probe
100 0 7 1 syscall::read:entry arg0=3 execname="app"
150 0 7 1 syscall::read:return ret=1 errno=0 execname="app"
200 1 7 2 syscall::read:entry arg0=4 execname="app"
290 1 7 2 syscall::read:return ret=1 errno=0 execname="app"
^C

  read                                                              2

  read
           value  ------------- Distribution ------------- count
              16 |                                         0
              32 |@@@@@@@@@@@@@@@@@@@@                     1
              64 |@@@@@@@@@@@@@@@@@@@@                     1
             128 |                                         0

`
	path := filepath.Join(t.TempDir(), "both.out")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	db := dbtest.Open(t)
	res := dbtest.Ingest(t, db, path, ingest.Options{})
	if res.Format != "dtrace" || res.Events != 4 {
		t.Fatalf("%+v", res)
	}
	for _, c := range []struct{ q, want string }{
		{"SELECT state, start_ts, end_ts, dur FROM state_intervals ORDER BY start_ts", "read | 100 | 150 | 50\nread | 200 | 290 | 90\n"},
		{"SELECT key, value FROM aggregations", "read | 2\n"},
		{"SELECT key, bucket_lo, bucket_hi, count FROM histograms WHERE count > 0 ORDER BY bucket_lo", "read | 32 | 64 | 1\nread | 64 | 128 | 1\n"},
		{"SELECT count(*) FROM diagnostics", "0\n"},
	} {
		if got := dbtest.Query(t, db.SQL(), c.q); got != c.want {
			t.Errorf("%s:\n%s\nwant:\n%s", c.q, got, c.want)
		}
	}
}
