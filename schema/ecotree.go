package schema

import (
	"cmp"
	"slices"
	"strings"
	"unicode/utf8"
)

// The nodes of eco_tree (queries/eco_tree.sql), the event statistics tree
// of the eco-triples in each of its six hierarchies, made once per run
// when the run ends, from the triples the writer counted: the view used to
// rank, group and sort the triples' names at every query (1.3-1.6 s of CPU
// for the 45k triples of a 1M-event QNX run, more than a tenth of the
// ingest). Each node is a row of TableEcoTreeNodes: where it stands in
// the depth-first order by name, its parent's place (the view orders
// siblings by count through it), the place of the last node of its
// subtree (a time window sums its leaves between the two), its count and
// the smallest eco_id under it, whose names give its label, path and
// coordinates. eco_tree_reference is the SQL definition the rows are
// tested against.

// EcoOrders are eco_tree's six hierarchies, in the order of the ord_no
// column of TableEcoTreeNodes (1 is eco).
var EcoOrders = [6]string{"eco", "eoc", "ceo", "coe", "oec", "oce"}

// ecoNone is how eco_tree names a missing class, event, context or object
// (and the kind of a missing context or object).
const ecoNone = "(none)"

// ecoDim is one triple's coordinates along one dimension, as eco_tree
// sees them: the group (a class, a kind) and the node (an event, a context,
// an object), each as a rank among the run's, so that a hierarchy's order
// is a sort of integers.
type ecoDim struct {
	group int32 // rank of the group's label
	node  int32 // rank of the node: its label, then its id (NULL last)
}

// ecoTreeNode is one node of a hierarchy while it is built.
type ecoTreeNode struct {
	depth  int8
	eco    int32 // smallest eco_id under it
	parent int32 // index, -1 for the root
	last   int32 // index of the last node of its subtree
	count  int64
}

// putEcoTree writes the nodes of the six hierarchies.
func (w *RunWriter) putEcoTree() error {
	n := len(w.ecoKeys)
	if n == 0 {
		return nil
	}
	dims := w.ecoDims()
	b := newBatchCounting(w.mem, TableEcoTreeNodes, w.syms, &w.badUTF8)
	defer b.release()
	var (
		paths, tmp []ecoPath
		nodes      []ecoTreeNode
		counts     []int32
	)
	for ordNo, ord := range EcoOrders {
		// the path of each triple: the group of the first dimension, then
		// the node of each dimension in the order's positions
		var at [3]int
		for i := range at {
			at[i] = strings.IndexByte("eco", ord[i])
		}
		paths = slices.Grow(paths[:0], n)[:n]
		for t := range paths {
			p := &paths[t]
			p.key = [4]int32{dims[at[0]][t].group, dims[at[0]][t].node, dims[at[1]][t].node, dims[at[2]][t].node}
			p.t = int32(t)
		}
		// sorted by path, place by place from the last (each pass stable:
		// equal paths stay in eco_id order)
		for place := 3; place >= 0; place-- {
			paths, tmp, counts = ecoRadixSort(paths, tmp, counts, place)
		}
		nodes = w.ecoNodes(nodes[:0], paths)
		for start := 0; start < len(nodes); start += w.batchRows {
			end := min(start+w.batchRows, len(nodes))
			b.reserve(end - start)
			for i := start; i < end; i++ {
				nd := &nodes[i]
				b.i32(0).Append(w.info.RunID)
				b.i32(1).Append(int32(ordNo + 1))
				b.i32(2).Append(int32(nd.depth))
				b.i32(3).Append(int32(i + 1))
				b.i32(4).put(nd.parent+1, nd.parent < 0)
				b.i32(5).Append(nd.last + 1)
				b.i64(6).Append(nd.count)
				b.i32(7).Append(nd.eco)
				b.rows++
			}
			if err := w.out.put(TableEcoTreeNodes, b.record()); err != nil {
				return err
			}
		}
	}
	return nil
}

// ecoPath is a triple (t, its index in ecoKeys) and the ranks of the
// places of its path in one hierarchy.
type ecoPath struct {
	key [4]int32
	t   int32
}

// ecoRadixSort sorts paths by the rank at one place, stably (a counting
// sort: ranks are dense), into tmp; it returns the sorted paths, the
// slice to use next, and the counts to reuse.
func ecoRadixSort(paths, tmp []ecoPath, counts []int32, place int) ([]ecoPath, []ecoPath, []int32) {
	hi := int32(0)
	for i := range paths {
		hi = max(hi, paths[i].key[place])
	}
	counts = slices.Grow(counts[:0], int(hi)+2)[:hi+2]
	clear(counts)
	for i := range paths {
		counts[paths[i].key[place]+1]++
	}
	for i := 1; i < len(counts); i++ {
		counts[i] += counts[i-1]
	}
	tmp = slices.Grow(tmp[:0], len(paths))[:len(paths)]
	for i := range paths {
		k := paths[i].key[place]
		tmp[counts[k]] = paths[i]
		counts[k]++
	}
	return tmp, paths, counts
}

