package tracegen

import (
	"bytes"
	"fmt"
	"math/big"
	"math/rand"
	"os"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/internal/qnxenc"
)

func genQNX(t testing.TB, cfg QNXConfig) (qnxenc.Header, []qnxenc.Event, QNXTruth) {
	t.Helper()
	h, ev, tr, err := GenerateQNX(cfg)
	if err != nil {
		t.Fatalf("GenerateQNX(%+v): %v", cfg, err)
	}
	return h, ev, tr
}

// qnxConfigs are the configurations the checks run over.
var qnxConfigs = []QNXConfig{
	{Events: 3000, CPUs: 1, Seed: 1, StartCycles: 0x000037b0_fff00000},
	{Events: 20000, CPUs: 2, Seed: 2},
	{Events: 120000, CPUs: 2, Procs: 4, Seed: 3},
	{Events: 60000, CPUs: 4, Procs: 7, Seed: 4},
	{Events: 30000, CPUs: 3, Procs: 1, Seed: 5},
	{Events: 30000, CPUs: 1, Procs: 2, Seed: 6, CyclesPerSec: 1_000_000_007, StartCycles: 0xffff_fff0_0000},
	{Events: 100000, CPUs: 8, Procs: 12, Seed: 7, CyclesPerSec: 33_333_333, StartCycles: 0x1234_ffd0_0000},
}

func TestQNXDeterminism(t *testing.T) {
	cfg := QNXConfig{Events: 30000, CPUs: 3, Seed: 42}
	ha, a, ta := genQNX(t, cfg)
	hb, b, tb := genQNX(t, cfg)
	if !reflect.DeepEqual(ha, hb) || !reflect.DeepEqual(a, b) {
		t.Fatal("same config produced different traces")
	}
	if !reflect.DeepEqual(ta, tb) {
		t.Fatal("same config produced different truth")
	}
	cfg.Seed = 43
	_, c, _ := genQNX(t, cfg)
	if reflect.DeepEqual(a, c) {
		t.Fatal("different seeds produced identical traces")
	}
}

func TestQNXConfigErrors(t *testing.T) {
	for _, cfg := range []QNXConfig{
		{Events: 0, CPUs: 1},
		{Events: 10, CPUs: 0},
		{Events: 10, CPUs: 33},
		{Events: 10, CPUs: 1, Procs: -1},
		{Events: 10, CPUs: 1, CyclesPerSec: 999},
		{Events: 10, CPUs: 1, StartCycles: 1 << 63},
		{Events: 1000, CPUs: 1, CyclesPerSec: 1_000_000, StartCycles: 1<<63 - 1000},
	} {
		if _, _, _, err := GenerateQNX(cfg); err == nil {
			t.Errorf("GenerateQNX(%+v): expected an error", cfg)
		}
	}
}

func TestQNXCyclesToNS(t *testing.T) {
	bigNS := func(c, cps uint64) int64 {
		x := new(big.Int).SetUint64(c)
		x.Mul(x, big.NewInt(1_000_000_000))
		x.Quo(x, new(big.Int).SetUint64(cps))
		return x.Int64()
	}
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 100000; i++ {
		cps := uint64(1_000_000 + r.Int63n(10_000_000_000))
		c := uint64(r.Int63()) >> uint(r.Intn(40))
		if !QNXCyclesToNSOK(c, cps) {
			continue
		}
		if got, want := QNXCyclesToNS(c, cps), bigNS(c, cps); got != want {
			t.Fatalf("QNXCyclesToNS(%d, %d) = %d, want %d", c, cps, got, want)
		}
	}
	// the default rate does not divide 1e9: consecutive cycles round differently
	if QNXCyclesToNS(0x000037b0_f0000000, qnxDefaultCPS) != bigNS(0x000037b0_f0000000, qnxDefaultCPS) {
		t.Fatal("default start")
	}
	if QNXCyclesToNSOK(1<<63, qnxDefaultCPS) || QNXCyclesToNSOK(1, 0) {
		t.Fatal("QNXCyclesToNSOK accepts an overflow")
	}
}

// ---- an independent interpreter of the events ----

