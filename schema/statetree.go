package schema

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
)

// The state statistics tree (queries/state_tree.sql, state_stats_tree) of
// a whole run, both orders, made when the run ends (TableStateTreeNodes):
// the view grouped the run's two million durations (a million events) by
// node for its statistics and built the tree from them at every query,
// more than a tenth of the ingest. The writer sees every interval of
// every level as it closes, so it keeps the statistics of each group of
// intervals (an object's state at a level: a treeGroup) as they come, and
// the tree's nodes are sums of groups:
//
//  1. A group keeps its count, total, max and truncated, and a histogram
//     of its durations (durHist: exact below 128 ns, then 64 buckets per
//     power of two, or 16 once the run has made maxFineDense dense ones),
//     in memory bounded by its buckets, not its intervals.
//  2. When the run ends, the groups are named (a level's state is named
//     only then, levels.go) and the nodes of both orders made as the view
//     defines them: kos, run | kind | object | top state | ... | level-0
//     state; kso, run | kind | top state | ... | level-0 state | object
//     (pooled over the kind's objects). A run, kind or object node sums
//     the groups of each object's top level; a state above one with
//     intervals but none of its own is a node with count 0.
//  3. Siblings are ranked by label (and object id), and by total; the
//     depth-first order of each gives pos and pos_total.
//  4. A percentile is a rank among the node's durations (nearest rank, as
//     quantile_disc: the r-th smallest of n, r = n - floor(n - n*q), at
//     least 1). The node's histogram (the sum of its groups') gives the
//     bucket of the r-th and its rank k inside the bucket. A bucket of one
//     value gives the percentile; otherwise it is the k-th smallest of the
//     node's durations in the bucket, which resolvePcts takes from every
//     duration counted, spilled to a file as they came (treespill.go).
//     Only where that fails (the file could not be written) are the
//     node's groups with durations in the bucket written to
//     TableStateTreeTargets, and the view takes the k-th smallest of their
//     durations in the bucket: it reads the intervals, but sorts only a
//     bucket's.
//
// A run is written only when its groups are the rows the views read: not
// when an interval came for an object not registered yet, when the levels
// of an object are left to the reference SQL (levels.go), when its merged
// intervals were tagged for pruning, or when a kind's name was not UTF-8
// (the views would pool two kinds the writer keeps apart). Such a run, and
// every run of an older traceduck, is answered by the SQL.

// stateTree keeps the groups of a run while its intervals close.
type stateTree struct {
	w      *RunWriter
	groups []treeGroup
	// an object's groups, found by a scan of its first objGroups (most
	// objects have a few states), then in more
	byObj [][]objGroup
	more  map[treeKey]int32
	off   bool // not written (see above)
	// fine dense histograms the run may still make (maxFineDense)
	fineLeft int
	// every duration counted, for the percentiles the histograms cannot
	// tell (resolvePcts); none when keepTargets (IngestOptions.TreeTargets)
	spill       treeSpill
	keepTargets bool
}

// treeKey is a group: an object's state at a level (level 0: the state's
// symbol, NoSym for NULL; above: the level merger's key), and the tag of
// its merged intervals (lvRun.only: rows the ingest prunes unless the
// object's sequences turn out as the tag says; 0 for the others).
type treeKey struct {
	obj   ObjectID
	level int32
	key   int32
	tag   uint8
}

type objGroup struct {
	lk uint64 // level, key
	i  int32  // in groups
}

const objGroups = 24

type treeGroup struct {
	treeKey
	count, trunc, total int64
	max                 int64 // -1: none
	hist                durHist
}

// maxTreeGroups bounds the groups a run keeps (a variable for tests): a
// run with more is answered by the SQL. The tree's Go memory grows with
// them: a group is 128 bytes and its histogram's entries, and a run has
// about 1.8 nodes of 120 bytes per group (10M-event ftrace: 426,889
// groups, 770,422 nodes), so at the bound, by these sizes, about 400 MB
// beside DuckDB's 128 MiB and the batches (2M groups, the bound until
// 2026-11-27, would have been about 800 MB).
var maxTreeGroups = 1 << 20

func (t *stateTree) init(w *RunWriter) {
	t.w = w
	t.fineLeft = maxFineDense
}

