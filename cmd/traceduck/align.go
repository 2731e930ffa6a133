package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/traceduck/traceduck/queries"
	"github.com/traceduck/traceduck/queries/align"
	"github.com/traceduck/traceduck/schema"
)

func newAlignCmd() *cobra.Command {
	var (
		dbPath    string
		system    string
		reference string
		sets      []string
		noDrift   bool
		show      bool
		output    = outputFlags{format: outTable}
	)
	cmd := &cobra.Command{
		Use:   "align --db FILE --system NAME [--reference RUN] [--set RUN=OFFSET[,DRIFTppm]]... [--no-drift]",
		Short: "Put the runs of a system (machines that exchanged messages) on one clock",
		Long: `Align estimates the clock of every run of a system (the runs tagged
system=NAME: the logs of machines that interact, see ingest --system) against
its reference run, from the messages the machines exchanged, and stores them
in the table clocks (docs/semantics.md, "Aligned time"). The raw times stay
as they are: system_events gains ts_aligned, the time on the reference
clock, and system_timeline orders by it; system_messages shows each
message's transit on the aligned clocks.

A message cannot be received before it was sent. Messages are paired across
the runs by the ids the trace gives (the description's <message> id= for
Baget logs) and their channel's name (the view system_messages). A run's
clock is aligned = ts + offset + drift * (ts - ref_ts):

  messages both ways   the offset (and, when the trace is long enough for the
                       transit times, the drift) is bounded on both sides;
                       the estimate is the middle of what the messages allow
                       (the convex-hull method), the bounds are stored
  messages one way     only one bound: the estimate is that bound (every
                       message then reads received at or after its send;
                       the true offset lies further on the unbounded side);
                       no drift
  no message           offset 0 (source none)

The reference is --reference (a run's name or id), else the system's first
run. --set gives a run's clock instead (OFFSET in ns or with a unit, -3ms,
1.5us; DRIFT in ppm from the run's first event): it is not estimated, and
the runs estimated after it may lean on it. --no-drift estimates offsets
only. Running align again replaces the system's clocks.

The table printed is the system's clocks (--show prints them without
estimating): run, source, offset_ns, its bounds, drift_ppm, its bounds,
messages sent and received that the estimate used, and a note saying what
it rests on.`,
		Example: `  traceduck ingest --db sys.duckdb --system rig node0.blog node1.blog
  traceduck align --db sys.duckdb --system rig
  traceduck align --db sys.duckdb --system rig --reference node1 --set node2=-1.5ms,20ppm
  traceduck query --db sys.duckdb "SELECT run_name, ts, ts_aligned, event FROM system_timeline('rig') LIMIT 20"`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if system == "" {
				return usagef("give --system NAME (the tag system=NAME of the runs to align)")
			}
			opt := align.SystemOptions{Options: align.Options{NoDrift: noDrift}, Reference: reference}
			if len(sets) > 0 {
				opt.Set = map[string]align.UserClock{}
			}
			for _, s := range sets {
				run, c, err := parseClockSet("--set", s)
				if err != nil {
					return err
				}
				if _, dup := opt.Set[run]; dup {
					return usagef("--set %s: run %s is set twice", s, run)
				}
				opt.Set[run] = c
			}
			if show && (len(sets) > 0 || reference != "" || noDrift) {
				return usagef("--show prints the stored clocks: it takes no --set, --reference or --no-drift")
			}
			return runAlign(cmd.Context(), dbPath, system, opt, show, output, cmd.OutOrStdout())
		},
	}
	addDBFlag(cmd, &dbPath, true, "database file (must exist)")
	cmd.Flags().StringVar(&system, "system", "", "the system: runs tagged system=NAME")
	cmd.Flags().StringVar(&reference, "reference", "", "the run (name or id) whose clock the others are aligned to (default: the system's first run)")
	cmd.Flags().StringArrayVar(&sets, "set", nil, "RUN=OFFSET[,DRIFTppm]: a run's clock, given rather than estimated (repeatable)")
	cmd.Flags().BoolVar(&noDrift, "no-drift", false, "estimate offsets only")
	cmd.Flags().BoolVar(&show, "show", false, "print the stored clocks of the system, estimate nothing")
	addOutputFlags(cmd, &output, outputFormats)
	return cmd
}

// parseClockSet reads RUN=OFFSET[,DRIFTppm], the value of flag.
func parseClockSet(flag, s string) (string, align.UserClock, error) {
	run, val, ok := strings.Cut(s, "=")
	if !ok || run == "" || val == "" {
		return "", align.UserClock{}, usagef("%s %s: expected RUN=OFFSET[,DRIFTppm] (OFFSET in ns or with a unit: -3ms)", flag, s)
	}
	off, drift, hasDrift := strings.Cut(val, ",")
	ns, err := parseEventsTime(off)
	if err != nil {
		return "", align.UserClock{}, usagef("%s %s: offset: %v", flag, s, err)
	}
	c := align.UserClock{OffsetNS: ns}
	if hasDrift {
		d := strings.TrimSuffix(strings.TrimSpace(drift), "ppm")
		v, err := strconv.ParseFloat(d, 64)
		if err != nil || v < -schema.MaxDriftPPM || v > schema.MaxDriftPPM {
			return "", align.UserClock{}, usagef("%s %s: expected a drift in ppm within ±%d (20ppm, -3.5ppm), found %q", flag, s, schema.MaxDriftPPM, drift)
		}
		c.DriftPPM = v
	}
	return run, c, nil
}

// alignSQL prints a system's clocks.
func alignSQL(system string) string {
	return `SELECT r.name AS run, k.source, k.offset_ns, k.offset_lo_ns, k.offset_hi_ns,
       round(k.drift_ppm, 3) AS drift_ppm, round(k.drift_lo_ppm, 3) AS drift_lo_ppm, round(k.drift_hi_ppm, 3) AS drift_hi_ppm,
       k.ref_ts, k.sent, k.received, k.note
FROM clocks k JOIN runs r ON r.run_id = k.run_id
WHERE r.tags->>'system' = ` + queries.Literal(system) + `
ORDER BY k.source <> 'reference', r.run_id`
}

func runAlign(ctx context.Context, dbPath, system string, opt align.SystemOptions, show bool, output outputFlags, w io.Writer) error {
	db, err := openExistingDB(ctx, dbPath)
	if err != nil {
		return err
	}
	defer db.Close()
	if !show {
		if db.ReadOnly {
			return fmt.Errorf("%s: opened read-only: align stores the clocks, it needs to write the database", dbPath)
		}
		clocks, err := align.System(ctx, db, system, opt)
		if err != nil {
			return err
		}
		if err := db.SetClocks(ctx, clocks); err != nil {
			return err
		}
	}
	conn, err := db.SQL().Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return queryTo(ctx, conn, alignSQL(system), newResultWriter(output, w))
}
