package bench

import (
	"fmt"
	"io"
	"strings"
)

const mb = 1e6

// WriteTable prints the results as Markdown: one row per format and size,
// then the view timings, then the targets of issue 10 against the
// figures.
func WriteTable(w io.Writer, results []Result) {
	fmt.Fprintln(w, "| format | events | file MB | gen s | ingest s | MB/s | events/s | CPU % | peak RSS MB | DB MB | DB MB per M events | read_csv s | read_csv CPU % | read_csv peak RSS MB | traceduck / read_csv |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, r := range results {
		base := "| | | |"
		if r.BaseSeconds > 0 {
			base = fmt.Sprintf("%.2f | %.0f | %.0f | %.2f× |", r.BaseSeconds, 100*r.BaseCPU/r.BaseSeconds, float64(r.BasePeakRSS)/mb, r.Seconds/r.BaseSeconds)
		}
		events := fmt.Sprint(r.Events)
		if r.RawLines > 0 && r.RawLines != r.Events {
			events = fmt.Sprintf("%d (%d lines)", r.Events, r.RawLines)
		}
		gen := fmt.Sprintf("%.1f", r.GenSeconds)
		if r.InMemoryGen {
			gen += fmt.Sprintf(" (%.0f MB*)", float64(r.GenPeakRSS)/mb)
		}
		fmt.Fprintf(w, "| %s | %s | %.1f | %s | %.2f | %.1f | %.0f | %.0f | %.0f | %.1f | %.1f | %s\n",
			r.Format, events, float64(r.FileBytes)/mb, gen, r.Seconds, float64(r.FileBytes)/mb/r.Seconds,
			float64(r.Events)/r.Seconds, 100*r.CPUSeconds/r.Seconds, float64(r.PeakRSS)/mb,
			float64(r.DBBytes)/mb, float64(r.DBBytes)/mb/(float64(r.Events)/1e6), base)
	}
	fmt.Fprintln(w, "\nMB are 10^6 bytes; ingest s is the whole ingest (create the database, install the views, ingest, close) in a child process, peak RSS that child's; gen s is the generator's time (* the trace was generated in memory, then written: the peak RSS of tracebench while it generated).")
	for _, r := range results {
		if r.Views == nil {
			continue
		}
		fmt.Fprintf(w, "\nCanned views on the %s run of %d events (each run once; the child's peak RSS %.0f MB):\n\n", r.Format, r.Events, float64(r.ViewsPeakRSS)/mb)
		fmt.Fprintln(w, "| view | s |")
		fmt.Fprintln(w, "| --- | ---: |")
		for _, q := range ViewQueries {
			fmt.Fprintf(w, "| %s | %.2f |\n", q.Name, r.Views[q.Name])
		}
	}
	targets := Targets(results)
	if len(targets) > 0 {
		fmt.Fprintln(w, "\nTargets of issue 10:")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| target | measured | met |")
		fmt.Fprintln(w, "| --- | --- | --- |")
		for _, t := range targets {
			fmt.Fprintf(w, "| %s | %s | %s |\n", t.Name, t.Measured, t.Status)
		}
	}
}

// Target is one target of issue 10 against a run's figures.
type Target struct {
	Name, Measured string
	Status         string // met, not met, or - for a figure to report
}

func status(met bool) string {
	if met {
		return "met"
	}
	return "not met"
}

// Targets evaluates the targets the results allow (each at the largest
// size measured for the format).
func Targets(results []Result) []Target {
	largest := map[string]Result{}
	smallest := map[string]Result{}
	for _, r := range results {
		if l, ok := largest[r.Format]; !ok || r.Size > l.Size {
			largest[r.Format] = r
		}
		if s, ok := smallest[r.Format]; !ok || r.Size < s.Size {
			smallest[r.Format] = r
		}
	}
	mbps := func(r Result) float64 { return float64(r.FileBytes) / mb / r.Seconds }
	eps := func(r Result) float64 { return float64(r.Events) / r.Seconds }
	var out []Target
	btf, haveBTF := largest["btf"]
	if haveBTF && btf.BaseSeconds > 0 {
		ratio := btf.Seconds / btf.BaseSeconds
		out = append(out, Target{fmt.Sprintf("BTF, %d events: ingest ≤ 1.0× read_csv (aim 0.7×)", btf.Events),
			fmt.Sprintf("%.2f× (%.1f s / %.1f s)", ratio, btf.Seconds, btf.BaseSeconds), status(ratio <= 1.0)})
		out = append(out, Target{"BTF: both cores used", fmt.Sprintf("%.0f%% CPU (read_csv %.0f%%)", 100*btf.CPUSeconds/btf.Seconds, 100*btf.BaseCPU/btf.BaseSeconds), status(btf.CPUSeconds/btf.Seconds >= 1.5)})
	}
	if haveBTF {
		for _, f := range []string{"qnx", "tlv"} {
			if r, ok := largest[f]; ok {
				out = append(out, Target{fmt.Sprintf("%s MB/s ≥ ½ BTF's", f), fmt.Sprintf("%.1f MB/s vs %.1f", mbps(r), mbps(btf)), status(mbps(r) >= mbps(btf)/2)})
			}
		}
		if r, ok := largest["baget"]; ok {
			out = append(out, Target{"baget events/s ≥ BTF's", fmt.Sprintf("%.0f vs %.0f", eps(r), eps(btf)), status(eps(r) >= eps(btf))})
		}
	}
	for _, f := range []string{"toppers-asp", "toppers-fmp"} {
		if r, ok := largest[f]; ok && r.RawLines > 0 && r.CPUSeconds > 0 {
			perCore := float64(r.RawLines) / r.CPUSeconds
			out = append(out, Target{f + " rules: ≥ 1M raw lines/s per core", fmt.Sprintf("%.0f lines per CPU-second", perCore), status(perCore >= 1e6)})
		}
	}
	for _, f := range Formats {
		l, s := largest[f], smallest[f]
		if l.Size == 0 || l.Size == s.Size {
			continue
		}
		k := float64(l.Size) / float64(s.Size)
		out = append(out, Target{fmt.Sprintf("%s: time of %d events ≤ %.1f× time of %d (linear)", f, l.Size, 1.1*k, s.Size),
			fmt.Sprintf("%.1f×", l.Seconds/s.Seconds), status(l.Seconds/s.Seconds <= 1.1*k)})
		if f == "btf" {
			out = append(out, Target{fmt.Sprintf("btf: peak RSS flat (%d events ≤ 1.2× %d) and < 1 GiB", l.Size, s.Size),
				fmt.Sprintf("%.0f MB vs %.0f MB (%.2f×)", float64(l.PeakRSS)/mb, float64(s.PeakRSS)/mb, float64(l.PeakRSS)/float64(s.PeakRSS)),
				status(float64(l.PeakRSS) <= 1.2*float64(s.PeakRSS) && l.PeakRSS < 1<<30)})
		}
	}
	if haveBTF && btf.Views != nil {
		for _, q := range []string{"state_stats", "eco_tree", "hist_quantize running"} {
			s := btf.Views[q]
			out = append(out, Target{q + " < 1 s", fmt.Sprintf("%.2f s", s), status(s < 1)})
		}
	}
	if haveBTF {
		out = append(out, Target{"DB size per million events (report)", strings.TrimSpace(fmt.Sprintf("%.1f MB (read_csv's plain table: %.1f MB)",
			float64(btf.DBBytes)/mb/(float64(btf.Events)/1e6), float64(btf.BaseDBBytes)/mb/(float64(btf.Events)/1e6))), "-"})
	}
	return out
}