// stop gives the run's tree up: it is not written.
func (t *stateTree) stop() {
	t.off = true
	t.groups, t.byObj, t.more = nil, nil, nil
	t.spill.close()
}

// group returns the index of the group (obj, level, key), made if new; -1
// when there are too many.
func (t *stateTree) group(obj ObjectID, level, key int32, tag uint8) int32 {
	for int(obj) >= len(t.byObj) {
		t.byObj = append(t.byObj, nil)
	}
	lk := uint64(tag)<<56 | uint64(uint32(level))<<32 | uint64(uint32(key))
	gs := t.byObj[obj]
	for _, g := range gs {
		if g.lk == lk {
			return g.i
		}
	}
	k := treeKey{obj, level, key, tag}
	if len(gs) == objGroups {
		if i, ok := t.more[k]; ok {
			return i
		}
	}
	if len(t.groups) >= maxTreeGroups {
		return -1
	}
	i := int32(len(t.groups))
	t.groups = append(t.groups, treeGroup{treeKey: k, max: -1})
	if len(gs) < objGroups {
		t.byObj[obj] = append(gs, objGroup{lk, i})
	} else {
		if t.more == nil {
			t.more = map[treeKey]int32{}
		}
		t.more[k] = i
	}
	return i
}

// add counts one interval of obj at level, of the state key, dur ns long
// (tag: see treeKey).
func (t *stateTree) add(obj ObjectID, level int32, key int32, tag uint8, dur int64, trunc bool) {
	if t.off || obj < 1 {
		return // no object: in no view
	}
	if int(obj) > len(t.w.objects) {
		t.stop() // its kind is unknown
		return
	}
	if key < 0 {
		key = int32(NoSym)
	}
	i := t.group(obj, level, key, tag)
	if i < 0 {
		t.stop()
		return
	}
	g := &t.groups[i]
	if trunc {
		g.trunc++
		return
	}
	total, carry := bits.Add64(uint64(g.total), uint64(dur), 0)
	if carry != 0 || int64(total) < 0 || !g.hist.add(dur, &t.fineLeft) {
		t.stop() // past BIGINT: the view's sum is an error, not a number
		return
	}
	g.count++
	g.total = int64(total)
	g.max = max(g.max, dur)
	if !t.keepTargets {
		t.spill.add(i, dur)
	}
}

// durHist counts durations by bucket (a histRes): sparse, fine buckets
// with the count, least and greatest duration of each (bs sorted, es)
// while it has few, then dense (counts only): fine while the run's budget
// of fine dense histograms lasts (maxFineDense), else coarse.
type durHist struct {
	bs     []uint16
	es     []histEntry
	dense  []uint32
	coarse bool // dense holds coarse buckets
}

type histEntry struct {
	n        uint32
	min, max int64
}

// histRes is a histogram's resolution: a duration's bucket is itself
// below 2^(bits+1) ns, then one of 2^bits buckets per power of two (a
// bucket spans at most 1/2^bits of its least value). A coarse bucket is
// a whole number of fine ones. (Fine buckets leave fewer durations to the
// view's second pass; coarse ones keep a dense histogram small.)
type histRes int

const (
	fineRes   histRes = 6
	coarseRes histRes = 4
	// histSparse is the buckets a sparse histogram holds before it turns
	// dense
	histSparse = 48
)

// maxFineDense bounds the fine dense histograms of a run (15 KB each):
// they are touched at random, one per interval, and beyond a few MB each
// touch is a cache miss (2,048 cost ftrace's 1M-event ingest 0.2 CPU-s
// more than 256; TLV's view was the same).
var maxFineDense = 256

func (r histRes) buckets() int { return 2<<r + (63-int(r)-1)<<r }

// bucket is the bucket of a duration (>= 0).
func (r histRes) bucket(d int64) int {
	exact := int64(2) << r
	if d < exact {
		return int(max(d, 0))
	}
	e := bits.Len64(uint64(d)) - 1 // > r
	return int(exact) + (e-int(r)-1)<<r + int(d>>(e-int(r))&(1<<r-1))
}

