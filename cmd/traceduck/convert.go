package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/ingest/tlv"
)

func newConvertCmd() *cobra.Command {
	var (
		format  string
		skipBad bool
		quiet   bool
	)
	cmd := &cobra.Command{
		Use:   "convert [--format tlv|toppers-asp|toppers-fmp] --resources FILE.res [--rules R] [--headers H] PATH",
		Short: "Print a text log in TLV standard format (conversion rules applied)",
		Long: `Convert reads a log ("-" is standard input) the way ingest would and prints
the TLV standard-format lines it becomes, one per line:

  [TIME]Resource.attr=value
  [TIME]Resource.behavior(arg, arg)

With --format tlv (the default) the resource file says which conversion
rules apply (ConvertRules); a resource file that names none means the log
is in the standard format already, and it is printed as it is read.
toppers-asp and toppers-fmp use the bundled rules for TOPPERS kernel logs.
--rules and --headers add files or directories to search before the
bundled sets.

Lines no rule matches are skipped; a summary of what was skipped goes to
standard error (unless --quiet).`,
		Example: `  traceduck convert --format toppers-asp --resources app.res kernel.log
  traceduck convert --resources my.res --rules my.cnv --headers my.resh my.log > my.std.log`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("convert takes one log (a path, or - for standard input)")
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&format, "format", "tlv", "tlv, toppers-asp or toppers-fmp")
	f.BoolVar(&skipBad, "skip-bad", false, "report lines that cannot be read on standard error and go on instead of stopping")
	f.BoolVar(&quiet, "quiet", false, "print no summary of skipped lines")
	params := addFormatFlags(cmd, "tlv", "toppers-asp", "toppers-fmp")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		ing, err := ingest.Lookup(format)
		if err != nil {
			return &usageError{err}
		}
		if _, ok := ing.(*tlv.Ingester); !ok {
			return usagef("format %s is not a text log that converts to the TLV standard format (formats: tlv, toppers-asp, toppers-fmp)", ing.Format().Name)
		}
		p := params()
		if p["resources"] == "" {
			return usagef("convert needs --resources FILE.res")
		}
		configured, err := ingest.Configure(ing, p)
		if err != nil {
			return err
		}
		src, err := ingest.Open(args[0])
		if err != nil {
			return err
		}
		defer src.Close()
		notes, err := configured.(*tlv.Ingester).Convert(cmd.Context(), src, cmd.OutOrStdout(), skipBad)
		if !quiet || err != nil {
			for _, n := range notes {
				if quiet && n.Severity == "info" {
					continue
				}
				at := ""
				if n.Line > 0 {
					at = fmt.Sprintf("%s:%d: ", args[0], n.Line)
				}
				times := ""
				if n.Count > 1 {
					times = fmt.Sprintf(" (%d times)", n.Count)
				}
				writeLine(cmd.ErrOrStderr(), fmt.Sprintf("%s%s: %s%s", at, n.Severity, n.Message, times))
			}
		}
		return err
	}
	return cmd
}
