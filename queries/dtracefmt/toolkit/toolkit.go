// Package toolkit reads the histograms that DTrace printed in the example
// outputs of the DTraceToolkit (../shared/testdata-external/dtrace), for
// the tests of dtracefmt, the SQL bucket macros and `traceduck hist`: a
// small reader of the printed blocks, not a DTrace output parser (that is
// ingest/dtrace).
package toolkit

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/traceduck/traceduck/queries/dtracefmt"
)

// Dir returns where the examples are, relative to the directory of the
// package under test (../shared/testdata-external/dtrace from the
// repository root, which is one to three levels up), or "" when they are
// not there.
func Dir() string {
	for up := "../.."; len(up) <= len("../../../.."); up += "/.." {
		d := filepath.Join(up, "shared", "testdata-external", "dtrace")
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			return d
		}
	}
	return ""
}

// Row is one row of a printed histogram.
type Row struct {
	Label string // "< 0", ">= 170", "1024"
	Count int64
	Bar   int // the number of '@'
}

// Block is one printed histogram: the header line and its rows.
type Block struct {
	File    string
	Line    int    // 1-based line of the header
	Indent  int    // columns the example indents its terminal session by
	KeyLine string // the line before the header, dedented, "" when empty
	// Text is the header and the rows as printed, dedented, each line
	// ending in "\n".
	Text string
	Rows []Row
	// Trimmed: the file lost the trailing blanks DTrace prints (the
	// header does not end in "count    ").
	Trimmed bool
}

// header is DTrace's histogram header without its trailing blanks.
const header = "           value  ------------- Distribution ------------- count"

// row is a row of the layout without negative counts: label, '|', 40
// columns of bar, count.
var row = regexp.MustCompile(`^ *(< -?[0-9]+|>= -?[0-9]+|-?[0-9]+) \|([@ ]{40}) (-?[0-9]+) *$`)

// Read returns the blocks of one example file, in file order.
func Read(path string) ([]Block, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return read(filepath.Base(path), f)
}

// Parse returns the blocks of a text that DTrace printed.
func Parse(name string, r io.Reader) ([]Block, error) { return read(name, r) }

func read(name string, r io.Reader) ([]Block, error) {
	var lines []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	var blocks []Block
	for i, l := range lines {
		at := strings.Index(l, header)
		if at < 0 {
			continue
		}
		b := Block{File: name, Line: i + 1, Indent: at, Trimmed: !strings.HasSuffix(l, "count    ")}
		if i > 0 {
			b.KeyLine = dedent(lines[i-1], at)
		}
		var text strings.Builder
		text.WriteString(dedent(l, at) + "\n")
		for _, rl := range lines[i+1:] {
			d := dedent(rl, at)
			m := row.FindStringSubmatch(d)
			if m == nil {
				break
			}
			n, err := strconv.ParseInt(m[3], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: count %q: %v", name, i+1, m[3], err)
			}
			b.Rows = append(b.Rows, Row{Label: m[1], Count: n, Bar: strings.Count(m[2], "@")})
			text.WriteString(d + "\n")
		}
		if len(b.Rows) == 0 {
			return nil, fmt.Errorf("%s:%d: a histogram header without rows", name, i+1)
		}
		b.Text = text.String()
		blocks = append(blocks, b)
	}
	return blocks, nil
}

// dedent removes the first n columns when they are blank.
func dedent(s string, n int) string {
	if len(s) >= n && strings.TrimSpace(s[:n]) == "" {
		return s[n:]
	}
	return strings.TrimLeft(s, " ")
}

// ReadAll returns the blocks of every example file in dir.
func ReadAll(dir string) ([]Block, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*example*.txt"))
	if err != nil {
		return nil, err
	}
	var all []Block
	for _, p := range paths {
		b, err := Read(p)
		if err != nil {
			return nil, err
		}
		all = append(all, b...)
	}
	return all, nil
}

