package dtracefmt

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math/big"
	"sort"
	"strconv"
)

// Key is the key of one histogram of a keyed aggregation (@name[key]).
type Key struct {
	// None: an aggregation without a key (@name = quantize(...)).
	None bool
	// Size is 0 for a string key (Str), else the integer's size in bytes
	// (1, 2, 4 or 8), which sets how DTrace prints (" %3d", " %5d", " %8d",
	// " %16lld") and compares (as an unsigned number of that size) it.
	Size int
	Str  string
	Int  int64
}

// StringKey returns a string key.
func StringKey(s string) Key { return Key{Str: s} }

// IntKey returns an integer key of the given size in bytes (1, 2, 4, 8).
func IntKey(v int64, size int) Key { return Key{Size: size, Int: v} }

func (k Key) isString() bool { return !k.None && k.Size == 0 }

// unsigned is the key as DTrace compares it: an unsigned number of its size.
func (k Key) unsigned() uint64 { return uint64(k.Int) & (^uint64(0) >> (64 - 8*k.Size)) }

// signed is the key as DTrace prints it: a signed number of its size.
func (k Key) signed() int64 { s := 64 - 8*k.Size; return k.Int << s >> s }

func (k Key) String() string {
	switch {
	case k.None:
		return "(no key)"
	case k.Size == 0:
		return k.Str
	}
	return strconv.FormatInt(k.signed(), 10)
}

// intWidth is the width DTrace prints an integer key of each size in.
var intWidth = map[int]int{1: 3, 2: 5, 4: 8, 8: 16}

// appendKeyText is what dt_print_aggs prints for the key before the
// histogram: a string as "  %-50s", an integer as " %*d" with the width
// of its size, nothing without a key.
func appendKeyText(b []byte, k Key) []byte {
	switch {
	case k.None:
		return b
	case k.Size == 0:
		b = append(b, "  "...)
		b = append(b, k.Str...)
		for n := len(k.Str); n < 50; n++ {
			b = append(b, ' ')
		}
		return b
	}
	b = append(b, ' ')
	return appendRight(b, strconv.FormatInt(k.signed(), 10), intWidth[k.Size])
}

// appendRight appends s right-aligned in width columns (printf "%*s").
func appendRight(b []byte, s string, width int) []byte {
	for n := len(s); n < width; n++ {
		b = append(b, ' ')
	}
	return append(b, s...)
}

// Hist is one histogram: its key and the counts of its buckets, by bucket
// value as the SQL bucket macros return it. A count is the sum of the
// weights (DTrace's increments) that fell into the bucket; it may be
// zero or negative.
type Hist struct {
	Key    Key
	Counts map[int64]int64
}

// Write prints the histograms in DTrace's order and layout: what
// dtrace(1M) prints for an aggregation at exit, without the blank line
// dtrace itself writes before it. Every bucket value must be a bucket of
// the spec; hists must have distinct keys.
func Write(w io.Writer, spec Spec, hists []Hist) error {
	return write(w, spec, hists, roundBars)
}

// How bar lengths are rounded: DTrace rounds to the nearest '@' since
// libdtrace 1.22 (2005); the first Solaris 10 release truncated, as the
// oldest DTraceToolkit examples show (the tests print those that way).
const (
	roundBars = iota
	truncateBars
)

func write(w io.Writer, spec Spec, hists []Hist, bars int) error {
	if err := spec.Check(); err != nil {
		return err
	}
	l := newLayout(spec)
	prepared := make([]prepared, len(hists))
	for i, h := range hists {
		p, err := prepare(spec, l, h)
		if err != nil {
			return err
		}
		prepared[i] = p
	}
	rows := 0
	for i := range prepared {
		first, last := rowRange(l, &prepared[i])
		rows += last - first + 1
	}
	if rows > MaxRows {
		return fmt.Errorf("histograms: expected at most %d rows, found %d in %d histograms (fewer buckets, or fewer keys, make fewer)",
			MaxRows, rows, len(prepared))
	}
	sort.SliceStable(prepared, func(i, j int) bool { return less(&prepared[i], &prepared[j]) })
	bw := bufio.NewWriter(w)
	var line []byte
	for i := range prepared {
		line = writeHist(bw, line[:0], l, &prepared[i], bars)
	}
	return bw.Flush()
}

// prepared is a histogram with its counts by bin and its sort value.
type prepared struct {
	key    Key
	counts map[int]int64
	sum    *big.Int // Σ count × sortValue(bin)
	zero   int64    // count of the zero bin
}

func prepare(spec Spec, l layout, h Hist) (prepared, error) {
	p := prepared{key: h.Key, counts: make(map[int]int64, len(h.Counts)), sum: new(big.Int)}
	if _, ok := intWidth[h.Key.Size]; !h.Key.None && h.Key.Size != 0 && !ok {
		return p, fmt.Errorf("dtracefmt: key %d: integer size %d is not 1, 2, 4 or 8", h.Key.Int, h.Key.Size)
	}
	var t big.Int
	for b, c := range h.Counts {
		i, ok := l.bin(b)
		if !ok {
			return p, fmt.Errorf("dtracefmt: key %s: %d is not a bucket of %s", h.Key, b, spec)
		}
		p.counts[i] += c
	}
	for i, c := range p.counts {
		p.sum.Add(p.sum, t.Mul(l.sortValue(i), big.NewInt(c)))
	}
	if z := l.zeroBin(); z >= 0 {
		p.zero = p.counts[z]
	}
	return p, nil
}

