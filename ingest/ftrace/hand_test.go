package ftrace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/internal/dbtest"
	"golang.org/x/tools/txtar"
)

// The queries that show a run's tables in the hand-worked files, by
// section name (intervals is intervalsSQL).
var handQueries = []struct{ name, sql string }{
	{"intervals", intervalsSQL},
	{"events", `SELECT e.seq, e.ts, coalesce(e.cpu::VARCHAR, '-'), e.class, e.event, coalesce(c.name, '-'), coalesce(o.name, '-'), coalesce(e.args::VARCHAR, '-'), e.src_line
		FROM events e LEFT JOIN objects c ON c.run_id = e.run_id AND c.object_id = e.context_id LEFT JOIN objects o ON o.run_id = e.run_id AND o.object_id = e.object_id
		WHERE e.run_id = $1 ORDER BY e.seq`},
	{"objects", `SELECT o.object_id, o.kind, o.name, coalesce(o.native_id::VARCHAR, '-'), coalesce(o.pid::VARCHAR, '-'), coalesce(p.name, '-'), coalesce(o.attrs::VARCHAR, '-')
		FROM objects o LEFT JOIN objects p ON p.run_id = o.run_id AND p.object_id = o.parent_id WHERE o.run_id = $1 ORDER BY o.object_id`},
	{"levels", `SELECT kind, state, level, parent_state FROM state_levels WHERE run_id = $1 ORDER BY kind, level, state`},
	{"diagnostics", `SELECT coalesce(src_line::VARCHAR, '-'), severity, count, message FROM diagnostics WHERE run_id = $1 ORDER BY src_line, message`},
	{"meta", `SELECT time_unit, ns_per_unit, event_count, coalesce(first_ts::VARCHAR, '-'), coalesce(last_ts::VARCHAR, '-'), meta FROM runs WHERE run_id = $1`},
}

// TestHand: each testdata/hand/*.txtar holds a small trace (trace.txt)
// whose comment says what it shows; its intervals section was worked out
// by hand from the lines (the comment gives the reasoning where it is not
// plain), the other sections were written by -update and reviewed line
// by line. Intervals: object | instance | state | start | end | cpu (-1:
// none) | truncated.
func TestHand(t *testing.T) {
	files, _ := filepath.Glob("testdata/hand/*.txtar")
	if len(files) == 0 {
		t.Fatal("no testdata/hand/*.txtar")
	}
	db := dbtest.Open(t)
	for _, path := range files {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(path)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]string{}
			var trace []byte
			for _, f := range ar.Files {
				want[f.Name] = string(f.Data)
				if f.Name == "trace.txt" {
					trace = f.Data
				}
			}
			if trace == nil {
				t.Fatal("no trace.txt")
			}
			run, err := ingestText(t, db, filepath.Base(path), trace, false, 3)
			if err != nil {
				t.Fatal(err)
			}
			got := []txtar.File{{Name: "trace.txt", Data: trace}}
			for _, q := range handQueries {
				got = append(got, txtar.File{Name: q.name, Data: []byte(dbtest.Query(t, db.SQL(), q.sql, run))})
			}
			if *dbtest.Update {
				ar.Files = got
				if err := os.WriteFile(path, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			for _, g := range got[1:] {
				w, ok := want[g.Name]
				if !ok {
					t.Errorf("no %s section (run with -update, then review)", g.Name)
				} else if w != string(g.Data) {
					t.Errorf("-- %s --\n%s", g.Name, dbtest.Diff(w, string(g.Data)))
				}
			}
		})
	}
}