func qnxKey(e *qnxenc.Event) string {
	switch e.Class {
	case "KER_CALL", "KER_EXIT":
		n := e.Name
		if i := strings.Index(n, "/"); i >= 0 {
			n = n[:i]
		}
		return e.Class + "/" + n
	case "INT_ENTR", "INT_EXIT", "INT_HANDLER_ENTR", "INT_HANDLER_EXIT":
		return "INT/" + e.Class
	}
	return e.Class + "/" + e.Name
}

func field(t testing.TB, e *qnxenc.Event, key string) string {
	for _, f := range e.Fields {
		if f.Key == key {
			return f.Value
		}
	}
	t.Fatalf("event %+v has no field %q", e, key)
	return ""
}

func atoiT(t testing.TB, s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// callOf splits a kernel call event's name NAME/NN; KER_CALL and KER_EXIT
// match by the number (traceprinter prints SYNC_CONDVAR_SIGNAL/83's exit as
// SYNC_CONDVAR_SIG/83).
func callOf(t testing.TB, e *qnxenc.Event) (string, int) {
	name, num, ok := strings.Cut(e.Name, "/")
	n, err := strconv.Atoi(num)
	if !ok || err != nil {
		t.Fatalf("kernel call name %q", e.Name)
	}
	return name, n
}

func vector(t testing.TB, e *qnxenc.Event) int {
	v, err := strconv.ParseUint(strings.TrimPrefix(e.Name, "0x"), 16, 32)
	if err != nil {
		t.Fatalf("vector of %+v: %v", e, err)
	}
	return int(v)
}

// interpretQNX recomputes the truth from the events alone, the way
// traceduck's state machine and CPU model are specified to (knowing the
// 64-bit cycles), for a trace of cpus CPUs.
func interpretQNX(t testing.TB, cps uint64, cpus int, events []qnxenc.Event) QNXTruth {
	ns := func(c uint64) int64 {
		x := new(big.Int).SetUint64(c)
		x.Mul(x, big.NewInt(1_000_000_000))
		return x.Quo(x, new(big.Int).SetUint64(cps)).Int64()
	}
	type open struct {
		state      string
		pid, tid   int
		cpu        int
		start      int64
		seq        int
		registered bool
		num        int
	}
	type ivs struct {
		iv  QNXInterval
		seq int
	}
	running := map[int]string{}
	ints := map[int][]open{}
	tr := QNXTruth{
		Events:        len(events),
		EventCounts:   map[string]int{},
		RunningPerCPU: map[int]map[string]int64{},
		InterruptNS:   map[int]int64{},
		CPUHolders:    map[int]map[string]int64{},
		CPUBusyNS:     map[int]int64{},
		CPUIdleNS:     map[int]int64{},
		CPUOpen:       map[int]QNXHold{},
	}
	idle := map[string]bool{}
	for k := 1; k <= cpus; k++ {
		tr.IdleThreads = append(tr.IdleThreads, "1/"+strconv.Itoa(k))
		idle["1/"+strconv.Itoa(k)] = true
	}
	// the CPU model: each CPU's thread, what holds it since when
	cpuThread := map[int]string{}
	threadCPU := map[string]int{}
	show := func(c int, now int64) {
		h := cpuThread[c]
		if st := ints[c]; len(st) > 0 {
			h = "irq " + strconv.Itoa(st[len(st)-1].tid)
		}
		o, known := tr.CPUOpen[c]
		if known && o.Holder == h {
			return
		}
		if known {
			m := tr.CPUHolders[c]
			if m == nil {
				m = map[string]int64{}
				tr.CPUHolders[c] = m
			}
			m[o.Holder] += now - o.StartNS
			switch {
			case idle[o.Holder]:
				tr.CPUIdleNS[c] += now - o.StartNS
			case o.Holder != "":
				tr.CPUBusyNS[c] += now - o.StartNS
			}
		}
		tr.CPUOpen[c] = QNXHold{h, now}
	}
	leave := func(k string, now int64) {
		if d, ok := threadCPU[k]; ok {
			delete(threadCPU, k)
			delete(cpuThread, d)
			show(d, now)
		}
	}
	var states, calls []ivs
	threads := map[string]*open{}
	kcalls := map[string]*open{}
	close := func(k string, o *open, now int64) {
		states = append(states, ivs{QNXInterval{o.pid, o.tid, o.state, o.start, now, o.cpu}, o.seq})
		if o.state == "RUNNING" {
			m := tr.RunningPerCPU[o.cpu]
			if m == nil {
				m = map[string]int64{}
				tr.RunningPerCPU[o.cpu] = m
			}
			m[k] += now - o.start
		}
		delete(threads, k)
	}
	for i := range events {
		e := &events[i]
		now := ns(e.Cycles)
		tr.EventCounts[qnxKey(e)]++
		switch e.Class {
		case "THREAD":
			pid, tid := atoiT(t, field(t, e, "pid")), atoiT(t, field(t, e, "tid"))
			k := strconv.Itoa(pid) + "/" + strconv.Itoa(tid)
			o := threads[k]
			switch e.Name {
			case "THCREATE":
			case "THDESTROY":
				if o != nil {
					close(k, o, now)
				}
				leave(k, now)
			default:
				st := strings.TrimPrefix(e.Name, "TH")
				if o != nil && o.state == st && o.cpu == e.CPU {
					break
				}
				if o != nil {
					close(k, o, now)
				}
				threads[k] = &open{state: st, pid: pid, tid: tid, cpu: e.CPU, start: now, seq: i}
			}
			if e.Name == "THRUNNING" {
				running[e.CPU] = k
				if threadCPU[k] != e.CPU {
					leave(k, now)
				}
				if prev, ok := cpuThread[e.CPU]; ok && prev != k {
					delete(threadCPU, prev) // replaced
				}
				threadCPU[k], cpuThread[e.CPU] = e.CPU, k
				show(e.CPU, now)
			}
		case "KER_CALL":
			k := running[e.CPU]
			name, num := callOf(t, e)
			pid, _ := strconv.Atoi(strings.SplitN(k, "/", 2)[0])
			tid, _ := strconv.Atoi(strings.SplitN(k, "/", 2)[1])
			kcalls[k] = &open{state: name, registered: true, pid: pid, tid: tid, cpu: e.CPU, start: now, seq: i, num: num}
		case "KER_EXIT":
			k := running[e.CPU]
			_, num := callOf(t, e)
			if o := kcalls[k]; o != nil && o.num == num {
				calls = append(calls, ivs{QNXInterval{o.pid, o.tid, o.state, o.start, now, o.cpu}, o.seq})
				delete(kcalls, k)
			}
		case "INT_ENTR":
			ints[e.CPU] = append(ints[e.CPU], open{tid: vector(t, e), start: now})
			show(e.CPU, now)
		case "INT_EXIT":
			st := ints[e.CPU]
			top := st[len(st)-1]
			if top.tid != vector(t, e) {
				t.Fatalf("event %d: INT_EXIT of vector %d inside vector %d", i, vector(t, e), top.tid)
			}
			ints[e.CPU] = st[:len(st)-1]
			tr.InterruptNS[top.tid] += now - top.start
			show(e.CPU, now)
		}
	}
	sort.SliceStable(states, func(i, j int) bool { return states[i].seq < states[j].seq })
	sort.SliceStable(calls, func(i, j int) bool { return calls[i].seq < calls[j].seq })
	tr.ThreadStates = make([]QNXInterval, len(states))
	for i, v := range states {
		tr.ThreadStates[i] = v.iv
	}
	tr.KernelCalls = make([]QNXInterval, len(calls))
	for i, v := range calls {
		tr.KernelCalls[i] = v.iv
	}
	tr.FirstNS, tr.LastNS = ns(events[0].Cycles), ns(events[len(events)-1].Cycles)
	for i := 1; i < len(events); i++ {
		tr.Wraps += int(events[i].Cycles>>32 - events[i-1].Cycles>>32)
	}
	return tr
}

func diffIntervals(t *testing.T, what string, got, want []QNXInterval) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d intervals recomputed, truth has %d", what, len(got), len(want))
	}
	for i := 0; i < len(got) && i < len(want); i++ {
		if got[i] != want[i] {
			t.Errorf("%s[%d]: recomputed %+v, truth %+v", what, i, got[i], want[i])
			return
		}
	}
}

