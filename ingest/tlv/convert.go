package tlv

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/dlclark/regexp2"
	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/safetext"
)

// Conversion rules (.cnv) turn each line of any text log into
// standard-format lines. TLV's semantics, which this engine keeps:
//
//  1. Every rule whose regular expression (.NET syntax) matches the line
//     applies, in file order (rule sets in the order the resource file
//     names them) — not only the first.
//  2. A rule's output is a list; each element is a template, or a
//     conditional block {condition: outputs, ...} whose conditions are all
//     evaluated in order, each true one adding its outputs.
//  3. A template is expanded as .NET's Regex.Replace expands a
//     replacement: ${name} and $N are groups (an unmatched group is ""),
//     $$ is "$"; every match in the line is replaced and the text around
//     the matches is kept. Then the macros are evaluated:
//     $EXIST{res} (True/False), $COUNT{res}, $RES_NAME{res} (the name of
//     the one resource designated), $ATTR{res.attr} (its value), where res
//     is a standard-format resource — Name, Type or Type(condition) —
//     optionally preceded by [TIME] to read the state at that time.
//  4. Each line emitted is applied to the state at once, so the next
//     template of the same rule, and the next rule, see it ("dispatch to
//     task 2" emits the preemption of whichever task was RUNNING, then
//     makes task 2 RUNNING).
//
// Everything is compiled when the rules are loaded: a bad regular
// expression, an unknown macro or group, unbalanced braces, a resource
// type no header declares or an attribute it does not have is an error
// naming the file, the rule and the position, before any log line is read.

// The regular expressions of the rules run on regexp2, a backtracking
// engine: a pathological pattern takes seconds to years on a line, a
// normal one microseconds. Their time is bounded (wall-clock time,
// measured around every regexp2 call; Go's regexp, which matches most
// rules (fastre.go), is linear in the line and not counted):
//
//   - per line: DefaultLineBudget for every match of every rule together
//     (a template replaces every match of its rule in the line, so a rule
//     can match many times there). A line that exceeds it is an error
//     naming the rule that took most of it (--skip-bad: the line is
//     skipped).
//   - per rule, over the whole log: a rule that took most of a line's
//     budget on MaxRuleTimeouts lines, or whose time adds up to more than
//     RuleBudgetBase and RuleBudgetPerLine for each line it was tried on,
//     is not tried on the lines after (one warning names it, the lines
//     and the lines it was not tried on).
//
// So a rule costs at most MaxRuleTimeouts seconds of lines that time out,
// and at most about RuleBudgetBase and RuleBudgetPerLine a line in all.
// The bounds are generous because they are wall-clock time: a loaded
// machine can deschedule a match, and 100 ms a line gave false timeouts.
const (
	DefaultLineBudget = time.Second
	MaxRuleTimeouts   = 3
	RuleBudgetBase    = time.Minute
	RuleBudgetPerLine = 10 * time.Millisecond
)

// maxFalseTimeouts bounds the regexp2 timeouts a line may have that the
// converter's own clock does not confirm: regexp2 checks its deadline
// against a clock that a goroutine advances every 100 ms, which a loaded
// machine can delay; such a timeout is retried with the time left.
const maxFalseTimeouts = 3

// Converter holds compiled rules.
type Converter struct {
	rules []*crule
	st    *State
	sel   []*Res

	// The bounds of regex time (DefaultLineBudget): the line's budget,
	// the clock it is measured with (tests inject one), the time spent
	// on the current line and the rules that spent it, and the regexp2
	// calls made (tests count them).
	budget    time.Duration
	now       func() time.Time
	lineSpent time.Duration
	lineFalse int
	lineRules []*crule
	calls     int64

	runes []rune

	// A macro's argument and a condition are texts known only once the
	// groups are expanded, but few distinct ones recur on every line
	// (Task(id==3), RUNNING==WAITING): they are parsed once and kept, up
	// to maxParsed of each (then the cache starts afresh).
	refs  [2]map[string]parsedRef // by text; [1]: $ATTR's (with ".attr")
	conds map[string]parsedCond
	buf   []byte // the condition being expanded
	arg   []byte // the macro argument being expanded
	out   []byte // the output line being expanded

	memo []macroMemo // by the macro's memo number in its rule
	gen  uint64      // counts the applications of rules (macroMemo)
	key  []byte      // the values of a condition's holes (cond)
	akey []byte      // the values of the groups of a macro's argument (argRef)
	// Tests: noKnown turns condCache and refCache off (condHits counts
	// the conditions condCache answered), noLineMemo lineMemo.
	noKnown    bool
	condHits   int64
	noLineMemo bool // tests: the rules that begin alike tried one by one

	lm       *lineMemo  // the rules that begin alike (linememo.go); nil once one is off
	lits     *litFilter // the rules' literals (litfilter.go)
	found    []uint64   // those the line holds
	litRules [][]uint64 // by literal: the rules (a set of rule numbers) that need it
	always   []uint64   // the rules without a literal
	cand     []uint64   // the rules to try on the line

	line      string // the line the patterns see
	ascii     bool   // line is ASCII: rune i is line[i]
	haveRunes bool   // runes holds line's
	ms        []match
	locs      []int
}

// match is one match of a rule in the line: per .NET group number n,
// loc[2n:2n+2] are the rune offsets of the group's text, -1 when it
// took no part (n = 0: the whole match).
type match struct{ loc []int }

func (m match) index() int { return m.loc[0] }
func (m match) end() int   { return m.loc[1] }

// lineRunes returns the line's runes, decoded when first asked for.
func (c *Converter) lineRunes() []rune {
	if !c.haveRunes {
		c.runes = c.runes[:0]
		for _, r := range c.line { // as []rune(line), without allocating
			c.runes = append(c.runes, r)
		}
		c.haveRunes = true
	}
	return c.runes
}

// group returns group n's text ("" when it took no part).
func (c *Converter) group(m match, n int) (string, bool) {
	i, j := m.loc[2*n], m.loc[2*n+1]
	if i < 0 {
		return "", false
	}
	if c.ascii {
		return c.line[i:j], true
	}
	return string(c.lineRunes()[i:j]), true
}

type parsedRef struct {
	r   ref
	err error
}

type parsedCond struct {
	e   *Expr
	err error
	val bool // e.Eval(nil): a rule's condition is text only, its value that of the text
}

const maxParsed = 4096

type crule struct {
	set     string
	pattern string
	pos     Pos
	re      *regexp2.Regexp
	fast    *fastRE // the pattern for Go's regexp, nil when it has none (fastre.go)
	ngroups int     // 1 + the highest group number
	outs    []cout
	index   int
	prc     int            // the number of the group "prc" (the processor), -1 when none
	lit     string         // text every match contains (requiredLiteral): lines without it are not tried
	litID   int            // its number in the converter's litFilter, -1 when none
	memoIDs map[string]int // its macros' memo numbers, by kind and argument

	// Regex time (DefaultLineBudget): on all lines, on the current one;
	// the lines tried with regexp2; the lines on which it took most of
	// the line's budget; off when it is no longer tried.
	spent     time.Duration
	lineSpent time.Duration
	tried     int64
	timeouts  []int64
	off       *ruleOff
}

