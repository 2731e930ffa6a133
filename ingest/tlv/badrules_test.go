package tlv

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func testState(t testing.TB) *State {
	t.Helper()
	useLoader(t)
	s, err := LoadSetup(filepath.Join("testdata", "fig8", "fig8.res"), []string{filepath.Join("testdata", "fig8")}, []string{filepath.Join("testdata", "common.resh")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := NewState(s.Res, s.Types)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestBadRules: a rule file that cannot work fails when it is loaded,
// naming the file, the rule and the position.
func TestBadRules(t *testing.T) {
	st := testState(t)
	pos := Pos{File: "bad.cnv", Line: 3, Col: 9}
	rule := func(pattern string, outs ...Output) []RuleSet {
		return []RuleSet{{Name: "bad", Rules: []Rule{{Pattern: pattern, Outputs: outs, Pos: pos}}}}
	}
	tmpl := func(s string) Output { return Output{Template: s, Pos: Pos{File: "bad.cnv", Line: 4, Col: 5}} }
	cond := func(c string, outs ...Output) Output {
		return Output{Pos: Pos{File: "bad.cnv", Line: 4, Col: 5}, Cond: []Case{{Condition: c, Outputs: outs, Pos: Pos{File: "bad.cnv", Line: 5, Col: 6}}}}
	}
	const re = `\[(?<t>\d+)\] run (?<id>\d+)`
	for _, c := range []struct {
		name string
		sets []RuleSet
		want string
	}{
		{"invalid regex", rule(`\[(?<t>\d+\] run`, tmpl("[${t}]TASK1.state=RUNNING")),
			`bad.cnv:3:9: rule "\[(?<t>\d+\] run": invalid regular expression: error parsing regexp: missing closing ) in ` + "`" + `\[(?<t>\d+\] run` + "`"},
		{"look-ahead is fine", rule(`\[(?<t>\d+)\] (?!sns)run`, tmpl("[${t}]TASK1.state=RUNNING")), ""},
		{"unknown macro", rule(re, tmpl("[${t}]$RESNAME{TASK(id==${id})}.state=RUNNING")),
			`bad.cnv:4:5: rule "\[(?<t>\d+)\] run (?<id>\d+)": "[${t}]$RESNAME{TASK(id==${id})}.state=RUNNING": column 7: unknown macro $RESNAME (macros: $EXIST, $COUNT, $RES_NAME, $ATTR)`},
		{"unbalanced open", rule(re, tmpl("[${t}]$RES_NAME{TASK(id==${id}).state=RUNNING")),
			`bad.cnv:4:5: rule "\[(?<t>\d+)\] run (?<id>\d+)": "[${t}]$RES_NAME{TASK(id==${id}).state=RUNNING": column 7: unbalanced "{": $RES_NAME{ without "}"`},
		{"unbalanced close", rule(re, tmpl("[${t}]$RES_NAME{TASK(id==${id})}}.state=RUNNING")),
			`bad.cnv:4:5: rule "\[(?<t>\d+)\] run (?<id>\d+)": "[${t}]$RES_NAME{TASK(id==${id})}}.state=RUNNING": column 33: unbalanced "}": no macro or group is open`},
		{"unbalanced group", rule(re, tmpl("[${t]TASK1.state=RUNNING")),
			`bad.cnv:4:5: rule "\[(?<t>\d+)\] run (?<id>\d+)": "[${t]TASK1.state=RUNNING": column 2: unbalanced "{": "${" without "}"`},
		{"unknown group", rule(re, tmpl("[${time}]TASK1.state=RUNNING")),
			`bad.cnv:4:5: rule "\[(?<t>\d+)\] run (?<id>\d+)": "[${time}]TASK1.state=RUNNING": column 2: unknown group ${time} (the pattern's groups: ${t}, ${id})`},
		{"unknown type in macro", rule(re, tmpl("[${t}]$RES_NAME{Tsk(id==${id})}.state=RUNNING")),
			`bad.cnv:4:5: rule "\[(?<t>\d+)\] run (?<id>\d+)": "[${t}]$RES_NAME{Tsk(id==${id})}.state=RUNNING": column 17: $RES_NAME{Tsk(id==${id})}: unknown resource type "Tsk" (types: Context, TASK)`},
		{"unknown type in line", rule(re, tmpl("[${t}]Tsk(id==${id}).state=RUNNING")),
			`bad.cnv:4:5: rule "\[(?<t>\d+)\] run (?<id>\d+)": "[${t}]Tsk(id==${id}).state=RUNNING": unknown resource type "Tsk" (types: Context, TASK)`},
		{"unknown type in condition", rule(re, cond("$EXIST{Tsk(state==RUNNING)}", tmpl("[${t}]TASK1.state=READY"))),
			`bad.cnv:5:6: rule "\[(?<t>\d+)\] run (?<id>\d+)": "$EXIST{Tsk(state==RUNNING)}": column 8: $EXIST{Tsk(state==RUNNING)}: unknown resource type "Tsk" (types: Context, TASK)`},
		{"unknown attribute", rule(re, tmpl("[${t}]$RES_NAME{TASK(ident==${id})}.state=RUNNING")),
			`bad.cnv:4:5: rule "\[(?<t>\d+)\] run (?<id>\d+)": "[${t}]$RES_NAME{TASK(ident==${id})}.state=RUNNING": column 17: $RES_NAME{TASK(ident==${id})}: resource type TASK has no attribute "ident"`},
		{"unknown attribute of $ATTR", rule(re, tmpl("[${t}]TASK1.state=$ATTR{TASK4.stat}")),
			`bad.cnv:4:5: rule "\[(?<t>\d+)\] run (?<id>\d+)": "[${t}]TASK1.state=$ATTR{TASK4.stat}": column 25: $ATTR{TASK4.stat}: resource type TASK has no attribute "stat"`},
		{"not a line", rule(re, tmpl("${t} TASK1.state=RUNNING")),
			`bad.cnv:4:5: rule "\[(?<t>\d+)\] run (?<id>\d+)": "${t} TASK1.state=RUNNING": column 1: not a standard-format line: expected "[" and a time, found "${t} TASK1.state=RUN..."`},
		// TLV takes white space between the parts of a line (its FMP
		// rules write "...prcId = ${toPrcId}").
		{"spaces around =", rule(re, tmpl("[${t}]$RES_NAME{TASK(id==${id})}.state = RUNNING")), ""},
		{"spaces around a behavior's parentheses", rule(re, tmpl("[${t}]$RES_NAME{TASK(id==${id})} . preempt ( ${id}, x ) ")), ""},
		{"spaces after the resource", rule(re, tmpl("[${t}] TASK (id==${id}) .state=RUNNING")), ""},
		{"spaces in macros", rule(re, tmpl("[${t}]$RES_NAME{TASK (state==RUNNING)}.state=$ATTR{ TASK4 . state }")), ""},
		// The column of the problem, not of the time (where a group
		// stands for what only a time fits).
		{"not a line after a macro", rule(re, tmpl("[${t}]$RES_NAME{TASK(id==${id})}.state : ${id}")),
			`bad.cnv:4:5: rule "\[(?<t>\d+)\] run (?<id>\d+)": "[${t}]$RES_NAME{TASK(id==${id})}.state : ${id}": column 40: not a standard-format line: expected "=" and a value, or "(" and arguments, found ": ${id}"`},
		{"no member", rule(re, tmpl("[${t}]TASK1.=${id}")),
			`bad.cnv:4:5: rule "\[(?<t>\d+)\] run (?<id>\d+)": "[${t}]TASK1.=${id}": column 13: not a standard-format line: expected an attribute or behavior name, found "=${id}"`},
		{"bad time", rule(re, tmpl("[${t} x]TASK1.state=RUNNING")),
			`bad.cnv:4:5: rule "\[(?<t>\d+)\] run (?<id>\d+)": "[${t} x]TASK1.state=RUNNING": column 6: not a standard-format line: expected "]" after the time, found " x]TASK1.state=RUNNI..."`},
		{"bad condition", rule(re, cond("${id}==1 &&", tmpl("[${t}]TASK1.state=READY"))),
			`bad.cnv:5:6: rule "\[(?<t>\d+)\] run (?<id>\d+)": "${id}==1 &&": column 12: condition: expected a comparison, true or false, found end of line`},
		{"bad condition after $$", rule(re, cond("$$${id}==1 ) x", tmpl("[${t}]TASK1.state=READY"))),
			`bad.cnv:5:6: rule "\[(?<t>\d+)\] run (?<id>\d+)": "$$${id}==1 ) x": column 12: condition: expected an operator or the end of the condition (unbalanced ")"), found ") x"`},
		{"nested macro", rule(re, tmpl("[${t}]$RES_NAME{TASK(id==$ATTR{TASK1.id})}.state=RUNNING")),
			`bad.cnv:4:5: rule "\[(?<t>\d+)\] run (?<id>\d+)": "[${t}]$RES_NAME{TASK(id==$ATTR{TASK1.id})}.state=RUNNING": column 26: macros do not nest: $ATTR inside a macro's argument`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Compile(c.sets, st, 0)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if c.want == "" && err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if c.want != "" && !strings.HasPrefix(got, c.want) {
				t.Errorf("got  %s\nwant %s", got, c.want)
			}
		})
	}
}

// TestBadRuleFile: the same through a rule file on disk.
func TestBadRuleFile(t *testing.T) {
	useLoader(t)
	dir := t.TempDir()
	cnv := filepath.Join(dir, "fig8.cnv")
	if err := os.WriteFile(cnv, []byte(`{
	"fig8": {
		"\[(?<t>\d+)\] go (?<id>\d+)": [
			"[${t}]$RES_NAME{TASK(id==${id})}.state=RUNNING",
			"[${t}]$NAME{TASK(id==${id})}.state=RUNNING"
		]
	}
}`), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := LoadSetup(filepath.Join("testdata", "fig8", "fig8.res"), []string{cnv}, []string{filepath.Join("testdata", "common.resh")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = NewReader(s, &collect{}, &collect{})
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{cnv + ":5:", `rule "\[(?<t>\d+)\] go (?<id>\d+)"`, `"[${t}]$NAME{TASK(id==${id})}.state=RUNNING": column 7: unknown macro $NAME`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%v\ndoes not say %s", err, want)
		}
	}
}

// TestRuleTimeout: a pathological pattern stops the conversion with an
// error naming the rule, instead of hanging. (Unanchored, it stays on
// regexp2; anchored, Go's regexp matches it in linear time: fastre.go.)
func TestRuleTimeout(t *testing.T) {
	st := testState(t)
	sets := []RuleSet{{Name: "slow", Rules: []Rule{{Pattern: `(a+)+$`, Outputs: []Output{{Template: "[1]TASK1.state=READY"}}, Pos: Pos{File: "slow.cnv", Line: 2, Col: 3}}}}}
	c, err := Compile(sets, st, 20*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Convert(strings.Repeat("a", 40)+"!", 1, func(string, *crule, int) error { return nil }, func(Problem) {})
	var te *TimeoutError
	if !errors.As(err, &te) {
		t.Fatalf("got %v, want a timeout", err)
	}
	if want := `rule slow rule "(a+)+$": the regular expressions took longer than 20ms on this line, most of it this rule's`; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("got %v\nwant %s", err, want)
	}
}
