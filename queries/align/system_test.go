package align_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	_ "github.com/traceduck/traceduck/ingest/all"
	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/internal/tracegen"
	"github.com/traceduck/traceduck/queries/align"
	"github.com/traceduck/traceduck/schema"
)

// ingestSystem simulates machines with the given clocks (machine 0 on
// true time), ingests their logs as system "rig" and returns the database
// and the messages.
func ingestSystem(t *testing.T, clocks []tracegen.BagetClock, events int, gap int64) (*schema.DB, []tracegen.BagetMessage) {
	t.Helper()
	var cfgs []tracegen.BagetConfig
	for i, c := range clocks {
		cfgs = append(cfgs, tracegen.BagetConfig{Events: events, CPUs: 1 + i%3, Seed: int64(40 + i), ABI: "le32", Clock: c, GapNS: gap})
	}
	ms, msgs, err := tracegen.GenerateBagetSystem(cfgs)
	if err != nil {
		t.Fatal(err)
	}
	db := dbtest.Open(t)
	dir := t.TempDir()
	for i, m := range ms {
		desc := filepath.Join(dir, fmt.Sprintf("node%d.xml", i))
		log := filepath.Join(dir, fmt.Sprintf("node%d.blog", i))
		if err := os.WriteFile(desc, m.Description, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(log, m.Log, 0o644); err != nil {
			t.Fatal(err)
		}
		dbtest.Ingest(t, db, log, ingest.Options{Format: "baget", Tags: [][2]string{{"system", "rig"}}, Params: map[string]string{"description": desc}})
	}
	return db, msgs
}

// truth returns the offset at run time refTS and the drift (ppm) of
// machine i's clock against machine 0's, from the generator's clocks.
func truth(clocks []tracegen.BagetClock, i int, refTS int64) (float64, float64) {
	c, c0 := clocks[i], clocks[0]
	r1, r0 := 1+c.DriftPPM/1e6, 1+c0.DriftPPM/1e6
	// true time where machine i reads refTS, and machine 0's reading then
	tt := float64(tracegen.BagetEpochNS) + (float64(refTS-c.OffsetNS)-float64(tracegen.BagetEpochNS))/r1
	l0 := tt + float64(c0.OffsetNS) + (tt-float64(tracegen.BagetEpochNS))*c0.DriftPPM/1e6
	return l0 - float64(refTS), (r0/r1 - 1) * 1e6
}

// TestSystemClocks: three machines, two of them with clocks off by an
// offset and a drift; the generator's messages are paired across the
// logs, the estimate's bounds hold the truth, and once the clocks are
// stored no message reads received before it was sent, in
// system_messages and in the order of system_timeline.
func TestSystemClocks(t *testing.T) {
	ctx := context.Background()
	clocks := []tracegen.BagetClock{{}, {OffsetNS: -3_000_000, DriftPPM: 40}, {OffsetNS: 250_000_000, DriftPPM: -75.5}}
	// 3000 records 1 ms apart on average: 3 s, 40 ppm is 120 µs.
	db, msgs := ingestSystem(t, clocks, 3000, 2_000_000)
	q := func(s string) string { return dbtest.Query(t, db.SQL(), s) }

	// Every generator message is paired once, at the logs' times.
	if got, want := q(`SELECT count(*), count(*) FILTER (WHERE unambiguous), count(*) FILTER (WHERE transit_ns < 0) > 0 FROM system_messages WHERE system = 'rig'`),
		fmt.Sprintf("%d | %d | true\n", len(msgs), len(msgs)); got != want {
		t.Fatalf("pairs, unambiguous, some early before alignment: %s, want %s", got, want)
	}
	runs, pairs, amb, err := align.Pairs(ctx, db, "rig")
	if err != nil || len(runs) != 3 || len(pairs) != len(msgs) || amb != 0 {
		t.Fatalf("%v: %d runs, %d pairs, %d ambiguous", err, len(runs), len(pairs), amb)
	}
	want := map[[4]int64]bool{}
	for _, m := range msgs {
		want[[4]int64{int64(runs[m.From].ID), int64(runs[m.To].ID), m.SendNS, m.RecvNS}] = true
	}
	for _, p := range pairs {
		if !want[[4]int64{int64(p.From), int64(p.To), p.SendTS, p.RecvTS}] {
			t.Fatalf("pair %+v is no generator message", p)
		}
	}

	got, err := align.System(ctx, db, "rig", align.SystemOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Source != schema.ClockReference || got[0].OffsetNS != 0 {
		t.Errorf("reference %+v", got[0])
	}
	for i := 1; i < 3; i++ {
		c := got[i]
		off, ppm := truth(clocks, i, c.RefTS)
		if c.Source != schema.ClockMessages || c.OffsetLo == nil || c.OffsetHi == nil || c.DriftLo == nil || c.DriftHi == nil {
			t.Fatalf("run %d: %+v (truth %.0f ns, %.3f ppm)", c.RunID, c, off, ppm)
		}
		t.Logf("run %d: offset %d ns in [%d, %d] (truth %.0f), drift %.3f ppm in [%.3f, %.3f] (truth %.3f), %d sent, %d received; %s",
			c.RunID, c.OffsetNS, *c.OffsetLo, *c.OffsetHi, off, c.DriftPPM, *c.DriftLo, *c.DriftHi, ppm, c.Sent, c.Received, c.Note)
		if off < float64(*c.OffsetLo) || off > float64(*c.OffsetHi) || ppm < *c.DriftLo || ppm > *c.DriftHi {
			t.Errorf("run %d: truth %.1f ns, %.4f ppm outside the bounds", c.RunID, off, ppm)
		}
		if math.Abs(float64(c.OffsetNS)-off) > 50_000 || math.Abs(c.DriftPPM-ppm) > 5 {
			t.Errorf("run %d: estimate %d ns, %.3f ppm far from the truth %.0f, %.3f", c.RunID, c.OffsetNS, c.DriftPPM, off, ppm)
		}
	}
	if err := db.SetClocks(ctx, got); err != nil {
		t.Fatal(err)
	}
	back, err := db.Clocks(ctx, "rig")
	if err != nil || len(back) != 3 || back[2].OffsetNS != got[2].OffsetNS || *back[2].DriftHi != *got[2].DriftHi || back[1].Note != got[1].Note {
		t.Fatalf("%v: read back %+v", err, back)
	}
	if got := q(`SELECT count(*) FILTER (WHERE transit_ns < 0), min(transit_ns) > 0 FROM system_messages WHERE system = 'rig'`); got != "0 | true\n" {
		t.Errorf("after alignment: early messages, all positive transit: %s", got)
	}
	// In the timeline's order, every receipt on net comes after its send,
	// and the raw times are those of the logs.
	if got := q(`WITH t AS (SELECT row_number() OVER () AS i, * FROM system_timeline('rig'))
		SELECT count(*), count(*) FILTER (WHERE r.i < s.i), count(*) FILTER (WHERE r.ts_aligned < s.ts_aligned)
		FROM t s JOIN t r ON s.event = 'MQ_SEND' AND r.event = 'MQ_RECEIVE' AND s.object = 'net' AND r.object = 'net'
		 AND (s.args->>'msg_no') = (r.args->>'msg_no') AND s.run_id <> r.run_id`); got != strconv.Itoa(len(msgs))+" | 0 | 0\n" {
		t.Errorf("timeline: messages, received earlier in the order, in aligned time: %s", got)
	}
	if got := q(`SELECT count(*) FILTER (WHERE ts_aligned <> ts), count(*) FILTER (WHERE run_id = 1 AND ts_aligned <> ts) FROM system_events`); got == "0 | 0\n" || got[len(got)-3:] != " 0\n" {
		t.Errorf("aligned differs from raw (all, reference run): %s", got)
	}
}

// TestAlignedSQLMatchesGo: the view's clock_aligned and schema.Clock.Aligned
// agree, halves included.
func TestAlignedSQLMatchesGo(t *testing.T) {
	db := dbtest.Open(t)
	for _, c := range []schema.Clock{{OffsetNS: 7, DriftPPM: 0.5, RefTS: 1000}, {OffsetNS: -12345, DriftPPM: -75.5, RefTS: 1e12}, {OffsetNS: 3, DriftPPM: 1000, RefTS: 0}} {
		for _, ts := range []int64{0, 1, 999, 1000, 2000, 3000, 1e12 + 2e6 + 1, 1e12 - 7e6, 123456789012} {
			var got int64
			if err := db.SQL().QueryRow("SELECT clock_aligned(?::BIGINT, ?::BIGINT, ?::DOUBLE, ?::BIGINT)", ts, c.OffsetNS, c.DriftPPM, c.RefTS).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if want := c.Aligned(ts); got != want {
				t.Errorf("%+v at %d: SQL %d, Go %d", c, ts, got, want)
			}
		}
	}
}

// TestPairsOneWayWithChannel: only one-way messages with a channel and an
// id pair across runs (a round trip's id and a message without a channel
// are numbers of one machine), and an id sent twice is ambiguous: in
// system_messages, not used.
func TestPairsOneWayWithChannel(t *testing.T) {
	ctx := context.Background()
	db := dbtest.Open(t)
	type m struct {
		send, oneWay bool
		channel      string
		id, ts       int64
	}
	run := func(name string, ms []m) {
		_, err := db.Ingest(ctx, schema.RunInfo{Name: name, Source: name, Format: "test", SHA256: name, Tags: [][2]string{{"system", "s"}}}, schema.IngestOptions{}, func(w *schema.RunWriter) error {
			th := w.Object("thread", "t")
			for i, x := range ms {
				ch := schema.NoObject
				if x.channel != "" {
					ch = w.Object("channel", x.channel)
				}
				msg := schema.Msg{OneWay: x.oneWay, Key: schema.MsgKey{A: int64(ch), B: x.id}, ID: x.id, Client: th, Server: schema.NoObject, Channel: ch, TS: x.ts, Seq: schema.Seq(i + 1)}
				var err error
				if x.send {
					err = w.Messages().Send(msg)
				} else {
					msg.Client, msg.Server = schema.NoObject, th
					err = w.Messages().Receive(msg)
				}
				if err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	run("a", []m{{true, true, "q", 1, 100}, {true, false, "", 2, 200}, {true, true, "", 3, 300}, {true, true, "q", 9, 400}, {true, true, "q", 9, 450}})
	run("b", []m{{false, true, "q", 1, 150}, {false, false, "", 2, 250}, {false, true, "", 3, 350}, {false, true, "q", 9, 500}})
	if got := dbtest.Query(t, db.SQL(), `SELECT channel, msg_id, sender_run, receiver_run, send_ts, receive_ts, transit_ns, unambiguous FROM system_messages ORDER BY send_ts`); got !=
		"q | 1 | 1 | 2 | 100 | 150 | 50 | true\nq | 9 | 1 | 2 | 400 | 500 | 100 | false\nq | 9 | 1 | 2 | 450 | 500 | 50 | false\n" {
		t.Errorf("system_messages:\n%s", got)
	}
	_, pairs, amb, err := align.Pairs(ctx, db, "s")
	if err != nil || len(pairs) != 1 || pairs[0] != (align.Pair{From: 1, To: 2, SendTS: 100, RecvTS: 150}) || amb != 2 {
		t.Errorf("%v: %+v, %d ambiguous", err, pairs, amb)
	}
}
