package baget

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/dbtest"
)

// syncXML declares a mutex (owned), a semaphore (unowned) and a message
// queue, and the events that act on them (docs 2.8): every record is
// 4-byte words after the descriptor, the time first, the CPU second.
const syncXML = `<description os="tos-1" arch="t32">
<abi endian="little" pointer="4" long_long_align="8" double_align="8"/>
<descriptor type="unsigned short" size="unsigned short"/>
<Objects>
 <id type_name="thread_ptr" base="pointer" kind="thread"/>
 <id type_name="mutex_id" base="unsigned int" kind="mutex" resource="owned"/>
 <id type_name="sem_id" base="unsigned int" kind="semaphore" resource="unowned"/>
 <id type_name="mq_id" base="unsigned int" kind="mqueue" resource="queue"/>
</Objects>
<event Name="FILL" id="0" kind="filler"/>
<event Name="BLOCK" id="1" kind="block" number="no"><field Name="no" type_name="unsigned int"/></event>
<event Name="SW" id="20" time="t" cpu="cpu" main="th">
 <field Name="t" type_name="unsigned int"/><field Name="cpu" type_name="unsigned int"/><field Name="th" type_name="thread_ptr"/>
 <cpu to="cpuThr" field="th"/>
</event>
<event Name="LOCK" id="30" time="t" cpu="cpu" main="mx">
 <field Name="t" type_name="unsigned int"/><field Name="cpu" type_name="unsigned int"/><field Name="mx" type_name="mutex_id"/>
 <field Name="res" type_name="int"/>
 <resource verb="request" field="mx"/>
 <resource verb="assign" field="mx" test="res" max="0"/>
 <resource verb="wait" field="mx" test="res" min="1" max="1"/>
 <resource verb="give_up" field="mx" test="res" min="2"/>
</event>
<event Name="GOT" id="31" time="t" cpu="cpu" main="th">
 <field Name="t" type_name="unsigned int"/><field Name="cpu" type_name="unsigned int"/><field Name="th" type_name="thread_ptr"/>
 <resource verb="assign" actor="th"/>
</event>
<event Name="UNLOCK" id="32" time="t" cpu="cpu" main="mx">
 <field Name="t" type_name="unsigned int"/><field Name="cpu" type_name="unsigned int"/><field Name="mx" type_name="mutex_id"/>
 <resource verb="release" field="mx"/>
</event>
<event Name="SEMWAIT" id="33" time="t" cpu="cpu" main="sem">
 <field Name="t" type_name="unsigned int"/><field Name="cpu" type_name="unsigned int"/><field Name="sem" type_name="sem_id"/>
 <resource verb="wait" field="sem"/>
</event>
<event Name="SEMGIVE" id="34" time="t" cpu="cpu" main="sem">
 <field Name="t" type_name="unsigned int"/><field Name="cpu" type_name="unsigned int"/><field Name="sem" type_name="sem_id"/>
 <field Name="to" type_name="thread_ptr"/>
 <resource verb="assign" field="sem" actor="to"/>
 <resource verb="release" field="sem"/>
</event>
<event Name="SEND" id="40" time="t" cpu="cpu" main="q">
 <field Name="t" type_name="unsigned int"/><field Name="cpu" type_name="unsigned int"/><field Name="q" type_name="mq_id"/>
 <message verb="send" field="q"/>
</event>
<event Name="RECV" id="41" time="t" cpu="cpu" main="q">
 <field Name="t" type_name="unsigned int"/><field Name="cpu" type_name="unsigned int"/><field Name="q" type_name="mq_id"/>
 <message verb="receive" field="q"/>
</event>
<event Name="SENDID" id="42" time="t" cpu="cpu" main="q">
 <field Name="t" type_name="unsigned int"/><field Name="cpu" type_name="unsigned int"/><field Name="q" type_name="mq_id"/>
 <field Name="n" type_name="unsigned int"/>
 <message verb="send" field="q" id="n"/>
</event>
<event Name="RECVID" id="43" time="t" cpu="cpu" main="q">
 <field Name="t" type_name="unsigned int"/><field Name="cpu" type_name="unsigned int"/><field Name="q" type_name="mq_id"/>
 <field Name="n" type_name="unsigned int"/>
 <message verb="receive" field="q" id="n"/>
</event>
</description>`

