package dtrace

import (
	"bytes"
	"fmt"
	"hash/maphash"
	"math"
	"math/bits"
	"strconv"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/schema"
)

// ---- bpftrace ----

// bpfLine reads a line that begins with '@': a map entry "@name[key]: value",
// the head of a histogram "@name[key]:", or the start of a key of several
// lines "@name[". handled is false for any other line.
func (r *aggReader) bpfLine(no int64, line []byte) (handled bool, err error) {
	name, key, rest, form := splitMapLine(line)
	if form == mapNone {
		return false, nil
	}
	if err := r.flushPara(); err != nil {
		return true, err
	}
	r.lastProse = r.lastProse[:0]
	r.quiet = false
	if err := r.endGroup(); err != nil {
		return true, err
	}
	r.bpfName = append(r.bpfName[:0], name...)
	switch form {
	case mapKeyOpen:
		r.bpfKeyOpen, r.bpfKeyLine, r.bpfKeyLines = true, no, 0
		r.bpfKeyText = append(r.bpfKeyText[:0], key...)
		return true, nil
	case mapHead:
		r.bpfKeyText = append(r.bpfKeyText[:0], key...)
		r.startBpf(no)
		return true, nil
	}
	return true, r.bpfValue(no, key, rest)
}

type mapForm uint8

const (
	mapNone    mapForm = iota
	mapValue           // @name[key]: value
	mapHead            // @name[key]:
	mapKeyOpen         // @name[ (the key goes on)
)

// splitMapLine splits "@name", "[key]" and what follows ": ".
func splitMapLine(line []byte) (name, key, rest []byte, form mapForm) {
	i := 1
	for i < len(line) && (line[i] == '_' || line[i] >= 'a' && line[i] <= 'z' || line[i] >= 'A' && line[i] <= 'Z' || line[i] >= '0' && line[i] <= '9') {
		i++
	}
	name = line[:i]
	switch {
	case i < len(line) && line[i] == '[':
		e := bytes.LastIndex(line, []byte("]:"))
		if e < i {
			return name, line[i+1:], nil, mapKeyOpen
		}
		key, i = line[i+1:e], e+1
	case i < len(line) && line[i] == ':':
	default:
		return nil, nil, nil, mapNone
	}
	rest = line[i+1:]
	if blankLine(rest) {
		return name, key, nil, mapHead
	}
	if rest[0] != ' ' {
		return nil, nil, nil, mapNone
	}
	return name, key, trimBlanks(rest), mapValue
}

// bpfKeyLineRead reads the lines of a key opened by "@name[": the key's
// lines, then "]: value" or "]:" (a histogram follows).
func (r *aggReader) bpfKeyLineRead(no int64, line []byte) error {
	if bytes.HasPrefix(line, []byte("]:")) {
		r.bpfKeyOpen = false
		rest := line[2:]
		if blankLine(rest) {
			r.startBpf(r.bpfKeyLine)
			return nil
		}
		if rest[0] != ' ' {
			return r.w.BadLine(no, "expected ']: VALUE' to end the key opened at line %d, found %q", r.bpfKeyLine, line)
		}
		return r.bpfValue(no, r.bpfKeyText, trimBlanks(rest))
	}
	r.bpfKeyLines++
	if blankLine(line) || len(r.bpfKeyText) > maxParaBytes || r.bpfKeyLines > maxKeyLines {
		r.bpfKeyOpen = false
		what := "a blank line"
		if !blankLine(line) {
			what = fmt.Sprintf("more than %d lines", maxKeyLines)
		}
		return r.w.BadLine(no, "expected the key opened at line %d to end with a line ']: VALUE', found %s", r.bpfKeyLine, what)
	}
	r.bpfKeyText = append(r.bpfKeyText, '\n')
	r.bpfKeyText = append(r.bpfKeyText, line...)
	return nil
}

