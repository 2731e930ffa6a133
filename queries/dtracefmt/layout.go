package dtracefmt

import (
	"fmt"
	"math/big"
	"sort"
	"strconv"
)

// A layout numbers a histogram's buckets as DTrace's data array does
// (bin 0 the underflow or most negative bucket, then in order of value)
// without allocating them: an llquantize() may have millions of bins.
type layout interface {
	// bins is the number of bins.
	bins() int
	// bin returns the bin of a bucket value as the SQL macros return it,
	// false when no bucket has that value.
	bin(bucket int64) (int, bool)
	// label is what DTrace prints in the value column of bin i: a number
	// ("%16lld") or text ("%16s": "< 0", ">= 100"); both right-aligned.
	label(i int) string
	// sortValue is the value a count in bin i is weighted by when DTrace
	// sorts keyed aggregations (dt_aggregate_*quantizedsum).
	sortValue(i int) *big.Int
	// zeroBin is the bin whose count breaks ties between equal sums
	// (dt_aggregate_*quantizedzero), -1 when there is none.
	zeroBin() int
	// emptyWindow is the range of bins DTrace prints when every count is
	// zero.
	emptyWindow() (first, last int)
}

func newLayout(s Spec) layout {
	switch s.Kind {
	case Quantize:
		return quantizeLayout{}
	case LQuantize:
		levels := (s.Upper - s.Lower) / s.Step
		return &linearLayout{lower: s.Lower, step: s.Step, levels: levels}
	case Linear:
		return &linearLayout{lower: s.Lower, step: s.Step, levels: s.Levels}
	case LLQuantize:
		return newLLLayout(s)
	case Edges:
		return edgesLayout(s.Edges)
	}
	panic("dtracefmt: unknown kind")
}

// quantizeLayout: dt_print_quantize.
type quantizeLayout struct{}

func (quantizeLayout) bins() int { return quantizeBuckets }

func (quantizeLayout) bin(b int64) (int, bool) {
	i := quantizeIndex(b)
	return i, quantizeBucketVal(i) == b
}

func (quantizeLayout) label(i int) string { return strconv.FormatInt(quantizeBucketVal(i), 10) }

func (quantizeLayout) sortValue(i int) *big.Int { return big.NewInt(quantizeBucketVal(i)) }

func (quantizeLayout) zeroBin() int { return quantizeZero }

func (quantizeLayout) emptyWindow() (int, int) { return quantizeZero - 1, quantizeZero + 1 }

// linearLayout: dt_print_lquantize; bin 0 is "< lower", bins 1..levels
// are lower + (i-1)*step, bin levels+1 is ">= lower + levels*step".
type linearLayout struct{ lower, step, levels int64 }

func (l *linearLayout) top() int64 { return l.lower + l.levels*l.step }

func (l *linearLayout) bins() int { return int(l.levels) + 2 }

func (l *linearLayout) bin(b int64) (int, bool) {
	switch {
	case b == Underflow:
		return 0, true
	case b == l.top():
		return int(l.levels) + 1, true
	case b < l.lower || b > l.top() || (b-l.lower)%l.step != 0:
		return 0, false
	}
	return int((b-l.lower)/l.step) + 1, true
}

func (l *linearLayout) value(i int) int64 { return l.lower + int64(i-1)*l.step }

func (l *linearLayout) label(i int) string {
	switch i {
	case 0:
		return "< " + strconv.FormatInt(l.lower, 10)
	case int(l.levels) + 1:
		return ">= " + strconv.FormatInt(l.top(), 10)
	}
	return strconv.FormatInt(l.value(i), 10)
}

// sortValue: the underflow counts at lower-1, the overflow at top+1.
func (l *linearLayout) sortValue(i int) *big.Int {
	switch i {
	case 0:
		return new(big.Int).Sub(big.NewInt(l.lower), big.NewInt(1))
	case int(l.levels) + 1:
		return new(big.Int).Add(big.NewInt(l.top()), big.NewInt(1))
	}
	return big.NewInt(l.value(i))
}

func (l *linearLayout) zeroBin() int {
	switch {
	case l.lower-1 == 0:
		return 0
	case l.lower <= 0 && 0 < l.top() && (0-l.lower)%l.step == 0:
		return int((0-l.lower)/l.step) + 1
	case l.top()+1 == 0:
		return int(l.levels) + 1
	}
	return -1
}

func (l *linearLayout) emptyWindow() (int, int) { return 0, 2 }

// edgesLayout: like lquantize, with bins 1..n the edges e0..e(n-1) and
// bin n+1 ">= en".
type edgesLayout []int64

func (e edgesLayout) bins() int { return len(e) + 1 }

func (e edgesLayout) bin(b int64) (int, bool) {
	if b == Underflow {
		return 0, true
	}
	i := sort.Search(len(e), func(i int) bool { return e[i] >= b })
	return i + 1, i < len(e) && e[i] == b
}