// bounds are the least and the greatest duration of bucket b.
func (r histRes) bounds(b int) (lo, hi int64) {
	exact := 2 << r
	if b < exact {
		return int64(b), int64(b)
	}
	e, sub := (b-exact)>>r+int(r)+1, int64((b-exact)&(1<<r-1))
	lo = (1<<r + sub) << (e - int(r))
	if e == 62 && sub == 1<<r-1 {
		return lo, math.MaxInt64
	}
	return lo, lo + 1<<(e-int(r)) - 1
}

// add counts duration d (>= 0); false when a count would pass 2^32.
// fine is the run's budget of fine dense histograms.
func (h *durHist) add(d int64, fine *int) bool {
	if h.dense != nil {
		b := fineRes.bucket(d)
		if h.coarse {
			b = coarseRes.bucket(d)
		}
		if h.dense[b] == math.MaxUint32 {
			return false
		}
		h.dense[b]++
		return true
	}
	b := fineRes.bucket(d)
	i, ok := slices.BinarySearch(h.bs, uint16(b))
	if ok {
		e := &h.es[i]
		if e.n == math.MaxUint32 {
			return false
		}
		e.n++
		e.min, e.max = min(e.min, d), max(e.max, d)
		return true
	}
	if len(h.bs) < histSparse {
		h.bs = slices.Insert(h.bs, i, uint16(b))
		h.es = slices.Insert(h.es, i, histEntry{1, d, d})
		return true
	}
	res := fineRes
	if *fine <= 0 {
		res, h.coarse = coarseRes, true
	} else {
		*fine--
	}
	h.dense = make([]uint32, res.buckets())
	for i, b := range h.bs {
		lo, _ := fineRes.bounds(int(b))
		h.dense[res.bucket(lo)] += h.es[i].n
	}
	h.bs, h.es = nil, nil
	h.dense[res.bucket(d)]++
	return true
}

// has tells whether the histogram holds a duration in bucket b of res
// (coarse, or fine when it is not coarse itself).
func (h *durHist) has(res histRes, b int) bool {
	lo, hi := res.bounds(b)
	if h.dense != nil {
		if h.coarse {
			return h.dense[coarseRes.bucket(lo)] > 0
		}
		for f := fineRes.bucket(lo); f <= fineRes.bucket(hi); f++ {
			if h.dense[f] > 0 {
				return true
			}
		}
		return false
	}
	i, _ := slices.BinarySearch(h.bs, uint16(fineRes.bucket(lo)))
	return i < len(h.bs) && int(h.bs[i]) <= fineRes.bucket(hi)
}

// each calls f with every bucket of res that holds durations, in order,
// and the least and greatest duration in it (known false where the
// histogram is dense). res is coarse, or fine when h is not coarse.
func (h *durHist) each(res histRes, f func(b int, n int64, lo, hi int64, known bool)) {
	if h.dense != nil {
		from := fineRes
		if h.coarse {
			from = coarseRes
		}
		for b, n := range h.dense {
			if n > 0 {
				if from != res {
					lo, _ := from.bounds(b)
					b = res.bucket(lo)
				}
				f(b, int64(n), 0, 0, false)
			}
		}
		return
	}
	for i, b := range h.bs {
		e := &h.es[i]
		if res != fineRes {
			lo, _ := fineRes.bounds(int(b))
			b = uint16(res.bucket(lo))
		}
		f(int(b), int64(e.n), e.min, e.max, true)
	}
}

// pctRank is the rank (from 1) of quantile q among n sorted values, as
// DuckDB's quantile_disc takes it.
func pctRank(n int64, q float64) int64 {
	fn := float64(n)
	return max(1, n-int64(math.Floor(fn-fn*q)))
}

// treePcts are the percentiles of state_stats_tree.
var treePcts = [3]float64{0.5, 0.9, 0.99}

// treeNode is a node of one order while the tree is made. It is kept
// small (120 bytes): a run may have a million nodes (10M-event ftrace:
// 770k), and names and lists are kept once, in treeNames and the
// order's lists, not in each node (with strings and slices of its own a
// node was 264 bytes and two small arrays: 211 MB of nodes at that run's
// peak).
type treeNode struct {
	count, total, max, trunc int64
	// a percentile: its value when known, else its rank in the node's
	// bucket tb (of resolution res), left to the view
	pct [3]int64
	tb  [3]int32
	// kind and state: numbers in treeNames (-1: none)
	kind, state int32
	obj         ObjectID
	level       int32
	parent      int32
	// the groups it sums and its children, in the order's lists
	groups, children span
	pos              [2]int32 // by label, by total
	nk               int8     // 0 run, 1 kind, 2 object, 3 state (kso: pooled), 4 object under a level-0 state (kso)
	res              int8
	known            [3]bool
}

