package bench

import (
	"fmt"
	"io"
	"strings"
)

const mb = 1e6

// WriteTable prints the results as Markdown: one row per format and size,
// then the view timings and their verdicts, then the targets of issues 10
// and 23 against the figures.
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
	writeRules(w, results)
	for _, r := range results {
		if r.Views == nil {
			continue
		}
		fmt.Fprintf(w, "\nCanned views on the %s run of %d events (each run once, in a child process whose peak RSS was %.0f MB; × ingest is the view's time over the %.2f s the ingest took, target ≤ %.1f×; CPU × ingest, its CPU time over the ingest's %.2f s, is steadier on a loaded machine):\n\n",
			r.Format, r.Events, float64(r.ViewsPeakRSS)/mb, r.Seconds, ViewRatioTarget, r.CPUSeconds)
		fmt.Fprintln(w, "| view | s | × ingest | CPU s | CPU × ingest | rows |")
		fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: |")
		for _, q := range ViewQueries {
			cpu, cpuRatio := "", ""
			if c, ok := r.ViewsCPU[q.Name]; ok && r.CPUSeconds > 0 {
				cpu, cpuRatio = fmt.Sprintf("%.2f", c), fmt.Sprintf("%.3f", c/r.CPUSeconds)
			}
			fmt.Fprintf(w, "| %s | %.2f | %.3f | %s | %s | %d |\n", q.Name, r.Views[q.Name], r.Views[q.Name]/r.Seconds, cpu, cpuRatio, r.ViewRows[q.Name])
		}
	}
	if v := ViewVerdicts(results); len(v) > 0 {
		fmt.Fprintf(w, "\nEvery canned view over a whole run in at most %.1f× the time the run took to ingest (issue 23, target 1):\n\n", ViewRatioTarget)
		fmt.Fprintln(w, "| format | events | ingest s | slowest view | s | × ingest | views beyond | verdict |")
		fmt.Fprintln(w, "| --- | ---: | ---: | --- | ---: | ---: | ---: | --- |")
		for _, x := range v {
			fmt.Fprintf(w, "| %s | %d | %.2f | %s | %.2f | %.3f | %d | %s |\n", x.Format, x.Events, x.Ingest, x.Slowest, x.Seconds, x.Ratio, x.Beyond, status(x.Beyond == 0))
		}
	}
	targets := Targets(results)
	if len(targets) > 0 {
		fmt.Fprintln(w, "\nTargets (issues 10 and 23):")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| target | measured | met |")
		fmt.Fprintln(w, "| --- | --- | --- |")
		for _, t := range targets {
			fmt.Fprintf(w, "| %s | %s | %s |\n", t.Name, t.Measured, t.Status)
		}
	}
}

// RulesTarget is issue 23's target 5: the TOPPERS rule engine converts
// at least this many raw log lines per CPU-second.
const RulesTarget = 500e3

// writeRules prints the rule engine's figures (RuleFormats' runs) beside
// their whole ingest's.
func writeRules(w io.Writer, results []Result) {
	have := false
	for _, r := range results {
		have = have || r.RulesCPU > 0
	}
	if !have {
		return
	}
	fmt.Fprintf(w, "\nThe TOPPERS rule engine alone (issue 23, target 5: ≥ %.0fk raw lines per CPU-second): each raw log converted to the TLV standard format as `traceduck convert` does it, in a child process of its own — read the lines, match the bundled rules, expand their outputs, apply each standard-format line to the resources' state and write its text (here into a writer that only counts the lines); the rules and the resource file are loaded before the clock starts; no database, no tables. CPU s is the child's user + system time over that work (the garbage collector's on the other core included). The whole ingest (the first table: rules, tables, Arrow, DuckDB's load) is beside it, over the same raw lines:\n\n", RulesTarget/1e3)
	fmt.Fprintln(w, "| format | raw lines | TLV lines | convert s | convert CPU s | raw lines per CPU-s | peak RSS MB | whole ingest CPU s | whole ingest raw lines per CPU-s |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, r := range results {
		if r.RulesCPU <= 0 {
			continue
		}
		whole := ""
		if r.CPUSeconds > 0 {
			whole = fmt.Sprintf("%.0f", float64(r.RawLines)/r.CPUSeconds)
		}
		fmt.Fprintf(w, "| %s | %d | %d | %.2f | %.2f | %.0f | %.0f | %.2f | %s |\n", r.Format, r.RawLines, r.RulesLines, r.RulesSeconds, r.RulesCPU,
			float64(r.RawLines)/r.RulesCPU, float64(r.RulesPeakRSS)/mb, r.CPUSeconds, whole)
	}
}

