package align

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/traceduck/traceduck/schema"
)

// UserClock is a clock the user gives for a run (traceduck align --set):
// OffsetNS to add to its times at its first event, DriftPPM from there.
type UserClock struct {
	OffsetNS int64
	DriftPPM float64
}

// SystemOptions says how to align the runs of a system.
type SystemOptions struct {
	Options
	// Reference is the run (name or id) whose clock the others are
	// aligned to; empty: the system's first run (smallest run_id).
	Reference string
	// Set gives the clocks of some runs (by name or id), relative to the
	// reference: they are not estimated.
	Set map[string]UserClock
}

// Run is a run of a system.
type Run struct {
	ID      int32
	Name    string
	FirstTS int64
}

// Pair is a message one run sent and another received, paired across
// the runs of a system.
type Pair struct {
	From, To       int32 // run ids
	SendTS, RecvTS int64 // each on its own run's clock
}

// pairsQuery reads the messages paired across the runs of a system (the
// view system_messages), the unambiguous ones, then the count of the
// ambiguous ones (in every row).
const pairsQuery = `
SELECT sender_run, receiver_run, send_ts, receive_ts,
       (SELECT count(*) FROM system_messages WHERE system = $1 AND NOT unambiguous)
FROM system_messages WHERE system = $1 AND unambiguous ORDER BY send_ts, sender_run, receiver_run`