// span is a node's part of one of its order's lists: [from, to).
type span struct{ from, to int32 }

// treeOrder is the tree of one order: its nodes (0 the run), and the
// lists the nodes' spans index.
type treeOrder struct {
	nodes    []treeNode
	groups   []int32 // the groups each node sums
	children []int32
}

func (o *treeOrder) groupsOf(n *treeNode) []int32   { return o.groups[n.groups.from:n.groups.to] }
func (o *treeOrder) childrenOf(n *treeNode) []int32 { return o.children[n.children.from:n.children.to] }

// treeNames are the names the nodes of both orders refer to by number:
// the kinds, the states (lvName: NULL is one of them), and the objects'.
type treeNames struct {
	kinds   []string
	depth   []int32 // by kind: its top level
	states  []lvName
	stateID map[lvName]int32
	objName func(ObjectID) string
}

// state is the number of state n, given one if new.
func (tn *treeNames) state(n lvName) int32 {
	id, ok := tn.stateID[n]
	if !ok {
		id = int32(len(tn.states))
		tn.states = append(tn.states, n)
		tn.stateID[n] = id
	}
	return id
}

func (tn *treeNames) kind(n *treeNode) string {
	if n.kind < 0 {
		return ""
	}
	return tn.kinds[n.kind]
}

func (tn *treeNames) stateOf(n *treeNode) lvName {
	if n.state < 0 {
		return lvName{}
	}
	return tn.states[n.state]
}

func (tn *treeNames) label(n *treeNode) lvName {
	switch n.nk {
	case 0:
		return lvName{}
	case 1:
		return lvName{tn.kinds[n.kind], true}
	case 2, 4:
		return lvName{tn.objName(n.obj), true}
	}
	return tn.stateOf(n)
}

// stateTreeOrders are the orders of state_stats_tree, by ord_no from 1.
var stateTreeOrders = [2]string{"kos", "kso"}

