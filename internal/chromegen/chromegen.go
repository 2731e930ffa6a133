// Package chromegen writes Chrome trace event JSON of a simulated browser
// (a browser process with a main and an IO thread, a renderer with a main
// and a compositor thread) and returns what it wrote as truth: every
// slice with its thread, depth and exact times, every counter value. It
// writes the sample samples/chrome/app.json and the benchmark traces of
// ingest/chrome, whose tests compare the ingested tables with the truth.
package chromegen

import (
	"bufio"
	"fmt"
	"io"
	"sort"
)

// Config says what to write.
type Config struct {
	Seed  uint64
	Tasks int // top-level tasks per thread
}

// Slice is one slice as the generator lived it. Times in ns.
type Slice struct {
	PID, TID   int
	Name       string
	Start, End int64
	Depth      int
	Truncated  bool // never ended: ends at the end of the trace
}

// Value is one counter sample.
type Value struct {
	PID             int
	Counter, Series string
	TS              int64
	Value           string
}

// Truth is what a trace holds.
type Truth struct {
	Events   int // events that are not metadata
	Slices   []Slice
	Values   []Value
	Async    []Slice // nestable async slices: TID holds the id, Depth the depth in the track
	FirstTS  int64
	LastTS   int64 // the largest event time
	TraceEnd int64 // the largest time of any event or slice end
}

type rng struct{ s uint64 }

// next is splitmix64: the same numbers on every platform and Go version.
func (r *rng) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func (r *rng) intn(n int) int { return int(r.next() % uint64(n)) }

// thread of the simulated browser; how it writes its slices.
type thread struct {
	pid, tid int
	name     string
	style    int // styleBE, styleXBegin (where they begin), styleXEnd (where they end, children first)
	t        int64
}

const (
	styleBE = iota
	styleXBegin
	styleXEnd
)

var childNames = []string{"Layout", "Paint", "V8.Execute", "ParseHTML", "UpdateLayerTree", "Commit", "Decode", "Style"}

type event struct {
	ts   int64 // for ordering the output: the time the writer wrote it
	ord  int   // then the order it was made in
	text string
}

// us writes ns as microseconds with three decimals.
func us(ns int64) string { return fmt.Sprintf("%d.%03d", ns/1000, ns%1000) }

