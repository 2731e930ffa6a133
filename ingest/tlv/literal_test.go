package tlv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dlclark/regexp2"
)

func TestRequiredLiteral(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`\[(?<time>\d+)\] dispatch to task (?<id>\d+)\.`, "] dispatch to task "},
		{`\[(?<time>\d+)\] enter to (?<name>(?!sns)[^ix]\w+[_]\w+)( (?<args>.+))?\.?`, "] enter to "},
		{`^\[(?<time>[0-9A-Fa-f]+)\]:\[(?<prc>\d+)(?::\d+)?\]: task (?<id>\d+) becomes (?<state>[^.]+)\.?\s*$`, " becomes "},
		{`abc|def`, ""},
		{`(?i)dispatch`, ""},
		{`a(?i:b)cde`, ""},
		{`dispatchx?`, "dispatch"},
		{`dispatchx*y`, "dispatch"},
		{`ab+c`, "ab"},
		{`x{2}abc`, "abc"},
		{`x{a}`, ""},
		{`[a-z-[aeiou]]bcd`, "bcd"},
		{`[]x]yz`, "yz"},
		{`\p{L}abc`, ""},
		{`\u0041bc`, ""},
		{`日本語\.`, "日本語."},
		{`a\d+bcd\s`, "bcd"},
		{`(unbalanced`, ""},
	} {
		if got := requiredLiteral(c.in); got != c.want {
			t.Errorf("%s: %q, want %q", c.in, got, c.want)
		}
	}
}

// TestRequiredLiteralHolds: on every line of the real logs, a rule that
// matches has its literal in the line.
func TestRequiredLiteralHolds(t *testing.T) {
	patterns := rulePatterns(t)
	logs, _ := filepath.Glob(filepath.Join(external, "*.log"))
	logs = append(logs, "testdata/fig1/fig1.log", "testdata/fmp-reorder/fmp-reorder.log", "testdata/example/tiny.log", "testdata/fuzzrules/fuzzrules.log")
	var lines []string
	for _, l := range logs {
		b, err := os.ReadFile(l)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, strings.Split(string(b), "\n")...)
	}
	checked := 0
	for _, p := range patterns {
		re := regexp2.MustCompile(p, regexp2.None)
		lit := requiredLiteral(p)
		for _, line := range lines {
			line = strings.TrimRight(line, "\r")
			ok, _ := re.MatchString(line)
			if ok {
				checked++
				if !strings.Contains(line, lit) {
					t.Fatalf("%s matches %q, which lacks %q", p, line, lit)
				}
			}
		}
	}
	t.Logf("%d patterns, %d lines, %d matches checked", len(patterns), len(lines), checked)
}

// FuzzRequiredLiteral: whenever a pattern matches a line, the line holds
// the pattern's required literal.
func FuzzRequiredLiteral(f *testing.F) {
	f.Add(`\[(?<t>\d+)\] dispatch to task (?<id>\d+)\.`, "[12] dispatch to task 3.")
	f.Add(`ab+c|x`, "x")
	f.Add(`a{2,3}bc?d`, "aabd")
	f.Add(`(?i)ABC`, "abc")
	f.Add(`[]a]bc\.d*e`, "]bc.e")
	f.Fuzz(func(t *testing.T, pattern, line string) {
		re, err := regexp2.Compile(pattern, regexp2.None)
		if err != nil {
			return
		}
		re.MatchTimeout = 50 * time.Millisecond
		ok, err := re.MatchString(line)
		if err != nil || !ok {
			return
		}
		line = string([]rune(line)) // what Convert checks: the text the pattern sees
		if lit := requiredLiteral(pattern); !strings.Contains(line, lit) {
			t.Fatalf("%q matches %q, which lacks %q", pattern, line, lit)
		}
	})
}

// rulePatterns is every rule pattern of the bundled and test rule files.
func rulePatterns(t *testing.T) []string {
	t.Helper()
	var patterns []string
	for _, f := range []string{"bundled/asp.cnv", "bundled/fmp.cnv", "testdata/fuzzrules/fuzzrules.cnv", "testdata/fig8/fig8.cnv", "testdata/example/tiny.cnv"} {
		sets, err := LoadRules(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range sets {
			for _, r := range s.Rules {
				patterns = append(patterns, r.Pattern)
			}
		}
	}
	return patterns
}