// putStateTree writes the run's tree of both orders (see stateTree),
// after the levels (levelMerger.finish: the names of the keys, and which
// objects' merged intervals are stored).
func (w *RunWriter) putStateTree() error {
	t := &w.tree
	defer t.stop()
	m := &w.lv
	if t.off || m.unregFrom > 0 || !m.allStored {
		return nil
	}
	f := w.finalLevels()
	tn := &treeNames{stateID: map[lvName]int32{}, objName: func(o ObjectID) string { return repaired(w.objects[o-1].name) }}
	// by group: its kind and state by number, -1 when it is not kept
	kindOf := make([]int32, len(t.groups))
	stateOf := make([]int32, len(t.groups))
	kindNo := map[Sym]int32{}
	kept := false
	for i := range t.groups {
		g := &t.groups[i]
		kindOf[i] = -1
		// a tagged group is the object's merged intervals if its
		// sequences are as the tag says (the others are pruned)
		if g.tag != 0 && m.perOf[g.obj] != (g.tag == onlyInstance) {
			continue
		}
		ks := w.objects[g.obj-1].kind
		k, ok := kindNo[ks]
		if !ok {
			kn := w.syms.str(ks)
			if repaired(kn) != kn {
				return nil
			}
			k = int32(len(tn.kinds))
			kindNo[ks] = k
			tn.kinds = append(tn.kinds, kn)
			tn.depth = append(tn.depth, f.depth[kn])
		}
		var name lvName
		switch {
		case g.level == 0 && g.key < 0:
		case g.level == 0:
			name = lvName{repaired(w.syms.str(Sym(g.key))), true}
		case int(g.key) < len(m.names) && m.named[g.key]:
			name = m.names[g.key]
		default:
			return nil
		}
		if g.level > tn.depth[k] {
			return nil
		}
		kindOf[i], stateOf[i], kept = k, tn.state(name), true
	}
	if !kept {
		// no interval: no tree (the view's has no run node either)
		return w.putTreeRun(0)
	}
	var orders [2]treeOrder
	var scratch treeScratch
	for ord := range orders {
		o := &orders[ord]
		w.treeNodes(o, ord, f, tn, kindOf, stateOf)
		for i := range o.nodes {
			if !t.stats(&o.nodes[i], o.groupsOf(&o.nodes[i]), &scratch) {
				return nil
			}
		}
		placeTree(o, tn)
	}
	if !t.keepTargets {
		t.resolvePcts(&orders)
	}

	// DuckDB holds a transaction's long strings in memory until it
	// commits: a tree whose long labels and paths pass maxTreeStrings
	// (long names, many objects) is not written
	if treeLongStrings(orders[0].nodes, tn)+treeLongStrings(orders[1].nodes, tn) > maxTreeStrings {
		return nil
	}
	nb := newBatch(w.mem, TableStateTreeNodes, w.syms)
	defer nb.release()
	tb := newBatch(w.mem, TableStateTreeTargets, w.syms)
	defer tb.release()
	var rows int64
	var keys []treeKey
	var path []string
	var pathOK []bool
	for ord := range orders {
		o := &orders[ord]
		ns := o.nodes
		byPos := make([]int32, len(ns))
		for i := range ns {
			byPos[ns[i].pos[0]-1] = int32(i)
		}
		for _, i := range byPos {
			n := &ns[i]
			// the path: the labels from depth 1 down
			path, pathOK = path[:0], pathOK[:0]
			for a := i; ns[a].nk != 0; a = ns[a].parent {
				l := tn.label(&ns[a])
				path, pathOK = append(path, l.s), append(pathOK, l.ok)
			}
			slices.Reverse(path)
			slices.Reverse(pathOK)
			lbl := tn.label(n)
			nb.i32(0).Append(w.info.RunID)
			nb.i32(1).Append(int32(ord + 1))
			nb.i32(2).Append(n.pos[0])
			nb.i32(3).Append(n.pos[1])
			nb.i32(4).Append(int32(len(path)))
			nb.str(5).add([...]string{"run", "kind", "object", "state", "object"}[n.nk])
			nb.str(6).putString(lbl.s, !lbl.ok)
			nb.i32(7).put(n.level, n.nk != 3)
			nb.i64(8).Append(n.count)
			nb.i64(9).Append(n.total)
			nb.i64(10).put(n.max, n.count == 0)
			for p := range treePcts {
				nb.i64(11+p).put(n.pct[p], !n.known[p])
			}
			nb.i64(14).Append(n.trunc)
			nb.strs(15).put(path, pathOK)
			nb.str(16).putString(tn.kind(n), n.nk == 0)
			if n.nk == 2 || n.nk == 4 || n.nk == 3 && ord == 0 {
				nb.i32(17).Append(int32(n.obj))
				nb.str(18).add(tn.objName(n.obj))
			} else {
				nb.i32(17).AppendNull()
				nb.str(18).AppendNull()
			}
			st := tn.stateOf(n)
			nb.str(19).putString(st.s, !(n.nk == 3 || n.nk == 4) || !st.ok)
			nb.rows++
			rows++
			if nb.rows >= w.batchRows {
				if err := w.out.put(TableStateTreeNodes, nb.record()); err != nil {
					return err
				}
			}
			for p := range treePcts {
				if n.count == 0 || n.known[p] {
					continue
				}
				res, b := histRes(n.res), int(n.tb[p])
				lo, hi := res.bounds(b)
				// one row per (object, level, state): the view joins each
				// interval to the rows of its group (a tagged group kept
				// may have the key of an untagged one)
				keys = keys[:0]
				for _, gi := range o.groupsOf(n) {
					g := &t.groups[gi]
					if g.hist.has(res, b) {
						keys = append(keys, treeKey{obj: g.obj, level: g.level, key: g.key})
					}
				}
				slices.SortFunc(keys, func(a, b treeKey) int {
					return cmp.Or(cmp.Compare(a.obj, b.obj), cmp.Compare(a.level, b.level), cmp.Compare(a.key, b.key))
				})
				for _, g := range slices.Compact(keys) {
					tb.i32(0).Append(w.info.RunID)
					tb.i32(1).Append(int32(ord + 1))
					tb.i32(2).Append(n.pos[0])
					tb.i32(3).Append(int32(p + 1))
					tb.i32(4).Append(int32(g.obj))
					tb.i32(5).Append(g.level)
					if g.level == 0 {
						tb.sym(6).put(Sym(g.key))
						tb.sym(7).put(NoSym)
					} else {
						tb.sym(6).put(NoSym)
						tb.sym(7).put(Sym(g.key))
					}
					tb.i64(8).Append(lo)
					tb.i64(9).Append(hi)
					tb.i64(10).Append(n.pct[p])
					tb.rows++
					if tb.rows >= w.batchRows {
						if err := w.putWithSymbols(TableStateTreeTargets, tb.record()); err != nil {
							return err
						}
					}
				}
			}
		}
	}
	if nb.rows > 0 {
		if err := w.out.put(TableStateTreeNodes, nb.record()); err != nil {
			return err
		}
	}
	if tb.rows > 0 {
		if err := w.putWithSymbols(TableStateTreeTargets, tb.record()); err != nil {
			return err
		}
	}
	return w.putTreeRun(rows)
}

