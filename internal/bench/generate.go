// Package bench generates synthetic traces of every format (cmd/tracegen)
// and measures how traceduck ingests and queries them (cmd/tracebench).
package bench

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/traceduck/traceduck/internal/qnxenc"
	"github.com/traceduck/traceduck/internal/tracegen"
)

// Formats are the formats the generator writes, in the order tracebench
// measures them.
var Formats = []string{"btf", "qnx", "kev", "tlv", "toppers-asp", "toppers-fmp", "baget", "dtrace", "ftrace"}

// GenConfig is one trace to generate.
type GenConfig struct {
	Format string
	Events int   // about this many events (lines for the text formats; TOPPERS: raw log lines)
	Cores  int   // 0: the format's default (2; toppers-asp 1)
	Seed   int64 // the same configuration writes the same bytes
	// Inversion adds tracegen's priority inversion scenario (BTF only):
	// three tasks Inv_Low, Inv_Mid, Inv_High, SEM_Inv, and the priorities.
	Inversion bool
}

// Trace is what Generate wrote.
type Trace struct {
	Path   string            // the trace
	Beside []string          // the files it needs beside it (TLV resource file, Baget description)
	Format string            // traceduck's --format for it
	Params map[string]string // traceduck's format flags for it
	// Events is the number of events traceduck makes of it (rows of
	// events), as the generator counts them.
	Events int64
	// InMemory tells that the generator held the whole trace in memory
	// before writing it (QNX: the events; Baget: the log).
	InMemory bool
	Truth    any // the generator's ground truth (tracegen's *Truth types)
}

// formatArgs is a child command (ingest, convert) with the trace's
// --format and its --param flags, the trace's path and other flags to
// follow.
func (tr Trace) formatArgs(command string) []string {
	args := []string{command, "--format", tr.Format}
	for k, v := range tr.Params {
		args = append(args, "--param", k+"="+v)
	}
	return args
}

// bagetDescriptionName is the name the Baget ingester looks for next to a
// log of the default ABI (be64, ppc64) when no --description is given:
// OS_VERSION-ARCH.xml of the bundled minirtos description.
const bagetDescriptionName = "minirtos-2.1-ppc64.xml"