// Pairs returns the runs of a system (by run_id) and the messages paired
// across them (system_messages), with the count of pairs left out as
// ambiguous (a channel and msg_id sent or received more than once).
func Pairs(ctx context.Context, db *schema.DB, system string) ([]Run, []Pair, int64, error) {
	rows, err := db.SQL().QueryContext(ctx, `SELECT run_id, name, coalesce(first_ts, 0) FROM runs WHERE tags->>'system' = ? ORDER BY run_id`, system)
	if err != nil {
		return nil, nil, 0, err
	}
	var runs []Run
	for rows.Next() {
		var r Run
		if err := rows.Scan(&r.ID, &r.Name, &r.FirstTS); err != nil {
			rows.Close()
			return nil, nil, 0, err
		}
		runs = append(runs, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, nil, 0, err
	}
	if len(runs) == 0 {
		return nil, nil, 0, fmt.Errorf("no run is tagged system=%s (traceduck ingest --system %s ...)", system, system)
	}
	rows, err = db.SQL().QueryContext(ctx, pairsQuery, system)
	if err != nil {
		return nil, nil, 0, err
	}
	defer rows.Close()
	var pairs []Pair
	var ambiguous int64
	for rows.Next() {
		var p Pair
		if err := rows.Scan(&p.From, &p.To, &p.SendTS, &p.RecvTS, &ambiguous); err != nil {
			return nil, nil, 0, err
		}
		pairs = append(pairs, p)
	}
	return runs, pairs, ambiguous, rows.Err()
}

// System estimates the clocks of every run of a system and returns them
// (one per run, by run_id), to be stored with DB.SetClocks.
//
// The reference run and the runs the user set are aligned first ("known"
// runs). Then, one at a time, the run that exchanged the most messages
// with the aligned runs is aligned: from its messages with the known runs
// when they go both ways (so that its bounds rest on no estimate), else
// from its messages with every aligned run, their times mapped by their
// clocks (its bounds then take those clocks as exact; the note says
// so). A run with no message to an aligned run keeps offset 0 (source
// none).
func System(ctx context.Context, db *schema.DB, system string, opt SystemOptions) ([]schema.Clock, error) {
	runs, pairs, ambiguous, err := Pairs(ctx, db, system)
	if err != nil {
		return nil, err
	}
	byKey := func(key string) (int, error) {
		for i, r := range runs {
			if r.Name == key || strconv.Itoa(int(r.ID)) == key {
				return i, nil
			}
		}
		var names []string
		for _, r := range runs {
			names = append(names, r.Name)
		}
		return 0, fmt.Errorf("system %s has no run %q (its runs: %s)", system, key, strings.Join(names, ", "))
	}
	ref := 0
	if opt.Reference != "" {
		if ref, err = byKey(opt.Reference); err != nil {
			return nil, err
		}
	}
	clocks := make([]*schema.Clock, len(runs))
	known := make([]bool, len(runs))
	refID := runs[ref].ID
	clocks[ref] = &schema.Clock{RunID: refID, RefTS: runs[ref].FirstTS, Source: schema.ClockReference}
	known[ref] = true
	keys := make([]string, 0, len(opt.Set))
	for k := range opt.Set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		i, err := byKey(k)
		if err != nil {
			return nil, err
		}
		if i == ref {
			return nil, fmt.Errorf("run %s is the reference: its clock is the one the others are aligned to", runs[i].Name)
		}
		u := opt.Set[k]
		clocks[i] = &schema.Clock{RunID: runs[i].ID, OffsetNS: u.OffsetNS, DriftPPM: u.DriftPPM,
			RefTS: runs[i].FirstTS, Source: schema.ClockUser, Note: "given by the user"}
		known[i] = true
	}
	index := map[int32]int{}
	for i, r := range runs {
		index[r.ID] = i
	}
	// msgsOf returns run i's messages with the runs that pass ok, the
	// other end's time on the reference clock.
	msgsOf := func(i int, ok func(int) bool) []Msg {
		var out []Msg
		id := runs[i].ID
		for _, p := range pairs {
			switch {
			case p.From == id && ok(index[p.To]):
				out = append(out, Msg{RunTS: p.SendTS, PeerTS: clocks[index[p.To]].Aligned(p.RecvTS), Sent: true})
			case p.To == id && ok(index[p.From]):
				out = append(out, Msg{RunTS: p.RecvTS, PeerTS: clocks[index[p.From]].Aligned(p.SendTS)})
			}
		}
		return out
	}
	aligned := func(j int) bool { return clocks[j] != nil }
	for {
		best, bestN := -1, 0
		for i := range runs {
			if clocks[i] == nil {
				if n := len(msgsOf(i, aligned)); best < 0 || n > bestN {
					best, bestN = i, n
				}
			}
		}
		if best < 0 {
			break
		}
		msgs := msgsOf(best, func(j int) bool { return known[j] })
		via := ""
		if !twoWay(msgs) {
			msgs = msgsOf(best, aligned)
			var names []string
			for j := range runs {
				if aligned(j) && !known[j] {
					names = append(names, runs[j].Name)
				}
			}
			if len(names) > 0 {
				via = "; through the estimated clocks of " + strings.Join(names, ", ") + " (its bounds take them as exact)"
			}
		}
		e := Fit(msgs, opt.Options)
		c := &schema.Clock{RunID: runs[best].ID, OffsetNS: e.OffsetNS, DriftPPM: e.DriftPPM, RefTS: e.RefTS,
			OffsetLo: e.OffsetLo, OffsetHi: e.OffsetHi, DriftLo: e.DriftLo, DriftHi: e.DriftHi,
			Source: schema.ClockMessages, Sent: e.Sent, Received: e.Received, Note: e.Note + via}
		if len(msgs) == 0 {
			c.Source, c.RefTS = schema.ClockNone, runs[best].FirstTS
			c.Note = "no message with an aligned run: offset 0 assumed"
		}
		if e.Early > 0 {
			c.Note += fmt.Sprintf("; %d messages still read received before they were sent", e.Early)
		}
		clocks[best] = c
	}
	out := make([]schema.Clock, len(runs))
	for i, c := range clocks {
		out[i] = *c
		if ambiguous > 0 && c.Source == schema.ClockMessages {
			out[i].Note += fmt.Sprintf("; %d pairings of the system left out as ambiguous (a channel and msg_id sent or received more than once)", ambiguous)
		}
	}
	return out, nil
}

func twoWay(msgs []Msg) bool {
	var in, out bool
	for _, m := range msgs {
		if m.Sent {
			out = true
		} else {
			in = true
		}
	}
	return in && out
}