// less is dt_aggregate_valcmp followed by dt_aggregate_keycmp: ascending
// by the weighted sum, then by the count at zero, then by the key
// (integers as unsigned numbers, strings byte by byte).
func less(a, b *prepared) bool {
	if c := a.sum.Cmp(b.sum); c != 0 {
		return c < 0
	}
	if a.zero != b.zero {
		return a.zero < b.zero
	}
	ka, kb := a.key, b.key
	if ka.isString() != kb.isString() { // not DTrace's case: one key type per aggregation
		return ka.isString()
	}
	if ka.isString() {
		return ka.Str < kb.Str
	}
	if ka.Size != kb.Size {
		return ka.Size < kb.Size
	}
	return ka.unsigned() < kb.unsigned()
}

// The header dt_print_quanthdr prints: "\n%16s %41s %-9s\n".
const header = "\n           value  ------------- Distribution ------------- count    \n"

// MaxRows bounds the rows one Write prints, every histogram's together
// (the rows between each one's first and last non-empty bucket): 2^21
// rows, about 150 MB. Past it Write prints nothing and says so.
const MaxRows = 1 << 21

// rowRange is the bins writeHist prints: from one bin below the first
// non-zero bin to one above the last, clamped to the bins there are;
// around zero (or the first bins) when every count is zero.
func rowRange(l layout, p *prepared) (first, last int) {
	first, last = -1, -1
	for i, c := range p.counts {
		if c == 0 {
			continue
		}
		if first < 0 || i < first {
			first = i
		}
		if i > last {
			last = i
		}
	}
	if first < 0 {
		first, last = l.emptyWindow()
	} else {
		if first > 0 {
			first--
		}
		if last < l.bins()-1 {
			last++
		}
	}
	return first, last
}

func writeHist(w *bufio.Writer, line []byte, l layout, p *prepared, bars int) []byte {
	// 1. The rows.
	first, last := rowRange(l, p)
	// 2. The bar scale: the sum of the absolute counts, and whether there
	//    are positive and negative counts (which halves the bars).
	total := new(big.Int)
	positives, negatives := false, false
	for _, c := range p.counts {
		total.Add(total, new(big.Int).Abs(big.NewInt(c)))
		positives = positives || c > 0
		negatives = negatives || c < 0
	}
	line = appendKeyText(line, p.key)
	w.Write(line)
	w.WriteString(header)
	for i := first; i <= last; i++ {
		line = appendRight(line[:0], l.label(i), 16)
		line = append(line, ' ')
		line = appendQuantLine(line, p.counts[i], total, positives, negatives, bars)
		w.Write(line)
	}
	w.WriteByte('\n')
	return line
}

var (
	ats    = bytes.Repeat([]byte{'@'}, 40)
	spaces = bytes.Repeat([]byte{' '}, 40)
)

// appendQuantLine is dt_print_quantline (ASCII): the bar and the count.
func appendQuantLine(b []byte, val int64, total *big.Int, positives, negatives bool, bars int) []byte {
	count := strconv.FormatInt(val, 10)
	switch {
	case !negatives:
		depth := 0
		if positives {
			depth = barDepth(val, total, 40, bars)
		}
		b = append(b, '|')
		b = append(b, ats[:depth]...)
		b = append(b, spaces[:40-depth]...)
	case !positives:
		depth := barDepth(val, total, 40, bars)
		b = append(b, spaces[:40-depth]...)
		b = append(b, ats[:depth]...)
		b = append(b, '|')
	default:
		// Both signs: half bars left (<= 0) or right (> 0) of the axis.
		depth := barDepth(val, total, 20, bars)
		if val <= 0 {
			b = append(b, spaces[:20-depth]...)
			b = append(b, ats[:depth]...)
			b = append(b, '|')
			b = append(b, spaces[:20]...)
		} else {
			b = append(b, spaces[:20]...)
			b = append(b, '|')
			b = append(b, ats[:depth]...)
			b = append(b, spaces[:20-depth]...)
		}
	}
	b = append(b, ' ')
	b = append(b, count...)
	for n := len(count); n < 9; n++ { // "%-9lld"
		b = append(b, ' ')
	}
	return append(b, '\n')
}

// barDepth is DTrace's (uint)(|val| * len / total + 0.5), computed exactly:
// floor((2·len·|val| + total) / (2·total)). DTrace computes it in long
// double, which agrees for totals below 2^57. Truncating, it is
// floor(len·|val| / total).
func barDepth(val int64, total *big.Int, length int64, bars int) int {
	if total.Sign() == 0 {
		return 0
	}
	v := new(big.Int).Abs(big.NewInt(val))
	num := new(big.Int).Mul(v, big.NewInt(2*length))
	den := new(big.Int).Lsh(total, 1)
	if bars == roundBars {
		num.Add(num, total)
	}
	d := num.Quo(num, den).Int64()
	if d > length { // cannot happen: |val| <= total
		d = length
	}
	return int(d)
}
