package baget

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/dbtest"
)

// ctxXML declares an event whose context is a field, with a state rule
// for that context.
const ctxXML = `<description os="tos-1" arch="t32">
<abi endian="little" pointer="4" long_long_align="8" double_align="8"/>
<descriptor type="unsigned short" size="unsigned short"/>
<Objects>
 <id type_name="thread_ptr" base="pointer" kind="thread"/>
</Objects>
<event Name="FILL" id="0" kind="filler"/>
<event Name="BLOCK" id="1" kind="block" number="no"><field Name="no" type_name="unsigned int"/></event>
<event Name="EV" id="20" time="t" cpu="cpu" context="th">
 <field Name="t" type_name="unsigned int"/><field Name="cpu" type_name="unsigned int"/><field Name="th" type_name="thread_ptr"/>
 <state context="1" to="thrRun"/>
</event>
</description>`

// TestContextObjectAfterCPU: an object first met after a CPU object (here
// the context of the log's first event, registered after the event's CPU)
// has its own kind and state: the machine's per-object tables count the
// CPU objects too. (It used to index past their end and panic.)
func TestContextObjectAfterCPU(t *testing.T) {
	lb := &logBuilder{}
	lb.header("tos-1", "t32", 0, 0)
	lb.block(lb.rec(tBlock, 8, 0), lb.rec(20, 16, 10, 0, 0x1000), lb.rec(20, 16, 20, 0, 0x1000))
	dir := t.TempDir()
	logPath := filepath.Join(dir, "ctx.blog")
	descPath := filepath.Join(dir, "ctx.xml")
	if err := os.WriteFile(logPath, lb.b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(descPath, []byte(ctxXML), 0o644); err != nil {
		t.Fatal(err)
	}
	db := dbtest.Open(t)
	dbtest.Ingest(t, db, logPath, ingest.Options{Format: "baget", Params: map[string]string{"description": descPath}})
	got := dbtest.Query(t, db.SQL(), `SELECT o.kind, o.name, s.state, s.start_ts, s.end_ts, s.truncated
		FROM state_intervals s JOIN objects o USING (run_id, object_id) ORDER BY s.start_ts`)
	want := "thread | thread 4096 | thrRun | 10 | 20 | false\nthread | thread 4096 | thrRun | 20 | 20 | true\n"
	if got != want {
		t.Errorf("intervals:\n%s\nwant:\n%s", got, want)
	}
}
