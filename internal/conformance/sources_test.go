package conformance_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/qnxenc"
	"github.com/traceduck/traceduck/internal/recount"
	"github.com/traceduck/traceduck/internal/tracegen"
)

var allExact = [nq]string{exact, exact, exact, exact, exact, exact, exact, exact}

// The reasons a format cannot tell holds (Q6) or waits (Q7)
// (docs/semantics.md, "Resources: holds and waits").
const (
	noOwnerTOPPERS = "TOPPERS's semaphores, event flags and queues have no owner in the log"
	noHoldsQNX     = "an uncontended QNX mutex is locked without a kernel call"
	noDTraceLocks  = "the event scripts have no lock probes"
	noFtraceLocks  = "no ftrace event says what a thread holds or waits for"
	noRes          = "Chrome JSON has no resources"
)

// noRes67 says the format cannot tell holds (Q6) nor waits (Q7).
func noRes67(holds, waits string) (out [nq]string) {
	out[5], out[6] = holds, waits
	return out
}

// howWaits is how for a format that tells waits (exactly) and not holds.
func howWaits(how [nq]string) [nq]string {
	how[5], how[6] = "", exact
	return how
}

// toppersHow: TLV's rules (and the generator's TOPPERS truth) say a task
// holds the processor while its state is RUNNING, which ends at "task N
// becomes WAITING" (or DORMANT), a little before "dispatch from task N"
// (ingest/tlv/README.md, "Precision"): exact against the recount by that
// definition; by dispatch the CPU questions differ by exactly the
// windows between the two lines (TestCPUTruthTOPPERS checks that).
const toppersCPU = "documented difference: by task state, exact"

var toppersHow = [nq]string{toppersCPU, toppersCPU, exact, exact, exact, "", exact, exact}

// toppersHowEv: the generator's TOPPERS logs show the waits for the
// event flag; its tasks spin RUNNING for SEM_Shared, which a TOPPERS
// kernel does not do, so those waits are not in the log.
var toppersHowEv = [nq]string{toppersCPU, toppersCPU, exact, exact, exact, "", "exact (the event flag's waits: the tasks spin RUNNING for the semaphore)", exact}

