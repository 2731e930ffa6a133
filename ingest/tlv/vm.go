package tlv

import (
	"regexp/syntax"
	"strings"
)

// A rule's pattern in Go's syntax (fastre.go) is matched, first, by a
// small backtracking machine over bytes: Go's regexp spends about 2 µs a
// line on TOPPERS's rules (a pool, a visited bitmap to clear, a job per
// character), this a few tens of ns. It is an exact backtracking engine,
// as .NET's is: alternatives, greedy and lazy repetitions are tried in the
// order .NET tries them, captures are those of the path that matched,
// a look-ahead is tried where the path reaches it (atomic, as in .NET).
// So its answer is regexp2's (and Go's, where Go's is .NET's) on the lines
// the fast path reads (ASCII without "\n", fastre.go). A run of one class
// ([0-9A-Fa-f]+, \s*, .+) is one instruction that counts the bytes it
// takes and gives them back one at a time when what follows fails.
//
// Backtracking can take exponential time: the machine counts its steps
// and gives up past vmBudget(len(line)); the line is then matched by Go's
// regexp, which is linear, and gives the same answer. So the cost stays
// linear in the line.
type vmProg struct {
	insts  []vmInst
	ncap   int       // capture slots (2 per Go group, group 0 included)
	looks  []*vmProg // look-ahead bodies, by the marker's number
	negate []bool    // per look-ahead: (?!...)
}

type vmOp uint8

const (
	vmLit   vmOp = iota // the bytes lit
	vmRun               // between min and max (-1: any number) bytes of cls, greedy or lazy
	vmSplit             // try x, then y
	vmJmp               // go to x
	vmSave              // caps[n] = pos
	vmBegin             // pos == 0
	vmEnd               // pos == len
	vmLook              // looks[n] matches at pos (negate: does not)
	vmMatch
)

type vmInst struct { // 64 bytes
	op         vmOp
	greedy     bool
	negate     bool
	possessive bool // a greedy run that never gives a byte back (possessive())
	min, max   int32
	x, y       int32
	n          int32
	fx, fy     *firstSet // a split's branches (fx: a look-ahead's body): what they can begin with
	lit        string
	cls        *byteClass
}

// byteClass is a set of bytes (a table: one load a byte).
type byteClass [256]bool

func (c *byteClass) has(b byte) bool { return c[b] }
func (c *byteClass) add(b byte)      { c[b] = true }

func (c *byteClass) union(d *byteClass) {
	for i, in := range d {
		c[i] = c[i] || in
	}
}

func (c *byteClass) disjoint(d *byteClass) bool {
	for i, in := range d {
		if in && c[i] {
			return false
		}
	}
	return true
}

// compileVM compiles a parsed Go pattern; nil when it uses what the
// machine does not do (the line is then matched by Go's regexp). looks
// are the look-ahead bodies by marker number (their Go form, anchored),
// negate says which are negative.
func compileVM(re *syntax.Regexp, ncap int, looks []*syntax.Regexp, negate []bool) *vmProg {
	p := &vmProg{ncap: 2 * (ncap + 1), negate: negate}
	for _, l := range looks {
		sub := &vmProg{}
		if !sub.compile(l) {
			return nil
		}
		sub.insts = append(sub.insts, vmInst{op: vmMatch})
		sub.possessive()
		sub.firsts()
		p.looks = append(p.looks, sub)
	}
	if !p.compile(re) {
		return nil
	}
	p.insts = append(p.insts, vmInst{op: vmMatch})
	p.possessive()
	p.firsts()
	return p
}

func (p *vmProg) emit(in vmInst) int {
	p.insts = append(p.insts, in)
	return len(p.insts) - 1
}

// single returns the class of a pattern that matches exactly one byte of
// an ASCII line, nil for any other.
func single(re *syntax.Regexp) *byteClass {
	var c byteClass
	switch re.Op {
	case syntax.OpLiteral:
		if len(re.Rune) != 1 || re.Rune[0] >= 0x80 || re.Flags&syntax.FoldCase != 0 {
			return nil
		}
		c.add(byte(re.Rune[0]))
	case syntax.OpCharClass:
		for i := 0; i+1 < len(re.Rune); i += 2 {
			lo, hi := re.Rune[i], min(re.Rune[i+1], 0x7f)
			for r := lo; r <= hi; r++ {
				c.add(byte(r))
			}
		}
	case syntax.OpAnyCharNotNL:
		for b := 0; b < 0x80; b++ {
			if b != '\n' {
				c.add(byte(b))
			}
		}
	case syntax.OpAnyChar:
		for b := 0; b < 0x80; b++ {
			c.add(byte(b))
		}
	default:
		return nil
	}
	return &c
}

