package tlv

import (
	"strings"
	"testing"

	"github.com/traceduck/traceduck/internal/dbtest"
)

// TestExternalLogs ingests every TOPPERS log of the real TLV material that
// has a resource file of its own, with TLV's rules and header. Skipped,
// with the reason:
//   - SampleITRON.log: its .res is the XML resource format of early TLV
//     versions, and the log is in an older standard format
//     ("[1551]:(type=Task,id=1).dispatch");
//   - traceLogSample.log (TLV 0.1): its resourceSample.res is a CSV-like
//     table ("TSK, 1, TASK1, ..."), not a resource file;
//   - full.log (branch goto) and visualizeScript asp.log: no resource file.
func TestExternalLogs(t *testing.T) {
	rules := externalFile(t, "convertRules__asp.cnv")
	headers := externalFile(t, "resourceHeaders__asp.resh")
	for _, c := range []struct{ log, res string }{
		{"sampleFiles__SampleLog__asp__asp_app.log", "sampleFiles__SampleLog__asp__asp_app.res"},
		{"sampleFiles__SampleLog__asp__asp_long.log", "sampleFiles__SampleLog__asp__asp_long.res"},
		{"sampleFiles__SampleLog__asp__asp_short.log", "sampleFiles__SampleLog__asp__asp_short.res"},
		{"sampleFiles__SampleLog__asp__asp_stats.log", "sampleFiles__SampleLog__asp__asp_stats.res"},
		{"sampleFiles__SampleLog__asp__test_short.log", "sampleFiles__SampleLog__asp__test_short.res"},
		{"sampleFiles__SampleProgram__asp__asp_trace_log_sample.log", "sampleFiles__SampleProgram__asp__asp_trace_log_sample.res"},
		{"sampleFiles__SampleLog__asp__asp_short_standard_format.log", "sampleFiles__SampleLog__asp__asp_short_standard_format.res"},
	} {
		name := strings.TrimSuffix(c.log[strings.LastIndex(c.log, "__")+2:], ".log")
		t.Run(name, func(t *testing.T) {
			db := dbtest.Open(t)
			log, res := externalFile(t, c.log), externalFile(t, c.res)
			r := rules
			if strings.Contains(c.log, "standard_format") {
				r = ""
			}
			run := ingestTLV(t, db, "tlv", log, res, r, headers)
			if run.Events == 0 {
				t.Fatal("no events")
			}
			diags := dbtest.Query(t, db.SQL(), `SELECT severity, count, message FROM diagnostics WHERE severity <> 'info' ORDER BY src_line`)
			info := dbtest.Query(t, db.SQL(), `SELECT count(*), coalesce(sum(count), 0) FROM diagnostics WHERE severity = 'info'`)
			t.Logf("%d events; shapes of lines skipped, lines: %s%s", run.Events, info, diags)
			if r != "" {
				// The bundled rules read the same logs.
				run2 := ingestTLV(t, db, "toppers-asp", log, res, "", "")
				t.Logf("toppers-asp (bundled rules): %d events", run2.Events)
			}
		})
	}
}
