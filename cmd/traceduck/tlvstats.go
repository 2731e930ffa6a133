package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/traceduck/traceduck/ingest/tlv"
	"github.com/traceduck/traceduck/queries"
)

func newTLVStatsCmd() *cobra.Command {
	var (
		dbPath, sgrPath, only string
		run                   int32
		output                = outputFlags{format: outTable}
	)
	cmd := &cobra.Command{
		Use:   "tlv-stats --sgr FILE --db FILE [--run N] [--stat NAME]",
		Short: "TLV's statistics generation rules (.sgr, Basic mode) computed over a database",
		Long: `Tlv-stats reads a statistics generation rule file of TraceLogVisualizer
(.sgr) and prints each statistic it defines, computed by the macros of
queries/tlv_stats.sql over the runs of the database (--run: one):

  Count with When            per resource the rule names, its events the rule
                             names (tlv_count): task_dispatch_count.sgr counts
                             each task's changes of state to RUNNING
  Count with When, Interval  of the first such resource, per window of
                             Interval (the log's time unit) from the run's
                             first event (tlv_count_windows)
  Measure with When          per resource, the time between consecutive such
                             events: n, mean, max, min in ns (tlv_measure)
  Measure with From and To   per pair of resources, the time from the last
                             From event before each To event (tlv_measure_from_to)

Resources are named by ResourceName or ResourceType (objects.kind), events
by AttributeName and AttributeValue (an attribute's change) or BehaviorName
[and BehaviorArg]. The modes Script (an external program), Regexp (lines of
a log) and Input (data) are refused with FILE:LINE:COL and why, as is a
Basic rule TLV itself refused. Table and markdown print each statistic
under its name and title; csv and json print one: give --stat NAME when
the file has several.`,
		Example: `  traceduck tlv-stats --db t.duckdb --sgr task_dispatch_count.sgr
  traceduck tlv-stats --db t.duckdb --run 2 --sgr rules.sgr --stat task_dispatch_count --output csv`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			rules, err := tlv.ReadSGRFile(sgrPath)
			if err != nil {
				return err
			}
			if only != "" {
				var keep []tlv.StatRule
				for _, r := range rules {
					if r.Name == only {
						keep = append(keep, r)
					}
				}
				if len(keep) == 0 {
					return usagef("--stat %s: %s has no such statistic", only, sgrPath)
				}
				rules = keep
			}
			if len(rules) > 1 && (output.format == outCSV || output.format == outJSON) {
				return usagef("--output %s prints one statistic: %s has %d, give --stat NAME", output.format, sgrPath, len(rules))
			}
			return runTLVStats(cmd, dbPath, rules, run, output, cmd.OutOrStdout())
		},
	}
	addDBFlag(cmd, &dbPath, true, "database file (must exist)")
	addRunFlag(cmd, &run)
	cmd.Flags().StringVar(&sgrPath, "sgr", "", "TLV statistics generation rule file (.sgr)")
	cmd.Flags().StringVar(&only, "stat", "", "only the statistic of this name")
	_ = cmd.MarkFlagRequired("sgr")
	addOutputFlags(cmd, &output, outputFormats)
	return cmd
}

func runTLVStats(cmd *cobra.Command, dbPath string, rules []tlv.StatRule, run int32, output outputFlags, w io.Writer) error {
	ctx := cmd.Context()
	db, err := openExistingDB(ctx, dbPath)
	if err != nil {
		return err
	}
	defer db.Close()
	conn, err := db.SQL().Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := checkRunExists(ctx, conn, run); err != nil {
		return err
	}
	event := func(e *tlv.StatEvent) *queries.TLVEvent {
		if e == nil {
			return nil
		}
		return &queries.TLVEvent{Names: e.Names, Types: e.Types, Attribute: e.Attribute, Value: e.Value, Behavior: e.Behavior, Args: e.Args, HasArgs: e.HasArgs}
	}
	for i, r := range rules {
		text, err := queries.TLVStatSQL(ctx, db.SQL(), queries.TLVStat{Method: r.Method, Interval: r.Interval, When: event(r.When), From: event(r.From), To: event(r.To)}, run)
		if err != nil {
			return fmt.Errorf("%s:%d: statistic %q: %w", r.Pos.File, r.Pos.Line, r.Name, err)
		}
		if output.format == outTable || output.format == outMarkdown {
			if i > 0 {
				fmt.Fprintln(w)
			}
			fmt.Fprintf(w, "%s: %s (%s)\n", cellText(r.Name), cellText(r.Title), r.Method)
		}
		if err := queryTo(ctx, conn, text, newResultWriter(output, w)); err != nil {
			return err
		}
	}
	return nil
}
