package dtracefmt_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/queries/dtracefmt"
	"github.com/traceduck/traceduck/queries/dtracefmt/toolkit"
)

// examples reads every histogram DTrace printed in the DTraceToolkit
// examples, or skips the test when they are not there.
func examples(t *testing.T) []toolkit.Block {
	t.Helper()
	if toolkit.Dir() == "" {
		t.Skip("DTraceToolkit examples (../shared/testdata-external/dtrace) not available")
	}
	blocks, err := toolkit.ReadAll(toolkit.Dir())
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) < 100 {
		t.Fatalf("read only %d histograms from the examples", len(blocks))
	}
	return blocks
}

// trimLines removes trailing blanks from every line, for the examples
// whose files lost the blanks DTrace prints at the end of its lines.
func trimLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}

const lostBlanks = "the last line lost two of its trailing blanks"

// edited lists the example histograms that are not exactly what a
// current DTrace prints, why, and how they are compared instead. The test
// fails when one of them is no longer in the examples, so that the list
// cannot hide anything.
var edited = map[string]struct {
	why  string
	same func(t *testing.T, b toolkit.Block, spec dtracefmt.Spec, ours string) bool
}{
	"bitesize_example.txt:18":   {"printed by the first Solaris 10 DTrace, which truncated bar lengths", truncated},
	"bitesize_example.txt:37":   {"printed by the first Solaris 10 DTrace, which truncated bar lengths", truncated},
	"bitesize_example.txt:46":   {"printed by the first Solaris 10 DTrace, which truncated bar lengths", truncated},
	"bitesize_example.txt:63":   {"printed by the first Solaris 10 DTrace, which truncated bar lengths", truncated},
	"lockbydist_example.txt:94": {lostBlanks, sameTrimmed},
	// The next two are the same outputs, pasted into two files with
	// "[...]": rows were cut, and the bars were scaled to the counts of
	// the rows that are no longer there.
	"readdist_example.txt:18":    {"rows cut ([...]), bars scaled to their counts", sameWithoutBars},
	"oneliners_examples.txt:153": {"rows cut ([...]), bars scaled to their counts", sameWithoutBars},
	"writedist_example.txt:11":   {"rows cut ([...]), bars scaled to their counts", sameWithoutBars},
	"oneliners_examples.txt:175": {"rows cut ([...]), bars scaled to their counts", sameWithoutBars},
	"writedist_example.txt:19":   {"the last (empty) row was cut", lastRowCut},
	"oneliners_examples.txt:183": {"the last (empty) row was cut", lastRowCut},
}

func truncated(t *testing.T, b toolkit.Block, spec dtracefmt.Spec, _ string) bool {
	var out bytes.Buffer
	if err := dtracefmt.WriteTruncating(&out, spec, []dtracefmt.Hist{{Key: dtracefmt.Key{None: true}, Counts: b.Counts()}}); err != nil {
		t.Fatal(err)
	}
	return unkeyedBlock(out.String(), b.Trimmed) == b.Text
}

func sameTrimmed(_ *testing.T, b toolkit.Block, _ dtracefmt.Spec, ours string) bool {
	return trimLines(ours) == trimLines(b.Text)
}

func sameWithoutBars(_ *testing.T, b toolkit.Block, _ dtracefmt.Spec, ours string) bool {
	unbar := strings.NewReplacer("@", " ")
	return unbar.Replace(ours) == unbar.Replace(b.Text)
}

func lastRowCut(_ *testing.T, b toolkit.Block, _ dtracefmt.Spec, ours string) bool {
	rest, ok := strings.CutPrefix(ours, b.Text)
	f := strings.Fields(rest)
	return ok && strings.Count(rest, "\n") == 1 && len(f) == 3 && f[1] == "|" && f[2] == "0"
}

// unkeyedBlock turns the output of one unkeyed histogram ("\n", the
// header, the rows, "\n") into the text of the block as the examples
// show it.
func unkeyedBlock(out string, trimmed bool) string {
	got := strings.TrimPrefix(out, "\n")
	got = strings.TrimSuffix(got, "\n")
	if trimmed {
		got = trimLines(got)
	}
	return got
}

// TestToolkitBlocks prints every histogram of the examples from its
// (bucket, count) rows and compares the result with what DTrace printed:
// the rows shown, every bar's length and every column, byte for byte.
func TestToolkitBlocks(t *testing.T) {
	blocks := examples(t)
	kinds := map[dtracefmt.Kind]int{}
	seen := map[string]bool{}
	for _, b := range blocks {
		spec, err := b.Spec()
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		kinds[spec.Kind]++
		var out bytes.Buffer
		err = dtracefmt.Write(&out, spec, []dtracefmt.Hist{{Key: dtracefmt.Key{None: true}, Counts: b.Counts()}})
		if err != nil {
			t.Errorf("%s:%d: %v", b.File, b.Line, err)
			continue
		}
		got := unkeyedBlock(out.String(), b.Trimmed)
		where := fmt.Sprintf("%s:%d", strings.TrimPrefix(b.File, "opendtrace__toolkit__Examples__"), b.Line)
		if e, ok := edited[where]; ok {
			seen[where] = true
			if got == b.Text {
				t.Errorf("%s is listed as edited (%s) but matches exactly: take it off the list", where, e.why)
			} else if !e.same(t, b, spec, got) {
				t.Errorf("%s (%s; %s):\ngot:\n%s\nDTrace printed:\n%s", where, spec, e.why, got, b.Text)
			}
			continue
		}
		if got != b.Text {
			t.Errorf("%s (%s):\ngot:\n%s\nDTrace printed:\n%s", where, spec, got, b.Text)
		}
	}
	for where := range edited {
		if !seen[where] {
			t.Errorf("%s is listed as edited but is not in the examples", where)
		}
	}
	if kinds[dtracefmt.Quantize] < 100 || kinds[dtracefmt.LQuantize] < 10 {
		t.Errorf("histograms compared by kind: %v", kinds)
	}
	t.Logf("compared %d histograms: %d quantize, %d lquantize", len(blocks), kinds[dtracefmt.Quantize], kinds[dtracefmt.LQuantize])
}