// ViewVerdict is issue 23's target 1 on one run: its slowest view, and
// how many views took longer than ViewRatioTarget × its ingest.
type ViewVerdict struct {
	Format  string
	Events  int64
	Ingest  float64
	Slowest string
	Seconds float64
	Ratio   float64
	Beyond  int
}

// ViewVerdicts judges every run whose views were timed, in order.
func ViewVerdicts(results []Result) []ViewVerdict {
	var out []ViewVerdict
	for _, r := range results {
		if r.Views == nil || r.Seconds <= 0 {
			continue
		}
		v := ViewVerdict{Format: r.Format, Events: r.Events, Ingest: r.Seconds}
		for _, q := range ViewQueries {
			s, ok := r.Views[q.Name]
			if !ok {
				continue
			}
			if v.Slowest == "" || s > v.Seconds {
				v.Slowest, v.Seconds = q.Name, s
			}
			if s > ViewRatioTarget*r.Seconds {
				v.Beyond++
			}
		}
		v.Ratio = v.Seconds / r.Seconds
		out = append(out, v)
	}
	return out
}

// Target is one target of issues 10 and 23 against a run's figures.
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
		out = append(out, Target{fmt.Sprintf("BTF, %d events: ingest ≤ 0.7× read_csv", btf.Events),
			fmt.Sprintf("%.2f× (%.1f s / %.1f s)", ratio, btf.Seconds, btf.BaseSeconds), status(ratio <= 0.7)})
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
	for _, f := range RuleFormats {
		r, ok := largest[f]
		if !ok || r.RawLines <= 0 {
			continue
		}
		if r.RulesCPU > 0 {
			perCore := float64(r.RawLines) / r.RulesCPU
			out = append(out, Target{fmt.Sprintf("%s, %d raw lines: the rule engine alone (convert) ≥ %.0fk raw lines per CPU-second", f, r.RawLines, RulesTarget/1e3),
				fmt.Sprintf("%.0f lines per CPU-second (%.2f CPU s)", perCore, r.RulesCPU), status(perCore >= RulesTarget)})
		}
		if r.CPUSeconds > 0 {
			out = append(out, Target{fmt.Sprintf("%s, %d raw lines: the whole ingest's raw lines per CPU-second (report)", f, r.RawLines),
				fmt.Sprintf("%.0f lines per CPU-second (%.2f CPU s: rules, tables, DuckDB)", float64(r.RawLines)/r.CPUSeconds, r.CPUSeconds), "-"})
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
	for _, v := range ViewVerdicts(results) {
		out = append(out, Target{fmt.Sprintf("%s, %d events: every view ≤ %.1f× ingest", v.Format, v.Events, ViewRatioTarget),
			fmt.Sprintf("slowest %s %.3f× (%.2f s / %.2f s)", v.Slowest, v.Ratio, v.Seconds, v.Ingest), status(v.Beyond == 0)})
	}
	if haveBTF {
		out = append(out, Target{"DB size per million events (report)", strings.TrimSpace(fmt.Sprintf("%.1f MB (read_csv's plain table: %.1f MB)",
			float64(btf.DBBytes)/mb/(float64(btf.Events)/1e6), float64(btf.BaseDBBytes)/mb/(float64(btf.Events)/1e6))), "-"})
	}
	return out
}
