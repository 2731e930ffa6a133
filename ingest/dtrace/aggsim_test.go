package dtrace

import (
	"fmt"
	"math"
	"strings"
)

// A second, independent account of DTrace's distributions, written from
// libdtrace's dt_print_quantize, dt_print_lquantize, dt_print_llquantize
// and dt_print_quantline and the kernel's dtrace_aggregate_quantize,
// _lquantize and _llquantize: the buckets a value goes to, the rows DTrace
// prints, and each row's true bounds. The tests print data with it and
// check that the reader gives back every row's count and bounds.

// simRow is a printed row and the bucket it stands for.
type simRow struct {
	label        string
	count        int64
	lo, hi       int64
	hasLo, hasHi bool
}

// simDist is a distribution: the counts of every bucket, and how to
// name and bound bucket i.
type simDist struct {
	counts []int64
	row    func(i int) simRow
}

const simQuantizeBuckets = 127 // (64 - 1) * 2 + 1
const simZeroBucket = 63

func simQuantizeVal(b int) int64 {
	switch {
	case b < simZeroBucket:
		return -(int64(1) << (simZeroBucket - 1 - b))
	case b == simZeroBucket:
		return 0
	}
	return int64(1) << (b - simZeroBucket - 1)
}

// simQuantize is dtrace_aggregate_quantize: the bucket of v.
func simQuantize(v int64) int {
	if v < 0 {
		for i := 0; i < simZeroBucket; i++ {
			if v <= simQuantizeVal(i) {
				return i
			}
		}
		panic("unreachable")
	}
	for i := simZeroBucket + 1; i < simQuantizeBuckets; i++ {
		if v < simQuantizeVal(i) {
			return i - 1
		}
	}
	return simQuantizeBuckets - 1
}

// newSimQuantize counts values as quantize does. A bucket's bounds are
// the smallest and largest values that go to it, found by the kernel's
// own rule (simQuantize) rather than by a formula.
func newSimQuantize(values []int64) simDist { return simQuantizeDist(values, true) }

// simQuantizeDist is newSimQuantize; without bounds (quick) for input
// that is only printed.
func simQuantizeDist(values []int64, bounds bool) simDist {
	d := simDist{counts: make([]int64, simQuantizeBuckets)}
	for _, v := range values {
		d.counts[simQuantize(v)]++
	}
	d.row = func(i int) simRow {
		v := simQuantizeVal(i)
		r := simRow{label: fmt.Sprint(v), count: d.counts[i]}
		if !bounds {
			return r
		}
		// the bucket's extreme values, searched from v
		lo, hi := simBisectDown(v, i), simBisectUp(v, i)
		r.lo, r.hasLo = lo, lo != math.MinInt64
		if hi != math.MaxInt64 {
			r.hi, r.hasHi = hi+1, true
		}
		return r
	}
	return d
}