// maxTreeStrings bounds the bytes of the long strings of a run's tree
// rows: those past longString, which DuckDB 1.1 keeps in memory until the
// transaction commits, under the ingest's memory limit (with the tree of
// 160 tasks of 32 KB names written, the ingest ran out of memory at
// COMMIT: TestManyLongNamesCommit). Shorter strings are written out with their
// row groups as the rows come (390 MB of 33-byte strings in one
// transaction under a limit of 128 MB, measured), so a tree of many
// objects of short names (a 10M-event QNX run: 522k nodes, 31 MB of
// strings) is written whole.
const maxTreeStrings = 16 << 20

// longString is DuckDB's string block limit: a longer string is stored
// in an overflow block of its own.
const longString = 4096

// treeLongStrings is the bytes of the long strings (longString) of the
// rows of nodes: label, kind, object, state and the path's labels (its
// ancestors' and its own).
func treeLongStrings(nodes []treeNode, tn *treeNames) int64 {
	long := func(n int) int64 {
		if n > longString {
			return int64(n)
		}
		return 0
	}
	path := make([]int64, len(nodes)) // by node: its path's long labels' bytes
	var total int64
	for i := range nodes {
		n := &nodes[i]
		total += long(len(tn.label(n).s)) + long(len(tn.kind(n))) + long(len(tn.stateOf(n).s))
		if n.nk == 2 || n.nk == 4 || n.nk == 3 && n.obj > 0 {
			total += long(len(tn.objName(n.obj)))
		}
		if n.nk != 0 {
			path[i] = -1 // not known yet (a parent may come after its child)
		}
	}
	var walk func(i int32) int64
	walk = func(i int32) int64 {
		if path[i] >= 0 {
			return path[i]
		}
		path[i] = walk(nodes[i].parent) + long(len(tn.label(&nodes[i]).s))
		return path[i]
	}
	for i := range nodes {
		total += walk(int32(i))
	}
	return total
}

// putTreeRun writes the run's row of TableStateTreeRuns.
func (w *RunWriter) putTreeRun(nodes int64) error {
	rb := newBatch(w.mem, TableStateTreeRuns, w.syms)
	defer rb.release()
	rb.i32(0).Append(w.info.RunID)
	rb.i64(1).Append(nodes)
	rb.rows++
	return w.out.put(TableStateTreeRuns, rb.record())
}

