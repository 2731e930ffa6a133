// Package align estimates the clocks of the runs of a system (the logs of
// machines that exchanged messages) from those messages, and stores them
// in the table clocks, which the view system_events applies
// (docs/semantics.md, "Aligned time").
//
// The principle is the one of NTP and of trace-alignment tools: a
// message cannot be received before it was sent. Map a run's time t onto
// the reference clock as
//
//	aligned(t) = t + offset + drift * (t - t0)
//
// Every message the run sent at s (its clock), received at r (the
// reference clock), says aligned(s) <= r: offset + drift*(s-t0) <= r - s,
// an upper bound. Every message it received at r (its clock), sent at s
// (the reference clock), says aligned(r) >= s: offset + drift*(r-t0) >=
// s - r, a lower bound. The (offset, drift) pairs that satisfy them all
// form a convex polygon (the convex-hull method of trace alignment:
// the lines that pass above the hull of the lower points and below the
// hull of the upper points).
//
//   - Messages both ways: the polygon is bounded (when the messages are
//     spread in time). The estimate is the middle: the drift halfway
//     between the smallest and the largest the polygon allows, and at
//     that drift the offset halfway between its bounds; the bounds of each
//     are the polygon's extent. Without drift (Options.NoDrift, or a drift
//     the messages do not bound within ±1000 ppm) the offset is bounded
//     by [max lower, min upper], the classic two-way bound, and the
//     estimate is its middle.
//   - Messages one way only: one side only. The offset is the bound itself
//     (the smallest correction that makes every message received after
//     it was sent: a message of the smallest transit time then reads
//     received at the instant it was sent), and the other side is
//     unbounded; drift is not estimated.
//   - No line satisfies every message (clocks that jump, messages paired
//     wrongly): the estimate is the line that violates them least, and the
//     note says by how much.
package align

import (
	"fmt"
	"math"

	"github.com/traceduck/traceduck/schema"
)

// Msg is a message between the run being aligned and a run already
// aligned: RunTS is the run's time of its end of it (the send when Sent,
// else the receipt), PeerTS the other end's time on the reference clock.
type Msg struct {
	RunTS, PeerTS int64
	Sent          bool // the run sent it (else it received it)
}

// Estimate is the clock of one run: aligned(t) = t + OffsetNS +
// DriftPPM/1e6 * (t - RefTS). Bounds are nil where the messages give
// none.
type Estimate struct {
	OffsetNS           int64
	DriftPPM           float64
	RefTS              int64
	OffsetLo, OffsetHi *int64
	DriftLo, DriftHi   *float64
	Sent, Received     int64
	Early              int64  // messages that read received before they were sent once it is applied
	Consistent         bool   // a line satisfies every message
	Note               string // what it rests on, in words
}

// maxDrift is the drift searched, ±1000 ppm (schema.MaxDriftPPM).
const maxDrift = 1e-3

// Options changes what is estimated.
type Options struct {
	NoDrift bool // estimate the offset only
}

// Fit estimates a run's clock from its messages with aligned runs; with
// none, the zero Estimate (Consistent, no bounds). Early counts the
// messages that still read received before they were sent once the
// estimate is applied (schema.Clock.Aligned).
func Fit(msgs []Msg, opt Options) Estimate {
	e := fit(msgs, opt)
	c := schema.Clock{OffsetNS: e.OffsetNS, DriftPPM: e.DriftPPM, RefTS: e.RefTS}
	for _, m := range msgs {
		a := c.Aligned(m.RunTS)
		if (m.Sent && a > m.PeerTS) || (!m.Sent && a < m.PeerTS) {
			e.Early++
		}
	}
	return e
}

func fit(msgs []Msg, opt Options) Estimate {
	var e Estimate
	e.Consistent = true
	if len(msgs) == 0 {
		e.Note = "no message with an aligned run"
		return e
	}
	// Integer bounds without drift, and t0 in the middle of the messages.
	const none = math.MinInt64
	lo, hi := int64(none), int64(math.MaxInt64)
	tmin, tmax := msgs[0].RunTS, msgs[0].RunTS
	for _, m := range msgs {
		y := m.PeerTS - m.RunTS
		if m.Sent {
			e.Sent++
			hi = min(hi, y)
		} else {
			e.Received++
			lo = max(lo, y)
		}
		tmin, tmax = min(tmin, m.RunTS), max(tmax, m.RunTS)
	}
	e.RefTS = tmin + (tmax-tmin)/2
	switch {
	case e.Sent == 0:
		e.OffsetNS, e.OffsetLo = lo, ptr(lo)
		e.Note = fmt.Sprintf("one-sided: the run only received (%d messages): the offset is its lower bound, the smallest that has every message received after it was sent; the true one is larger by at least the smallest transit time; drift not estimated", e.Received)
		return e
	case e.Received == 0:
		e.OffsetNS, e.OffsetHi = hi, ptr(hi)
		e.Note = fmt.Sprintf("one-sided: the run only sent (%d messages): the offset is its upper bound, the largest that has every message received after it was sent; the true one is smaller by at least the smallest transit time; drift not estimated", e.Sent)
		return e
	}
	if !opt.NoDrift {
		if d, ok := fitDrift(msgs, e.RefTS, lo); ok {
			d.Sent, d.Received = e.Sent, e.Received
			return d
		}
	}
	e.OffsetLo, e.OffsetHi = ptr(lo), ptr(hi)
	e.OffsetNS = lo + (hi-lo)/2 // lo <= hi: no overflow in hi - lo for times of one machine's range
	if lo > hi {
		e.Consistent = false
		e.OffsetLo, e.OffsetHi = nil, nil
		e.Note = fmt.Sprintf("inconsistent: no offset has every message received after it was sent (the bounds cross by %d ns): the middle is taken, some messages still read received before they were sent", lo-hi)
		return e
	}
	why := "drift not estimated (--no-drift)"
	if !opt.NoDrift {
		why = fmt.Sprintf("no line fits the messages with a drift within ±%d ppm: drift not estimated", int(maxDrift*1e6))
	}
	e.Note = fmt.Sprintf("two-way bound: %d sent, %d received; %s", e.Sent, e.Received, why)
	return e
}

