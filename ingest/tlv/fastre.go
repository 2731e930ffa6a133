package tlv

import (
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
	"sync"

	"github.com/dlclark/regexp2"
)

// A rule's .NET pattern is matched by regexp2, a backtracking engine that
// costs microseconds a line and needs a timeout. Most rules are plain
// (TOPPERS's: an anchored line of literals, classes and groups): they are
// also compiled for Go's regexp, which is linear in the line (no timeout
// needed) and several times faster, and which gives the same match as
// long as
//
//   - the line is ASCII without "\n": \d, \w, \s are then the ASCII sets
//     regexp2 gives them (read from regexp2 itself, below), . and $ mean
//     the same, and byte offsets are rune offsets;
//   - the pattern starts with ^ (one match at most: Go and .NET step
//     differently after an empty match);
//   - it uses only what is translated below; anything else (options,
//     backreferences, lookbehind, \p, atomic groups, ...) keeps regexp2.
//
// Go's regexp picks the match a backtracking engine would (leftmost-first),
// with the same captures. A look-ahead (?!X) or (?=X), outside any
// quantifier and without groups inside, becomes an empty marker group;
// X is then tried where the marker matched. When it holds, the match is
// the one .NET finds: every path .NET prefers failed without the
// look-ahead, so fails with it. When it does not hold, .NET would go on
// backtracking: that line is matched by regexp2.
type fastRE struct {
	re     *regexp.Regexp
	groups []int // per .NET group number: the Go group number, -1 when none
	looks  []fastLook
	vm     *vmProg // the machine of vm.go, nil when it cannot do the pattern
	st     vmState

	// The matches of the rest of a line after the machine's deterministic
	// beginning (vmProg.prefixEnd), by that rest: TOPPERS lines differ in
	// their times, and their rests ("enter to wai_sem semid=1.") recur.
	det  int
	memo map[string]*vmMemo
}

// vmMemo is how the rest of a line matches: the captures it set, as
// offsets from where the rest begins, memoUnset for those it left as the
// beginning set them.
type vmMemo struct {
	matched bool
	caps    []int32
}

const (
	memoUnset   = -2
	maxMemo     = 4096 // rests remembered per rule (then forgotten, all)
	maxMemoRest = 256  // longer rests are not remembered
)

type fastLook struct {
	group  int // the marker's Go group number
	re     *regexp.Regexp
	tree   *syntax.Regexp
	negate bool
}

