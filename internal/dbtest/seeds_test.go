package dbtest

import "testing"

func TestSeedHead(t *testing.T) {
	for _, c := range []struct {
		in    string
		limit int
		want  string
	}{
		{"a\nbb\nccc\n", 0, "a\nbb\nccc\n"},
		{"a\nbb\nccc\n", 20, "a\nbb\nccc\n"},
		{"a\nbb\nccc\n", 6, "a\nbb\n"},
		{"a\nbb\nccc\n", 5, "a\nbb\n"},
		{"a\nbb\nccc\n", 4, "a\n"},
		{"abcdef", 3, "abc"},
	} {
		if got := string(seedHead([]byte(c.in), c.limit)); got != c.want {
			t.Errorf("seedHead(%q, %d) = %q, want %q", c.in, c.limit, got, c.want)
		}
	}
}
