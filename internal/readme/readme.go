// Package readme reads the fenced blocks of README.md for the test that
// runs them (readme_test.go): every command block is run, in README
// order, in a fresh directory holding a copy of the repository, and the
// output shown under it must be the output it prints.
//
// The README's conventions, which Parse and Match enforce:
//
//   - A block fenced as ```sh is a command block: it is run by bash -e
//     (stop at the first command that fails) in the directory of the
//     previous blocks, so it may use the files they wrote. It must exit
//     0: a block that shows a failure catches it (`|| echo "exit code
//     $?"`).
//   - A ```text block that follows a command block with only blank lines
//     between is its output: what the commands print on standard output
//     and standard error, interleaved as a terminal shows them. Other
//     ```text blocks (a listing, a file's excerpt) are not compared.
//   - A command block without an output block must print nothing on
//     standard error.
//   - Every fence names its kind (sh, text, or a language such as json);
//     a bare ``` is an error, so that no command block escapes the test.
//   - A command block that cannot run in a test (it needs the network,
//     Python, a browser, minutes of work, or is the test suite itself)
//     has the line <!-- readme-test: skip (REASON) --> right before its
//     fence; the test lists the skipped blocks with their reasons.
//   - In an output block, a line "..." (or "... (a remark)") stands for
//     any number of lines left out, and "[...]" within a line for any
//     text of that line (a time, a version, a path of the reader's
//     machine). Lines are compared without their trailing white space
//     (a carriage return included); trailing empty lines do not count.
package readme

import (
	"bufio"
	"bytes"
	"fmt"
	"regexp"
	"strings"
)

// Kind is what a fenced block is.
type Kind int

const (
	// Command is a ```sh block: commands to run.
	Command Kind = iota
	// Output is a ```text block right after a command block.
	Output
	// Listing is any other fenced block: shown, never run.
	Listing
)

// Block is one fenced block of the README.
type Block struct {
	Line int    // line of the opening fence (1-based)
	Info string // the fence's info string: sh, text, json, ...
	Kind Kind
	Text string // the lines between the fences, each ending in "\n"
	// Skip, for a command block, is the reason given by a skip mark
	// before it ("" when the block runs).
	Skip string
	// Want, for a command block, is the output block that follows it
	// (nil when none).
	Want *Block
}

var (
	skipMark = regexp.MustCompile(`^<!-- readme-test: skip \((.*\S.*)\) -->$`)
	fence    = regexp.MustCompile("^```(.*)$")
	// looksLikeCommand catches a command block fenced as text.
	looksLikeCommand = regexp.MustCompile(`^(\./traceduck|traceduck|go (run|build|test)) `)
)

