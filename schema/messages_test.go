package schema

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow/memory"
)

// TestMessageTracker runs the scripts of testdata/messages/*.txtar: the
// verbs a format speaks to the message tracker, and the rows of messages
// and the diagnostics that must come out. Script lines:
//
//	max N                                         bound on messages in flight
//	send CLIENT KEY [oneway] [server=S] [chan=C] [id=N] TS
//	receive SERVER KEY [oneway] [chan=C] [id=N] TS
//	reply CLIENT TS
//	end TS                                        last event
//
// CLIENT, SERVER, S, C are object names ("-": NoObject); KEY is MsgKey.A.
// rows: "id client server channel send receive reply [one-way] [cut]" in
// the order written ("-" for NULL); diagnostics: "severity count message".
func TestMessageTracker(t *testing.T) {
	runScriptCases(t, "testdata/messages/*.txtar", []string{"rows", "diagnostics"}, true, runMessageScript)
}

func runMessageScript(t *testing.T, script string) map[string]string {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	sink := &rowSink{}
	w := NewRunWriter(RunInfo{RunID: 1, Name: "messages"}, sink, mem)
	w.SetBatchRows(2)
	msgs := w.Messages()
	num := func(s string) int64 {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		return n
	}
	obj := func(name string) ObjectID {
		if name == "-" {
			return NoObject
		}
		return w.Object("thread", name)
	}
	ev := func(ts int64) Seq {
		seq, err := w.Event(&Event{TS: ts, CPU: NoCPU, Class: w.Sym("x"), Event: w.Sym("x"), Context: NoObject, Object: NoObject,
			SourceInstance: NoInstance, TargetInstance: NoInstance})
		if err != nil {
			t.Fatal(err)
		}
		return seq
	}
	for n, l := range strings.Split(script, "\n") {
		f := strings.Fields(l)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		var m Msg
		var err error
		parse := func(who string, args []string) {
			m = Msg{ID: NoInstance, Client: NoObject, Server: NoObject, Channel: NoObject, Line: int64(n + 1)}
			m.TS = num(args[len(args)-1])
			m.Seq = ev(m.TS)
			for _, a := range args[:len(args)-1] {
				k, v, _ := strings.Cut(a, "=")
				switch k {
				case "oneway":
					m.OneWay = true
				case "server":
					m.Server = obj(v)
				case "chan":
					m.Channel = w.Object("channel", v)
				case "id":
					m.ID = num(v)
				default:
					m.Key = MsgKey{A: num(a)}
				}
			}
			switch f[0] {
			case "send", "reply":
				m.Client = obj(who)
			case "receive":
				m.Server = obj(who)
			}
		}
		switch f[0] {
		case "max":
			msgs.SetMaxInFlight(int(num(f[1])))
		case "send":
			parse(f[1], f[2:])
			err = msgs.Send(m)
		case "receive":
			parse(f[1], f[2:])
			err = msgs.Receive(m)
		case "reply":
			parse(f[1], f[2:])
			err = msgs.Reply(m)
		case "end":
			ev(num(f[1]))
		default:
			t.Fatalf("unknown verb %q", f[0])
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Finish(time.Now()); err != nil {
		t.Fatal(err)
	}
	names := map[string]string{"NULL": "-"}
	for _, o := range sink.rows[TableObjects] {
		names[o["object_id"]] = o["name"]
	}
	dash := func(v string) string {
		if v == "NULL" {
			return "-"
		}
		return v
	}
	var rows []string
	for _, r := range sink.rows[TableMessages] {
		line := fmt.Sprintf("%s %s %s %s %s %s %s", dash(r["msg_id"]), names[r["client_id"]], names[r["server_id"]], names[r["channel_id"]],
			dash(r["send_ts"]), dash(r["receive_ts"]), dash(r["reply_ts"]))
		if r["one_way"] == "true" {
			line += " one-way"
		}
		if r["truncated"] == "true" {
			line += " cut"
		}
		rows = append(rows, line)
	}
	var diags []string
	for _, d := range sink.rows[TableDiagnostics] {
		diags = append(diags, d["severity"]+" "+d["count"]+" "+d["message"])
	}
	return map[string]string{"rows": strings.Join(rows, "\n"), "diagnostics": strings.Join(diags, "\n")}
}

// TestMessageTrackerBounded: one message that waits for its reply the
// whole trace long, and many round trips after it: what the tracker keeps
// stays within a bound of the messages in flight, however many ended.
func TestMessageTrackerBounded(t *testing.T) {
	w := NewRunWriter(RunInfo{RunID: 1}, &rowSink{}, nil)
	defer w.Abort()
	msgs := w.Messages()
	long := w.Object("thread", "long")
	c, s := w.Object("thread", "c"), w.Object("thread", "s")
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(msgs.Send(Msg{Key: MsgKey{A: -1}, ID: NoInstance, Client: long, Server: NoObject, Channel: NoObject, TS: 0, Seq: 1}))
	for i := int64(1); i <= 100_000; i++ {
		must(msgs.Send(Msg{Key: MsgKey{A: i % 7}, ID: i, Client: c, Server: NoObject, Channel: NoObject, TS: i, Seq: Seq(i)}))
		must(msgs.Receive(Msg{Key: MsgKey{A: i % 7}, Server: s, TS: i, Seq: Seq(i)}))
		must(msgs.Reply(Msg{Client: c, TS: i, Seq: Seq(i)}))
		if len(msgs.order) > 2*msgs.InFlight()+64 || len(msgs.pending) > 1 || len(msgs.awaiting) > 1 {
			t.Fatalf("after %d round trips: order %d, pending %d, awaiting %d for %d in flight", i, len(msgs.order), len(msgs.pending), len(msgs.awaiting), msgs.InFlight())
		}
	}
	if msgs.InFlight() != 1 {
		t.Fatalf("%d in flight", msgs.InFlight())
	}
}

// BenchmarkMessageTracker: a round trip (send, receive, reply) and a
// one-way message, per op, through the tracker into batches that a sink
// drops; then a flood of one-way messages on one key, all in flight, then
// received one by one.
func BenchmarkMessageTracker(b *testing.B) {
	w := NewRunWriter(RunInfo{RunID: 1}, discardSink{}, nil)
	defer w.Abort()
	msgs := w.Messages()
	c, s := w.Object("thread", "c"), w.Object("thread", "s")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		ts := int64(i)
		k := MsgKey{A: int64(i % 64)}
		if err := msgs.Send(Msg{Key: k, ID: 1, Client: c, Server: NoObject, Channel: NoObject, TS: ts, Seq: Seq(i)}); err != nil {
			b.Fatal(err)
		}
		if err := msgs.Receive(Msg{Key: k, Server: s, TS: ts, Seq: Seq(i)}); err != nil {
			b.Fatal(err)
		}
		if err := msgs.Reply(Msg{Client: c, TS: ts, Seq: Seq(i)}); err != nil {
			b.Fatal(err)
		}
		if err := msgs.Send(Msg{OneWay: true, Key: k, ID: 2, Client: c, Server: NoObject, Channel: NoObject, TS: ts, Seq: Seq(i)}); err != nil {
			b.Fatal(err)
		}
		if err := msgs.Receive(Msg{OneWay: true, Key: k, Server: s, TS: ts, Seq: Seq(i)}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestMessageTrackerFlood: MaxMessagesInFlight one-way messages of one key
// in flight, then received one by one, in linear time (each receive takes
// the oldest without moving the others).
func TestMessageTrackerFlood(t *testing.T) {
	w := NewRunWriter(RunInfo{RunID: 1}, discardSink{}, nil)
	defer w.Abort()
	msgs := w.Messages()
	s := w.Object("thread", "s")
	start := time.Now()
	for i := 0; i < MaxMessagesInFlight; i++ {
		if err := msgs.Send(Msg{OneWay: true, Key: MsgKey{A: 1}, ID: int64(i), Client: NoObject, Server: NoObject, Channel: NoObject, TS: int64(i), Seq: Seq(i + 1)}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < MaxMessagesInFlight; i++ {
		if err := msgs.Receive(Msg{OneWay: true, Key: MsgKey{A: 1}, Server: s, TS: int64(i), Seq: Seq(i + 1)}); err != nil {
			t.Fatal(err)
		}
	}
	if msgs.InFlight() != 0 || len(msgs.pending) != 0 {
		t.Fatalf("%d in flight, %d queues", msgs.InFlight(), len(msgs.pending))
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("%d messages sent and received in %v", MaxMessagesInFlight, d)
	}
}