// ruleOff is why a rule is no longer tried, and the lines it was not
// tried on since.
type ruleOff struct {
	line     int64  // the line after which it is not tried
	why      string // what it took
	notTried int64  // lines it would have been tried on (they hold its literal)
	first    int64  // the first of them
}

// Name identifies the rule in messages.
func (r *crule) Name() string { return r.set + " rule " + quote(r.pattern) }

// quote puts s in double quotes as it is written in the rule file's
// meaning: backslashes of regular expressions stay single. A pattern or a
// template is input: safetext.Quote escapes what a terminal would act on
// and cuts a long one (a template of 2 MB is not echoed whole).
func quote(s string) string { return safetext.Quote(s) }

type cout struct {
	tmpl  *template // nil for a conditional block
	cases []ccase
}

type ccase struct {
	cond *template
	outs []cout
}

type partKind uint8

const (
	pLit partKind = iota
	pGroup
	pMacro
)

type macroKind uint8

const (
	mExist macroKind = iota
	mCount
	mResName
	mAttr
)

var macroNames = map[string]macroKind{"EXIST": mExist, "COUNT": mCount, "RES_NAME": mResName, "ATTR": mAttr}

type part struct {
	kind  partKind
	text  string
	group int
	macro macroKind
	arg   *template
	pos   int // byte offset in the rule's template of the part (of "$" for a group or a macro); a literal's text is the template's from there on

	// A macro whose argument holds no group: the argument, and what it
	// parses to, known when the rules are compiled.
	static  *parsedRef
	argText []byte
	// memo numbers the macro among its rule's: those of the same kind
	// and argument (as written) have the same number (macroMemo).
	memo int
	// known: what the argument parses to, by the values of its groups
	// (argRef; made when first needed).
	known *refCache
}

// macroMemo is the value of a macro of a rule for one match of a line,
// while the state does not change: the TOPPERS rules read the same
// $ATTR{Task(id==${id}).state} in every condition of a block.
type macroMemo struct {
	gen uint64 // Converter.gen of the rule's application
	at  int    // the match (its offset)
	ver uint64 // State.ver when it was read
	val []byte
	why string
}

type template struct {
	src   string
	pos   int // byte offset of src in the rule's template (a macro's argument is part of it)
	parts []part

	// A condition's values by the values of its groups and macros (its
	// holes, the parts holes numbers): cond.
	holes []int
	known *condCache
}

// RuleError is a rule file that cannot be compiled.
type RuleError struct {
	Pos     Pos    // where the rule (or its output) is
	Rule    string // the rule's pattern
	Output  string // the template or condition at fault, if any
	Col     int    // 1-based column in Output (or in the pattern), 0 when none
	Message string
}

func (e *RuleError) Error() string {
	var b strings.Builder
	b.WriteString(posString(e.Pos, ""))
	b.WriteString(": rule " + quote(e.Rule))
	if e.Output != "" {
		b.WriteString(": " + quote(e.Output))
	}
	if e.Col > 0 {
		fmt.Fprintf(&b, ": column %d", e.Col)
	}
	b.WriteString(": ")
	b.WriteString(e.Message)
	return b.String()
}

// Compile compiles rule sets against the state's resource types.
// budget is the regex time a line may take (DefaultLineBudget when 0).
func Compile(sets []RuleSet, st *State, budget time.Duration) (*Converter, error) {
	if budget <= 0 {
		budget = DefaultLineBudget
	}
	c := &Converter{st: st, budget: budget, now: time.Now, refs: [2]map[string]parsedRef{{}, {}}, conds: map[string]parsedCond{}}
	for _, set := range sets {
		for i := range set.Rules {
			r := &set.Rules[i]
			cr, err := c.compileRule(set.Name, r)
			if err != nil {
				return nil, err
			}
			cr.index = len(c.rules)
			c.rules = append(c.rules, cr)
		}
	}
	ids := map[string]int{}
	var lits []string
	for _, r := range c.rules {
		r.litID = -1
		if r.lit == "" {
			continue
		}
		id, ok := ids[r.lit]
		if !ok {
			id = len(lits)
			ids[r.lit] = id
			lits = append(lits, r.lit)
		}
		r.litID = id
	}
	if c.lits = newLitFilter(lits); c.lits != nil {
		c.found = make([]uint64, c.lits.words)
		words := (len(c.rules) + 63) / 64
		c.always = make([]uint64, words)
		c.litRules = make([][]uint64, len(lits))
		for i := range c.litRules {
			c.litRules[i] = make([]uint64, words)
		}
		for i, r := range c.rules {
			if r.litID < 0 {
				c.always[i/64] |= 1 << (i % 64)
			} else {
				c.litRules[r.litID][i/64] |= 1 << (i % 64)
			}
		}
	}
	if c.lm = newLineMemo(c.rules, (len(c.rules)+63)/64); c.lm != nil && c.lm.scan && c.lits == nil {
		c.lm = nil
	}
	return c, nil
}

func (c *Converter) compileRule(set string, r *Rule) (*crule, error) {
	re, err := regexp2.Compile(r.Pattern, regexp2.None)
	if err != nil {
		return nil, &RuleError{Pos: r.Pos, Rule: r.Pattern, Message: "invalid regular expression: " + err.Error()}
	}
	cr := &crule{set: set, pattern: r.Pattern, pos: r.Pos, re: re, prc: re.GroupNumberFromName("prc"), lit: requiredLiteral(r.Pattern)}
	for _, n := range re.GetGroupNumbers() {
		cr.ngroups = max(cr.ngroups, n+1)
	}
	cr.fast = compileFast(r.Pattern, re)
	if cr.outs, err = c.compileOutputs(cr, r.Outputs); err != nil {
		return nil, err
	}
	return cr, nil
}

func (c *Converter) compileOutputs(cr *crule, outs []Output) ([]cout, error) {
	var res []cout
	for i := range outs {
		o := &outs[i]
		if o.Cond == nil {
			t, err := c.compileTemplate(cr, o.Template, o.Pos, false)
			if err != nil {
				return nil, err
			}
			res = append(res, cout{tmpl: t})
			continue
		}
		var cases []ccase
		for j := range o.Cond {
			cs := &o.Cond[j]
			t, err := c.compileTemplate(cr, cs.Condition, cs.Pos, true)
			if err != nil {
				return nil, err
			}
			sub, err := c.compileOutputs(cr, cs.Outputs)
			if err != nil {
				return nil, err
			}
			cases = append(cases, ccase{cond: t, outs: sub})
		}
		res = append(res, cout{cases: cases})
	}
	return res, nil
}

// placeholder stands for a group's text when a template is checked at
// load time: it is a name character, and marks what is not known yet.
const placeholder = "\uE000"

