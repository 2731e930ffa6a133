package queries_test

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/internal/tracegen"
	"github.com/traceduck/traceduck/queries"
)

// TestNewcomerQuestionsEveryFormat: one database holding a run of every
// format; every view answers, and the four questions of the README ("how
// often did each event happen in each context", "how long was each task
// running, p99 included", "the response-time distribution of task X", "how
// loaded was each core per 10 ms") have answers for every run.
func TestNewcomerQuestionsEveryFormat(t *testing.T) {
	db := dbtest.Open(t)
	dbtest.Ingest(t, db, "../samples/btf/rtos-2core.btf", ingest.Options{})
	dbtest.Ingest(t, db, "../samples/qnx/neutrino-2cpu.txt", ingest.Options{})
	dbtest.Ingest(t, db, "../samples/tlv/tiny.log", ingest.Options{Format: "tlv", Params: map[string]string{
		"resources": "../samples/tlv/tiny.res", "headers": "../samples/tlv/tiny.resh", "rules": "../samples/tlv/tiny.cnv"}})
	log, desc, _, err := tracegen.GenerateBaget(tracegen.BagetConfig{Events: 3000, Seed: 1, ABI: "le32"})
	if err != nil {
		t.Fatal(err)
	}
	dbtest.Ingest(t, db, writeTemp(t, "gen.blog", log), ingest.Options{Params: map[string]string{"description": writeTemp(t, "d.xml", desc)}})
	var dt bytes.Buffer
	if _, err := tracegen.WriteDTrace(&dt, tracegen.DTraceConfig{Lines: 3000, CPUs: 2, Processes: 2, Threads: 2, Seed: 1, Gap: true}); err != nil {
		t.Fatal(err)
	}
	dbtest.Ingest(t, db, writeTemp(t, "gen.d.txt", dt.Bytes()), ingest.Options{Format: "dtrace"})
	formats := dbtest.Query(t, db.SQL(), `SELECT string_agg(format, ' ' ORDER BY run_id) FROM runs`)
	if formats != "btf qnx tlv baget dtrace\n" {
		t.Fatalf("runs: %s", formats)
	}

	// Every view answers.
	view := regexp.MustCompile(`(?im)^CREATE OR REPLACE VIEW +(\w+)`)
	for _, f := range queries.Files() {
		text, _ := queries.Source(f)
		for _, m := range view.FindAllStringSubmatch(text, -1) {
			if _, err := db.SQL().Exec("SELECT count(*) FROM " + m[1]); err != nil {
				t.Errorf("view %s: %v", m[1], err)
			}
		}
	}

	for _, q := range []struct{ what, sql string }{
		{"events per context (eco tree, event > context)", `SELECT run_id, count(*) FROM eco_tree('eco') WHERE depth = 3 GROUP BY run_id`},
		{"running time with p99", `SELECT run_id, count(*) FROM sched_stats WHERE class = 'running' AND p99_ns IS NOT NULL AND total_ns > 0 GROUP BY run_id`},
		{"response times (quantize)", `SELECT run_id, count(*) FROM task_instances WHERE NOT truncated AND response > 0 GROUP BY run_id`},
		{"response-time histogram", `SELECT key::INTEGER, sum(count) FROM hist_quantize('SELECT run_id AS key, response AS value FROM task_instances WHERE NOT truncated') GROUP BY key`},
		{"core load per 10 ms", `SELECT run_id, count(*) FROM cpu_load(10000000) WHERE busy_ns > 0 GROUP BY run_id`},
	} {
		got := dbtest.Query(t, db.SQL(), q.sql)
		for run := 1; run <= 5; run++ {
			if !regexp.MustCompile(fmt.Sprintf(`(?m)^%d \| [1-9]`, run)).MatchString(got) {
				t.Errorf("%s: no answer for run %d (%s):\n%s", q.what, run, strings.Fields(formats)[run-1], got)
			}
		}
	}
}
