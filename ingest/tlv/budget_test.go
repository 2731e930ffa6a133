package tlv

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/traceduck/traceduck/schema"
)

// hostilePattern backtracks exponentially over each run of x before it
// matches the z after it (unanchored, it stays on regexp2), and
// hostileLine(19, 60) is a line of 1200 bytes with 60 such runs: 60
// matches of 0.1 to 0.3 s each. Before the line had a bound of time, each
// match had its own timeout of 1 s, and that line took 6 to 19 s.
const hostilePattern = `(?:(x+x+)+y|z)`

func hostileLine(run, n int) string { return strings.Repeat(strings.Repeat("x", run)+"z", n) }

// fakeClock is the converter's clock in these tests: every regexp2 call
// is measured by two readings, and each call takes step.
type fakeClock struct {
	t     time.Time
	step  time.Duration
	reads int
}

func (f *fakeClock) now() time.Time {
	f.reads++
	if f.reads%2 == 0 {
		f.t = f.t.Add(f.step)
	}
	return f.t
}

func hostileConverter(t *testing.T, step time.Duration) *Converter {
	t.Helper()
	sets := []RuleSet{{Name: "slow", Rules: []Rule{
		{Pattern: `^\[(?<t>\d+)\] go$`, Outputs: []Output{{Template: "[${t}]TASK1.state=RUNNING"}}, Pos: Pos{File: "slow.cnv", Line: 2, Col: 3}},
		{Pattern: hostilePattern, Pos: Pos{File: "slow.cnv", Line: 3, Col: 3}},
	}}}
	c, err := Compile(sets, testState(t), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c.now = (&fakeClock{t: time.Unix(0, 0), step: step}).now
	return c
}

// TestLineBudget: the regular expressions of a line have 1 s in all, every
// match of every rule together: the 60 slow matches of the hostile line
// stop at the fourth (0.3 s each by the clock), not after 60.
func TestLineBudget(t *testing.T) {
	c := hostileConverter(t, 300*time.Millisecond)
	_, err := c.Convert(hostileLine(19, 60), 1, func(string, *crule, int) error { return nil }, func(Problem) {})
	var te *TimeoutError
	if !errors.As(err, &te) {
		t.Fatalf("got %v, want a timeout", err)
	}
	if c.calls != 4 {
		t.Errorf("%d regexp2 calls on the line, want 4 (1 s at 0.3 s a call)", c.calls)
	}
	if want := `rule slow rule "(?:(x+x+)+y|z)": the regular expressions took longer than 1s on this line, most of it this rule's (a pathological pattern?)`; err.Error() != want {
		t.Errorf("got  %s\nwant %s", err, want)
	}
}

// hostileReader is a Reader with the rules of hostileConverter, its
// conversion measured by a fake clock; rep gets what is wrong.
func hostileReader(t *testing.T, step time.Duration, rules []Rule, rep *collect) *Reader {
	t.Helper()
	useLoader(t)
	s, err := LoadSetup(filepath.Join("testdata", "fig8", "fig8.res"), []string{filepath.Join("testdata", "fig8")}, []string{filepath.Join("testdata", "common.resh")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rd, err := NewReader(s, rep, rep)
	if err != nil {
		t.Fatal(err)
	}
	if rd.Conv, err = Compile([]RuleSet{{Name: "slow", Rules: rules}}, rd.St, time.Second); err != nil {
		t.Fatal(err)
	}
	rd.Conv.now = (&fakeClock{t: time.Unix(0, 0), step: step}).now
	return rd
}

var (
	goRule      = Rule{Pattern: `^\[(?<t>\d+)\] go$`, Outputs: []Output{{Template: "[${t}]TASK1.state=RUNNING"}}, Pos: Pos{File: "slow.cnv", Line: 2, Col: 3}}
	hostileRule = Rule{Pattern: hostilePattern, Pos: Pos{File: "slow.cnv", Line: 3, Col: 3}}
)

// TestRuleTimeouts: with --skip-bad, each line that takes its budget is
// skipped, and after MaxRuleTimeouts of them the rule that took most of
// the time is no longer tried: one warning names it, the lines, and the
// lines it was not tried on. The other rules go on.
func TestRuleTimeouts(t *testing.T) {
	rep := &collect{skip: true}
	rd := hostileReader(t, 300*time.Millisecond, []Rule{goRule, hostileRule}, rep)
	bad := hostileLine(12, 60)
	var callsAt5 int64
	for i, line := range []string{"[1] go", bad, "[2] go", bad, bad, bad, "[3] go"} {
		if err := rd.Line(line, int64(i+1), schema.NoCPU); err != nil {
			t.Fatal(err)
		}
		if i+1 == 5 {
			callsAt5 = rd.Conv.calls
		}
	}
	rd.Finish()
	if callsAt5 != 3*4+2 { // 4 calls on each bad line, 1 on each good one
		t.Errorf("%d regexp2 calls up to line 5, want 14", callsAt5)
	}
	if rd.Conv.calls != callsAt5 {
		t.Errorf("%d regexp2 calls after line 5: the rule was tried", rd.Conv.calls-callsAt5)
	}
	msg := `rule slow rule "(?:(x+x+)+y|z)": the regular expressions took longer than 1s on this line, most of it this rule's (a pathological pattern?)`
	if want := []string{"line 2: " + msg, "line 4: " + msg, "line 5: " + msg}; strings.Join(rep.bad, "\n") != strings.Join(want, "\n") {
		t.Errorf("bad lines:\n%s\nwant\n%s", strings.Join(rep.bad, "\n"), strings.Join(want, "\n"))
	}
	off := `warning: rule slow rule "(?:(x+x+)+y|z)": not tried after line 5: the regular expressions took longer than 1s on lines 2, 4 and 5, most of it this rule's (those lines were skipped); it was not tried on the 2 lines after (the first, line 6)`
	if !slices.Contains(rep.msgs, off) {
		t.Errorf("notes:\n%s\nwant\n%s", strings.Join(rep.msgs, "\n"), off)
	}
	if got := strings.Join(rep.lines, " "); got != "[1]TASK1.state=RUNNING [2]TASK1.state=RUNNING [3]TASK1.state=RUNNING" {
		t.Errorf("lines: %s", got)
	}
}

// TestTimeoutBlame: the line's budget runs out in the second rule, but
// the first took most of it: the first is named.
func TestTimeoutBlame(t *testing.T) {
	rep := &collect{skip: true}
	many := Rule{Pattern: `q`, Pos: Pos{File: "slow.cnv", Line: 4, Col: 3}}
	rd := hostileReader(t, 200*time.Millisecond, []Rule{many, hostileRule}, rep)
	// q: three matches and the end, 0.8 s; the hostile rule's first
	// match spends the rest.
	if err := rd.Line("qqq"+hostileLine(12, 5), 1, schema.NoCPU); err != nil {
		t.Fatal(err)
	}
	if want := `line 1: rule slow rule "q": the regular expressions took longer than 1s on this line, most of it this rule's (a pathological pattern?)`; len(rep.bad) != 1 || rep.bad[0] != want {
		t.Errorf("bad: %q\nwant %s", rep.bad, want)
	}
	if rd.Conv.calls != 5 {
		t.Errorf("%d calls, want 5", rd.Conv.calls)
	}
}

// TestRuleBudget: a rule that never takes a line's budget but is slow on
// every line is no longer tried once its time adds up to more than
// RuleBudgetBase and RuleBudgetPerLine a line: 0.9 s a line, after 68
// lines (61.2 s > 60 s + 68 × 10 ms).
func TestRuleBudget(t *testing.T) {
	rep := &collect{skip: true}
	rd := hostileReader(t, 900*time.Millisecond, []Rule{goRule, hostileRule}, rep)
	for n := int64(1); n <= 70; n++ {
		if err := rd.Line("[1] go", n, schema.NoCPU); err != nil {
			t.Fatal(err)
		}
	}
	rd.Finish()
	if len(rep.bad) != 0 || rd.Conv.calls != 68 {
		t.Errorf("bad %q, %d calls (want 68)", rep.bad, rd.Conv.calls)
	}
	off := `warning: rule slow rule "(?:(x+x+)+y|z)": not tried after line 68: its regular expression took 1m1.2s on the 68 lines it was tried on, more than the 1m0s and 10ms a line a rule may take; it was not tried on the 2 lines after (the first, line 69)`
	if !slices.Contains(rep.msgs, off) {
		t.Errorf("notes:\n%s\nwant\n%s", strings.Join(rep.msgs, "\n"), off)
	}
	if len(rep.lines) != 70 {
		t.Errorf("%d lines converted, want 70", len(rep.lines))
	}
}

// TestFalseTimeouts: a timeout of regexp2 that the converter's clock does
// not confirm (regexp2's own clock ran late) is retried, at most
// maxFalseTimeouts times on a line: then the line has taken its budget.
// Here the converter's clock says no time passes at all.
func TestFalseTimeouts(t *testing.T) {
	sets := []RuleSet{{Name: "slow", Rules: []Rule{{Pattern: `(a+)+$`, Pos: Pos{File: "slow.cnv", Line: 2, Col: 3}}}}}
	c, err := Compile(sets, testState(t), 20*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	c.now = (&fakeClock{t: time.Unix(0, 0)}).now
	_, err = c.Convert(strings.Repeat("a", 40)+"!", 1, func(string, *crule, int) error { return nil }, func(Problem) {})
	var te *TimeoutError
	if !errors.As(err, &te) {
		t.Fatalf("got %v, want a timeout", err)
	}
	if c.calls != 1+maxFalseTimeouts {
		t.Errorf("%d calls, want %d", c.calls, 1+maxFalseTimeouts)
	}
}
