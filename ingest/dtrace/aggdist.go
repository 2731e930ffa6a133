package dtrace

import (
	"bytes"
	"fmt"
	"math"
	"math/bits"
	"strconv"

	"github.com/traceduck/traceduck/schema"
)

// DTrace distributions: "value ---- Distribution ---- count" and its rows.
// A block is checked when it ends; its buckets are written when its
// aggregation ends, because every block of one aggregation comes from the
// same function and the same parameters: a block whose values alone fit
// quantize and lquantize both takes the function of its siblings, and a
// padding row whose width its own block does not show takes the step the
// others show.

// maxGroupRows bounds the rows of the blocks held until their aggregation
// ends; past it, the blocks so far are written, inferred on their own.
const maxGroupRows = 1 << 16

// distBlock is one distribution held until its aggregation ends.
type distBlock struct {
	header     int64 // line of its header
	agg, title schema.Sym
	rows       [2]int // in aggReader.rows
	key, keys  [2]int // in aggReader.blockText
}

// isDistHeader reports whether line is "value  ---- Distribution ---- count".
func isDistHeader(line []byte) bool {
	t := trimBlanks(line)
	if !bytes.HasPrefix(t, []byte("value")) || !bytes.HasSuffix(t, []byte("count")) || len(t) < len("value count") {
		return false
	}
	inner := t[len("value") : len(t)-len("count")]
	mid := trimBlanks(inner)
	if len(mid) == len(inner) { // no blank after value or before count
		return false
	}
	i := bytes.Index(mid, []byte(" Distribution "))
	if i < 1 {
		return false
	}
	for _, part := range [][]byte{mid[:i], mid[i+len(" Distribution "):]} {
		if len(part) == 0 || !allByte(part, '-') {
			return false
		}
	}
	return true
}

// startDist begins a distribution at its header line: its key is the
// paragraph's last lines (keyStart), the lines above them its title.
func (r *aggReader) startDist(no int64) error {
	if err := r.emitHeld(); err != nil {
		return err
	}
	r.cont = false
	p := &r.para
	lines := p.held()
	ks := keyStart(lines)
	if len(lines)-ks > maxKeyLines || (ks == 0 && p.dropped) {
		p.reset()
		r.inDist, r.distBad, r.distHeader, r.blockStart = true, true, no, len(r.rows)
		return r.w.BadLine(no, "expected a key of at most %d lines above the distribution, found more", maxKeyLines)
	}
	r.keyText(lines[ks:])
	h := r.hashKey()
	_, seen := r.group.keys[h]
	if seen && ks+1 < len(lines) {
		seen = false // a key of several lines (a stack) may print alike for different stacks
	}
	if !(r.group.open && r.group.kind == groupDist && r.quiet && ks == 0 && !seen) {
		title := r.titleBuf[:0]
		if ks > 0 {
			title = appendTitle(title, lines[max(0, ks-maxTitleLines):ks])
		} else {
			title = append(title, r.lastProse...)
		}
		r.titleBuf = title
		if err := r.newGroup(groupDist, title); err != nil {
			return err
		}
	}
	if len(r.group.keys) >= maxGroupKeys {
		clear(r.group.keys)
	}
	r.group.keys[h] = struct{}{}
	r.cur = distBlock{header: no, agg: r.group.agg, title: r.group.title}
	r.cur.key[0] = len(r.blockText)
	r.blockText = append(r.blockText, r.key...)
	r.cur.key[1] = len(r.blockText)
	r.blockText = append(r.blockText, r.keys...)
	r.cur.keys = [2]int{r.cur.key[1], len(r.blockText)}
	p.reset()
	r.lastProse = r.lastProse[:0]
	r.inDist, r.distBad, r.distHeader, r.blockStart = true, false, no, len(r.rows)
	r.region = true
	r.marks++
	r.quiet = false
	return nil
}