// fitDrift fits offset and drift over the polygon of the lines allowed by
// the messages (see the package comment). x = RunTS - t0, y = PeerTS -
// RunTS - base (floats of small numbers: base is the integer lower bound).
// It reports false when the drift is not bounded within ±maxDrift.
func fitDrift(msgs []Msg, t0, base int64) (Estimate, bool) {
	type pt struct{ x, y float64 }
	var lower, upper []pt
	for _, m := range msgs {
		p := pt{float64(m.RunTS - t0), float64(m.PeerTS - m.RunTS - base)}
		if m.Sent {
			upper = append(upper, p)
		} else {
			lower = append(lower, p)
		}
	}
	// The offsets a drift d allows: [low(d), up(d)]; low is convex, up
	// concave, so gap = up - low is concave.
	low := func(d float64) float64 {
		v := math.Inf(-1)
		for _, p := range lower {
			v = max(v, p.y-d*p.x)
		}
		return v
	}
	up := func(d float64) float64 {
		v := math.Inf(1)
		for _, p := range upper {
			v = min(v, p.y-d*p.x)
		}
		return v
	}
	gap := func(d float64) float64 { return up(d) - low(d) }
	// Times are whole ns: a line that misses by less than tol is on it.
	const tol = 1e-6
	feasible := func(d float64) bool { return gap(d) >= -tol }
	dbest := argmax(gap, -maxDrift, maxDrift)
	if g := gap(dbest); g < -tol {
		// No line fits: the one that violates the messages least, if its
		// drift is inside the bounds searched.
		if math.Abs(dbest) > maxDrift*(1-1e-9) {
			return Estimate{}, false
		}
		e := Estimate{DriftPPM: dbest * 1e6, RefTS: t0}
		e.OffsetNS = base + int64(math.Round((low(dbest)+up(dbest))/2))
		e.Note = fmt.Sprintf("inconsistent: no line (offset and drift) has every message received after it was sent; the one that comes closest leaves some %.0f ns early", math.Ceil(-g/2))
		return e, true
	}
	// The feasible drifts are an interval around dbest; search its ends
	// from outside (a bound is on the infeasible side: conservative).
	edge := func(in, out float64) float64 {
		for i := 0; i < 200; i++ {
			m := (in + out) / 2
			if feasible(m) {
				in = m
			} else {
				out = m
			}
		}
		return out
	}
	dlo, dhi := edge(dbest, -maxDrift), edge(dbest, maxDrift)
	capped := feasible(-maxDrift) || feasible(maxDrift)
	d := (dlo + dhi) / 2
	if capped {
		// The messages do not bound the drift (too short a trace for
		// the transit times): assume none, or the least the messages
		// allow; the bounds hold for any drift within ±maxDrift.
		d = min(max(0, dlo), dhi)
	}
	if !feasible(d) { // rounding: the middle of a tiny interval
		d = dbest
	}
	e := Estimate{DriftPPM: d * 1e6, RefTS: t0, Consistent: true}
	off := base + int64(math.Round((low(d)+up(d))/2))
	e.OffsetNS = off
	// The offset's extent over the polygon: low's minimum and up's
	// maximum over the feasible drifts, rounded outwards.
	olo := low(argmax(func(x float64) float64 { return -low(x) }, dlo, dhi))
	ohi := up(argmax(up, dlo, dhi))
	e.OffsetLo, e.OffsetHi = ptr(base+int64(math.Floor(olo))), ptr(base+int64(math.Ceil(ohi)))
	if *e.OffsetLo > off {
		*e.OffsetLo = off
	}
	if *e.OffsetHi < off {
		*e.OffsetHi = off
	}
	e.DriftLo, e.DriftHi = ptr(dlo*1e6), ptr(dhi*1e6)
	e.Note = fmt.Sprintf("two-way bound with drift (the convex-hull method): %d sent, %d received", len(upper), len(lower))
	if capped {
		e.Note = fmt.Sprintf("two-way bound: %d sent, %d received; the messages do not bound the drift (the trace is short for their transit times): drift %s, bounds for any drift within ±%d ppm",
			len(upper), len(lower), map[bool]string{true: "assumed 0", false: "the smallest the messages allow"}[d == 0], int(maxDrift*1e6))
	}
	return e, true
}

// argmax returns where a concave function is largest on [a, b] (ternary
// search; on a plateau, a point of it).
func argmax(f func(float64) float64, a, b float64) float64 {
	for i := 0; i < 200 && b-a > 1e-15; i++ {
		m1, m2 := a+(b-a)/3, b-(b-a)/3
		if f(m1) < f(m2) {
			a = m1
		} else {
			b = m2
		}
	}
	return (a + b) / 2
}

func ptr[T any](v T) *T { return &v }
