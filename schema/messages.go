package schema

import "fmt"

// The message model (docs/semantics.md, "Messages: round trips"): one
// tracker, fed by every format with the same three verbs, pairs the
// events of each message and writes one row of the messages table when
// the message ends.
//
//  1. Send: a client sends a message. A round trip waits for a reply, a
//     one-way message (QNX: a pulse) does not. A client waits for one
//     reply at a time (a synchronous send blocks it): sending again
//     before the reply ends the message it waited for, truncated, with a
//     diagnostic (the send was abandoned, or its reply is not in the
//     trace).
//  2. Receive: a server takes the oldest message in flight with the key
//     the format matches receives by (QNX: a message's rcvid; a pulse's
//     connection and process). The server of the row becomes the one
//     that received it. A one-way message ends there. A receive of no
//     message in flight (its send is not in the trace) is a row of its
//     own, truncated, with a diagnostic.
//  3. Reply: the reply to a client's message is delivered to it; the
//     message ends. A reply to a client with no message in flight (sent
//     before the trace began) is left out, with a diagnostic.
//  4. At most MaxMessagesInFlight messages are in flight (sent or
//     received, not ended): past it the oldest one ends, truncated, with
//     a warning. At the end of the trace the messages in flight end,
//     truncated.
//
// A row is truncated when one of the events its kind expects (send,
// receive, reply; one-way: send, receive) is not in the trace. wait =
// receive - send, service = reply - receive, total = reply - send: the
// view message_round_trips computes them.

// MaxMessagesInFlight bounds the messages in flight of one run, so that a
// trace of sends that are never received (a pulse nobody reads) does not
// grow the tracker without bound.
const MaxMessagesInFlight = 1 << 16

// MsgKey is what a format matches a receive to its send by: any two
// numbers (QNX: a message's rcvid; a pulse's scoid and server pid).
// Messages in flight with the same key are received in the order they
// were sent.
type MsgKey struct{ A, B int64 }

// Msg is what a verb of the message tracker is told; each verb reads the
// fields it names.
type Msg struct {
	OneWay  bool     // a one-way message (Send, Receive)
	Key     MsgKey   // Send, Receive
	ID      int64    // msg_id as the trace gives it, NoInstance for none (Send; Receive of no message in flight)
	Client  ObjectID // the sender (Send), the one the reply goes to (Reply); NoObject when not known
	Server  ObjectID // the receiver the send names (Send), the one that receives (Receive); NoObject when not known
	Channel ObjectID // what it goes through (Send; Receive of no message in flight); NoObject for none
	TS      int64
	Seq     Seq
	Line    int64 // src_line of the event, for diagnostics
}

type message struct {
	Msg            // as sent (Seq NoSeq: the send is not in the trace)
	recvTS   int64 // with received
	recvSeq  Seq   // with received
	received bool  // a receive took it
	done     bool  // ended (written), or about to be
	queued   bool  // in its key's queue (sent, not received)
	awaited  bool  // its client waits for its reply
}

type queueKey struct {
	oneWay bool
	key    MsgKey
}

// MessageTracker is the run's message model; RunWriter.Messages returns
// it.
type MessageTracker struct {
	w        *RunWriter
	pending  map[queueKey][]*message // sent, not received, oldest first
	spare    [][]*message            // emptied queues, reused for new keys
	awaiting map[ObjectID]*message   // a client's round trip waiting for its reply
	order    []*message              // every message in flight, in send order (ended ones removed lazily)
	live     int                     // messages in flight
	max      int                     // bound (MaxMessagesInFlight; tests lower it)
	rows     *batch
	diags    map[string]DiagID
}

// Messages returns the run's message tracker.
func (w *RunWriter) Messages() *MessageTracker {
	t := &w.msgs
	if t.w == nil {
		t.w = w
		t.pending = make(map[queueKey][]*message)
		t.awaiting = make(map[ObjectID]*message)
		t.diags = make(map[string]DiagID)
		t.max = MaxMessagesInFlight
	}
	return t
}