// otherOrder lists the keyed examples not printed in DTrace's order, and
// why.
var otherOrder = map[string]string{
	// printa("%s, total bytes = %@d %@d", @sum, @dist) walks two
	// aggregations together, in the order of the first: the sums in the
	// key lines, which are ascending.
	"py_malloc_example.txt:16":  "sorted by another aggregation, the sum shown in the key line",
	"py_malloc_example.txt:188": "sorted by another aggregation, the sum shown in the key line",
	// nautilus and Xvnc have equal histograms (3 in bucket 2048) and are
	// printed out of key order: DTrace breaks such ties by key since
	// libdtrace's dt_aggregate.c 1.12 (2005-11); this example is older.
	"stacksize_example.txt:13": "a tie between equal histograms left unbroken by a 2005 DTrace",
}

// TestToolkitSessions prints the keyed aggregations of the examples, all
// their histograms together, and checks DTrace's order (ascending by the
// bucket-value-weighted sum of the counts, then by key) against the order
// the examples show. Where the example prints the keys in DTrace's
// default layout (not through a printa() format), the whole output is
// compared byte for byte: key lines, blank lines, order.
func TestToolkitSessions(t *testing.T) {
	if toolkit.Dir() == "" {
		t.Skip("DTraceToolkit examples (../shared/testdata-external/dtrace) not available")
	}
	paths, err := filepath.Glob(filepath.Join(toolkit.Dir(), "*example*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	whole, ordered := 0, 0
	for _, path := range paths {
		sessions, err := toolkit.Sessions(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range sessions {
			first := s.Blocks[0]
			where := fmt.Sprintf("%s:%d", strings.TrimPrefix(first.File, "opendtrace__toolkit__Examples__"), first.Line)
			spec, err := first.Spec()
			if err != nil {
				t.Errorf("%s: %v", where, err)
				continue
			}
			var hists []dtracefmt.Hist
			var keys []string
			hasEdited, blanksOnly := false, true
			for _, b := range s.Blocks {
				bs, err := b.Spec()
				if err != nil {
					t.Errorf("%s: %v", where, err)
					continue
				}
				// The blocks of one aggregation share its parameters:
				// take the widest lquantize range any of them shows.
				if spec.Kind == dtracefmt.LQuantize && bs.Kind == dtracefmt.LQuantize {
					spec.Lower = min(spec.Lower, bs.Lower)
					spec.Upper = max(spec.Upper, bs.Upper)
				}
				hists = append(hists, dtracefmt.Hist{Key: dtracefmt.StringKey(b.Key()), Counts: b.Counts()})
				keys = append(keys, b.Key())
				if e, ok := edited[fmt.Sprintf("%s:%d", strings.TrimPrefix(b.File, "opendtrace__toolkit__Examples__"), b.Line)]; ok {
					hasEdited = true
					blanksOnly = blanksOnly && e.why == lostBlanks
				}
			}
			var out bytes.Buffer
			if err := dtracefmt.Write(&out, spec, hists); err != nil {
				t.Errorf("%s: %v", where, err)
				continue
			}
			printed, err := toolkit.Parse("ours", bytes.NewReader(out.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			var ours []string
			for _, b := range printed {
				ours = append(ours, b.Key())
			}
			if why, ok := otherOrder[where]; ok {
				if strings.Join(ours, "\n") == strings.Join(keys, "\n") {
					t.Errorf("%s is listed as out of order (%s) but is in DTrace's order: take it off the list", where, why)
				}
				continue
			}
			if len(keys) > 1 {
				ordered++
				if strings.Join(ours, "\n") != strings.Join(keys, "\n") {
					t.Errorf("%s: order of the %d keys:\nours:\n  %s\nDTrace's:\n  %s", where, len(keys),
						strings.Join(ours, "\n  "), strings.Join(keys, "\n  "))
				}
			}
			if !s.DefaultKeys || hasEdited && !blanksOnly {
				continue
			}
			whole++
			got, want := strings.TrimSuffix(out.String(), "\n"), s.Text
			if first.Trimmed || hasEdited {
				got, want = trimLines(got), trimLines(want)
			}
			if got != want {
				t.Errorf("%s: keyed output:\ngot:\n%s\nDTrace printed:\n%s", where, got, s.Text)
			}
		}
	}
	if whole < 2 || ordered < 20 {
		t.Errorf("compared %d sessions byte for byte and the order of %d; expected more", whole, ordered)
	}
	t.Logf("compared %d keyed outputs byte for byte and the order of %d", whole, ordered)
}
