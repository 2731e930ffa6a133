package baget

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/dbtest"
)

// nestingXML declares a CPU that runs a thread (SW), enters interrupts
// (IN) and returns from them (OUT); OUT's return has no from= condition,
// so it also applies where there is nothing to return to.
const nestingXML = `<description os="tos-1" arch="t32">
<abi endian="little" pointer="4" long_long_align="8" double_align="8"/>
<descriptor type="unsigned short" size="unsigned short"/>
<Objects>
 <id type_name="thread_ptr" base="pointer" kind="thread"/>
 <id type_name="irq_no" base="unsigned int" kind="interrupt"/>
</Objects>
<event Name="FILL" id="0" kind="filler"/>
<event Name="BLOCK" id="1" kind="block" number="no"><field Name="no" type_name="unsigned int"/></event>
<event Name="SW" id="20" time="t" cpu="cpu" main="th">
 <field Name="t" type_name="unsigned int"/><field Name="cpu" type_name="unsigned int"/><field Name="th" type_name="thread_ptr"/>
 <cpu to="cpuThr" field="th"/>
</event>
<event Name="IN" id="21" time="t" cpu="cpu" main="irq">
 <field Name="t" type_name="unsigned int"/><field Name="cpu" type_name="unsigned int"/><field Name="irq" type_name="irq_no"/>
 <cpu to="cpuIntr" field="irq"/>
</event>
<event Name="OUT" id="22" time="t" cpu="cpu">
 <field Name="t" type_name="unsigned int"/><field Name="cpu" type_name="unsigned int"/>
 <cpu to="return"/>
</event>
</description>`