// Spec infers the aggregation that printed the block. Rows that are
// consecutive quantize() buckets (0 and powers of two) are a quantize();
// otherwise the rows are an lquantize() whose step is the difference
// between rows, whose lower bound is the "< lower" row or the first row
// and whose upper bound is the ">= upper" row or one step above the last
// row (any larger bound prints the same rows).
func (b Block) Spec() (dtracefmt.Spec, error) {
	var nums []int64
	lower, upper := int64(0), int64(0)
	hasLower, hasUpper := false, false
	for _, r := range b.Rows {
		switch {
		case strings.HasPrefix(r.Label, "< "):
			v, _ := strconv.ParseInt(r.Label[2:], 10, 64)
			lower, hasLower = v, true
		case strings.HasPrefix(r.Label, ">= "):
			v, _ := strconv.ParseInt(r.Label[3:], 10, 64)
			upper, hasUpper = v, true
		default:
			v, _ := strconv.ParseInt(r.Label, 10, 64)
			nums = append(nums, v)
		}
	}
	if !hasLower && !hasUpper && consecutiveQuantize(nums) {
		return dtracefmt.Spec{Kind: dtracefmt.Quantize}, nil
	}
	if len(nums) < 2 {
		return dtracefmt.Spec{}, fmt.Errorf("%s:%d: too few rows to tell the step", b.File, b.Line)
	}
	step := nums[1] - nums[0]
	for i := 1; i < len(nums); i++ {
		if nums[i]-nums[i-1] != step || step <= 0 {
			return dtracefmt.Spec{}, fmt.Errorf("%s:%d: rows are neither quantize() nor lquantize() rows", b.File, b.Line)
		}
	}
	if !hasLower {
		lower = nums[0]
	}
	if !hasUpper {
		upper = nums[len(nums)-1] + step
	}
	return dtracefmt.Spec{Kind: dtracefmt.LQuantize, Lower: lower, Upper: upper, Step: step}, nil
}

func consecutiveQuantize(nums []int64) bool {
	for i, v := range nums {
		b := dtracefmt.Spec{Kind: dtracefmt.Quantize}.Bucket(v)
		if b != v {
			return false
		}
		if i > 0 && next(nums[i-1]) != v {
			return false
		}
	}
	return len(nums) > 0
}

// next is the quantize() bucket after b.
func next(b int64) int64 {
	switch {
	case b == -1:
		return 0
	case b == 0:
		return 1
	case b < 0:
		return b / 2
	}
	return b * 2
}

// Bucket is the bucket value of a row's label, as the SQL macros return
// it: dtracefmt.Underflow for "< lower", upper for ">= upper".
func Bucket(label string) int64 {
	switch {
	case strings.HasPrefix(label, "< "):
		return dtracefmt.Underflow
	case strings.HasPrefix(label, ">= "):
		v, _ := strconv.ParseInt(label[3:], 10, 64)
		return v
	}
	v, _ := strconv.ParseInt(label, 10, 64)
	return v
}

// Counts returns the block's counts by bucket value.
func (b Block) Counts() map[int64]int64 {
	m := make(map[int64]int64, len(b.Rows))
	for _, r := range b.Rows {
		m[Bucket(r.Label)] += r.Count
	}
	return m
}

// A Session is the histograms of one keyed aggregation as DTrace printed
// them one after the other: each block's key line right above its header,
// blocks separated by at most one blank line.
type Session struct {
	Blocks []Block
	// Text is the session as printed, dedented, from the first key line
	// to the last row, each line ending in "\n".
	Text string
	// DefaultKeys: every key line is DTrace's default key layout ("  "
	// and the key left-aligned in 50 columns), not a printa() format.
	DefaultKeys bool
}

// Sessions groups the blocks of one file into sessions.
func Sessions(path string) ([]Session, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	blocks, err := read(filepath.Base(path), strings.NewReader(string(data)))
	if err != nil {
		return nil, err
	}
	lines := strings.Split(string(data), "\n")
	var out []Session
	var cur *Session
	end := -1 // index of the last row line of the previous block
	for _, b := range blocks {
		keyAt := b.Line - 2 // index of the key line
		if b.KeyLine == "" || keyAt < 0 {
			cur, end = nil, -1
			continue
		}
		gap := keyAt - end - 1 // lines between the previous block and this key line
		contiguous := cur != nil && gap <= 1 && (gap == 0 || strings.TrimSpace(lines[end+1]) == "")
		if !contiguous {
			out = append(out, Session{DefaultKeys: true})
			cur = &out[len(out)-1]
		}
		cur.Blocks = append(cur.Blocks, b)
		cur.DefaultKeys = cur.DefaultKeys && defaultKey(b.KeyLine, b.Trimmed)
		first := keyAt
		if contiguous {
			first = end + 1
		}
		last := b.Line - 1 + len(b.Rows) // index of the last row
		for _, l := range lines[first : last+1] {
			cur.Text += dedent(l, b.Indent) + "\n"
		}
		end = last
	}
	return out, nil
}

// defaultKey reports whether a key line is in DTrace's default layout.
func defaultKey(l string, trimmed bool) bool {
	if !strings.HasPrefix(l, "  ") || strings.HasPrefix(l, "   ") {
		return false
	}
	return trimmed || len(l) >= 52
}

// Key is the key a key line shows, without the blanks around it.
func (b Block) Key() string { return strings.TrimSpace(b.KeyLine) }
