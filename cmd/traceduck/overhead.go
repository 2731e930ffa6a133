package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/traceduck/traceduck/queries"
	"github.com/traceduck/traceduck/schema"
)

func newOverheadCmd() *cobra.Command {
	var (
		dbPath, specPath, paramsDir string
		measuredPath                string
		runID                       int32
		cpuHz                       = queries.PaperCPUHz
		perProbe, keepParams        bool
		output                      = outputFlags{format: outTable}
	)
	cmd := &cobra.Command{
		Use:   "overhead (--db FILE [--run N] | --spec FILE) [flags]",
		Short: "Predict the CPU share tracing costs (the DTrace performance model)",
		Long: `Overhead predicts how much CPU a tracing session costs, with the model of
Tao and Yang's "Performance Model of Dynamic Tracing System": the cycles of
one probe firing (provider stages, D virtual machine and ECB preparation,
predicates and actions), times the firing rate, plus the consumer's
refreshes (buffer snapshots, copyout, process switches), split into sys
and usr time. Percentages are of one CPU at --cpu-hz.

With --db, every run (or --run N) is a session whose events are probe
firings at their rate over the run's duration, each priced by the most
specific row of probe_costs for the run's format. Only the DTrace
parameters are measured; other formats are priced by analogy unless you
give your own probe_costs.tsv (docs/overhead-model.md).

With --spec, the sessions are those of a probe spec file ("-" for standard
input): probes with a provider and a rate, and their ECBs' predicates and
actions, or their cycles per firing. Without --db it is computed in an
in-memory database; with --db the spec's sessions are stored there too.

The parameters (tables 1-6 of the paper) are loaded into the database's
overhead_* and probe_costs tables, in one transaction, before the
prediction: the bundled ones, or from --params DIR, whose files (items.tsv,
providers.tsv, constants.tsv, refresh.tsv, probe_costs.tsv) replace the
bundled files of the same name. --keep-params uses the tables as the
database holds them (after editing them with SQL).

Where the overhead was measured, the prediction is printed beside the
measurement: predicted sys, usr and total, the band the parameters'
spreads give the total (low_pct..high_pct), the measured total, the error
(predicted - measured, percentage points), the relative error (percent of
the measurement), whether the measurement lies in the band, and a total
row (expression (7) summed over the measured sessions). A spec's sessions
carry their measurements on "measured sys=PCT usr=PCT" lines (the paper's
table 7: queries/testdata/table7.spec); --measured FILE gives them as CSV
lines "SESSION,PCT" (a run's name or number, or a spec session's name,
and the share of one CPU in percent; an optional header
session,measured_pct).`,
		Example: `  traceduck overhead --db t.duckdb --run 1
  traceduck overhead --db t.duckdb --probes --output csv
  traceduck overhead --spec sessions.spec --cpu-hz 3e9
  traceduck overhead --db t.duckdb --params my-params/
  traceduck overhead --spec queries/testdata/table7.spec
  traceduck overhead --db t.duckdb --measured measured.csv`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case dbPath == "" && specPath == "":
				return usagef("give --db FILE (predict its runs) or --spec FILE (predict a probe spec)")
			case runID != 0 && specPath != "":
				return usagef("--run and --spec: give one of them")
			case cmd.Flags().Changed("run") && runID <= 0:
				return usagef("--run: expected a run number from 1, found %d", runID)
			case !(cpuHz > 0) || math.IsInf(cpuHz, 1): // NaN too
				return usagef("--cpu-hz: expected a finite clock rate > 0 in Hz, found %s", strconv.FormatFloat(cpuHz, 'g', -1, 64))
			case keepParams && paramsDir != "":
				return usagef("--keep-params and --params: give one of them")
			case keepParams && dbPath == "":
				return usagef("--keep-params needs --db: an in-memory database holds no parameters")
			case measuredPath == "-" && specPath == "-":
				return usagef("--measured - and --spec -: only one of them can read standard input")
			case measuredPath != "" && perProbe:
				return usagef("--measured and --probes: a measurement is per session, give one of them")
			}
			return runOverhead(cmd.Context(), overheadRun{
				dbPath: dbPath, specPath: specPath, paramsDir: paramsDir, runID: runID, cpuHz: cpuHz,
				perProbe: perProbe, keepParams: keepParams, output: output, measuredPath: measuredPath,
			}, cmd.InOrStdin(), cmd.OutOrStdout())
		},
	}
	addDBFlag(cmd, &dbPath, false, "database file whose runs to predict (must exist)")
	f := cmd.Flags()
	f.Int32Var(&runID, "run", 0, "only this run (default: every run)")
	f.StringVar(&specPath, "spec", "", `probe spec file ("-" for standard input)`)
	f.StringVar(&paramsDir, "params", "", "directory of parameter files replacing the bundled ones")
	f.BoolVar(&keepParams, "keep-params", false, "use the parameter tables the database holds")
	f.Float64Var(&cpuHz, "cpu-hz", cpuHz, "clock rate that turns cycles into time (the paper's machine: 1.7 GHz)")
	f.BoolVar(&perProbe, "probes", false, "one row per probe instead of per session")
	f.StringVar(&measuredPath, "measured", "", `CSV of measured overheads: lines "SESSION,PCT" ("-" for standard input)`)
	addOutputFlags(cmd, &output, outputFormats)
	return cmd
}

