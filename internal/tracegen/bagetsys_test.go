package tracegen

import (
	"bytes"
	"reflect"
	"testing"
)

func TestBagetSystem(t *testing.T) {
	cfgs := func() []BagetConfig {
		return []BagetConfig{{Events: 3000, CPUs: 2, Seed: 1, ABI: "le32"}, {Events: 2000, CPUs: 3, Seed: 2, ABI: "be64"}, {Events: 1000, CPUs: 1, Seed: 3, ABI: "be64"}}
	}
	ms, msgs, err := GenerateBagetSystem(cfgs())
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 3 || len(msgs) < 50 {
		t.Fatalf("%d machines, %d messages", len(ms), len(msgs))
	}
	sent := make([]int, 3)
	recv := make([]int, 3)
	for i, m := range msgs {
		if m.ID != netMsgBase+int64(i+1) || m.From == m.To || m.RecvNS <= m.SendNS || m.RecvNS-m.SendNS < 5000 ||
			m.TrueSendNS != m.SendNS || m.TrueRecvNS != m.RecvNS {
			t.Fatalf("message %+v", m)
		}
		sent[m.From]++
		recv[m.To]++
	}
	for i, m := range ms {
		if m.Truth.Events < cfgs()[i].Events {
			t.Errorf("machine %d: %d events, want at least %d", i, m.Truth.Events, cfgs()[i].Events)
		}
		// Every send is an MQ_SEND on "net" never received in the log,
		// every receipt an MQ_RECEIVE whose send is not in it.
		n := 0
		for eco, c := range m.Truth.Ecos {
			if (eco.Event == "MQ_SEND" || eco.Event == "MQ_RECEIVE") && eco.Main == (BagetObj{Kind: "mqueue", Pid: 1, OID: 3}) {
				n += c
			}
		}
		if n != sent[i]+recv[i] {
			t.Errorf("machine %d: %d net events, want %d sent + %d received", i, n, sent[i], recv[i])
		}
		open, nosend := 0, 0
		for _, q := range m.Truth.MsgOpen {
			if q.QueueName == NetQueue {
				open++
			}
		}
		for _, q := range m.Truth.MsgNoSend {
			if q.QueueName != NetQueue {
				t.Errorf("machine %d: a local message received without its send: %+v", i, q)
			}
			nosend++
		}
		if open != sent[i] || nosend != recv[i] {
			t.Errorf("machine %d: %d open sends on net, %d receipts without send, want %d, %d", i, open, nosend, sent[i], recv[i])
		}
		// One clock: every machine starts at the same time.
		if i > 0 && m.Truth.FirstNS/1e9 != ms[0].Truth.FirstNS/1e9 {
			t.Errorf("machine %d starts at %d, machine 0 at %d", i, m.Truth.FirstNS, ms[0].Truth.FirstNS)
		}
	}
	ms2, msgs2, err := GenerateBagetSystem(cfgs())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(msgs, msgs2) || !bytes.Equal(ms[1].Log, ms2[1].Log) {
		t.Error("two runs of one system differ")
	}
	for _, bad := range [][]BagetConfig{
		{{Events: 10}, {Events: 10, Clock: BagetClock{DriftPPM: 1001}}},
		{{Events: 10}},
		{{Events: 10}, {Events: 10, RingBlocks: 3}},
		{{Events: 10}, {Events: 0}},
		{{Events: 10}, {Events: 10, ABI: "x"}},
	} {
		if _, _, err := GenerateBagetSystem(bad); err == nil {
			t.Errorf("GenerateBagetSystem(%+v): no error", bad)
		}
	}
}

// TestBagetSystemClocks: machines whose clocks disagree write the times
// their clocks read; the messages' true times are the same as on
// synchronized clocks, and each log's times are Local of them.
func TestBagetSystemClocks(t *testing.T) {
	cfgs := func(c1, c2 BagetClock) []BagetConfig {
		return []BagetConfig{{Events: 2000, Seed: 1}, {Events: 2000, Seed: 2, Clock: c1}, {Events: 1500, Seed: 3, Clock: c2}}
	}
	c1 := BagetClock{OffsetNS: -3_000_000, DriftPPM: 40}
	c2 := BagetClock{OffsetNS: 250_000_000, DriftPPM: -75.5}
	_, sync, err := GenerateBagetSystem(cfgs(BagetClock{}, BagetClock{}))
	if err != nil {
		t.Fatal(err)
	}
	ms, msgs, err := GenerateBagetSystem(cfgs(c1, c2))
	if err != nil {
		t.Fatal(err)
	}
	clocks := []BagetClock{{}, c1, c2}
	if len(msgs) != len(sync) || len(msgs) < 50 {
		t.Fatalf("%d messages, %d on synchronized clocks", len(msgs), len(sync))
	}
	late := 0
	for i, m := range msgs {
		s := sync[i]
		if m.TrueSendNS != s.TrueSendNS || m.TrueRecvNS != s.TrueRecvNS || m.From != s.From || m.To != s.To {
			t.Fatalf("message %+v, on synchronized clocks %+v", m, s)
		}
		if m.SendNS != clocks[m.From].Local(m.TrueSendNS) || m.RecvNS != clocks[m.To].Local(m.TrueRecvNS) {
			t.Fatalf("message %+v: log times are not the clocks' readings", m)
		}
		if m.RecvNS < m.SendNS {
			late++
		}
	}
	// Machine 1 is 3 ms behind: what it receives from machine 0 reads
	// received before it was sent.
	if late == 0 {
		t.Error("no message reads received before it was sent")
	}
	if got := ms[2].Truth.FirstNS - ms[0].Truth.FirstNS; got < 249_000_000 || got > 251_000_000 {
		t.Errorf("machine 2 starts %d ns after machine 0, want about 250 ms", got)
	}
	for _, c := range clocks {
		for _, tt := range []int64{BagetEpochNS, BagetEpochNS + 123456789, BagetEpochNS + 7e9} {
			if got := c.True(c.Local(tt)); got != tt {
				t.Errorf("%+v: True(Local(%d)) = %d", c, tt, got)
			}
		}
	}
}
