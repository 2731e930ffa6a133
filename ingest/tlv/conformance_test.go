package tlv

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/schema"
)

// external is where the real TLV material is (read in place, never copied).
const external = "../../../shared/testdata-external/toppers"

func externalFile(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join(external, "YixiaoLi__tlv4mc__"+name)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("%s not available: %v", p, err)
	}
	return p
}

// collect is a Sink and Reporter that keeps the standard-format lines and
// the notes, and fails on a bad line.
type collect struct {
	lines  []string
	events int
	notes  map[string]int
	msgs   []string
	bad    []string
	skip   bool
}

func (c *collect) Std(text string, src int64) error {
	c.lines = append(c.lines, strings.Clone(text))
	return nil
}
func (c *collect) TimeOutOfBounds(int64) string { return "" }
func (c *collect) Event(e *Event) error         { c.events++; return nil }
func (c *collect) Bad(src int64, format string, args ...any) error {
	msg := fmt.Sprintf("line %d: %s", src, fmt.Sprintf(format, args...))
	if c.skip {
		c.bad = append(c.bad, msg)
		return nil
	}
	return fmt.Errorf("%s", msg)
}
func (c *collect) Note(sev schema.Severity, key string, src int64, msg string) {
	if c.notes == nil {
		c.notes = map[string]int{}
	}
	if c.notes[key] == 0 {
		c.msgs = append(c.msgs, string(sev)+": "+msg)
	}
	c.notes[key]++
}

func (c *collect) Count(sev schema.Severity, src int64, msg string, n int64) {
	c.msgs = append(c.msgs, fmt.Sprintf("%s: %s (count %d)", sev, msg, n))
}

// convertFile reads a log with a setup and returns what the sink saw.
func convertFile(t testing.TB, s *Setup, log string, fmp bool) *collect {
	t.Helper()
	c := &collect{}
	rd, err := NewReader(s, c, c)
	if err != nil {
		t.Fatal(err)
	}
	src, err := ingest.Open(log)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if err := rd.ReadAll(context.Background(), src, log, fmp); err != nil {
		t.Fatal(err)
	}
	rd.Finish()
	return c
}

func aspSetup(t testing.TB, res string) *Setup {
	t.Helper()
	resPath := externalFile(t, "sampleFiles__SampleLog__asp__"+res)
	useLoader(t)
	s, err := LoadSetup(resPath, []string{externalFile(t, "convertRules__asp.cnv")}, []string{externalFile(t, "resourceHeaders__asp.resh")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// normalized is a standard-format line for comparison: arguments with
// white space and commas removed (TLV's writer dropped the separators).
func normalized(t testing.TB, line string) string {
	l, err := ParseStdLine(line)
	if err != nil {
		return "UNPARSED " + line
	}
	if l.Behavior {
		a := strings.Join(l.Args, "")
		a = strings.NewReplacer(" ", "", "\t", "", ",", "").Replace(a)
		return fmt.Sprintf("[%s]%s.%s(%s)", l.Time, l.Res, l.Member, a)
	}
	return fmt.Sprintf("[%s]%s.%s=%s", l.Time, l.Res, l.Member, l.Value)
}

func readLines(t testing.TB, path string) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

// TestConformanceASPShort converts the real asp_short.log with TLV's own
// rules, header and resource file and compares with the standard-format
// log TLV produced from it.
func TestConformanceASPShort(t *testing.T) {
	s := aspSetup(t, "asp_short.res")
	c := convertFile(t, s, externalFile(t, "sampleFiles__SampleLog__asp__asp_short.log"), false)
	want := readLines(t, externalFile(t, "sampleFiles__SampleLog__asp__asp_short_standard_format.log"))
	got := c.lines
	diffs := 0
	for i := 0; i < max(len(got), len(want)); i++ {
		var g, w string
		if i < len(got) {
			g = normalized(t, got[i])
		}
		if i < len(want) {
			w = normalized(t, want[i])
		}
		if g != w {
			diffs++
			if diffs <= 10 {
				t.Errorf("line %d:\n  TLV:       %s\n  traceduck: %s", i+1, w, g)
			}
		}
	}
	t.Logf("%d standard-format lines (TLV: %d), %d differ; notes: %v", len(got), len(want), diffs, c.msgs)
}