func (c *Converter) compileTemplate(cr *crule, src string, pos Pos, isCond bool) (*template, error) {
	if pos.File == "" {
		pos = cr.pos
	}
	fail := func(i int, format string, args ...any) error {
		e := &RuleError{Pos: pos, Rule: cr.pattern, Output: src, Message: fmt.Sprintf(format, args...)}
		if i >= 0 {
			e.Col = col(src, i)
		}
		return e
	}
	t, _, err := c.parseTemplate(cr, src, 0, false, fail)
	if err != nil {
		return nil, err
	}
	for i := range t.parts {
		p := &t.parts[i]
		if p.kind != pMacro {
			continue
		}
		sig := []byte{byte(p.macro)}
		for _, a := range p.arg.parts {
			sig = append(sig, 0, byte(a.kind))
			sig = strconv.AppendInt(sig, int64(a.group), 10)
			sig = append(sig, 0)
			sig = append(sig, a.text...)
		}
		id, ok := cr.memoIDs[string(sig)]
		if !ok {
			if cr.memoIDs == nil {
				cr.memoIDs = map[string]int{}
			}
			id = len(cr.memoIDs)
			cr.memoIDs[string(sig)] = id
		}
		p.memo = id
		if len(c.memo) <= id {
			c.memo = append(c.memo, make([]macroMemo, id+1-len(c.memo))...)
		}
		static := true
		var text []byte
		for _, a := range p.arg.parts {
			static = static && a.kind == pLit
			text = append(text, a.text...)
		}
		if static { // parsed once (the same text's parse shared: its selection memo too)
			pr := c.parseRefCached(text, p.macro)
			p.static, p.argText = &pr, text
		}
	}
	// Check what can be checked now: the expansion with placeholders for
	// the groups must be a standard-format line (or a condition), and the
	// macros must name known types and attributes.
	for _, p := range t.parts {
		if p.kind != pMacro {
			continue
		}
		arg, _ := p.arg.expandStatic()
		if _, err := c.checkRef(arg, p.macro == mAttr); err != nil {
			return nil, fail(p.arg.pos, "$%s{%s}: %v", macroName(p.macro), p.arg.src, err)
		}
	}
	// A group or a macro may stand where only some texts fit (the time, a
	// whole comparison): the shape is checked with placeholders, then
	// with texts that fit there. When none fits, the error is the one
	// found furthest into the template, at its column there.
	text, offs := t.expandStatic()
	var worst *SyntaxError // Off: in src
	var other error
	fits := func(err error, offs []int) bool {
		if err == nil {
			return true
		}
		var se *SyntaxError
		if !errors.As(err, &se) {
			other = err
			return false
		}
		if o := offs[min(se.Off, len(offs)-1)]; worst == nil || o >= worst.Off {
			worst = &SyntaxError{Off: o, Expected: se.Expected}
		}
		return false
	}
	failSyntax := func(what string) error {
		if worst == nil {
			return fail(-1, "%s: %s", what, unplaceholder(other.Error()))
		}
		return fail(worst.Off, "%s: expected %s, found %s", what, worst.Expected, found(src, worst.Off))
	}
	if isCond {
		_, err := ParseExpr(text, false)
		ok := fits(err, offs)
		if !ok && strings.Contains(text, placeholder) {
			for _, fit := range []string{"0", "true"} {
				text2, offs2 := fill(text, offs, len(text), fit)
				if _, err := ParseExpr(text2, false); fits(err, offs2) {
					ok = true
					break
				}
			}
		}
		if !ok {
			return nil, failSyntax("condition")
		}
		for i, p := range t.parts {
			if p.kind != pLit {
				t.holes = append(t.holes, i)
			}
		}
		t.known = new(condCache)
		return t, nil
	}
	l, err := ParseStdLine(text)
	ok := fits(err, offs)
	if !ok && strings.Contains(text, placeholder) {
		// The time first, then everywhere.
		if end := strings.IndexByte(text, ']'); end > 0 {
			text2, offs2 := fill(text, offs, end, "0")
			if l2, err := ParseStdLine(text2); fits(err, offs2) {
				l, ok = l2, true
			}
		}
		if !ok {
			text2, offs2 := fill(text, offs, len(text), "0")
			if _, err := ParseStdLine(text2); fits(err, offs2) {
				l, ok = StdLine{Res: placeholder}, true
			}
		}
	}
	if !ok {
		return nil, failSyntax("not a standard-format line")
	}
	if l.Cond != nil && !strings.Contains(l.Res, placeholder) {
		if err := c.checkSelect(l.Res, l.Cond); err != nil {
			return nil, fail(-1, "%v", err)
		}
	}
	// A plain resource name that this resource file does not define may
	// be defined by another that uses the same rules: it is checked when
	// a line names it.
	return t, nil
}

// fill replaces the placeholders of text[:limit] with with; offs maps
// each byte of text (and its end) to its offset in the template, and the
// offsets of the result are returned.
func fill(text string, offs []int, limit int, with string) (string, []int) {
	var b strings.Builder
	o := make([]int, 0, len(offs))
	for i := 0; i < len(text); {
		if i < limit && strings.HasPrefix(text[i:], placeholder) {
			b.WriteString(with)
			for range len(with) {
				o = append(o, offs[i])
			}
			i += len(placeholder)
			continue
		}
		b.WriteByte(text[i])
		o = append(o, offs[i])
		i++
	}
	return b.String(), append(o, offs[len(text)])
}

func unplaceholder(s string) string {
	return strings.NewReplacer(placeholder, "…", `\ue000`, "…").Replace(s)
}

func macroName(k macroKind) string {
	for n, m := range macroNames {
		if m == k {
			return n
		}
	}
	return "?"
}