// ecoNodes lists the nodes of one hierarchy in depth-first order by name
// (siblings by their ranks), given the triples sorted by their paths: the
// root, then for each triple the nodes its path opens, from the first
// place where it differs from the triple before. Triples whose whole path
// is the same (their names and ids are, as eco_tree groups them) are one
// leaf.
func (w *RunWriter) ecoNodes(nodes []ecoTreeNode, paths []ecoPath) []ecoTreeNode {
	nodes = append(nodes, ecoTreeNode{depth: 0, eco: paths[0].t + 1, parent: -1})
	var open [5]int32 // the node open at each depth
	for i := range paths {
		p := &paths[i]
		from := 1
		if i > 0 {
			for from <= 4 && p.key[from-1] == paths[i-1].key[from-1] {
				from++
			}
		}
		for d := from; d <= 4; d++ {
			nodes = append(nodes, ecoTreeNode{depth: int8(d), eco: p.t + 1, parent: open[d-1]})
			open[d] = int32(len(nodes) - 1)
		}
		cnt := w.ecoN[p.t]
		for d := 0; d <= 4; d++ {
			nd := &nodes[open[d]]
			nd.count += cnt
			nd.eco = min(nd.eco, p.t+1)
		}
	}
	// the last node of each subtree: the node before the next one at the
	// same depth or above (or the last node)
	var stack [5]int32
	top := -1
	for i := range nodes {
		d := int(nodes[i].depth)
		for top >= 0 && int(nodes[stack[top]].depth) >= d {
			nodes[stack[top]].last = int32(i - 1)
			top--
		}
		top++
		stack[top] = int32(i)
	}
	for ; top >= 0; top-- {
		nodes[stack[top]].last = int32(len(nodes) - 1)
	}
	return nodes
}

// ecoDims ranks each triple's coordinates along the three dimensions as
// eco_tree names and sorts them (queries/eco_tree.sql): event, group its
// class, node 'class:event' (a missing class or event is (none)); context
// and object, group the object's kind, node its name then its id (a
// missing one is (none), of kind (none), its id NULL, which sorts after
// every id). Names compare as DuckDB compares VARCHARs, byte by byte, and
// are those the tables hold (repaired where not UTF-8). Nodes that
// eco_tree tells apart get different ranks, those it groups (a missing
// class and the class '(none)') the same; two events of different classes
// whose 'class:event' is the same text (a class with a colon) are ranked
// by class, then event, where eco_tree leaves their order open. The
// distinct values are ranked (a run has far fewer events and objects than
// triples), then each triple looks its own up.
func (w *RunWriter) ecoDims() [3][]ecoDim {
	n := len(w.ecoKeys)
	var dims [3][]ecoDim
	for d := range dims {
		dims[d] = make([]ecoDim, n)
	}
	symName := func(s Sym) string {
		if s < 0 {
			return ecoNone
		}
		return w.syms.str(s)
	}
	// events: group class, node (class:event, class, event)
	{
		type ev struct{ label, class, event string }
		at := make(map[[2]Sym]int32) // (class, event) -> index in evs
		var evs []ev
		ref := make([]int32, n)
		for i, k := range w.ecoKeys {
			x, ok := at[[2]Sym{k.class, k.event}]
			if !ok {
				x = int32(len(evs))
				at[[2]Sym{k.class, k.event}] = x
				c, e := symName(k.class), symName(k.event)
				evs = append(evs, ev{c + ":" + e, c, e})
			}
			ref[i] = x
		}
		classRank := rankBy(len(evs), func(a, b int32) int { return strings.Compare(evs[a].class, evs[b].class) })
		nodeRank := rankBy(len(evs), func(a, b int32) int {
			x, y := &evs[a], &evs[b]
			return cmp.Or(strings.Compare(x.label, y.label), strings.Compare(x.class, y.class), strings.Compare(x.event, y.event))
		})
		for i, x := range ref {
			dims[0][i] = ecoDim{group: classRank[x], node: nodeRank[x]}
		}
	}
	// contexts and objects: group kind, node (name, id NULL last)
	type obj struct {
		id         ObjectID // NoObject: none
		kind, name string
	}
	at := make(map[ObjectID]int32) // id -> index in objs
	var objs []obj
	var refs [2][]int32
	for d := range refs {
		refs[d] = make([]int32, n)
	}
	for i, k := range w.ecoKeys {
		for d, id := range [2]ObjectID{k.ctx, k.obj} {
			if id < 0 {
				id = NoObject
			}
			x, ok := at[id]
			if !ok {
				x = int32(len(objs))
				at[id] = x
				o := obj{id, ecoNone, ecoNone}
				if id > 0 && int(id) <= len(w.objects) {
					row := &w.objects[id-1]
					o.kind, o.name = symName(row.kind), row.name
					if !utf8.ValidString(o.name) {
						o.name = strings.ToValidUTF8(o.name, "\uFFFD")
					}
				}
				objs = append(objs, o)
			}
			refs[d][i] = x
		}
	}
	kindRank := rankBy(len(objs), func(a, b int32) int { return strings.Compare(objs[a].kind, objs[b].kind) })
	nodeRank := rankBy(len(objs), func(a, b int32) int {
		x, y := &objs[a], &objs[b]
		if c := strings.Compare(x.name, y.name); c != 0 {
			return c
		}
		switch {
		case x.id == y.id:
			return 0
		case x.id == NoObject:
			return 1
		case y.id == NoObject:
			return -1
		}
		return cmp.Compare(x.id, y.id)
	})
	for d := range refs {
		for i, x := range refs[d] {
			dims[d+1][i] = ecoDim{group: kindRank[x], node: nodeRank[x]}
		}
	}
	return dims
}

// rankBy gives each of n values its dense rank (from 0) in the order
// compare defines; values that compare equal share a rank.
func rankBy(n int, compare func(a, b int32) int) []int32 {
	idx := identity(nil, n)
	slices.SortFunc(idx, compare)
	ranks := make([]int32, n)
	r := int32(0)
	for i, j := range idx {
		if i > 0 && compare(idx[i-1], j) != 0 {
			r++
		}
		ranks[j] = r
	}
	return ranks
}

// identity returns buf holding 0..n-1.
func identity(buf []int32, n int) []int32 {
	buf = slices.Grow(buf[:0], n)[:n]
	for i := range buf {
		buf[i] = int32(i)
	}
	return buf
}
