package schema

import (
	"math/rand/v2"
	"testing"
	"time"
)

// BenchmarkStateTree times the run writer's state intervals with and
// without the statistics of the state tree: 1M transitions of 64 tasks
// over 6 states whose levels (2 above 0) make 3 groups more per state,
// durations spread over three decades, batches dropped.
func BenchmarkStateTree(b *testing.B) {
	b.Run("tree", func(b *testing.B) { benchTree(b, true) })
	b.Run("no_tree", func(b *testing.B) { benchTree(b, false) })
}

func benchTree(b *testing.B, tree bool) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		w := NewRunWriter(RunInfo{Name: "bench"}, &nopSink{rows: map[string]int64{}}, nil)
		w.tree.off = !tree
		states := []Sym{w.Sym("running"), w.Sym("ready"), w.Sym("waiting"), w.Sym("suspended"), w.Sym("blocked"), w.Sym("polling")}
		for j, s := range []string{"running", "ready", "waiting", "suspended", "blocked", "polling"} {
			w.StateLevel("task", s, 0, []string{"active", "active", "idle", "idle", "idle", "active"}[j])
		}
		w.StateLevel("task", "active", 1, "known")
		w.StateLevel("task", "idle", 1, "known")
		var tasks []ObjectID
		for h := 0; h < 64; h++ {
			tasks = append(tasks, w.Object("task", string(rune('A'+h))))
		}
		r := rand.New(rand.NewPCG(1, 2))
		ts := int64(0)
		for k := 0; k < 1_000_000; k++ {
			ts += 1 + r.Int64N(100_000)
			if err := w.Transition(tasks[r.IntN(len(tasks))], 0, ts, states[r.IntN(len(states))], Seq(k), NoCPU); err != nil {
				b.Fatal(err)
			}
		}
		groups := len(w.tree.groups) // (let go of when the run ends)
		if err := w.Finish(time.Unix(0, 0)); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(groups), "groups")
	}
}