// distRowLine reads a line while a distribution is open: a row, or the
// line that ends it (ended = true: the caller reads that line as any other).
func (r *aggReader) distRowLine(no int64, line []byte) (ended bool, err error) {
	var row distRow
	label, looks, problem := parseDistRow(line, &row)
	if !looks {
		return true, r.finishDist(no, line)
	}
	if problem != "" {
		r.distBad = true
		return false, r.w.BadLine(no, "%s", problem)
	}
	if len(r.rows)-r.blockStart == maxDistRows {
		r.distBad = true
		return false, r.w.BadLine(no, "expected at most %d rows in a distribution, found more", maxDistRows)
	}
	if r.distBad {
		return false, nil // the rest of a bad block is read, not kept
	}
	row.line = no
	row.lab0 = len(r.labels)
	r.labels = append(r.labels, label...)
	row.lab1 = len(r.labels)
	r.rows = append(r.rows, row)
	return false, nil
}

// parseDistRow reads "VALUE |BAR COUNT" as DTrace prints it: the value
// (N, < N or >= N), one blank, a field of 41 characters holding the 40 of
// the bar and one '|' (at its start, middle or end, by the signs of the
// counts), one blank, the count. looks is false for a line that is no row
// at all (the block ended); problem describes a row that is broken.
func parseDistRow(line []byte, row *distRow) (label []byte, looks bool, problem string) {
	i := 0
	for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
		i++
	}
	start := i
	row.kind = labelValue
	switch {
	case bytes.HasPrefix(line[i:], []byte("< ")):
		row.kind, i = labelUnder, i+2
	case bytes.HasPrefix(line[i:], []byte(">= ")):
		row.kind, i = labelOver, i+3
	}
	num := i
	if i < len(line) && line[i] == '-' {
		i++
	}
	d := i
	for i < len(line) && line[i] >= '0' && line[i] <= '9' {
		i++
	}
	if i == d {
		return nil, false, ""
	}
	j := i
	for j < len(line) && line[j] == ' ' {
		j++
	}
	if j == i || j == len(line) || (line[j] != '|' && line[j] != '@') {
		return nil, false, ""
	}
	label = line[start:i]
	v, ok := parseDecimal(line[num:i])
	if !ok {
		return label, true, fmt.Sprintf("expected a bucket value that fits in 64 bits, found %q", line[num:i])
	}
	row.v = v
	f := i + 1 // the bar field starts after one blank
	k := f
	ats, pipes := 0, 0
	for k < len(line) && (line[k] == ' ' || line[k] == '@' || line[k] == '|') {
		switch line[k] {
		case '@':
			ats++
		case '|':
			pipes++
		}
		k++
	}
	if ats > distBarWidth {
		return label, true, fmt.Sprintf("expected a bar of at most %d '@', found %d", distBarWidth, ats)
	}
	if pipes != 1 {
		return label, true, fmt.Sprintf("expected one '|' in the bar, found %d", pipes)
	}
	rest := trimRight(line[k:])
	if len(rest) == 0 {
		return label, true, "expected a count after the bar, found the end of the line"
	}
	if k-f != distBarWidth+2 {
		return label, true, fmt.Sprintf("expected a bar %d characters wide and a blank before the count, found %d characters", distBarWidth, k-f-1)
	}
	c, ok := parseDecimal(rest)
	if !ok {
		return label, true, fmt.Sprintf("expected a count (an integer) after the bar, found %q", rest)
	}
	field := line[f : f+distBarWidth+1]
	p := bytes.IndexByte(field, '|')
	if p != 0 && p != distBarWidth/2 && p != distBarWidth {
		return label, true, fmt.Sprintf("expected the '|' at the start, the middle or the end of the bar, found it at character %d", p+1)
	}
	left := bytes.Count(field[:p], []byte("@"))
	right := ats - left
	if !allByte(field[p-left:p], '@') || !allByte(field[p+1:p+1+right], '@') {
		return label, true, fmt.Sprintf("expected the '@' of the bar next to its '|', found %q", field)
	}
	row.count, row.ats, row.left, row.pipe = c, ats, left, p
	return label, true, ""
}

