package btf

import (
	"bytes"

	"github.com/traceduck/traceduck/schema"
)

// entType is a BTF entity type (the target type field).
type entType uint8

const (
	tUnknown   entType = iota // not (yet) seen as a target; kind is a guess
	tTask                     // T
	tISR                      // I
	tRunnable                 // R
	tIB                       // IB: instruction block
	tSignal                   // SIG
	tSemaphore                // SEM
	tEvent                    // EVENT
	tSim                      // SIM, SYS
	tCore                     // C, Core
	tStimulus                 // STI
	tECU                      // ECU
	tProcessor                // P, Processor
	tMemory                   // M
	tScheduler                // SCHED
	tOther                    // a type BTF does not define; class keeps its text
	nTypes
)

// typeInfo is what a type becomes in the tables: the class of its events
// (the canonical type id) and the kind of its objects.
var typeInfo = [nTypes]struct{ class, kind string }{
	tUnknown:   {"", "user"},
	tTask:      {"T", "task"},
	tISR:       {"I", "isr"},
	tRunnable:  {"R", "runnable"},
	tIB:        {"IB", "instruction_block"},
	tSignal:    {"SIG", "signal"},
	tSemaphore: {"SEM", "semaphore"},
	tEvent:     {"EVENT", "event"},
	tSim:       {"SIM", "system"},
	tCore:      {"C", "cpu"},
	tStimulus:  {"STI", "stimulus"},
	tECU:       {"ECU", "ecu"},
	tProcessor: {"P", "processor"},
	tMemory:    {"M", "memory"},
	tScheduler: {"SCHED", "scheduler"},
	tOther:     {"", "user"},
}

// parseType maps a target type field to a type. BTF writes them in upper
// case; the seed's table also spells Core and Processor out.
func parseType(b []byte) entType {
	switch string(b) {
	case "T":
		return tTask
	case "I":
		return tISR
	case "R":
		return tRunnable
	case "IB":
		return tIB
	case "SIG":
		return tSignal
	case "SEM":
		return tSemaphore
	case "EVENT":
		return tEvent
	case "SIM", "SYS":
		return tSim
	case "C", "Core", "CORE":
		return tCore
	case "STI":
		return tStimulus
	case "ECU":
		return tECU
	case "P", "Processor", "PROCESSOR":
		return tProcessor
	case "M":
		return tMemory
	case "SCHED":
		return tScheduler
	}
	return tOther
}

func (t entType) isProcess() bool { return t == tTask || t == tISR }

// entity is one named BTF entity. BTF names are unique across types, so
// the registry is keyed by name alone.
type entity struct {
	id   schema.ObjectID
	typ  entType
	name schema.Sym // the name interned, used as a core's state
	core *core      // set for cores
}

// core is a processor core: its entity and its processor number in the
// CPU model, which keeps what holds it.
type core struct {
	ent *entity
	cpu schema.CPU
}

// procKey is one instance of a process (task or ISR).
type procKey struct {
	obj  schema.ObjectID
	inst int64
}

// looksLikeCore reports whether a name is a core's by the usual naming
// (Core_0, CORE1, ECU1_Core0, cpu0): a source's type is not written in
// BTF, and a core is a core before it is ever some event's target.
func looksLikeCore(name []byte) bool {
	lower := bytes.ToLower(name)
	return bytes.Contains(lower, []byte("core")) || (bytes.HasPrefix(lower, []byte("cpu")) && len(lower) > 3 && lower[3] >= '0' && lower[3] <= '9')
}

// guessSourceType guesses the type of an entity first seen as the source
// of an event, from what the seed's tables allow as source of that target
// type and action. A later appearance as a target settles it.
func guessSourceType(name []byte, target entType, act action) entType {
	if looksLikeCore(name) {
		return tCore
	}
	switch string(name) {
	case "SIM", "SYS", "Sim", "Sys", "sim", "sys":
		return tSim
	}
	switch target {
	case tTask, tISR:
		if act == aActivate {
			return tStimulus
		}
		return tTask // BTF says a core; traces that write a task here (FreeRTOS's logger) mean the previous task
	case tSim:
		return tSim
	}
	return tTask // runnables, semaphores, signals, events, stimuli, schedulers: a process acts on them
}
