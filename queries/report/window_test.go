package report_test

import (
	"bufio"
	"bytes"
	"context"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/queries/report"
)

// btfLine is a data line of a generated BTF trace: time, process (the
// target), its instance and the action.
type btfLine struct {
	ts             int64
	kind, name     string
	instance, verb string
}

func btfLines(t testing.TB, trace []byte) []btfLine {
	t.Helper()
	var out []btfLine
	sc := bufio.NewScanner(bytes.NewReader(trace))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		f := strings.Split(line, ",")
		if len(f) < 7 {
			continue
		}
		ts, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		out = append(out, btfLine{ts, f[3], f[4], f[5], f[6]})
	}
	return out
}

// windowRecount is what the raw lines of a trace say of the window
// [lo, hi): each process's running time inside it (running from start,
// resume or run to preempt, terminate, wait or poll, clipped to the
// window), the responses of the instances activated and terminated inside
// it, and the events inside.
type windowRecount struct {
	running   map[string]int64
	responses map[string][]int64
	events    int64
}

func recountWindow(lines []btfLine, lo, hi int64) windowRecount {
	out := windowRecount{running: map[string]int64{}, responses: map[string][]int64{}}
	since := map[[2]string]int64{}
	act := map[[2]string]int64{}
	for _, l := range lines {
		if l.ts >= lo && l.ts < hi {
			out.events++
		}
		if l.kind != "T" && l.kind != "I" {
			continue
		}
		k := [2]string{l.name, l.instance}
		switch l.verb {
		case "activate":
			act[k] = l.ts
		case "start", "resume", "run":
			since[k] = l.ts
		}
		switch l.verb {
		case "preempt", "terminate", "wait", "poll":
			if s, ok := since[k]; ok {
				a, b := max(s, lo), min(l.ts, hi)
				if b > a {
					out.running[l.name] += b - a
				}
				delete(since, k)
			}
		}
		if l.verb == "terminate" {
			if a, ok := act[k]; ok && a >= lo && l.ts <= hi {
				out.responses[l.name] = append(out.responses[l.name], l.ts-a)
			}
			delete(act, k)
		}
	}
	return out
}

// TestReportWindow checks report --from/--to against the traces' raw
// lines: running shares count the part of each running interval inside
// the window, over the window's length; responses are those of the
// instances wholly inside (one the window cuts is left out, as one the
// trace cuts); event rates count the events inside. The recount itself
// is checked first against the generator's truth, over the whole trace.
func TestReportWindow(t *testing.T) {
	ctx := context.Background()
	db, gens, _ := regressionDB(t)
	lines := make([][]btfLine, len(gens))
	for i, g := range gens {
		lines[i] = btfLines(t, g.Trace)
		whole := recountWindow(lines[i], -1<<62, 1<<62)
		for name, ns := range g.Truth.Running {
			if whole.running[name] != ns {
				t.Fatalf("%s: the recount gives %s %d ns running, the generator %d", g.Name, name, whole.running[name], ns)
			}
		}
	}
	first := lines[0][0].ts
	last := lines[0][len(lines[0])-1].ts
	span := last - first
	// Windows whose edges fall inside instances and running intervals:
	// thirds of the trace, not round numbers.
	from, to := span/3+7, 2*span/3+11
	for _, tc := range []struct {
		name string
		w    report.Window
		lo   func(i int) int64
		hi   func(i int) int64
	}{
		{"relative", report.Window{From: &from, To: &to, Relative: true},
			func(i int) int64 { return lines[i][0].ts + from }, func(i int) int64 { return lines[i][0].ts + to }},
		{"absolute-from", report.Window{From: ptr(first + from)},
			func(int) int64 { return first + from }, func(i int) int64 { return lines[i][len(lines[i])-1].ts }},
		{"absolute-to", report.Window{To: ptr(first + to)},
			func(i int) int64 { return lines[i][0].ts }, func(int) int64 { return first + to }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := tc.w
			rep, err := report.Build(ctx, db.SQL(), report.Options{Database: "runs.duckdb", Baseline: "v1", Window: &w})
			if err != nil {
				t.Fatal(err)
			}
			for i, g := range gens {
				id := int32(i + 1)
				lo, hi := tc.lo(i), tc.hi(i)
				rc := recountWindow(lines[i], lo, hi)
				if tc.w.To == nil {
					// no upper bound: the last event is in
					rc.events = recountWindow(lines[i], lo, hi+1).events
				}
				run := rep.Runs[i]
				if run.ID != id || run.FirstTS != lo || run.LastTS != hi || run.Duration != hi-lo || run.Events != rc.events {
					t.Errorf("%s: run %+v, want first %d, last %d, %d events", g.Name, run, lo, hi, rc.events)
				}
				if v, ok := rep.Value("event_rate", "", id); !ok || !near(v.Value, float64(rc.events)/(float64(hi-lo)/1e9)) {
					t.Errorf("%s: event_rate %+v, want %g", g.Name, v, float64(rc.events)/(float64(hi-lo)/1e9))
				}
				for name, ns := range rc.running {
					want := float64(ns) / float64(hi-lo)
					if v, ok := rep.Value("running_share", name, id); !ok || !near(v.Value, want) {
						t.Errorf("%s: running_share of %s %+v, want %g (%d ns of %d)", g.Name, name, v, want, ns, hi-lo)
					}
				}
				if len(rc.responses) == 0 {
					t.Fatalf("%s: no instance inside the window", g.Name)
				}
				for name, rs := range rc.responses {
					sort.Slice(rs, func(a, b int) bool { return rs[a] < rs[b] })
					for _, m := range []struct {
						metric string
						want   int64
					}{{"response_p50", nearestRank(rs, 0.5)}, {"response_p99", nearestRank(rs, 0.99)}, {"response_max", rs[len(rs)-1]}} {
						if v, ok := rep.Value(m.metric, name, id); !ok || v.Value != float64(m.want) {
							t.Errorf("%s: %s of %s %+v, want %d (%d instances inside)", g.Name, m.metric, name, v, m.want, len(rs))
						}
					}
				}
			}
		})
	}
	// The report's connection goes back to the pool as it was: the next
	// report, without a window, sees whole runs.
	rep, err := report.Build(ctx, db.SQL(), report.Options{Database: "runs.duckdb"})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Runs[0].Events != int64(len(lines[0])) {
		t.Errorf("after a windowed report, run 1 has %d events, want %d", rep.Runs[0].Events, len(lines[0]))
	}
}

func ptr(v int64) *int64 { return &v }