// finishDist ends the block at line no (0 at the end of the file; line
// is the line that ended it), checks it and holds it for its aggregation.
func (r *aggReader) finishDist(no int64, line []byte) error {
	r.inDist = false
	r.quiet = true
	rows := r.rows[r.blockStart:]
	drop := func() {
		r.rows = r.rows[:r.blockStart]
	}
	if r.distBad {
		drop()
		r.w.Diagf(schema.Warning, r.distHeader, schema.NoSeq, "distribution at line %d not stored: a row of it is bad", r.distHeader)
		return nil
	}
	if len(rows) == 0 {
		drop()
		found := "the end of the file"
		at := r.distHeader
		switch {
		case line != nil && blankLine(line):
			found, at = "a blank line", no
		case line != nil:
			found, at = fmt.Sprintf("%q", trimBlanks(line)), no
		}
		return r.w.BadLine(at, "expected a distribution row (VALUE |BAR COUNT) after the header at line %d, found %s", r.distHeader, found)
	}
	if err := r.checkDist(rows); err != nil || r.distBad {
		drop()
		return err
	}
	r.cur.rows = [2]int{r.blockStart, len(r.rows)}
	r.blocks = append(r.blocks, r.cur)
	if len(r.rows) >= maxGroupRows || len(r.labels)+len(r.blockText) >= maxParaBytes {
		return r.flushDists()
	}
	return nil
}

// checkDist checks a block's rows against each other: order, one layout
// of the bar, and bars that draw the counts. DTrace draws |count| * 40 /
// total '@', rounded (older versions truncate; half as wide when there
// are counts of both signs), total being the sum of the |counts|. The
// check allows any total from that sum to twice it: in printed examples
// rows are sometimes left out (the toolkit's oneliners output was drawn
// on a total of about 53 for 51 printed), but bars that do not keep the
// proportions of the counts are an error.
func (r *aggReader) checkDist(rows []distRow) error {
	var total uint64
	for i := range rows {
		row := &rows[i]
		if i > 0 && row.pipe != rows[0].pipe {
			return r.badDist(row.line, "expected the '|' of every bar in the same place, found it moved")
		}
		if row.kind == labelUnder && i > 0 {
			return r.badDist(row.line, "expected the underflow row (< N) first in the distribution, found it after other rows")
		}
		if row.kind == labelOver && i < len(rows)-1 {
			return r.badDist(row.line, "expected the overflow row (>= N) last in the distribution, found rows after it")
		}
		if i > 0 && (row.v < rows[i-1].v || row.v == rows[i-1].v && rows[i-1].kind != labelUnder) {
			return r.badDist(row.line, "expected bucket values in increasing order, found %s after %s", r.label(row), r.label(&rows[i-1]))
		}
		var carry uint64
		total, carry = bits.Add64(total, absU(row.count), 0)
		if carry != 0 || total > math.MaxUint64/2 {
			return r.badDist(row.line, "expected counts whose sum fits in 63 bits, found larger ones")
		}
		switch {
		case row.count > 0 && row.left > 0, row.count < 0 && row.ats > row.left, row.count == 0 && row.ats > 0:
			return r.badDist(row.line, "expected the bar of count %d %s, found %d '@' left of the '|' and %d right", row.count, barSide(row.count), row.left, row.ats-row.left)
		case row.pipe == 0 && row.count < 0:
			return r.badDist(row.line, "expected counts of 0 or more with the '|' at the start of the bar, found %d", row.count)
		case row.pipe == distBarWidth && row.count > 0:
			return r.badDist(row.line, "expected counts of 0 or less with the '|' at the end of the bar, found %d", row.count)
		}
	}
	width := uint64(distBarWidth)
	if rows[0].pipe == distBarWidth/2 {
		width /= 2
	}
	if total == 0 {
		return nil // every bar is empty (checked above)
	}
	// 1. each bar d drawn from count c on a total T, truncated or rounded,
	//    means c*w/T in [d-1/2, d+1), i.e. T in (c*w/(d+1), 2c*w/(2d-1)];
	// 2. the bars agree when some T in [sum, 2 sum] is in every interval.
	lo := frac{}                            // the largest exclusive lower bound
	hi := frac{n: u128{0, 2 * total}, d: 1} // the smallest inclusive upper bound, 2 sum at most
	for i := range rows {
		c, d := absU(rows[i].count), uint64(rows[i].ats)
		if l := (frac{n: mul128(c, width), d: d + 1}); l.greater(lo) {
			lo = l
		}
		if d > 0 {
			if h := (frac{n: mul128(2*c, width), d: 2*d - 1}); hi.greater(h) {
				hi = h
			}
		}
	}
	sum := frac{n: u128{0, total}, d: 1}
	if !hi.greater(lo) || sum.greater(hi) {
		// name the row that departs most from the printed total
		worst, dev := 0, -1.0
		for i := range rows {
			e := float64(absU(rows[i].count)) * float64(width) / float64(total)
			if x := math.Abs(e - float64(rows[i].ats)); x > dev {
				worst, dev = i, x
			}
		}
		row := &rows[worst]
		return r.badDist(row.line, "expected a bar of %s '@' for a count of %d out of %d, found %d", expectedBar(absU(row.count), total, width), row.count, total, row.ats)
	}
	return nil
}

