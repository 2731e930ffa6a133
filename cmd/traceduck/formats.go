package main

import (
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/traceduck/traceduck/ingest"
)

func newFormatsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "formats",
		Short: "List the trace formats traceduck reads",
		Long: `Formats lists the trace formats, one per line: the name --format takes,
a description, and the usual file name patterns. Without --format, ingest
tries the formats in this order and takes the first that recognizes the file.`,
		Example: `  traceduck formats`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 8, 2, ' ', 0)
			for _, ing := range ingest.Ingesters() {
				f := ing.Format()
				tw.Write([]byte(f.Name + "\t" + f.Description + "\t" + strings.Join(f.Patterns, " ") + "\n"))
			}
			return tw.Flush()
		},
	}
}
