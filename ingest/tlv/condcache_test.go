package tlv

import (
	"fmt"
	"math/rand"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestCondCacheSame: the values of conditions kept by the values of
// their groups and macros (Converter.cond, condCache), and the parses of
// macro arguments by the values of their groups (argRef, refCache), are
// those of the conditions and arguments expanded, parsed and evaluated on
// every line: the same lines out, the same notes (problems name the text
// a condition or an argument expands to), the same history misses of
// macros with a time. The lines fill the
// groups with what makes a condition not parse (operators, nothing, white
// space, a true/false that is neither), values longer than a key is kept
// for, and more distinct values than a cache has entries; the state
// changes between them, so that macros read other values.
func TestCondCacheSame(t *testing.T) {
	useLoader(t)
	s, err := LoadSetup(filepath.Join("testdata", "fuzzrules", "fuzzrules.res"), []string{filepath.Join("testdata", "fuzzrules")}, []string{filepath.Join("testdata", "common.resh")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cond := func(c string, tmpl string) Case {
		return Case{Condition: c, Outputs: []Output{{Template: tmpl}}}
	}
	s.Rules = []RuleSet{{Name: "cc", Rules: []Rule{
		{Pattern: `^\[(?<t>\d+)\] check (?<a>[^;]*);(?<b>[^;]*)$`, Outputs: []Output{{Cond: []Case{
			cond("${a}==${b}", "[${t}]TASK1.note=eq"),
			cond("${a}", "[${t}]TASK1.note=bare"),
			cond(" ${a} != x${b}y ", "[${t}]TASK1.note=ne"),
			cond("$ATTR{TASK(id==${b}).state}==RUNNING || ${a}<3", "[${t}]TASK1.note=attr"),
			cond("$EXIST{[${t}]TASK(state==${a})} && !(${b}>=2)", "[${t}]TASK1.note=exist"),
			cond("$COUNT{TASK(state==RUNNING)}>${b} | ($RES_NAME{TASK(id==${a})}==TASK2 & true)", "[${t}]TASK1.note=count"),
			cond("$ATTR{[${t}]TASK(id==1).state}==${a}", "[${t}]TASK1.note=at"),
			cond("$ATTR{[${b}]TASK(id==1).state}==READY", "[${t}]TASK1.note=past"), // older than the history kept

		}}}},
		{Pattern: `^\[(?<t>\d+)\] set (?<id>\d+) (?<s>\S+)$`, Outputs: []Output{{Template: "[${t}]$RES_NAME{TASK(id==${id})}.state=${s}"}}},
		// Matched more than once, or not whole: the text around the
		// matches is part of the condition.
		{Pattern: `(?<x>\d+)x`, Outputs: []Output{{Cond: []Case{cond("${x}>5", "[0]TASK1.cnt=${x}")}}}},
	}}}
	values := []string{"", " ", "\t", "1", "2", "3", "10", "4", "a==b", "(", ")", "true", "False", "TRUE ", "RUNNING", "READY",
		"x&&y", "  READY ", "\u00a0", "\u00a0RUNNING", "a|b", "!", "<", "-1", "1.5", "nan", strings.Repeat("z", 200), "x y", "TASK2", "DORMANT"}
	rnd := rand.New(rand.NewSource(1))
	var log strings.Builder
	for n := 1; n <= 20000; n++ {
		pick := func() string {
			if rnd.Intn(4) == 0 {
				return fmt.Sprint(rnd.Intn(300)) // more values than the cache has entries
			}
			return values[rnd.Intn(len(values))]
		}
		switch rnd.Intn(6) {
		case 0:
			fmt.Fprintf(&log, "[%d] set %d %s\n", n*10, []int{1, 2, 4}[rnd.Intn(3)], []string{"RUNNING", "READY", "DORMANT", "x==y"}[rnd.Intn(4)])
		case 1:
			fmt.Fprintf(&log, "[%d] %dx %dx\n", n*10, rnd.Intn(10), rnd.Intn(10))
		default:
			fmt.Fprintf(&log, "[%d] check %s;%s\n", n*10, pick(), pick())
		}
	}
	run := func(cache bool) (*collect, *Reader) {
		c := &collect{skip: true}
		rd, err := NewReader(s, c, c)
		if err != nil {
			t.Fatal(err)
		}
		rd.Conv.noKnown = !cache
		for i, line := range strings.Split(strings.TrimSuffix(log.String(), "\n"), "\n") {
			if err := rd.Line(line, int64(i+1), -1); err != nil {
				t.Fatal(err)
			}
		}
		return c, rd
	}
	want, wantRd := run(false)
	got, gotRd := run(true)
	if !slices.Equal(got.lines, want.lines) {
		t.Errorf("lines differ: %d with the cache, %d without", len(got.lines), len(want.lines))
		for i := range min(len(got.lines), len(want.lines)) {
			if got.lines[i] != want.lines[i] {
				t.Fatalf("first difference, line %d: %q, want %q", i, got.lines[i], want.lines[i])
			}
		}
	}
	if !slices.Equal(got.msgs, want.msgs) || !slices.Equal(got.bad, want.bad) || fmt.Sprint(got.notes) != fmt.Sprint(want.notes) {
		t.Errorf("notes differ:\n%s\nwant\n%s", strings.Join(got.msgs, "\n"), strings.Join(want.msgs, "\n"))
	}
	if gotRd.St.HistoryMisses != wantRd.St.HistoryMisses {
		t.Errorf("history misses %d, want %d", gotRd.St.HistoryMisses, wantRd.St.HistoryMisses)
	}
	if len(want.lines) < 5000 || len(want.msgs) < 10 || wantRd.St.HistoryMisses < 1000 {
		t.Errorf("%d lines, %d notes: the test does not test much", len(want.lines), len(want.msgs))
	}
	t.Logf("%d lines, %d notes, %d history misses, %d conditions known by their values", len(want.lines), len(want.msgs), wantRd.St.HistoryMisses, gotRd.Conv.condHits)
	if gotRd.Conv.condHits < 5000 {
		t.Errorf("%d conditions known by their values: the cache is not used", gotRd.Conv.condHits)
	}
}
