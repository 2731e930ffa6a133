// Package baget reads self-described binary RTOS trace logs in the model of
// the Baget RTOS tracer: records that are C structs, read through an XML
// description of their layout. The container and the description are
// defined in docs/baget-format.md; this package follows it.
package baget

// ABI is the part of a C ABI that record layouts depend on
// (docs/baget-format.md 2.2).
type ABI struct {
	BigEndian     bool
	Pointer       int // 4 or 8: pointers, long, unsigned long, struct timespec members
	LongLongAlign int // 4 or 8
	DoubleAlign   int // 4 or 8
}

// BaseKind says how a base type's bytes are decoded.
type BaseKind uint8

const (
	KindInt      BaseKind = iota + 1 // signed integer
	KindUint                         // unsigned integer
	KindBool                         // _Bool
	KindChar                         // char: text when in an array
	KindFloat                        // float, double
	KindPointer                      // printed in hex
	KindTimespec                     // struct timespec, decoded as ns
	KindObject                       // object identifier (docs 2.4, <Objects>)
)

var kindNames = [...]string{"?", "int", "uint", "bool", "char", "float", "pointer", "timespec", "object"}

func (k BaseKind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "?"
}

// integer reports whether values of the kind are integers (a union
// selector, a CPU number, a pid).
func (k BaseKind) integer() bool {
	return k == KindInt || k == KindUint || k == KindBool || k == KindChar || k == KindObject
}

// BaseType is a type of the set T_b of seed 3.2: a C scalar, struct
// timespec, or an object-identifier type declared in <Objects>.
type BaseType struct {
	Name    string
	Kind    BaseKind
	Size    int
	Align   int
	Signed  bool   // for KindObject: the signedness of its base
	ObjKind string // for KindObject: the object kind (objects.kind)
}

// baseTypes returns the base types of docs/baget-format.md 2.4 for an ABI.
// Names ending in "*" are pointers too (see lookupBase).
func baseTypes(abi ABI) map[string]*BaseType {
	p := abi.Pointer
	m := map[string]*BaseType{}
	add := func(kind BaseKind, size, align int, signed bool, names ...string) {
		for _, n := range names {
			m[n] = &BaseType{Name: n, Kind: kind, Size: size, Align: align, Signed: signed}
		}
	}
	add(KindChar, 1, 1, true, "char")
	add(KindInt, 1, 1, true, "signed char", "int8_t")
	add(KindUint, 1, 1, false, "unsigned char", "uint8_t")
	add(KindBool, 1, 1, false, "_Bool", "bool")
	add(KindInt, 2, 2, true, "short", "int16_t")
	add(KindUint, 2, 2, false, "unsigned short", "uint16_t")
	add(KindInt, 4, 4, true, "int", "int32_t")
	add(KindUint, 4, 4, false, "unsigned int", "uint32_t")
	add(KindFloat, 4, 4, true, "float")
	add(KindInt, p, p, true, "long", "ssize_t", "intptr_t")
	add(KindUint, p, p, false, "unsigned long", "size_t", "uintptr_t")
	add(KindInt, 8, abi.LongLongAlign, true, "long long", "int64_t")
	add(KindUint, 8, abi.LongLongAlign, false, "unsigned long long", "uint64_t")
	add(KindFloat, 8, abi.DoubleAlign, true, "double")
	add(KindPointer, p, p, false, "pointer", "void *")
	add(KindTimespec, 2*p, p, true, "struct timespec")
	return m
}

// RecordKind classifies record types (docs 1.4).
type RecordKind uint8

const (
	RecEvent  RecordKind = iota // an essential record: a trace event
	RecFiller                   // fills a block's tail; ends the block
	RecBlock                    // carries the block number
	RecInfo                     // any other non-essential service record
)

var recordKinds = map[string]RecordKind{"event": RecEvent, "filler": RecFiller, "block": RecBlock, "info": RecInfo}

func (k RecordKind) String() string {
	for n, v := range recordKinds {
		if v == k {
			return n
		}
	}
	return "?"
}

// Essential reports whether records of the kind are events (in the
// secondary index).
func (k RecordKind) Essential() bool { return k == RecEvent }

// Thread and CPU states (seed 2.6).
const (
	ThrNotRun      = "thrNotRun"
	ThrRun         = "thrRun"
	ThrNotReady    = "thrNotReady"
	ThrReady       = "thrReady"
	ThrInterrupted = "thrInterrupted"

	CPUIdle       = "cpuIdle"
	CPUInterrupts = "cpuInterrupts"
	CPUThreads    = "cpuThreads"
	CPUIntr       = "cpuIntr"
	CPUProc       = "cpuProc"
	CPUThr        = "cpuThr"
	CPUReturn     = "return" // <cpu to="return">: end of an interrupt handler
	StateUnknown  = "unknown"
)

// threadTargets are the atomic thread states a <state> rule may set;
// threadFrom adds what a from= list may name.
var (
	threadTargets = map[string]bool{ThrRun: true, ThrNotReady: true, ThrReady: true, ThrInterrupted: true}
	threadFrom    = map[string]bool{ThrRun: true, ThrNotReady: true, ThrReady: true, ThrInterrupted: true, StateUnknown: true}
	cpuTargets    = map[string]bool{CPUThr: true, CPUIntr: true, CPUIdle: true, CPUReturn: true}
	cpuFrom       = map[string]bool{CPUThr: true, CPUIntr: true, CPUIdle: true, StateUnknown: true}
)

// StateLevel is one row of state_levels (docs 2.7, seed 6.1).
type StateLevel struct {
	Kind   string // "thread"
	State  string
	Level  int
	Parent string // the aggregate at Level+1; "" at the top
}

// StateLevels lists the aggregation of thread states (docs 2.7). An atomic
// state that is not aggregated at a level keeps its name there. The CPU
// states' levels are the CPU model's (schema.CPUTracker), from the
// holders the log shows: the thread, interrupt or cpuIdle; its process
// (cpuProc) or the interrupt; cpuThreads, cpuInterrupts or cpuIdle; busy or
// idle.
var StateLevels = []StateLevel{
	{"thread", ThrReady, 1, ThrNotRun},
	{"thread", ThrNotReady, 1, ThrNotRun},
	{"thread", ThrRun, 1, ThrRun},
	{"thread", ThrInterrupted, 1, ThrInterrupted},
	{"thread", ThrNotRun, 2, ""},
	{"thread", ThrRun, 2, ""},
	{"thread", ThrInterrupted, 2, ""},
}
