package btf_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/dbtest"
)

// TestMachine runs the state machine cases in testdata/machine: each
// txtar archive holds a trace (trace.btf) and the state intervals and
// diagnostics it must give (a core's intervals in time order; their
// instance is the holder's object_id, 0 when the core is idle), and, with
// a "cpu" section, the busy time of each core's holders (cpu_intervals),
// with "holds" and "waits" sections the rows of resource_holds and
// resource_waits. With -update the expected sections are rewritten from
// what the ingester produces.
func TestMachine(t *testing.T) {
	files, _ := filepath.Glob("testdata/machine/*.txtar")
	if len(files) == 0 {
		t.Fatal("no cases")
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			ar, err := txtar.ParseFile(path)
			if err != nil {
				t.Fatal(err)
			}
			sections := map[string]string{}
			for _, f := range ar.Files {
				sections[f.Name] = string(f.Data)
			}
			trace := filepath.Join(t.TempDir(), "trace.btf")
			if err := os.WriteFile(trace, []byte(sections["trace.btf"]), 0o644); err != nil {
				t.Fatal(err)
			}
			db := dbtest.Open(t)
			dbtest.Ingest(t, db, trace, ingest.Options{Format: "btf"})
			got := map[string]string{
				"intervals": dbtest.Query(t, db.SQL(), `SELECT o.name, s.instance, s.state, s.start_ts, s.end_ts, s.cpu, s.truncated
					FROM state_intervals s JOIN objects o USING (run_id, object_id)
					ORDER BY o.name, if(o.kind = 'cpu', 0, s.instance), s.start_ts, s.start_seq`),
				"diagnostics": dbtest.Query(t, db.SQL(), `SELECT coalesce(src_line, 0), severity, message, count FROM diagnostics ORDER BY 1, 3`),
			}
			names := []string{"intervals", "diagnostics"}
			if _, ok := sections["cpu"]; ok {
				// what each core's holders add up to (complete intervals)
				got["cpu"] = dbtest.Query(t, db.SQL(), `SELECT cpu, holder, busy, sum(dur) FROM cpu_intervals
					WHERE NOT truncated GROUP BY ALL ORDER BY cpu, holder`)
				names = append(names, "cpu")
			}
			for _, v := range []struct{ name, query string }{
				{"holds", `SELECT resource, resource_kind, holder, start_ts, end_ts, dur, truncated FROM resource_holds ORDER BY start_ts, holder`},
				{"waits", `SELECT resource, resource_kind, waiter, start_ts, end_ts, dur, truncated FROM resource_waits ORDER BY start_ts, waiter`},
			} {
				if _, ok := sections[v.name]; ok {
					got[v.name] = dbtest.Query(t, db.SQL(), v.query)
					names = append(names, v.name)
				}
			}
			if *dbtest.Update {
				for i, f := range ar.Files {
					if g, ok := got[f.Name]; ok {
						ar.Files[i].Data = []byte(g)
					}
				}
				if err := os.WriteFile(path, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			for _, name := range names {
				if strings.TrimSpace(got[name]) != strings.TrimSpace(sections[name]) {
					t.Errorf("%s:\n--- got\n%s--- want\n%s", name, got[name], sections[name])
				}
			}
		})
	}
}