// bpfKey sets r.key and r.keys from a bpftrace key: its lines trimmed,
// joined by newlines; fields split at ", " and at line ends.
func (r *aggReader) bpfKey(text []byte) {
	r.key = r.key[:0]
	r.keys = append(r.keys[:0], '[')
	nf := 0
	for len(text) > 0 {
		ln := text
		if i := bytes.IndexByte(text, '\n'); i >= 0 {
			ln, text = text[:i], text[i+1:]
		} else {
			text = nil
		}
		ln = trimBlanks(ln)
		if len(ln) == 0 {
			continue
		}
		if len(r.key) > 0 {
			r.key = append(r.key, '\n')
		}
		r.key = append(r.key, ln...)
		for len(ln) > 0 {
			f := ln
			if i := bytes.Index(ln, []byte(", ")); i >= 0 {
				f, ln = ln[:i], ln[i+2:]
			} else if bytes.HasSuffix(ln, []byte(",")) {
				f, ln = ln[:len(ln)-1], nil
			} else {
				ln = nil
			}
			f = trimBlanks(f)
			if len(f) == 0 {
				continue
			}
			if nf > 0 {
				r.keys = append(r.keys, ',')
			}
			r.keys = ingest.AppendJSONString(r.keys, f)
			nf++
		}
	}
	r.keys = append(r.keys, ']')
	if r.key == nil {
		r.key = []byte{}
	}
}

// bpfPrintout returns the aggregation a map entry belongs to: @name, or
// @name#k when the map is printed again (another map came between, or a
// key repeats).
func (r *aggReader) bpfPrintout() schema.Sym {
	m := r.maps[string(r.bpfName)]
	if m == nil {
		m = &bpfMap{keys: map[uint64]struct{}{}}
		r.maps[string(r.bpfName)] = m
	}
	h := maphash.Bytes(r.seed, r.key)
	_, repeat := m.keys[h]
	if m.printouts == 0 || repeat || r.curMap != string(r.bpfName) {
		m.printouts++
		name := string(r.bpfName)
		if m.printouts > 1 {
			name += "#" + strconv.Itoa(m.printouts)
		}
		m.agg = r.w.Sym(name)
		clear(m.keys)
		r.curMap = string(r.bpfName)
	}
	if len(m.keys) >= maxGroupKeys {
		clear(m.keys)
	}
	m.keys[h] = struct{}{}
	return m.agg
}

// bpfValue writes "@name[key]: value"; a value that is not an integer
// (a string, stats()) is no aggregation row.
func (r *aggReader) bpfValue(no int64, key, value []byte) error {
	v, ok := parseDecimal(value)
	if !ok {
		return nil
	}
	r.bpfKey(key)
	row := schema.Aggregation{Agg: r.bpfPrintout(), Title: schema.NoSym, Key: r.key, Keys: r.keys, Value: v, Line: no}
	r.stored++
	return r.w.Aggregation(&row)
}

func (r *aggReader) startBpf(no int64) {
	r.bpfHist, r.bpfBad, r.bpfHeader = true, false, no
	r.marks++
	r.bpfRows, r.labels = r.bpfRows[:0], r.labels[:0]
}

// bpfRowLine reads a line while a bpftrace histogram is open.
func (r *aggReader) bpfRowLine(no int64, line []byte) (ended bool, err error) {
	var row bpfRow
	label, looks, problem := parseBpfRow(line, &row)
	if !looks {
		return true, r.finishBpf()
	}
	if problem != "" {
		r.bpfBad = true
		return false, r.w.BadLine(no, "%s", problem)
	}
	if len(r.bpfRows) == maxDistRows {
		r.bpfBad = true
		return false, r.w.BadLine(no, "expected at most %d rows in a histogram, found more", maxDistRows)
	}
	if r.bpfBad {
		return false, nil
	}
	row.line = no
	row.lab0 = len(r.labels)
	r.labels = append(r.labels, label...)
	row.lab1 = len(r.labels)
	r.bpfRows = append(r.bpfRows, row)
	return false, nil
}