// parseTemplate parses src from i; inMacro stops at the "}" that closes
// a macro's argument and returns its index.
func (c *Converter) parseTemplate(cr *crule, src string, i int, inMacro bool, fail func(int, string, ...any) error) (*template, int, error) {
	start := i
	t := &template{pos: start}
	var lit strings.Builder
	litPos := 0 // where lit's text starts in src
	flush := func() {
		if lit.Len() > 0 {
			t.parts = append(t.parts, part{kind: pLit, text: lit.String(), pos: litPos})
			lit.Reset()
		}
	}
	for i < len(src) {
		ch := src[i]
		if lit.Len() == 0 {
			litPos = i
		}
		switch {
		case ch == '\\' && i+1 < len(src) && (src[i+1] == '{' || src[i+1] == '}'):
			lit.WriteString(src[i : i+2]) // TLV keeps the backslash
			i += 2
		case ch == '}':
			if inMacro {
				flush()
				t.src = src[start:i]
				return t, i, nil
			}
			return nil, 0, fail(i, `unbalanced "}": no macro or group is open`)
		case ch == '$' && i+1 < len(src) && src[i+1] == '$':
			// A literal's text is the template's from its pos on: "$$"
			// is a literal of its own.
			flush()
			litPos = i
			lit.WriteByte('$')
			flush()
			i += 2
		case ch == '$' && i+1 < len(src) && src[i+1] == '{':
			end := strings.IndexByte(src[i+2:], '}')
			if end < 0 {
				return nil, 0, fail(i, `unbalanced "{": "${" without "}"`)
			}
			name := src[i+2 : i+2+end]
			n := cr.re.GroupNumberFromName(name)
			if n < 0 {
				return nil, 0, fail(i, "unknown group ${%s} (the pattern's groups: %s)", name, groupList(cr.re))
			}
			flush()
			t.parts = append(t.parts, part{kind: pGroup, group: n, pos: i})
			i += 3 + end
		case ch == '$' && i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '9':
			j := i + 1
			for j < len(src) && src[j] >= '0' && src[j] <= '9' {
				j++
			}
			n, _ := strconv.Atoi(src[i+1 : j])
			if cr.re.GroupNameFromNumber(n) == "" {
				return nil, 0, fail(i, "unknown group $%d (the pattern's groups: %s)", n, groupList(cr.re))
			}
			flush()
			t.parts = append(t.parts, part{kind: pGroup, group: n, pos: i})
			i = j
		case ch == '$' && i+1 < len(src) && isMacroChar(src[i+1]):
			j := i + 1
			for j < len(src) && isMacroChar(src[j]) {
				j++
			}
			if j >= len(src) || src[j] != '{' {
				lit.WriteString(src[i:j]) // "$WORD" without "{" is text, as in .NET
				i = j
				continue
			}
			name := src[i+1 : j]
			k, ok := macroNames[name]
			if !ok {
				return nil, 0, fail(i, "unknown macro $%s (macros: $EXIST, $COUNT, $RES_NAME, $ATTR)", name)
			}
			if inMacro {
				return nil, 0, fail(i, "macros do not nest: $%s inside a macro's argument", name)
			}
			arg, end, err := c.parseTemplate(cr, src, j+1, true, fail)
			if err != nil {
				return nil, 0, err
			}
			if end < 0 {
				return nil, 0, fail(i, `unbalanced "{": $%s{ without "}"`, name)
			}
			if len(arg.parts) == 0 {
				return nil, 0, fail(i, "$%s{}: empty argument", name)
			}
			flush()
			t.parts = append(t.parts, part{kind: pMacro, macro: k, arg: arg, pos: i})
			i = end + 1
		default:
			_, n := utf8.DecodeRuneInString(src[i:])
			lit.WriteString(src[i : i+n])
			i += n
		}
	}
	if inMacro {
		return t, -1, nil
	}
	flush()
	t.src = src[start:]
	return t, len(src), nil
}

func isMacroChar(c byte) bool { return c >= 'A' && c <= 'Z' || c == '_' }

