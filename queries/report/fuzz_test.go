package report

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var columnOf = regexp.MustCompile(`^--fail-on ".*": column (\d+): expected `)

// FuzzParseThreshold: any text is refused with an error that points at a
// column of it, or accepted, and then the condition written back in a
// canonical form reads the same.
//
//	go test -fuzz FuzzParseThreshold ./queries/report
func FuzzParseThreshold(f *testing.F) {
	for _, s := range []string{"response_p99 > +10%", "cpu_load > 0.85", "diagnostics[error] >= 1", "m[Task_*] <= -2.5ms",
		"x > 3e-3", "response_p99 >> 10%", "cpu_load[Core_0 > 1", "m > 10%", "m > +1e999", "m < -.5s", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		th, err := ParseThreshold(spec)
		if err != nil {
			m := columnOf.FindStringSubmatch(err.Error())
			if m == nil {
				t.Fatalf("%q: error without a column: %v", spec, err)
			}
			if col, _ := strconv.Atoi(m[1]); col < 1 || col > len(spec)+1 {
				t.Fatalf("%q: column %d outside the text: %v", spec, col, err)
			}
			return
		}
		if th.Metric == "" || math.IsNaN(th.Limit) || math.IsInf(th.Limit, 0) {
			t.Fatalf("%q: accepted as %+v", spec, th)
		}
		canon := th.Metric
		if th.Key != "" {
			canon += "[" + th.Key + "]"
		}
		num := strconv.FormatFloat(th.Limit, 'g', -1, 64)
		switch th.Mode {
		case ModeRelative:
			canon += " " + th.Op + " " + signed(num) + "%"
		case ModeChange:
			canon += " " + th.Op + " " + signed(num)
		default:
			canon += " " + th.Op + " " + num
		}
		again, err := ParseThreshold(canon)
		if err != nil {
			t.Fatalf("%q read as %q, which is refused: %v", spec, canon, err)
		}
		if again.Metric != th.Metric || again.Key != th.Key || again.Op != th.Op || again.Mode != th.Mode || again.Limit != th.Limit {
			t.Fatalf("%q read as %+v, %q as %+v", spec, th, canon, again)
		}
	})
}

func signed(num string) string {
	if strings.HasPrefix(num, "-") {
		return num
	}
	return "+" + num
}

var lineOf = regexp.MustCompile(`^f\.sql:(\d+): `)

// FuzzParseMetrics: any text is refused with FILE:LINE of a line of it,
// or accepted as metrics with names, queries and distinct names.
//
//	go test -fuzz FuzzParseMetrics ./queries/report
func FuzzParseMetrics(f *testing.F) {
	f.Add(defaultMetricsSQL)
	for _, s := range []string{"-- metric: a\nSELECT 1", "-- metric: a\n-- unit: ms\nSELECT 1", "SELECT 1", "-- metric: a b\n",
		"-- metric: a\n;\n-- metric: b\nSELECT 2;", "\r\n-- metric: x\r\n-- better: higher\r\nSELECT 3\r\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		ms, err := ParseMetrics("f.sql", text)
		if err != nil {
			m := lineOf.FindStringSubmatch(err.Error())
			if m == nil {
				t.Fatalf("error without FILE:LINE: %v", err)
			}
			if n, _ := strconv.Atoi(m[1]); n < 1 || n > strings.Count(text, "\n")+1 {
				t.Fatalf("line %d outside the text: %v", n, err)
			}
			return
		}
		seen := map[string]bool{}
		for _, m := range ms {
			if !metricName.MatchString(m.Name) || strings.TrimSpace(m.SQL) == "" || seen[m.Name] || !contains(units, m.Unit) {
				t.Fatalf("accepted %+v", m)
			}
			seen[m.Name] = true
		}
	})
}
