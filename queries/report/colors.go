package report

import "slices"

// One colour per name across every plot of a page: a key (an object's,
// a CPU's name, as the plots label it) is drawn in the same colour in
// every trend and CPU load plot, and so is a run in every histogram.

// seriesStyle is how a series is drawn: a palette colour, and for lines
// a dash style (lineDashes' name).
type seriesStyle struct{ Color, Dash string }

// styleOf is the i-th style: the palette's colours in turn, solid; with
// dashes, then the same colours dashed, then dotted.
func styleOf(i int, dashes bool) seriesStyle {
	st := seriesStyle{Color: palette[i%len(palette)], Dash: lineDashes[0].Name}
	if dashes {
		st.Dash = lineDashes[(i/len(palette))%len(lineDashes)].Name
	}
	return st
}

// assignStyles gives each name drawn in plots (each plot the names of its
// series) one style for every plot. The names take their styles in the
// order given (each name once; names drawn in no plot take none), each
// the first in this order of preference:
//
//  1. a style that the fewest names drawn with it in a plot have taken
//     (none, while there are styles: 10 colours, 30 with dashes);
//  2. solid rather than dashed, dashed rather than dotted;
//  3. one of the palette's first strongColors colours rather than its
//     light grey or its red (which is also the red of the thresholds);
//  4. the style the fewest names have taken, on the whole page;
//  5. the palette's order.
//
// So the first 8 names have 8 colours, names drawn together differ, and a
// colour is taken twice only by names never drawn together (the tasks of
// the trends and the CPUs of the CPU load plots, say).
func assignStyles(order []string, plots [][]string, dashes bool) map[string]seriesStyle {
	n := len(palette)
	if dashes {
		n *= len(lineDashes)
	}
	with := map[string]map[string]bool{} // the names drawn with each name
	for _, plot := range plots {
		for _, a := range plot {
			if with[a] == nil {
				with[a] = map[string]bool{}
			}
			for _, b := range plot {
				if a != b {
					with[a][b] = true
				}
			}
		}
	}
	index := map[string]int{}
	used := make([]int, n) // how many names have taken each style
	for _, name := range order {
		if _, done := index[name]; done || with[name] == nil {
			continue
		}
		taken := make([]int, n) // how many of the names drawn with it have each style
		for other := range with[name] {
			if i, ok := index[other]; ok {
				taken[i]++
			}
		}
		rank := func(i int) [4]int {
			weak := 0
			if i%len(palette) >= strongColors {
				weak = 1
			}
			return [4]int{taken[i], i / len(palette), weak, used[i]}
		}
		best := 0
		for i := 1; i < n; i++ {
			if a, b := rank(i), rank(best); slices.Compare(a[:], b[:]) < 0 {
				best = i
			}
		}
		index[name] = best
		used[best]++
	}
	out := map[string]seriesStyle{}
	for name, i := range index {
		out[name] = styleOf(i, dashes)
	}
	return out
}

// strongColors is how many of the palette's colours come before its light
// grey and its red, which keys take last.
const strongColors = 8

// baselineColor draws the baseline where runs are series (a histogram's).
const baselineColor = "#57606a"