// treeNodes makes the nodes of order ord (0 kos, 1 kso) into o from the
// kept groups (kindOf, stateOf: a group's kind and state by number, kind
// -1 when not kept), with their parents and the groups each sums.
func (w *RunWriter) treeNodes(o *treeOrder, ord int, f finalLevels, tn *treeNames, kindOf, stateOf []int32) {
	t := &w.tree
	type stateAt struct {
		kind  int32
		obj   ObjectID // kos; 0 in kso's pooled nodes
		level int32
		state int32
	}
	type leafAt struct {
		obj   ObjectID
		state int32
	}
	nodes := []treeNode{{nk: 0, kind: -1, state: -1, parent: -1}}
	kindAt := map[int32]int32{}
	objAt := map[ObjectID]int32{}
	stAt := map[stateAt]int32{}
	leafOf := map[leafAt]int32{}
	add := func(n treeNode) int32 {
		nodes = append(nodes, n)
		return int32(len(nodes) - 1)
	}
	kindNode := func(k int32) int32 {
		i, ok := kindAt[k]
		if !ok {
			i = add(treeNode{nk: 1, kind: k, state: -1, parent: 0})
			kindAt[k] = i
		}
		return i
	}
	objNode := func(k int32, ob ObjectID) int32 {
		i, ok := objAt[ob]
		if !ok {
			i = add(treeNode{nk: 2, kind: k, state: -1, obj: ob, parent: kindNode(k)})
			objAt[ob] = i
		}
		return i
	}
	stateNode := func(k stateAt) int32 {
		i, ok := stAt[k]
		if !ok {
			i = add(treeNode{nk: 3, kind: k.kind, obj: k.obj, level: k.level, state: k.state, parent: -1})
			stAt[k] = i
		}
		return i
	}
	// (node, group) pairs, laid out by node below
	var pairs []nodeItem
	for gi := range t.groups {
		k := kindOf[gi]
		if k < 0 {
			continue
		}
		g := &t.groups[gi]
		at := stateAt{kind: k, obj: g.obj, level: g.level, state: stateOf[gi]}
		if ord == 1 {
			at.obj = 0
			if g.level == 0 {
				lk := leafAt{g.obj, at.state}
				li, ok := leafOf[lk]
				if !ok {
					li = add(treeNode{nk: 4, kind: k, obj: g.obj, state: at.state, parent: stateNode(at)})
					leafOf[lk] = li
				}
				pairs = append(pairs, nodeItem{li, int32(gi)})
			}
		}
		pairs = append(pairs, nodeItem{stateNode(at), int32(gi)})
		if g.level == tn.depth[k] {
			// a group of the object's top level: under its object (kos),
			// its kind and the run
			if ord == 0 {
				pairs = append(pairs, nodeItem{objNode(k, g.obj), int32(gi)})
			}
			pairs = append(pairs, nodeItem{kindNode(k), int32(gi)}, nodeItem{0, int32(gi)})
		}
	}
	// each state's parent: the state it becomes one level up (a node of
	// its own even without intervals there), its object (kos) or kind
	// (kso) at the top level; the nodes made here are linked in turn
	for i := 0; i < len(nodes); i++ {
		n := &nodes[i]
		if n.nk != 3 {
			continue
		}
		k, ob, l := n.kind, n.obj, n.level
		var p int32
		switch {
		case l < tn.depth[k]:
			kn := tn.kinds[k]
			p = stateNode(stateAt{kind: k, obj: ob, level: l + 1, state: tn.state(f.at(kn, l, tn.states[n.state]))})
		case ord == 0:
			p = objNode(k, ob)
		default:
			p = kindNode(k)
		}
		nodes[i].parent = p
	}
	o.nodes = nodes
	o.groups = spread(pairs, len(nodes), func(i int32, s span) { nodes[i].groups = s })
	pairs = pairs[:0]
	for i := int32(1); i < int32(len(nodes)); i++ {
		pairs = append(pairs, nodeItem{nodes[i].parent, i})
	}
	o.children = spread(pairs, len(nodes), func(i int32, s span) { nodes[i].children = s })
}

// nodeItem is an item of a node's list.
type nodeItem struct{ node, item int32 }

// spread lays the items of pairs out by node, each node's in the order
// of pairs, and gives each node (of n) its span of the list.
func spread(pairs []nodeItem, n int, set func(node int32, s span)) []int32 {
	at := make([]int32, n+1)
	for _, p := range pairs {
		at[p.node+1]++
	}
	for i := 1; i <= n; i++ {
		at[i] += at[i-1]
	}
	for i := range n {
		set(int32(i), span{at[i], at[i+1]})
	}
	list := make([]int32, len(pairs))
	for _, p := range pairs {
		list[at[p.node]] = p.item
		at[p.node]++
	}
	return list
}