func barSide(c int64) string {
	if c < 0 {
		return "left of the '|'"
	}
	return "right of the '|'"
}

// badDist reports a bad block: the error, and with --skip-bad a
// diagnostic that the block was not stored.
func (r *aggReader) badDist(line int64, format string, args ...any) error {
	r.distBad = true
	r.w.Diagf(schema.Warning, r.distHeader, schema.NoSeq, "distribution at line %d not stored: a row of it is bad", r.distHeader)
	return r.w.BadLine(line, format, args...)
}

func (r *aggReader) label(row *distRow) []byte { return r.labels[row.lab0:row.lab1] }

// Which functions a block's printed values admit.
const (
	admitQuantize = 1 << iota
	admitLquantize
	admitLlquantize
)

// admits says which functions could have printed a block's rows, and the
// step of its values if they show one (lquantize):
//
//   - quantize: no < N or >= N row; the values are consecutive quantize
//     buckets (..., -2, -1, 0, 1, 2, 4, ...);
//   - lquantize: the values step evenly; < N right before bucket N; >= N
//     right after the bucket that ends at N;
//   - llquantize: the values are positive, the step constant within an
//     order of magnitude and growing by whole factors from one to the
//     next, each value a multiple of the step after it; < N right before
//     bucket N.
func admits(rows []distRow) (mask int, step int64) {
	ends := false
	n := 0
	linear, logLin, quant := true, true, true
	var first, prev, prevStep int64
	qprev := 0
	for i := range rows {
		row := &rows[i]
		if row.kind != labelValue {
			ends = true
			continue
		}
		v := row.v
		q, isQ := quantizeIndex(v)
		if !isQ || n > 0 && q != qprev+1 {
			quant = false
		}
		qprev = q
		if n == 0 {
			first = v
		} else {
			s := v - prev
			if n == 1 {
				step = s
			} else if s != step {
				linear = false
			}
			if prevStep != 0 && s != prevStep && (s < prevStep || s%prevStep != 0) || prev%s != 0 {
				logLin = false
			}
			prevStep = s
		}
		prev = v
		n++
	}
	if n > 0 && first < 1 {
		logLin = false
	}
	if rows[0].kind == labelUnder && len(rows) > 1 && rows[1].kind == labelValue && rows[1].v != rows[0].v {
		linear, logLin = false, false
	}
	if k := len(rows); k > 2 && rows[k-1].kind == labelOver && rows[k-2].kind == labelValue && n >= 2 && rows[k-2].v+step != rows[k-1].v {
		linear = false
	}
	if quant && !ends && n > 0 {
		mask |= admitQuantize
	}
	if linear {
		mask |= admitLquantize
	}
	if logLin {
		mask |= admitLlquantize
	}
	if n < 2 {
		step = 0
	}
	return mask, step
}

