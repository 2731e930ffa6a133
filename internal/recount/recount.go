// Package recount is the second opinion on traceduck's numbers: small
// state machines over a trace file's raw lines or bytes (one per format,
// written by the engineers who moved each format to the CPU model) that
// count, without traceduck's code, what the file says of its CPUs and
// tasks. The per-format tests and the cross-format conformance matrix
// (internal/conformance) compare traceduck's views with these counts.
//
// It must stay independent of traceduck: plain Go over the file, no
// import of the ingesters, the schema or the queries.
//
// Every recount gives its answers to the same eight questions (Answers);
// the questions and what each format can tell are in docs/semantics.md.
package recount

import (
	"fmt"
	"sort"
	"strconv"
)

// Sum is a count of things and their summed length (ns).
type Sum struct{ N, NS int64 }

// Held is a CPU and what held it: a holder's name as both sides key it
// ("idle" when nothing runs), and whether the CPU was busy then (an idle
// task holds its CPU idle).
type Held struct {
	CPU, Holder string
	Busy        bool
}

// Answers are a trace's answers to the conformance questions, keyed by
// names traceduck gives (or keys both sides compute, such as QNX's
// "pid/tid"). Only complete intervals count (one cut by the start or end
// of the trace, or by lost events, is left out, as the views leave out
// truncated ones). A nil map: the recount does not answer that question.
type Answers struct {
	CPUBusy   map[string]int64 // Q1: per CPU, ns held by anything but nothing or an idle task
	CPUHeld   map[Held]int64   // Q2: per CPU and holder, ns held
	Running   map[string]int64 // Q3: per task, ISR or thread, ns running
	Instances map[string]Sum   // Q4: per task, complete instances and their summed response
	Latency   map[string]Sum   // Q5: per task, complete waits for a CPU and their summed latency
	Holds     map[string]Sum   // Q6: per "RESOURCE HOLDER", complete holds of a resource and their summed length
	Waits     map[string]Sum   // Q7: per "RESOURCE WAITER", complete waits for a resource and their summed length
	// Q8: per "client -> server", complete round trips (send, receive,
	// reply) and their summed total time (docs/semantics.md, "Messages:
	// round trips")
	RoundTrips map[string]Sum
}

// Interval is one scheduling-state interval of a task, ISR or thread,
// with its scheduling class (queries/sched.sql, sched_class): running,
// ready, waiting or blocked.
type Interval struct {
	Object     string
	Class      string
	Start, End int64
	Truncated  bool
}

// Sched derives running time, instances and waits for a CPU from
// scheduling-state intervals by the definitions docs/semantics.md and
// queries/sched.sql give for every format but BTF (which numbers its
// instances itself):
//   - running: the summed complete running intervals;
//   - an instance: a maximal run of contiguous intervals that are not
//     blocked, after a blocked one or a gap (or the object's first),
//     from its first interval's start to its last one's end; it is cut
//     (left out) when one of its intervals is;
//   - a wait: a maximal run of contiguous ready intervals that the next
//     interval, running, follows at once; from its first start to that
//     running start; left out when one of its intervals is cut.
//
// The intervals of an object are taken in the order start, end, then as
// given (the order of the events that opened them).
func Sched(ivs []Interval) (running map[string]int64, inst, lat map[string]Sum) {
	running, inst, lat = map[string]int64{}, map[string]Sum{}, map[string]Sum{}
	by := map[string][]Interval{}
	for _, iv := range ivs {
		by[iv.Object] = append(by[iv.Object], iv)
	}
	for obj, l := range by {
		sort.SliceStable(l, func(i, j int) bool {
			return l[i].Start < l[j].Start || l[i].Start == l[j].Start && l[i].End < l[j].End
		})
		// instances
		var open bool
		var start, end int64
		var cut bool
		flush := func() {
			if open && !cut {
				s := inst[obj]
				inst[obj] = Sum{s.N + 1, s.NS + end - start}
			}
			open = false
		}
		for i, iv := range l {
			if iv.Class == "running" && !iv.Truncated {
				running[obj] += iv.End - iv.Start
			}
			if iv.Class == "blocked" {
				flush()
				continue
			}
			if i == 0 || l[i-1].Class == "blocked" || l[i-1].End != iv.Start {
				flush()
				open, start, end, cut = true, iv.Start, iv.End, false
			}
			end = max(end, iv.End)
			cut = cut || iv.Truncated
		}
		flush()
		// waits
		for i := 0; i < len(l); i++ {
			if l[i].Class != "ready" {
				continue
			}
			j, wcut := i, l[i].Truncated
			for j+1 < len(l) && l[j+1].Class == "ready" && l[j].End == l[j+1].Start {
				j++
				wcut = wcut || l[j].Truncated
			}
			if j+1 < len(l) && l[j+1].Class == "running" && l[j+1].Start == l[j].End && !wcut {
				s := lat[obj]
				lat[obj] = Sum{s.N + 1, s.NS + l[j].End - l[i].Start}
			}
			i = j
		}
	}
	return running, inst, lat
}

