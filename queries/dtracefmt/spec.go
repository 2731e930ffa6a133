// Package dtracefmt prints histograms the way DTrace prints its quantize(),
// lquantize() and llquantize() aggregations, byte for byte: the header,
// one empty row on each side of the non-empty buckets, 40-character '@'
// bars (half bars left and right of the axis when there are negative
// counts), keyed histograms in DTrace's order (by the value-weighted sum
// of the counts, then the key). It also prints linear and user-edge
// histograms in the lquantize layout.
//
// The layouts follow illumos libdtrace (dt_consume.c: dt_print_quantize,
// dt_print_lquantize, dt_print_llquantize, dt_print_quantline,
// dt_print_aggs; dt_aggregate.c: dt_aggregate_valcmp and keycmp); the
// bucketing follows the kernel (dtrace_aggregate_quantize and friends)
// and is the same as the SQL macros of queries/hist_buckets.sql.
package dtracefmt

import (
	"fmt"
	"math"
	"math/bits"
	"sort"
)

// Kind is a kind of histogram.
type Kind int

const (
	// Quantize is DTrace's quantize(): power-of-two buckets, a zero
	// bucket, negative buckets mirrored.
	Quantize Kind = iota
	// LQuantize is DTrace's lquantize(v, Lower, Upper, Step).
	LQuantize
	// LLQuantize is DTrace's llquantize(v, Factor, Low, High, NSteps).
	LLQuantize
	// Linear is Levels buckets of width Step from Lower, printed like
	// lquantize but without its 32-bit and 16-bit limits.
	Linear
	// Edges is buckets between user-given ascending Edges, printed like
	// lquantize: "< e0", e0, ..., ">= en".
	Edges
)

// Underflow is the bucket value of the underflow bucket ("< lower") of
// lquantize, llquantize, linear and edge histograms, as the SQL macros
// return it.
const Underflow = math.MinInt64

// MaxBuckets bounds the buckets of one histogram, each of which may be a
// printed line: 2^21 (2,097,152). DTrace's own limits keep lquantize()
// (65,535 levels and its "<" and ">=" rows) and llquantize() (at most
// 1,200,664 bins: factor 3, magnitudes 0 to 38, 59,049 steps) below it;
// Check holds linear and edge histograms to it.
const MaxBuckets = 1 << 21

// Spec is a histogram's kind and parameters.
type Spec struct {
	Kind Kind
	// LQuantize: Lower, Upper, Step. Linear: Lower, Step (the width) and
	// Levels (the number of buckets).
	Lower, Upper, Step, Levels int64
	// LLQuantize.
	Factor, Low, High, NSteps int64
	// Edges, ascending.
	Edges []int64
}

// Check returns DTrace's compiler error for invalid parameters (the same
// words as the SQL macros' lquantize_check and llquantize_check), or nil.
func (s Spec) Check() error {
	switch s.Kind {
	case Quantize:
		return nil
	case LQuantize:
		switch {
		case s.Lower < math.MinInt32 || s.Lower > math.MaxInt32:
			return fmt.Errorf("lquantize( ) argument #1 must be a 32-bit quantity")
		case s.Upper < math.MinInt32 || s.Upper > math.MaxInt32:
			return fmt.Errorf("lquantize( ) argument #2 must be a 32-bit quantity")
		case s.Upper < s.Lower:
			return fmt.Errorf("lquantize( ) base (argument #1) must be less than limit (argument #2)")
		case s.Step < 1:
			return fmt.Errorf("lquantize( ) argument #3 must be a non-zero positive integer constant")
		case s.Step > math.MaxUint16:
			return fmt.Errorf("lquantize( ) argument #3 must be a 16-bit quantity")
		case (s.Upper-s.Lower)/s.Step == 0:
			return fmt.Errorf("lquantize( ) step (argument #3) too large: must have at least one quantization level")
		case (s.Upper-s.Lower)/s.Step > math.MaxUint16:
			return fmt.Errorf("lquantize( ) step (argument #3) too small: number of quantization levels must be a 16-bit quantity")
		}
		return nil
	case LLQuantize:
		for i, a := range []struct {
			v    int64
			name string
		}{{s.Factor, "factor"}, {s.Low, "low magnitude"}, {s.High, "high magnitude"}, {s.NSteps, "linear steps per magnitude"}} {
			if a.v < 0 || a.v > math.MaxUint16 {
				return fmt.Errorf("llquantize( ) argument #%d (%s) must be an unsigned 16-bit quantity", i+1, a.name)
			}
		}
		switch {
		case s.Factor < 2:
			return fmt.Errorf("llquantize( ) factor (argument #1) must be two or more")
		case s.Low >= s.High:
			return fmt.Errorf("llquantize( ) high magnitude (argument #3) must be greater than low magnitude (argument #2)")
		case s.NSteps < s.Factor:
			return fmt.Errorf("llquantize( ) factor (argument #1) must be less than or equal to the number of linear steps per magnitude (argument #4)")
		}
		v := s.Factor
		for v < s.NSteps {
			v *= s.Factor // factor, nsteps < 2^16: no overflow before v >= nsteps
		}
		if s.NSteps%s.Factor != 0 || v%s.NSteps != 0 {
			return fmt.Errorf("llquantize( ) factor (argument #1) must evenly divide the number of steps per magnitude (argument #4), and the number of steps per magnitude must evenly divide a power of the factor")
		}
		// factor^(high+2) must fit in 64 bits (unsigned).
		order := uint64(1)
		for i := int64(0); i <= s.High+1; i++ {
			hi, lo := bits.Mul64(order, uint64(s.Factor))
			if hi != 0 {
				return fmt.Errorf("llquantize( ) factor (%d) raised to power of high magnitude (%d) plus 1 overflows 64-bits", s.Factor, s.High)
			}
			order = lo
		}
		return nil
	case Linear:
		if s.Step < 1 || s.Levels < 1 {
			return fmt.Errorf("linear histogram: the width and the number of buckets must be positive")
		}
		if s.Levels > MaxBuckets {
			return fmt.Errorf("linear histogram: expected at most %d buckets, found %d", MaxBuckets, s.Levels)
		}
		if _, ok := mulAdd(s.Lower, s.Levels, s.Step); !ok {
			return fmt.Errorf("linear histogram: %d buckets of width %d from %d overflow 64 bits", s.Levels, s.Step, s.Lower)
		}
		return nil
	case Edges:
		if len(s.Edges) < 2 {
			return fmt.Errorf("bucket edges: give at least two edges")
		}
		if len(s.Edges)-1 > MaxBuckets {
			return fmt.Errorf("bucket edges: expected at most %d buckets (%d edges), found %d edges", MaxBuckets, MaxBuckets+1, len(s.Edges))
		}
		if !sort.SliceIsSorted(s.Edges, func(i, j int) bool { return s.Edges[i] < s.Edges[j] }) {
			return fmt.Errorf("bucket edges: %v are not in strictly ascending order", s.Edges)
		}
		for i := 1; i < len(s.Edges); i++ {
			if s.Edges[i] == s.Edges[i-1] {
				return fmt.Errorf("bucket edges: %v are not in strictly ascending order", s.Edges)
			}
		}
		return nil
	}
	return fmt.Errorf("dtracefmt: unknown histogram kind %d", s.Kind)
}

