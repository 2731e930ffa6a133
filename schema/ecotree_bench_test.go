package schema

import (
	"fmt"
	"math/rand"
	"testing"
)

// BenchmarkEcoTree times the nodes of eco_tree's six orders made of 45k
// eco-triples (those of a 1M-event QNX run: 58 events, 2,300 threads and
// processes as contexts and objects) and of 450k (10M events, 22,000
// objects), batches dropped.
func BenchmarkEcoTree(b *testing.B) {
	b.Run("45k", func(b *testing.B) { benchEcoTree(b, 45_000, 2_300) })
	b.Run("450k", func(b *testing.B) { benchEcoTree(b, 450_000, 22_000) })
}

func benchEcoTree(b *testing.B, triples, objects int) {
	w := NewRunWriter(RunInfo{Name: "bench"}, &nopSink{rows: map[string]int64{}}, nil)
	rng := rand.New(rand.NewSource(1))
	var objs []ObjectID
	for i := 0; i < objects; i++ {
		objs = append(objs, w.Object([]string{"thread", "process", "cpu"}[i%3], fmt.Sprintf("proc_%d/thread_%d", i/7, i)))
	}
	for len(w.ecoKeys) < triples {
		k := ecoKey{w.Sym(fmt.Sprintf("C%d", rng.Intn(6))), w.Sym(fmt.Sprintf("E%d", rng.Intn(30))), objs[rng.Intn(len(objs))], objs[rng.Intn(len(objs))]}
		if _, ok := w.eco[k]; !ok {
			w.eco[k] = int32(len(w.ecoKeys) + 1)
			w.ecoKeys = append(w.ecoKeys, k)
			w.ecoN = append(w.ecoN, int64(1+rng.Intn(100)))
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := w.putEcoTree(); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	w.Abort()
}
