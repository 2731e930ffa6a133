package schema

import "math"

// ObjectID identifies a row of the objects table within one run.
// Object ids are dense, starting at 1, in order of first appearance.
type ObjectID int32

// NoObject is the "none" sentinel: stored as NULL.
const NoObject ObjectID = -1

// Seq is an event's ordinal within its run, starting at 1 (the secondary
// index of the Baget tracer).
type Seq int64

// NoSeq is the "none" sentinel for Seq: stored as NULL.
const NoSeq Seq = -1

// CPU is a processor index as the trace numbers it.
type CPU int32

// NoCPU is the "none" sentinel for CPU: stored as NULL.
const NoCPU CPU = -1

// NoInstance is the "none" sentinel for source/target instances and for
// NULL integers in general: stored as NULL.
const NoInstance int64 = math.MinInt64

// Sym is an interned string (class, event, state, kind names). Interning
// lets the hot path compare and look up small integers and lets the Arrow
// batches carry those columns dictionary encoded.
type Sym int32

// NoSym is the "none" sentinel for Sym: stored as NULL.
const NoSym Sym = -1