func (p *vmProg) compile(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpEmptyMatch:
		return true
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			return false
		}
		var b strings.Builder
		for _, r := range re.Rune {
			if r >= 0x80 {
				return false
			}
			b.WriteByte(byte(r))
		}
		p.emit(vmInst{op: vmLit, lit: b.String()})
		return true
	case syntax.OpCharClass, syntax.OpAnyCharNotNL, syntax.OpAnyChar:
		p.emit(vmInst{op: vmRun, cls: single(re), min: 1, max: 1, greedy: true})
		return true
	case syntax.OpBeginText:
		p.emit(vmInst{op: vmBegin})
		return true
	case syntax.OpEndText:
		p.emit(vmInst{op: vmEnd})
		return true
	case syntax.OpCapture:
		if strings.HasPrefix(re.Name, lookPrefix) {
			// A look-ahead's marker: the look-ahead itself, here.
			k := 0
			for _, ch := range re.Name[len(lookPrefix):] {
				k = 10*k + int(ch-'0')
			}
			if k >= len(p.looks) {
				return false
			}
			p.emit(vmInst{op: vmLook, n: int32(k), negate: p.negate[k]})
			return true
		}
		p.emit(vmInst{op: vmSave, n: int32(2 * re.Cap)})
		if !p.compile(re.Sub[0]) {
			return false
		}
		p.emit(vmInst{op: vmSave, n: int32(2*re.Cap + 1)})
		return true
	case syntax.OpConcat:
		for _, s := range re.Sub {
			if !p.compile(s) {
				return false
			}
		}
		return true
	case syntax.OpAlternate:
		var jumps []int
		for i, s := range re.Sub {
			split := -1
			if i < len(re.Sub)-1 {
				split = p.emit(vmInst{op: vmSplit})
				p.insts[split].x = int32(split + 1)
			}
			if !p.compile(s) {
				return false
			}
			if split >= 0 {
				jumps = append(jumps, p.emit(vmInst{op: vmJmp}))
				p.insts[split].y = int32(len(p.insts))
			}
		}
		for _, j := range jumps {
			p.insts[j].x = int32(len(p.insts))
		}
		return true
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		lo, hi := 0, -1
		switch re.Op {
		case syntax.OpPlus:
			lo = 1
		case syntax.OpQuest:
			hi = 1
		case syntax.OpRepeat:
			lo, hi = re.Min, re.Max
		}
		greedy := re.Flags&syntax.NonGreedy == 0
		if c := single(re.Sub[0]); c != nil {
			p.emit(vmInst{op: vmRun, cls: c, min: int32(lo), max: int32(hi), greedy: greedy})
			return true
		}
		var split int
		switch re.Op {
		case syntax.OpRepeat:
			return false // rare: Go's regexp
		case syntax.OpPlus:
			if !p.compile(re.Sub[0]) {
				return false
			}
			fallthrough
		case syntax.OpStar:
			split = p.emit(vmInst{op: vmSplit})
			if !p.compile(re.Sub[0]) {
				return false
			}
			p.emit(vmInst{op: vmJmp, x: int32(split)})
		case syntax.OpQuest:
			split = p.emit(vmInst{op: vmSplit})
			if !p.compile(re.Sub[0]) {
				return false
			}
		}
		p.insts[split].x, p.insts[split].y = int32(split+1), int32(len(p.insts))
		if !greedy {
			p.insts[split].x, p.insts[split].y = p.insts[split].y, p.insts[split].x
		}
		return true
	}
	return false
}

// firstSet is what a branch can begin with: the bytes it can take first,
// whether it can succeed at the end of the line without taking one, and
// whether it can succeed anywhere without taking one (then it is always
// tried).
type firstSet struct {
	cls      byteClass
	eol, any bool
}

// can reports whether the branch may match s from pos.
func (f *firstSet) can(s string, pos int) bool {
	if f.any {
		return true
	}
	if pos >= len(s) {
		return f.eol
	}
	return f.cls.has(s[pos])
}

// first computes what the program from pc can begin with; seen marks
// the instructions on the path (a loop back: always tried).
func (p *vmProg) first(pc int, seen []bool) firstSet {
	if seen[pc] {
		return firstSet{any: true}
	}
	seen[pc] = true
	defer func() { seen[pc] = false }()
	var f firstSet
	switch in := &p.insts[pc]; in.op {
	case vmLit:
		f.cls.add(in.lit[0])
	case vmRun:
		f.cls = *in.cls
		if in.min == 0 {
			next := p.first(pc+1, seen)
			f.union(next)
		}
	case vmSave, vmBegin:
		return p.first(pc+1, seen)
	case vmJmp:
		return p.first(int(in.x), seen)
	case vmSplit:
		f = p.first(int(in.x), seen)
		f.union(p.first(int(in.y), seen))
	case vmEnd:
		f.eol = true
	default: // vmLook, vmMatch
		f.any = true
	}
	return f
}

