package main

import (
	"fmt"
	"io"
	"strings"

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
			writeFormats(cmd.OutOrStdout())
			return nil
		},
	}
}

// formatsWidth is the width formats fits its lines in.
const formatsWidth = 100

// writeFormats prints each format: its name and file patterns on one
// line, its description below, wrapped, indented.
func writeFormats(w io.Writer) {
	const indent = "    "
	for i, ing := range ingest.Ingesters() {
		f := ing.Format()
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%-13s %s\n", f.Name, strings.Join(f.Patterns, " "))
		for _, l := range wrapWords(f.Description, formatsWidth-len(indent)) {
			fmt.Fprintln(w, indent+l)
		}
	}
}

// wrapWords breaks s into lines of at most n bytes at spaces (a longer
// word stands alone on its line).
func wrapWords(s string, n int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		if line != "" && len(line)+1+len(word) > n {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}
