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
		if m.ID != int64(i+1) || m.From == m.To || m.RecvNS <= m.SendNS || m.RecvNS-m.SendNS < 5000 {
			t.Fatalf("message %+v", m)
		}
		sent[m.From]++
		recv[m.To]++
	}
	for i, m := range ms {
		if m.Truth.Events < cfgs()[i].Events {
			t.Errorf("machine %d: %d events, want at least %d", i, m.Truth.Events, cfgs()[i].Events)
		}
		// Every send and every receive is a USER_EVENT on "net" of pid 0.
		n := 0
		for eco, c := range m.Truth.Ecos {
			if eco.Event == "USER_EVENT" && eco.Main == netObj {
				n += c
			}
		}
		if n != sent[i]+recv[i] {
			t.Errorf("machine %d: %d net events, want %d sent + %d received", i, n, sent[i], recv[i])
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
