// Command tracebench measures traceduck: for each format and trace size it
// generates a trace (internal/tracegen), times traceduck's whole ingest
// into a new DuckDB file and reads the peak RSS of the process that did
// it (each measurement runs in a child process of its own, so that one's
// memory does not hide another's); for BTF it also times DuckDB's own
// read_csv of the same file into a plain table, through the same
// go-duckdb build; on every run (--views) it times the canned views and
// judges each against the time the run took to ingest. It prints a
// Markdown table (docs/performance.md):
//
//	go run ./cmd/tracebench [--formats btf,qnx,...] [--sizes 1000000,10000000] [--profile DIR]
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/traceduck/traceduck/internal/bench"
)

func main() {
	if os.Getenv(bench.ChildEnv) != "" {
		os.Exit(bench.Child(os.Args[1:], os.Stdout, os.Stderr))
	}
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "tracebench:", err)
		os.Exit(1)
	}
	os.Exit(run(os.Args[1:], exe, os.Stdout, os.Stderr))
}

// run measures as the flags say, running exe as the child of each
// measurement, and prints the table to stdout.
func run(args []string, exe string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tracebench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	formats := fs.String("formats", strings.Join(bench.Formats, ","), "formats to measure, comma-separated")
	sizes := fs.String("sizes", "1000000,10000000", "trace sizes in events, comma-separated")
	cores := fs.Int("cores", 0, "cores / CPUs of the simulated systems (0: 2, toppers-asp 1)")
	seed := fs.Int64("seed", 1, "generator seed")
	dir := fs.String("dir", "", "directory for the traces and databases (default: a new temporary directory, removed at the end)")
	keep := fs.Bool("keep", false, "keep the traces and databases")
	profile := fs.String("profile", "", "write CPU and heap profiles of the largest BTF ingest into this directory")
	quiet := fs.Bool("quiet", false, "no progress on standard error")
	views := fs.String("views", "all", "which runs the canned views are timed on: "+strings.Join(bench.ViewsChoices, ", "))
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "tracebench: unexpected arguments %q\n", fs.Args())
		return 2
	}
	if !slices.Contains(bench.ViewsChoices, *views) {
		fmt.Fprintf(stderr, "tracebench: --views %q: want one of %s\n", *views, strings.Join(bench.ViewsChoices, ", "))
		return 2
	}
	opt := bench.Options{Cores: *cores, Seed: *seed, Keep: *keep, Exe: exe, ProfileDir: *profile, Views: *views}
	known := map[string]bool{}
	for _, f := range bench.Formats {
		known[f] = true
	}
	for _, f := range strings.Split(*formats, ",") {
		if f = strings.TrimSpace(f); !known[f] {
			fmt.Fprintf(stderr, "tracebench: unknown format %q (want %s)\n", f, strings.Join(bench.Formats, ", "))
			return 2
		}
		opt.Formats = append(opt.Formats, f)
	}
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			fmt.Fprintf(stderr, "tracebench: size %q: want a number of events > 0\n", s)
			return 2
		}
		opt.Sizes = append(opt.Sizes, n)
	}
	if !*quiet {
		opt.Log = stderr
	}
	opt.Dir = *dir
	if opt.Dir == "" {
		d, err := os.MkdirTemp("", "tracebench")
		if err != nil {
			fmt.Fprintln(stderr, "tracebench:", err)
			return 1
		}
		opt.Dir = d
		if !*keep {
			defer os.RemoveAll(d)
		}
	}
	if opt.ProfileDir != "" {
		if err := os.MkdirAll(opt.ProfileDir, 0o755); err != nil {
			fmt.Fprintln(stderr, "tracebench:", err)
			return 1
		}
	}
	results, err := bench.Run(opt)
	if len(results) > 0 {
		bench.WriteTable(stdout, results)
	}
	if err != nil {
		fmt.Fprintln(stderr, "tracebench:", err)
		return 1
	}
	return 0
}
