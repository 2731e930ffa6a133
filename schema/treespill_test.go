package schema

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestResolvePcts: the percentiles resolvePcts takes from the spilled
// durations are those of a sort of each node's durations (nearest rank,
// as quantile_disc), for nodes of one group and of many, durations from
// a few ns to 2^60 (up to six passes) and up to MaxInt64 (the last
// buckets), coarse histograms, and targets taken two at a time
// (maxPassTargets).
func TestResolvePcts(t *testing.T) {
	defer func(n int) { maxPassTargets = n }(maxPassTargets)
	for _, c := range []struct {
		name     string
		perPass  int
		fineLeft int
		scale    func(r *rand.Rand) int64
	}{
		{"ns", 4096, 256, func(r *rand.Rand) int64 { return 100 + r.Int64N(5000) }},
		{"ms", 4096, 256, func(r *rand.Rand) int64 { return 1_000_000 + r.Int64N(300_000) }},
		{"wide", 2, 256, func(r *rand.Rand) int64 { return 1<<60 + r.Int64N(1<<58) }},
		// the last buckets, which end at MaxInt64
		{"top", 4096, 256, func(r *rand.Rand) int64 { return 1<<63 - 1 - r.Int64N(1<<40) }},
		{"coarse", 3, 0, func(r *rand.Rand) int64 { return r.Int64N(1 << 40) }},
		{"ties", 4096, 256, func(r *rand.Rand) int64 { return 1_000_000 + 1000*r.Int64N(3) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			maxPassTargets = c.perPass
			r := rand.New(rand.NewPCG(1, 2))
			var st stateTree
			st.spill.dir = t.TempDir()
			defer st.spill.close()
			fine := c.fineLeft
			vals := make([][]int64, 6)
			for g := range vals {
				st.groups = append(st.groups, treeGroup{max: -1})
				for range 200 + 300*g {
					d := c.scale(r)
					if !st.groups[g].hist.add(d, &fine) {
						t.Fatal("histogram full")
					}
					st.groups[g].count++
					st.groups[g].total += d % (1 << 40)
					st.spill.add(int32(g), d)
					vals[g] = append(vals[g], d)
				}
			}
			// nodes: each group alone, then all of them
			var o treeOrder
			var pairs []nodeItem
			for g := range vals {
				pairs = append(pairs, nodeItem{int32(g), int32(g)})
				pairs = append(pairs, nodeItem{int32(len(vals)), int32(g)})
			}
			o.nodes = make([]treeNode, len(vals)+1)
			o.groups = spread(pairs, len(o.nodes), func(i int32, s span) { o.nodes[i].groups = s })
			var scratch treeScratch
			unknown := 0
			for i := range o.nodes {
				st.stats(&o.nodes[i], o.groupsOf(&o.nodes[i]), &scratch)
				for p := range treePcts {
					if !o.nodes[i].known[p] {
						unknown++
					}
				}
			}
			if unknown == 0 {
				t.Fatal("no percentile left to resolve: the case tests nothing")
			}
			orders := [2]treeOrder{o}
			st.resolvePcts(&orders)
			for i := range o.nodes {
				var ds []int64
				for _, g := range o.groupsOf(&o.nodes[i]) {
					ds = append(ds, vals[g]...)
				}
				slices.Sort(ds)
				for p, q := range treePcts {
					n := &orders[0].nodes[i]
					want := ds[pctRank(int64(len(ds)), q)-1]
					if !n.known[p] || n.pct[p] != want {
						t.Errorf("node %d p%v: %d (known %v), want %d", i, q, n.pct[p], n.known[p], want)
					}
				}
			}
			t.Logf("%d percentiles resolved from the spill", unknown)
		})
	}
}