// TestSyncRules: the <resource> and <message> rules drive the resource
// and message models with their verbs, the actor being the actor= field
// or the event's context (the thread running on the event's CPU), and a
// rule without field= acting on the resource the actor waits for.
func TestSyncRules(t *testing.T) {
	lb := &logBuilder{}
	lb.header("tos-1", "t32", 0, 0)
	lb.b = append(lb.b, syncBlocks()...)
	dir := t.TempDir()
	logPath, descPath := filepath.Join(dir, "sync.blog"), filepath.Join(dir, "sync.xml")
	if err := os.WriteFile(logPath, lb.b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(descPath, []byte(syncXML), 0o644); err != nil {
		t.Fatal(err)
	}
	db := dbtest.Open(t)
	dbtest.Ingest(t, db, logPath, ingest.Options{Format: "baget", Params: map[string]string{"description": descPath}})
	q := db.SQL()

	holds := dbtest.Query(t, q, `SELECT resource, resource_kind, holder, start_ts, end_ts, dur, truncated FROM resource_holds ORDER BY start_ts, resource`)
	if want := "mutex 9 | mutex | thread 512 | 10 | 145 | 135 | true\n" +
		"mutex 1 | mutex | thread 256 | 20 | 40 | 20 | false\n" +
		"mutex 1 | mutex | thread 512 | 45 | 70 | 25 | false\n" +
		"mutex 3 | mutex | thread 256 | 140 | 150 | 10 | true\n"; holds != want {
		t.Errorf("holds:\n%s\nwant:\n%s", holds, want)
	}
	waits := dbtest.Query(t, q, `SELECT w.resource, w.resource_kind, w.waiter, w.start_ts, w.end_ts, w.truncated, coalesce(i.ended, '-')
		FROM resource_waits w JOIN resource_intervals i ON i.run_id = w.run_id AND i.resource_id = w.resource_id AND i.actor_id = w.waiter_id
		AND i.relation = 'wait' AND i.start_ts = w.start_ts ORDER BY w.start_ts`)
	if want := "mutex 1 | mutex | thread 512 | 30 | 45 | false | assigned\n" +
		"mutex 2 | mutex | thread 256 | 50 | 60 | false | gave_up\n" +
		"semaphore 5 | semaphore | thread 256 | 80 | 85 | false | assigned\n" +
		"mutex 3 | mutex | thread 512 | 150 | 150 | true | -\n"; waits != want {
		t.Errorf("waits:\n%s\nwant:\n%s", waits, want)
	}
	msgs := dbtest.Query(t, q, `SELECT coalesce(client, '-'), coalesce(server, '-'), channel, coalesce(msg_id::VARCHAR, '-'), coalesce(send_ts::VARCHAR, '-'), receive_ts, one_way, truncated
		FROM message_round_trips ORDER BY receive_ts`)
	if want := "thread 256 | thread 512 | mqueue 7 | - | 100 | 110 | true | false\n" +
		"thread 512 | thread 256 | mqueue 7 | - | 101 | 111 | true | false\n" +
		"- | thread 256 | mqueue 7 | - | - | 112 | true | true\n" +
		"thread 256 | thread 512 | mqueue 8 | 6 | 121 | 130 | true | false\n" +
		"thread 256 | thread 512 | mqueue 8 | 5 | 120 | 131 | true | false\n"; msgs != want {
		t.Errorf("messages:\n%s\nwant:\n%s", msgs, want)
	}
	// The mutexes' states, known from the first assign or release: mutex
	// 2 was only waited for, so its state is not known.
	states := dbtest.Query(t, q, `SELECT o.name, s.state, coalesce(h.name, '-'), s.start_ts, s.end_ts, s.truncated
		FROM state_intervals s JOIN objects o ON o.run_id = s.run_id AND o.object_id = s.object_id AND o.kind = 'mutex'
		LEFT JOIN objects h ON h.run_id = s.run_id AND h.object_id = s.instance ORDER BY o.name, s.start_ts`)
	if want := "mutex 1 | held | thread 256 | 20 | 30 | false\n" +
		"mutex 1 | held (1 waiting) | thread 256 | 30 | 40 | false\n" +
		"mutex 1 | free (1 waiting) | - | 40 | 45 | false\n" +
		"mutex 1 | held | thread 512 | 45 | 70 | false\n" +
		"mutex 1 | free | - | 70 | 150 | true\n" +
		"mutex 3 | held | thread 256 | 140 | 150 | false\n" +
		"mutex 3 | held (1 waiting) | thread 256 | 150 | 150 | true\n" +
		"mutex 9 | free | - | 145 | 150 | true\n"; states != want {
		t.Errorf("mutex states:\n%s\nwant:\n%s", states, want)
	}
	levels := dbtest.Query(t, q, `SELECT state, level, parent_state FROM state_levels WHERE kind = 'mutex' ORDER BY level, state`)
	if want := "free | 0 | free\nfree (1 waiting) | 0 | free\nheld | 0 | held\nheld (1 waiting) | 0 | held\nfree | 1 | \nheld | 1 | \n"; levels != want {
		t.Errorf("mutex levels:\n%s\nwant:\n%s", levels, want)
	}
	diags := dbtest.Query(t, q, `SELECT severity, message FROM diagnostics ORDER BY src_line`)
	if want := "warning | a release of a resource its actor does not hold (it released it before, or was never assigned it after the trace began): no hold\n" +
		"info | a message received whose send is not in the trace (sent before the trace began, or its event was not traced): kept without its send (truncated)\n"; diags != want {
		t.Errorf("diagnostics:\n%s\nwant:\n%s", diags, want)
	}
}

// syncBlocks is the data blocks of TestSyncRules's log (also a fuzz seed).
func syncBlocks() []byte {
	const sw, lock, got, unlock, semwait, semgive, send, recv, sendid, recvid = 20, 30, 31, 32, 33, 34, 40, 41, 42, 43
	const a, b = 0x100, 0x200 // threads 256 and 512
	lb := &logBuilder{}
	r := func(typ int, words ...uint32) []byte { return lb.rec(typ, 4+4*len(words), words...) }
	recs := [][]byte{
		r(sw, 10, 0, a), r(sw, 11, 1, b),
		r(lock, 20, 0, 1, 0),                   // a requests mutex 1, gets it: a hold from 20
		r(lock, 30, 1, 1, 1),                   // b requests it, blocks: a wait from 30
		r(unlock, 40, 0, 1),                    // a releases it: hold 20..40
		r(got, 45, 0, b),                       // b is handed what it waits for: wait 30..45, hold from 45
		r(lock, 50, 0, 2, 1),                   // a waits for mutex 2 from 50
		r(lock, 60, 0, 2, 2),                   // a's call returns a timeout: wait 50..60 given up (its request changes nothing)
		r(unlock, 70, 1, 1),                    // b releases mutex 1: hold 45..70
		r(unlock, 75, 1, 1),                    // again: a warning, nothing
		r(semwait, 80, 0, 5),                   // a waits for semaphore 5
		r(semgive, 85, 1, 5, a),                // given to a: wait 80..85; unowned: no hold, and b's release changes nothing
		r(lock, 90, 1, 0, 0),                   // mutex 0: no object, the rules do not apply
		r(got, 92, 1, b),                       // b waits for nothing: nothing
		r(send, 100, 0, 7), r(send, 101, 1, 7), // a, then b, send on queue 7
		r(recv, 110, 1, 7), r(recv, 111, 0, 7), // b receives a's, a receives b's
		r(recv, 112, 0, 7), // nothing in flight: a receive without its send
		r(sendid, 120, 0, 8, 5), r(sendid, 121, 0, 8, 6),
		r(recvid, 130, 1, 8, 6), r(recvid, 131, 1, 8, 5), // by id, not in send order
		r(lock, 140, 0, 3, 0), // a holds mutex 3 until the end
		r(unlock, 145, 1, 9),  // b releases mutex 9, held since before the log
		r(lock, 150, 1, 3, 1), // b waits for mutex 3 until the end
	}
	out := &logBuilder{}
	per := (testBS - 8) / 20
	out.block(append([][]byte{lb.rec(tBlock, 8, 0)}, recs[:per]...)...)
	for rest, n := recs[per:], uint32(1); len(rest) > 0; n++ {
		k := min(per, len(rest))
		out.block(append([][]byte{lb.rec(tBlock, 8, n)}, rest[:k]...)...)
		rest = rest[k:]
	}
	return out.b
}