// flushDists writes the blocks held for the current aggregation:
//
//  1. blocks that fit none of the functions the blocks before them fit
//     begin another aggregation (#N+1, without title): one aggregation
//     has one function, and DTrace's default output separates its
//     aggregations by nothing but blank lines, as it does their keys;
//  2. an aggregation's function is the first of quantize, lquantize,
//     llquantize that all its blocks fit (lquantize: with one step);
//  3. bounds follow from the function: quantize's powers of two, and for
//     lquantize and llquantize each bucket ends where the next row
//     begins; the last bucket ends a step further (lquantize). A row
//     whose end is still unknown is left out when it counts nothing (it
//     is DTrace's padding around the buckets that count), an error
//     otherwise; so is a block that fits no function: its bounds would
//     be guesses.
func (r *aggReader) flushDists() error {
	blocks := r.blocks
	r.blocks = r.blocks[:0]
	defer func() {
		r.rows, r.labels, r.blockText = r.rows[:0], r.labels[:0], r.blockText[:0]
	}()
	const all = admitQuantize | admitLquantize | admitLlquantize
	for start := 0; start < len(blocks); {
		mask, step := all, int64(0)
		end := start
		for ; end < len(blocks); end++ {
			b := &blocks[end]
			m, s := admits(r.rows[b.rows[0]:b.rows[1]])
			if m == 0 {
				continue // an error when written; it splits nothing
			}
			nm := mask & m
			if s != 0 && step != 0 && s != step {
				nm &^= admitLquantize // lquantize's step is one parameter
			}
			if nm == 0 {
				break
			}
			mask = nm
			if s != 0 {
				step = s
			}
		}
		if start > 0 {
			r.aggNo++
			agg := r.w.Sym("#" + strconv.Itoa(r.aggNo))
			for i := start; i < end; i++ {
				blocks[i].agg, blocks[i].title = agg, schema.NoSym
			}
		}
		fn := -1
		switch {
		case mask&admitQuantize != 0:
			fn = funcQuantize
		case mask&admitLquantize != 0:
			fn = funcLquantize
		case mask&admitLlquantize != 0:
			fn = funcLlquantize
		}
		for i := start; i < end; i++ {
			b := &blocks[i]
			rows := r.rows[b.rows[0]:b.rows[1]]
			m, own := admits(rows)
			f, s := fn, own
			if m == 0 {
				f = -1
			} else if f == funcLquantize && s == 0 {
				s = step
			}
			if err := r.writeDist(b, rows, f, s); err != nil {
				return err
			}
		}
		start = end
	}
	return nil
}

// writeDist writes one block's buckets under fn (-1: not known).
func (r *aggReader) writeDist(b *distBlock, rows []distRow, fn int, step int64) error {
	r.distHeader = b.header
	values := 0
	for i := range rows {
		if rows[i].kind == labelValue {
			values++
		}
	}
	if fn < 0 {
		if rows[0].kind == labelUnder && len(rows) > 1 && rows[1].kind == labelValue && rows[1].v != rows[0].v {
			return r.badDist(rows[1].line, "expected bucket %d after the row < %d, found %d", rows[0].v, rows[0].v, rows[1].v)
		}
		var vals []int64
		line := rows[len(rows)-1].line
		for i := range rows {
			if rows[i].kind == labelValue {
				vals, line = append(vals, rows[i].v), rows[i].line
			}
		}
		return r.badDist(line, "expected the values of consecutive quantize, lquantize or llquantize buckets, found %s", joinValues(vals))
	}
	h := schema.Histogram{Agg: b.agg, Title: b.title, Key: r.blockText[b.key[0]:b.key[1]], Keys: r.blockText[b.keys[0]:b.keys[1]], Func: schema.NoSym}
	if fn >= 0 {
		h.Func = r.symFunc[fn]
	}
	r.buckets = r.buckets[:0]
	for i := range rows {
		row := &rows[i]
		k := schema.Bucket{Label: r.labels[row.lab0:row.lab1], Count: row.count, Line: row.line}
		switch {
		case row.kind == labelUnder:
			k.Hi, k.HasHi = row.v, true
		case row.kind == labelOver:
			k.Lo, k.HasLo = row.v, true
		case fn == funcQuantize:
			k.Lo, k.Hi, k.HasLo, k.HasHi = quantizeBounds(row.v)
		case i+1 < len(rows):
			k.Lo, k.Hi, k.HasLo, k.HasHi = row.v, rows[i+1].v, true, true
		case fn == funcLquantize && step > 0:
			k.Lo, k.HasLo = row.v, true
			k.Hi, k.HasHi = addInt(row.v, step)
		case row.count == 0:
			continue // padding whose width the text does not give: it holds nothing
		default:
			return r.badDist(row.line, "expected a row after bucket %s to bound it (the printed values do not give its width), found the end of the distribution", r.labels[row.lab0:row.lab1])
		}
		r.buckets = append(r.buckets, k)
	}
	r.stored++
	return r.w.Histogram(&h, r.buckets)
}

