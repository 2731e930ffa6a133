package tlv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/schema"
)

const cpuIntervalsQuery = `SELECT cpu, holder, busy, start_ts // 1000, end_ts // 1000, truncated FROM cpu_intervals ORDER BY cpu, start_ts, end_ts`

// TestCPUFMP reads a TOPPERS/FMP log of two processors with the bundled
// rules: handlers nest per processor, task 1 migrates from processor 1 to
// 2, task 3 is dispatched on processor 2 while it runs on 1 (its prcId
// changes: it moves), and the events' context is what holds their
// processor, not the Context resource (which still names the handler
// that left).
func TestCPUFMP(t *testing.T) {
	dir := filepath.Join("testdata", "fmp-migrate")
	db := dbtest.Open(t)
	ingestTLV(t, db, "toppers-fmp", filepath.Join(dir, "fmp-migrate.log"), filepath.Join(dir, "fmp-migrate.res"), "", "")
	got := dbtest.Query(t, db.SQL(), cpuIntervalsQuery)
	want := `cpu 1 | TASK1 | true | 100 | 200 | false
cpu 1 | INH5_1 | true | 200 | 220 | false
cpu 1 | INH2_1 | true | 220 | 230 | false
cpu 1 | INH5_1 | true | 230 | 240 | false
cpu 1 | TASK1 | true | 240 | 300 | false
cpu 1 | idle | false | 300 | 400 | false
cpu 1 | TASK3 | true | 400 | 600 | false
cpu 1 | idle | false | 600 | 700 | true
cpu 2 | TASK2 | true | 100 | 210 | false
cpu 2 | INH5_2 | true | 210 | 250 | false
cpu 2 | TASK2 | true | 250 | 320 | false
cpu 2 | TASK1 | true | 320 | 500 | false
cpu 2 | idle | false | 500 | 520 | false
cpu 2 | TASK2 | true | 520 | 600 | false
cpu 2 | TASK3 | true | 600 | 700 | false
cpu 2 | idle | false | 700 | 700 | true
`
	if got != want {
		t.Errorf("cpu_intervals:\n%s\nwant:\n%s", got, want)
	}
	// The service calls' contexts: iact_tsk in INH2_1; isns_ctx after
	// INH2_1 left, in INH5_1 (the rules charge it to what
	// CurrentContext_PRC1 names: still INH2_1); dly_tsk in TASK2.
	got = dbtest.Query(t, db.SQL(), `SELECT e.ts // 1000, e.event, e.args->>'name', o.name, c.name, e.cpu FROM events e
		JOIN objects o ON o.run_id = e.run_id AND o.object_id = e.object_id
		LEFT JOIN objects c ON c.run_id = e.run_id AND c.object_id = e.context_id
		WHERE e.event IN ('enterSVC', 'leaveSVC') ORDER BY e.seq`)
	want = `225 | enterSVC | iact_tsk | INH2_1 | INH2_1 | 1
227 | leaveSVC | iact_tsk | INH2_1 | INH2_1 | 1
235 | enterSVC | isns_ctx | INH2_1 | INH5_1 | 1
236 | leaveSVC | isns_ctx | INH2_1 | INH5_1 | 1
260 | enterSVC | dly_tsk | TASK2 | TASK2 | 2
270 | leaveSVC | dly_tsk | TASK2 | TASK2 | 2
`
	if got != want {
		t.Errorf("service calls (time, event, name, resource, context, cpu):\n%s\nwant:\n%s", got, want)
	}
	// The Context resources keep their own intervals: processor 1's names
	// INH2_1 from 220 until the next dispatch at 320... of processor 1 at 400.
	got = dbtest.Query(t, db.SQL(), `SELECT o.name, s.state, s.start_ts // 1000, s.end_ts // 1000 FROM state_intervals s JOIN objects o USING (run_id, object_id)
		WHERE o.kind = 'Context' AND s.start_ts // 1000 BETWEEN 220 AND 300 ORDER BY ALL`)
	if want := "CurrentContext_PRC1 | name=INH2_1 | 220 | 400\n"; got != want {
		t.Errorf("Context intervals:\n%s\nwant:\n%s", got, want)
	}
	if d := dbtest.Query(t, db.SQL(), `SELECT count(*) FROM diagnostics WHERE severity <> 'info'`); d != "0\n" {
		t.Errorf("diagnostics:\n%s", dbtest.Query(t, db.SQL(), `SELECT * FROM diagnostics`))
	}
}