// TestReturnAndNesting: the documented recoveries of the CPU state
// machine (machine.go). A return with no interrupt to return to, and
// interrupts nested deeper than maxNesting, are warnings that leave the
// CPU state unknown: the interval open at that point is cut (truncated),
// and no interval opens until the next <cpu> rule that sets a state. A
// return while the state is unknown is silent; a return to the state
// before an interrupt entered while it was unknown makes it unknown
// again, the interrupt's interval complete. The states name the holder.
func TestReturnAndNesting(t *testing.T) {
	const sw, in, out = 20, 21, 22
	lb := &logBuilder{}
	lb.header("tos-1", "t32", 0, 0)
	recs := [][]byte{lb.rec(tBlock, 8, 0),
		lb.rec(in, 16, 5, 0, 200),     // unknown: interrupt 200 enters over what the log has not told
		lb.rec(out, 12, 6, 0),         // back to that: unknown, silently
		lb.rec(sw, 16, 10, 0, 0x1000), // cpuThr thread 0x1000 from 10
		lb.rec(out, 12, 20, 0),        // nothing to return to: warning, unknown
		lb.rec(out, 12, 25, 0),        // unknown: silent
		lb.rec(sw, 16, 30, 0, 0x1000), // cpuThr again from 30
		lb.rec(in, 16, 31, 0, 100),    // interrupt 100
		lb.rec(in, 16, 32, 0, 101),    // interrupt 101 nested in it
		lb.rec(out, 12, 33, 0),        // back to 100
		lb.rec(out, 12, 34, 0),        // back to the thread
	}
	// Interrupts nested maxNesting deep are fine; one more is a warning.
	// They need more than one block.
	ts := uint32(40)
	for i := 0; i <= maxNesting; i++ {
		recs = append(recs, lb.rec(in, 16, ts, 0, uint32(i+1))) // irq 0 would name no object
		ts++
	}
	recs = append(recs, lb.rec(out, 12, ts, 0), lb.rec(sw, 16, ts+1, 0, 0x1000))
	per := (testBS - 8) / 16
	lb.block(recs[:per]...)
	for rest := recs[per:]; len(rest) > 0; {
		n := min(per, len(rest))
		lb.block(append([][]byte{lb.rec(tBlock, 8, uint32(len(lb.b)/testBS))}, rest[:n]...)...)
		rest = rest[n:]
	}

	dir := t.TempDir()
	logPath := filepath.Join(dir, "nest.blog")
	descPath := filepath.Join(dir, "nest.xml")
	if err := os.WriteFile(logPath, lb.b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(descPath, []byte(nestingXML), 0o644); err != nil {
		t.Fatal(err)
	}
	db := dbtest.Open(t)
	dbtest.Ingest(t, db, logPath, ingest.Options{Format: "baget", Params: map[string]string{"description": descPath}})

	diags := dbtest.Query(t, db.SQL(), `SELECT severity, message FROM diagnostics ORDER BY src_line`)
	want := "warning | cpu 0: return from an interrupt with no interrupt to return to: CPU state unknown until the next <cpu> rule\n" +
		"warning | cpu 0: interrupts nested deeper than 64: CPU state unknown until the next <cpu> rule\n"
	if diags != want {
		t.Errorf("diagnostics:\n%s\nwant:\n%s", diags, want)
	}
	// CPU 0's intervals: interrupt 200 5..6, nothing until the thread
	// 10..20 (cut by the bad return);
	// the thread 30..31, interrupt 100 31..32, 101 32..33, 100 33..34, the
	// thread 34..40; interrupts 1..64 nested, each interrupted by the
	// next: interrupt i from 39+i to 40+i; interrupt 64 from 103 until
	// the 65th IN at 104 makes the state unknown. The OUT at 105 is
	// silent, the SW at 106 opens the thread again, truncated at the end.
	got := dbtest.Query(t, db.SQL(), `SELECT s.state, coalesce(o.name, '-'), s.start_ts, s.end_ts, s.truncated
		FROM state_intervals s JOIN objects c ON c.run_id = s.run_id AND c.object_id = s.object_id AND c.kind = 'cpu'
		LEFT JOIN objects o ON o.run_id = s.run_id AND o.object_id = s.instance ORDER BY s.start_ts`)
	lines := strings.Split(strings.TrimSpace(got), "\n")
	if len(lines) != 8+maxNesting {
		t.Fatalf("%d CPU intervals, want %d:\n%s", len(lines), 8+maxNesting, got)
	}
	check := func(i int, want string) {
		t.Helper()
		if lines[i] != want {
			t.Errorf("interval %d: %q, want %q", i, lines[i], want)
		}
	}
	check(0, "interrupt 200 | interrupt 200 | 5 | 6 | false")
	check(1, "thread 4096 | thread 4096 | 10 | 20 | true")
	check(2, "thread 4096 | thread 4096 | 30 | 31 | false")
	check(3, "interrupt 100 | interrupt 100 | 31 | 32 | false")
	check(4, "interrupt 101 | interrupt 101 | 32 | 33 | false")
	check(5, "interrupt 100 | interrupt 100 | 33 | 34 | false")
	check(6, "thread 4096 | thread 4096 | 34 | 40 | false")
	check(7, "interrupt 1 | interrupt 1 | 40 | 41 | false")
	check(6+maxNesting, "interrupt 64 | interrupt 64 | 103 | 104 | true")
	check(7+maxNesting, "thread 4096 | thread 4096 | 106 | 106 | true")

	// Levels: a thread of no process keeps its name at level 1. No
	// interval is cpuIdle (the CPU model: the interrupt entered over an
	// unknown holder gives the CPU back unknown), so it has no levels.
	levels := dbtest.Query(t, db.SQL(), `SELECT state, level, parent_state FROM state_levels
		WHERE kind = 'cpu' AND (state NOT LIKE 'interrupt %' OR state IN ('interrupt 1', 'interrupt 200')) ORDER BY level, state`)
	if want := "interrupt 1 | 1 | cpuInterrupts\ninterrupt 200 | 1 | cpuInterrupts\n" +
		"thread 4096 | 1 | cpuThreads\ncpuInterrupts | 2 | busy\ncpuThreads | 2 | busy\n"; levels != want {
		t.Errorf("CPU levels:\n%s\nwant:\n%s", levels, want)
	}
}
