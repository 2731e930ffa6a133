package tracegen

import (
	"bytes"
	"encoding/binary"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/ingest/baget"
)

func genBaget(t testing.TB, cfg BagetConfig) ([]byte, []byte, BagetTruth) {
	t.Helper()
	log, desc, tr, err := GenerateBaget(cfg)
	if err != nil {
		t.Fatalf("GenerateBaget(%+v): %v", cfg, err)
	}
	return log, desc, tr
}

func TestBagetDeterminism(t *testing.T) {
	cfg := BagetConfig{Events: 2000, CPUs: 3, Seed: 7, ABI: "le32", RingBlocks: 5}
	l1, d1, t1 := genBaget(t, cfg)
	l2, d2, t2 := genBaget(t, cfg)
	if !bytes.Equal(l1, l2) || !bytes.Equal(d1, d2) || !reflect.DeepEqual(t1, t2) {
		t.Fatal("two runs of one config differ")
	}
	cfg.Seed = 8
	l3, _, _ := genBaget(t, cfg)
	if bytes.Equal(l1, l3) {
		t.Fatal("different seeds give the same log")
	}
}

func TestBagetConfigErrors(t *testing.T) {
	for _, cfg := range []BagetConfig{
		{},
		{Events: 10, CPUs: -1},
		{Events: 10, CPUs: 4, Threads: 3},
		{Events: 10, ABI: "le64"},
		{Events: 10, BlockSize: 100},
		{Events: 10, BlockSize: 1020},
		{Events: 10, RingBlocks: -1},
	} {
		if _, _, _, err := GenerateBaget(cfg); err == nil {
			t.Errorf("GenerateBaget(%+v): no error", cfg)
		}
	}
}

// The ABI variants of the bundled example declare the ABIs asked for.
func TestBagetDescriptionIsTheExample(t *testing.T) {
	for abi, want := range map[string]baget.ABI{
		"le32": {BigEndian: false, Pointer: 4, LongLongAlign: 4, DoubleAlign: 4},
		"be64": {BigEndian: true, Pointer: 8, LongLongAlign: 8, DoubleAlign: 8},
	} {
		x, err := BagetDescription(abi)
		if err != nil {
			t.Fatal(err)
		}
		d, err := baget.Parse(abi+".xml", x)
		if err != nil {
			t.Fatal(err)
		}
		if d.ABI != want {
			t.Errorf("%s: ABI %+v, want %+v", abi, d.ABI, want)
		}
		ex, err := baget.Example("minirtos.xml")
		if err != nil {
			t.Fatal(err)
		}
		if d.OS != ex.OS || len(d.Events) != len(ex.Events) {
			t.Errorf("%s: os %q, %d events; the example: %q, %d", abi, d.OS, len(d.Events), ex.OS, len(ex.Events))
		}
	}
}

// Both ABIs of one scenario have the same truth; only the layout differs.
func TestBagetABIsSameTruth(t *testing.T) {
	for _, seed := range []int64{1, 2, 3} {
		cfg := BagetConfig{Events: 3000, CPUs: 2, Threads: 7, Seed: seed, ABI: "le32"}
		l32, _, a := genBaget(t, cfg)
		cfg.ABI = "be64"
		l64, _, b := genBaget(t, cfg)
		if len(l32) >= len(l64) {
			t.Errorf("seed %d: le32 log %d bytes, be64 %d: expected the 64-bit one larger", seed, len(l32), len(l64))
		}
		a.DataBlocks, b.DataBlocks, a.Records, b.Records, a.ServiceBlocks, b.ServiceBlocks = 0, 0, 0, 0, 0, 0
		if !reflect.DeepEqual(a, b) {
			t.Errorf("seed %d: le32 and be64 truths differ", seed)
		}
	}
}

