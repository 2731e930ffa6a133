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

type vmInst struct {
	op       vmOp
	greedy   bool
	negate   bool
	lit      string
	cls      *byteClass
	min, max int
	x, y     int
	n        int
}

// byteClass is a set of bytes.
type byteClass [4]uint64

func (c *byteClass) has(b byte) bool { return c[b>>6]&(1<<(b&63)) != 0 }
func (c *byteClass) add(b byte)      { c[b>>6] |= 1 << (b & 63) }

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
		p.looks = append(p.looks, sub)
	}
	if !p.compile(re) {
		return nil
	}
	p.insts = append(p.insts, vmInst{op: vmMatch})
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
			p.emit(vmInst{op: vmLook, n: k, negate: p.negate[k]})
			return true
		}
		p.emit(vmInst{op: vmSave, n: 2 * re.Cap})
		if !p.compile(re.Sub[0]) {
			return false
		}
		p.emit(vmInst{op: vmSave, n: 2*re.Cap + 1})
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
				p.insts[split].x = split + 1
			}
			if !p.compile(s) {
				return false
			}
			if split >= 0 {
				jumps = append(jumps, p.emit(vmInst{op: vmJmp}))
				p.insts[split].y = len(p.insts)
			}
		}
		for _, j := range jumps {
			p.insts[j].x = len(p.insts)
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
			p.emit(vmInst{op: vmRun, cls: c, min: lo, max: hi, greedy: greedy})
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
			p.emit(vmInst{op: vmJmp, x: split})
		case syntax.OpQuest:
			split = p.emit(vmInst{op: vmSplit})
			if !p.compile(re.Sub[0]) {
				return false
			}
		}
		p.insts[split].x, p.insts[split].y = split+1, len(p.insts)
		if !greedy {
			p.insts[split].x, p.insts[split].y = p.insts[split].y, p.insts[split].x
		}
		return true
	}
	return false
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
	steps := 0
	return p.exec(st, s, &steps, budget)
}

func (p *vmProg) exec(st *vmState, s string, steps *int, budget int) (matched, ok bool) {
	if cap(st.caps) < p.ncap {
		st.caps = make([]int, p.ncap)
	}
	caps := st.caps[:p.ncap]
	for i := range caps {
		caps[i] = -1
	}
	st.caps = caps
	stack := st.stack[:0]
	pc, pos := 0, 0
	for {
		if *steps++; *steps > budget {
			st.stack = stack
			return false, false
		}
		in := &p.insts[pc]
		switch in.op {
		case vmLit:
			if len(s)-pos >= len(in.lit) && s[pos:pos+len(in.lit)] == in.lit {
				pos += len(in.lit)
				pc++
				continue
			}
		case vmRun:
			lim := len(s) - pos
			if in.max >= 0 && in.max < lim {
				lim = in.max
			}
			n := 0
			if in.greedy {
				for n < lim && in.cls.has(s[pos+n]) {
					n++
				}
			} else {
				for n < in.min && n < lim && in.cls.has(s[pos+n]) {
					n++
				}
			}
			*steps += n
			if n >= in.min {
				if in.greedy && n > in.min {
					stack = append(stack, vmFrame{fRun, int32(pc), int32(pos), int32(n)})
				} else if !in.greedy && n < lim {
					stack = append(stack, vmFrame{fRunLazy, int32(pc), int32(pos), int32(n)})
				}
				pos += n
				pc++
				continue
			}
		case vmSplit:
			stack = append(stack, vmFrame{fSplit, int32(in.y), int32(pos), 0})
			pc = in.x
			continue
		case vmJmp:
			pc = in.x
			continue
		case vmSave:
			stack = append(stack, vmFrame{fSave, int32(in.n), 0, int32(caps[in.n])})
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
			if st.look == nil {
				st.look = &vmState{}
			}
			m, ok := p.looks[in.n].exec(st.look, s[pos:], steps, budget)
			if !ok {
				st.stack = stack
				return false, false
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
			return true, true
		}
		// Fail: back to the last point to come back to.
	back:
		if len(stack) == 0 {
			st.stack = stack
			return false, true
		}
		f := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		*steps++
		switch f.kind {
		case fSave:
			caps[f.pc] = int(f.aux)
			goto back
		case fSplit:
			pc, pos = int(f.pc), int(f.pos)
		case fRun:
			n := f.aux - 1
			if n > int32(p.insts[f.pc].min) {
				stack = append(stack, vmFrame{fRun, f.pc, f.pos, n})
			}
			pc, pos = int(f.pc)+1, int(f.pos+n)
		case fRunLazy:
			in := &p.insts[f.pc]
			n := f.aux + 1
			end := int(f.pos + n)
			if end > len(s) || (in.max >= 0 && int(n) > in.max) || !in.cls.has(s[end-1]) {
				goto back
			}
			if end < len(s) && (in.max < 0 || int(n) < in.max) {
				stack = append(stack, vmFrame{fRunLazy, f.pc, f.pos, n})
			}
			pc, pos = int(f.pc)+1, end
		}
	}
}
