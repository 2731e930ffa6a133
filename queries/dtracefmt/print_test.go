package dtracefmt_test

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/queries/dtracefmt"
)

func write(t *testing.T, spec dtracefmt.Spec, hists ...dtracefmt.Hist) string {
	t.Helper()
	var out bytes.Buffer
	if err := dtracefmt.Write(&out, spec, hists); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

func unkeyed(counts map[int64]int64) dtracefmt.Hist {
	return dtracefmt.Hist{Key: dtracefmt.Key{None: true}, Counts: counts}
}

// rows is a test's expected output: "|" stands for the end of a line,
// so that the trailing blanks DTrace prints are visible.
func rows(s string) string {
	return strings.ReplaceAll(strings.TrimPrefix(s, "\n"), "|\n", "\n")
}

const head = "\n           value  ------------- Distribution ------------- count    \n"

// The layouts below were worked out by hand from dt_print_quantline: a
// bar of round(40·|count|/total) '@'; with counts of both signs, half
// bars of round(20·|count|/total) left (count <= 0) or right (> 0) of
// the axis; with negative counts only, the bar grows leftwards.
func TestQuantLines(t *testing.T) {
	q := dtracefmt.Spec{Kind: dtracefmt.Quantize}
	for _, tc := range []struct {
		name   string
		counts map[int64]int64
		want   string
	}{
		{"positive", map[int64]int64{4: 3, 16: 1}, head + rows(`
               2 |                                         0        |
               4 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@           3        |
               8 |                                         0        |
              16 |@@@@@@@@@@                               1        |
              32 |                                         0        |
|
`)},
		// quantize(x, -1): only negative counts (total 3: 27 and 13).
		{"negative counts", map[int64]int64{-8: -2, 1: -1}, head + rows(`
             -16                                         | 0        |
              -8              @@@@@@@@@@@@@@@@@@@@@@@@@@@| -2       |
              -4                                         | 0        |
              -2                                         | 0        |
              -1                                         | 0        |
               0                                         | 0        |
               1                            @@@@@@@@@@@@@| -1       |
               2                                         | 0        |
|
`)},
		// Both signs (total 4): 5 → 15 right, -1 → 5 left, 0 rows left.
		{"both signs", map[int64]int64{0: 3, 2: -1}, head + rows(`
              -1                     |                     0        |
               0                     |@@@@@@@@@@@@@@@      3        |
               1                     |                     0        |
               2                @@@@@|                     -1       |
               4                     |                     0        |
|
`)},
		// 1 in 80 is exactly half an '@' and 79 in 80 is 39.5: both
		// rounded up.
		{"rounding", map[int64]int64{1: 1, 2: 79}, head + rows(`
               0 |                                         0        |
               1 |@                                        1        |
               2 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@ 79       |
               4 |                                         0        |
|
`)},
		// Every count zero: the buckets around 0.
		{"all zero", map[int64]int64{64: 0}, head + rows(`
              -1 |                                         0        |
               0 |                                         0        |
               1 |                                         0        |
|
`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := write(t, q, unkeyed(tc.counts)); got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

// TestQuantizeExtremes: the smallest and largest values are in the first
// and last buckets, -2^62 and 2^62, and no row is printed beyond them.
func TestQuantizeExtremes(t *testing.T) {
	got := write(t, dtracefmt.Spec{Kind: dtracefmt.Quantize}, unkeyed(map[int64]int64{-1 << 62: 1, 1 << 62: 1}))
	lines := strings.Split(strings.TrimSuffix(strings.TrimPrefix(got, "\n"), "\n\n"), "\n")
	if len(lines) != 1+127 {
		t.Fatalf("%d lines, want the header and 127 rows:\n%s", len(lines), got)
	}
	want := []string{
		"-4611686018427387904 |@@@@@@@@@@@@@@@@@@@@                     1        ",
		"-2305843009213693952 |                                         0        ",
	}
	if lines[1] != want[0] || lines[2] != want[1] {
		t.Errorf("first rows:\n%s\n%s", lines[1], lines[2])
	}
	if last := lines[127]; last != "4611686018427387904 |@@@@@@@@@@@@@@@@@@@@                     1        " {
		t.Errorf("last row: %q", last)
	}
}

func TestLinearLayouts(t *testing.T) {
	for _, tc := range []struct {
		name   string
		spec   dtracefmt.Spec
		counts map[int64]int64
		want   string
	}{
		// The buckets of llquantize(i, 10, 2, 3, 10) for i = 0, 50, ...,
		// 10050 (see the SQL tests): below 100, steps of 100 up to 1000,
		// steps of 1000 up to 10000, and 10000 and more. Total 202.
		{"llquantize", dtracefmt.Spec{Kind: dtracefmt.LLQuantize, Factor: 10, Low: 2, High: 3, NSteps: 10},
			map[int64]int64{dtracefmt.Underflow: 2, 100: 2, 200: 2, 300: 2, 400: 2, 500: 2, 600: 2, 700: 2, 800: 2, 900: 2,
				1000: 20, 2000: 20, 3000: 20, 4000: 20, 5000: 20, 6000: 20, 7000: 20, 8000: 20, 9000: 20, 10000: 2},
			head + rows(`
           < 100 |                                         2        |
             100 |                                         2        |
             200 |                                         2        |
             300 |                                         2        |
             400 |                                         2        |
             500 |                                         2        |
             600 |                                         2        |
             700 |                                         2        |
             800 |                                         2        |
             900 |                                         2        |
            1000 |@@@@                                     20       |
            2000 |@@@@                                     20       |
            3000 |@@@@                                     20       |
            4000 |@@@@                                     20       |
            5000 |@@@@                                     20       |
            6000 |@@@@                                     20       |
            7000 |@@@@                                     20       |
            8000 |@@@@                                     20       |
            9000 |@@@@                                     20       |
        >= 10000 |                                         2        |
|
`)},
		// Steps of 1 below factor^1, then of factor^(o+1)/nsteps.
		{"llquantize small orders", dtracefmt.Spec{Kind: dtracefmt.LLQuantize, Factor: 10, Low: 0, High: 1, NSteps: 20},
			map[int64]int64{9: 1, 15: 1},
			head + rows(`
               8 |                                         0        |
               9 |@@@@@@@@@@@@@@@@@@@@                     1        |
              10 |                                         0        |
              15 |@@@@@@@@@@@@@@@@@@@@                     1        |
              20 |                                         0        |
|
`)},
		{"llquantize all zero", dtracefmt.Spec{Kind: dtracefmt.LLQuantize, Factor: 10, Low: 0, High: 1, NSteps: 20},
			map[int64]int64{15: 0},
			head + rows(`
             < 1 |                                         0        |
               1 |                                         0        |
|
`)},
		{"lquantize all zero", dtracefmt.Spec{Kind: dtracefmt.LQuantize, Lower: 0, Upper: 100, Step: 10},
			map[int64]int64{50: 0},
			head + rows(`
             < 0 |                                         0        |
               0 |                                         0        |
              10 |                                         0        |
|
`)},
		// Edges 0, 10, 50 (total 106).
		{"edges", dtracefmt.Spec{Kind: dtracefmt.Edges, Edges: []int64{0, 10, 50}},
			map[int64]int64{dtracefmt.Underflow: 5, 0: 10, 10: 40, 50: 51},
			head + rows(`
             < 0 |@@                                       5        |
               0 |@@@@                                     10       |
              10 |@@@@@@@@@@@@@@@                          40       |
           >= 50 |@@@@@@@@@@@@@@@@@@@                      51       |
|
`)},
		{"linear", dtracefmt.Spec{Kind: dtracefmt.Linear, Lower: -3, Step: 26, Levels: 4},
			map[int64]int64{-3: 2, 75: 2},
			head + rows(`
            < -3 |                                         0        |
              -3 |@@@@@@@@@@@@@@@@@@@@                     2        |
              23 |                                         0        |
              49 |                                         0        |
              75 |@@@@@@@@@@@@@@@@@@@@                     2        |
          >= 101 |                                         0        |
|
`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := write(t, tc.spec, unkeyed(tc.counts)); got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

// keysOf returns the key lines of an output.
func keysOf(out string) []string {
	var keys []string
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if i+1 < len(lines) && strings.HasPrefix(lines[i+1], "           value  ---") {
			keys = append(keys, l)
		}
	}
	return keys
}

// TestOrderAndKeys: ascending by the sum of count × bucket value, then by
// the count at zero, then by key: strings byte by byte, integers as
// unsigned numbers of their size; keys printed "  %-50s" and " %*d".
func TestOrderAndKeys(t *testing.T) {
	q := dtracefmt.Spec{Kind: dtracefmt.Quantize}
	h := func(k dtracefmt.Key, counts map[int64]int64) dtracefmt.Hist {
		return dtracefmt.Hist{Key: k, Counts: counts}
	}
	s := dtracefmt.StringKey
	got := keysOf(write(t, q,
		h(s("zero"), map[int64]int64{0: 2, 4: 1}), // sum 4, 2 at zero
		h(s("b"), map[int64]int64{4: 1}),          // sum 4
		h(s("a"), map[int64]int64{4: 1}),          // sum 4
		h(s("first"), map[int64]int64{1: 1}),      // sum 1
		h(s("last"), map[int64]int64{-4: -3}),     // sum 12
		h(s("neg"), map[int64]int64{-2: 1}),       // sum -2
	))
	want := []string{
		"  neg                                               ",
		"  first                                             ",
		"  a                                                 ",
		"  b                                                 ",
		"  zero                                              ",
		"  last                                              ",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("string keys:\n%q\nwant\n%q", got, want)
	}
	same := map[int64]int64{8: 1}
	got = keysOf(write(t, q, h(dtracefmt.IntKey(-1, 4), same), h(dtracefmt.IntKey(5, 4), same), h(dtracefmt.IntKey(3, 4), same)))
	want = []string{"        3", "        5", "       -1"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("int keys:\n%q\nwant\n%q", got, want)
	}
	for size, line := range map[int]string{1: "  -2", 2: "    -2", 8: "               -2"} {
		got = keysOf(write(t, q, h(dtracefmt.IntKey(-2, size), same)))
		if len(got) != 1 || got[0] != line {
			t.Errorf("key of size %d: %q, want %q", size, got, line)
		}
	}
	// A string longer than 50 is not cut; an unkeyed histogram starts
	// with the header's blank line.
	long := strings.Repeat("k", 60)
	if got := keysOf(write(t, q, h(s(long), same))); len(got) != 1 || got[0] != "  "+long {
		t.Errorf("long key: %q", got)
	}
	if out := write(t, q, unkeyed(same)); !strings.HasPrefix(out, head) {
		t.Errorf("unkeyed output starts %q", out[:20])
	}
}

func TestWriteErrors(t *testing.T) {
	for _, tc := range []struct {
		spec dtracefmt.Spec
		hist dtracefmt.Hist
		want string
	}{
		{dtracefmt.Spec{Kind: dtracefmt.LQuantize, Lower: 0, Upper: 100, Step: 10}, unkeyed(map[int64]int64{15: 1}),
			"dtracefmt: key (no key): 15 is not a bucket of lquantize(0, 100, 10)"},
		{dtracefmt.Spec{Kind: dtracefmt.Quantize}, dtracefmt.Hist{Key: dtracefmt.StringKey("x"), Counts: map[int64]int64{3: 1}},
			"dtracefmt: key x: 3 is not a bucket of quantize"},
		{dtracefmt.Spec{Kind: dtracefmt.LLQuantize, Factor: 10, Low: 0, High: 1, NSteps: 20}, unkeyed(map[int64]int64{11: 1}),
			"dtracefmt: key (no key): 11 is not a bucket of llquantize(10, 0, 1, 20)"},
		{dtracefmt.Spec{Kind: dtracefmt.Quantize}, dtracefmt.Hist{Key: dtracefmt.IntKey(1, 3), Counts: map[int64]int64{1: 1}},
			"dtracefmt: key 1: integer size 3 is not 1, 2, 4 or 8"},
		{dtracefmt.Spec{Kind: dtracefmt.Edges, Edges: []int64{3, 3}}, unkeyed(nil), "bucket edges: [3 3] are not in strictly ascending order"},
		{dtracefmt.Spec{Kind: dtracefmt.Edges, Edges: []int64{3}}, unkeyed(nil), "bucket edges: give at least two edges"},
		{dtracefmt.Spec{Kind: dtracefmt.Linear, Lower: 0, Step: 0, Levels: 3}, unkeyed(nil),
			"linear histogram: the width and the number of buckets must be positive"},
		{dtracefmt.Spec{Kind: dtracefmt.Linear, Lower: math.MaxInt64 - 5, Step: 2, Levels: 3}, unkeyed(nil),
			"linear histogram: 3 buckets of width 2 from 9223372036854775802 overflow 64 bits"},
	} {
		var out bytes.Buffer
		err := dtracefmt.Write(&out, tc.spec, []dtracefmt.Hist{tc.hist})
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: error %v, want %q", tc.spec, err, tc.want)
		}
	}
}