// writeFiles writes name → text into a temporary directory.
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestCPUProcessorAttribute: a log in the standard format without
// processor numbers (what TLV itself converts from an FMP log), with the
// bundled fmp header: the processor of a task is its prcId, of a handler
// its prcIdI, and a prcId that changes while the task runs moves it.
func TestCPUProcessorAttribute(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"s.res": `{"TimeScale": "ns", "ResourceHeaders": ["fmp"], "Resources": {
			"A": {"Type": "Task", "Attributes": {"id": 1, "prcId": 1, "state": "RUNNABLE"}},
			"B": {"Type": "Task", "Attributes": {"id": 2, "prcId": 2, "state": "RUNNABLE"}},
			"H": {"Type": "InterruptHandler", "Attributes": {"id": 5, "prcIdI": 1}},
			"X": {"Type": "TaskExceptionRoutine", "Attributes": {"prcIdX": 2}}}}`,
		"s.log": `[100]A.state=RUNNING
[100]B.state=RUNNING
[200]H.state=RUNNING
[250]H.state=DORMANT
[260]X.state=RUNNING
[270]X.state=DORMANT
[280]B.state=WAITING
[300]A.prcId=2
[400]A.state=WAITING
[500]B.state=RUNNING
`})
	db := dbtest.Open(t)
	ingestTLV(t, db, "tlv", filepath.Join(dir, "s.log"), filepath.Join(dir, "s.res"), "", "")
	got := dbtest.Query(t, db.SQL(), `SELECT cpu, holder, start_ts, end_ts, truncated FROM cpu_intervals ORDER BY cpu, start_ts`)
	want := `cpu 1 | A | 100 | 200 | false
cpu 1 | H | 200 | 250 | false
cpu 1 | A | 250 | 300 | false
cpu 1 | idle | 300 | 500 | true
cpu 2 | B | 100 | 280 | false
cpu 2 | idle | 280 | 300 | false
cpu 2 | A | 300 | 400 | false
cpu 2 | idle | 400 | 500 | false
cpu 2 | B | 500 | 500 | true
`
	if got != want {
		t.Errorf("cpu_intervals:\n%s\nwant:\n%s", got, want)
	}
}

// TestCPUContextAfter: in the standard format with one Context resource
// per processor and no processor numbers (the generator's standard
// style), a task's state=RUNNING comes before the Context line that says
// where: it holds that processor from then.
func TestCPUContextAfter(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"s.res": `{"TimeScale": "ns", "ResourceHeaders": ["asp"], "Resources": {
			"CurrentContext_PRC1": {"Type": "Context", "Attributes": {"name": "None"}},
			"CurrentContext_PRC2": {"Type": "Context", "Attributes": {"name": "None"}},
			"A": {"Type": "Task", "Attributes": {"id": 1, "state": "RUNNABLE"}},
			"B": {"Type": "Task", "Attributes": {"id": 2, "state": "RUNNABLE"}},
			"H": {"Type": "InterruptHandler", "Attributes": {"id": 5}}}}`,
		"s.log": `[100]A.dispatch()
[100]A.state=RUNNING
[100]CurrentContext_PRC2.name=A
[150]A.enterSVC(x, y)
[200]B.state=RUNNING
[200]CurrentContext_PRC1.name=B
[300]H.enter()
[300]H.state=RUNNING
[300]CurrentContext_PRC2.name=H
[310]A.state=SPINNING
[350]H.leave()
[350]H.state=DORMANT
[400]A.preempt()
[400]A.state=PARKED
[500]A.state=WAITING
[500]B.state=WAITING
`})
	db := dbtest.Open(t)
	ingestTLV(t, db, "tlv", filepath.Join(dir, "s.log"), filepath.Join(dir, "s.res"), "", "")
	got := dbtest.Query(t, db.SQL(), `SELECT cpu, holder, start_ts, end_ts, truncated FROM cpu_intervals ORDER BY cpu, start_ts`)
	want := `cpu 1 | idle | 100 | 200 | false
cpu 1 | B | 200 | 500 | false
cpu 1 | idle | 500 | 500 | true
cpu 2 | A | 100 | 300 | false
cpu 2 | H | 300 | 350 | false
cpu 2 | A | 350 | 400 | false
cpu 2 | idle | 400 | 500 | true
`
	if got != want {
		t.Errorf("cpu_intervals:\n%s\nwant:\n%s", got, want)
	}
	got = dbtest.Query(t, db.SQL(), `SELECT e.ts, e.event, coalesce(c.name, 'NULL') FROM events e
		LEFT JOIN objects c ON c.run_id = e.run_id AND c.object_id = e.context_id WHERE e.ts <= 150 ORDER BY e.seq`)
	if want := "100 | dispatch | NULL\n100 | state= | NULL\n100 | name= | NULL\n150 | enterSVC | A\n"; got != want {
		t.Errorf("contexts:\n%s\nwant:\n%s", got, want)
	}
}

