package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/traceduck/traceduck/internal/tracegen"
)

// Options configure Run.
type Options struct {
	Formats []string // default Formats
	Sizes   []int    // events; default 1M and 10M
	Cores   int      // 0: each format's default
	Seed    int64
	Dir     string // where the traces and databases go (removed as measured unless Keep)
	Keep    bool
	// Exe is the program run, with ChildEnv set, for each measurement
	// (os.Executable() of cmd/tracebench; the test binary in its test).
	Exe string
	// ProfileDir, when set, gets a CPU and a heap profile of the BTF
	// ingest at the largest size: btf-N.cpu.pprof, btf-N.heap.pprof.
	ProfileDir string
	// Views says on which runs the canned views are timed: "all" (the
	// default), "btf" (the BTF runs), "largest-btf" or "none".
	Views string
	Log   io.Writer // progress (nil: none)
}

// ViewsChoices are the values of Options.Views.
var ViewsChoices = []string{"all", "btf", "largest-btf", "none"}

// timesViews tells whether the views are timed on a run.
func (opt Options) timesViews(format string, largest bool) bool {
	switch opt.Views {
	case "", "all":
		return true
	case "btf":
		return format == "btf"
	case "largest-btf":
		return format == "btf" && largest
	}
	return false
}

// RuleFormats are the formats whose raw logs go through the TLV rule
// engine; tracebench also times their conversion alone (issue 23, target
// 5).
var RuleFormats = []string{"toppers-asp", "toppers-fmp"}

// Result is one ingest measured.
type Result struct {
	Format      string
	Size        int   // events asked for
	Events      int64 // events ingested
	RawLines    int64 // TLV and TOPPERS logs: lines read (their events are the lines the rules make)
	FileBytes   int64 // the trace (without the files beside it)
	GenSeconds  float64
	GenPeakRSS  int64   // bytes, of tracebench while it generated the trace
	Seconds     float64 // the whole ingest: open, install the views, ingest, close
	CPUSeconds  float64
	PeakRSS     int64 // bytes, of the child that ingested
	DBBytes     int64
	InMemoryGen bool // the generator held the trace in memory
	// The rule engine alone (RuleFormats): the raw log converted to the
	// TLV standard format as `traceduck convert` does, written nowhere
	// (childConvert), in a child process of its own.
	RulesSeconds float64
	RulesCPU     float64
	RulesLines   int64 // standard-format lines the rules made
	RulesPeakRSS int64
	BaseSeconds  float64 // BTF: DuckDB's read_csv of the same file
	BaseCPU      float64
	BasePeakRSS  int64
	BaseDBBytes  int64
	Views        map[string]float64 // seconds per view (ViewQueries), when timed on this run
	ViewsCPU     map[string]float64 // CPU seconds (user + system) per view
	ViewRows     map[string]int64   // rows of each view's answer
	ViewsPeakRSS int64
}

// Run measures every format at every size, each ingest in a child
// process, and returns the results in order.
func Run(opt Options) ([]Result, error) {
	if len(opt.Formats) == 0 {
		opt.Formats = Formats
	}
	if len(opt.Sizes) == 0 {
		opt.Sizes = []int{1_000_000, 10_000_000}
	}
	largest := 0
	for _, n := range opt.Sizes {
		largest = max(largest, n)
	}
	var out []Result
	for _, n := range opt.Sizes {
		for _, f := range opt.Formats {
			r, err := measure(opt, f, n, n == largest)
			if err != nil {
				return out, fmt.Errorf("%s, %d events: %w", f, n, err)
			}
			out = append(out, r)
		}
	}
	return out, nil
}

func (opt Options) logf(format string, args ...any) {
	if opt.Log != nil {
		fmt.Fprintf(opt.Log, format+"\n", args...)
	}
}

