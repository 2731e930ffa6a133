package report

import (
	"fmt"
	"testing"
)

func names(prefix string, n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("%s%02d", prefix, i))
	}
	return out
}

// While the palette lasts every name has a colour of its own; beyond it,
// names drawn together still differ (dashed, then dotted lines), and a
// colour is shared only by names never drawn together.
func TestAssignStyles(t *testing.T) {
	styles := func(order []string, plots [][]string, dashes bool) map[string]seriesStyle {
		t.Helper()
		st := assignStyles(order, plots, dashes)
		limit := len(palette)
		if dashes {
			limit *= len(lineDashes)
		}
		for _, plot := range plots {
			seen := map[seriesStyle]string{}
			for _, n := range plot {
				if other, ok := seen[st[n]]; ok && len(plot) <= limit {
					t.Errorf("%s and %s are drawn together and alike: %v", n, other, st[n])
				}
				seen[st[n]] = n
			}
		}
		return st
	}

	// 10 names drawn together: the 10 colours, solid, in the names' order.
	ten := names("k", 10)
	st := styles(ten, [][]string{ten}, true)
	for i, n := range ten {
		if st[n] != (seriesStyle{palette[i], "solid"}) {
			t.Errorf("%s: %v, want %s solid", n, st[n], palette[i])
		}
	}

	// 6 tasks drawn together, 2 CPUs drawn together: the CPUs take the
	// next colours; 8 tasks: the CPUs take the first colours again rather
	// than the light grey and the red.
	for _, c := range []struct{ tasks, first int }{{6, 6}, {8, 0}} {
		tasks, cpus := names("task", c.tasks), names("cpu", 2)
		st = styles(append(tasks, cpus...), [][]string{tasks, cpus, tasks[:3]}, true)
		for i, n := range tasks {
			if want := (seriesStyle{palette[i], "solid"}); st[n] != want {
				t.Errorf("%d tasks: %s: %v, want %v", c.tasks, n, st[n], want)
			}
		}
		for i, n := range cpus {
			if want := (seriesStyle{palette[c.first+i], "solid"}); st[n] != want {
				t.Errorf("%d tasks: %s: %v, want %v", c.tasks, n, st[n], want)
			}
		}
	}

	// 14 names in plots of at most 8: the first 8 take 8 colours; those
	// beyond take colours of names they are never drawn with, solid.
	many := names("k", 14)
	st = styles(many, [][]string{many[:8], many[8:]}, true)
	seen := map[seriesStyle]bool{}
	for _, n := range many[:8] {
		seen[st[n]] = true
	}
	if len(seen) != 8 {
		t.Errorf("the first 8 names share colours: %v", st)
	}
	for _, n := range many[8:] {
		if st[n].Dash != "solid" {
			t.Errorf("%s: %v, want a solid line", n, st[n])
		}
		for _, m := range many[8:] {
			if m != n && st[m] == st[n] {
				t.Errorf("%s and %s, drawn together, are both %v", n, m, st[n])
			}
		}
	}

	// 32 names in one plot: 10 solid, 10 dashed, 10 dotted, then the
	// styles again (the first, solid blue, first).
	all := names("k", 32)
	st = styles(all, [][]string{all}, true)
	for i, n := range all {
		want := seriesStyle{palette[i%10], lineDashes[(i/10)%3].Name}
		if st[n] != want {
			t.Errorf("%s: %v, want %v", n, st[n], want)
		}
	}

	// Without dashes (a histogram's bars): 10 colours, then again.
	st = styles(names("v", 12), [][]string{names("v", 12)}, false)
	if st["v10"] != st["v00"] || st["v11"] != st["v01"] || st["v09"].Color != palette[9] {
		t.Errorf("bars beyond the palette: %v", st)
	}

	// A name in no plot has no style; a name given twice, one.
	st = styles([]string{"a", "b", "a"}, [][]string{{"a"}}, true)
	if _, ok := st["b"]; ok || len(st) != 1 {
		t.Errorf("%v, want a only", st)
	}
}
