package report

import (
	_ "embed"
	"fmt"
	"regexp"
	"strings"
)

// defaultMetricsFile is the name the default metrics go by in messages.
const defaultMetricsFile = "metrics.sql"

//go:embed metrics.sql
var defaultMetricsSQL string

// Units of a metric: how its values are printed and what a threshold may
// say about them (a duration like 2ms only for ns).
const (
	UnitNS     = "ns"     // a duration in nanoseconds
	UnitRatio  = "ratio"  // a share, 0..1, printed as a percentage
	UnitCount  = "count"  // a number of things
	UnitPerSec = "per_s"  // a rate per second of trace time
	UnitNumber = "number" // anything else
)

var units = []string{UnitNS, UnitRatio, UnitCount, UnitPerSec, UnitNumber}

// A Metric is a named SQL query returning (run_id, key, value).
type Metric struct {
	Name   string `json:"name"`
	Unit   string `json:"unit"`
	Better string `json:"better"` // "lower" or "higher": which way a change is an improvement
	Doc    string `json:"description"`
	File   string `json:"file"`
	Line   int    `json:"line"` // of the "-- metric:" header
	SQL    string `json:"-"`
}

// where is FILE:LINE of the metric's header, for messages.
func (m *Metric) where() string { return fmt.Sprintf("%s:%d", m.File, m.Line) }

var (
	metricHeader = regexp.MustCompile(`^--\s*metric:(.*)$`)
	metricAttr   = regexp.MustCompile(`^--\s*(unit|better):(.*)$`)
	metricName   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// DefaultMetrics returns the metrics every report computes (metrics.sql).
func DefaultMetrics() []Metric {
	ms, err := ParseMetrics(defaultMetricsFile, defaultMetricsSQL)
	if err != nil {
		panic(err) // the embedded file is checked by the tests
	}
	return ms
}

// ParseMetrics reads metric blocks (see metrics.sql): a "-- metric: NAME"
// line, optional "-- unit:" and "-- better:" lines, comment lines that
// describe it, and one query up to the next header. Text before the
// first header may only be comments. Errors read FILE:LINE: what was
// expected, what was found.
func ParseMetrics(file, text string) ([]Metric, error) {
	var (
		out     []Metric
		cur     *Metric
		inQuery bool // the current block's query has begun
		sql     []string
	)
	finish := func(endLine int) error {
		if cur == nil {
			return nil
		}
		q := strings.TrimSpace(strings.Join(sql, "\n"))
		q = strings.TrimSpace(strings.TrimSuffix(q, ";"))
		if q == "" {
			return fmt.Errorf("%s:%d: metric %s: expected a query returning run_id, key, value, found none before line %d", file, cur.Line, cur.Name, endLine)
		}
		cur.SQL = q
		out = append(out, *cur)
		return nil
	}
	lines := strings.Split(text, "\n")
	for i, raw := range lines {
		n := i + 1
		line := strings.TrimSpace(strings.TrimSuffix(raw, "\r"))
		if m := metricHeader.FindStringSubmatch(line); m != nil {
			if err := finish(n); err != nil {
				return nil, err
			}
			name := strings.TrimSpace(m[1])
			if !metricName.MatchString(name) {
				return nil, fmt.Errorf("%s:%d: expected a metric name (a letter or _, then letters, digits, _), found %q", file, n, name)
			}
			for _, o := range out {
				if o.Name == name {
					return nil, fmt.Errorf("%s:%d: metric %s: defined twice, first at line %d", file, n, name, o.Line)
				}
			}
			cur = &Metric{Name: name, Unit: UnitNumber, Better: "lower", File: file, Line: n}
			inQuery, sql = false, nil
			continue
		}
		if cur == nil {
			if line != "" && !strings.HasPrefix(line, "--") {
				return nil, fmt.Errorf("%s:%d: expected a \"-- metric: NAME\" line before the first query, found %q", file, n, clip(line))
			}
			continue
		}
		if !inQuery && strings.HasPrefix(line, "--") {
			if m := metricAttr.FindStringSubmatch(line); m != nil {
				v := strings.TrimSpace(m[2])
				switch m[1] {
				case "unit":
					if !contains(units, v) {
						return nil, fmt.Errorf("%s:%d: metric %s: expected a unit (%s), found %q", file, n, cur.Name, strings.Join(units, ", "), v)
					}
					cur.Unit = v
				case "better":
					if v != "lower" && v != "higher" {
						return nil, fmt.Errorf("%s:%d: metric %s: expected better: lower or higher, found %q", file, n, cur.Name, v)
					}
					cur.Better = v
				}
				continue
			}
			doc := strings.TrimSpace(strings.TrimPrefix(line, "--"))
			if cur.Doc != "" && doc != "" {
				cur.Doc += " "
			}
			cur.Doc += doc
			continue
		}
		if !inQuery && line == "" {
			continue
		}
		inQuery = true
		sql = append(sql, raw)
	}
	if err := finish(len(lines)); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s:1: expected a \"-- metric: NAME\" line, found none", file)
	}
	return out, nil
}

// clip shortens a quoted piece of input in a message.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