func groupList(re *regexp2.Regexp) string {
	var names []string
	for _, n := range re.GetGroupNames() {
		if _, err := strconv.Atoi(n); err == nil && n != "0" {
			names = append(names, "$"+n)
		} else if n != "0" {
			names = append(names, "${"+n+"}")
		}
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// expandStatic expands a template with placeholders for groups and
// macros (load-time checks). offs maps each byte of the expansion, and
// its end, to the byte offset in the rule's template where it comes from
// (a group's or a macro's "$").
func (t *template) expandStatic() (text string, offs []int) {
	var b strings.Builder
	put := func(s string, pos int, literal bool) {
		b.WriteString(s)
		for k := range len(s) {
			if literal {
				offs = append(offs, pos+k)
			} else {
				offs = append(offs, pos)
			}
		}
	}
	for _, p := range t.parts {
		switch p.kind {
		case pLit:
			put(p.text, p.pos, true)
		case pGroup:
			put(placeholder, p.pos, false)
		case pMacro:
			if p.macro == mExist {
				put("True", p.pos, false)
			} else {
				put(placeholder, p.pos, false)
			}
		}
	}
	return b.String(), append(offs, t.pos+len(t.src))
}

// ref is a macro's argument: [TIME]Name, [TIME]Type(cond), with .attr
// for $ATTR.
type ref struct {
	time    string
	hasTime bool
	res     string
	cond    *Expr
	attr    string
}

// parseRef parses a macro argument.
func parseRef(s string, wantAttr bool) (ref, error) {
	var r ref
	s = strings.TrimSpace(s)
	i := 0
	if strings.HasPrefix(s, "[") {
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return r, synErr(s, len(s), `"]" after the time`)
		}
		r.time, r.hasTime = strings.TrimSpace(s[1:end]), true
		i = skipSpace(s, end+1)
	}
	j := scanName(s, i)
	if j == i {
		return r, synErr(s, i, "a resource or resource type name")
	}
	r.res = s[i:j]
	i = skipSpace(s, j)
	if i < len(s) && s[i] == '(' {
		end := closing(s, i)
		if end < 0 {
			return r, synErr(s, len(s), `")" closing the condition`)
		}
		e, err := ParseExpr(s[i+1:end], true)
		if err != nil {
			return r, err
		}
		r.cond = e
		i = skipSpace(s, end+1)
	}
	if wantAttr {
		if i >= len(s) || s[i] != '.' {
			return r, synErr(s, i, `"." and an attribute name`)
		}
		i = skipSpace(s, i+1)
		j = scanName(s, i)
		if j == i {
			return r, synErr(s, i, "an attribute name")
		}
		r.attr = s[i:j]
		i = j
	}
	if i < len(s) {
		return r, synErr(s, i, "the end of the argument")
	}
	return r, nil
}

// checkRef checks a macro argument at load time (placeholders stand for
// groups: what contains one is not checked).
func (c *Converter) checkRef(s string, wantAttr bool) (ref, error) {
	r, err := parseRef(s, wantAttr)
	if err != nil {
		if strings.Contains(s, placeholder) {
			return r, nil
		}
		return r, err
	}
	if strings.Contains(r.res, placeholder) {
		return r, nil
	}
	if r.cond != nil {
		return r, c.checkSelect(r.res, r.cond)
	}
	if wantAttr && !strings.Contains(r.attr, placeholder) && r.attr[0] != '_' {
		var t *typeInfo
		if x := c.st.byName[r.res]; x != nil {
			t = x.Type
		} else {
			t = c.st.types[r.res]
		}
		if t != nil {
			if _, ok := t.attrIdx[r.attr]; !ok {
				return r, fmt.Errorf("resource type %s has no attribute %q", t.def.Name, r.attr)
			}
		}
	}
	return r, nil
}

func (c *Converter) checkSelect(typ string, cond *Expr) error {
	t := c.st.types[typ]
	if t == nil {
		return fmt.Errorf("unknown resource type %q (types: %s)", typ, strings.Join(c.st.TypeNames(), ", "))
	}
	for _, a := range cond.Attributes() {
		if strings.Contains(a, placeholder) || a == "_name" || a == "_type" {
			continue
		}
		if _, ok := t.attrIdx[a]; !ok {
			return fmt.Errorf("resource type %s has no attribute %q", typ, a)
		}
	}
	return nil
}

// Emit receives each standard-format line a rule produced, and the
// processor the rule's group "prc" names (-1 when none); the consumer
// applies it to the state before returning (see Reader). The text is
// valid only during the call.
type Emit func(text string, r *crule, cpu int) error

// Problem is a finding of the conversion that skips one output (a macro
// that designates no resource or several, a condition that does not
// parse once expanded): the line is counted in diagnostics, not an error.
type Problem struct {
	Rule *crule
	Kind string // short, stable: what went wrong
	Msg  string
}

// Convert applies the rules to line n of the log: emit gets each output
// line, problem each output that had to be skipped. matched reports
// whether any rule matched. A line whose regular expressions exceed the
// line's budget is a *TimeoutError (DefaultLineBudget).
func (c *Converter) Convert(line string, n int64, emit Emit, problem func(Problem)) (matched bool, err error) {
	c.line, c.haveRunes, c.ascii = line, false, isASCII(line)
	if !c.ascii && !utf8.ValidString(line) {
		line = string(c.lineRunes()) // the text the patterns see: each bad byte is U+FFFD
		c.line = line
	}
	c.lineSpent, c.lineFalse = 0, 0
	for _, r := range c.lineRules {
		r.lineSpent = 0
	}
	c.lineRules = c.lineRules[:0]
	fast := c.ascii && strings.IndexByte(line, '\n') < 0
	if fast && c.lm != nil && !c.noLineMemo {
		if e, pos, ok := c.lm.entry(line); ok {
			return c.convertMemo(e, pos, n, emit, problem)
		}
	}
	if c.lits == nil {
		for _, r := range c.rules {
			if r.litID >= 0 && !strings.Contains(line, r.lit) {
				continue
			}
			if err := c.apply(r, fast, n, &matched, emit, problem); err != nil {
				return matched, err
			}
		}
		return matched, nil
	}
	// The rules to try: those without a literal, and those whose literal
	// the line holds, in rule order.
	c.lits.scan(line, c.found)
	cand := append(c.cand[:0], c.always...)
	for w, x := range c.found {
		for x != 0 {
			l := w*64 + bits.TrailingZeros64(x)
			x &= x - 1
			for i, y := range c.litRules[l] {
				cand[i] |= y
			}
		}
	}
	c.cand = cand
	for w, x := range cand {
		for x != 0 {
			r := c.rules[w*64+bits.TrailingZeros64(x)]
			x &= x - 1
			if err := c.apply(r, fast, n, &matched, emit, problem); err != nil {
				return matched, err
			}
		}
	}
	return matched, nil
}

// convertMemo is Convert of a line whose rules that begin alike match as
// e says (linememo.go; e nil: none of them matches); pos is where the rest
// begins, c.lm.st.caps the captures of the beginning. No rule of c.lm is
// off (c.lm is nil then); a rule that goes off while the line is read
// (apply) is one tried already, and the line goes on with the memo it
// began with.
func (c *Converter) convertMemo(e *lmEntry, pos int, n int64, emit Emit, problem func(Problem)) (matched bool, err error) {
	lm := c.lm
	c.lineCands(e, c.line)
	hi := 0
	for w, x := range c.cand {
		for x != 0 {
			r := c.rules[w*64+bits.TrailingZeros64(x)]
			x &= x - 1
			if e == nil || lm.set[r.index/64]&(1<<(r.index%64)) == 0 {
				err = c.apply(r, true, n, &matched, emit, problem)
			} else if hi < len(e.hits) && e.hits[hi].rule == r.index {
				err = c.applyMatches(r, c.fastMatch(r, r.fast.memoCaps(lm.st.caps, pos, e.hits[hi].m)), &matched, emit, problem)
				hi++
			} else if r.litID < 0 || strings.Contains(c.line, r.lit) { // its machine gave up on this rest
				err = c.apply(r, true, n, &matched, emit, problem)
			}
			if err != nil {
				return matched, err
			}
		}
	}
	return matched, nil
}

// apply tries rule r on the line and applies its outputs when it matches.
func (c *Converter) apply(r *crule, fast bool, n int64, matched *bool, emit Emit, problem func(Problem)) error {
	if r.off != nil {
		if r.off.notTried++; r.off.notTried == 1 {
			r.off.first = n
		}
		return nil
	}
	ms, err := c.matches(r, fast, n)
	if err != nil || len(ms) == 0 {
		return err
	}
	return c.applyMatches(r, ms, matched, emit, problem)
}

// applyMatches applies the outputs of rule r, which matched the line.
func (c *Converter) applyMatches(r *crule, ms []match, matched *bool, emit Emit, problem func(Problem)) error {
	*matched = true
	cpu := -1
	if r.prc >= 0 {
		if g, ok := c.group(ms[0], r.prc); ok {
			if v, ok := parseSmall(g); ok {
				cpu = int(v)
			} else if v, err := strconv.ParseInt(strings.TrimSpace(g), 10, 32); err == nil && v >= 0 {
				cpu = int(v)
			}
		}
	}
	c.gen++
	return c.outputs(r, r.outs, ms, cpu, emit, problem)
}

// TimeoutError is a line whose regular expressions took longer than the
// line's budget; Rule is the rule that took most of it.
type TimeoutError struct {
	Rule   string
	Budget time.Duration
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("rule %s: the regular expressions took longer than %v on this line, most of it this rule's (a pathological pattern?)", e.Rule, e.Budget)
}

func isASCII(s string) bool {
	i := 0
	for ; i+8 <= len(s); i += 8 { // eight bytes at a time
		if binary.LittleEndian.Uint64(unsafe.Slice(unsafe.StringData(s[i:]), 8))&0x8080808080808080 != 0 {
			return false
		}
	}
	for ; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// matches returns the matches of r in line n; fast: the line is one
// Go's regexp may read (fastre.go).
func (c *Converter) matches(r *crule, fast bool, n int64) ([]match, error) {
	c.ms, c.locs = c.ms[:0], c.locs[:0]
	if fast && r.fast != nil {
		loc, ok := r.fast.match(c.line)
		if ok {
			if loc == nil {
				return nil, nil
			}
			return c.fastMatch(r, loc), nil
		}
	}
	c.lineRunes()
	c.lineRules = append(c.lineRules, r)
	r.tried++
	ms, err := c.matchAll(r)
	if err == errLineBudget {
		return nil, c.timeout(n)
	}
	if err != nil {
		return nil, fmt.Errorf("rule %s: %w", r.Name(), err)
	}
	if r.spent > RuleBudgetBase+RuleBudgetPerLine*time.Duration(r.tried) {
		c.lm = nil // its rules are tried one by one from now on
		r.off = &ruleOff{line: n, why: fmt.Sprintf("its regular expression took %v on the %d lines it was tried on, more than the %v and %v a line a rule may take",
			r.spent.Round(time.Millisecond), r.tried, RuleBudgetBase, RuleBudgetPerLine)}
	}
	return ms, nil
}

// fastMatch is the match of r whose Go groups are at loc.
func (c *Converter) fastMatch(r *crule, loc []int) []match {
	c.ms, c.locs = c.ms[:0], c.locs[:0]
	for _, gi := range r.fast.groups {
		if gi < 0 {
			c.locs = append(c.locs, -1, -1)
		} else {
			c.locs = append(c.locs, loc[2*gi], loc[2*gi+1])
		}
	}
	c.ms = append(c.ms, match{c.locs})
	return c.ms
}

// errLineBudget is a line that took its budget (matchAll).
var errLineBudget = errors.New("the line's budget of regex time is spent")

// matchAll finds every match of r in the line with regexp2, within the
// time the line has left.
func (c *Converter) matchAll(r *crule) ([]match, error) {
	c.ms, c.locs = c.ms[:0], c.locs[:0]
	var m *regexp2.Match
	for first := true; first || m != nil; first = false {
		var err error
		if m, err = c.find(r, m, first); err != nil {
			return nil, err
		}
		if m == nil {
			break
		}
		start := len(c.locs)
		for n := 0; n < r.ngroups; n++ {
			if g := m.GroupByNumber(n); g != nil && len(g.Captures) > 0 {
				c.locs = append(c.locs, g.Index, g.Index+g.Length)
			} else {
				c.locs = append(c.locs, -1, -1)
			}
		}
		// When locs grows, the earlier matches keep its old array, which
		// holds their offsets.
		c.ms = append(c.ms, match{c.locs[start:len(c.locs):len(c.locs)]})
	}
	return c.ms, nil
}

// find makes one regexp2 call (the first match, else the one after
// prev) with the time the line has left, and counts the time it took.
func (c *Converter) find(r *crule, prev *regexp2.Match, first bool) (*regexp2.Match, error) {
	for {
		left := c.budget - c.lineSpent
		if left <= 0 {
			return nil, errLineBudget
		}
		r.re.MatchTimeout = left
		c.calls++
		t0 := c.now()
		var m *regexp2.Match
		var err error
		if first {
			m, err = r.re.FindRunesMatch(c.runes)
		} else {
			m, err = r.re.FindNextMatch(prev)
		}
		d := c.now().Sub(t0)
		c.lineSpent += d
		r.lineSpent += d
		r.spent += d
		if err == nil {
			return m, nil
		}
		if !strings.Contains(err.Error(), "timeout") {
			return nil, err
		}
		// regexp2's deadline passed. When the clock here says the line
		// has time left, regexp2's clock was late: try again.
		if c.lineSpent < c.budget {
			if c.lineFalse++; c.lineFalse > maxFalseTimeouts {
				return nil, errLineBudget
			}
		}
	}
}

// timeout is line n taking its budget: the rule that took most of it
// gets the blame, and after MaxRuleTimeouts such lines it is not tried
// any more.
func (c *Converter) timeout(n int64) error {
	var worst *crule
	for _, r := range c.lineRules {
		if worst == nil || r.lineSpent > worst.lineSpent {
			worst = r
		}
	}
	worst.timeouts = append(worst.timeouts, n)
	if len(worst.timeouts) >= MaxRuleTimeouts && worst.off == nil {
		c.lm = nil
		worst.off = &ruleOff{line: n, why: fmt.Sprintf("the regular expressions took longer than %v on %s, most of it this rule's (those lines were skipped)",
			c.budget, lineList(worst.timeouts))}
	}
	return &TimeoutError{Rule: worst.Name(), Budget: c.budget}
}

// lineList is "line 3", "lines 3 and 7", "lines 3, 7 and 9".
func lineList(ns []int64) string {
	if len(ns) == 1 {
		return fmt.Sprintf("line %d", ns[0])
	}
	var b strings.Builder
	b.WriteString("lines ")
	for i, n := range ns {
		switch {
		case i == len(ns)-1:
			b.WriteString(" and ")
		case i > 0:
			b.WriteString(", ")
		}
		b.WriteString(strconv.FormatInt(n, 10))
	}
	return b.String()
}

// Disabled is a rule the converter stopped trying (DefaultLineBudget).
type Disabled struct {
	Rule string
	Line int64  // the line after which it was not tried
	Msg  string // the whole finding, naming the rule
}

// Disabled returns the rules no longer tried, in rule order.
func (c *Converter) Disabled() []Disabled {
	var out []Disabled
	for _, r := range c.rules {
		if r.off == nil {
			continue
		}
		after := "no line came after"
		switch r.off.notTried {
		case 0:
		case 1:
			after = fmt.Sprintf("it was not tried on the 1 line after (line %d)", r.off.first)
		default:
			after = fmt.Sprintf("it was not tried on the %d lines after (the first, line %d)", r.off.notTried, r.off.first)
		}
		out = append(out, Disabled{Rule: r.Name(), Line: r.off.line, Msg: fmt.Sprintf("rule %s: not tried after line %d: %s; %s", r.Name(), r.off.line, r.off.why, after)})
	}
	return out
}

func (c *Converter) outputs(r *crule, outs []cout, ms []match, cpu int, emit Emit, problem func(Problem)) error {
	for _, o := range outs {
		if o.tmpl != nil {
			text, perr := c.expand(o.tmpl, ms)
			if perr != "" {
				problem(Problem{Rule: r, Kind: "macro", Msg: fmt.Sprintf("output %q: %s (output skipped)", o.tmpl.src, perr)})
				continue
			}
			if err := emit(text, r, cpu); err != nil {
				return err
			}
			continue
		}
		for _, cs := range o.cases {
			if c.cond(r, cs.cond, ms, problem) {
				if err := c.outputs(r, cs.outs, ms, cpu, emit, problem); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// cond evaluates the condition t of a conditional block over the matches
// of the line: the text it expands to, parsed and evaluated; false, with
// a problem, when it cannot be. Its value is a function of that text, and
// when the rule matched the line once and whole, the text is a function
// of the values of the groups and macros of t: the values of t are kept
// by those (condCache), and a line whose values were seen is not written
// out, hashed whole and looked up again.
func (c *Converter) cond(r *crule, t *template, ms []match, problem func(Problem)) bool {
	var key []byte
	var e *condEntry
	if t.known != nil && !c.noKnown && c.ascii && len(ms) == 1 && ms[0].index() == 0 && ms[0].end() == len(c.line) {
		m := ms[0]
		key = c.key[:0]
		for _, i := range t.holes {
			p := &t.parts[i]
			if p.kind == pGroup {
				var v string
				if i := m.loc[2*p.group]; i >= 0 {
					v = c.line[i:m.loc[2*p.group+1]]
				}
				key = binary.AppendUvarint(key, uint64(len(v)))
				key = append(key, v...)
				continue
			}
			v, why := c.macroValue(p, m)
			if why != "" {
				c.key = key
				problem(Problem{Rule: r, Kind: "macro", Msg: fmt.Sprintf("condition %q: %s (taken as false)", t.src, why)})
				return false
			}
			key = binary.AppendUvarint(key, uint64(len(v)))
			key = append(key, v...)
		}
		c.key = key
		if len(key) <= maxCondKey {
			e = t.known.entry(key)
			if e.key == string(key) {
				c.condHits++
				return e.val
			}
		}
		// The text, as expandTo writes it (the match is the whole line),
		// from the values.
		c.buf = c.buf[:0]
		for i := range t.parts {
			p := &t.parts[i]
			if p.kind == pLit {
				c.buf = append(c.buf, p.text...)
				continue
			}
			n, w := binary.Uvarint(key)
			c.buf = append(c.buf, key[w:w+int(n)]...)
			key = key[w+int(n):]
		}
		key = c.key
	} else {
		var perr string
		c.buf, perr = c.expandTo(c.buf[:0], t, ms)
		if perr != "" {
			problem(Problem{Rule: r, Kind: "macro", Msg: fmt.Sprintf("condition %q: %s (taken as false)", t.src, perr)})
			return false
		}
	}
	pc, ok := c.conds[string(c.buf)]
	if !ok {
		text := string(c.buf)
		pc.e, pc.err = ParseExpr(text, false)
		if pc.err == nil {
			pc.val = pc.e.Eval(nil)
		}
		if len(c.conds) >= maxParsed {
			clear(c.conds)
		}
		c.conds[text] = pc
	}
	if pc.err != nil {
		problem(Problem{Rule: r, Kind: "condition", Msg: fmt.Sprintf("condition %q expands to %q: %v (taken as false)", t.src, c.buf, pc.err)})
		return false
	}
	if e != nil {
		e.key, e.val = string(key), pc.val
	}
	return pc.val
}

// condCache is the values of a condition by the values of its holes
// (cond): a table of condCacheSize entries, by a hash of those, each
// holding the last that fell there. The key of an entry is the values,
// each after its length (uvarint), at most maxCondKey bytes.
type condCache struct {
	e [condCacheSize]condEntry
}

type condEntry struct {
	key string
	val bool
}

const (
	condCacheSize = 64
	maxCondKey    = 128
)

func (cc *condCache) entry(key []byte) *condEntry {
	return &cc.e[hashKey(key)%condCacheSize]
}

// hashKey hashes the key of a condCache or a refCache.
func hashKey(key []byte) uint64 {
	h := uint64(len(key))
	for ; len(key) >= 8; key = key[8:] {
		h = (h ^ binary.LittleEndian.Uint64(key)) * 0x9e3779b97f4a7c15
		h ^= h >> 32
	}
	for _, b := range key {
		h = (h ^ uint64(b)) * 0x100000001b3
	}
	return h ^ h>>29
}

// expand expands a template over the matches of a line as Regex.Replace
// does, then evaluates its macros. A macro that cannot be evaluated
// returns its reason.
func (c *Converter) expand(t *template, ms []match) (string, string) {
	var why string
	if c.out, why = c.expandTo(c.out[:0], t, ms); why != "" {
		return "", why
	}
	return unsafe.String(unsafe.SliceData(c.out), len(c.out)), "" // valid until the next expand (Emit)
}

// expandTo is expand appending to dst.
func (c *Converter) expandTo(dst []byte, t *template, ms []match) ([]byte, string) {
	pos := 0
	for _, m := range ms {
		dst = c.appendText(dst, pos, m.index())
		var why string
		if dst, why = c.expandOne(dst, t, m); why != "" {
			return dst, why
		}
		pos = m.end()
	}
	if c.ascii {
		return append(dst, c.line[pos:]...), ""
	}
	return c.appendText(dst, pos, len(c.lineRunes())), ""
}

// appendText appends the line's runes [i, j) as UTF-8 (a rune that is
// not valid, as string([]rune) does, as U+FFFD).
func (c *Converter) appendText(dst []byte, i, j int) []byte {
	if c.ascii {
		return append(dst, c.line[i:j]...)
	}
	for _, r := range c.lineRunes()[i:j] {
		dst = utf8.AppendRune(dst, r)
	}
	return dst
}

func (c *Converter) expandOne(dst []byte, t *template, m match) ([]byte, string) {
	for i := range t.parts {
		p := &t.parts[i]
		switch p.kind {
		case pLit:
			dst = append(dst, p.text...)
		case pGroup:
			if i := m.loc[2*p.group]; i >= 0 {
				dst = c.appendText(dst, i, m.loc[2*p.group+1])
			}
		case pMacro:
			v, why := c.macroValue(p, m)
			if why != "" {
				return dst, why
			}
			dst = append(dst, v...)
		}
	}
	return dst, ""
}

// macroValue returns the value of macro p for match m, or why it has
// none; the value is valid until the next call. It is remembered for the
// rule's application and match while the state does not change
// (macroMemo); a read at a [TIME] is made each time (it counts history
// misses).
func (c *Converter) macroValue(p *part, m match) ([]byte, string) {
	mm := &c.memo[p.memo]
	if mm.gen == c.gen && mm.at == m.index() && mm.ver == c.st.ver {
		return mm.val, mm.why
	}
	var why string
	var pr parsedRef
	val := mm.val[:0]
	if p.static != nil {
		pr = *p.static
		val, why = c.macro(val, p.macro, p.argText, pr)
	} else {
		var arg []byte
		pr, arg = c.argRef(p, m)
		val, why = c.macro(val, p.macro, arg, pr)
	}
	mm.val = val
	if !pr.r.hasTime { // remembered (a [TIME] macro's slot never is: same argument, same time)
		mm.gen, mm.at, mm.ver, mm.why = c.gen, m.index(), c.st.ver, why
	}
	return val, why
}

// argRef returns what the argument of macro p parses to for match m, and
// its text. The text is a function of the values of the groups it holds
// (on an ASCII line; it holds no macros): what it parses to is kept by
// those (p.known), so that a line whose values were seen does not write
// the argument out and look its text up (parseRefCached) again.
func (c *Converter) argRef(p *part, m match) (parsedRef, []byte) {
	if c.ascii && !c.noKnown {
		key := c.akey[:0]
		for i := range p.arg.parts {
			if a := &p.arg.parts[i]; a.kind == pGroup {
				var v string
				if i := m.loc[2*a.group]; i >= 0 {
					v = c.line[i:m.loc[2*a.group+1]]
				}
				key = binary.AppendUvarint(key, uint64(len(v)))
				key = append(key, v...)
			}
		}
		c.akey = key
		if len(key) <= maxCondKey {
			if p.known == nil {
				p.known = new(refCache)
			}
			e := &p.known.e[hashKey(key)%refCacheSize]
			if e.key == string(key) {
				return e.pr, e.arg
			}
			// Arguments hold no macros (they do not nest): c.arg is free.
			c.arg, _ = c.expandOne(c.arg[:0], p.arg, m)
			pr := c.parseRefCached(c.arg, p.macro)
			e.key, e.pr, e.arg = string(key), pr, append(e.arg[:0], c.arg...)
			return pr, c.arg
		}
	}
	c.arg, _ = c.expandOne(c.arg[:0], p.arg, m)
	return c.parseRefCached(c.arg, p.macro), c.arg
}

// refCache is what a macro's argument parses to by the values of its
// groups (argRef): refCacheSize entries by a hash of the key (the values,
// each after its length), each holding the last that fell there.
type refCache struct {
	e [refCacheSize]struct {
		key string
		pr  parsedRef
		arg []byte
	}
}

const refCacheSize = 32

// parseRefCached parses a macro's argument, once for each text (and
// whether it is $ATTR's, which ends in an attribute).
func (c *Converter) parseRefCached(argb []byte, k macroKind) parsedRef {
	refs := c.refs[0]
	if k == mAttr {
		refs = c.refs[1]
	}
	pr, ok := refs[string(argb)]
	if !ok {
		arg := string(argb)
		pr.r, pr.err = parseRef(arg, k == mAttr)
		if len(refs) >= maxParsed {
			clear(refs)
		}
		refs[arg] = pr
	}
	return pr
}

// macro appends the value of a macro with its argument expanded (argb;
// pr what it parses to).
func (c *Converter) macro(dst []byte, k macroKind, argb []byte, pr parsedRef) ([]byte, string) {
	r, err := pr.r, pr.err
	if err != nil {
		return dst, fmt.Sprintf("$%s{%s}: %v", macroName(k), argb, err)
	}
	var ns int64
	if r.hasTime {
		t, err := ParseTime(r.time, c.radix(), c.unit())
		if err != nil {
			return dst, fmt.Sprintf("$%s{%s}: %v", macroName(k), argb, err)
		}
		ns = t.NS
	}
	c.sel, err = c.st.Select(c.sel, r.res, r.cond, ns, r.hasTime)
	if err != nil {
		return dst, fmt.Sprintf("$%s{%s}: %v", macroName(k), argb, err)
	}
	switch k {
	case mExist:
		if len(c.sel) > 0 {
			return append(dst, "True"...), ""
		}
		return append(dst, "False"...), ""
	case mCount:
		return strconv.AppendInt(dst, int64(len(c.sel)), 10), ""
	}
	if len(c.sel) != 1 {
		return dst, fmt.Sprintf("$%s{%s}: designates %d resources, not one", macroName(k), argb, len(c.sel))
	}
	if k == mResName {
		return append(dst, c.sel[0].Name...), ""
	}
	v, err := c.st.AttrValue(c.sel[0], r.attr, ns, r.hasTime)
	if err != nil {
		return dst, fmt.Sprintf("$%s{%s}: %v", macroName(k), argb, err)
	}
	return append(dst, v...), ""
}

// timeBase is how macros read [TIME]: set by the reader.
type timeBase struct {
	radix int
	unit  TimeUnit
}

var defaultBase = timeBase{10, ingest.TimeUnit{Name: "us", Mul: 1_000, Div: 1}}

func (c *Converter) radix() int {
	if c.st.base.radix == 0 {
		return defaultBase.radix
	}
	return c.st.base.radix
}

func (c *Converter) unit() TimeUnit {
	if c.st.base.unit.Mul == 0 {
		return defaultBase.unit
	}
	return c.st.base.unit
}

// SetNames names the rule sets, for messages: "asp", "sets a, b".
func (c *Converter) SetNames() string {
	var names []string
	for _, r := range c.rules {
		if len(names) == 0 || names[len(names)-1] != r.set {
			names = append(names, r.set)
		}
	}
	if len(names) == 1 {
		return "set " + names[0]
	}
	return "sets " + strings.Join(names, ", ")
}

// Rules returns how many rules were compiled.
func (c *Converter) Rules() int { return len(c.rules) }

// requiredLiteral returns a text that every match of a .NET pattern
// contains: the longest run of literal characters outside groups, classes
// and optional parts, when the pattern has no alternation at its top
// level and no option that changes how literals match. "" when it cannot
// tell. Trying a line against every rule is most of the conversion's
// time; most lines lack most rules' literals.
func requiredLiteral(p string) string {
	rs := []rune(p)
	var best, cur []rune
	flush := func() {
		if len(cur) > len(best) {
			best = cur
		}
		cur = nil
	}
	// skipGroup returns the index after the ")" closing the "(" at i.
	skipClass := func(i int) int { // i at '['
		j := i + 1
		if j < len(rs) && rs[j] == '^' {
			j++
		}
		if j < len(rs) && rs[j] == ']' {
			j++
		}
		for j < len(rs) {
			switch rs[j] {
			case '\\':
				j += 2
				continue
			case '[':
				j = skipClassNested(rs, j)
				continue
			case ']':
				return j + 1
			}
			j++
		}
		return -1
	}
	skipGroup := func(i int) int {
		depth := 0
		for j := i; j < len(rs); {
			switch rs[j] {
			case '\\':
				j += 2
				continue
			case '[':
				k := skipClass(j)
				if k < 0 {
					return -1
				}
				j = k
				continue
			case '(':
				depth++
			case ')':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
			j++
		}
		return -1
	}
	for i := 0; i < len(rs); {
		c := rs[i]
		switch {
		case c == '\\':
			if i+1 >= len(rs) {
				return ""
			}
			n := rs[i+1]
			if n < 0x80 && (unicode.IsLetter(n) || unicode.IsDigit(n)) {
				switch n {
				case 'd', 'D', 'w', 'W', 's', 'S', 'b', 'B', 'A', 'z', 'Z', 'G', 't', 'n', 'r', 'f', 'v', 'e', 'a':
					flush()
					i += 2
					continue
				}
				return "" // \p{..}, \k<..>, \u...., \x.., backreferences: not worth reading
			}
			cur = append(cur, n)
			i += 2
		case c == '[':
			flush()
			j := skipClass(i)
			if j < 0 {
				return ""
			}
			i = j
		case c == '(':
			if i+2 < len(rs) && rs[i+1] == '?' {
				// (?imnsx-imnsx) and (?imnsx:...) change how literals match.
				j := i + 2
				for j < len(rs) && strings.ContainsRune("imnsx-", rs[j]) {
					j++
				}
				if j > i+2 && j < len(rs) && (rs[j] == ')' || rs[j] == ':') {
					return ""
				}
			}
			flush()
			j := skipGroup(i)
			if j < 0 {
				return ""
			}
			i = j
		case c == '|':
			return ""
		case c == '*' || c == '?' || c == '{':
			if len(cur) > 0 {
				cur = cur[:len(cur)-1] // the char before is optional
			}
			flush()
			if c == '{' {
				j := i + 1
				for j < len(rs) && (rs[j] >= '0' && rs[j] <= '9' || rs[j] == ',') {
					j++
				}
				if j == i+1 || j >= len(rs) || rs[j] != '}' {
					return "" // "{" as text: not worth telling apart
				}
				i = j + 1
			} else {
				i++
			}
		case c == '+':
			flush() // the char before is there at least once: kept
			i++
		case c == '.' || c == '^' || c == '$' || c == ')':
			flush()
			i++
		default:
			cur = append(cur, c)
			i++
		}
	}
	flush()
	return string(best)
}

// skipClassNested skips a nested class (subtraction: [a-z-[aeiou]]).
func skipClassNested(rs []rune, i int) int {
	for j := i + 1; j < len(rs); j++ {
		switch rs[j] {
		case '\\':
			j++
		case ']':
			return j + 1
		}
	}
	return len(rs)
}