// sources are the rows of the matrix: generated traces of every format
// with their simulator's truth, then the real traces with their recounts.
func sources() []source {
	src := []source{
		{name: "generated/btf", how: allExact, make: genBTF},
		{name: "generated/qnx-text", keys: qnxKeys, how: [nq]string{exact, exact, exact, "documented definition (READY after a blocked state to the next one), exact", exact, "", exact, exact},
			cannot: noRes67(noHoldsQNX, ""),
			make:   func(t *testing.T, dir string) (string, ingest.Options, recount.Answers) { return genQNX(t, dir, false) }},
		{name: "generated/qnx-kev", keys: qnxKeys, how: [nq]string{exact, exact, exact, "documented definition (READY after a blocked state to the next one), exact", exact, "", exact, exact},
			cannot: noRes67(noHoldsQNX, ""),
			make:   func(t *testing.T, dir string) (string, ingest.Options, recount.Answers) { return genQNX(t, dir, true) }},
		{name: "generated/tlv-standard", how: howWaits(allExact), cannot: noRes67(noOwnerTOPPERS, ""), make: genTLV(tracegen.TLVStandard, 2)},
		{name: "generated/toppers-asp", how: toppersHowEv, make: genTLV(tracegen.TOPPERSASP, 1), cannot: noRes67(noOwnerTOPPERS, "")},
		{name: "generated/toppers-fmp", how: toppersHowEv, make: genTLV(tracegen.TOPPERSFMP, 2), cannot: noRes67(noOwnerTOPPERS, "")},
		{name: "generated/baget", how: allExact, make: genBaget(0),
			keys: keys{cpu: "c.native_id::VARCHAR", object: "o.pid || '/' || o.native_id"}},
		{name: "generated/baget-wrapped", how: allExact, make: genBaget(12),
			keys: keys{cpu: "c.native_id::VARCHAR", object: "o.pid || '/' || o.native_id"}},
		{name: "generated/dtrace", make: genDTrace, how: [nq]string{exact, exact, exact,
			"documented definition (from the first on-cpu after a block: the wakeup is not traced), exact", "exact (preemptions only: the wakeup is not traced)"},
			cannot: noRes67(noDTraceLocks, noDTraceLocks)},
		{name: "generated/ftrace", how: allExact, make: genFtrace, cannot: noRes67(noFtraceLocks, noFtraceLocks)},
	}
	// Real traces, recounted from their raw lines.
	src = append(src, real("btf/*.btf", "real/btf/", keys{}, allExact, [nq]string{}, func(p string) (recount.Answers, error) {
		rc, err := recount.ReadBTF(p)
		return rc.Answers(), err
	})...)
	for _, c := range recount.TOPPERSLogs {
		c := c
		src = append(src, source{name: "real/toppers-asp/" + short(c.Log), how: toppersHow, cannot: noRes67(noOwnerTOPPERS, ""), make: func(t *testing.T, dir string) (string, ingest.Options, recount.Answers) {
			log := externalFile(t, "toppers/YixiaoLi__tlv4mc__"+c.Log)
			res := filepath.Join(dir, "full.res")
			if c.Res != "" {
				res = externalFile(t, "toppers/YixiaoLi__tlv4mc__"+c.Res)
			} else if err := os.WriteFile(res, []byte(recount.FullLogResources()), 0o644); err != nil {
				t.Fatal(err)
			}
			rc, err := recount.ReadTOPPERS(log, res)
			fail(t, err)
			return log, ingest.Options{Format: "toppers-asp", Params: map[string]string{"resources": res}}, rc.Answers()
		}})
	}
	// TLV's own standard-format output of asp_short.log tells what the
	// log tells.
	src = append(src, source{name: "real/tlv/asp_short_standard_format", how: toppersHow, cannot: noRes67(noOwnerTOPPERS, ""), make: func(t *testing.T, dir string) (string, ingest.Options, recount.Answers) {
		const pre = "toppers/YixiaoLi__tlv4mc__sampleFiles__SampleLog__asp__asp_short"
		log, res := externalFile(t, pre+"_standard_format.log"), externalFile(t, pre+"_standard_format.res")
		rc, err := recount.ReadTOPPERS(externalFile(t, pre+".log"), externalFile(t, pre+".res"))
		fail(t, err)
		return log, ingest.Options{Format: "tlv", Params: map[string]string{"resources": res}}, rc.Answers()
	}})
	src = append(src, real("ftrace/*", "real/ftrace/", ftraceKeys, allExact, noRes67(noFtraceLocks, noFtraceLocks), func(p string) (recount.Answers, error) {
		rc, err := recount.ReadFtrace(p)
		if err != nil {
			return recount.Answers{}, err
		}
		return rc.Answers(), nil
	})...)
	src = append(src, real("qnx/*.txt", "real/qnx/", qnxKeys, howWaits(allExact), noRes67(noHoldsQNX, ""), qnxAnswers)...)
	src = append(src, source{name: "real/qnx/seed-listing", how: howWaits(allExact), cannot: noRes67(noHoldsQNX, ""), keys: qnxKeys, make: func(t *testing.T, dir string) (string, ingest.Options, recount.Answers) {
		text, err := recount.QNXSeedListing("../../../shared/seeds/qnx-neutrino-trace-interpretation.ru.txt")
		if err != nil {
			t.Skip("no ../shared/seeds beside the repository")
		}
		p := filepath.Join(dir, "seed-listing.txt")
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		a, err := qnxAnswers(p)
		fail(t, err)
		return p, ingest.Options{}, a
	}})
	// The DTraceToolkit's examples are printed aggregations and tool
	// output: no event line, so nothing to tell. One stands for all
	// (ingest/dtrace's TestCPUTruthDTrace reads every one).
	noEvents := "the DTraceToolkit's examples hold no event lines"
	src = append(src, source{name: "real/dtrace/intoncpu_example", cannot: [nq]string{noEvents, noEvents, noEvents, noEvents, noEvents, noEvents, noEvents},
		make: func(t *testing.T, dir string) (string, ingest.Options, recount.Answers) {
			p := externalFile(t, "dtrace/opendtrace__toolkit__Examples__intoncpu_example.txt")
			rc, err := recount.ReadDTrace(p)
			fail(t, err)
			if rc.EventLines != 0 {
				t.Fatalf("%d event lines: the row's reason no longer holds", rc.EventLines)
			}
			return p, ingest.Options{Format: "dtrace"}, recount.Answers{}
		}})
	noCPU, noSched := "Chrome JSON has no CPUs", "Chrome JSON has no scheduling states"
	if files := externalGlob("chrome-json/*.json"); len(files) > 0 {
		for _, p := range files {
			p := p
			src = append(src, source{name: "real/chrome-json/" + short(p), cannot: [nq]string{noCPU, noCPU, noSched, noSched, noSched, noRes, noRes},
				make: func(t *testing.T, dir string) (string, ingest.Options, recount.Answers) {
					return p, ingest.Options{}, recount.Answers{}
				}})
		}
	} else {
		src = append(src, noFile("real/chrome-json"))
	}
	for i := range src {
		if why := noMessages(src[i].name); why != "" {
			src[i].cannot[7] = why
		}
	}
	return src
}