// bagetIDs is the test's own table of the example's record types.
var bagetIDs = map[uint16]string{
	0: "FILLER", 1: "BLOCK", 2: "FLUSH", 10: "PROC_CREATE", 20: "THREAD_CREATE", 21: "THREAD_EXIT",
	22: "THREAD_SWITCH", 23: "CPU_IDLE", 24: "THREAD_BLOCK", 25: "THREAD_WAKEUP", 30: "INTR_ENTER", 31: "INTR_EXIT",
	40: "SEM_CREATE", 41: "SEM_TAKE", 42: "SEM_GIVE", 50: "MUTEX_CREATE", 51: "MUTEX_LOCK", 52: "MUTEX_UNLOCK", 53: "MUTEX_WAIT",
	60: "MQ_CREATE", 61: "MQ_SEND", 62: "MQ_RECEIVE", 100: "USER_EVENT",
}

// bagetRec is one record as the test's decoder sees it.
type bagetRec struct {
	off   int // in the file
	name  string
	data  []byte
	block int // block number
}

// bagetLog is a log decoded by the test alone, per docs/baget-format.md.
type bagetLog struct {
	order            binary.ByteOrder
	p                int // pointer size from the arch
	blockSize        int
	service          int
	wrapped          bool
	os, arch         string
	serviceRecs      []bagetRec
	dataRecs         []bagetRec
	dataBlockNumbers []int
	fillers          int // in data blocks
}

