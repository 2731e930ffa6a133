package tlv

import (
	"fmt"
	"math/bits"
	"slices"
	"strings"
)

// Rules of a set usually begin alike: every TOPPERS rule reads the line's
// time first ("^\[(?<time>[0-9A-Fa-f]+)\] ", FMP's processor too), then
// its message. When the deterministic beginning of their machines
// (vmProg.prefixEnd) is the same, it takes the same bytes of a line for
// all of them, and whether each matches is a function of the rest of the
// line (fastRE's memo, per rule). lineMemo runs that beginning once per
// line and keeps, by the rest, which of those rules match it and how:
// a line whose rest was seen ("enter to wai_sem semid=1.") costs one
// beginning and one lookup, instead of the literal scan and, for every
// rule whose literal the line holds, a beginning and a lookup of its own.
type lineMemo struct {
	prog  *vmProg  // the beginning: the first rule's machine, up to det
	det   int      // where the beginning ends
	rules []*crule // the rules that share it, in rule order
	set   []uint64 // the same, a set of rule numbers
	memo  map[string]*lmEntry
	st    vmState
	// The literal scan is needed for the other rules when one of them has
	// a literal; the other rules without one are candidates on every line.
	scan  bool
	other []uint64
}

// lmEntry is how the rules of a lineMemo match one rest: the rules to
// apply (a set of rule numbers: those that match, and those whose machine
// gave up, tried as before), and the matches, in rule order.
type lmEntry struct {
	cand []uint64
	hits []lmHit
}

type lmHit struct {
	rule int
	m    *vmMemo
}

// maxLineMemo bounds the rests a lineMemo keeps (then it forgets them all).
const maxLineMemo = 4096

// newLineMemo finds the largest group of rules (at least two) whose
// machines begin with the same deterministic instructions, at least two
// of them, and the longest such beginning; nil when there is none.
func newLineMemo(rules []*crule, words int) *lineMemo {
	type vr struct {
		r    *crule
		keys []string // its deterministic instructions
	}
	var all []vr
	for _, r := range rules {
		if f := r.fast; f != nil && f.vm != nil && f.det > 0 {
			keys := make([]string, f.det)
			for i := range keys {
				keys[i] = instKey(&f.vm.insts[i])
			}
			all = append(all, vr{r, keys})
		}
	}
	// The group: the most rules that share their first two instructions,
	// then the longest beginning they all share.
	count := map[string]int{}
	best := ""
	for _, v := range all {
		if len(v.keys) < 2 {
			continue
		}
		k := v.keys[0] + "\x00" + v.keys[1]
		if count[k]++; count[k] > count[best] || count[k] == count[best] && k < best {
			best = k
		}
	}
	if count[best] < 2 {
		return nil
	}
	var group []vr
	for _, v := range all {
		if len(v.keys) >= 2 && v.keys[0]+"\x00"+v.keys[1] == best {
			group = append(group, v)
		}
	}
	det := len(group[0].keys)
	for _, v := range group[1:] {
		n := 0
		for n < det && n < len(v.keys) && v.keys[n] == group[0].keys[n] {
			n++
		}
		det = n
	}
	lm := &lineMemo{set: make([]uint64, words), other: make([]uint64, words), memo: map[string]*lmEntry{}}
	lm.prog, lm.det = group[0].r.fast.vm, det
	for _, v := range group {
		if slices.ContainsFunc(v.r.fast.vm.insts[det:], func(in vmInst) bool { return in.op == vmBegin }) {
			continue // a "^" after the beginning reads where the rest begins
		}
		lm.rules = append(lm.rules, v.r)
		lm.set[v.r.index/64] |= 1 << (v.r.index % 64)
	}
	if len(lm.rules) < 2 {
		return nil
	}
	for _, r := range rules {
		if lm.set[r.index/64]&(1<<(r.index%64)) != 0 {
			continue
		}
		if r.litID >= 0 {
			lm.scan = true
		} else {
			lm.other[r.index/64] |= 1 << (r.index % 64)
		}
	}
	return lm
}