func TestQNXTruthConsistency(t *testing.T) {
	for _, cfg := range qnxConfigs {
		h, ev, tr := genQNX(t, cfg)
		cps, err := strconv.ParseUint(h.Attr("CYCLES_PER_SEC"), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		got := interpretQNX(t, cps, cfg.CPUs, ev)
		diffIntervals(t, "ThreadStates", got.ThreadStates, tr.ThreadStates)
		diffIntervals(t, "KernelCalls", got.KernelCalls, tr.KernelCalls)
		if !reflect.DeepEqual(got.RunningPerCPU, tr.RunningPerCPU) {
			t.Errorf("%+v: RunningPerCPU: recomputed %v\ntruth %v", cfg, got.RunningPerCPU, tr.RunningPerCPU)
		}
		if !reflect.DeepEqual(got.InterruptNS, tr.InterruptNS) {
			t.Errorf("%+v: InterruptNS: recomputed %v, truth %v", cfg, got.InterruptNS, tr.InterruptNS)
		}
		for _, c := range []struct {
			what      string
			got, want any
		}{{"CPUHolders", got.CPUHolders, tr.CPUHolders}, {"CPUBusyNS", got.CPUBusyNS, tr.CPUBusyNS}, {"CPUIdleNS", got.CPUIdleNS, tr.CPUIdleNS},
			{"CPUOpen", got.CPUOpen, tr.CPUOpen}, {"IdleThreads", got.IdleThreads, tr.IdleThreads}} {
			if !reflect.DeepEqual(c.got, c.want) {
				t.Errorf("%+v: %s: recomputed %v\ntruth %v", cfg, c.what, c.got, c.want)
			}
		}
		// what holds each CPU adds up to the time it is known, up to the
		// end; busy and idle-thread time add up to the threads' and
		// interrupts' holds
		for cpu, m := range tr.CPUHolders {
			var sum, threads int64
			for h, v := range m {
				sum += v
				if h != "" {
					threads += v
				}
			}
			if o := tr.CPUOpen[cpu]; sum > o.StartNS-tr.FirstNS || threads != tr.CPUBusyNS[cpu]+tr.CPUIdleNS[cpu] {
				t.Errorf("%+v: CPU %d held %d ns (threads and interrupts %d, busy %d, idle %d) before %d in a trace of %d..%d", cfg, cpu, sum, threads, tr.CPUBusyNS[cpu], tr.CPUIdleNS[cpu], o.StartNS, tr.FirstNS, tr.LastNS)
			}
		}
		if !reflect.DeepEqual(got.EventCounts, tr.EventCounts) {
			t.Errorf("%+v: EventCounts: recomputed %v\ntruth %v", cfg, got.EventCounts, tr.EventCounts)
		}
		if got.Events != tr.Events || got.FirstNS != tr.FirstNS || got.LastNS != tr.LastNS || got.Wraps != tr.Wraps {
			t.Errorf("%+v: recomputed events %d first %d last %d wraps %d, truth %d %d %d %d", cfg,
				got.Events, got.FirstNS, got.LastNS, got.Wraps, tr.Events, tr.FirstNS, tr.LastNS, tr.Wraps)
		}
		if tr.Events < cfg.Events || tr.Events > cfg.Events+200 {
			t.Errorf("%+v: %d events", cfg, tr.Events)
		}
		// the running time per CPU adds up to at most the trace's length
		for cpu, m := range tr.RunningPerCPU {
			var sum int64
			for _, v := range m {
				sum += v
			}
			if sum > tr.LastNS-tr.FirstNS {
				t.Errorf("%+v: CPU %d runs %d ns in a trace of %d ns", cfg, cpu, sum, tr.LastNS-tr.FirstNS)
			}
		}
	}
}

func TestQNXInvariants(t *testing.T) {
	for _, cfg := range qnxConfigs {
		_, ev, tr := genQNX(t, cfg)
		checkQNXInvariants(t, cfg, ev, tr)
	}
}

func checkQNXInvariants(t *testing.T, cfg QNXConfig, ev []qnxenc.Event, tr QNXTruth) {
	t.Helper()
	fail := func(i int, format string, args ...any) {
		t.Helper()
		t.Fatalf("%+v: event %d %+v: "+format, append([]any{cfg, i, ev[i]}, args...)...)
	}
	if len(ev) < 2 || ev[0].Class != "CONTROL" || ev[0].Name != "BUFFER" || ev[1].Class != "CONTROL" || ev[1].Name != "TIME" {
		t.Fatalf("%+v: the trace does not start with CONTROL BUFFER, CONTROL TIME", cfg)
	}
	if n := field(t, &ev[0], "num_events"); n != strconv.Itoa(len(ev)) {
		t.Errorf("num_events %s, %d events", n, len(ev))
	}
	runningOn := map[int]string{} // cpu -> thread running there
	cpuOf := map[string]int{}     // running thread -> cpu
	openCall := map[string]int{}  // thread -> number of its open kernel call + 1
	exited := map[string]bool{}   // threads that have made a kernel call or exit
	intDepth := map[int]int{}
	unmatched := 0
	for i := range ev {
		e := &ev[i]
		if i > 0 && e.Cycles < ev[i-1].Cycles {
			fail(i, "cycles go backwards")
		}
		if e.CPU < 0 || e.CPU >= cfg.CPUs {
			fail(i, "bad CPU")
		}
		ctx := runningOn[e.CPU]
		switch e.Class {
		case "THREAD":
			if intDepth[e.CPU] > 0 {
				fail(i, "thread event inside an interrupt")
			}
			k := field(t, e, "pid") + "/" + field(t, e, "tid")
			if e.Name == "THCREATE" {
				break
			}
			if c, ok := cpuOf[k]; ok { // leaving RUNNING
				if e.Name == "THRUNNING" {
					fail(i, "already running on CPU %d", c)
				}
				if c != e.CPU {
					fail(i, "thread running on CPU %d changes state on another CPU", c)
				}
				delete(cpuOf, k)
				delete(runningOn, c)
			}
			if e.Name == "THRUNNING" {
				if ctx != "" {
					fail(i, "CPU already runs %s", ctx)
				}
				runningOn[e.CPU], cpuOf[k] = k, e.CPU
			}
		case "KER_CALL", "KER_EXIT":
			if ctx == "" {
				fail(i, "kernel call with no thread running on its CPU")
			}
			if intDepth[e.CPU] > 0 {
				fail(i, "kernel call inside an interrupt")
			}
			_, num := callOf(t, e)
			if e.Class == "KER_CALL" {
				if c := openCall[ctx]; c != 0 {
					fail(i, "%s calls inside call %d", ctx, c-1)
				}
				openCall[ctx] = num + 1
			} else {
				if openCall[ctx] != num+1 {
					// only a call entered before the trace started may exit unmatched
					if exited[ctx] || openCall[ctx] != 0 {
						fail(i, "%s exits, open call %d", ctx, openCall[ctx]-1)
					}
					unmatched++
				}
				delete(openCall, ctx)
			}
			exited[ctx] = true
		case "INT_ENTR":
			if ctx == "" {
				fail(i, "interrupt with no thread running")
			}
			intDepth[e.CPU]++
		case "INT_EXIT":
			intDepth[e.CPU]--
			if intDepth[e.CPU] < 0 {
				fail(i, "INT_EXIT without INT_ENTR")
			}
		case "INT_HANDLER_ENTR", "INT_HANDLER_EXIT":
			if intDepth[e.CPU] == 0 {
				fail(i, "handler outside an interrupt")
			}
		case "COMM", "USREVENT":
			if ctx == "" {
				fail(i, "no context")
			}
		}
	}
	if unmatched == 0 {
		t.Errorf("%+v: no unmatched KER_EXIT (TRACE_EVENT at least)", cfg)
	}

	// time: wraps, CONTROL TIME, and rebuilding 64 bits from the low words
	wraps, covered := 0, 0
	for i := 1; i < len(ev); i++ {
		if ev[i].Cycles>>32 == ev[i-1].Cycles>>32 {
			continue
		}
		if ev[i].Cycles>>32 != ev[i-1].Cycles>>32+1 {
			fail(i, "high word jumps")
		}
		wraps++
		if ev[i].Class == "CONTROL" && ev[i].Name == "TIME" && field(t, &ev[i], "msb") == qhex8(uint32(ev[i].Cycles>>32)) {
			covered++
		}
	}
	if wraps != tr.Wraps {
		t.Errorf("%+v: %d wraps, truth %d", cfg, wraps, tr.Wraps)
	}
	if wraps == 0 {
		t.Errorf("%+v: the low 32 bits never wrap", cfg)
	} else if wraps-covered != 1 {
		t.Errorf("%+v: %d wraps, %d with CONTROL TIME: want exactly one without", cfg, wraps, covered)
	}
	msb, err := strconv.ParseUint(strings.TrimPrefix(field(t, &ev[1], "msb"), "0x"), 16, 32)
	if err != nil {
		t.Fatal(err)
	}
	hi, last := msb, uint32(ev[0].Cycles)
	for i := range ev {
		low := uint32(ev[i].Cycles)
		if ev[i].Class == "CONTROL" && ev[i].Name == "TIME" {
			hi, _ = strconv.ParseUint(strings.TrimPrefix(field(t, &ev[i], "msb"), "0x"), 16, 32)
		} else if low < last {
			hi++
		}
		last = low
		if hi<<32|uint64(low) != ev[i].Cycles {
			fail(i, "rebuilt cycles %#x", hi<<32|uint64(low))
		}
	}
}

// TestQNXCoverage checks that a medium trace exercises what traceduck must
// handle.
func TestQNXCoverage(t *testing.T) {
	cfg := QNXConfig{Events: 150000, CPUs: 4, Procs: 6, Seed: 9, CyclesPerSec: 3_000_000_007}
	_, ev, tr := genQNX(t, cfg)
	for _, k := range []string{
		"CONTROL/BUFFER", "CONTROL/TIME", "PROCESS/PROCCREATE_NAME", "PROCESS/PROCDESTROY",
		"THREAD/THCREATE", "THREAD/THDESTROY", "THREAD/THDEAD", "THREAD/THRUNNING", "THREAD/THREADY",
		"THREAD/THSEND", "THREAD/THREPLY", "THREAD/THRECEIVE", "THREAD/THNANOSLEEP", "THREAD/THMUTEX",
		"THREAD/THCONDVAR", "THREAD/THSEM", "THREAD/THSIGWAITINFO",
		"KER_CALL/MSG_SENDV", "KER_EXIT/MSG_SENDV", "KER_CALL/MSG_RECEIVEV", "KER_CALL/MSG_REPLYV",
		"KER_CALL/TIMER_TIMEOUT", "KER_CALL/THREAD_CREATE", "KER_CALL/THREAD_DESTROY", "KER_CALL/THREAD_DESTROYALL",
		"KER_CALL/SYNC_MUTEX_LOCK", "KER_CALL/SYNC_MUTEX_UNLOCK", "KER_CALL/SYNC_SEM_WAIT", "KER_CALL/SYNC_SEM_POST",
		"KER_CALL/SYNC_CONDVAR_WAIT", "KER_CALL/SYNC_CONDVAR_SIGNAL", "KER_CALL/CONNECT_SERVER_INFO", "KER_CALL/MSG_SEND_PULSE",
		"KER_EXIT/TRACE_EVENT",
		"INT/INT_ENTR", "INT/INT_HANDLER_ENTR", "INT/INT_HANDLER_EXIT", "INT/INT_EXIT",
		"COMM/SND_MESSAGE", "COMM/REC_MESSAGE", "COMM/REPLY_MESSAGE", "COMM/SND_PULSE", "COMM/SND_PULSE_EXE", "COMM/REC_PULSE",
		"USREVENT/EVENT:1", "USREVENT/EVENT:2", "KER_EXIT/SYNC_CONDVAR_SIG",
	} {
		if tr.EventCounts[k] == 0 {
			t.Errorf("no %s events", k)
		}
	}
	states := map[string]int{}
	for _, iv := range tr.ThreadStates {
		states[iv.State]++
	}
	for _, st := range []string{"RUNNING", "READY", "SEND", "REPLY", "RECEIVE", "NANOSLEEP", "MUTEX", "CONDVAR", "SEM", "DEAD"} {
		if states[st] == 0 {
			t.Errorf("no complete %s interval", st)
		}
	}
	// migration, nesting, equal timestamps, zero-length intervals
	cpus := map[string]map[int]bool{}
	for _, iv := range tr.ThreadStates {
		if iv.State == "RUNNING" && iv.Pid != 1 {
			k := strconv.Itoa(iv.Pid) + "/" + strconv.Itoa(iv.Tid)
			if cpus[k] == nil {
				cpus[k] = map[int]bool{}
			}
			cpus[k][iv.CPU] = true
		}
	}
	migrated := 0
	for _, m := range cpus {
		if len(m) > 1 {
			migrated++
		}
	}
	nested, equal := 0, 0
	depth := map[int]int{}
	type stcpu struct {
		st  string
		cpu int
	}
	cur := map[string]stcpu{}
	sameCPU, otherCPU := 0, 0 // state events repeating the current state
	for i := range ev {
		if e := &ev[i]; e.Class == "THREAD" && e.Name != "THCREATE" && e.Name != "THDESTROY" {
			k := field(t, e, "pid") + "/" + field(t, e, "tid")
			if c, ok := cur[k]; ok && c.st == e.Name {
				if c.cpu == e.CPU {
					sameCPU++
				} else {
					otherCPU++
				}
			}
			cur[k] = stcpu{e.Name, e.CPU}
		}
		switch ev[i].Class {
		case "INT_ENTR":
			if depth[ev[i].CPU] > 0 {
				nested++
			}
			depth[ev[i].CPU]++
		case "INT_EXIT":
			depth[ev[i].CPU]--
		}
		if i > 0 && ev[i].Cycles == ev[i-1].Cycles {
			equal++
		}
	}
	zero := 0
	for _, iv := range tr.ThreadStates {
		if iv.StartNS == iv.EndNS {
			zero++
		}
	}
	t.Logf("%d events, %d thread intervals, %d kernel calls, %d wraps, %d migrated threads, %d nested interrupts, %d equal timestamps, %d zero-length intervals, %d/%d repeated states on the same/another CPU, %.2f s",
		len(ev), len(tr.ThreadStates), len(tr.KernelCalls), tr.Wraps, migrated, nested, equal, zero, sameCPU, otherCPU, float64(tr.LastNS-tr.FirstNS)/1e9)
	if migrated == 0 || nested == 0 || equal == 0 || zero == 0 || sameCPU == 0 || otherCPU == 0 || tr.Wraps < 2 {
		t.Error("missing migration, nested interrupts, equal timestamps, zero-length intervals, repeated states or two wraps")
	}
}

func TestQNXText(t *testing.T) {
	h, ev, _ := genQNX(t, QNXConfig{Events: 300, CPUs: 2, Seed: 1})
	var buf bytes.Buffer
	if err := qnxenc.WriteText(&buf, h, ev); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(buf.String(), "\n")
	t.Logf("first 40 lines of the traceprinter text:\n%s", strings.Join(lines[:40], "\n"))
	if lines[0] != "TRACEPRINTER version 1.02" || lines[2] != " -- HEADER FILE INFORMATION -- " {
		t.Errorf("header block: %q", lines[:3])
	}
	k := 3 + len(h.Attrs)
	if lines[k] != " -- KERNEL EVENTS -- " {
		t.Fatalf("line %d: %q", k, lines[k])
	}
	if !strings.HasPrefix(lines[k+1], "t:0xf0000000 CPU:00 CONTROL: BUFFER sequence = ") ||
		lines[k+2] != "t:0xf0000000 CPU:00 CONTROL :TIME msb:0x000037b0 lsb(offset):0xf0000000" ||
		lines[k+4] != "                      ppid:0" || lines[k+6] != "                      name:proc/boot/procnto-smp-instr" {
		t.Errorf("first events:\n%s", strings.Join(lines[k+1:k+8], "\n"))
	}
	// the header lines we share with the real excerpt are identical
	real, err := os.ReadFile("/work/shared/testdata-external/qnx/DOC-EXCERPT__qnx.com__sat_user_guide__datainterpretation_Using_traceprinter.txt")
	if err != nil {
		t.Skip("real excerpt not available:", err)
	}
	realLines := map[string]bool{}
	for _, l := range strings.Split(string(real), "\n") {
		realLines[l] = true
	}
	for _, l := range []string{lines[0], lines[1], lines[2], lines[k]} {
		if !realLines[l] {
			t.Errorf("%q is not in the real excerpt", l)
		}
	}
	for _, a := range []string{"DATE", "VER_MAJOR", "VER_MINOR", "LITTLE_ENDIAN", "ENCODING", "BOOT_DATE", "CYCLES_PER_SEC", "SYSNAME", "NODENAME", "SYS_RELEASE", "SYS_VERSION", "MACHINE"} {
		found := false
		for _, l := range lines[3:k] {
			if strings.HasSuffix(strings.SplitN(l, "::", 2)[0], "TRACE_"+a) {
				found = realLines[l]
			}
		}
		if !found {
			t.Errorf("header line of %s differs from the real excerpt", a)
		}
	}
}

func BenchmarkGenerateQNX(b *testing.B) {
	const n = 1_000_000
	events := 0
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		_, _, tr, err := GenerateQNX(QNXConfig{Events: n, CPUs: 4, Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		events += tr.Events
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
}

// TestQNXMessagesTruth: the truth's messages agree with the events (one
// per SND_MESSAGE and SND_PULSE*, as many receives and replies as
// REC_*/REPLY_MESSAGE), their times are in order, a message has a client
// thread, and the pulses of one connection (scoid and server pid) are
// received in the order they were sent: the trace tells no more than that
// of which pulse a REC_PULSE took (docs/semantics.md), so the simulator
// never reorders them and the generated traces can be checked exactly.
func TestQNXMessagesTruth(t *testing.T) {
	for _, cfg := range qnxConfigs {
		_, _, tr := genQNX(t, cfg)
		c := tr.EventCounts
		sends := c["COMM/SND_MESSAGE"] + c["COMM/SND_PULSE"] + c["COMM/SND_PULSE_EXE"]
		var recv, replies, pulses int
		last := map[string]int64{}
		for _, m := range tr.Messages {
			if m.ReceiveNS >= 0 {
				recv++
			}
			if m.ReplyNS >= 0 {
				replies++
			}
			if m.ReceiveNS >= 0 && m.ReceiveNS < m.SendNS || m.ReplyNS >= 0 && (m.ReceiveNS < 0 || m.ReplyNS < m.ReceiveNS) {
				t.Errorf("%+v: message out of order: %+v", cfg, m)
			}
			if !m.OneWay && m.Client == "" || m.OneWay && m.ReplyNS >= 0 {
				t.Errorf("%+v: %+v", cfg, m)
			}
			if m.OneWay {
				pulses++
				if m.ReceiveNS >= 0 {
					k := fmt.Sprint(m.ID, "/", strings.SplitN(m.Server, "/", 2)[0])
					if m.ReceiveNS < last[k] {
						t.Errorf("%+v: pulse %+v received before one sent earlier on its connection", cfg, m)
					}
					last[k] = m.ReceiveNS
				}
			}
		}
		if len(tr.Messages) != sends || recv != c["COMM/REC_MESSAGE"]+c["COMM/REC_PULSE"] || replies != c["COMM/REPLY_MESSAGE"] {
			t.Errorf("%+v: %d messages, %d received, %d replies; events: %d sends, %d receives, %d replies", cfg, len(tr.Messages), recv, replies,
				sends, c["COMM/REC_MESSAGE"]+c["COMM/REC_PULSE"], c["COMM/REPLY_MESSAGE"])
		}
		if pulses == 0 || pulses == len(tr.Messages) {
			t.Errorf("%+v: %d pulses of %d messages", cfg, pulses, len(tr.Messages))
		}
	}
}