func (e edgesLayout) label(i int) string {
	switch i {
	case 0:
		return "< " + strconv.FormatInt(e[0], 10)
	case len(e):
		return ">= " + strconv.FormatInt(e[len(e)-1], 10)
	}
	return strconv.FormatInt(e[i-1], 10)
}

func (e edgesLayout) sortValue(i int) *big.Int {
	switch i {
	case 0:
		return new(big.Int).Sub(big.NewInt(e[0]), big.NewInt(1))
	case len(e):
		return new(big.Int).Add(big.NewInt(e[len(e)-1]), big.NewInt(1))
	}
	return big.NewInt(e[i-1])
}

func (e edgesLayout) zeroBin() int {
	if e[0]-1 == 0 {
		return 0
	}
	for i, v := range e[:len(e)-1] {
		if v == 0 {
			return i + 1
		}
	}
	if e[len(e)-1]+1 == 0 {
		return len(e)
	}
	return -1
}

func (e edgesLayout) emptyWindow() (int, int) { return 0, 2 }

// llLayout: dt_print_llquantize. Bin 0 is "< factor^low"; then for each
// order of magnitude o = low..high the steps of [factor^o, factor^(o+1));
// the last bin is ">= factor^(high+1)".
type llLayout struct {
	low, high, nsteps int64
	pow               []int64 // pow[k] = factor^k, k = 0..high+1
	first             []int   // first[o-low] = bin of factor^o
	n                 int
}

func newLLLayout(s Spec) *llLayout {
	l := &llLayout{low: s.Low, high: s.High, nsteps: s.NSteps}
	p := int64(1)
	for k := int64(0); k <= s.High+1; k++ {
		l.pow = append(l.pow, p)
		p *= s.Factor // Check guarantees factor^(high+2) < 2^64; only the last product may exceed int64 and is unused
	}
	bin := 1
	for o := s.Low; o <= s.High; o++ {
		l.first = append(l.first, bin)
		bin += int((l.pow[o+1] - l.pow[o]) / l.width(o))
	}
	l.n = bin + 1
	return l
}

// width of the steps of order o: factor^(o+1) / min(factor^(o+1), nsteps).
func (l *llLayout) width(o int64) int64 {
	next := l.pow[o+1]
	if next > l.nsteps {
		return next / l.nsteps
	}
	return 1
}

func (l *llLayout) bins() int { return l.n }

// kernelBin is dtrace_aggregate_llquantize_bucket.
func (l *llLayout) kernelBin(v int64) int {
	if v < l.pow[l.low] {
		return 0
	}
	for o := l.low; o <= l.high; o++ {
		if v < l.pow[o+1] {
			return l.first[o-l.low] + int((v-l.pow[o])/l.width(o))
		}
	}
	return l.n - 1
}

func (l *llLayout) value(i int) int64 {
	switch {
	case i == 0:
		return Underflow
	case i == l.n-1:
		return l.pow[l.high+1]
	}
	o := l.low + int64(sort.Search(len(l.first), func(k int) bool { return l.first[k] > i })) - 1
	return l.pow[o] + int64(i-l.first[o-l.low])*l.width(o)
}

func (l *llLayout) bin(b int64) (int, bool) {
	if b == Underflow {
		return 0, true
	}
	if b < l.pow[l.low] || b > l.pow[l.high+1] {
		return 0, false
	}
	i := l.kernelBin(b)
	return i, l.value(i) == b
}

func (l *llLayout) label(i int) string {
	switch i {
	case 0:
		return "< " + strconv.FormatInt(l.pow[l.low], 10)
	case l.n - 1:
		return ">= " + strconv.FormatInt(l.pow[l.high+1], 10)
	}
	return strconv.FormatInt(l.value(i), 10)
}

// sortValue: dt_aggregate_llquantizedsum weighs the underflow by
// factor^low - 1 and the overflow by factor^(high+1).
func (l *llLayout) sortValue(i int) *big.Int {
	if i == 0 {
		return big.NewInt(l.pow[l.low] - 1)
	}
	return big.NewInt(l.value(i))
}

// zeroBin: dt_aggregate_llquantizedcmp breaks ties by the underflow count.
func (l *llLayout) zeroBin() int { return 0 }

func (l *llLayout) emptyWindow() (int, int) { return 0, 1 }

func (s Spec) String() string {
	switch s.Kind {
	case Quantize:
		return "quantize"
	case LQuantize:
		return fmt.Sprintf("lquantize(%d, %d, %d)", s.Lower, s.Upper, s.Step)
	case LLQuantize:
		return fmt.Sprintf("llquantize(%d, %d, %d, %d)", s.Factor, s.Low, s.High, s.NSteps)
	case Linear:
		return fmt.Sprintf("linear(%d buckets of %d from %d)", s.Levels, s.Step, s.Lower)
	case Edges:
		return fmt.Sprintf("edges%v", s.Edges)
	}
	return "unknown"
}