// mulAdd returns a + n*m and whether it fits in an int64.
func mulAdd(a, n, m int64) (int64, bool) {
	if n != 0 && m != 0 {
		p := n * m
		if p/m != n {
			return 0, false
		}
		s := a + p
		if (p > 0 && s < a) || (p < 0 && s > a) {
			return 0, false
		}
		return s, true
	}
	return a, true
}

// Bucket returns the bucket of the value v, as the SQL bucket macros
// return it (the bucket's lower edge; Underflow for "< lower"). It is an
// independent implementation in Go, by the kernel's algorithms, against
// which the macros are tested. The Spec must be valid.
func (s Spec) Bucket(v int64) int64 {
	switch s.Kind {
	case Quantize:
		return quantizeBucketVal(quantizeIndex(v))
	case LQuantize:
		top := s.Lower + (s.Upper-s.Lower)/s.Step*s.Step
		return linearBucket(v, s.Lower, s.Step, top)
	case Linear:
		top, _ := mulAdd(s.Lower, s.Levels, s.Step)
		return linearBucket(v, s.Lower, s.Step, top)
	case LLQuantize:
		l := newLLLayout(s)
		return l.value(l.kernelBin(v))
	case Edges:
		if v < s.Edges[0] {
			return Underflow
		}
		i := sort.Search(len(s.Edges), func(i int) bool { return s.Edges[i] > v })
		return s.Edges[i-1]
	}
	panic("dtracefmt: unknown kind")
}

func linearBucket(v, lower, step, top int64) int64 {
	switch {
	case v < lower:
		return Underflow
	case v >= top:
		return top
	}
	return lower + int64(uint64(v-lower)/uint64(step))*step
}

// The quantize() buckets: 127 of them, index 63 is zero, index 63+k+1 is
// 2^k and index 63-k-1 is -2^k (k = 0..62).
const (
	quantizeBuckets = 127
	quantizeZero    = 63
)

func quantizeBucketVal(i int) int64 {
	switch {
	case i < quantizeZero:
		return -(int64(1) << (quantizeZero - 1 - i))
	case i == quantizeZero:
		return 0
	}
	return int64(1) << (i - quantizeZero - 1)
}

// quantizeIndex is the kernel's dtrace_aggregate_quantize: the largest
// power of two <= v, mirrored for negative values.
func quantizeIndex(v int64) int {
	switch {
	case v == 0:
		return quantizeZero
	case v > 0:
		return quantizeZero + bits.Len64(uint64(v)) // 2^(len-1) <= v
	}
	m := uint64(-v) // -MinInt64 wraps to 2^63, which is what we want
	k := bits.Len64(m) - 1
	if k > 62 {
		k = 62
	}
	return quantizeZero - 1 - k
}
