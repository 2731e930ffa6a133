// Package samples holds the traces bundled in the binary for
// `traceduck demo`.
package samples

import (
	"embed"
	"io"

	"github.com/traceduck/traceduck/internal/qnxenc"
	"github.com/traceduck/traceduck/internal/tracegen"
)

// FS holds the sample traces, one directory per format.
//
//go:embed btf/*.btf qnx/*.txt tlv/* baget/* dtrace/* ftrace/* chrome/*
var FS embed.FS

// Sample is one bundled trace.
type Sample struct {
	Path        string // in FS
	Format      string
	Name        string // run name
	Description string
	// Params are the format flags the sample needs (TLV's --resources,
	// --rules, --headers), each naming a file in FS.
	Params map[string]string
	// System, when set, tags the run system=System: the samples of one
	// system are the logs of machines that exchanged messages, and the
	// demo aligns their clocks (traceduck align).
	System string
}

// List returns the bundled samples in the order the demo ingests them.
func List() []Sample {
	return []Sample{
		{Path: "btf/rtos-2core.btf", Format: "btf", Name: "btf-rtos-2core",
			Description: "a simulated 2-core fixed-priority RTOS: periodic tasks, a tick ISR per core, runnables, a shared semaphore, a signal and an event"},
		{Path: "btf/seed-example.btf", Format: "btf", Name: "btf-seed-example",
			Description: "the example listing of the BTF chapter: one task activated, started and terminated, and a runnable"},
		{Path: "qnx/neutrino-2cpu.txt", Format: "qnx", Name: "qnx-neutrino-2cpu",
			Description: "a simulated 2-CPU QNX Neutrino system as traceprinter prints it: threads, message passing, kernel calls, interrupts, a clock wrap"},
		{Path: "tlv/tiny.log", Format: "tlv", Name: "tlv-tiny-rtos",
			Description: "a made-up RTOS log supported by three TLV files (rules, types, resources), no Go: threads, a semaphore, an interrupt",
			Params:      map[string]string{"resources": "tlv/tiny.res", "rules": "tlv/tiny.cnv", "headers": "tlv/tiny.resh"}},
		{Path: "baget/minirtos-2cpu.blog", Format: "baget", Name: "baget-minirtos-2cpu",
			Description: "a simulated 2-CPU minirtos (64-bit PowerPC) binary log read through its XML description: threads, semaphores, mutexes, message queues, interrupts, user events",
			Params:      map[string]string{"description": "baget/minirtos-2.1-ppc64.xml"}},
		{Path: "dtrace/sched-syscalls.txt", Format: "dtrace", Name: "dtrace-sched-syscalls",
			Description: "what the shipped D scripts print on a simulated 2-CPU system: on-cpu/off-cpu, system calls, pid-provider calls, interrupts"},
		{Path: "ftrace/sched-4cpu.txt", Format: "ftrace", Name: "ftrace-sched-4cpu",
			Description: "a simulated 4-CPU Linux system as /sys/kernel/tracing/trace prints it: sched_switch/waking/wakeup, forks and exits, interrupts, softirqs, system calls"},
		{Path: "chrome/app.json", Format: "chrome", Name: "chrome-browser-app",
			Description: "a simulated browser and renderer in Chrome trace event JSON: nested B/E slices, complete events in begin and end order, counters, async network requests, flows, object lifetimes"},
		{Path: "baget/net-node0.blog", Format: "baget", Name: "baget-net-node0", System: "baget-net",
			Description: "machine 0 of two simulated minirtos machines that exchange messages through a queue net, its clock the reference",
			Params:      map[string]string{"description": "baget/minirtos-2.1-ppc64.xml"}},
		{Path: "baget/net-node1.blog", Format: "baget", Name: "baget-net-node1", System: "baget-net",
			Description: "machine 1 of the two: its clock 1.5 ms behind machine 0's and 25 ppm fast, which traceduck align estimates from the messages",
			Params:      map[string]string{"description": "baget/minirtos-2.1-ppc64.xml"}},
	}
}

// bagetSample is the configuration of the Baget sample: its log and its
// description are written by the generator from it.
var bagetSample = tracegen.BagetConfig{Events: 3000, CPUs: 2, Seed: 3, ABI: "be64"}

// bagetNet is the configuration of the two machines of the Baget system
// sample (ABI be64: the description of the Baget sample reads them).
var bagetNet = []tracegen.BagetConfig{
	{Events: 1500, CPUs: 2, Seed: 31, ABI: "be64", GapNS: 3_000_000},
	{Events: 1500, CPUs: 1, Seed: 32, ABI: "be64", GapNS: 3_000_000, Clock: tracegen.BagetClock{OffsetNS: -1_500_000, DriftPPM: 25}},
}

// bagetNetLog writes machine i's log of the Baget system sample.
func bagetNetLog(i int) func(w io.Writer) error {
	return func(w io.Writer) error {
		ms, _, err := tracegen.GenerateBagetSystem(append([]tracegen.BagetConfig(nil), bagetNet...))
		if err == nil {
			_, err = w.Write(ms[i].Log)
		}
		return err
	}
}

// GeneratedSample is a sample written by the trace generator; the test
// checks that the committed file is what the generator writes, and
// `go run ./samples/internal/gen` rewrites it.
type GeneratedSample struct {
	Path  string
	Write func(w io.Writer) error
}

// Generated lists the generated samples.
func Generated() []GeneratedSample {
	return []GeneratedSample{
		{Path: "btf/rtos-2core.btf", Write: func(w io.Writer) error {
			_, err := tracegen.WriteBTF(w, tracegen.Config{Events: 4000, Cores: 2, Tasks: 5, Seed: 7, TimeScale: "ns"})
			return err
		}},
		{Path: "qnx/neutrino-2cpu.txt", Write: func(w io.Writer) error {
			h, events, _, err := tracegen.GenerateQNX(tracegen.QNXConfig{Events: 3000, CPUs: 2, Procs: 3, Seed: 5, StartCycles: 0x37b0_fff00000})
			if err != nil {
				return err
			}
			return qnxenc.WriteText(w, h, events)
		}},
		{Path: "baget/minirtos-2cpu.blog", Write: func(w io.Writer) error {
			log, _, _, err := tracegen.GenerateBaget(bagetSample)
			if err == nil {
				_, err = w.Write(log)
			}
			return err
		}},
		{Path: "dtrace/sched-syscalls.txt", Write: func(w io.Writer) error {
			_, err := tracegen.WriteDTrace(w, tracegen.DTraceConfig{Lines: 3000, CPUs: 2, Processes: 3, Threads: 2, Seed: 9, Gap: true})
			return err
		}},
		{Path: "ftrace/sched-4cpu.txt", Write: func(w io.Writer) error {
			_, err := tracegen.WriteFtrace(w, tracegen.FtraceConfig{Lines: 1600, CPUs: 4, Processes: 5, Threads: 3, Seed: 12, TGID: true, Waking: true})
			return err
		}},
		{Path: "baget/net-node0.blog", Write: bagetNetLog(0)},
		{Path: "baget/net-node1.blog", Write: bagetNetLog(1)},
		{Path: "baget/minirtos-2.1-ppc64.xml", Write: func(w io.Writer) error {
			_, desc, _, err := tracegen.GenerateBaget(bagetSample)
			if err == nil {
				_, err = w.Write(desc)
			}
			return err
		}},
	}
}
