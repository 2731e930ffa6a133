package report

import (
	"strconv"
	"strings"
	"testing"
)

func TestDefaultMetrics(t *testing.T) {
	var names []string
	for _, m := range DefaultMetrics() {
		names = append(names, m.Name+"/"+m.Unit)
		if m.Doc == "" || m.SQL == "" || strings.HasSuffix(m.SQL, ";") {
			t.Errorf("%s: doc %q, sql %q", m.Name, m.Doc, m.SQL)
		}
	}
	want := "running_share/ratio response_p50/ns response_p99/ns response_max/ns sched_latency_p99/ns round_trip_p99/ns resource_wait_p99/ns cpu_load/ratio event_rate/per_s diagnostics/count"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("default metrics %s, want %s", got, want)
	}
}

func TestParseMetrics(t *testing.T) {
	text := `-- my metrics
-- (a file comment)

-- metric: slow_instances
-- unit: count
-- better: lower
-- Per task: instances slower than 1 ms.
SELECT run_id, object AS key, count(*) AS value
FROM task_instances
-- a comment inside the query stays in it
WHERE response > 1000000
GROUP BY ALL;
-- metric: events
-- better: higher
SELECT run_id, '' AS key, event_count AS value FROM runs
`
	ms, err := ParseMetrics("my.sql", text)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 {
		t.Fatalf("%d metrics: %+v", len(ms), ms)
	}
	a, b := ms[0], ms[1]
	if a.Name != "slow_instances" || a.Unit != UnitCount || a.Better != "lower" || a.Doc != "Per task: instances slower than 1 ms." ||
		a.File != "my.sql" || a.Line != 4 || !strings.HasPrefix(a.SQL, "SELECT run_id") || !strings.HasSuffix(a.SQL, "GROUP BY ALL") ||
		!strings.Contains(a.SQL, "-- a comment inside") {
		t.Errorf("first: %+v", a)
	}
	if b.Name != "events" || b.Unit != UnitNumber || b.Better != "higher" || b.Doc != "" || b.Line != 13 || b.SQL != "SELECT run_id, '' AS key, event_count AS value FROM runs" {
		t.Errorf("second: %+v", b)
	}
}

func TestParseMetricsErrors(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"", `m.sql:1: expected a "-- metric: NAME" line, found none`},
		{"-- only a comment\n", `m.sql:1: expected a "-- metric: NAME" line, found none`},
		{"SELECT 1 AS run_id\n", `m.sql:1: expected a "-- metric: NAME" line before the first query, found "SELECT 1 AS run_id"`},
		{"-- metric: bad-name\nSELECT 1", `m.sql:1: expected a metric name (a letter or _, then letters, digits, _), found "bad-name"`},
		{"-- metric:\nSELECT 1", `m.sql:1: expected a metric name (a letter or _, then letters, digits, _), found ""`},
		{"-- metric: a\n-- unit: ms\nSELECT 1", `m.sql:2: metric a: expected a unit (ns, ratio, count, per_s, number), found "ms"`},
		{"-- metric: a\n-- better: faster\nSELECT 1", `m.sql:2: metric a: expected better: lower or higher, found "faster"`},
		{"-- metric: a\n-- nothing but words\n\n-- metric: b\nSELECT 1", `m.sql:1: metric a: expected a query returning run_id, key, value, found none before line 4`},
		{"-- metric: a\nSELECT 1\n-- metric: a\nSELECT 2", `m.sql:3: metric a: defined twice, first at line 1`},
		{"-- metric: a\n;\n", `m.sql:1: metric a: expected a query returning run_id, key, value, found none before line 3`},
	} {
		_, err := ParseMetrics("m.sql", tc.text)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%q:\n got %v\nwant %s", tc.text, err, tc.want)
		}
	}
}

func TestMergeMetrics(t *testing.T) {
	user, err := ParseMetrics("mine.sql", "-- metric: cpu_load\nSELECT 1")
	if err != nil {
		t.Fatal(err)
	}
	_, err = mergeMetrics(DefaultMetrics(), user)
	want := "mine.sql:1: metric cpu_load: already defined at metrics.sql:" // the line of metrics.sql follows
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("got %v, want %s...", err, want)
	}
	line := findMetric(DefaultMetrics(), "cpu_load").Line
	if !strings.HasSuffix(err.Error(), ":"+strconv.Itoa(line)) {
		t.Errorf("%v does not end with the line %d", err, line)
	}
}