// instKey is a deterministic instruction of a machine, as text.
func instKey(in *vmInst) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d %t %t %d %d %d %q ", in.op, in.greedy, in.possessive, in.min, in.max, in.n, in.lit)
	if in.cls != nil {
		for c := range 256 {
			if in.cls[c] {
				b.WriteByte('1')
			} else {
				b.WriteByte('0')
			}
		}
	}
	return b.String()
}

// entry runs the beginning on an ASCII line without "\n" and returns how
// the rules match the rest; pos is where the rest begins, lm.st.caps the
// captures the beginning set. ok is false when the line is to be read as
// before (the beginning failed: then no rule of lm matches; or the rest
// is too long to keep).
func (lm *lineMemo) entry(line string) (e *lmEntry, pos int, ok bool) {
	pos, ok = lm.prog.prefix(&lm.st, line, lm.det)
	if !ok {
		return nil, 0, true
	}
	rest := line[pos:]
	if len(rest) > maxMemoRest {
		return nil, 0, false
	}
	if e := lm.memo[rest]; e != nil {
		return e, pos, true
	}
	e = &lmEntry{cand: make([]uint64, len(lm.set))}
	for _, r := range lm.rules {
		m, ok := r.fast.restMatch(rest, lm.det, len(line))
		if ok && !m.matched {
			continue
		}
		e.cand[r.index/64] |= 1 << (r.index % 64)
		if ok {
			e.hits = append(e.hits, lmHit{rule: r.index, m: m})
		}
	}
	if len(lm.memo) >= maxLineMemo {
		clear(lm.memo)
	}
	lm.memo[strings.Clone(rest)] = e
	return e, pos, true
}

// restMatch is how the rest of a line matches, after the machine's first
// det instructions (deterministic: vmProg.prefixEnd) took its beginning;
// ok false when the machine gave up (the line is then matched by Go's
// regexp).
func (f *fastRE) restMatch(rest string, det, lineLen int) (*vmMemo, bool) {
	var st vmState
	matched, _, ok := f.vm.exec(&st, rest, det, memoUnset, 0, vmBudget(lineLen))
	if !ok {
		return nil, false
	}
	m := &vmMemo{matched: matched}
	if matched {
		m.caps = make([]int32, len(st.caps))
		for i, c := range st.caps {
			m.caps[i] = int32(c)
		}
	}
	return m, true
}

// memoCaps returns the captures of a match of the whole line: those the
// beginning set (pre, -1 for the others), then the rest's, from pos.
func (f *fastRE) memoCaps(pre []int, pos int, m *vmMemo) []int {
	caps := f.st.caps[:0]
	caps = append(caps, pre...)
	for len(caps) < f.vm.ncap {
		caps = append(caps, -1)
	}
	caps = caps[:f.vm.ncap]
	for i, c := range m.caps {
		if c != memoUnset {
			caps[i] = pos + int(c)
		}
	}
	caps[0], caps[1] = 0, pos+int(m.caps[1])
	f.st.caps = caps
	return caps
}

// candidates sets cand to the rules to try on the line: with e, those of
// lm it names and the others (literal scan or not); without, as before.
func (c *Converter) lineCands(e *lmEntry, line string) {
	lm := c.lm
	cand := append(c.cand[:0], lm.other...)
	if lm.scan {
		c.lits.scan(line, c.found)
		for w, x := range c.found {
			for x != 0 {
				l := w*64 + bits.TrailingZeros64(x)
				x &= x - 1
				for i, y := range c.litRules[l] {
					cand[i] |= y &^ lm.set[i]
				}
			}
		}
	}
	if e != nil {
		for i, y := range e.cand {
			cand[i] |= y
		}
	}
	c.cand = cand
}