// noMessages says why a source's format has no messages
// (docs/semantics.md, "Messages: round trips"): traceduck must give no
// row there. QNX's are answered.
func noMessages(source string) string {
	switch f := strings.Split(source, "/")[1]; {
	case strings.HasPrefix(f, "qnx"):
		return ""
	case f == "btf":
		return "cannot: BTF has no messages"
	case f == "dtrace":
		return "cannot: the shipped D scripts have no message probes"
	case strings.HasPrefix(f, "tlv") || strings.HasPrefix(f, "toppers"):
		return "not yet: data queues and mailboxes"
	case strings.HasPrefix(f, "baget"):
		return "not yet: replies (a description's queues carry one-way messages)"
	case f == "ftrace":
		return "not yet: binder transactions"
	case f == "chrome-json":
		return "not yet: flows"
	}
	panic("no word on the messages of " + source)
}

// qnxAnswers recounts a QNX listing: its CPUs and threads, and its
// messages.
func qnxAnswers(p string) (recount.Answers, error) {
	rc, err := recount.ReadQNXText(p)
	if err != nil {
		return recount.Answers{}, err
	}
	msgs, err := recount.ReadQNXMessageList(p)
	a := rc.Answers()
	a.RoundTrips = recount.RoundTrips(msgs)
	return a, err
}

// real are the rows of the real traces pattern finds (a row that skips
// when there is none), each read as it is found, answered by read,
// exact.
func real(pattern, prefix string, k keys, how, cannot [nq]string, read func(path string) (recount.Answers, error)) []source {
	files := externalGlob(pattern)
	if len(files) == 0 {
		return []source{noFile(strings.TrimSuffix(prefix, "/"))}
	}
	var out []source
	for _, p := range files {
		p := p
		out = append(out, source{name: prefix + short(p), how: how, cannot: cannot, keys: k, make: func(t *testing.T, dir string) (string, ingest.Options, recount.Answers) {
			a, err := read(p)
			fail(t, err)
			return p, ingest.Options{}, a
		}})
	}
	return out
}

// short is a real trace's name without its origin (with the revision
// the collection took it from, when it names one: two files can share a
// name).
func short(p string) string {
	b := filepath.Base(p)
	name := b
	if i := strings.LastIndex(b, "__"); i >= 0 {
		name = b[i+2:]
	}
	name = strings.TrimSuffix(name, filepath.Ext(name))
	if i := strings.Index(b, "HIST-"); i >= 0 {
		rev, _, _ := strings.Cut(b[i:], "__")
		name += "@" + rev
	}
	return name
}

// ftraceKeys key threads by tid ("tid N" as holders), the idle tasks and
// interrupts by name (recount.Ftrace).
var ftraceKeys = keys{
	holder: "CASE WHEN h.kind = 'thread' AND h.native_id > 0 THEN 'tid ' || h.native_id ELSE h.name END",
	object: "o.native_id::VARCHAR",
}

