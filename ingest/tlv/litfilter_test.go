package tlv

import (
	"math/rand"
	"strings"
	"testing"
)

// checkLitFilter compares the automaton with strings.Contains.
func checkLitFilter(t testing.TB, lits []string, line string) {
	f := newLitFilter(lits)
	if f == nil {
		return // too large: each literal is looked for on its own
	}
	found := make([]uint64, f.words)
	f.scan(line, found)
	for id, l := range lits {
		got := found[id/64]&(1<<(id%64)) != 0
		if want := strings.Contains(line, l); got != want {
			t.Fatalf("literals %q, line %q: literal %q found %v, strings.Contains %v", lits, line, l, got, want)
		}
	}
}

func TestLitFilterBound(t *testing.T) {
	long := make([]string, 300)
	for i := range long {
		long[i] = strings.Repeat(string(rune('a'+i%26)), 100) + strings.Repeat("0123456789", 1+i%5) + string(rune(0x20+i%90))
	}
	if f := newLitFilter(long); f != nil {
		t.Errorf("a table of %d entries, more than %d", len(f.delta), maxLitTable)
	}
}

func TestLitFilter(t *testing.T) {
	checkLitFilter(t, []string{"] dispatch to task ", "] task ", " becomes ", "] enter to ", "] enter to int handler "}, "[12] enter to int handler 3.")
	checkLitFilter(t, []string{"he", "she", "his", "hers"}, "ushers")
	checkLitFilter(t, []string{"aab", "ab", "b", "aaaa"}, "aaab")
	rng := rand.New(rand.NewSource(1))
	word := func(n int) string {
		b := make([]byte, 1+rng.Intn(n))
		for i := range b {
			b[i] = "ab c]"[rng.Intn(5)]
		}
		return string(b)
	}
	for i := 0; i < 3000; i++ {
		lits := make([]string, 1+rng.Intn(140)) // more than 64: several words
		seen := map[string]bool{}
		for k := range lits {
			for lits[k] = word(6); seen[lits[k]]; lits[k] = word(8) {
			}
			seen[lits[k]] = true
		}
		checkLitFilter(t, lits, word(40))
	}
}

func FuzzLitFilter(f *testing.F) {
	f.Add("] dispatch to task \x00] task \x00 becomes ", "[1] task 2 becomes RUNNABLE.")
	f.Add("he\x00she\x00his\x00hers", "ushers")
	f.Fuzz(func(t *testing.T, lits, line string) {
		var ls []string
		seen := map[string]bool{}
		for _, l := range strings.Split(lits, "\x00") {
			if l != "" && !seen[l] {
				seen[l] = true
				ls = append(ls, l)
			}
		}
		if len(ls) > 300 || len(line) > 1000 {
			return
		}
		checkLitFilter(t, ls, line)
	})
}