// SetMaxInFlight lowers the bound on messages in flight (tests).
func (t *MessageTracker) SetMaxInFlight(n int) {
	if n > 0 {
		t.max = n
	}
}

// Send: m.Client sends a message (a round trip unless m.OneWay) to
// m.Server (NoObject: not known until it is received) through m.Channel,
// at m.TS, event m.Seq.
func (t *MessageTracker) Send(m Msg) error {
	msg := &message{Msg: m}
	if !m.OneWay && m.Client != NoObject {
		if old := t.awaiting[m.Client]; old != nil {
			t.diag("resend", Warning, m.Line, m.Seq, "%s sends a message while it waits for the reply to the one it sent at %d ns: that one ends without a reply (truncated)", t.w.ObjectName(m.Client), old.TS)
			if err := t.end(old, false, 0, NoSeq); err != nil {
				return err
			}
		}
		t.awaiting[m.Client] = msg
		msg.awaited = true
	}
	k := queueKey{m.OneWay, m.Key}
	q, ok := t.pending[k]
	if !ok && len(t.spare) > 0 {
		q = t.spare[len(t.spare)-1]
		t.spare = t.spare[:len(t.spare)-1]
	}
	t.pending[k] = append(q, msg)
	msg.queued = true
	t.order = append(t.order, msg)
	t.live++
	for t.live > t.max {
		oldest := t.oldest()
		t.diag("bound", Warning, m.Line, m.Seq, "more than %d messages in flight: the oldest ends without its receive or reply (truncated)", t.max)
		if err := t.end(oldest, false, 0, NoSeq); err != nil {
			return err
		}
	}
	return nil
}

// Receive: m.Server receives the oldest message in flight with key m.Key
// (and m.OneWay), at m.TS, event m.Seq. With none in flight (the send is
// not in the trace), the receive is a row of its own, with m.ID and
// m.Channel, truncated.
func (t *MessageTracker) Receive(m Msg) error {
	k := queueKey{m.OneWay, m.Key}
	var msg *message
	if q := t.pending[k]; len(q) > 0 {
		msg = q[0]
		t.unqueue(msg)
	}
	if msg == nil {
		t.diag("nosend", Info, m.Line, m.Seq, "a message received whose send is not in the trace (sent before the trace began, or its event was not traced): kept without its send (truncated)")
		msg = &message{Msg: Msg{OneWay: m.OneWay, Key: m.Key, ID: m.ID, Client: NoObject, Server: m.Server, Channel: m.Channel, Seq: NoSeq}}
		msg.recvTS, msg.recvSeq, msg.received = m.TS, m.Seq, true
		return t.write(msg, false, 0, NoSeq)
	}
	if m.Server != NoObject {
		msg.Server = m.Server
	}
	msg.recvTS, msg.recvSeq, msg.received = m.TS, m.Seq, true
	if msg.OneWay || !msg.awaited {
		// a one-way message ends here; a round trip whose client is not
		// known can never be matched to its reply
		return t.end(msg, false, 0, NoSeq)
	}
	return nil
}

// Reply: the reply to m.Client's message is delivered to it at m.TS,
// event m.Seq; the round trip ends.
func (t *MessageTracker) Reply(m Msg) error {
	msg := t.awaiting[m.Client]
	if msg == nil || m.Client == NoObject {
		name := "a client not known"
		if m.Client != NoObject {
			name = t.w.ObjectName(m.Client)
		}
		t.diag("noreq", Info, m.Line, m.Seq, "a reply to %s, which has no message in flight in the trace (sent before the trace began): left out", name)
		return nil
	}
	return t.end(msg, true, m.TS, m.Seq)
}

// InFlight returns how many messages are in flight.
func (t *MessageTracker) InFlight() int { return t.live }