// quantizeBounds is the bucket DTrace's quantize labels v: 0 holds 0;
// 2^k holds [2^k, 2^(k+1)); -2^k holds [-(2^(k+1))+1, -2^k] (a negative
// value goes to the bucket of the power of two at or above it). The
// buckets at the ends of the 64-bit range have no bound on their open side.
func quantizeBounds(v int64) (lo, hi int64, hasLo, hasHi bool) {
	switch {
	case v == 0:
		return 0, 1, true, true
	case v > 0:
		if v >= 1<<62 {
			return v, 0, true, false
		}
		return v, 2 * v, true, true
	default:
		if v <= -1<<62 {
			return 0, v + 1, false, true
		}
		return 2*v + 1, v + 1, true, true
	}
}

// quantizeIndex numbers quantize's buckets in order: -2^62 .. -1, 0, 1 .. 2^62.
func quantizeIndex(v int64) (int, bool) {
	switch {
	case v == 0:
		return 63, true
	case v > 0 && v&(v-1) == 0:
		return 64 + bits.TrailingZeros64(uint64(v)), true
	case v < 0 && v != math.MinInt64 && (-v)&(-v-1) == 0:
		return 62 - bits.TrailingZeros64(uint64(-v)), true
	}
	return 0, false
}

func joinValues(vals []int64) string {
	var b []byte
	for i, v := range vals {
		if i == 8 {
			b = append(b, ", ..."...)
			break
		}
		if i > 0 {
			b = append(b, ", "...)
		}
		b = strconv.AppendInt(b, v, 10)
	}
	return string(b)
}

// expectedBar says how many '@' a count draws, for messages: the
// rounded and the truncated proportion when they differ.
func expectedBar(count, total, width uint64) string {
	if total == 0 {
		return "0"
	}
	hi, lo := bits.Mul64(count, width)
	q, rem := bits.Div64(hi%total, lo, total)
	if rem == 0 || 2*rem < total {
		return strconv.FormatUint(q, 10)
	}
	return strconv.FormatUint(q, 10) + " or " + strconv.FormatUint(q+1, 10)
}

// u128 and frac compare the bounds of the bar check exactly: counts reach
// 2^63, times the bar's width.
type u128 struct{ hi, lo uint64 }

func mul128(a, b uint64) u128 {
	hi, lo := bits.Mul64(a, b)
	return u128{hi, lo}
}

// frac is n/d with d small (a bar length plus one, times two).
type frac struct {
	n u128
	d uint64
}

// greater reports whether f > g: f.n*g.d > g.n*f.d, in 192 bits.
func (f frac) greater(g frac) bool {
	if f.d == 0 {
		return false
	}
	if g.d == 0 {
		return true // the zero value is the smallest bound
	}
	a2, a1, a0 := mul192(f.n, g.d)
	b2, b1, b0 := mul192(g.n, f.d)
	if a2 != b2 {
		return a2 > b2
	}
	if a1 != b1 {
		return a1 > b1
	}
	return a0 > b0
}

func mul192(x u128, m uint64) (w2, w1, w0 uint64) {
	h0, l0 := bits.Mul64(x.lo, m)
	h1, l1 := bits.Mul64(x.hi, m)
	var c uint64
	w0 = l0
	w1, c = bits.Add64(l1, h0, 0)
	w2 = h1 + c
	return
}
