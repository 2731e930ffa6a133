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
database holds them (after editing them with SQL).`,
		Example: `  traceduck overhead --db t.duckdb --run 1
  traceduck overhead --db t.duckdb --probes --output csv
  traceduck overhead --spec sessions.spec --cpu-hz 3e9
  traceduck overhead --db t.duckdb --params my-params/`,
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
			}
			return runOverhead(cmd.Context(), overheadRun{
				dbPath: dbPath, specPath: specPath, paramsDir: paramsDir, runID: runID, cpuHz: cpuHz,
				perProbe: perProbe, keepParams: keepParams, output: output,
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
	addOutputFlags(cmd, &output, outputFormats)
	return cmd
}

type overheadRun struct {
	dbPath, specPath, paramsDir string
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
	if o.runID > 0 {
		var n int
		if err := db.SQL().QueryRowContext(ctx, "SELECT count(*) FROM runs WHERE run_id = ?", o.runID).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("run %d: no such run in %s", o.runID, o.dbPath)
		}
	}

	// 3. The prediction, printed as traceduck query prints.
	conn, err := db.SQL().Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return queryTo(ctx, conn, queries.OverheadSQL(o.cpuHz, o.perProbe, filter), newResultWriter(o.output, w))
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