// asciiClasses are the ASCII characters regexp2 puts in \d, \w and \s,
// as the inside of a Go class.
var asciiClasses = sync.OnceValue(func() map[byte]string {
	m := map[byte]string{}
	for _, k := range []byte{'d', 'w', 's'} {
		re := regexp2.MustCompile(`^\`+string(k)+`$`, regexp2.None)
		var b strings.Builder
		for ch := 0; ch < 0x80; ch++ {
			if ok, _ := re.MatchString(string(rune(ch))); ok {
				b.WriteString(`\x{` + strconv.FormatInt(int64(ch), 16) + `}`)
			}
		}
		m[k] = b.String()
	}
	return m
})

// compileFast returns the Go form of a pattern that has one, else nil.
func compileFast(pattern string, re2 *regexp2.Regexp) *fastRE {
	t := translator{src: pattern}
	goPat, ok := t.translate(0, false)
	if !ok || !strings.HasPrefix(pattern, "^") {
		return nil
	}
	tree, err := syntax.Parse(goPat, syntax.Perl)
	if err != nil || !anchoredOnce(tree) || markerQuantified(tree, false) || emptyLoop(tree) {
		return nil
	}
	re, err := regexp.Compile(goPat)
	if err != nil {
		return nil
	}
	f := &fastRE{re: re}
	// .NET numbers unnamed groups first, then named ones; Go in order.
	nums := re2.GetGroupNumbers()
	maxNum := 0
	for _, n := range nums {
		maxNum = max(maxNum, n)
	}
	f.groups = make([]int, maxNum+1)
	for i := range f.groups {
		f.groups[i] = -1
	}
	f.groups[0] = 0
	unnamed, named := 0, 0
	for gi, name := range re.SubexpNames() {
		switch {
		case gi == 0:
		case strings.HasPrefix(name, lookPrefix):
			k, _ := strconv.Atoi(name[len(lookPrefix):])
			f.looks = append(f.looks, fastLook{group: gi, re: t.looks[k].re, negate: t.looks[k].negate})
		case name == "":
			unnamed++
			if unnamed > maxNum || re2.GroupNameFromNumber(unnamed) != strconv.Itoa(unnamed) {
				return nil
			}
			f.groups[unnamed] = gi
		default:
			named++
			n := re2.GroupNumberFromName(name)
			if n < 0 || f.groups[n] != -1 {
				return nil
			}
			f.groups[n] = gi
		}
	}
	if 1+unnamed+named != len(nums) {
		return nil
	}
	looks := make([]*syntax.Regexp, len(t.looks))
	negate := make([]bool, len(t.looks))
	for k, l := range t.looks {
		if l.tree == nil || emptyLoop(l.tree) {
			return f
		}
		looks[k], negate[k] = l.tree, l.negate
	}
	f.vm = compileVM(tree, re.NumSubexp(), looks, negate)
	if f.vm != nil {
		if f.det = f.vm.prefixEnd(); f.det > 0 {
			f.memo = map[string]*vmMemo{}
		}
	}
	return f
}

// anchoredOnce reports whether a Go pattern starts with ^ (begin of text).
func anchoredOnce(re *syntax.Regexp) bool {
	for re.Op == syntax.OpConcat || re.Op == syntax.OpCapture {
		if len(re.Sub) == 0 {
			return false
		}
		re = re.Sub[0]
	}
	return re.Op == syntax.OpBeginText
}

// markerQuantified reports whether a look-ahead's marker is inside a
// repetition (it would stand for its last iteration only).
func markerQuantified(re *syntax.Regexp, inLoop bool) bool {
	if re.Op == syntax.OpCapture && strings.HasPrefix(re.Name, lookPrefix) && inLoop {
		return true
	}
	loop := inLoop || re.Op == syntax.OpStar || re.Op == syntax.OpPlus || re.Op == syntax.OpQuest || re.Op == syntax.OpRepeat
	for _, s := range re.Sub {
		if markerQuantified(s, loop) {
			return true
		}
	}
	return false
}

const lookPrefix = "tlvlook"

type translator struct {
	src   string
	i     int
	looks []fastLook // by marker number; group unused
}

// translate translates from t.i to the end, or to the ")" closing a
// group when inGroup; ok is false for anything not translated.
func (t *translator) translate(depth int, inGroup bool) (string, bool) {
	var b strings.Builder
	s := t.src
	// atom: what was just written can take a quantifier. "{n}" after
	// nothing, "^", "$", "|" or a quantifier is not translated: .NET
	// repeats the anchor (^{0} matches), Go takes the braces as text.
	atom := false
	for t.i < len(s) {
		c := s[t.i]
		wasAtom := atom
		atom = true
		switch {
		case c >= 0x80 || c < 0x20:
			return "", false
		case c == ')':
			if !inGroup {
				return "", false
			}
			t.i++
			return b.String(), true
		case c == '(':
			if depth > 20 {
				return "", false
			}
			t.i++
			head := "("
			look := 0 // 1: (?=, 2: (?!
			if strings.HasPrefix(s[t.i:], "?:") {
				head, t.i = "(?:", t.i+2
			} else if strings.HasPrefix(s[t.i:], "?=") {
				look, t.i = 1, t.i+2
			} else if strings.HasPrefix(s[t.i:], "?!") {
				look, t.i = 2, t.i+2
			} else if strings.HasPrefix(s[t.i:], "?<") && t.i+2 < len(s) && s[t.i+2] != '=' && s[t.i+2] != '!' {
				end := strings.IndexByte(s[t.i:], '>')
				if end < 0 {
					return "", false
				}
				name := s[t.i+2 : t.i+end]
				if !goodGroupName(name) {
					return "", false
				}
				head, t.i = "(?P<"+name+">", t.i+end+1
			} else if strings.HasPrefix(s[t.i:], "?") {
				return "", false
			}
			inner, ok := t.translate(depth+1, true)
			if !ok {
				return "", false
			}
			if look != 0 {
				tree, err := syntax.Parse(inner, syntax.Perl)
				if err != nil || hasCaptureOrAnchor(tree) {
					return "", false
				}
				re, err := regexp.Compile(`^(?:` + inner + `)`)
				if err != nil {
					return "", false
				}
				lookTree, err := syntax.Parse(`^(?:`+inner+`)`, syntax.Perl)
				if err != nil {
					lookTree = nil
				}
				b.WriteString("(?P<" + lookPrefix + strconv.Itoa(len(t.looks)) + ">)")
				t.looks = append(t.looks, fastLook{re: re, tree: lookTree, negate: look == 2})
				if t.i < len(s) && strings.IndexByte("*+?{", s[t.i]) >= 0 {
					return "", false // a quantified look-ahead: rare, not worth it
				}
				atom = false
				continue
			}
			b.WriteString(head + inner + ")")
		case c == '[':
			cls, ok := t.class()
			if !ok {
				return "", false
			}
			b.WriteString(cls)
		case c == '\\':
			if t.i+1 >= len(s) {
				return "", false
			}
			n := s[t.i+1]
			t.i += 2
			switch {
			case n == 'd' || n == 'w' || n == 's':
				b.WriteString("[" + asciiClasses()[n] + "]")
			case n == 'D' || n == 'W' || n == 'S':
				b.WriteString("[^" + asciiClasses()[n|0x20] + "]")
			case n == 't' || n == 'n' || n == 'r' || n == 'f' || n == 'v':
				b.WriteString(`\` + string(n))
			case n < 0x80 && !isAlnum(n):
				b.WriteString(`\` + string(n))
			default:
				return "", false
			}
		case c == '{':
			if !wasAtom {
				return "", false
			}
			atom = false
			j := t.i + 1
			for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == ',') {
				j++
			}
			q := s[t.i+1 : min(j, len(s))]
			if j >= len(s) || s[j] != '}' || !goodRepeat(q) {
				return "", false
			}
			b.WriteString(s[t.i : j+1])
			t.i = j + 1
		default: // letters, digits, . ^ $ | * + ? and other punctuation mean the same
			atom = strings.IndexByte("^$|*+?", c) < 0
			if c == ']' || c == '}' {
				b.WriteString(`\` + string(c))
			} else {
				b.WriteByte(c)
			}
			t.i++
		}
	}
	if inGroup {
		return "", false
	}
	return b.String(), true
}

// class translates a character class: ASCII literals, ranges, escaped
// punctuation and \d \w \s; no subtraction, no leading "]".
func (t *translator) class() (string, bool) {
	s := t.src
	i := t.i + 1
	var b strings.Builder
	b.WriteByte('[')
	if i < len(s) && s[i] == '^' {
		b.WriteByte('^')
		i++
	}
	first, prevEscape := true, false
	for i < len(s) {
		c := s[i]
		switch {
		case c >= 0x80 || c < 0x20:
			return "", false
		case c == ']':
			if first {
				return "", false
			}
			b.WriteByte(']')
			t.i = i + 1
			return b.String(), true
		case c == '[':
			return "", false
		case c == '-' && i+1 < len(s) && s[i+1] == '[':
			return "", false // subtraction
		case c == '\\':
			if i+1 >= len(s) {
				return "", false
			}
			n := s[i+1]
			switch {
			case n == 'd' || n == 'w' || n == 's':
				b.WriteString(asciiClasses()[n])
			case n == 't' || n == 'n' || n == 'r' || n == 'f' || n == 'v':
				b.WriteString(`\` + string(n))
			case n < 0x80 && !isAlnum(n):
				b.WriteString(`\` + string(n))
			default:
				return "", false
			}
			i += 2
			first, prevEscape = false, true
			continue
		case c == '-':
			// A range's dash between two literals, or a literal dash at an
			// end, means the same in both syntaxes; next to an escape it
			// is not worth telling apart.
			if i+1 < len(s) && s[i+1] == '\\' || prevEscape {
				return "", false
			}
			b.WriteByte('-')
		case c == ':' || c == '^':
			b.WriteString(`\` + string(c))
		default:
			b.WriteByte(c)
		}
		i++
		first, prevEscape = false, false
	}
	return "", false
}

func goodGroupName(n string) bool {
	if n == "" || !(n[0] == '_' || n[0] >= 'a' && n[0] <= 'z' || n[0] >= 'A' && n[0] <= 'Z') {
		return false
	}
	for i := 0; i < len(n); i++ {
		if !isAlnum(n[i]) && n[i] != '_' {
			return false
		}
	}
	return !strings.HasPrefix(n, lookPrefix)
}

// goodRepeat accepts n, n, and n,m (numbers below 1000, as Go wants).
func goodRepeat(q string) bool {
	lo, hi, comma := strings.Cut(q, ",")
	small := func(x string) bool { // Go takes "{01}" as text: no leading zeros
		n, err := strconv.Atoi(x)
		return err == nil && n < 1000 && x[0] != '+' && (x[0] != '0' || len(x) == 1)
	}
	if !small(lo) {
		return false
	}
	return !comma || hi == "" || small(hi)
}

// emptyLoop reports a repetition of what can match empty ((a*)*): there
// Go and backtracking engines choose differently.
func emptyLoop(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpStar, syntax.OpPlus, syntax.OpRepeat:
		if canBeEmpty(re.Sub[0]) {
			return true
		}
	}
	for _, s := range re.Sub {
		if emptyLoop(s) {
			return true
		}
	}
	return false
}

func canBeEmpty(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpLiteral:
		return len(re.Rune) == 0
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL, syntax.OpNoMatch:
		return false
	case syntax.OpCapture, syntax.OpPlus:
		return canBeEmpty(re.Sub[0])
	case syntax.OpRepeat:
		return re.Min == 0 || canBeEmpty(re.Sub[0])
	case syntax.OpConcat:
		for _, s := range re.Sub {
			if !canBeEmpty(s) {
				return false
			}
		}
		return true
	case syntax.OpAlternate:
		for _, s := range re.Sub {
			if canBeEmpty(s) {
				return true
			}
		}
		return false
	}
	return true // empty, anchors, star, quest
}

func hasCaptureOrAnchor(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpCapture, syntax.OpBeginText, syntax.OpEndText, syntax.OpBeginLine, syntax.OpEndLine:
		return true
	}
	for _, s := range re.Sub {
		if hasCaptureOrAnchor(s) {
			return true
		}
	}
	return false
}

// match matches an ASCII line without "\n": loc holds the Go groups'
// offsets (nil: no match); ok false when the look-aheads send the line
// to regexp2.
func (f *fastRE) match(line string) (loc []int, ok bool) {
	if f.vm == nil {
		return f.goMatch(line)
	}
	if f.det > 0 {
		pos, ok := f.vm.prefix(&f.st, line, f.det)
		if !ok {
			return nil, true
		}
		if rest := line[pos:]; len(rest) <= maxMemoRest {
			m := f.memo[rest]
			if m == nil {
				// The rest alone, from where the beginning left off.
				var st vmState
				matched, _, ok := f.vm.exec(&st, rest, f.det, memoUnset, 0, vmBudget(len(line)))
				if !ok {
					return f.goMatch(line)
				}
				m = &vmMemo{matched: matched}
				if matched {
					m.caps = make([]int32, len(st.caps))
					for i, c := range st.caps {
						m.caps[i] = int32(c)
					}
				}
				if len(f.memo) >= maxMemo {
					clear(f.memo)
				}
				f.memo[strings.Clone(rest)] = m
			}
			if !m.matched {
				return nil, true
			}
			caps := f.st.caps
			for i, c := range m.caps {
				if c != memoUnset {
					caps[i] = pos + int(c)
				}
			}
			caps[0], caps[1] = 0, pos+int(m.caps[1])
			return caps, true
		}
	}
	if m, ok := f.vm.run(&f.st, line, vmBudget(len(line))); ok {
		if !m {
			return nil, true
		}
		return f.st.caps, true
	}
	return f.goMatch(line)
}

// goMatch is match by Go's regexp (and regexp2 when a look-ahead does
// not hold where Go's match put it).
func (f *fastRE) goMatch(line string) (loc []int, ok bool) {
	loc = f.re.FindStringSubmatchIndex(line)
	if loc == nil {
		return nil, true
	}
	for _, l := range f.looks {
		at := loc[2*l.group]
		if at < 0 {
			continue // not on the path taken
		}
		if l.re.MatchString(line[at:]) == l.negate {
			return nil, false
		}
	}
	return loc, true
}