func (f *firstSet) union(g firstSet) {
	f.cls.union(&g.cls)
	f.eol = f.eol || g.eol
	f.any = f.any || g.any
}

// firsts sets the splits' firstSets, and the look-aheads' (of their
// bodies).
func (p *vmProg) firsts() {
	seen := make([]bool, len(p.insts))
	for i := range p.insts {
		switch in := &p.insts[i]; in.op {
		case vmSplit:
			fx, fy := p.first(int(in.x), seen), p.first(int(in.y), seen)
			in.fx, in.fy = &fx, &fy
		case vmLook:
			body := p.looks[in.n]
			fx := body.first(0, make([]bool, len(body.insts)))
			in.fx = &fx
		}
	}
}

// vmBudget is the number of steps the machine may take on a line of n
// bytes before it leaves the line to Go's regexp.
func vmBudget(n int) int { return 256 + 16*n }

// vmFrame is a point to come back to: kind says what it restores.
type vmFrame struct {
	kind uint8
	pc   int32
	pos  int32
	aux  int32
}

const (
	fSplit   uint8 = iota // go on at pc, pos
	fSave                 // caps[pc] = aux
	fRun                  // the greedy run at pc from pos, which took aux bytes: give one back
	fRunLazy              // the lazy run at pc from pos, which took aux bytes: take one more
)

// vmState is what a match needs besides the program (reused).
type vmState struct {
	stack []vmFrame
	caps  []int
	look  *vmState // for the look-aheads
}

// run matches s from its start; st.caps gets the capture offsets (-1:
// none). ok is false when the budget ran out (nothing is known then).
func (p *vmProg) run(st *vmState, s string, budget int) (matched, ok bool) {
	matched, _, ok = p.exec(st, s, 0, -1, 0, budget)
	return matched, ok
}

// exec is run from instruction pc, the captures set to fill, counting
// steps from steps (a look-ahead's are its pattern's); it returns them.
func (p *vmProg) exec(st *vmState, s string, pc, fill, steps, budget int) (matched bool, _ int, ok bool) {
	if cap(st.caps) < p.ncap {
		st.caps = make([]int, p.ncap)
	}
	caps := st.caps[:p.ncap]
	for i := range caps {
		caps[i] = fill
	}
	st.caps = caps
	stack := st.stack[:0]
	// choices counts the frames to come back to (not the captures to
	// restore): with none, a capture needs no restoring, since a failure
	// then is the end.
	choices := 0
	insts := p.insts
	pos := 0
	for {
		in := &insts[pc]
		switch in.op {
		case vmLit:
			if len(s)-pos >= len(in.lit) && s[pos:pos+len(in.lit)] == in.lit {
				pos += len(in.lit)
				pc++
				continue
			}
		case vmRun:
			lo, lim := int(in.min), len(s)-pos
			if in.max >= 0 && int(in.max) < lim {
				lim = int(in.max)
			}
			n, cls, t := 0, in.cls, s[pos:pos+lim]
			if !in.greedy && lo < len(t) {
				t = t[:lo]
			}
			for n < len(t) && cls[t[n]] {
				n++
			}
			if steps += n; steps > budget {
				st.stack = stack
				return false, steps, false
			}
			if n >= lo {
				if in.greedy && n > lo {
					if !in.possessive {
						stack = append(stack, vmFrame{fRun, int32(pc), int32(pos), int32(n)})
						choices++
					}
				} else if !in.greedy && n < lim {
					stack = append(stack, vmFrame{fRunLazy, int32(pc), int32(pos), int32(n)})
					choices++
				}
				pos += n
				pc++
				continue
			}
		case vmSplit:
			// A branch that cannot begin with the next byte is not tried.
			if !in.fx.can(s, pos) {
				pc = int(in.y)
				continue
			}
			if !in.fy.can(s, pos) {
				pc = int(in.x)
				continue
			}
			if steps++; steps > budget {
				st.stack = stack
				return false, steps, false
			}
			stack = append(stack, vmFrame{fSplit, in.y, int32(pos), 0})
			choices++
			pc = int(in.x)
			continue
		case vmJmp:
			pc = int(in.x)
			continue
		case vmSave:
			if choices > 0 {
				stack = append(stack, vmFrame{fSave, in.n, 0, int32(caps[in.n])})
			}
			caps[in.n] = pos
			pc++
			continue
		case vmBegin:
			if pos == 0 {
				pc++
				continue
			}
		case vmEnd:
			if pos == len(s) {
				pc++
				continue
			}
		case vmLook:
			m, ok := false, true
			if in.fx.can(s, pos) { // else the look-ahead cannot match here
				if st.look == nil {
					st.look = &vmState{}
				}
				m, steps, ok = p.looks[in.n].exec(st.look, s[pos:], 0, -1, steps, budget)
			}
			if !ok {
				st.stack = stack
				return false, steps, false
			}
			if m != in.negate {
				pc++
				continue
			}
		case vmMatch:
			if len(caps) >= 2 {
				caps[0], caps[1] = 0, pos // the whole match
			}
			st.stack = stack
			return true, steps, true
		}
		// Fail: back to the last point to come back to.
	back:
		if len(stack) == 0 {
			st.stack = stack
			return false, steps, true
		}
		f := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if steps++; steps > budget {
			st.stack = stack
			return false, steps, false
		}
		switch f.kind {
		case fSave:
			caps[f.pc] = int(f.aux)
			goto back
		case fSplit:
			choices--
			pc, pos = int(f.pc), int(f.pos)
		case fRun:
			choices--
			n := f.aux - 1
			if n > insts[f.pc].min {
				stack = append(stack, vmFrame{fRun, f.pc, f.pos, n})
				choices++
			}
			pc, pos = int(f.pc)+1, int(f.pos+n)
		case fRunLazy:
			choices--
			in := &insts[f.pc]
			n := f.aux + 1
			end := int(f.pos + n)
			if end > len(s) || (in.max >= 0 && n > in.max) || !in.cls[s[end-1]] {
				goto back
			}
			if end < len(s) && (in.max < 0 || n < in.max) {
				stack = append(stack, vmFrame{fRunLazy, f.pc, f.pos, n})
				choices++
			}
			pc, pos = int(f.pc)+1, end
		}
	}
}