// treeScratch is stats' buffer: a histogram summed over groups, with
// each bucket's least and greatest duration while every group that has
// durations in it knows them.
type treeScratch struct {
	sum     []int64
	lo, hi  []int64
	unknown []bool
	touched []int
}

// stats sums the node's groups: count, total, max, truncated, and its
// percentiles or the buckets they are in; false when the total passes
// BIGINT (the view's cast is an error, not a number).
func (t *stateTree) stats(n *treeNode, groups []int32, s *treeScratch) bool {
	n.max = -1
	res := fineRes
	for _, gi := range groups {
		g := &t.groups[gi]
		total, carry := bits.Add64(uint64(n.total), uint64(g.total), 0)
		if carry != 0 || int64(total) < 0 {
			return false
		}
		n.count += g.count
		n.total = int64(total)
		n.trunc += g.trunc
		n.max = max(n.max, g.max)
		if g.hist.coarse {
			res = coarseRes // the sum is as fine as its coarsest term
		}
	}
	if n.count == 0 {
		return true
	}
	if s.sum == nil {
		nb := fineRes.buckets()
		s.sum, s.lo, s.hi, s.unknown = make([]int64, nb), make([]int64, nb), make([]int64, nb), make([]bool, nb)
	}
	s.touched = s.touched[:0]
	for _, gi := range groups {
		t.groups[gi].hist.each(res, func(b int, c, lo, hi int64, known bool) {
			if s.sum[b] == 0 {
				s.touched = append(s.touched, b)
				s.lo[b], s.hi[b], s.unknown[b] = lo, hi, !known
			} else {
				s.lo[b], s.hi[b] = min(s.lo[b], lo), max(s.hi[b], hi)
				s.unknown[b] = s.unknown[b] || !known
			}
			s.sum[b] += c
		})
	}
	slices.Sort(s.touched)
	var r [3]int64
	for p, q := range treePcts {
		r[p] = pctRank(n.count, q)
	}
	// the percentile is the k-th smallest of its bucket: its least or
	// greatest duration when k is the first or the last, or when they
	// are one value, else left to the view (the rank k in bucket b)
	n.res = int8(res)
	p, below := 0, int64(0)
	known := func(v int64) { n.pct[p], n.known[p] = v, true }
	for _, b := range s.touched {
		c := s.sum[b]
		for p < 3 && r[p] <= below+c {
			k := r[p] - below
			lo, hi := res.bounds(b)
			switch {
			case lo == hi:
				known(lo)
			case s.unknown[b]:
				n.pct[p], n.tb[p] = k, int32(b)
			case k == 1 || s.lo[b] == s.hi[b]:
				known(s.lo[b])
			case k == c:
				known(s.hi[b])
			default:
				n.pct[p], n.tb[p] = k, int32(b)
			}
			p++
		}
		below += c
		s.sum[b] = 0
	}
	return true
}

// placeTree ranks siblings, by label (NULL last; objects of a label by
// id) and by total (largest first, then as by label), and numbers the
// nodes in the depth-first order of each.
func placeTree(o *treeOrder, tn *treeNames) {
	nodes := o.nodes
	labels := make([]lvName, len(nodes))
	for i := range nodes {
		labels[i] = tn.label(&nodes[i])
	}
	byLabel := func(a, b int32) int {
		la, lb := labels[a], labels[b]
		if la.ok != lb.ok {
			if la.ok {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(la.s, lb.s); c != 0 {
			return c
		}
		return cmp.Compare(nodes[a].obj, nodes[b].obj)
	}
	byTotal := func(a, b int32) int {
		if c := cmp.Compare(nodes[b].total, nodes[a].total); c != 0 {
			return c
		}
		return byLabel(a, b)
	}
	var stack []int32
	for ord, less := range []func(a, b int32) int{byLabel, byTotal} {
		for i := range nodes {
			slices.SortFunc(o.childrenOf(&nodes[i]), less)
		}
		pos := int32(0)
		stack = append(stack[:0], 0)
		for len(stack) > 0 {
			i := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			pos++
			nodes[i].pos[ord] = pos
			ch := o.childrenOf(&nodes[i])
			for c := len(ch) - 1; c >= 0; c-- {
				stack = append(stack, ch[c])
			}
		}
	}
}