// parseBpfRow reads "LABEL  COUNT |BAR|" as bpftrace prints hist and
// lhist rows; LABEL is [N], [N, M), (..., N) or [N, ...), numbers with
// an optional K, M, G, T, P or E suffix (powers of 1024).
func parseBpfRow(line []byte, row *bpfRow) (label []byte, looks bool, problem string) {
	if len(line) == 0 || line[0] != '[' && line[0] != '(' || bytes.IndexByte(line, '|') < 0 {
		return nil, false, ""
	}
	e := bytes.IndexAny(line, ")]")
	if e < 0 {
		return line, true, fmt.Sprintf("expected a bucket [N], [N, M), (..., N) or [N, ...), found %q", line)
	}
	label = line[:e+1]
	in := line[1:e]
	bad := func() ([]byte, bool, string) {
		return label, true, fmt.Sprintf("expected a bucket [N], [N, M), (..., N) or [N, ...), found %q", label)
	}
	a, b, two := in, []byte(nil), false
	if i := bytes.Index(in, []byte(", ")); i >= 0 {
		a, b, two = in[:i], in[i+2:], true
	}
	switch {
	case line[0] == '(' && line[e] == ')' && two && string(a) == "...":
		v, ok := parseBpfNumber(b)
		if !ok {
			return bad()
		}
		row.hi, row.hasHi = v, true
	case line[0] == '[' && line[e] == ')' && two && string(b) == "...":
		v, ok := parseBpfNumber(a)
		if !ok {
			return bad()
		}
		row.lo, row.hasLo = v, true
	case line[0] == '[' && line[e] == ')' && two:
		lo, ok1 := parseBpfNumber(a)
		hi, ok2 := parseBpfNumber(b)
		if !ok1 || !ok2 || hi <= lo {
			return bad()
		}
		row.lo, row.hi, row.hasLo, row.hasHi = lo, hi, true, true
	case line[0] == '[' && line[e] == ']' && !two:
		v, ok := parseBpfNumber(a)
		if !ok || v == math.MaxInt64 {
			return bad()
		}
		row.lo, row.hi, row.hasLo, row.hasHi, row.single = v, v+1, true, true, true
	default:
		return bad()
	}
	rest := trimBlanks(line[e+1:])
	c := 0
	for c < len(rest) && rest[c] >= '0' && rest[c] <= '9' {
		c++
	}
	if c == 0 || c == len(rest) || rest[c] != ' ' {
		return label, true, fmt.Sprintf("expected a count (an integer) after bucket %s, found %q", label, rest)
	}
	count, ok := parseDecimal(rest[:c])
	if !ok {
		return label, true, fmt.Sprintf("expected a count that fits in 64 bits after bucket %s, found %q", label, rest[:c])
	}
	bar := trimBlanks(rest[c:])
	if len(bar) < 2 || bar[0] != '|' || bar[len(bar)-1] != '|' {
		return label, true, fmt.Sprintf("expected a bar |@@@ | after the count, found %q", bar)
	}
	bar = bar[1 : len(bar)-1]
	ats := 0
	for ats < len(bar) && bar[ats] == '@' {
		ats++
	}
	if !allByte(bar[ats:], ' ') {
		return label, true, fmt.Sprintf("expected a bar of '@' then blanks between the '|', found %q", bar)
	}
	row.count, row.ats, row.width = count, ats, len(bar)
	return label, true, ""
}

// parseBpfNumber reads a bucket bound: an integer, maybe negative, with an
// optional suffix K, M, G, T, P or E (powers of 1024).
func parseBpfNumber(b []byte) (int64, bool) {
	shift := 0
	if n := len(b); n > 0 {
		if i := bytes.IndexByte([]byte("KMGTPE"), b[n-1]); i >= 0 {
			shift, b = 10*(i+1), b[:n-1]
		}
	}
	v, ok := parseDecimal(b)
	if !ok {
		return 0, false
	}
	if shift > 0 {
		if v > math.MaxInt64>>shift || v < math.MinInt64>>shift {
			return 0, false
		}
		v <<= shift
	}
	return v, true
}

