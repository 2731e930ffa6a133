// Command gen writes the three runs of the report example
// (docs/report.md) to a directory:
//
//	go run ./queries/report/internal/demoruns/gen DIR
//
// v1.btf, v2.btf and v3.btf: one generated 2-core system traced three
// times, the third with Task_10ms_3 40% slower.
package main

import (
	"fmt"
	"os"

	"github.com/traceduck/traceduck/queries/report/internal/demoruns"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: go run ./queries/report/internal/demoruns/gen DIR")
		os.Exit(2)
	}
	if err := os.MkdirAll(os.Args[1], 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	runs, err := demoruns.Write(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, r := range runs {
		fmt.Printf("%s: %d events\n", r.Path, r.Truth.Lines)
	}
}