// addSum counts one more thing of ns in m[k].
func addSum(m map[string]Sum, k string, ns int64) {
	s := m[k]
	m[k] = Sum{s.N + 1, s.NS + ns}
}

// Holds is what ReadFtrace and ReadDTrace count of a trace's CPUs (each
// one's comment says its holders and intervals). Complete intervals
// only: one open at the last line is not counted.
type Holds struct {
	// Busy, Known: per CPU, the ns held by anything but its idle task or
	// thread, and by anything.
	Busy, Known map[int]int64
	// Held: per CPU, the ns each holder held it.
	Held map[int]map[string]int64
	// Running: per thread, the ns of its complete runs.
	Running map[string]int64
	// Handlers: per interrupt, the count and ns of its complete handler
	// intervals.
	Handlers map[string][2]int64
	// Unknown: per CPU, the ns in which nothing says what it runs
	// (interrupts aside).
	Unknown map[int]int64
}

// Rows writes the counts as rows "cpu N | busy | known", "cpu N |
// holder | ns", "thread | ns" and "interrupt | count | ns", the form of
// the views' rows they are compared with.
func (h Holds) Rows() (busy, held, running, handlers []string) {
	for n, k := range h.Known {
		busy = append(busy, fmt.Sprintf("cpu %d | %d | %d", n, h.Busy[n], k))
	}
	for n, hs := range h.Held {
		for who, ns := range hs {
			held = append(held, fmt.Sprintf("cpu %d | %s | %d", n, who, ns))
		}
	}
	for th, ns := range h.Running {
		running = append(running, fmt.Sprintf("%s | %d", th, ns))
	}
	for ir, c := range h.Handlers {
		handlers = append(handlers, fmt.Sprintf("%s | %d | %d", ir, c[0], c[1]))
	}
	return busy, held, running, handlers
}

func newHolds() Holds {
	return Holds{Busy: map[int]int64{}, Known: map[int]int64{}, Held: map[int]map[string]int64{},
		Running: map[string]int64{}, Handlers: map[string][2]int64{}, Unknown: map[int]int64{}}
}

// cpuAnswers are the answers Q1 and Q2 of per-CPU counts: CPU n is
// named prefix+n; busy tells the holders that keep a CPU busy.
func cpuAnswers(prefix string, busy map[int]int64, held map[int]map[string]int64, isBusy func(holder string) bool) Answers {
	a := Answers{CPUBusy: map[string]int64{}, CPUHeld: map[Held]int64{}}
	for n, ns := range busy {
		a.CPUBusy[prefix+strconv.Itoa(n)] = ns
	}
	for n, hs := range held {
		for h, ns := range hs {
			a.CPUHeld[Held{prefix + strconv.Itoa(n), h, isBusy(h)}] += ns
		}
	}
	return a
}

// hold counts d ns of holder on CPU n: in held, in known, and in busy
// when the holder keeps the CPU busy.
func hold(held map[int]map[string]int64, known, busy map[int]int64, n int, holder string, d int64, isBusy bool) {
	if held[n] == nil {
		held[n] = map[string]int64{}
	}
	held[n][holder] += d
	known[n] += d
	if isBusy {
		busy[n] += d
	}
}

// entry returns m[k], made when absent.
func entry[K comparable, V any](m map[K]*V, k K) *V {
	v := m[k]
	if v == nil {
		v = new(V)
		m[k] = v
	}
	return v
}