func measure(opt Options, format string, n int, largest bool) (Result, error) {
	r := Result{Format: format, Size: n}
	dir := filepath.Join(opt.Dir, format+"-"+strconv.Itoa(n))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return r, err
	}
	if !opt.Keep {
		defer os.RemoveAll(dir)
	}
	ext := map[string]string{"btf": ".btf", "kev": ".kev", "baget": ".blog"}[format]
	if ext == "" {
		ext = ".log"
	}
	path := filepath.Join(dir, "trace"+ext)

	opt.logf("tracebench: %s, %d events: generating", format, n)
	runtime.GC()
	debug.FreeOSMemory()
	ResetPeakRSS()
	start := time.Now()
	tr, err := Generate(path, GenConfig{Format: format, Events: n, Cores: opt.Cores, Seed: opt.Seed})
	if err != nil {
		return r, err
	}
	r.GenSeconds = time.Since(start).Seconds()
	r.GenPeakRSS = PeakRSS()
	r.InMemoryGen = tr.InMemory
	if t, ok := tr.Truth.(*tracegen.TLVTruth); ok {
		r.RawLines = int64(t.Lines)
	}
	st, err := os.Stat(path)
	if err != nil {
		return r, err
	}
	r.FileBytes = st.Size()

	args := append(tr.formatArgs("ingest"), "--db", filepath.Join(dir, "traceduck.duckdb"))
	if opt.ProfileDir != "" && format == "btf" && largest {
		base := filepath.Join(opt.ProfileDir, "btf-"+strconv.Itoa(n))
		args = append(args, "--cpuprofile", base+".cpu.pprof", "--memprofile", base+".heap.pprof")
	}
	opt.logf("tracebench: %s, %d events: ingesting %.1f MB", format, n, float64(r.FileBytes)/1e6)
	res, rss, err := opt.child(append(args, path)...)
	if err != nil {
		return r, err
	}
	if res.Events != tr.Events {
		return r, fmt.Errorf("ingested %d events, the generator wrote %d", res.Events, tr.Events)
	}
	r.Events, r.Seconds, r.CPUSeconds, r.PeakRSS = res.Events, res.Seconds, res.CPUSeconds, rss
	if r.DBBytes, err = fileSize(filepath.Join(dir, "traceduck.duckdb")); err != nil {
		return r, err
	}

	if slices.Contains(RuleFormats, format) {
		opt.logf("tracebench: %s, %d events: the rule engine alone (convert)", format, n)
		res, rss, err := opt.child(append(tr.formatArgs("convert"), path)...)
		if err != nil {
			return r, err
		}
		// each line the rules make selects one resource of the generated
		// system: as many lines as the ingest's events
		if res.Events != tr.Events {
			return r, fmt.Errorf("the rules made %d standard-format lines, the generator wrote %d events", res.Events, tr.Events)
		}
		r.RulesSeconds, r.RulesCPU, r.RulesLines, r.RulesPeakRSS = res.Seconds, res.CPUSeconds, res.Events, rss
	}
	if format == "btf" {
		opt.logf("tracebench: %s, %d events: baseline read_csv", format, n)
		base := filepath.Join(dir, "read_csv.duckdb")
		res, rss, err := opt.child("csv", "--db", base, path)
		if err != nil {
			return r, err
		}
		if res.Events != tr.Events {
			return r, fmt.Errorf("read_csv loaded %d rows, the generator wrote %d events", res.Events, tr.Events)
		}
		r.BaseSeconds, r.BaseCPU, r.BasePeakRSS = res.Seconds, res.CPUSeconds, rss
		if r.BaseDBBytes, err = fileSize(base); err != nil {
			return r, err
		}
	}
	if opt.timesViews(format, largest) {
		opt.logf("tracebench: %s, %d events: views", format, n)
		res, rss, err := opt.child("views", "--db", filepath.Join(dir, "traceduck.duckdb"))
		if err != nil {
			return r, err
		}
		r.Views, r.ViewsCPU, r.ViewRows, r.ViewsPeakRSS = res.Queries, res.QueriesCPU, res.Rows, rss
	}
	return r, nil
}

// fileSize is the size of a database file with its write-ahead log.
func fileSize(path string) (int64, error) {
	st, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	n := st.Size()
	if st, err := os.Stat(path + ".wal"); err == nil {
		n += st.Size()
	}
	return n, nil
}

// child runs one measurement in a child process and returns its result
// and its peak resident set (bytes, as the child measured it).
func (opt Options) child(args ...string) (childResult, int64, error) {
	cmd := exec.Command(opt.Exe, args...)
	cmd.Env = append(os.Environ(), ChildEnv+"=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return childResult{}, 0, fmt.Errorf("child %s: %v: %s", args[0], err, strings.TrimSpace(stderr.String()))
	}
	var res childResult
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		return childResult{}, 0, fmt.Errorf("child %s: %v: %q", args[0], err, stdout.String())
	}
	return res, res.PeakRSS, nil
}