// unqueue takes msg out of its key's queue.
func (t *MessageTracker) unqueue(msg *message) {
	if !msg.queued {
		return
	}
	msg.queued = false
	k := queueKey{msg.OneWay, msg.Key}
	q := t.pending[k]
	if len(q) > 0 && q[0] == msg {
		// the oldest, as a receive takes it: no copy, however long the
		// queue (appending reallocates it now and then, dropping the front)
		q[0] = nil
		q = q[1:]
	} else {
		for i, x := range q {
			if x == msg {
				copy(q[i:], q[i+1:])
				q[len(q)-1] = nil
				q = q[:len(q)-1]
				break
			}
		}
	}
	if len(q) > 0 {
		t.pending[k] = q
		return
	}
	delete(t.pending, k)
	if cap(q) <= 16 && len(t.spare) < 64 {
		t.spare = append(t.spare, q)
	}
}

// end ends a message in flight and writes its row.
func (t *MessageTracker) end(msg *message, replied bool, ts int64, seq Seq) error {
	if msg.done {
		return nil
	}
	msg.done = true
	t.unqueue(msg)
	if msg.awaited {
		msg.awaited = false
		if t.awaiting[msg.Client] == msg {
			delete(t.awaiting, msg.Client)
		}
	}
	t.live--
	t.compact()
	return t.write(msg, replied, ts, seq)
}

// oldest returns the oldest message in flight.
func (t *MessageTracker) oldest() *message {
	for _, m := range t.order {
		if !m.done {
			return m
		}
	}
	panic("schema: no message in flight")
}

// compact drops ended messages from order once they are most of it: order
// stays within twice the messages in flight.
func (t *MessageTracker) compact() {
	if len(t.order) < 64 || len(t.order) < 2*t.live {
		return
	}
	n := 0
	for _, m := range t.order {
		if !m.done {
			t.order[n] = m
			n++
		}
	}
	clear(t.order[n:])
	t.order = t.order[:n]
}

// write appends a message's row.
func (t *MessageTracker) write(msg *message, replied bool, replyTS int64, replySeq Seq) error {
	w := t.w
	if t.rows == nil {
		t.rows = newBatchCounting(w.mem, TableMessages, w.syms, &w.badUTF8)
		t.rows.reserve(min(w.batchRows, 1024))
	}
	sent := msg.Seq != NoSeq
	truncated := !sent || !msg.received || (!msg.OneWay && !replied)
	b := t.rows
	b.i32(0).Append(w.info.RunID)
	b.i64(1).put(msg.ID, msg.ID == NoInstance)
	b.boolc(2).Append(msg.OneWay)
	b.i32(3).put(int32(msg.Client), msg.Client < 0)
	b.i32(4).put(int32(msg.Server), msg.Server < 0)
	b.i32(5).put(int32(msg.Channel), msg.Channel < 0)
	b.i64(6).put(msg.TS, !sent)
	b.i64(7).put(msg.recvTS, !msg.received)
	b.i64(8).put(replyTS, !replied)
	b.i64(9).put(int64(msg.Seq), !sent)
	b.i64(10).put(int64(msg.recvSeq), !msg.received)
	b.i64(11).put(int64(replySeq), !replied)
	b.boolc(12).Append(truncated)
	b.rows++
	if b.rows >= w.batchRows {
		return w.flushTable(TableMessages, b)
	}
	return nil
}

// finish ends the messages still in flight, in the order they were sent
// (truncated), and sends the last batch.
func (t *MessageTracker) finish() error {
	if t.w == nil {
		return nil
	}
	for _, m := range t.order {
		if !m.done {
			m.done = true
			t.live--
			if err := t.write(m, false, 0, NoSeq); err != nil {
				return err
			}
		}
	}
	t.order, t.pending, t.awaiting, t.spare = nil, nil, nil, nil
	return t.w.flushTable(TableMessages, t.rows)
}

func (t *MessageTracker) release() {
	if t.rows != nil {
		t.rows.release()
		t.rows = nil
	}
}

// diag records a finding once per kind; repeats count up.
func (t *MessageTracker) diag(key string, sev Severity, line int64, seq Seq, format string, args ...any) {
	if id, ok := t.diags[key]; ok {
		t.w.DiagRepeat(id)
		return
	}
	t.diags[key] = t.w.Diag(sev, line, seq, fmt.Sprintf(format, args...))
}
