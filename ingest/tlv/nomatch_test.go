package tlv

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/ingest"
)

// TestNoRuleMatches: a log of which no conversion rule matches any line
// that is not blank (a file of another format, the wrong resource file)
// is an error at its first such line, FMP's reordered path too; a log
// with one line that a rule matches, or with no text, reads.
func TestNoRuleMatches(t *testing.T) {
	useLoader(t)
	tiny, err := LoadSetup(filepath.Join("testdata", "example", "tiny.res"), []string{filepath.Join("testdata", "example")}, []string{filepath.Join("testdata", "example")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	fmp, err := LoadSetup(filepath.Join("testdata", "config", "fmp.res"), nil, nil, []string{"fmp"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		setup *Setup
		fmp   bool
		log   string
		want  string
	}{
		{"a BTF file", tiny, false, "#version 2.1.4\n0, Sim, 0, STI, S_1MS, 0, trigger\n",
			`x.log:1: expected a line that a conversion rule of set tiny matches, found none in 2 lines that are not blank, the first "#version 2.1.4" (another format, or the wrong resource file?)`},
		{"a standard-format log", tiny, false, "\n[1]idle.state=running\n",
			`x.log:2: expected a line that a conversion rule of set tiny matches, found none in 1 line that is not blank, the first "[1]idle.state=running" (it is a standard-format line: is the log converted already? Then read it without conversion rules)`},
		{"a BTF file as FMP", fmp, true, "#version 2.1.4\n0, Sim, 0, STI, S_1MS, 0, trigger\n",
			`x.log:1: expected a line that a conversion rule of set fmp matches, found none in 2 lines that are not blank, the first "#version 2.1.4" (another format, or the wrong resource file?)`},
		{"one line matched", tiny, false, "#version 2.1.4\n0.000120 CPU0 switch idle -> motor\n" + strings.Repeat("noise\n", 10), ""},
		{"blank lines", tiny, false, "\n  \n", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			sink := &collect{}
			rd, err := NewReader(c.setup, sink, sink)
			if err != nil {
				t.Fatal(err)
			}
			src := ingest.NewSource("x.log", strings.NewReader(c.log), int64(len(c.log)))
			err = rd.ReadAll(context.Background(), src, "x.log", c.fmp)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != c.want {
				t.Errorf("error\n got %s\nwant %s", got, c.want)
			}
		})
	}
}