// FuzzCPU: arbitrary input read as the standard format and as a
// TOPPERS/FMP log, with resources of every role (testdata/cpufuzz), never
// crashes the CPU model, and each processor's intervals follow one
// another without overlapping.
func FuzzCPU(f *testing.F) {
	dbtest.AddSeeds(f, 0, "testdata/cpufuzz/*.log", "testdata/fmp-migrate/*.log", "testdata/fig1/*.log")
	f.Add([]byte("[5]A.state=RUNNING\n[4]A.state=DORMANT\n[3]H1.state=RUNNING\n[2]B.prcId=x\n[1]B.prcId=-3\n[9]B.prcId=99999999999\n[9]B.state=RUNNING\n"))
	res := filepath.Join("testdata", "cpufuzz", "cpufuzz.res")
	var ings []ingest.Ingester
	for _, format := range []string{"tlv", "toppers-fmp"} {
		g, err := (&Ingester{kind: map[string]ingKind{"tlv": kindTLV, "toppers-fmp": kindFMP}[format]}).With(map[string]string{"resources": res})
		if err != nil {
			f.Fatal(err)
		}
		ings = append(ings, g)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, g := range ings {
			sink := &cpuSink{last: map[int32]int64{}}
			if _, err := dbtest.FuzzIngest(t, g, "fuzz.log", data, true, sink); err != nil {
				// The one error: no conversion rule matched a line (a
				// log of no line the rules read is refused at its first
				// line), e.g. the standard-format seed read as FMP.
				var ie *schema.InputError
				if !errors.As(err, &ie) || !strings.HasPrefix(ie.Msg, "expected a line that a conversion rule of set fmp matches, found none in ") {
					t.Fatalf("%s: %v", g.Format().Name, err)
				}
			}
		}
	})
}

// cpuSink checks the batches, and that the state intervals of the
// processors' objects (created after the 10 resources) do not overlap.
type cpuSink struct {
	batches dbtest.BatchChecker
	events  int64
	err     error
	last    map[int32]int64 // per processor object: end of its last interval
}

func (s *cpuSink) Result() (int64, error) { return s.events, s.err }

func (s *cpuSink) Put(table string, rec arrow.Record) error {
	if s.err != nil {
		return nil
	}
	if s.err = s.batches.Check(table, rec); s.err != nil {
		return nil
	}
	switch table {
	case schema.TableEvents:
		s.events += rec.NumRows()
	case schema.TableStateIntervals:
		obj := rec.Column(1).(*array.Int32)
		start, end := rec.Column(4).(*array.Int64), rec.Column(5).(*array.Int64)
		for i := 0; i < int(rec.NumRows()); i++ {
			o := obj.Value(i)
			if o <= 10 {
				continue
			}
			if end.Value(i) < start.Value(i) {
				s.err = fmt.Errorf("processor object %d: interval %d..%d", o, start.Value(i), end.Value(i))
			}
			if last, ok := s.last[o]; ok && start.Value(i) < last {
				s.err = fmt.Errorf("processor object %d: interval %d..%d begins before the one before it ends (%d)", o, start.Value(i), end.Value(i), last)
			}
			s.last[o] = end.Value(i)
		}
	}
	return nil
}
