package tlv

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dlclark/regexp2"
)

// checkFast compares the Go form of a pattern with regexp2 on a line:
// where the fast path answers, it must give regexp2's match and groups.
func checkFast(t testing.TB, pattern, line string) (used bool) {
	re2, err := regexp2.Compile(pattern, regexp2.None)
	if err != nil {
		return false
	}
	re2.MatchTimeout = time.Second
	return checkFastRE(t, pattern, re2, compileFast(pattern, re2), line)
}

func checkFastRE(t testing.TB, pattern string, re2 *regexp2.Regexp, f *fastRE, line string) (used bool) {
	if f == nil || !isASCII(line) || strings.Contains(line, "\n") {
		return false
	}
	loc, ok := f.match(line)
	if !ok {
		return false
	}
	loc = slices.Clone(loc)
	// Again: the rest of the line is remembered now (fastRE.memo).
	if again, ok2 := f.match(line); !ok2 || !slices.Equal(again, loc) {
		t.Fatalf("%s on %q: %v, then %v", pattern, line, loc, again)
	}
	// The machine of vm.go (match's first try) and Go's regexp agree
	// where both answer.
	if gloc, gok := f.goMatch(line); gok {
		if (gloc == nil) != (loc == nil) {
			t.Fatalf("%s on %q: match %v, Go's regexp %v", pattern, line, loc != nil, gloc != nil)
		}
		for n, gi := range f.groups {
			if gi >= 0 && loc != nil && (loc[2*gi] != gloc[2*gi] || loc[2*gi+1] != gloc[2*gi+1]) {
				t.Fatalf("%s on %q: group %d at %v, Go's regexp %v", pattern, line, n, loc[2*gi:2*gi+2], gloc[2*gi:2*gi+2])
			}
		}
	}
	m, err := re2.FindStringMatch(line)
	if err != nil {
		return false // a timeout: nothing to compare
	}
	if (m == nil) != (loc == nil) {
		t.Fatalf("%s on %q: regexp2 match %v, Go %v", pattern, line, m != nil, loc != nil)
	}
	if m == nil {
		return true
	}
	if next, _ := re2.FindNextMatch(m); next != nil {
		t.Fatalf("%s on %q: a second match at %d", pattern, line, next.Index)
	}
	for _, n := range re2.GetGroupNumbers() {
		g := m.GroupByNumber(n)
		want := [2]int{-1, -1}
		if len(g.Captures) > 0 {
			want = [2]int{g.Index, g.Index + g.Length}
		}
		got := [2]int{-1, -1}
		if gi := f.groups[n]; gi >= 0 {
			got = [2]int{loc[2*gi], loc[2*gi+1]}
		}
		if got != want {
			t.Fatalf("%s on %q: group %d at %v, regexp2 %v", pattern, line, n, got, want)
		}
	}
	return true
}

// fastPatterns are patterns beyond the rule files': what the translation
// must get right or refuse.
var fastPatterns = []string{
	`^(a+)+$`, `^(a|ab)(c|bcd)(d*)$`, `^a*?(b)?`, `^(?:(a)|b)+$`, `^(?<x>\w+)(\d)(?<y>\s*)$`,
	`^[^.\s]+\.`, `^[a-c\-]+`, `^[\w-]+`, `^x{2,3}`, `^x{,3}`, `^(?!ab)\w+`, `^(?=a)\w+`,
	`^(?!a|b)(\w)+`, `^((?!x)y)+`, `^(?i)abc`, `^\bab`, `^a\Z`, `^a$`, `^[]a]`, `^.+$`, `^(a*)*$`,
	`^(?<n>a)|b`, `^\p{L}+`, `^(?<1>a)(b)`, `^(a)(?<n>b)(c)`, `^\[(?<time>[0-9A-Fa-f]+)\]:\[(?<prc>\d+)(?::\d+)?\]: (?<rest>.*)`,
	`^(?<svc>(?![ix]|sns|get_utm|ext_ker)\w\w+_\w+)(?: (?<args>.+))?\.?\s*$`, `^\x41`, `^a#b c`, `^[a-z-[aeiou]]+`,
}

func TestFastMatchesRegexp2(t *testing.T) {
	patterns := rulePatterns(t)
	for _, p := range patterns {
		if !strings.HasPrefix(p, "^") {
			continue
		}
		if f := compileFast(p, regexp2.MustCompile(p, regexp2.None)); f == nil {
			t.Errorf("rule %s has no fast form", p)
		} else if f.vm == nil {
			t.Errorf("rule %s has no machine (vm.go)", p)
		}
	}
	patterns = append(patterns, fastPatterns...)
	logs, _ := filepath.Glob(filepath.Join(external, "*.log"))
	logs = append(logs, "testdata/fig1/fig1.log", "testdata/fmp-reorder/fmp-reorder.log", "testdata/example/tiny.log", "testdata/fuzzrules/fuzzrules.log")
	seen := map[string]bool{}
	var lines []string
	for _, l := range logs {
		b, err := os.ReadFile(l)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			line = strings.TrimRight(line, "\r")
			// The shapes of the lines, and the tail of each after its
			// prefix (for the patterns above).
			for _, x := range []string{line, line[strings.IndexByte(line, ']')+1:], strings.TrimLeft(line[strings.IndexByte(line, ']')+1:], " :[0123456789]")} {
				if !seen[x] {
					seen[x] = true
					lines = append(lines, x)
				}
			}
		}
	}
	lines = append(lines, "", "a", "aaaa", "aaaa!", "abcd", "abbcd", "ab", "ba", "x", "xx", "xxxx", "x{,3}", "]a", "a#b c", "sns_x", "act_tsk 3", "iact_tsk", "A", "a-b_c", "ab\tcd", "a\vb")
	used := 0
	for _, p := range patterns {
		re2 := regexp2.MustCompile(p, regexp2.None)
		re2.MatchTimeout = time.Second
		f := compileFast(p, re2)
		for _, line := range lines {
			if checkFastRE(t, p, re2, f, line) {
				used++
			}
		}
	}
	t.Logf("%d patterns, %d lines, %d compared", len(patterns), len(lines), used)
}

func FuzzFastMatchesRegexp2(f *testing.F) {
	for _, p := range fastPatterns {
		f.Add(p, "[12ab]:[1]: enter to act_tsk 3.")
	}
	f.Add(`^\[(?<time>[0-9A-Fa-f]+)\] enter to (?<svc>(?![ix]|sns|get_utm|ext_ker)\w\w+_\w+)(?: (?<args>.+))?\.?\s*$`, "[1f] enter to act_tsk tskid=3.")
	f.Fuzz(func(t *testing.T, pattern, line string) {
		if len(pattern) > 200 || len(line) > 200 {
			return
		}
		checkFast(t, pattern, line)
	})
}
