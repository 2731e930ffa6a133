package baget_test

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/internal/recount"
	"github.com/traceduck/traceduck/internal/tracegen"
)

// cpuViews reads the same counts from the CPU views of a run.
func cpuViews(t *testing.T, run int32, db *sql.DB) recount.Baget {
	t.Helper()
	out := recount.Baget{Known: map[int]int64{}, Busy: map[int]int64{}, Held: map[string]int64{}}
	rs, err := db.Query(`SELECT c.native_id, u.holder, u.busy, u.ns FROM cpu_utilization u
		JOIN objects c ON c.run_id = u.run_id AND c.kind = 'cpu' AND c.name = u.cpu WHERE u.run_id = ?`, run)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	for rs.Next() {
		var n int
		var holder string
		var busy bool
		var ns int64
		if err := rs.Scan(&n, &holder, &busy, &ns); err != nil {
			t.Fatal(err)
		}
		out.Known[n] += ns
		if busy {
			out.Busy[n] += ns
			out.Held[holder] += ns
		}
	}
	if err := rs.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func compareRecount(t *testing.T, what string, got, want recount.Baget) {
	t.Helper()
	lines := func(r recount.Baget) []string {
		var l []string
		for n, v := range r.Known {
			l = append(l, fmt.Sprintf("cpu %d known %d busy %d", n, v, r.Busy[n]))
		}
		for h, v := range r.Held {
			l = append(l, fmt.Sprintf("holder %s %d", h, v))
		}
		sort.Strings(l)
		return l
	}
	compare(t, what, lines(got), lines(want))
}

// TestCPUTruthBaget: the CPU time of Baget logs, busy and known per CPU
// and held per thread and interrupt, as the CPU views give it equals the
// test's recount from the log's bytes (recountBagetCPU), exactly, on the
// bundled sample log and on generated logs of both ABIs, wrapped and
// not; and on those the recount equals the generator's truth. (There are
// no Baget logs among the external traces.)
func TestCPUTruthBaget(t *testing.T) {
	t.Run("sample", func(t *testing.T) {
		const log = "../../samples/baget/minirtos-2cpu.blog"
		db := dbtest.Open(t)
		res := dbtest.Ingest(t, db, log, ingest.Options{Format: "baget", Params: map[string]string{"description": "../../samples/baget/minirtos-2.1-ppc64.xml"}})
		rec, err := recount.ReadBaget(log)
		if err != nil {
			t.Fatal(err)
		}
		if len(rec.Known) != 2 || len(rec.Held) != 9 {
			t.Fatalf("recount: %d CPUs, %d holders, want 2 and 9 (6 threads, 3 interrupts)", len(rec.Known), len(rec.Held))
		}
		compareRecount(t, "sample", cpuViews(t, res.RunID, db.SQL()), rec)
	})
	for _, abi := range []string{"le32", "be64"} {
		for _, ring := range []int{0, 12} {
			t.Run(fmt.Sprintf("%s-ring%d", abi, ring), func(t *testing.T) {
				db := openDB(t)
				cfg := tracegen.BagetConfig{Events: 3000, CPUs: 3, Seed: 11, ABI: abi, RingBlocks: ring}
				res, truth := ingestGenerated(t, db, cfg)
				log, _, _, err := tracegen.GenerateBaget(cfg)
				if err != nil {
					t.Fatal(err)
				}
				path := filepath.Join(t.TempDir(), "log.blog")
				if err := os.WriteFile(path, log, 0o644); err != nil {
					t.Fatal(err)
				}
				rec, err := recount.ReadBaget(path)
				if err != nil {
					t.Fatal(err)
				}
				want := recount.Baget{Known: truth.CPUKnownNS, Busy: truth.CPUBusyNS, Held: map[string]int64{}}
				for _, iv := range truth.CPUStates {
					if iv.Busy() {
						want.Held[iv.State] += iv.EndNS - iv.StartNS
					}
				}
				compareRecount(t, "recount vs truth", rec, want)
				compareRecount(t, "views vs recount", cpuViews(t, res.RunID, db.SQL()), rec)
			})
		}
	}
}