func genBTF(t *testing.T, dir string) (string, ingest.Options, recount.Answers) {
	var tr tracegen.Truth
	p := write(t, dir, "gen.btf", func(b *bytes.Buffer) (err error) {
		tr, err = tracegen.WriteBTF(b, tracegen.Config{Events: 20_000, Cores: 2, Tasks: 6, Seed: 3})
		return err
	})
	return p, ingest.Options{Format: "btf"}, recount.Answers{
		CPUBusy: tr.CoreBusy, CPUHeld: heldFrom(tr.CoreHeld, func(h string) bool { return h != "idle" }),
		Running: tr.Running, Instances: sum(tr.Response), Latency: sum(tr.Latency),
		Holds: prefixed("SEM_Shared ", sum(tr.Holds)), Waits: merged(prefixed("SEM_Shared ", sum(tr.Waits)), prefixed("EV_Done ", sum(tr.EvWaits))),
	}
}

// merged is the union of answers keyed apart (one resource each).
func merged(a, b map[string]recount.Sum) map[string]recount.Sum {
	for k, v := range b {
		a[k] = v
	}
	return a
}

func genQNX(t *testing.T, dir string, kev bool) (string, ingest.Options, recount.Answers) {
	return genQNXKev(t, dir, tracegen.QNXConfig{Events: 20_000, CPUs: 2, Seed: 5}, kev)
}

func genQNXKev(t *testing.T, dir string, cfg tracegen.QNXConfig, kev bool) (string, ingest.Options, recount.Answers) {
	h, evs, tr, err := tracegen.GenerateQNX(cfg)
	if err != nil {
		t.Fatal(err)
	}
	name, enc := "gen.txt", qnxenc.WriteText
	if kev {
		name, enc = "gen.kev", qnxenc.WriteKev
	}
	p := write(t, dir, name, func(b *bytes.Buffer) error { return enc(b, h, evs) })
	idle := map[string]bool{}
	for _, th := range tr.IdleThreads {
		idle[th] = true
	}
	a := recount.Answers{CPUBusy: map[string]int64{}, CPUHeld: map[recount.Held]int64{}, Running: map[string]int64{}}
	for c, ns := range tr.CPUBusyNS {
		a.CPUBusy[strconv.Itoa(c)] = ns
	}
	for c, hs := range tr.CPUHolders {
		for h, ns := range hs {
			a.CPUHeld[recount.Held{CPU: strconv.Itoa(c), Holder: cmpOr(h, "none"), Busy: h != "" && !idle[h]}] += ns
		}
	}
	for _, m := range tr.RunningPerCPU {
		for th, ns := range m {
			a.Running[th] += ns
		}
	}
	var ivs []recount.Interval
	for i, l := range [][]tracegen.QNXInterval{tr.ThreadStates, tr.ThreadOpen} {
		for _, iv := range l {
			class := map[string]string{"RUNNING": "running", "READY": "ready"}[iv.State]
			ivs = append(ivs, recount.Interval{Object: fmt.Sprintf("%d/%d", iv.Pid, iv.Tid), Class: cmpOr(class, "blocked"), Start: iv.StartNS, End: iv.EndNS, Truncated: i == 1})
		}
	}
	_, a.Instances, a.Latency = recount.Sched(ivs)
	a.Waits = map[string]recount.Sum{}
	for k, w := range tr.SyncWaits {
		a.Waits[strings.Replace(k, "|", " ", 1)] = recount.Sum{N: w.N, NS: w.NS}
	}
	a.RoundTrips = map[string]recount.Sum{}
	for _, m := range tr.Messages {
		if !m.OneWay && m.ReceiveNS >= 0 && m.ReplyNS >= 0 {
			k := m.Client + " -> " + m.Server
			s := a.RoundTrips[k]
			s.N, s.NS = s.N+1, s.NS+m.ReplyNS-m.SendNS
			a.RoundTrips[k] = s
		}
	}
	return p, ingest.Options{}, a
}

