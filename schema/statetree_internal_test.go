package schema

import (
	"math"
	"testing"
)

// TestDurBuckets: every duration is within its bucket's bounds, the
// buckets are contiguous and ordered, and the last ends at MaxInt64.
func TestDurBuckets(t *testing.T) {
	prevHi := int64(-1)
	for b := 0; b < histBuckets; b++ {
		lo, hi := bucketBounds(b)
		if lo != prevHi+1 || hi < lo {
			t.Fatalf("bucket %d: [%d, %d] after one that ended at %d", b, lo, hi, prevHi)
		}
		for _, d := range []int64{lo, hi, lo + (hi-lo)/2} {
			if got := durBucket(d); got != b {
				t.Fatalf("durBucket(%d) = %d, want %d ([%d, %d])", d, got, b, lo, hi)
			}
		}
		prevHi = hi
	}
	if prevHi != math.MaxInt64 {
		t.Fatalf("the last bucket ends at %d", prevHi)
	}
}