// simBisectDown finds the smallest x <= v with simQuantize(x) == i,
// knowing simQuantize(v) == i (buckets are intervals).
func simBisectDown(v int64, i int) int64 {
	lo, hi := int64(math.MinInt64), v // simQuantize(hi) == i
	if simQuantize(lo) == i {
		return lo
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if simQuantize(mid) == i {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

func simBisectUp(v int64, i int) int64 {
	lo, hi := v, int64(math.MaxInt64) // simQuantize(lo) == i
	if simQuantize(hi) == i {
		return hi
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if simQuantize(mid) == i {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// newSimLquantize is lquantize(x, base, limit, step).
func newSimLquantize(values []int64, base, limit, step int64) simDist {
	levels := int((limit - base) / step)
	d := simDist{counts: make([]int64, levels+2)}
	for _, v := range values {
		switch {
		case v < base:
			d.counts[0]++
		case int((v-base)/step) < levels:
			d.counts[(v-base)/step+1]++
		default:
			d.counts[levels+1]++
		}
	}
	d.row = func(i int) simRow {
		r := simRow{count: d.counts[i]}
		switch {
		case i == 0:
			r.label, r.hi, r.hasHi = fmt.Sprintf("< %d", base), base, true
		case i == levels+1:
			top := base + int64(levels)*step
			r.label, r.lo, r.hasLo = fmt.Sprintf(">= %d", top), top, true
		default:
			lo := base + int64(i-1)*step
			r.label, r.lo, r.hi, r.hasLo, r.hasHi = fmt.Sprint(lo), lo, lo+step, true, true
		}
		return r
	}
	return d
}

// newSimLlquantize is llquantize(x, factor, low, high, nsteps): the
// bucket values as dt_print_llquantize walks them.
func newSimLlquantize(values []int64, factor, low, high, nsteps int64) simDist {
	value := int64(1)
	order := int64(0)
	for ; order < low; order++ {
		value *= factor
	}
	bottom := value
	var starts []int64 // bucket i+1 starts at starts[i]
	next := value * factor
	step := int64(1)
	if next > nsteps {
		step = next / nsteps
	}
	for order <= high {
		starts = append(starts, value)
		if value += step; value != next {
			continue
		}
		next = value * factor
		step = 1
		if next > nsteps {
			step = next / nsteps
		}
		order++
	}
	top := value
	d := simDist{counts: make([]int64, len(starts)+2)}
	for _, v := range values {
		b := 0
		switch {
		case v < bottom:
		case v >= top:
			b = len(starts) + 1
		default:
			for j := len(starts) - 1; j >= 0; j-- {
				if v >= starts[j] {
					b = j + 1
					break
				}
			}
		}
		d.counts[b]++
	}
	d.row = func(i int) simRow {
		r := simRow{count: d.counts[i]}
		switch {
		case i == 0:
			r.label, r.hi, r.hasHi = fmt.Sprintf("< %d", bottom), bottom, true
		case i == len(starts)+1:
			r.label, r.lo, r.hasLo = fmt.Sprintf(">= %d", top), top, true
		default:
			end := top
			if i < len(starts) {
				end = starts[i]
			}
			r.label, r.lo, r.hi, r.hasLo, r.hasHi = fmt.Sprint(starts[i-1]), starts[i-1], end, true, true
		}
		return r
	}
	return d
}

// printed returns the rows DTrace prints: from the bucket before the
// first that counts to the bucket after the last; the three around the
// middle when none counts.
func (d simDist) printed(emptyFirst, emptyLast int) []simRow {
	n := len(d.counts)
	first, last := 0, n-1
	for first < n && d.counts[first] == 0 {
		first++
	}
	if first == n {
		first, last = emptyFirst, emptyLast
	} else {
		if first > 0 {
			first--
		}
		for last > 0 && d.counts[last] == 0 {
			last--
		}
		if last < n-1 {
			last++
		}
	}
	var rows []simRow
	for i := first; i <= last; i++ {
		rows = append(rows, d.row(i))
	}
	return rows
}

// simPrint writes rows as dt_print_*quantize do: the header, then
// "%16s " and dt_print_quantline's bar (rounded, as today's libdtrace).
func simPrint(b *strings.Builder, rows []simRow) {
	var total float64
	positives, negatives := false, false
	for _, r := range rows {
		total += math.Abs(float64(r.count))
		positives = positives || r.count > 0
		negatives = negatives || r.count < 0
	}
	fmt.Fprintf(b, "\n%16s %41s %-9s\n", "value", "------------- Distribution -------------", "count")
	ats := strings.Repeat("@", 40)
	spaces := strings.Repeat(" ", 40)
	for _, r := range rows {
		fmt.Fprintf(b, "%16s ", r.label)
		depth := func(l int) int {
			if total == 0 {
				return 0
			}
			return int(math.Abs(float64(r.count))*float64(l)/total + 0.5)
		}
		switch {
		case !negatives:
			dp := 0
			if positives {
				dp = depth(40)
			}
			fmt.Fprintf(b, "|%s%s %-9d\n", ats[40-dp:], spaces[dp:], r.count)
		case !positives:
			dp := depth(40)
			fmt.Fprintf(b, "%s%s| %-9d\n", spaces[dp:], ats[40-dp:], r.count)
		default:
			dp := depth(20)
			if r.count <= 0 {
				fmt.Fprintf(b, "%s%s|%20s %-9d\n", spaces[20+dp:], ats[40-dp:], "", r.count)
			} else {
				fmt.Fprintf(b, "%20s|%s%s %-9d\n", "", ats[40-dp:], spaces[20+dp:], r.count)
			}
		}
	}
}
