package tlv

import (
	"strconv"
	"strings"
)

// Expr is a boolean expression of the standard format and of conversion
// rules. Two dialects share it:
//
//   - a resource condition, Type(cond): the left side of a comparison is
//     an attribute name of the type, the right side a value
//     (state==RUNNING, id==2 & pri<5);
//   - the condition of a conversion rule's conditional block, evaluated
//     after the macros were expanded: both sides are text
//     (True, RUNNING==DORMANT && RUNNABLE==RUNNABLE).
//
// Grammar (the paper's fig. 2, with TLV's own doubled operators):
//
//	or      = and { ("||" | "|") and }
//	and     = unary { ("&&" | "&") unary }
//	unary   = "!" unary | primary
//	primary = "(" or ")" | "true" | "false" | operand op value
//	op      = "==" | "!=" | "<=" | ">=" | "<" | ">"
//
// An operand ends at one of = ! < > ( ) & |; a value may hold balanced
// parentheses and ends at & | or an unbalanced ")". Operands are trimmed.
// Comparison is numeric when both sides are numbers, else of the text
// (TLV always compared text; numbers compare as numbers here so that
// pri<10 means what it says). true and false are case-insensitive.
type Expr struct {
	kind        exprKind
	b           bool
	left, right string
	op          cmpOp
	x, y        *Expr

	rnum   float64 // the right side as a number, when rIsNum
	rIsNum bool

	// Select's memos, for the type it last read (a condition is parsed
	// once and read on every line): the type the attribute names were
	// checked against, and the number of the left side's attribute.
	checkedT *typeInfo
	selT     *typeInfo // the type of the name Select last read it for (selName)
	selName  string
	kT       *typeInfo
	k        int // attribute number; kName, kType for _name, _type
	sel      selMemo
}

const (
	kName = -1 - iota
	kType
)

type exprKind uint8

const (
	exBool exprKind = iota
	exCmp
	exNot
	exAnd
	exOr
)

type cmpOp uint8

const (
	opEq cmpOp = iota
	opNe
	opLt
	opGt
	opLe
	opGe
)

// ParseExpr parses an expression; attrs selects the resource-condition
// dialect (the left side of a comparison must be a name).
func ParseExpr(s string, attrs bool) (*Expr, error) {
	p := exprParser{s: s, attrs: attrs}
	e, err := p.or()
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i < len(p.s) {
		if p.s[p.i] == ')' {
			return nil, synErr(s, p.i, "an operator or the end of the condition (unbalanced \")\")")
		}
		return nil, synErr(s, p.i, `"&&", "||" or the end of the condition`)
	}
	return e, nil
}

type exprParser struct {
	s     string
	i     int
	attrs bool
}

func (p *exprParser) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '\r' || p.s[p.i] == '\n') {
		p.i++
	}
}

func (p *exprParser) or() (*Expr, error) {
	x, err := p.and()
	if err != nil {
		return nil, err
	}
	for {
		p.space()
		if p.i >= len(p.s) || p.s[p.i] != '|' {
			return x, nil
		}
		p.i++
		if p.i < len(p.s) && p.s[p.i] == '|' {
			p.i++
		}
		y, err := p.and()
		if err != nil {
			return nil, err
		}
		x = &Expr{kind: exOr, x: x, y: y}
	}
}

func (p *exprParser) and() (*Expr, error) {
	x, err := p.unary()
	if err != nil {
		return nil, err
	}
	for {
		p.space()
		if p.i >= len(p.s) || p.s[p.i] != '&' {
			return x, nil
		}
		p.i++
		if p.i < len(p.s) && p.s[p.i] == '&' {
			p.i++
		}
		y, err := p.unary()
		if err != nil {
			return nil, err
		}
		x = &Expr{kind: exAnd, x: x, y: y}
	}
}

func (p *exprParser) unary() (*Expr, error) {
	p.space()
	if p.i < len(p.s) && p.s[p.i] == '!' && (p.i+1 >= len(p.s) || p.s[p.i+1] != '=') {
		p.i++
		x, err := p.unary()
		if err != nil {
			return nil, err
		}
		return &Expr{kind: exNot, x: x}, nil
	}
	return p.primary()
}

const operandEnd = "=!<>()&|"

func (p *exprParser) primary() (*Expr, error) {
	p.space()
	if p.i < len(p.s) && p.s[p.i] == '(' {
		p.i++
		x, err := p.or()
		if err != nil {
			return nil, err
		}
		p.space()
		if p.i >= len(p.s) || p.s[p.i] != ')' {
			return nil, synErr(p.s, p.i, `")"`)
		}
		p.i++
		return x, nil
	}
	start := p.i
	for p.i < len(p.s) && !strings.ContainsRune(operandEnd, rune(p.s[p.i])) {
		p.i++
	}
	left := strings.TrimSpace(p.s[start:p.i])
	what := "a comparison, true or false"
	if p.attrs {
		what = "an attribute comparison (attr==value), true or false"
	}
	if left == "" {
		return nil, synErr(p.s, start, what)
	}
	op, n := cmpAt(p.s, p.i)
	if n == 0 {
		if strings.EqualFold(left, "true") || strings.EqualFold(left, "false") {
			return &Expr{kind: exBool, b: strings.EqualFold(left, "true")}, nil
		}
		if p.attrs {
			return nil, synErr(p.s, p.i, `a comparison operator (==, !=, <, >, <=, >=) after "`+left+`"`)
		}
		return nil, synErr(p.s, start, what)
	}
	if p.attrs && scanName(left, 0) != len(left) {
		return nil, synErr(p.s, start, "an attribute name")
	}
	p.i += n
	vstart := p.i
	depth := 0
loop:
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case '(':
			depth++
		case ')':
			if depth == 0 {
				break loop
			}
			depth--
		case '&', '|':
			if depth == 0 {
				break loop
			}
		}
		p.i++
	}
	right := strings.TrimSpace(p.s[vstart:p.i])
	e := &Expr{kind: exCmp, left: left, op: op, right: right}
	e.rnum, e.rIsNum = parseNumber(right)
	return e, nil
}