// Parse returns the fenced blocks of a Markdown file in order, each
// command block with its skip reason and its output block.
func Parse(md []byte) ([]*Block, error) {
	var (
		blocks  []*Block
		cur     *Block
		body    strings.Builder
		skip    string // a skip mark waiting for its block
		skipAt  int
		prevCmd *Block // the last command block, while only blank lines follow it
		n       int
	)
	sc := bufio.NewScanner(bytes.NewReader(md))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		n++
		line := sc.Text()
		if cur != nil { // inside a block
			if line == "```" {
				cur.Text = body.String()
				body.Reset()
				blocks = append(blocks, cur)
				if cur.Kind == Command {
					prevCmd = cur
				} else {
					prevCmd = nil
				}
				cur = nil
				continue
			}
			body.WriteString(line + "\n")
			continue
		}
		if m := fence.FindStringSubmatch(line); m != nil {
			info := strings.TrimSpace(m[1])
			b := &Block{Line: n, Info: info}
			switch info {
			case "":
				return nil, fmt.Errorf("README.md:%d: a fence without a kind: write ```sh for commands the test runs, ```text for their output or a listing", n)
			case "sh":
				b.Kind = Command
				b.Skip = skip
			case "text":
				if prevCmd != nil {
					b.Kind = Output
					prevCmd.Want = b
				} else {
					b.Kind = Listing
				}
			default:
				b.Kind = Listing
			}
			if skip != "" && b.Kind != Command {
				return nil, fmt.Errorf("README.md:%d: a skip mark before a block that is not ```sh", skipAt)
			}
			skip = ""
			prevCmd = nil
			cur = b
			continue
		}
		if strings.HasPrefix(strings.TrimLeft(line, " \t"), "```") {
			return nil, fmt.Errorf("README.md:%d: an indented fence, which the test does not read: fences start at the line's beginning", n)
		}
		if strings.HasPrefix(line, "<!-- readme-test") {
			m := skipMark.FindStringSubmatch(line)
			if m == nil {
				return nil, fmt.Errorf("README.md:%d: %q: the only mark is <!-- readme-test: skip (REASON) -->", n, line)
			}
			skip, skipAt = m[1], n
			prevCmd = nil
			continue
		}
		if strings.TrimSpace(line) != "" {
			prevCmd = nil
			if skip != "" {
				return nil, fmt.Errorf("README.md:%d: a skip mark must be right before the ```sh fence of its block", skipAt)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if cur != nil {
		return nil, fmt.Errorf("README.md:%d: the block is never closed", cur.Line)
	}
	if skip != "" {
		return nil, fmt.Errorf("README.md:%d: a skip mark with no block after it", skipAt)
	}
	for _, b := range blocks {
		if b.Kind != Command && looksLikeCommand.MatchString(b.Text) {
			return nil, fmt.Errorf("README.md:%d: a ```%s block that begins with a command: fence it as ```sh so that it is run", b.Line, b.Info)
		}
	}
	return blocks, nil
}

// elideLines is an output line that stands for any run of lines.
var elideLines = regexp.MustCompile(`^\.\.\.(\s+\(.*\))?$`)

// ElideText is the mark within an output line for any text.
const ElideText = "[...]"

// Elisions counts the elisions of an output block: lines "..." and marks
// "[...]".
func Elisions(want string) int {
	n := 0
	for _, l := range lines(want) {
		if elideLines.MatchString(l) {
			n++
		} else {
			n += strings.Count(l, ElideText)
		}
	}
	return n
}

// Match reports whether got (what the commands printed) is the output
// want shows, with its elisions; when not, the error says where they
// part.
func Match(want, got string) error {
	w, g := lines(want), lines(got)
	pats := make([]*regexp.Regexp, len(w))
	for i, l := range w {
		if elideLines.MatchString(l) {
			continue
		}
		if strings.Contains(l, ElideText) {
			parts := strings.Split(l, ElideText)
			for j := range parts {
				parts[j] = regexp.QuoteMeta(parts[j])
			}
			pats[i] = regexp.MustCompile("^" + strings.Join(parts, ".*") + "$")
		}
	}
	lineOK := func(i, j int) bool {
		if pats[i] != nil {
			return pats[i].MatchString(g[j])
		}
		return w[i] == g[j]
	}
	// ok[i][j]: w[i:] matches g[j:]; computed from the ends.
	ok := make([][]bool, len(w)+1)
	for i := range ok {
		ok[i] = make([]bool, len(g)+1)
	}
	ok[len(w)][len(g)] = true
	for i := len(w) - 1; i >= 0; i-- {
		elide := elideLines.MatchString(w[i])
		for j := len(g); j >= 0; j-- {
			switch {
			case elide:
				ok[i][j] = ok[i+1][j] || (j < len(g) && ok[i][j+1])
			case j < len(g):
				ok[i][j] = lineOK(i, j) && ok[i+1][j+1]
			}
		}
	}
	if ok[0][0] {
		return nil
	}
	// Where they part: the longest prefix of want that matches a prefix
	// of got, line by line.
	i, j := 0, 0
	for i < len(w) && j < len(g) && !elideLines.MatchString(w[i]) && lineOK(i, j) {
		i, j = i+1, j+1
	}
	var msg strings.Builder
	if i < len(w) && elideLines.MatchString(w[i]) {
		fmt.Fprintf(&msg, "the output differs after the elision at line %d of the shown output\n", i+1)
	} else {
		fmt.Fprintf(&msg, "line %d of the shown output differs:\n  shown: %s\n  real:  %s\n", i+1, at(w, i), at(g, j))
	}
	fmt.Fprintf(&msg, "shown output:\n%s\nreal output:\n%s", indent(w), indent(g))
	return fmt.Errorf("%s", msg.String())
}

// lines splits an output into lines without their trailing white space
// (CSV's carriage returns included) and drops the trailing empty ones.
func lines(s string) []string {
	ls := strings.Split(s, "\n")
	for i, l := range ls {
		ls[i] = strings.TrimRight(l, " \t\r")
	}
	for len(ls) > 0 && ls[len(ls)-1] == "" {
		ls = ls[:len(ls)-1]
	}
	return ls
}

func at(ls []string, i int) string {
	if i < len(ls) {
		return ls[i]
	}
	return "(nothing: the output ends)"
}

func indent(ls []string) string {
	var b strings.Builder
	for _, l := range ls {
		b.WriteString("    " + l + "\n")
	}
	return b.String()
}
