package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

// windowFlags are --from, --to and --relative, the time window [from, to)
// of an analysis: events at from <= ts < to; intervals clipped to the
// window, counting the part inside (the macros' t_from, t_to and
// relative arguments, queries/state_aggregation.sql). Times are ns on
// the trace's time base, or numbers with a unit (1.5ms, 250us); with
// --relative, from each run's first event.
type windowFlags struct {
	from, to string
	relative bool
	lo, hi   *int64 // parsed; nil: no bound
}

// addWindowFlags adds the flags; what says what the window keeps.
func addWindowFlags(cmd *cobra.Command, w *windowFlags, what string) {
	cmd.Flags().StringVar(&w.from, "from", "", what+" from this time on (ns on the trace's time base, or with a unit: 1.5ms, 250us)")
	cmd.Flags().StringVar(&w.to, "to", "", what+" before this time")
	cmd.Flags().BoolVar(&w.relative, "relative", false, "--from and --to count from each run's first event")
}

// parse reads --from and --to: a usage error when one is not a time, or
// the window is empty.
func (w *windowFlags) parse() error {
	for _, f := range []struct {
		name, value string
		p           **int64
	}{{"from", w.from, &w.lo}, {"to", w.to, &w.hi}} {
		if f.value == "" {
			continue
		}
		ns, err := parseEventsTime(f.value)
		if err != nil {
			return usagef("--%s %s: %v", f.name, f.value, err)
		}
		*f.p = &ns
	}
	if w.lo != nil && w.hi != nil && *w.lo >= *w.hi {
		return usagef("--from %s --to %s: the window is empty (want from < to)", w.from, w.to)
	}
	if w.relative && w.lo == nil && w.hi == nil {
		return usagef("--relative: give --from or --to")
	}
	return nil
}

// set reports whether a window was given.
func (w *windowFlags) set() bool { return w.lo != nil || w.hi != nil }

// macroArgs are the named arguments of the window for the macros that
// take one (state_stats_of, state_trace, eco_tree, ...): "" without a
// window, else ", t_from := ..., t_to := ..., relative := ...".
func (w *windowFlags) macroArgs() string {
	if !w.set() {
		return ""
	}
	bound := func(p *int64) string {
		if p == nil {
			return "NULL"
		}
		return fmt.Sprint(*p)
	}
	return fmt.Sprintf(", t_from := %s, t_to := %s, relative := %t", bound(w.lo), bound(w.hi), w.relative)
}

// eventsWhere is the condition that keeps the events in the window, on
// the time column ts; first is the run's first event's time (a column of
// runs the caller joins), read with --relative only. "" without a window.
func (w *windowFlags) eventsWhere(ts, first string) string {
	if !w.set() {
		return ""
	}
	origin := ""
	if w.relative {
		origin = " + coalesce(" + first + ", 0)"
	}
	cond := ""
	if w.lo != nil {
		cond = fmt.Sprintf("%s >= %d%s", ts, *w.lo, origin)
	}
	if w.hi != nil {
		if cond != "" {
			cond += " AND "
		}
		cond += fmt.Sprintf("%s < %d%s", ts, *w.hi, origin)
	}
	return cond
}