// finishBpf checks and writes a bpftrace histogram. bpftrace draws
// count/max * width '@' (truncated, in float), max the largest count.
func (r *aggReader) finishBpf() error {
	r.bpfHist = false
	rows := r.bpfRows
	if r.bpfBad {
		r.w.Diagf(schema.Warning, r.bpfHeader, schema.NoSeq, "histogram at line %d not stored: a row of it is bad", r.bpfHeader)
		return nil
	}
	if len(rows) == 0 {
		return nil // printed with no row: an empty map, or no histogram
	}
	var maxCount uint64
	for i := range rows {
		row := &rows[i]
		if row.width != rows[0].width {
			return r.w.BadLine(row.line, "expected every bar %d characters wide, found %d", rows[0].width, row.width)
		}
		if row.ats > row.width {
			return r.w.BadLine(row.line, "expected a bar of at most %d '@', found %d", row.width, row.ats)
		}
		if i > 0 {
			p := &rows[i-1]
			if !p.hasHi || !row.hasLo || row.lo < p.hi {
				return r.w.BadLine(row.line, "expected buckets in increasing order, found %s after %s", r.labels[row.lab0:row.lab1], r.labels[p.lab0:p.lab1])
			}
		}
		maxCount = max(maxCount, uint64(row.count))
	}
	for i := range rows {
		row := &rows[i]
		if !barMatches(uint64(row.ats), uint64(row.count), maxCount, uint64(row.width)) {
			return r.w.BadLine(row.line, "expected a bar of %s '@' for a count of %d (largest %d), found %d", expectedBar(uint64(row.count), maxCount, uint64(row.width)), row.count, maxCount, row.ats)
		}
	}
	r.bpfKey(r.bpfKeyText)
	h := schema.Histogram{Agg: r.bpfPrintout(), Title: schema.NoSym, Key: r.key, Keys: r.keys, Func: schema.NoSym}
	if fn := bpfFunc(rows); fn >= 0 {
		h.Func = r.symFunc[fn]
	}
	r.buckets = r.buckets[:0]
	for i := range rows {
		row := &rows[i]
		r.buckets = append(r.buckets, schema.Bucket{Label: r.labels[row.lab0:row.lab1], Lo: row.lo, Hi: row.hi, HasLo: row.hasLo, HasHi: row.hasHi, Count: row.count, Line: row.line})
	}
	r.stored++
	return r.w.Histogram(&h, r.buckets)
}

// bpfFunc tells hist from lhist by the buckets: hist has the buckets [0]
// and [1], (..., 0) and buckets that double; lhist has open ends other
// than (..., 0) and buckets of one width. -1 when the rows do not tell.
func bpfFunc(rows []bpfRow) int {
	hist, lhist := false, false
	var width int64
	widths := 0
	for i := range rows {
		row := &rows[i]
		switch {
		case row.single:
			hist = true
		case !row.hasLo && row.hi == 0:
			hist = true
		case !row.hasLo || !row.hasHi:
			lhist = true
		default:
			w := row.hi - row.lo
			if widths > 0 && w != width {
				hist = true // log2 buckets widen
			}
			if row.lo <= 0 || row.hi != 2*row.lo || row.lo&(row.lo-1) != 0 {
				lhist = true // a bucket of hist's (k = 0) doubles
			}
			width = w
			widths++
		}
	}
	switch {
	case hist && !lhist:
		return funcHist
	case lhist && !hist:
		return funcLhist
	}
	return -1
}

// barMatches reports whether a bar of ats '@' draws count out of total on
// a bar of width characters: |ats - width*count/total| < 1.
func barMatches(ats, count, total, width uint64) bool {
	if total == 0 {
		return ats == 0
	}
	xh, xl := bits.Mul64(count, width) // what the bar stands for, times total
	yh, yl := bits.Mul64(ats, total)   // what it shows, times total
	if xh < yh || xh == yh && xl < yl {
		xh, xl, yh, yl = yh, yl, xh, xl
	}
	dl, borrow := bits.Sub64(xl, yl, 0)
	dh, _ := bits.Sub64(xh, yh, borrow)
	return dh == 0 && dl < total
}
