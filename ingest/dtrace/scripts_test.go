package dtrace

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/schema"
)

// printfCall matches printf("format", args...); up to the closing ");".
var printfCall = regexp.MustCompile(`(?s)printf\("((?:[^"\\]|\\.)*)"(.*?)\);`)

// conversion matches a printf conversion of D or bpftrace.
var conversion = regexp.MustCompile(`%[-+ #0-9.]*(?:ll|l|h)?[udisxp]`)

// TestScriptsPrintTheLayout: every shipped script (scripts/*.d, *.bt)
// prints a header first, then event lines the reader takes: each printf
// format is rendered with sample values and read after the script's own
// header, and each D printf passes as many arguments as it has
// conversions (dtrace itself cannot run here).
func TestScriptsPrintTheLayout(t *testing.T) {
	paths, _ := filepath.Glob("scripts/*")
	if len(paths) < 6 {
		t.Fatalf("scripts: %v", paths)
	}
	for _, path := range paths {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		calls := printfCall.FindAllStringSubmatch(string(src), -1)
		if len(calls) < 2 {
			t.Fatalf("%s: %d printf calls", path, len(calls))
		}
		var text strings.Builder
		for i, c := range calls {
			format := unescapeD(t, c[1])
			convs := conversion.FindAllString(format, -1)
			if n := countArgs(c[2]); n != len(convs) {
				t.Errorf("%s: printf %q has %d conversions and %d arguments", path, c[1], len(convs), n)
			}
			if i == 0 && !strings.HasPrefix(format, EventsHeader+" ") {
				t.Errorf("%s: the first printf is not the header: %q", path, format)
			}
			text.WriteString(render(format, convs, i))
		}
		w := schema.NewRunWriter(schema.RunInfo{RunID: 1, Source: path}, dbtest.Discard{}, nil)
		left, err := readEvents(context.Background(), w, []byte(text.String()))
		w.Abort()
		if err != nil || len(left) > 0 {
			t.Errorf("%s: %v, lines left %v:\n%s", path, err, left, text.String())
		}
		if w.Events() != int64(len(calls)-1) {
			t.Errorf("%s: %d events from %d event printfs", path, w.Events(), len(calls)-1)
		}
	}
}

// render fills a format's conversions with sample values: a number for
// each numeric one (growing, so that timestamps go forward), "x" for %s
// (so that %s:%s:%s:%s is a probe).
func render(format string, convs []string, n int) string {
	k := 0
	return conversion.ReplaceAllStringFunc(format, func(c string) string {
		k++
		if strings.HasSuffix(c, "s") {
			return "x"
		}
		return strconv.Itoa(1000*n + k)
	})
}

// unescapeD reads the escapes of a D string literal.
func unescapeD(t *testing.T, s string) string {
	u, err := strconv.Unquote(`"` + s + `"`)
	if err != nil {
		t.Fatalf("format %q: %v", s, err)
	}
	return u
}

// countArgs counts the arguments after a printf's format: the commas
// outside parentheses, brackets and strings.
func countArgs(rest string) int {
	depth, n, inStr := 0, 0, false
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		switch {
		case inStr && c == '\\':
			i++
		case c == '"':
			inStr = !inStr
		case inStr:
		case c == '(' || c == '[':
			depth++
		case c == ')' || c == ']':
			depth--
		case c == ',' && depth == 0:
			n++
		}
	}
	return n
}
