package report

import "testing"

// A run's name (or an object's, a metric's) in the Markdown summary is
// text on one line: never a heading, a link, an image, an HTML tag or a
// cell break, and nothing a terminal acts on.
func TestMarkdownNames(t *testing.T) {
	for in, want := range map[string]string{
		"v1.2_rc":                        `v1.2_rc`,
		"Task_10ms_3":                    `Task_10ms_3`,
		"evil\n# Owned":                  `evil \# Owned`,
		"[click](http://x.invalid/)":     `\[click](http://x.invalid/)`,
		"![img](http://x.invalid/p.png)": `!\[img](http://x.invalid/p.png)`,
		"<script>alert(1)</script>":      `\<script>alert(1)\</script>`,
		"*b* _i_ `c` a|b ~~s~~ $x$":      "\\*b\\* \\_i\\_ \\`c\\` a\\|b \\~\\~s\\~\\~ \\$x\\$",
		"\x1b[31mred\r\u202e":            `\x1b\[31mred \u202e`,
	} {
		if got := mdCell(in); got != want {
			t.Errorf("mdCell(%q) = %q, want %q", in, got, want)
		}
	}
}
