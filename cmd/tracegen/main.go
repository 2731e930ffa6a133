// Command tracegen writes a deterministic synthetic trace of any format
// traceduck reads, from a simulated multi-core system, and optionally the
// simulator's ground truth as JSON:
//
//	go run ./cmd/tracegen --format btf --events 1000000 --cores 2 --seed 1 --out t.btf --truth t.json
//
// Formats: btf, qnx (traceprinter text), kev (QNX binary), tlv (TLV
// standard format), toppers-asp and toppers-fmp (TOPPERS kernel logs),
// baget, dtrace, ftrace. tlv and toppers-* write the resource file beside
// the trace (NAME.res), baget its XML description (minirtos-2.1-ppc64.xml,
// the name traceduck looks for); those need --out. The generators are in
// internal/tracegen; this command only wires flags to them.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/traceduck/traceduck/internal/bench"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stderr))
}

func run(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("tracegen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	format := fs.String("format", "btf", "trace format: "+strings.Join(bench.Formats, ", "))
	events := fs.Int("events", 100_000, "about this many events (text formats: lines; TOPPERS: raw log lines)")
	cores := fs.Int("cores", 0, "cores / CPUs of the simulated system (0: 2, toppers-asp 1)")
	seed := fs.Int64("seed", 1, "random seed: the same flags write the same bytes")
	out := fs.String("out", "-", "trace file (- is standard output)")
	truth := fs.String("truth", "", "also write the ground truth as JSON to this file")
	inversion := fs.Bool("inversion", false, "btf: add a known priority inversion (tasks Inv_Low, Inv_Mid, Inv_High on Core_0, semaphore SEM_Inv) and write the tasks' priorities")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "tracegen: unexpected arguments %q\n", fs.Args())
		return 2
	}
	tr, err := bench.Generate(*out, bench.GenConfig{Format: *format, Events: *events, Cores: *cores, Seed: *seed, Inversion: *inversion})
	if err != nil {
		// the generators' own errors say "tracegen:" already
		fmt.Fprintf(stderr, "tracegen: %s\n", strings.TrimPrefix(err.Error(), "tracegen: "))
		return 1
	}
	if *truth != "" {
		if err := bench.WriteTruth(*truth, tr); err != nil {
			fmt.Fprintf(stderr, "tracegen: %s: %v\n", *truth, err)
			return 1
		}
	}
	if *out != "-" {
		ingest := "traceduck ingest --db DB --format " + tr.Format
		for _, k := range sortedKeys(tr.Params) {
			ingest += " --" + k + " " + tr.Params[k]
		}
		fmt.Fprintf(stderr, "tracegen: %s: %d events; read it with: %s %s\n", *out, tr.Events, ingest, *out)
	}
	return 0
}

func sortedKeys(m map[string]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
