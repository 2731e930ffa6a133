package readme

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestMatch(t *testing.T) {
	const table = `run_id  object       total_ns
------  -----------  --------
     1  Task_1ms_1   24011709
     1  Task_50ms_2  23105499
     7  Web Content  20444000
`
	for _, c := range []struct {
		name, want, got string
		ok              bool
	}{
		{"same", table, table, true},
		{"trailing blanks and CRLF", table, strings.ReplaceAll(table, "\n", "  \r\n") + "\n\n", true},
		{"a number changed", table, strings.Replace(table, "23105499", "23105498", 1), false},
		{"a shown number changed", strings.Replace(table, "24011709", "24011719", 1), table, false},
		{"a line more", table, table + "     8  main  1\n", false},
		{"a line less", table, strings.Replace(table, "     7  Web Content  20444000\n", "", 1), false},
		{"lines swapped", table, strings.Replace(strings.Replace(table, "Task_1ms_1   24011709", "X", 1), "Task_50ms_2  23105499", "Task_1ms_1   24011709", 1), false},
		{"cut at the end", "run_id  object       total_ns\n...\n", table, true},
		{"cut in the middle", "run_id  object       total_ns\n...\n     7  Web Content  20444000\n", table, true},
		{"cut with a remark", "run_id  object       total_ns\n...      (cut: the top rows)\n     7  Web Content  20444000\n", table, true},
		{"cut of nothing", strings.Replace(table, "     7", "...\n     7", 1), table, true},
		{"cut, then a wrong line", "run_id  object       total_ns\n...\n     7  Web Content  20444001\n", table, false},
		{"cut, then a line that is not there", table + "...\nmore\n", table, false},
		{"text elided in a line", strings.Replace(table, "20444000", "[...]", 1), table, true},
		{"text elided, the rest differs", strings.Replace(table, "Web Content  20444000", "Web Contant  [...]", 1), table, false},
		{"an elision is not a pattern", "a.c [...] (x)\n", "abc 1 (x)\n", false},
		{"an elision is not a pattern either", "a.c [...] (x)\n", "a.c 1 (x)\n", true},
		{"empty", "", "", true},
		{"output where none is shown", "", "x\n", false},
		{"no output where some is shown", "x\n", "", false},
	} {
		err := Match(c.want, c.got)
		if (err == nil) != c.ok {
			t.Errorf("%s: Match gave %v, want ok=%v", c.name, err, c.ok)
		}
	}
	// The error says where they part.
	err := Match(table, strings.Replace(table, "23105499", "23105498", 1))
	if err == nil || !strings.Contains(err.Error(), "line 4 of the shown output differs:\n  shown:      1  Task_50ms_2  23105499\n  real:       1  Task_50ms_2  23105498\n") {
		t.Errorf("the error does not point at the line:\n%v", err)
	}
}

// TestMatchREADME: every shown output of the README fails to match once
// any digit of it is changed (the elisions leave nothing unchecked that
// they should not), on the README's own text.
func TestMatchREADME(t *testing.T) {
	md, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := Parse(md)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, b := range blocks {
		if b.Kind != Output {
			continue
		}
		n++
		if err := Match(b.Text, b.Text); err != nil {
			t.Errorf("README.md:%d: the output does not match itself: %v", b.Line, err)
		}
		i := strings.IndexAny(b.Text, "0123456789")
		if i < 0 {
			continue
		}
		changed := b.Text[:i] + string('0'+(b.Text[i]-'0'+1)%10) + b.Text[i+1:]
		if Match(b.Text, changed) == nil {
			t.Errorf("README.md:%d: the output still matches with its first digit changed", b.Line)
		}
	}
	if n < 15 {
		t.Errorf("README.md has %d output blocks: the parser lost some", n)
	}
}

func TestElisions(t *testing.T) {
	if n := Elisions("a\n...\nb [...] c [...]\n... (cut)\n"); n != 4 {
		t.Errorf("Elisions = %d, want 4", n)
	}
}

func TestParse(t *testing.T) {
	md := "# x\n\n```sh\n./traceduck a\n```\n\n```text\nout\n```\n\nprose\n\n```text\nlisting\n```\n" +
		"<!-- readme-test: skip (needs the network) -->\n\n```sh\nnpm install x\n```\n```text\nshown\n```\n" +
		"```json\n{}\n```\n```sh\n./traceduck b\n```\nthen\n```text\nnot its output\n```\n"
	blocks, err := Parse([]byte(md))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, b := range blocks {
		s := []string{"cmd", "out", "listing"}[b.Kind] + "@" + strconv.Itoa(b.Line)
		if b.Skip != "" {
			s += " skip=" + b.Skip
		}
		if b.Want != nil {
			s += " want@" + strconv.Itoa(b.Want.Line)
		}
		got = append(got, s)
	}
	want := "cmd@3 want@7 | out@7 | listing@13 | cmd@18 skip=needs the network want@21 | out@21 | listing@24 | cmd@27 | listing@31"
	if g := strings.Join(got, " | "); g != want {
		t.Errorf("Parse:\n got %s\nwant %s", g, want)
	}
	if blocks[0].Text != "./traceduck a\n" {
		t.Errorf("text %q", blocks[0].Text)
	}

	for _, c := range []struct{ md, err string }{
		{"```\n./traceduck a\n```\n", "README.md:1: a fence without a kind"},
		{"```text\n./traceduck a\n```\n", "README.md:1: a ```text block that begins with a command"},
		{"<!-- readme-test: skip () -->\n```sh\nx\n```\n", "the only mark is"},
		{"<!-- readme-test: skip (x) -->\n```text\nx\n```\n", "README.md:1: a skip mark before a block that is not ```sh"},
		{"<!-- readme-test: skip (x) -->\nprose\n```sh\nx\n```\n", "README.md:1: a skip mark must be right before"},
		{"<!-- readme-test: skip (x) -->\n", "README.md:1: a skip mark with no block after it"},
		{"```sh\nx\n", "README.md:1: the block is never closed"},
		{"- a list\n\n  ```sh\n  x\n  ```\n", "README.md:3: an indented fence"},
	} {
		_, err := Parse([]byte(c.md))
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("Parse(%q) = %v, want an error with %q", c.md, err, c.err)
		}
	}
}
