package report

import (
	"math"
	"sort"
)

// The largest changes from the baseline, as the Markdown summary and the
// HTML page list them: the (metric, key) pairs that changed the most,
// and apart from them the pairs that fell to 0 or have no value in a
// compared run. A fall to 0 is -100% whatever it was, and a value that is
// not there has no change at all: ranked with the changes, the first
// would come before every real change, the second never.

// change is a (metric, key) pair of the lists.
type change struct {
	metric, key string
	score       float64 // the largest |change_pct| in any compared run, falls to 0 left out
	crossed     bool    // a threshold crossed in some run
	dropped     bool    // fell to 0 or has no value (no samples) in some compared run
}

// droppedToZero tells whether v fell to 0 from a baseline that was not.
func droppedToZero(v Value) bool {
	return v.Baseline != nil && *v.Baseline != 0 && v.Value == 0
}

// rankedPct is the relative change by which a value ranks among the
// changes: none for a value not compared, from a baseline of 0, or that
// fell to 0.
func rankedPct(v Value) (float64, bool) {
	if v.ChangePct == nil || droppedToZero(v) {
		return 0, false
	}
	return math.Abs(*v.ChangePct), true
}

// largestChanges returns the pairs that changed the most, at most n:
// those with a crossed threshold first, then by their largest relative
// change in any compared run (falls to 0 left out); pairs that changed
// in no run (or only by a fall to 0), and pairs that dropped without
// crossing a threshold, are left out. dropped returns those, at most n:
// the pairs the baseline has that fell to 0 or have no value in a
// compared run, in the values' order (metric as defined, then key), and
// how many more there are.
func (r *Report) largestChanges(n int) (changes, dropped []change, moreDropped int) {
	base := r.baselineRun()
	var compared []int32
	for _, run := range r.Runs {
		if run.Compared {
			compared = append(compared, run.ID)
		}
	}
	var all []*change
	for _, bv := range r.Values {
		if base == nil || bv.RunID != base.ID {
			continue
		}
		c := &change{metric: bv.Metric, key: bv.Key}
		for _, id := range compared {
			v, ok := r.Value(bv.Metric, bv.Key, id)
			if !ok || droppedToZero(v) {
				c.dropped = true
			}
			if !ok {
				continue
			}
			if pct, ok := rankedPct(v); ok {
				c.score = math.Max(c.score, pct)
			}
			if len(r.crossingsOf(v.Metric, v.Key, v.RunID)) > 0 {
				c.crossed = true
			}
		}
		all = append(all, c)
	}
	for _, c := range all {
		if c.dropped && !c.crossed {
			if len(dropped) < n {
				dropped = append(dropped, *c)
			} else {
				moreDropped++
			}
		}
	}
	sort.SliceStable(all, func(i, j int) bool {
		if all[i].crossed != all[j].crossed {
			return all[i].crossed
		}
		return all[i].score > all[j].score
	})
	for _, c := range all {
		if len(changes) == n || (c.score == 0 && !c.crossed) {
			break
		}
		if c.dropped && !c.crossed {
			continue
		}
		changes = append(changes, *c)
	}
	return changes, dropped, moreDropped
}

// droppedNote explains the list of the pairs that dropped.
const droppedNote = "A value that fell to 0 (-100%, whatever it was), or that a run no longer has " +
	"(no samples in this run: the metric found nothing to measure for the key, such as a task " +
	"without a complete instance), is listed here apart from the changes: " +
	"it tells that something stopped, not how much it changed."

// noSamples is the cell of a value the baseline has and a compared run
// has not.
const noSamples = "no samples"
