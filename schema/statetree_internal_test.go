package schema

import (
	"math"
	"strings"
	"testing"
	"unsafe"
)

// TestDurBuckets: at both resolutions, every duration is within its
// bucket's bounds, the buckets are contiguous and ordered, the last ends
// at MaxInt64, and a coarse bucket is a whole number of fine ones.
func TestDurBuckets(t *testing.T) {
	for _, res := range []histRes{fineRes, coarseRes} {
		prevHi := int64(-1)
		for b := 0; b < res.buckets(); b++ {
			lo, hi := res.bounds(b)
			if lo != prevHi+1 || hi < lo {
				t.Fatalf("res %d, bucket %d: [%d, %d] after one that ended at %d", res, b, lo, hi, prevHi)
			}
			for _, d := range []int64{lo, hi, lo + (hi-lo)/2} {
				if got := res.bucket(d); got != b {
					t.Fatalf("res %d: bucket(%d) = %d, want %d ([%d, %d])", res, d, got, b, lo, hi)
				}
			}
			prevHi = hi
		}
		if prevHi != math.MaxInt64 {
			t.Fatalf("res %d: the last bucket ends at %d", res, prevHi)
		}
	}
	for f := 0; f < fineRes.buckets(); f++ {
		lo, hi := fineRes.bounds(f)
		if coarseRes.bucket(lo) != coarseRes.bucket(hi) {
			t.Fatalf("fine bucket %d [%d, %d] spans coarse buckets %d and %d", f, lo, hi, coarseRes.bucket(lo), coarseRes.bucket(hi))
		}
	}
}

// TestDurHistResolutions: a histogram that turned dense, fine or coarse,
// and one that stayed sparse, count the same durations per coarse bucket,
// and tell the same buckets held.
func TestDurHistResolutions(t *testing.T) {
	durs := []int64{0, 5, 31, 32, 33, 100, 127, 128, 129, 1000, 1001, 4095, 4096, 1 << 40, math.MaxInt64}
	for i := int64(0); i < 200; i++ {
		durs = append(durs, 1000+i*37)
	}
	fine, none := 10, 0
	var sparse, fineDense, coarseDense durHist
	for _, d := range durs {
		if !fineDense.add(d, &fine) || !coarseDense.add(d, &none) {
			t.Fatal("count overflow")
		}
	}
	for _, d := range durs[:10] {
		sparse.add(d, &none)
	}
	if fineDense.dense == nil || fineDense.coarse || !coarseDense.coarse || sparse.dense != nil {
		t.Fatalf("dense %v coarse %v, dense %v coarse %v, sparse %v", fineDense.dense != nil, fineDense.coarse,
			coarseDense.dense != nil, coarseDense.coarse, sparse.dense == nil)
	}
	count := func(h *durHist, res histRes) map[int]int64 {
		m := map[int]int64{}
		h.each(res, func(b int, n, _, _ int64, _ bool) { m[b] += n })
		return m
	}
	a, b := count(&fineDense, coarseRes), count(&coarseDense, coarseRes)
	if len(a) != len(b) {
		t.Fatalf("coarse buckets: %d fine dense, %d coarse dense", len(a), len(b))
	}
	for k, n := range a {
		if b[k] != n || !fineDense.has(coarseRes, k) || !coarseDense.has(coarseRes, k) {
			t.Fatalf("coarse bucket %d: %d fine dense, %d coarse dense", k, n, b[k])
		}
	}
	for k := range count(&sparse, fineRes) {
		if !sparse.has(fineRes, k) || !fineDense.has(fineRes, k) {
			t.Fatalf("fine bucket %d not found", k)
		}
	}
	if sparse.has(fineRes, fineRes.bucket(1<<50)) {
		t.Fatal("sparse holds a bucket it has no duration in")
	}
}

// TestTreeLongStrings: only strings past DuckDB's string block limit
// count against maxTreeStrings, each time a row holds one: as its label,
// its object and in its path, and in the paths of the nodes below it.
func TestTreeLongStrings(t *testing.T) {
	nodes := []treeNode{
		{nk: 0, kind: -1, state: -1, parent: -1},
		{nk: 1, kind: 0, state: -1, parent: 0},
		{nk: 2, kind: 0, state: -1, obj: 1, parent: 1},
		{nk: 3, kind: 0, obj: 1, state: 0, parent: 2},
	}
	for _, c := range []struct {
		name string
		want int64
	}{
		{"T1", 0},
		{strings.Repeat("x", longString), 0},
		// the object node: label, object, path; the state node: object, path
		{strings.Repeat("x", longString+1), 5 * (longString + 1)},
	} {
		tn := &treeNames{kinds: []string{"task"}, states: []lvName{{"running", true}},
			objName: func(ObjectID) string { return c.name }}
		got := treeLongStrings(nodes, tn)
		if got != c.want {
			t.Errorf("a name of %d bytes: %d bytes of long strings, want %d", len(c.name), got, c.want)
		}
	}
}

// TestTreeNodeSize: a run's tree may have a million nodes; each is kept
// small (names and lists are in treeNames and treeOrder, not in it).
func TestTreeNodeSize(t *testing.T) {
	if got := unsafe.Sizeof(treeNode{}); got > 120 {
		t.Errorf("treeNode is %d bytes, want at most 120", got)
	}
}