// Generate writes the trace cfg describes to path ("-": standard output,
// for the formats that need no file beside the trace) and the files it
// needs beside it, and returns what it wrote. The text formats and BTF
// are written as the simulation runs; QNX and Baget are generated in
// memory first.
func Generate(path string, cfg GenConfig) (Trace, error) {
	if cfg.Events <= 0 {
		return Trace{}, fmt.Errorf("events must be > 0, got %d", cfg.Events)
	}
	cores := cfg.Cores
	if cores == 0 {
		cores = 2
		if cfg.Format == "toppers-asp" {
			cores = 1
		}
	}
	if cores < 1 {
		return Trace{}, fmt.Errorf("cores must be >= 1, got %d", cores)
	}
	tr := Trace{Path: path, Format: cfg.Format}
	besidePath := func(what, name string) (string, error) {
		if path == "-" {
			return "", fmt.Errorf("format %s writes %s beside the trace: give an output file", cfg.Format, what)
		}
		return filepath.Join(filepath.Dir(path), name), nil
	}
	write := func(fn func(w io.Writer) error) error { return writeFile(path, fn) }

	if cfg.Inversion && cfg.Format != "btf" {
		return Trace{}, fmt.Errorf("the priority inversion scenario is written in BTF only, not %s", cfg.Format)
	}
	var err error
	switch cfg.Format {
	case "btf":
		err = write(func(w io.Writer) error {
			t, err := tracegen.WriteBTF(w, tracegen.Config{Events: cfg.Events, Cores: cores, Tasks: 8, Seed: cfg.Seed, Inversion: cfg.Inversion})
			tr.Truth, tr.Events = &t, int64(t.Lines)
			return err
		})
	case "qnx", "kev":
		var h qnxenc.Header
		var events []qnxenc.Event
		var t tracegen.QNXTruth
		h, events, t, err = tracegen.GenerateQNX(tracegen.QNXConfig{Events: cfg.Events, CPUs: cores, Seed: cfg.Seed})
		if err != nil {
			break
		}
		tr.Truth, tr.Events, tr.InMemory = &t, int64(t.Events), true
		err = write(func(w io.Writer) error {
			if cfg.Format == "kev" {
				return qnxenc.WriteKev(w, h, events)
			}
			return qnxenc.WriteText(w, h, events)
		})
	case "tlv", "toppers-asp", "toppers-fmp":
		style := map[string]tracegen.TLVStyle{"tlv": tracegen.TLVStandard, "toppers-asp": tracegen.TOPPERSASP, "toppers-fmp": tracegen.TOPPERSFMP}[cfg.Format]
		var res string
		if res, err = besidePath("its resource file", strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))+".res"); err != nil {
			break
		}
		var resText strings.Builder
		err = write(func(w io.Writer) error {
			t, err := tracegen.WriteTLV(w, &resText, tracegen.Config{Events: cfg.Events, Cores: cores, Tasks: 8, Seed: cfg.Seed}, style)
			tr.Truth, tr.Events = &t, int64(t.Events)
			return err
		})
		if err == nil {
			err = os.WriteFile(res, []byte(resText.String()), 0o644)
		}
		tr.Beside, tr.Params = []string{res}, map[string]string{"resources": res}
	case "baget":
		var desc string
		if desc, err = besidePath("its description", bagetDescriptionName); err != nil {
			break
		}
		var log, xml []byte
		var t tracegen.BagetTruth
		log, xml, t, err = tracegen.GenerateBaget(tracegen.BagetConfig{Events: cfg.Events, CPUs: cores, Seed: cfg.Seed})
		if err != nil {
			break
		}
		tr.Truth, tr.Events, tr.InMemory = bagetTruthJSON(t), int64(t.Events), true
		if err = write(func(w io.Writer) error { _, err := w.Write(log); return err }); err == nil {
			err = os.WriteFile(desc, xml, 0o644)
		}
		tr.Beside, tr.Params = []string{desc}, map[string]string{"description": desc}
	case "dtrace":
		err = write(func(w io.Writer) error {
			t, err := tracegen.WriteDTrace(w, tracegen.DTraceConfig{Lines: cfg.Events, CPUs: cores, Processes: 8, Threads: 4, Seed: cfg.Seed, Gap: true})
			tr.Truth, tr.Events = &t, int64(t.Lines)
			return err
		})
	case "ftrace":
		err = write(func(w io.Writer) error {
			t, err := tracegen.WriteFtrace(w, tracegen.FtraceConfig{Lines: cfg.Events, CPUs: cores, Processes: 8, Threads: 4, Seed: cfg.Seed, TGID: true, Waking: true})
			tr.Truth, tr.Events = &t, int64(t.Lines)
			return err
		})
	default:
		return Trace{}, fmt.Errorf("unknown format %q (want one of %s)", cfg.Format, strings.Join(Formats, ", "))
	}
	if err != nil {
		return Trace{}, err
	}
	return tr, nil
}

// writeFile writes path ("-": standard output) through fn, buffered.
func writeFile(path string, fn func(w io.Writer) error) error {
	if path == "-" {
		bw := bufio.NewWriterSize(os.Stdout, 256<<10)
		if err := fn(bw); err != nil {
			return err
		}
		return bw.Flush()
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 256<<10)
	err = fn(bw)
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
	}
	return err
}

// WriteTruth writes a trace's truth as indented JSON.
func WriteTruth(path string, tr Trace) error {
	if tr.Truth == nil {
		return errors.New("no truth")
	}
	return writeFile(path, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"format": tr.Format, "events": tr.Events, "truth": tr.Truth})
	})
}

// bagetTruth is BagetTruth with its eco-triples and its time per holder
// as lists (JSON has no struct keys).
type bagetTruth struct {
	tracegen.BagetTruth
	Ecos   []bagetEcoCount
	HeldNS []bagetHeld
}

type bagetEcoCount struct {
	tracegen.BagetEco
	Count int
}

type bagetHeld struct {
	Holder tracegen.BagetObj
	NS     int64
}

func bagetTruthJSON(t tracegen.BagetTruth) *bagetTruth {
	out := &bagetTruth{BagetTruth: t}
	for e, n := range t.Ecos {
		out.Ecos = append(out.Ecos, bagetEcoCount{e, n})
	}
	sort.Slice(out.Ecos, func(i, j int) bool {
		return fmt.Sprint(out.Ecos[i].BagetEco) < fmt.Sprint(out.Ecos[j].BagetEco)
	})
	for h, ns := range t.HeldNS {
		out.HeldNS = append(out.HeldNS, bagetHeld{h, ns})
	}
	sort.Slice(out.HeldNS, func(i, j int) bool {
		return fmt.Sprint(out.HeldNS[i].Holder) < fmt.Sprint(out.HeldNS[j].Holder)
	})
	return out
}