type overheadRun struct {
	dbPath, specPath, paramsDir string
	measuredPath                string
	runID                       int32
	cpuHz                       float64
	perProbe, keepParams        bool
	output                      outputFlags
}

func runOverhead(ctx context.Context, o overheadRun, stdin io.Reader, w io.Writer) error {
	// 1. Read and check every input before touching a database.
	var params *queries.OverheadParams
	if !o.keepParams {
		var err error
		if params, err = queries.ReadOverheadParams(o.paramsDir); err != nil {
			return err
		}
	}
	var spec *queries.OverheadSpec
	if o.specPath != "" {
		var err error
		if spec, err = readSpec(o.specPath, stdin); err != nil {
			return err
		}
	}

	var measured *queries.MeasuredFile
	if o.measuredPath != "" {
		var err error
		if measured, err = readMeasured(o.measuredPath, stdin); err != nil {
			return err
		}
	}

	// 2. Open the database (in memory for a spec alone) and load the
	// parameters and the spec, each in its own transaction.
	var db *schema.DB
	var err error
	if o.dbPath != "" {
		db, err = openExistingDB(ctx, o.dbPath)
	} else {
		db, err = openDB(ctx, memoryDB)
	}
	if err != nil {
		return err
	}
	defer db.Close()
	if params != nil {
		if err := params.Load(ctx, db.SQL()); err != nil {
			return err
		}
	} else {
		var n int
		if err := db.SQL().QueryRowContext(ctx, "SELECT count(*) FROM overhead_constants").Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("%s holds no overhead parameters: run without --keep-params to load them", o.dbPath)
		}
	}
	filter := queries.OverheadFilter{RunID: o.runID, AllRuns: o.runID == 0 && spec == nil}
	if spec != nil {
		// With --keep-params the tables may price what the bundled files
		// do not; an item they lack leaves its probe unpriced (NULL).
		if params != nil {
			if err := spec.Check(params); err != nil {
				return err
			}
		}
		if err := spec.Load(ctx, db.SQL()); err != nil {
			return err
		}
		filter.Sessions = spec.SessionNames()
	}
	if err := checkRunExists(ctx, db.SQL(), o.runID); err != nil {
		return err
	}

	if measured != nil {
		if err := measured.Load(ctx, db.SQL(), filter); err != nil {
			return err
		}
	}

	// 3. The prediction, printed as traceduck query prints; beside the
	// measurements where there are some.
	q := queries.OverheadSQL(o.cpuHz, o.perProbe, filter)
	if !o.perProbe {
		has, err := queries.HasMeasured(ctx, db.SQL(), filter)
		if err != nil {
			return err
		}
		if has {
			q = queries.OverheadCompareSQL(o.cpuHz, filter)
		}
	}
	conn, err := db.SQL().Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return queryTo(ctx, conn, q, newResultWriter(o.output, w))
}

func readMeasured(path string, stdin io.Reader) (*queries.MeasuredFile, error) {
	if path == "-" {
		return queries.ParseMeasuredCSV("stdin", stdin)
	}
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s: no such measured file", path)
		}
		return nil, err
	}
	defer f.Close()
	return queries.ParseMeasuredCSV(path, f)
}

func readSpec(path string, stdin io.Reader) (*queries.OverheadSpec, error) {
	if path == "-" {
		return queries.ParseOverheadSpec("stdin", stdin)
	}
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s: no such spec file", path)
		}
		return nil, err
	}
	defer f.Close()
	return queries.ParseOverheadSpec(path, f)
}
