package safetext

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestEscape(t *testing.T) {
	for _, c := range []struct{ in, want, text string }{
		{"plain Task_1ms ßüé日本", "plain Task_1ms ßüé日本", "plain Task_1ms ßüé日本"},
		{"\x1b[31mred\x1b[0m", `\x1b[31mred\x1b[0m`, `\x1b[31mred\x1b[0m`},
		{"bell\a nul\x00 del\x7f", `bell\x07 nul\x00 del\x7f`, `bell\x07 nul\x00 del\x7f`},
		{"a\nb\tc\r\nd\re", `a\nb\tc\r\nd\re`, "a\nb\tc\r\nd\\re"},
		{"csi\u009b2J", `csi\u009b2J`, `csi\u009b2J`},
		{"abc\u202edcb\u2066x\u2069\u200f", `abc\u202edcb\u2066x\u2069\u200f`, `abc\u202edcb\u2066x\u2069\u200f`},
		{"line\u2028sep", `line\u2028sep`, `line\u2028sep`},
		{"bad \xff\xfe utf8 \xe6\x97", `bad \xff\xfe utf8 \xe6\x97`, `bad \xff\xfe utf8 \xe6\x97`},
		{`back\slash "quote"`, `back\slash "quote"`, `back\slash "quote"`},
		{"", "", ""},
	} {
		if got := Escape(c.in); got != c.want {
			t.Errorf("Escape(%q) = %q, want %q", c.in, got, c.want)
		}
		if got := EscapeText(c.in); got != c.text {
			t.Errorf("EscapeText(%q) = %q, want %q", c.in, got, c.text)
		}
	}
}

// Nothing Escape returns holds a byte or rune a terminal acts on, and
// it is valid UTF-8, whatever the input.
func FuzzEscape(f *testing.F) {
	for _, s := range []string{"\x1b]0;title\a", "\u202e", "\xff", "a\r\nb", "x\u0085"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, out := range []string{Escape(s), EscapeText(s), Markdown(s, " "), Quote(s)} {
			if !utf8.ValidString(out) {
				t.Fatalf("%q: not UTF-8: %q", s, out)
			}
			for i, r := range out {
				if acts(r) && r != '\n' && r != '\t' && !(r == '\r' && strings.HasPrefix(out[i:], "\r\n")) {
					t.Fatalf("%q: %q holds %U", s, out, r)
				}
			}
		}
		if strings.ContainsAny(Escape(s), "\n\r\t") || strings.ContainsAny(Markdown(s, " "), "\n\r") {
			t.Fatalf("%q: a line break survives", s)
		}
	})
}

func TestQuote(t *testing.T) {
	if got := Quote("a\x00b"); got != `"a\x00b"` {
		t.Errorf("Quote: %s", got)
	}
	long := strings.Repeat("\x00", 2_000_000)
	want := `"` + strings.Repeat(`\x00`, MaxQuote) + `..." (2000000 bytes)`
	if got := Quote(long); got != want {
		t.Errorf("Quote of 2 MB: %d bytes %.60s..., want %d bytes", len(got), got, len(want))
	}
	// Cut at a rune: 日 is 3 bytes, and 34 of them are 102.
	if got := Quote(strings.Repeat("日", 34)); got != `"`+strings.Repeat("日", 33)+`..." (102 bytes)` {
		t.Errorf("Quote cut inside a rune: %s", got)
	}
}

func TestCut(t *testing.T) {
	if got := Cut("short", 10); got != "short" {
		t.Errorf("Cut: %q", got)
	}
	s := "file:1: " + strings.Repeat("x", 10_000) + " found the end"
	got := Cut(s, 100)
	if !strings.HasPrefix(got, "file:1: xxx") || !strings.HasSuffix(got, "x found the end") || !strings.Contains(got, " [... 9922 bytes left out ...] ") {
		t.Errorf("Cut: %q", got)
	}
}

func TestMarkdown(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Task_10ms_3", "Task_10ms_3"},
		{"_start_ *bold* `code`", `\_start\_ \*bold\* \` + "`code\\`"},
		{"v1\n# heading\r\n\r[link](http://x) ![img](http://x/a.png)", `v1 \# heading  \[link](http://x) !\[img](http://x/a.png)`},
		{"<img src=x onerror=alert(1)> a|b ~~s~~ $x$ back\\slash", `\<img src=x onerror=alert(1)> a\|b \~\~s\~\~ \$x\$ back\\slash`},
		{"esc\x1b[2J", `esc\x1b\[2J`},
		{"a[x]: <http://evil> 1 > 0", `a\[x]: \<http://evil> 1 > 0`},
	} {
		if got := Markdown(c.in, " "); got != c.want {
			t.Errorf("Markdown(%q) =\n%s\nwant\n%s", c.in, got, c.want)
		}
	}
	if got := Markdown("two\nlines", "<br>"); got != "two<br>lines" {
		t.Errorf("Markdown with <br>: %s", got)
	}
}

func TestMarkdownCode(t *testing.T) {
	for _, c := range []struct {
		in   string
		cell bool
		want string
	}{
		{"response_p99 > +10%", true, "`response_p99 > +10%`"},
		{"a|b", true, "`a\\|b`"},
		{"a`b", false, "``a`b``"},
		{"`x`", false, "`` `x` ``"},
		{"x\ny", false, "`x y`"},
	} {
		if got := MarkdownCode(c.in, c.cell); got != c.want {
			t.Errorf("MarkdownCode(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}
