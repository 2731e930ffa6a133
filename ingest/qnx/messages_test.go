package qnx_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/ingest/qnx"
	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/internal/qnxenc"
	"github.com/traceduck/traceduck/internal/recount"
	"github.com/traceduck/traceduck/internal/tracegen"
	"github.com/traceduck/traceduck/schema"
)

// messageRows is a run's message_round_trips as recount.ReadQNXMessages
// prints its rows: client and server as pid/tid (a thread) or "pid P" (a
// process), sorted.
const messageRows = `SELECT CASE c.kind WHEN 'thread' THEN c.pid || '/' || c.native_id WHEN 'process' THEN 'pid ' || c.native_id END,
       CASE s.kind WHEN 'thread' THEN s.pid || '/' || s.native_id WHEN 'process' THEN 'pid ' || s.native_id END,
       m.msg_id, m.send_ts, m.receive_ts, m.reply_ts, m.one_way, m.truncated
FROM message_round_trips m
LEFT JOIN objects c ON c.run_id = m.run_id AND c.object_id = m.client_id
LEFT JOIN objects s ON s.run_id = m.run_id AND s.object_id = m.server_id
WHERE m.run_id = ?`

// sameAsRecount compares a run's messages with the recount of the
// traceprinter listing at path (raw lines, no traceduck code); it returns
// how many there are.
func sameAsRecount(t *testing.T, db *schema.DB, run int32, path string) int {
	t.Helper()
	want, err := recount.ReadQNXMessages(path)
	if err != nil {
		t.Fatal(err)
	}
	rows := strings.Split(strings.TrimSuffix(dbtest.Query(t, db.SQL(), messageRows, run), "\n"), "\n")
	if len(rows) == 1 && rows[0] == "" {
		rows = nil
	}
	sort.Strings(rows)
	got := strings.Join(rows, "\n")
	if w := strings.Join(want, "\n"); got != w {
		t.Errorf("run %d's messages differ from the recount of %s:\n%s", run, filepath.Base(path), dbtest.Diff(w, got))
	}
	return len(want)
}

// TestSeedRoundTrip: the QNX seed's own excerpt, as the seed prints it
// (its listing: header and event lines), read as traceprinter text and
// written as .kev, has one round trip: rcvid 0x4f, sent by all_classes's
// thread 1 at t:0x4f86e756, received by devc-pty's (pid 159762) thread 1
// at t:0x4f870bff, its reply delivered at t:0x4f878f4b: 42,997 cycles at
// 736,629,000 /s = 58,370 ns (the worked example). Besides it, a
// pulse procnto sends itself (SND_PULSE_EXE, no thread sends it) that its
// thread 12 receives, and a REC_PULSE whose send the excerpt leaves out.
func TestSeedRoundTrip(t *testing.T) {
	text := seedListing(t)
	dir := t.TempDir()
	txt := filepath.Join(dir, "seed.txt")
	if err := os.WriteFile(txt, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	h, evs := qnx.ParseTraceprinter(t, text)
	h.LittleEndian = true
	kev := filepath.Join(dir, "seed.kev")
	if err := os.WriteFile(kev, qnx.WriteKev(t, h, evs, qnxenc.KevOptions{Interleave: 2}), 0o644); err != nil {
		t.Fatal(err)
	}
	db := dbtest.Open(t)
	for _, path := range []string{txt, kev} {
		res := dbtest.Ingest(t, db, path, ingest.Options{})
		if want := strings.TrimPrefix(filepath.Ext(path), "."); res.Format != map[string]string{"txt": "qnx", "kev": "kev"}[want] {
			t.Fatalf("%s read as %s", path, res.Format)
		}
		got := dbtest.Query(t, db.SQL(), `SELECT msg_id, client, server, channel, send_ts, receive_ts, reply_ts, wait_ns, service_ns, total_ns, one_way, truncated
			FROM message_round_trips WHERE run_id = ? ORDER BY coalesce(send_seq, receive_seq)`, res.RunID)
		// ns = floor(cycles * 1e9 / 736629000) of 0x000037b0_<t>
		want := "1073741826 | NULL | procnto-smp-instr/12 | scoid 0x40000002 | 83122423823991 | 83122423834699 | NULL | 10708 | NULL | NULL | true | false\n" +
			"79 | all_classes/1 | 159762/1 | NULL | 83122423924235 | 83122423936976 | 83122423982605 | 12741 | 45629 | 58370 | false | false\n" +
			"1073741826 | NULL | procnto-smp-instr/20 | scoid 0x40000002 | NULL | 83122424705927 | NULL | NULL | NULL | NULL | true | true\n"
		if got != want {
			t.Errorf("%s: message_round_trips:\n%s", filepath.Base(path), dbtest.Diff(want, got))
		}
		if got := dbtest.Query(t, db.SQL(), `SELECT total_ns FROM message_round_trips WHERE run_id = ? AND msg_id = ?`, res.RunID, 0x4f); got != "58370\n" {
			t.Errorf("%s: the round trip of rcvid 0x4f takes %s ns, want 58370", filepath.Base(path), got)
		}
		if n := sameAsRecount(t, db, res.RunID, txt); n != 3 {
			t.Errorf("the recount finds %d messages in the seed", n)
		}
	}
}

// TestRealMessagesRecount: the real QNX listings in
// ../shared/testdata-external/qnx have as many messages as a recount of
// their raw lines finds (the one there now, the documentation's
// excerpt, has no COMM line: none), and so has the bundled sample.
func TestRealMessagesRecount(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(shared, "testdata-external", "qnx", "*.txt"))
	if len(files) == 0 {
		t.Skip("no ../shared/testdata-external/qnx beside the repository")
	}
	db := dbtest.Open(t)
	for _, path := range files {
		res := dbtest.Ingest(t, db, path, ingest.Options{})
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		n := sameAsRecount(t, db, res.RunID, path)
		t.Logf("%s: %d messages, %d COMM lines", filepath.Base(path), n, strings.Count(string(raw), " COMM "))
	}
	res := dbtest.Ingest(t, db, "../../samples/qnx/neutrino-2cpu.txt", ingest.Options{})
	if n := sameAsRecount(t, db, res.RunID, "../../samples/qnx/neutrino-2cpu.txt"); n < 100 {
		t.Errorf("the sample has %d messages", n)
	}
}

// messagesText is the truth's messages as messageRows prints a run's,
// sorted.
func messagesText(in []tracegen.QNXMessage) string {
	null := func(v int64) string {
		if v < 0 {
			return "NULL"
		}
		return fmt.Sprint(v)
	}
	rows := make([]string, len(in))
	for i, m := range in {
		client := m.Client
		if client == "" {
			client = "NULL"
		}
		cut := m.ReceiveNS < 0 || (!m.OneWay && m.ReplyNS < 0)
		rows[i] = fmt.Sprintf("%s | %s | %d | %d | %s | %s | %v | %v", client, m.Server, m.ID, m.SendNS, null(m.ReceiveNS), null(m.ReplyNS), m.OneWay, cut)
	}
	sort.Strings(rows)
	return strings.Join(rows, "\n")
}

// checkMessages compares a run's messages with what the simulator passed.
func checkMessages(t *testing.T, db *schema.DB, run int32, truth tracegen.QNXTruth) {
	t.Helper()
	got := sortedRows(dbtest.Query(t, db.SQL(), messageRows, run))
	if want := messagesText(truth.Messages); got != want {
		t.Errorf("messages differ from the truth (%d in the truth):\n%s", len(truth.Messages), dbtest.Diff(want, got))
	}
}