func cstr(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

func decodeBaget(t *testing.T, log []byte) *bagetLog {
	t.Helper()
	if len(log) < 80 || string(log[:8]) != "BAGETTRC" || log[9] != 1 {
		t.Fatalf("bad header % x", log[:min(len(log), 16)])
	}
	l := &bagetLog{}
	switch log[8] {
	case 'L':
		l.order = binary.LittleEndian
	case 'B':
		l.order = binary.BigEndian
	default:
		t.Fatalf("byte order %q", log[8])
	}
	hs := int(l.order.Uint16(log[10:]))
	l.blockSize = int(l.order.Uint32(log[12:]))
	l.service = int(l.order.Uint32(log[16:]))
	flags := l.order.Uint32(log[20:])
	l.wrapped = flags&1 != 0
	l.os, l.arch = cstr(log[24:56]), cstr(log[56:72])
	if hs != 80 || flags&^1 != 0 || !bytes.Equal(log[72:80], make([]byte, 8)) {
		t.Fatalf("header: size %d flags %#x reserved % x", hs, flags, log[72:80])
	}
	switch l.arch {
	case "i386":
		l.p = 4
	case "ppc64":
		l.p = 8
	default:
		t.Fatalf("arch %q", l.arch)
	}
	if l.os != "minirtos-2.1" || (l.arch == "i386") != (l.order == binary.LittleEndian) {
		t.Fatalf("os %q arch %q order %v", l.os, l.arch, l.order)
	}
	if (len(log)-hs)%l.blockSize != 0 {
		t.Fatalf("%d bytes after the header: not whole blocks of %d", len(log)-hs, l.blockSize)
	}
	nblocks := (len(log) - hs) / l.blockSize
	for b := 0; b < nblocks; b++ {
		start := hs + b*l.blockSize
		blk := log[start : start+l.blockSize]
		svc := b < l.service
		off := 0 // a(i+1) = a(i) + size(i)
		for i := 0; off+4 <= len(blk); i++ {
			typ, size := l.order.Uint16(blk[off:]), int(l.order.Uint16(blk[off+2:]))
			name, ok := bagetIDs[typ]
			if !ok {
				t.Fatalf("@%d: unknown record type %d", start+off, typ)
			}
			if name == "FILLER" {
				if off+size != len(blk) {
					t.Fatalf("@%d: filler of %d bytes does not end the block (%d left)", start+off, size, len(blk)-off)
				}
				off = len(blk)
				if !svc {
					l.fillers++
				}
				break
			}
			if size < 4 || off+size > len(blk) {
				t.Fatalf("@%d: %s size %d runs past the block", start+off, name, size)
			}
			rec := bagetRec{off: start + off, name: name, data: blk[off : off+size]}
			if (i == 0) != (name == "BLOCK") {
				t.Fatalf("@%d: record %d of the block is %s", start+off, i, name)
			}
			if name == "BLOCK" {
				if size != 8 {
					t.Fatalf("@%d: BLOCK of %d bytes", start+off, size)
				}
				n := int(l.order.Uint32(rec.data[4:]))
				if svc && n != b {
					t.Fatalf("service block %d numbered %d", b, n)
				}
				if !svc {
					l.dataBlockNumbers = append(l.dataBlockNumbers, n)
				}
			} else if svc {
				if !strings.HasSuffix(name, "_CREATE") {
					t.Fatalf("@%d: %s in a service block", start+off, name)
				}
				l.serviceRecs = append(l.serviceRecs, rec)
			} else {
				l.dataRecs = append(l.dataRecs, rec)
			}
			off += size
		}
		if rest := blk[off:]; off < len(blk) && !bytes.Equal(rest, make([]byte, len(rest))) {
			t.Fatalf("block %d: a tail of %d bytes that is not zero", b, len(rest))
		}
	}
	for i, n := range l.dataBlockNumbers {
		if n != l.dataBlockNumbers[0]+i {
			t.Fatalf("data block numbers %v not consecutive", l.dataBlockNumbers)
		}
	}
	return l
}

// time returns the event time: struct timespec after the descriptor.
func (l *bagetLog) time(r bagetRec) int64 {
	off := l.p // alignUp(4, P)
	if l.p == 4 {
		return int64(int32(l.order.Uint32(r.data[off:])))*1e9 + int64(int32(l.order.Uint32(r.data[off+4:])))
	}
	return int64(l.order.Uint64(r.data[off:]))*1e9 + int64(l.order.Uint64(r.data[off+8:]))
}

func (l *bagetLog) cpu(r bagetRec) int { return int(r.data[3*l.p]) }

func TestBagetDecode(t *testing.T) {
	for _, abi := range []string{"le32", "be64"} {
		for _, ring := range []int{0, 4} {
			cfg := BagetConfig{Events: 2500, CPUs: 3, Seed: 11, ABI: abi, RingBlocks: ring}
			log, _, tr := genBaget(t, cfg)
			l := decodeBaget(t, log)
			if l.blockSize != 1024 || l.service != tr.ServiceBlocks || len(l.dataBlockNumbers) != tr.DataBlocks ||
				l.dataBlockNumbers[0] != tr.FirstBlock || l.wrapped != tr.Wrapped || l.wrapped != (ring > 0) {
				t.Fatalf("%s ring %d: blocks %d+%d from %d wrapped %v; truth %+v", abi, ring, l.service,
					len(l.dataBlockNumbers), l.dataBlockNumbers[0], l.wrapped, tr)
			}
			if ring > 0 && len(l.dataBlockNumbers) != ring {
				t.Fatalf("%s: %d data blocks kept, want %d", abi, len(l.dataBlockNumbers), ring)
			}
			// Every object's creation is in the service blocks.
			svc := map[string]int{}
			for _, r := range l.serviceRecs {
				svc[r.name]++
			}
			if want := map[string]int{"PROC_CREATE": 2, "THREAD_CREATE": 8, "SEM_CREATE": 2, "MUTEX_CREATE": 2, "MQ_CREATE": 2}; !reflect.DeepEqual(svc, want) {
				t.Fatalf("%s: service records %v, want %v", abi, svc, want)
			}
			counts := map[string]int{}
			var last int64
			var creates [][]byte
			for _, r := range l.dataRecs {
				if r.name == "FLUSH" {
					continue
				}
				counts[r.name]++
				if ts := l.time(r); ts < last {
					t.Fatalf("@%d: %s time %d before %d", r.off, r.name, ts, last)
				} else {
					last = ts
				}
				if c := l.cpu(r); c >= cfg.CPUs {
					t.Fatalf("@%d: cpu %d", r.off, c)
				}
				if strings.HasSuffix(r.name, "_CREATE") {
					creates = append(creates, r.data)
				}
				l.checkSizes(t, r)
			}
			if !reflect.DeepEqual(counts, tr.EventCounts) {
				t.Fatalf("%s ring %d: decoded counts %v, truth %v", abi, ring, counts, tr.EventCounts)
			}
			if ring == 0 {
				if len(creates) != len(l.serviceRecs) {
					t.Fatalf("%d creation records in data, %d in service blocks", len(creates), len(l.serviceRecs))
				}
				for i, c := range creates {
					if !bytes.Equal(c, l.serviceRecs[i].data) {
						t.Fatalf("creation record %d differs between service and data blocks", i)
					}
				}
			}
			if total := len(l.dataRecs) + len(l.dataBlockNumbers) + l.fillers; total != tr.Records {
				t.Fatalf("decoded %d records in data blocks, truth %d", total, tr.Records)
			}
		}
	}
}

// checkSizes checks record sizes computed by hand from the C layout rules,
// independently of the description parser.
func (l *bagetLog) checkSizes(t *testing.T, r bagetRec) {
	t.Helper()
	le32 := l.p == 4
	want := map[string][2]int{ // le32, be64
		"THREAD_SWITCH": {28, 48}, // ts@P, cpu@3P, pid, prev, next
		"INTR_ENTER":    {16, 32}, // ts, cpu, irq(2)@3P+2
		"SEM_TAKE":      {28, 40}, // ..., pid, sem, count
		"MUTEX_LOCK":    {28, 48}, // ..., pid, mutex, owner (a pointer)
		"MUTEX_UNLOCK":  {28, 48}, // ..., pid, mutex, owner
		"MUTEX_WAIT":    {32, 56}, // ..., pid, mutex, thread, owner
		"MQ_SEND":       {44, 56}, // ..., pid, mq, msg_no, len, prio(2), msg_kind(1), head (a union with a double)
	}
	if w, ok := want[r.name]; ok {
		size := w[1]
		if le32 {
			size = w[0]
		}
		if len(r.data) != size {
			t.Fatalf("@%d: %s of %d bytes, want %d", r.off, r.name, len(r.data), size)
		}
	}
	if r.name == "USER_EVENT" {
		// ts, cpu, pid, object[16], long long value (align 4 on i386), len, data[]
		sizeof, lenOff, dataOff := 64, 56, 58
		if le32 {
			sizeof, lenOff, dataOff = 48, 44, 46
		}
		n := int(l.order.Uint16(r.data[lenOff:]))
		if len(r.data) != sizeof+n || !strings.HasPrefix(string(r.data[dataOff:dataOff+n]), "n=") {
			t.Fatalf("@%d: USER_EVENT of %d bytes, len %d, data %q", r.off, len(r.data), n, r.data[dataOff:])
		}
	}
}

// TestBagetStatesFromBytes interprets the decoded records with the
// example's state rules written out by hand (independently of the
// simulator's replay) and compares thread and CPU intervals and eco-triple
// contexts with the truth.
func TestBagetStatesFromBytes(t *testing.T) {
	for _, abi := range []string{"le32", "be64"} {
		for _, ring := range []int{0, 3, 6} {
			for seed := int64(0); seed < 4; seed++ {
				cfg := BagetConfig{Events: 2000, CPUs: 3, Threads: 6, Seed: seed, ABI: abi, RingBlocks: ring}
				log, _, tr := genBaget(t, cfg)
				l := decodeBaget(t, log)
				threads, cpus, ctx := l.interpret(cfg.CPUs)
				sortTI := func(v []BagetThreadInterval) []BagetThreadInterval {
					out := append([]BagetThreadInterval(nil), v...)
					slicesSortFunc(out, func(a, b BagetThreadInterval) bool {
						if a.StartNS != b.StartNS {
							return a.StartNS < b.StartNS
						}
						return a.Thread.OID < b.Thread.OID
					})
					return out
				}
				if got, want := sortTI(threads), sortTI(tr.ThreadStates); !reflect.DeepEqual(got, want) {
					t.Fatalf("%s ring %d seed %d: thread intervals: got %d, truth %d", abi, ring, seed, len(got), len(want))
				}
				sortCI := func(v []BagetCPUInterval) []BagetCPUInterval {
					out := append([]BagetCPUInterval(nil), v...)
					slicesSortFunc(out, func(a, b BagetCPUInterval) bool {
						if a.StartNS != b.StartNS {
							return a.StartNS < b.StartNS
						}
						return a.CPU < b.CPU
					})
					return out
				}
				if got, want := sortCI(cpus), sortCI(tr.CPUStates); !reflect.DeepEqual(got, want) {
					t.Fatalf("%s ring %d seed %d: CPU intervals: got %d, truth %d", abi, ring, seed, len(got), len(want))
				}
				want := map[[2]string]int{}
				for e, n := range tr.Ecos {
					want[[2]string{e.Event, objKey(e.Context)}] += n
				}
				if !reflect.DeepEqual(ctx, want) {
					t.Fatalf("%s ring %d seed %d: (event, context) counts differ:\n got %v\nwant %v", abi, ring, seed, ctx, want)
				}
				if len(tr.ThreadStates) == 0 || len(tr.CPUStates) == 0 {
					t.Fatalf("%s ring %d seed %d: no intervals", abi, ring, seed)
				}
			}
		}
	}
}

func slicesSortFunc[T any](v []T, less func(a, b T) bool) {
	sort.SliceStable(v, func(i, j int) bool { return less(v[i], v[j]) })
}

func objKey(o BagetObj) string {
	if o.Kind == "" {
		return "-"
	}
	return o.Kind + ":" + strconv.FormatInt(o.Pid, 10) + ":" + strconv.FormatUint(o.OID, 16)
}

func (l *bagetLog) ptr(b []byte, off int) uint64 {
	if l.p == 4 {
		return uint64(l.order.Uint32(b[off:]))
	}
	return l.order.Uint64(b[off:])
}

type obsState struct {
	known bool
	st    string
	since int64
}

// obsCPU is a CPU as the test sees it (docs/baget-format.md 2.7): a base
// thread under a stack of interrupts; the interval open.
type obsCPU struct {
	known, unkBase bool
	base           uint64 // thread oid; 0: none
	stack          []BagetObj
	open           bool
	holder         BagetObj
	since          int64
}

func (l *bagetLog) interpret(ncpu int) ([]BagetThreadInterval, []BagetCPUInterval, map[[2]string]int) {
	pidOf := map[uint64]int64{}
	nameOf := map[uint64]string{}
	procName := map[int64]string{}
	objOff := (3*l.p + 8 + l.p - 1) / l.p * l.p // the first pointer after ts, cpu, pid
	for _, r := range l.serviceRecs {
		switch r.name {
		case "THREAD_CREATE":
			oid := l.ptr(r.data, objOff)
			pidOf[oid] = int64(int32(l.order.Uint32(r.data[3*l.p+4:])))
			nameOf[oid] = cstr(r.data[objOff+l.p+1 : objOff+l.p+17]) // after the prio byte
		case "PROC_CREATE":
			procName[int64(int32(l.order.Uint32(r.data[3*l.p+4:])))] = cstr(r.data[3*l.p+8 : 3*l.p+24])
		}
	}
	thObj := func(oid uint64) BagetObj { return BagetObj{Kind: "thread", Pid: pidOf[oid], OID: oid} }
	var tis []BagetThreadInterval
	var cis []BagetCPUInterval
	ctx := map[[2]string]int{}
	th := map[uint64]*obsState{}
	cpus := make([]obsCPU, ncpu)
	thr := func(oid uint64) *obsState {
		if th[oid] == nil {
			th[oid] = &obsState{}
		}
		return th[oid]
	}
	move := func(oid uint64, ts int64, to string, from ...string) {
		o := thr(oid)
		cur := "unknown"
		if o.known {
			cur = o.st
		}
		if len(from) > 0 && !contains(from, cur) {
			return
		}
		if o.known {
			tis = append(tis, BagetThreadInterval{Thread: thObj(oid), State: o.st, StartNS: o.since, EndNS: ts})
		}
		*o = obsState{known: true, st: to, since: ts}
	}
	holder := func(c int) (BagetObj, bool) {
		switch cu := &cpus[c]; {
		case !cu.known:
			return BagetObj{}, false
		case len(cu.stack) > 0:
			return cu.stack[len(cu.stack)-1], true
		case cu.base != 0:
			return thObj(cu.base), true
		}
		return BagetObj{}, true
	}
	// show closes CPU c's interval when its holder changed and opens the next.
	show := func(c int, ts int64) {
		h, known := holder(c)
		cu := &cpus[c]
		if !known || (cu.open && cu.holder == h) {
			return
		}
		if cu.open {
			iv := BagetCPUInterval{CPU: c, State: "cpuIdle", Obj: cu.holder, Process: "cpuIdle", Group: "cpuIdle", StartNS: cu.since, EndNS: ts}
			switch cu.holder.Kind {
			case "thread":
				iv.State, iv.Process, iv.Group = nameOf[cu.holder.OID], procName[cu.holder.Pid], "cpuThreads"
			case "interrupt":
				iv.State = "interrupt " + strconv.FormatUint(cu.holder.OID, 10)
				iv.Process, iv.Group = iv.State, "cpuInterrupts"
			}
			cis = append(cis, iv)
		}
		cu.open, cu.holder, cu.since = true, h, ts
	}
	ctxThread := func(c int) (uint64, bool) {
		if cu := cpus[c]; cu.known && len(cu.stack) == 0 && cu.base != 0 {
			return cu.base, true
		}
		return 0, false
	}
	for _, r := range l.dataRecs {
		if r.name == "FLUSH" {
			continue
		}
		ts, c := l.time(r), l.cpu(r)
		cx, _ := holder(c)
		ctx[[2]string{r.name, objKey(cx)}]++
		irq := BagetObj{Kind: "interrupt", OID: uint64(l.order.Uint16(r.data[3*l.p+2:]))}
		switch r.name {
		case "THREAD_CREATE":
			move(l.ptr(r.data, objOff), ts, "thrReady", "unknown")
		case "THREAD_SWITCH":
			prev, next := l.ptr(r.data, objOff), l.ptr(r.data, objOff+l.p)
			move(prev, ts, "thrReady", "thrRun")
			move(next, ts, "thrRun")
			for d := range cpus {
				if d != c && cpus[d].base == next {
					cpus[d].base = 0
					show(d, ts)
				}
			}
			cpus[c].known, cpus[c].unkBase, cpus[c].base = true, false, next
			show(c, ts)
		case "CPU_IDLE":
			move(l.ptr(r.data, objOff), ts, "thrReady", "thrRun")
			cpus[c].known, cpus[c].unkBase, cpus[c].base = true, false, 0
			show(c, ts)
		case "THREAD_BLOCK":
			move(l.ptr(r.data, objOff), ts, "thrNotReady", "thrRun", "unknown")
		case "THREAD_WAKEUP":
			move(l.ptr(r.data, objOff), ts, "thrReady", "thrNotReady", "unknown")
		case "INTR_ENTER":
			if oid, ok := ctxThread(c); ok {
				move(oid, ts, "thrInterrupted", "thrRun")
			}
			if !cpus[c].known {
				cpus[c].known, cpus[c].unkBase = true, true
			}
			cpus[c].stack = append(cpus[c].stack, irq)
			show(c, ts)
		case "INTR_EXIT":
			if cu := &cpus[c]; cu.known && len(cu.stack) > 0 { // from="cpuIntr"
				cu.stack = cu.stack[:len(cu.stack)-1]
				show(c, ts)
				if cu.unkBase && len(cu.stack) == 0 {
					// back to before the interrupt: unknown; the interval
					// opened at ts is dropped
					*cu = obsCPU{}
				}
			}
			if oid, ok := ctxThread(c); ok {
				move(oid, ts, "thrRun", "thrInterrupted")
			}
		}
	}
	return tis, cis, ctx
}

func contains(v []string, s string) bool {
	for _, x := range v {
		if x == s {
			return true
		}
	}
	return false
}

// TestBagetSyncTruth: the holds, waits and messages of the truth obey what
// the simulated RTOS guarantees, checked without the simulator's
// bookkeeping: a mutex has one holder at a time; a thread that waited for
// a mutex holds it from the end of its wait; only mutexes are held (a
// semaphore has no owner) and both kinds are waited for; a queue is FIFO
// (its msg_no are received in increasing order); in a log that did not
// wrap every message received was sent in it. A wrapped log's truth is a
// part of the unwrapped one's, except for spans open at its end.
func TestBagetSyncTruth(t *testing.T) {
	cfg := BagetConfig{Events: 4000, CPUs: 3, Seed: 21, ABI: "le32"}
	_, _, tr := genBaget(t, cfg)
	kinds := map[string]int{}
	for _, w := range tr.Waits {
		kinds["wait "+w.Resource.Kind]++
	}
	byMutex := map[BagetObj][]BagetSpan{}
	for _, h := range tr.Holds {
		kinds["hold "+h.Resource.Kind]++
		byMutex[h.Resource] = append(byMutex[h.Resource], h)
	}
	if kinds["wait semaphore"] == 0 || kinds["wait mutex"] == 0 || kinds["hold mutex"] == 0 || kinds["hold semaphore"] != 0 {
		t.Fatalf("holds and waits by kind: %v", kinds)
	}
	for m, hs := range byMutex {
		sort.Slice(hs, func(i, j int) bool { return hs[i].StartNS < hs[j].StartNS })
		for i := 1; i < len(hs); i++ {
			if hs[i].StartNS < hs[i-1].EndNS {
				t.Fatalf("%v: held by %v from %d while %v held it until %d", m, hs[i].Thread, hs[i].StartNS, hs[i-1].Thread, hs[i-1].EndNS)
			}
		}
	}
	holdStarts := map[BagetSpan]bool{}
	for _, h := range append(tr.Holds, tr.HoldsOpen...) {
		holdStarts[BagetSpan{Resource: h.Resource, Thread: h.Thread, StartNS: h.StartNS}] = true
	}
	for _, w := range tr.Waits {
		if w.EndNS <= w.StartNS {
			t.Fatalf("wait %+v does not last", w)
		}
		if w.Resource.Kind == "mutex" && !holdStarts[BagetSpan{Resource: w.Resource, Thread: w.Thread, StartNS: w.EndNS}] {
			t.Fatalf("wait %+v: its thread does not hold the mutex from its end", w)
		}
	}
	last := map[BagetObj]int64{}
	for _, m := range tr.Messages {
		if m.ID <= last[m.Queue] || m.RecvNS <= m.SendNS || m.Sender.Kind != "thread" || m.Receiver.Kind != "thread" {
			t.Fatalf("message %+v after msg_no %d on its queue", m, last[m.Queue])
		}
		last[m.Queue] = m.ID
	}
	if len(tr.Messages) == 0 || len(tr.MsgNoSend) != 0 {
		t.Fatalf("%d messages, %d without their send", len(tr.Messages), len(tr.MsgNoSend))
	}
	if len(tr.Messages)+len(tr.MsgOpen) != tr.EventCounts["MQ_SEND"] || len(tr.Messages) != tr.EventCounts["MQ_RECEIVE"] {
		t.Fatalf("%d messages, %d open; %d sends, %d receives", len(tr.Messages), len(tr.MsgOpen), tr.EventCounts["MQ_SEND"], tr.EventCounts["MQ_RECEIVE"])
	}

	cfg.RingBlocks = 10
	_, _, wr := genBaget(t, cfg)
	all := map[BagetSpan]bool{}
	for _, h := range append(tr.Holds, tr.Waits...) {
		all[h] = true
	}
	for _, h := range append(wr.Holds, wr.Waits...) {
		if !all[h] {
			t.Fatalf("wrapped: %+v is not in the unwrapped log's truth", h)
		}
	}
	if len(wr.Holds)+len(wr.Waits) == 0 || len(wr.Holds)+len(wr.Waits) >= len(tr.Holds)+len(tr.Waits) {
		t.Fatalf("wrapped: %d holds and waits, unwrapped %d", len(wr.Holds)+len(wr.Waits), len(tr.Holds)+len(tr.Waits))
	}
}