func genTLV(style tracegen.TLVStyle, cores int) func(*testing.T, string) (string, ingest.Options, recount.Answers) {
	return func(t *testing.T, dir string) (string, ingest.Options, recount.Answers) {
		var res bytes.Buffer
		var tr tracegen.TLVTruth
		p := write(t, dir, "gen.log", func(b *bytes.Buffer) (err error) {
			tr, err = tracegen.WriteTLV(b, &res, tracegen.Config{Events: 20_000, Cores: cores, Tasks: 6, Seed: 3}, style)
			return err
		})
		resPath := filepath.Join(dir, "gen.res")
		if err := os.WriteFile(resPath, res.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		a := recount.Answers{CPUBusy: tr.CPUBusy, CPUHeld: heldFrom(tr.CPUHeld, func(h string) bool { return h != "idle" })}
		var ivs []recount.Interval
		for _, iv := range tr.Intervals {
			class := map[string]string{"RUNNING": "running", "RUNNABLE": "ready", "SPINNING": "waiting", "PARKED": "waiting"}[iv.State]
			ivs = append(ivs, recount.Interval{Object: iv.Resource, Class: cmpOr(class, "blocked"), Start: iv.Start, End: iv.End, Truncated: iv.Truncated})
		}
		a.Running, a.Instances, a.Latency = recount.Sched(ivs)
		// waits for the event flag EV_Done (wai_flg flgid=1) in every
		// style; for SEM_Shared (wai_sem semid=1) in the standard format,
		// whose tasks spin SPINNING (TOPPERS's spin RUNNING)
		a.Waits = prefixed("eventflag 1 ", sum(tr.Schedule.EvWaits))
		if style == tracegen.TLVStandard {
			a.Waits = merged(a.Waits, prefixed("semaphore 1 ", sum(tr.Schedule.Waits)))
		}
		return p, ingest.Options{Format: style.String(), Params: map[string]string{"resources": resPath}}, a
	}
}

// genBaget: a log of the last ring blocks (0: all), whose start finds
// the threads and CPUs in states the log does not tell.
func genBaget(ring int) func(*testing.T, string) (string, ingest.Options, recount.Answers) {
	return func(t *testing.T, dir string) (string, ingest.Options, recount.Answers) {
		return genBagetRing(t, dir, ring)
	}
}

func genBagetRing(t *testing.T, dir string, ring int) (string, ingest.Options, recount.Answers) {
	return genBagetCfg(t, dir, tracegen.BagetConfig{Events: 5000, CPUs: 3, Seed: 11, ABI: "le32", RingBlocks: ring})
}

func genBagetCfg(t *testing.T, dir string, cfg tracegen.BagetConfig) (string, ingest.Options, recount.Answers) {
	log, desc, tr, err := tracegen.GenerateBaget(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p := write(t, dir, "gen.blog", func(b *bytes.Buffer) error { _, err := b.Write(log); return err })
	d := write(t, dir, "desc.xml", func(b *bytes.Buffer) error { _, err := b.Write(desc); return err })
	a := recount.Answers{CPUBusy: map[string]int64{}, CPUHeld: map[recount.Held]int64{}}
	for c, ns := range tr.CPUBusyNS {
		a.CPUBusy[strconv.Itoa(c)] = ns
	}
	for _, iv := range tr.CPUStates {
		h := iv.State
		if !iv.Busy() {
			h = "idle"
		}
		a.CPUHeld[recount.Held{CPU: strconv.Itoa(iv.CPU), Holder: h, Busy: iv.Busy()}] += iv.EndNS - iv.StartNS
	}
	var ivs []recount.Interval
	for i, l := range [][]tracegen.BagetThreadInterval{tr.ThreadStates, tr.ThreadOpen} {
		for _, iv := range l {
			class := map[string]string{"thrRun": "running", "thrReady": "ready", "thrInterrupted": "ready"}[iv.State]
			ivs = append(ivs, recount.Interval{Object: fmt.Sprintf("%d/%d", iv.Thread.Pid, iv.Thread.OID), Class: cmpOr(class, "blocked"), Start: iv.StartNS, End: iv.EndNS, Truncated: i == 1})
		}
	}
	a.Running, a.Instances, a.Latency = recount.Sched(ivs)
	// Q6, Q7: the complete holds (of mutexes) and waits (for mutexes and
	// semaphores) the simulator made, per resource and thread. Q8: the
	// queues' messages are one-way, no round trips.
	a.Holds, a.Waits = bagetSpans(tr.Holds), bagetSpans(tr.Waits)
	return p, ingest.Options{Format: "baget", Params: map[string]string{"description": d}}, a
}

// bagetSpans sums holds or waits per "RESOURCE PID/OID".
func bagetSpans(l []tracegen.BagetSpan) map[string]recount.Sum {
	out := map[string]recount.Sum{}
	for _, sp := range l {
		k := fmt.Sprintf("%s %d/%d", sp.ResourceName, sp.Thread.Pid, sp.Thread.OID)
		s := out[k]
		s.N++
		s.NS += sp.EndNS - sp.StartNS
		out[k] = s
	}
	return out
}

// fromIntervals are the answers of the DTrace and ftrace simulators'
// intervals: the CPUs' (Holder set) and the threads' scheduling states
// (instance 0; not an interrupt's handler); they must add up to the
// truth's own sums.
func fromIntervals(t *testing.T, ivs []tracegen.DTraceInterval, sums tracegen.CPUSums, running map[string]int64) recount.Answers {
	a := recount.Answers{CPUBusy: map[string]int64{}, CPUHeld: map[recount.Held]int64{}}
	var th []recount.Interval
	for _, iv := range ivs {
		switch {
		case iv.Holder != "":
			if !iv.Truncated {
				a.CPUHeld[recount.Held{CPU: iv.Object, Holder: iv.Holder, Busy: !iv.Idle}] += iv.End - iv.Start
				if !iv.Idle {
					a.CPUBusy[iv.Object] += iv.End - iv.Start
				}
			}
		case iv.Instance == 0 && iv.State != "handler":
			class := map[string]string{"running": "running", "runnable": "ready"}[iv.State]
			th = append(th, recount.Interval{Object: iv.Object, Class: cmpOr(class, "blocked"), Start: iv.Start, End: iv.End, Truncated: iv.Truncated})
		}
	}
	a.Running, a.Instances, a.Latency = recount.Sched(th)
	if fmt.Sprint(a.CPUBusy) != fmt.Sprint(sums.Busy) || fmt.Sprint(a.Running) != fmt.Sprint(running) {
		t.Fatalf("the truth's sums differ from its intervals")
	}
	return a
}

func genDTrace(t *testing.T, dir string) (string, ingest.Options, recount.Answers) {
	var tr tracegen.DTraceTruth
	p := write(t, dir, "gen.d.txt", func(b *bytes.Buffer) (err error) {
		tr, err = tracegen.WriteDTrace(b, tracegen.DTraceConfig{Lines: 8000, CPUs: 3, Processes: 3, Threads: 2, Seed: 31, Gap: true})
		return err
	})
	a := fromIntervals(t, tr.Intervals, tr.CPUs, tr.Running)
	return p, ingest.Options{Format: "dtrace"}, a
}

func genFtrace(t *testing.T, dir string) (string, ingest.Options, recount.Answers) {
	var tr tracegen.FtraceTruth
	p := write(t, dir, "gen.trace", func(b *bytes.Buffer) (err error) {
		tr, err = tracegen.WriteFtrace(b, tracegen.FtraceConfig{Lines: 8000, CPUs: 3, Processes: 3, Threads: 2, Seed: 7, Waking: true})
		return err
	})
	a := fromIntervals(t, tr.Intervals, tr.CPUs, tr.Running)
	return p, ingest.Options{Format: "ftrace"}, a
}

// prefixed keys a truth's per-task sums by "RESOURCE TASK".
func prefixed(resource string, m map[string]recount.Sum) map[string]recount.Sum {
	out := map[string]recount.Sum{}
	for k, v := range m {
		out[resource+k] = v
	}
	return out
}
