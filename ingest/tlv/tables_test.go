package tlv

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/schema"
)

// useLoader checks that the ingesters can load configurations
// (config.go's loader).
func useLoader(t testing.TB) {
	t.Helper()
	if LoadSetup == nil {
		t.Fatal("ingest/tlv has no configuration loader")
	}
}

func ingestTLV(t testing.TB, db *schema.DB, format, log, res string, rules, headers string) ingest.Result {
	t.Helper()
	useLoader(t)
	p := map[string]string{"resources": res}
	if rules != "" {
		p["rules"] = rules
	}
	if headers != "" {
		p["headers"] = headers
	}
	return dbtest.Ingest(t, db, log, ingest.Options{Format: format, Params: p, Force: true})
}

// argsText is an args JSON object's values, concatenated without white
// space and commas (how TLV's writer printed them).
func argsText(js string) string {
	if js == "NULL" {
		return js
	}
	dec := json.NewDecoder(strings.NewReader(js))
	var b strings.Builder
	key := true
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return "BAD " + js
		}
		if s, ok := tok.(string); ok {
			if !key {
				b.WriteString(s)
			}
			key = !key
		}
	}
	return strings.NewReplacer(" ", "", ",", "").Replace(b.String())
}

const eventsQuery = `SELECT e.ts, e.class, e.event, o.name, coalesce(c.name, 'NULL'), coalesce(e.value, 'NULL'), coalesce(e.args::VARCHAR, 'NULL'), e.target_instance
FROM events e JOIN objects o ON o.run_id = e.run_id AND o.object_id = e.object_id
LEFT JOIN objects c ON c.run_id = e.run_id AND c.object_id = e.context_id
WHERE e.run_id = ? ORDER BY e.seq`

const intervalsQuery = `SELECT o.name, s.instance, s.state, s.start_ts, s.end_ts, s.truncated
FROM state_intervals s JOIN objects o ON o.run_id = s.run_id AND o.object_id = s.object_id
WHERE s.run_id = ? ORDER BY o.name, s.instance, s.start_ts, s.state`

func eventsOf(t testing.TB, db *schema.DB, run int32) []string {
	var out []string
	for _, row := range strings.Split(strings.TrimSuffix(dbtest.Query(t, db.SQL(), eventsQuery, run), "\n"), "\n") {
		f := strings.Split(row, " | ")
		f[6] = argsText(f[6])
		out = append(out, strings.Join(f, " | "))
	}
	return out
}

// TestConformanceTables ingests the raw asp_short.log (converted) and the
// standard-format log TLV produced from it: the tables are the same.
func TestConformanceTables(t *testing.T) {
	db := dbtest.Open(t)
	rules := externalFile(t, "convertRules__asp.cnv")
	headers := externalFile(t, "resourceHeaders__asp.resh")
	raw := ingestTLV(t, db, "tlv", externalFile(t, "sampleFiles__SampleLog__asp__asp_short.log"),
		externalFile(t, "sampleFiles__SampleLog__asp__asp_short.res"), rules, headers)
	std := ingestTLV(t, db, "tlv", externalFile(t, "sampleFiles__SampleLog__asp__asp_short_standard_format.log"),
		externalFile(t, "sampleFiles__SampleLog__asp__asp_short_standard_format.res"), "", headers)
	if raw.Events == 0 || raw.Events != std.Events {
		t.Fatalf("events: converted %d, standard format %d", raw.Events, std.Events)
	}
	a, b := eventsOf(t, db, raw.RunID), eventsOf(t, db, std.RunID)
	for i := range a {
		if a[i] != b[i] {
			t.Errorf("event %d:\n  converted: %s\n  standard:  %s", i+1, a[i], b[i])
			break
		}
	}
	ia := dbtest.Query(t, db.SQL(), intervalsQuery, raw.RunID)
	ib := dbtest.Query(t, db.SQL(), intervalsQuery, std.RunID)
	if ia != ib || ia == "" {
		t.Errorf("state intervals differ:\n%s", firstDiff(ia, ib))
	}
	// Done means: task state intervals and service calls, in SQL.
	got := dbtest.Query(t, db.SQL(), `SELECT object, state, count, total_ns FROM state_summary
		WHERE run_id = ? AND kind = 'Task' AND state LIKE 'state=%' ORDER BY object, state`, raw.RunID)
	t.Logf("time each Task spent in each state:\n%s", got)
	if !strings.Contains(got, "TASK1 | state=RUNNING |") || !strings.Contains(got, "state=RUNNABLE") || !strings.Contains(got, "state=WAITING") {
		t.Errorf("task states missing:\n%s", got)
	}
	calls := dbtest.Query(t, db.SQL(), `SELECT args->>'name' AS svc, count(*) FROM events
		WHERE run_id = ? AND event = 'enterSVC' GROUP BY svc ORDER BY count(*) DESC, svc LIMIT 5`, raw.RunID)
	t.Logf("service calls:\n%s", calls)
	if !strings.HasPrefix(calls, "dly_tsk | ") && !strings.Contains(calls, "act_tsk") {
		t.Errorf("service calls:\n%s", calls)
	}
}

func firstDiff(a, b string) string {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < max(len(la), len(lb)); i++ {
		var x, y string
		if i < len(la) {
			x = la[i]
		}
		if i < len(lb) {
			y = lb[i]
		}
		if x != y {
			var buf bytes.Buffer
			buf.WriteString("  converted: " + x + "\n  standard:  " + y)
			return buf.String()
		}
	}
	return ""
}

// TestManyFindings: findings whose key holds data (here, 2500 resource
// names no resource file defines) are kept apart up to a bound, then
// counted together.
func TestManyFindings(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 2500; i++ {
		fmt.Fprintf(&b, "[%d]R%d.state=READY\n", i, i)
	}
	log := filepath.Join(t.TempDir(), "many.log")
	if err := os.WriteFile(log, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	db := dbtest.Open(t)
	ingestTLV(t, db, "tlv", log, filepath.Join("testdata", "fig3", "fig3.res"), "", filepath.Join("testdata", "common.resh"))
	got := dbtest.Query(t, db.SQL(), `SELECT count(*), sum(count), max(count) FROM diagnostics`)
	if want := fmt.Sprintf("%d | 2500 | %d\n", maxNotes+1, 2500-maxNotes); got != want {
		t.Errorf("diagnostics: %s, want %s", got, want)
	}
}
