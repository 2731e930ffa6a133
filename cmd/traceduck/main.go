// Command traceduck turns trace files into a DuckDB database and answers
// SQL over it. It is thin: flags, wiring and output formatting; the trace
// formats live in ingest/, the tables in schema/, the SQL in queries/.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/traceduck/traceduck/ingest"

	_ "github.com/traceduck/traceduck/ingest/all" // register every trace format
)

// Exit codes (DESIGN.md, "Command line").
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
	// exitRegression: traceduck report found a value beyond a threshold.
	exitRegression = 3
)

// usageError is a mistake in how the command was called: exit code 2.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error {
	return &usageError{fmt.Errorf(format, args...)}
}

// runError is an error of the work itself (a bad trace, a DuckDB error):
// exit code 1. Every command's RunE is wrapped so that what it returns is
// a runError unless it is a usageError; an error that cobra returns before
// RunE runs (unknown command or flag, missing required flag, wrong number
// of arguments) is neither and counts as a usage error.
type runError struct{ err error }

func (e *runError) Error() string { return e.err.Error() }
func (e *runError) Unwrap() error { return e.err }

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run executes the command line and returns the exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	// Ctrl-C (or SIGTERM) cancels the context: an ingest in progress rolls
	// its transaction back, a query is interrupted.
	ctx, stop := signal.NotifyContext(context.WithValue(context.Background(), stderrKey{}, stderr), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		// After the first signal, the next one ends the process at once.
		<-ctx.Done()
		stop()
	}()

	out := terminalOut(stdout)
	defer flushOut(out)
	root := newRoot(stdin, out, stderr)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return exitOK
	}
	flushOut(out)
	var rg *regressionError
	if errors.As(err, &rg) {
		writeError(stderr, err)
		return exitRegression
	}
	var re *runError
	var ue *usageError
	if errors.As(err, &re) && !errors.As(err, &ue) {
		if ctx.Err() != nil && errors.Is(err, context.Canceled) {
			writeMessage(stderr, "interrupted")
		} else {
			writeError(stderr, err)
		}
		return exitError
	}
	writeError(stderr, err)
	if cmd != nil {
		fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", cmd.CommandPath())
	}
	return exitUsage
}

func newRoot(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "traceduck",
		Short: "SQL-queryable trace analytics: trace files in, a DuckDB database out",
		Long: `traceduck converts real-time and OS traces (BTF, QNX, TLV/TOPPERS, Baget,
DTrace, ftrace, Chrome JSON: traceduck formats) into the tables of a DuckDB
database, and installs views and macros that answer what engineers ask of a
trace (state statistics, task instances and response times, scheduling
latency, CPU load, locks, messages, ...). Any DuckDB client can query them;
traceduck views lists every table, view and macro.`,
		Example: `  traceduck demo
  traceduck ingest --db t.duckdb trace.btf
  traceduck query --db t.duckdb "SELECT object, total_ns FROM state_summary WHERE kind='task' AND state='running' ORDER BY total_ns DESC"`,
		SilenceErrors: true,
		SilenceUsage:  true,
		// No Run: without a subcommand cobra prints the help, and an
		// unknown subcommand is an error (a usage error, exit code 2).
	}
	root.CompletionOptions.DisableDefaultCmd = true
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{err} })

	root.AddCommand(
		newIngestCmd(),
		newQueryCmd(),
		newFormatsCmd(),
		newDemoCmd(),
		newConvertCmd(),
		newOverheadCmd(),
		newStatsCmd(), newEventsCmd(),
		newHistCmd(),
		newStatesCmd(), newLocksCmd(), newBagetCmd(), newTLVStatsCmd(),
		newExportCmd(),
		newReportCmd(),
		newAlignCmd(),
		newVersionCmd(), newViewsCmd(),
	)
	// --version prints what traceduck version prints.
	root.Version = "-"
	root.SetVersionTemplate("{{versionLine}}\n")
	cobra.AddTemplateFunc("versionLine", func() string { return versionLine(context.Background()) })
	root.InitDefaultHelpCmd()
	var wrapAll func(*cobra.Command)
	wrapAll = func(parent *cobra.Command) {
		for _, c := range parent.Commands() {
			if c.Name() == "help" {
				c.Example = "  traceduck help ingest"
			}
			if c.RunE != nil {
				wrapRunE(c)
			}
			wrapAll(c) // subcommands (baget describe)
		}
	}
	wrapAll(root)
	return root
}

// wrapRunE marks the errors of a command's own work as runErrors.
func wrapRunE(c *cobra.Command) {
	inner := c.RunE
	c.RunE = func(cmd *cobra.Command, args []string) error {
		err := inner(cmd, args)
		if err == nil {
			return nil
		}
		var ue *usageError
		if errors.As(err, &ue) {
			return err
		}
		var pe *ingest.ParamError
		if errors.As(err, &pe) {
			return &usageError{err}
		}
		return &runError{err}
	}
}
