package dtrace

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/schema"
)

// FuzzAggregations feeds arbitrary text to the aggregation reader,
// strict and with --skip-bad: it never panics; a strict read stops only
// with a FILE:LINE error within the text; a lenient one never stops;
// every bucket's bounds are ordered and its keys are a JSON list of
// strings; memory is released (aggRead checks). The seeds, the toolkit's
// histogram files read in place, the files of testdata/aggregations and
// the bad inputs, replay as a normal test.
func FuzzAggregations(f *testing.F) {
	paths, _ := filepath.Glob("testdata/aggregations/*.txt")
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(data))
	}
	// The toolkit's files in pieces of about 2 KB cut at line ends: small
	// seeds keep the fuzzer's mutations fast.
	if files, err := filepath.Glob(filepath.Join(externalDir, "dtrace", "*")); err == nil {
		for _, p := range files {
			data, err := os.ReadFile(p)
			if err != nil || !strings.Contains(string(data), "Distribution") {
				continue
			}
			for len(data) > 0 {
				n := min(len(data), 2048)
				if i := strings.LastIndexByte(string(data[:n]), '\n'); i > 0 && n < len(data) {
					n = i + 1
				}
				f.Add(string(data[:n]))
				data = data[n:]
			}
		}
	}
	for _, tc := range aggBad {
		f.Add(tc.text)
	}
	for _, s := range []string{
		"^C\n  a    1\n  b    2\n",
		"^C\n\n  x\n" + aggHdr + "  " + strings.Repeat("9", 19) + " |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@ 9223372036854775807\n",
		aggHdr + "  -9223372036854775808 |" + strings.Repeat(" ", 40) + " -9223372036854775808\n",
		"@x[\n a\n]:\n[1]  1 |@|\n(..., 0) 1 |@|\n",
		"@x:\n[9E, ...)  1 |@|\n[1, 2)  1 |@|\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		lines := int64(strings.Count(text, "\n") + strings.Count(text, "\r") + 1)
		for _, run := range []struct {
			skip bool
			mode ScalarsMode
		}{{false, ScalarsAuto}, {true, ScalarsAuto}, {false, ScalarsOff}} {
			skip := run.skip
			{
				c, err := aggRead(t, text, skip, run.mode)
				if err != nil {
					var ie *schema.InputError
					if skip || !errors.As(err, &ie) {
						t.Fatalf("skip-bad %v: %v", skip, err)
					}
					if ie.Line < 1 || ie.Line > lines || !strings.HasPrefix(ie.Msg, "expected ") {
						t.Fatalf("error at line %d of %d: %v", ie.Line, lines, err)
					}
					continue
				}
				for _, b := range c.buckets {
					if b.lo != nil && b.hi != nil && *b.lo >= *b.hi {
						t.Fatalf("bucket %q: [%d, %d)", b.label, *b.lo, *b.hi)
					}
					var keys []string
					if err := json.Unmarshal([]byte(b.keys), &keys); err != nil {
						t.Fatalf("keys %q: %v", b.keys, err)
					}
				}
				for _, s := range c.scalars {
					var keys []string
					if err := json.Unmarshal([]byte(s.keys), &keys); err != nil {
						t.Fatalf("keys %q: %v", s.keys, err)
					}
				}
			}
		}
	})
}