// prefixEnd is where the program's deterministic beginning ends: the
// instructions before it (anchors, literals, captures, runs that leave no
// frame) never leave a point to come back to, so they take the same bytes
// whatever follows, and what follows is a function of the rest of the
// line alone (vmMemo). 0 when there is no such beginning, or when a "^"
// comes later (it reads the absolute position), or when nothing follows
// it that is worth remembering.
func (p *vmProg) prefixEnd() int {
	end := 0
	for end < len(p.insts) {
		in := &p.insts[end]
		if !(in.op == vmBegin || in.op == vmLit || in.op == vmSave ||
			in.op == vmRun && in.greedy && (in.possessive || in.min == in.max)) {
			break
		}
		end++
	}
	if end == 0 || p.insts[end].op == vmMatch {
		return 0
	}
	for _, in := range p.insts[end:] {
		if in.op == vmBegin {
			return 0
		}
	}
	return end
}

// prefix runs the deterministic beginning (prefixEnd) on s: the position
// it ends at; ok false when it fails (then the pattern does). st.caps
// holds the captures it set, the others -1.
func (p *vmProg) prefix(st *vmState, s string, end int) (pos int, ok bool) {
	if cap(st.caps) < p.ncap {
		st.caps = make([]int, p.ncap)
	}
	caps := st.caps[:p.ncap]
	for i := range caps {
		caps[i] = -1
	}
	st.caps = caps
	for pc := 0; pc < end; pc++ {
		switch in := &p.insts[pc]; in.op {
		case vmBegin:
			if pos != 0 {
				return 0, false
			}
		case vmLit:
			if len(s)-pos < len(in.lit) || s[pos:pos+len(in.lit)] != in.lit {
				return 0, false
			}
			pos += len(in.lit)
		case vmSave:
			caps[in.n] = pos
		case vmRun:
			lim := len(s) - pos
			if in.max >= 0 && int(in.max) < lim {
				lim = int(in.max)
			}
			n, cls, t := 0, in.cls, s[pos:pos+lim]
			for n < len(t) && cls[t[n]] {
				n++
			}
			if n < int(in.min) {
				return 0, false
			}
			pos += n
		}
	}
	return pos, true
}

// possessive marks the greedy runs that nothing after them can take a
// byte back from: what follows (captures aside) must begin with a byte
// the run's class lacks (a literal, a run of at least one byte, the end
// of the line, after runs that may be empty), so that if it fails after
// the run took n bytes, it fails after n-1 too. Such a run leaves no
// point to come back to ([0-9A-Fa-f]+ before "]", \d+ before "\.?\s*$").
func (p *vmProg) possessive() {
	for i := range p.insts {
		in := &p.insts[i]
		if in.op != vmRun || !in.greedy || in.max == in.min {
			continue
		}
		var first byteClass
		ok := false
	walk:
		for j := i + 1; j < len(p.insts); j++ {
			nx := &p.insts[j]
			switch nx.op {
			case vmSave:
				continue
			case vmLit:
				if nx.lit == "" {
					continue
				}
				first.add(nx.lit[0])
				ok = true
			case vmRun:
				first.union(nx.cls)
				if nx.min == 0 {
					continue
				}
				ok = true
			case vmEnd:
				ok = true
			}
			break walk
		}
		if !ok {
			continue
		}
		in.possessive = first.disjoint(in.cls)
	}
}
