package align

import (
	"math"
	"math/rand"
	"testing"
)

// TestFitExactTwoWay: one message each way, both of zero transit time on
// the true clocks, pin the offset: the run received at 50 what the
// reference sent at 100, and sent at 60 what the reference received at
// 110; the offset is 50, bounded on both sides by 50.
func TestFitExactTwoWay(t *testing.T) {
	msgs := []Msg{{RunTS: 50, PeerTS: 100}, {RunTS: 60, PeerTS: 110, Sent: true}}
	e := Fit(msgs, Options{NoDrift: true})
	if e.OffsetNS != 50 || e.OffsetLo == nil || *e.OffsetLo != 50 || e.OffsetHi == nil || *e.OffsetHi != 50 ||
		e.DriftPPM != 0 || e.DriftLo != nil || !e.Consistent || e.Early != 0 || e.Sent != 1 || e.Received != 1 {
		t.Errorf("no drift: %+v", e)
	}
	// With drift: the receipt 5 ns before t0 and the send 5 ns after it
	// allow no faster reference clock (drift <= 0, to the 1e-6 ns the
	// search allows: 0.1 ppm over 10 ns) and do not bound a slower one:
	// drift 0 is assumed, and the offset's bounds widen by what 1000 ppm
	// moves 5 ns.
	e = Fit(msgs, Options{})
	if e.OffsetNS != 50 || *e.OffsetLo != 49 || *e.OffsetHi != 51 || e.DriftPPM != 0 || *e.DriftLo != -1000 || *e.DriftHi < 0 || *e.DriftHi > 0.2 || e.Early != 0 {
		t.Errorf("drift: %+v %d %d %g %g", e, *e.OffsetLo, *e.OffsetHi, *e.DriftLo, *e.DriftHi)
	}
	// A wider gap: the middle of [lower, upper] = [40, 70].
	e = Fit([]Msg{{RunTS: 50, PeerTS: 90}, {RunTS: 60, PeerTS: 130, Sent: true}}, Options{NoDrift: true})
	if e.OffsetNS != 55 || *e.OffsetLo != 40 || *e.OffsetHi != 70 {
		t.Errorf("gap: %+v", e)
	}
}

// TestFitExactDrift: four messages of zero transit time on a clock 1000
// ns behind at t0 = 5 s that runs 50 ppm slow, received at t0 ± 1 ms and
// sent at t0 ± 0.5 ms: only that line passes above the receipts and below
// the sends, so offset and drift are exact and their bounds collapse.
func TestFitExactDrift(t *testing.T) {
	const t0, off, ppm = 5_000_000_000, 1000, 50.0
	line := func(x int64) int64 { return t0 + x + off + int64(ppm*float64(x)/1e6) }
	msgs := []Msg{
		{RunTS: t0 - 1_000_000, PeerTS: line(-1_000_000)},
		{RunTS: t0 + 1_000_000, PeerTS: line(1_000_000)},
		{RunTS: t0 - 500_000, PeerTS: line(-500_000), Sent: true},
		{RunTS: t0 + 500_000, PeerTS: line(500_000), Sent: true},
	}
	e := Fit(msgs, Options{})
	if e.RefTS != t0 || e.OffsetNS != off || math.Abs(e.DriftPPM-ppm) > 1e-6 || !e.Consistent || e.Early != 0 {
		t.Fatalf("%+v", e)
	}
	if *e.OffsetLo < off-1 || *e.OffsetHi > off+1 || math.Abs(*e.DriftLo-ppm) > 1e-5 || math.Abs(*e.DriftHi-ppm) > 1e-5 {
		t.Errorf("bounds %d..%d ns, %g..%g ppm, want %d, %g", *e.OffsetLo, *e.OffsetHi, *e.DriftLo, *e.DriftHi, off, ppm)
	}
	// Without drift the same messages cross: no offset fits them.
	if e := Fit(msgs, Options{NoDrift: true}); e.Consistent || e.Early == 0 {
		t.Errorf("no drift: %+v", e)
	}
}

// TestFitOneSided: messages one way give one bound, which is the
// estimate; drift is not estimated.
func TestFitOneSided(t *testing.T) {
	in := []Msg{{RunTS: 100, PeerTS: 400}, {RunTS: 200, PeerTS: 450}, {RunTS: 300, PeerTS: 320}}
	e := Fit(in, Options{})
	if e.OffsetNS != 300 || *e.OffsetLo != 300 || e.OffsetHi != nil || e.DriftPPM != 0 || e.DriftLo != nil || e.Early != 0 || e.Received != 3 {
		t.Errorf("received only: %+v", e)
	}
	out := []Msg{{RunTS: 100, PeerTS: 400, Sent: true}, {RunTS: 200, PeerTS: 450, Sent: true}}
	e = Fit(out, Options{})
	if e.OffsetNS != 250 || e.OffsetLo != nil || *e.OffsetHi != 250 || e.Early != 0 || e.Sent != 2 {
		t.Errorf("sent only: %+v", e)
	}
	if e := Fit(nil, Options{}); e.OffsetNS != 0 || e.OffsetLo != nil || e.OffsetHi != nil || !e.Consistent {
		t.Errorf("none: %+v", e)
	}
}

// TestFitRandomTruth: clocks of random offset and drift, messages both
// ways with transit times of 5..50 µs over 10 s: the bounds hold the
// truth and no message reads received before it was sent.
func TestFitRandomTruth(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for k := 0; k < 50; k++ {
		off := rng.Int63n(2e12) - 1e12
		ppm := (rng.Float64()*2 - 1) * 200
		// the run's clock reads true time t as t - off0 - ppm*t/1e6 (about);
		// the reference reads it as t.
		runClock := func(tt int64) int64 { return tt - off - int64(ppm*float64(tt)/1e6) }
		var msgs []Msg
		for i := 0; i < 20+rng.Intn(200); i++ {
			tt := 1e9 + rng.Int63n(10e9)
			lat := 5000 + rng.Int63n(45000)
			if rng.Intn(2) == 0 {
				msgs = append(msgs, Msg{RunTS: runClock(tt), PeerTS: tt + lat, Sent: true})
			} else {
				msgs = append(msgs, Msg{RunTS: runClock(tt + lat), PeerTS: tt})
			}
		}
		e := Fit(msgs, Options{})
		if e.Early != 0 || !e.Consistent || e.DriftLo == nil {
			t.Fatalf("case %d: %+v", k, e)
		}
		// The truth at RefTS: the true time at which the run's clock reads
		// RefTS, minus RefTS; its drift: d(true)/d(run) - 1.
		trueAt := func(l int64) float64 { return float64(l+off) / (1 - ppm/1e6) }
		tOff := trueAt(e.RefTS) - float64(e.RefTS)
		tDrift := (1/(1-ppm/1e6) - 1) * 1e6
		if tOff < float64(*e.OffsetLo)-1 || tOff > float64(*e.OffsetHi)+1 || tDrift < *e.DriftLo-1e-6 || tDrift > *e.DriftHi+1e-6 {
			t.Errorf("case %d: truth %.1f ns %.6f ppm outside %d..%d ns, %.6f..%.6f ppm", k, tOff, tDrift, *e.OffsetLo, *e.OffsetHi, *e.DriftLo, *e.DriftHi)
		}
	}
}
