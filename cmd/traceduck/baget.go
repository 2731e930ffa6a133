package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/traceduck/traceduck/ingest/baget"
)

func newBagetCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "baget",
		Short: "Tools for the Baget tracer's self-described logs",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newBagetDescribeCmd())
	return cmd
}

func newBagetDescribeCmd() *cobra.Command {
	var (
		descPath string
		example  string
		events   []string
	)
	cmd := &cobra.Command{
		Use:   "describe (--description FILE | --example NAME) [--event NAME]...",
		Short: "Show a description's record types as field trees (the seed's section 3.4 view)",
		Long: `Describe reads an XML description of a Baget-style log (docs/baget-format.md)
and prints, for each record type, its field tree as the reader lays it out:
one line per field with its path, C type, byte offset, size and alignment
(union members under their case; arrays with their element size; object-id
fields with their object kind; format= and its names for a field with a
display format, docs/baget-format.md 2.11), then the record's rules: the
object it creates, the state and CPU rules, and the resource and message
rules.

--example NAME shows a bundled description instead (minirtos.xml, the one
the demo's and the generator's logs use). --event keeps the record types of
these names (repeatable). A description that does not parse is an error
FILE:LINE: what was expected, what was found.`,
		Example: `  traceduck baget describe --example minirtos.xml --event THREAD_SWITCH
  traceduck baget describe --description my-rtos.xml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var d *baget.Description
			var err error
			switch {
			case (descPath == "") == (example == ""):
				return usagef("give --description FILE or --example NAME")
			case example != "":
				d, err = baget.Example(example)
				if err != nil {
					return fmt.Errorf("--example %s: %v", example, err)
				}
			default:
				data, rerr := os.ReadFile(descPath)
				if rerr != nil {
					return rerr
				}
				d, err = baget.Parse(filepath.Clean(descPath), data)
				if err != nil {
					return err
				}
			}
			var keep func(string) bool
			if len(events) > 0 {
				known := map[string]bool{}
				for _, ev := range d.Events {
					known[ev.Name] = true
				}
				want := map[string]bool{}
				for _, e := range events {
					if !known[e] {
						names := make([]string, 0, len(known))
						for n := range known {
							names = append(names, n)
						}
						sort.Strings(names)
						return fmt.Errorf("--event %s: the description has no record type %s (it has %s)", e, e, firstFew(names, 12))
					}
					want[e] = true
				}
				keep = func(n string) bool { return want[n] }
			}
			w := bufio.NewWriter(cmd.OutOrStdout())
			d.DumpEvents(w, keep)
			return w.Flush()
		},
	}
	cmd.Flags().StringVar(&descPath, "description", "", "the XML description")
	cmd.Flags().StringVar(&example, "example", "", "a bundled description: "+strings.Join(baget.ExampleNames(), ", "))
	cmd.Flags().StringArrayVar(&events, "event", nil, "only this record type (repeatable)")
	return cmd
}