// cmpAt returns the comparison operator at s[i] and its length (0: none).
func cmpAt(s string, i int) (cmpOp, int) {
	if i >= len(s) {
		return 0, 0
	}
	two := ""
	if i+1 < len(s) {
		two = s[i : i+2]
	}
	switch two {
	case "==":
		return opEq, 2
	case "!=":
		return opNe, 2
	case "<=":
		return opLe, 2
	case ">=":
		return opGe, 2
	}
	switch s[i] {
	case '<':
		return opLt, 1
	case '>':
		return opGt, 1
	}
	return 0, 0
}

// Eval evaluates the expression; attr gives the value of an attribute
// (resource conditions) and is nil for rule conditions, whose left sides
// are text.
func (e *Expr) Eval(attr func(name string) string) bool {
	switch e.kind {
	case exBool:
		return e.b
	case exNot:
		return !e.x.Eval(attr)
	case exAnd:
		return e.x.Eval(attr) && e.y.Eval(attr)
	case exOr:
		return e.x.Eval(attr) || e.y.Eval(attr)
	}
	left := e.left
	if attr != nil {
		left = attr(e.left)
	}
	return e.compare(left)
}

// evalRes evaluates a resource condition on r, as Eval with
// State.AttrValue for attr, without looking names up on every call.
func (e *Expr) evalRes(s *State, r *Res, ns int64, at bool) bool {
	switch e.kind {
	case exBool:
		return e.b
	case exNot:
		return !e.x.evalRes(s, r, ns, at)
	case exAnd:
		return e.x.evalRes(s, r, ns, at) && e.y.evalRes(s, r, ns, at)
	case exOr:
		return e.x.evalRes(s, r, ns, at) || e.y.evalRes(s, r, ns, at)
	}
	var v string // AttrValue's value: "" for an attribute the type lacks
	switch k := e.attrIndex(r.Type); {
	case k == kName:
		v = r.Name
	case k == kType:
		v = r.Type.def.Name
	case k >= 0 && at:
		v = s.ValueAt(r, k, ns)
	case k >= 0:
		v = r.Value(k)
	}
	return e.compare(v)
}

// attrIndex returns the number of the left side's attribute in t, as
// AttrValue reads it; below kType when t has none (not kept: the trace
// may add it).
func (e *Expr) attrIndex(t *typeInfo) int {
	if e.kT == t {
		return e.k
	}
	var k int
	switch e.left {
	case "_name", "_displayName":
		k = kName
	case "_type":
		k = kType
	default:
		var ok bool
		if k, ok = t.attrIdx[e.left]; !ok {
			return kType - 1
		}
	}
	e.kT, e.k = t, k
	return k
}

// compare compares a left side with the right side, as compare does.
func (e *Expr) compare(a string) bool {
	fa, okA := parseNumber(a)
	if okA && e.rIsNum {
		return cmpResult(e.op, cmpFloat(fa, e.rnum))
	}
	return compareText(a, e.op, e.right)
}

// Attributes lists the attribute names a resource condition compares.
func (e *Expr) Attributes() []string {
	var out []string
	var walk func(*Expr)
	walk = func(e *Expr) {
		switch e.kind {
		case exCmp:
			out = append(out, e.left)
		case exNot:
			walk(e.x)
		case exAnd, exOr:
			walk(e.x)
			walk(e.y)
		}
	}
	walk(e)
	return out
}

func compare(a string, op cmpOp, b string) bool {
	fa, okA := parseNumber(a)
	if okA {
		if fb, okB := parseNumber(b); okB {
			return cmpResult(op, cmpFloat(fa, fb))
		}
	}
	return compareText(a, op, b)
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// compareText compares a and b when they are not both numbers.
func compareText(a string, op cmpOp, b string) bool {
	var c int
	if isBoolWord(a) && isBoolWord(b) {
		if !strings.EqualFold(a, b) {
			c = strings.Compare(strings.ToLower(a), strings.ToLower(b))
		}
	} else {
		c = strings.Compare(a, b)
	}
	return cmpResult(op, c)
}

func cmpResult(op cmpOp, c int) bool {
	switch op {
	case opEq:
		return c == 0
	case opNe:
		return c != 0
	case opLt:
		return c < 0
	case opGt:
		return c > 0
	case opLe:
		return c <= 0
	default:
		return c >= 0
	}
}

// parseNumber is strconv.ParseFloat without its error: a failed parse
// allocates one, and most comparisons are of names (state==RUNNING). A
// text ParseFloat accepts starts, after its sign, with a digit, "." or
// the i of inf or n of nan; others are not tried.
func parseNumber(s string) (float64, bool) {
	if s == "" {
		return 0, false
	}
	c := s[0]
	if c == '+' || c == '-' {
		if len(s) == 1 {
			return 0, false
		}
		c = s[1]
	}
	if !(c >= '0' && c <= '9' || c == '.' || c|0x20 == 'i' || c|0x20 == 'n') {
		return 0, false
	}
	if len(s) <= 15 { // digits only: the integer, exact as a float64
		n := int64(0)
		for i := 0; i < len(s); i++ {
			d := s[i] - '0'
			if d > 9 {
				goto general
			}
			n = n*10 + int64(d)
		}
		return float64(n), true
	}
general:
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil
}

func isBoolWord(s string) bool {
	return (len(s) == 4 || len(s) == 5) && (strings.EqualFold(s, "true") || strings.EqualFold(s, "false"))
}