// Write writes a trace and returns its truth:
//  1. Each thread runs cfg.Tasks top-level tasks ("RunTask") separated by
//     idle gaps; a task holds up to three children, each up to two of its
//     own, packed inside it with gaps. The browser main thread writes
//     them as B/E pairs, the IO and compositor threads as complete events
//     where they begin (Chrome's way), the renderer main thread as
//     complete events where they end (children first, as clang's
//     -ftime-trace writes them).
//  2. Each renderer task samples a JSHeap counter (used, total); the
//     browser samples an fps counter.
//  3. Every IO task makes a network request, an async slice "Request"
//     (category net, its own id) holding "DNS" then "Response"; every
//     IO task posts a flow (s) that ends (f) in the next browser task.
//  4. VSync global instants every 16.667 ms; a cc::Layer object created,
//     snapshot and deleted per renderer task.
//  5. The browser main thread begins a "Shutdown" slice it never ends.
//  6. Metadata (names, sort index) last, as Chrome writes it.
//
// Events are written in the order of the time they were written (a
// complete event in end order at its end), threads interleaved.
func Write(w io.Writer, cfg Config) (Truth, error) {
	r := &rng{s: cfg.Seed}
	threads := []*thread{
		{pid: 1, tid: 1, name: "CrBrowserMain", style: styleBE},
		{pid: 1, tid: 2, name: "Chrome_IOThread", style: styleXBegin},
		{pid: 2, tid: 3, name: "CrRendererMain", style: styleXEnd},
		{pid: 2, tid: 4, name: "Compositor", style: styleXBegin},
	}
	var tr Truth
	var evs []event
	// add writes an event with ts as its "ts" field; key is when the
	// writer writes it (ts, but the end of a complete event written where
	// it ends).
	first := true
	add := func(key, ts int64, format string, args ...any) {
		evs = append(evs, event{ts: key, ord: len(evs), text: fmt.Sprintf(format, append([]any{us(ts)}, args...)...)})
		tr.Events++
		if first || ts < tr.FirstTS {
			tr.FirstTS = ts
		}
		if first || ts > tr.LastTS {
			tr.LastTS = ts
		}
		first = false
	}
	asyncID := 0
	var flows []int64 // flow ids posted by IO tasks, not yet received
	layer := 0
	base := int64(1_000_000_000) // 1 s: times are not rebased
	for _, th := range threads {
		th.t = base + int64(r.intn(50_000))
	}
	for task := 0; task < cfg.Tasks; task++ {
		for _, th := range threads {
			th.t += int64(200_000 + r.intn(2_000_000)) // idle before the task
			start := th.t
			dur := int64(300_000 + r.intn(4_000_000))
			end := start + dur
			// The tree of the task: slices with depth, in begin order.
			type node struct {
				name       string
				start, end int64
				depth      int
				args       string
			}
			nodes := []node{{"RunTask", start, end, 0, fmt.Sprintf(`{"src_func":"Task%d"}`, r.intn(20))}}
			var grow func(lo, hi int64, depth int)
			grow = func(lo, hi int64, depth int) {
				n := r.intn(3) + 1
				if depth > 1 {
					n = r.intn(3)
				}
				span := (hi - lo) / int64(n+1)
				for i := 0; i < n && span > 4000; i++ {
					s := lo + int64(i)*span + int64(r.intn(int(span/4)))
					e := s + span/2 + int64(r.intn(int(span/4)))
					nodes = append(nodes, node{childNames[r.intn(len(childNames))], s, e, depth, "{}"})
					if depth < 2 {
						grow(s, e, depth+1)
					}
				}
			}
			grow(start, end, 1)
			cat := "toplevel"
			for _, n := range nodes {
				tr.Slices = append(tr.Slices, Slice{PID: th.pid, TID: th.tid, Name: n.name, Start: n.start, End: n.end, Depth: n.depth})
			}
			switch th.style {
			case styleBE:
				// B/E: a depth-first walk, closing what ends before each start.
				var open []node
				for _, n := range nodes {
					for len(open) > 0 && open[len(open)-1].end <= n.start {
						o := open[len(open)-1]
						add(o.end, o.end, `{"ts":%s,"cat":%q,"name":%q,"ph":"E","pid":%d,"tid":%d}`, cat, o.name, th.pid, th.tid)
						open = open[:len(open)-1]
					}
					add(n.start, n.start, `{"ts":%s,"cat":%q,"name":%q,"ph":"B","pid":%d,"tid":%d,"args":%s}`, cat, n.name, th.pid, th.tid, n.args)
					open = append(open, n)
					cat = "blink"
				}
				for i := len(open) - 1; i >= 0; i-- {
					o := open[i]
					add(o.end, o.end, `{"ts":%s,"cat":"blink","name":%q,"ph":"E","pid":%d,"tid":%d}`, o.name, th.pid, th.tid)
				}
				if len(flows) > 0 {
					id := flows[0]
					flows = flows[1:]
					add(start, start, `{"ts":%s,"cat":"ipc","name":"PostTask","ph":"f","bp":"e","id":"0x%x","pid":1,"tid":1}`, id)
				}
				fps, tenth := 55+r.intn(5), r.intn(10)
				add(start, start, `{"ts":%s,"cat":"gpu","name":"fps","ph":"C","pid":1,"args":{"value":%d.%d}}`, fps, tenth)
				v := fmt.Sprintf("%d.%d", fps, tenth)
				if tenth == 0 {
					v = fmt.Sprint(fps) // 57.0 is the value 57
				}
				tr.Values = append(tr.Values, Value{PID: 1, Counter: "fps", Series: "value", TS: start, Value: v})
			case styleXBegin, styleXEnd:
				for i, n := range nodes {
					c := "blink"
					if i == 0 {
						c = "toplevel"
					}
					when := n.start
					if th.style == styleXEnd {
						when = n.end
					}
					add(when, n.start, `{"ts":%s,"cat":%q,"name":%q,"ph":"X","pid":%d,"tid":%d,"dur":%s,"args":%s}`, c, n.name, th.pid, th.tid, us(n.end-n.start), n.args)
				}
			}
			if th.tid == 2 {
				// A network request made by the IO task, and a task posted
				// to the browser main thread.
				asyncID++
				rq := start + 1000
				dns := rq + int64(10_000+r.intn(100_000))
				resp := dns + int64(50_000+r.intn(500_000))
				done := resp + int64(100_000+r.intn(3_000_000))
				add(rq, rq, `{"ts":%s,"cat":"net","name":"Request","ph":"b","id":"0x%x","pid":1,"tid":2,"args":{"url":"https://example.com/%d"}}`, asyncID, asyncID)
				add(rq, rq, `{"ts":%s,"cat":"net","name":"DNS","ph":"b","id":"0x%x","pid":1,"tid":2}`, asyncID)
				add(dns, dns, `{"ts":%s,"cat":"net","name":"DNS","ph":"e","id":"0x%x","pid":1,"tid":2}`, asyncID)
				add(resp, resp, `{"ts":%s,"cat":"net","name":"Response","ph":"b","id":"0x%x","pid":1,"tid":2}`, asyncID)
				add(done, done, `{"ts":%s,"cat":"net","name":"Response","ph":"e","id":"0x%x","pid":1,"tid":2}`, asyncID)
				add(done, done, `{"ts":%s,"cat":"net","name":"Request","ph":"e","id":"0x%x","pid":1,"tid":2,"args":{"status":200}}`, asyncID)
				tr.Async = append(tr.Async,
					Slice{PID: 1, TID: asyncID, Name: "Request", Start: rq, End: done, Depth: 0},
					Slice{PID: 1, TID: asyncID, Name: "DNS", Start: rq, End: dns, Depth: 1},
					Slice{PID: 1, TID: asyncID, Name: "Response", Start: resp, End: done, Depth: 1})
				id := int64(0x1000 + asyncID)
				flows = append(flows, id)
				add(start+500, start+500, `{"ts":%s,"cat":"ipc","name":"PostTask","ph":"s","id":"0x%x","pid":1,"tid":2}`, id)
			}
			if th.tid == 3 {
				used := 4_000_000 + r.intn(8_000_000)
				add(start, start, `{"ts":%s,"cat":"v8","name":"JSHeap","ph":"C","pid":2,"args":{"used":%d,"total":%d}}`, used, 16_000_000)
				tr.Values = append(tr.Values, Value{PID: 2, Counter: "JSHeap", Series: "used", TS: start, Value: fmt.Sprint(used)},
					Value{PID: 2, Counter: "JSHeap", Series: "total", TS: start, Value: "16000000"})
				layer++
				add(start+1, start+1, `{"ts":%s,"cat":"cc","name":"cc::Layer","ph":"N","id":"0x%x","pid":2,"tid":3}`, layer)
				add(start+2, start+2, `{"ts":%s,"cat":"cc","name":"cc::Layer","ph":"O","id":"0x%x","pid":2,"tid":3,"args":{"snapshot":{"bounds":[%d,%d]}}}`, layer, 100+r.intn(900), 100+r.intn(900))
				add(end, end, `{"ts":%s,"cat":"cc","name":"cc::Layer","ph":"D","id":"0x%x","pid":2,"tid":3}`, layer)
				if r.intn(4) == 0 {
					add(start+3, start+3, `{"ts":%s,"cat":"v8","name":"MinorGC","ph":"i","s":"t","pid":2,"tid":3,"args":{"freed":%d}}`, r.intn(1<<20))
				}
			}
			th.t = end
		}
	}
	// VSync over the whole span; Shutdown begins after the browser's last
	// task and never ends.
	var last int64
	for _, e := range evs {
		last = max(last, e.ts)
	}
	for t := base; t <= last; t += 16_667_000 {
		add(t, t, `{"ts":%s,"cat":"gpu","name":"VSync","ph":"i","s":"g","pid":1,"tid":1}`)
	}
	shut := threads[0].t + 1000
	add(shut, shut, `{"ts":%s,"cat":"toplevel","name":"Shutdown","ph":"B","pid":1,"tid":1}`)

	sort.SliceStable(evs, func(i, j int) bool {
		if evs[i].ts != evs[j].ts {
			return evs[i].ts < evs[j].ts
		}
		return evs[i].ord < evs[j].ord
	})
	tr.TraceEnd = tr.LastTS
	for _, s := range tr.Slices {
		tr.TraceEnd = max(tr.TraceEnd, s.End)
	}
	tr.Slices = append(tr.Slices, Slice{PID: 1, TID: 1, Name: "Shutdown", Start: shut, End: tr.TraceEnd, Depth: 0, Truncated: true})

	bw := bufio.NewWriter(w)
	bw.WriteString(`{"traceEvents":[` + "\n")
	for _, e := range evs {
		bw.WriteString(e.text)
		bw.WriteString(",\n")
	}
	for _, th := range threads {
		fmt.Fprintf(bw, `{"cat":"__metadata","name":"thread_name","ph":"M","pid":%d,"tid":%d,"ts":0,"args":{"name":%q}},`+"\n", th.pid, th.tid, th.name)
	}
	fmt.Fprintf(bw, `{"cat":"__metadata","name":"process_name","ph":"M","pid":1,"tid":0,"ts":0,"args":{"name":"Browser"}},`+"\n")
	fmt.Fprintf(bw, `{"cat":"__metadata","name":"process_name","ph":"M","pid":2,"tid":0,"ts":0,"args":{"name":"Renderer"}},`+"\n")
	fmt.Fprintf(bw, `{"cat":"__metadata","name":"process_sort_index","ph":"M","pid":2,"tid":0,"ts":0,"args":{"sort_index":-1}}`+"\n")
	bw.WriteString(`],"displayTimeUnit":"ms","otherData":{"generator":"traceduck internal/chromegen"}}` + "\n")
	return tr, bw.Flush()
}
