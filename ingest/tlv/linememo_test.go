package tlv

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/traceduck/traceduck/internal/tracegen"
)

// TestLineMemoSame: TOPPERS lines read through the bundled rules with the
// rules that begin alike matched once per rest (lineMemo) and one by one:
// the same lines out, the same notes. The lines are generated ones and
// the same with random edits (digits, letters, spaces, brackets, dots,
// non-ASCII bytes put in, bytes taken out, a line cut), so that rests
// match some rules, none, or only after a look-ahead, and beginnings fail.
func TestLineMemoSame(t *testing.T) {
	useLoader(t)
	for _, style := range []tracegen.TLVStyle{tracegen.TOPPERSASP, tracegen.TOPPERSFMP} {
		t.Run(style.String(), func(t *testing.T) {
			var log, res bytes.Buffer
			cores := 2
			if style == tracegen.TOPPERSASP {
				cores = 1
			}
			if _, err := tracegen.WriteTLV(&log, &res, tracegen.Config{Events: 6000, Cores: cores, Tasks: 8, Seed: 5}, style); err != nil {
				t.Fatal(err)
			}
			resPath := filepath.Join(t.TempDir(), "t.res")
			if err := os.WriteFile(resPath, res.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			set := "asp"
			if style == tracegen.TOPPERSFMP {
				set = "fmp"
			}
			s, err := LoadSetup(resPath, nil, nil, []string{set})
			if err != nil {
				t.Fatal(err)
			}
			rnd := rand.New(rand.NewSource(7))
			const edits = "0123456789abcxyz .[]:()\t\xc3\xa9\x80!-_=$"
			var lines []string
			for _, l := range strings.Split(strings.TrimSuffix(log.String(), "\n"), "\n") {
				lines = append(lines, l)
				if rnd.Intn(3) != 0 {
					continue
				}
				b := []byte(l)
				for range 1 + rnd.Intn(3) {
					i := rnd.Intn(len(b) + 1)
					switch rnd.Intn(4) {
					case 0, 1:
						b = slices.Insert(b, i, edits[rnd.Intn(len(edits))])
					case 2:
						if i < len(b) {
							b = slices.Delete(b, i, i+1)
						}
					case 3:
						b = b[:i]
					}
				}
				lines = append(lines, string(b))
			}
			want, rd := sameWithLineMemo(t, s, lines)
			if len(want.lines) < len(lines) || len(want.msgs) < 10 {
				t.Errorf("%d lines out of %d, %d notes: the test does not test much", len(want.lines), len(lines), len(want.msgs))
			}
			t.Logf("%d lines in, %d out, %d notes; %d rules of %d begin alike (%d instructions), %d rests kept",
				len(lines), len(want.lines), len(want.msgs), len(rd.Conv.lm.rules), len(rd.Conv.rules), rd.Conv.lm.det, len(rd.Conv.lm.memo))
		})
	}
}

// TestLineMemoGivesUp: a rule whose machine gives up on a rest (it
// backtracks a cube of the line's length before it matches) is tried as
// before on the lines with that rest, beside rules that begin alike and
// one with a look-ahead.
func TestLineMemoGivesUp(t *testing.T) {
	useLoader(t)
	s, err := LoadSetup(filepath.Join("testdata", "fig8", "fig8.res"), []string{filepath.Join("testdata", "fig8")}, []string{filepath.Join("testdata", "common.resh")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Rules = []RuleSet{{Name: "up", Rules: []Rule{
		{Pattern: `^\[(?<t>\d+)\] x*x*x*x{40}y(?<id>\d)$`, Outputs: []Output{{Template: "[${t}]$RES_NAME{TASK(id==${id})}.state=X"}}},
		{Pattern: `^\[(?<t>\d+)\] go (?<id>\d+)$`, Outputs: []Output{{Template: "[${t}]$RES_NAME{TASK(id==${id})}.state=RUNNING"}}},
		{Pattern: `^\[(?<t>\d+)\] (?!go)(?<w>\w+) (?<id>\d+)\.?$`, Outputs: []Output{{Template: "[${t}]$RES_NAME{TASK(id==${id})}.${w}()"}}},
	}}}
	var lines []string
	for i := range 300 {
		x := strings.Repeat("x", 60+i%31)
		lines = append(lines, fmt.Sprintf("[%d] %sz", 10*i, x), fmt.Sprintf("[%d] %sy1", 10*i+1, x), fmt.Sprintf("[%d] go %d", 10*i+2, 1+3*(i%2)),
			fmt.Sprintf("[%d] stop %d.", 10*i+3, 4-3*(i%2)), fmt.Sprintf("[%d] go 7", 10*i+4))
	}
	want, rd := sameWithLineMemo(t, s, lines)
	if len(rd.Conv.lm.rules) != 3 || len(want.lines) < 900 {
		t.Errorf("%d rules begin alike, %d lines out", len(rd.Conv.lm.rules), len(want.lines))
	}
}

// sameWithLineMemo reads lines with the setup, with lineMemo and without,
// and fails unless both give the same lines and notes.
func sameWithLineMemo(t *testing.T, s *Setup, lines []string) (*collect, *Reader) {
	t.Helper()
	run := func(memo bool) (*collect, *Reader) {
		c := &collect{skip: true}
		rd, err := NewReader(s, c, c)
		if err != nil {
			t.Fatal(err)
		}
		if memo && rd.Conv.lm == nil {
			t.Fatal("no rules that begin alike")
		}
		rd.Conv.noLineMemo = !memo
		for i, line := range lines {
			if err := rd.Line(line, int64(i+1), -1); err != nil {
				t.Fatal(err)
			}
		}
		rd.Finish()
		return c, rd
	}
	want, _ := run(false)
	got, rd := run(true)
	if !slices.Equal(got.lines, want.lines) {
		for i := range min(len(got.lines), len(want.lines)) {
			if got.lines[i] != want.lines[i] {
				t.Fatalf("first difference, line %d: %q, want %q", i, got.lines[i], want.lines[i])
			}
		}
		t.Fatalf("%d lines, want %d", len(got.lines), len(want.lines))
	}
	if !slices.Equal(got.msgs, want.msgs) || !slices.Equal(got.bad, want.bad) || fmt.Sprint(got.notes) != fmt.Sprint(want.notes) {
		t.Errorf("notes differ:\n%s\nwant\n%s", strings.Join(got.msgs, "\n"), strings.Join(want.msgs, "\n"))
	}
	return want, rd
}

// TestLineMemoRuleOff: a rule that goes off (its regex time over the whole
// log) while a line is read leaves the rules that begin alike to be tried
// one by one from the next line; the line goes on as it began.
func TestLineMemoRuleOff(t *testing.T) {
	sets := []RuleSet{{Name: "off", Rules: []Rule{
		{Pattern: hostilePattern, Pos: Pos{File: "off.cnv", Line: 2, Col: 3}},
		{Pattern: `^\[(?<t>\d+)\] go$`, Outputs: []Output{{Template: "[${t}]TASK1.state=RUNNING"}}, Pos: Pos{File: "off.cnv", Line: 3, Col: 3}},
		{Pattern: `^\[(?<t>\d+)\] stop$`, Outputs: []Output{{Template: "[${t}]TASK1.state=DORMANT"}}, Pos: Pos{File: "off.cnv", Line: 4, Col: 3}},
	}}}
	c, err := Compile(sets, testState(t), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if c.lm == nil {
		t.Fatal("no rules that begin alike")
	}
	c.now = (&fakeClock{t: time.Unix(0, 0), step: RuleBudgetBase + time.Second}).now // the first regexp2 call takes the rule's whole budget
	var out []string
	for i, line := range []string{"[1] go", "[2] stop", "[3] go"} {
		if _, err := c.Convert(line, int64(i+1), func(s string, _ *crule, _ int) error { out = append(out, strings.Clone(s)); return nil }, func(Problem) {}); err != nil {
			t.Fatal(err)
		}
	}
	if want := []string{"[1]TASK1.state=RUNNING", "[2]TASK1.state=DORMANT", "[3]TASK1.state=RUNNING"}; !slices.Equal(out, want) {
		t.Errorf("got %q, want %q", out, want)
	}
	if c.lm != nil || len(c.Disabled()) != 1 {
		t.Errorf("line memo %v, %d rules off; want none and 1", c.lm != nil, len(c.Disabled()))
	}
}
