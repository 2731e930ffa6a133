package btf

import (
	"bytes"
	"strings"
)

// action is a BTF action, across all entity types.
type action uint8

const (
	aOther action = iota // not in the seed's tables
	// process (T, I) transitions
	aActivate
	aStart
	aResume
	aPreempt
	aTerminate
	aPoll
	aWait
	aRelease
	aRun
	aPark
	aReleaseParking
	aPollParking
	// process notifications
	aMtaLimitExceeded
	aMigration
	// runnable
	aSuspend // with aStart, aResume, aTerminate
	// semaphore, the semaphore's own actions
	aReady
	aLock
	aUnlock
	aUsed
	aFreed
	aLockUsed
	aUnlockFull
	aOverfull
	aFull
	aFree // not in the seed; real traces write it right after ready
	// semaphore, a process's actions on it
	aRequestSemaphore
	aExclusiveSemaphore
	aAssigned
	aWaiting
	aReleased
	aIncrement
	aDecrement
	aQueued
	// signal
	aRead
	aWrite
	// event
	aWaitEvent
	aSetEvent
	aClearEvent
	// stimulus
	aTrigger
	// simulation / system
	aTag
	aDescription
	aError
	aFinalize
	// core
	aSetFrequency
	// core, TA Simulator's execution-state notifications (not in the seed;
	// see README.md): each restates, on the core, a process transition of
	// the same time
	aCoreExecute           // execute: start
	aCoreIdle              // idle: terminate (or a preempt at a schedule point)
	aCoreIdleExecution     // idle_execution: preempt
	aCoreExecuteIdle       // execute_idle: resume
	aCoreWaitPostexecution // wait_postexecution: poll
	aCoreExecuteWaiting    // execute_waiting: run
	nActions
)

func parseAction(b []byte) action {
	switch string(b) {
	case "activate":
		return aActivate
	case "start":
		return aStart
	case "resume":
		return aResume
	case "preempt":
		return aPreempt
	case "terminate":
		return aTerminate
	case "poll":
		return aPoll
	case "wait":
		return aWait
	case "release":
		return aRelease
	case "run":
		return aRun
	case "park":
		return aPark
	case "release_parking":
		return aReleaseParking
	case "poll_parking":
		return aPollParking
	case "mtalimitexceeded":
		return aMtaLimitExceeded
	case "suspend":
		return aSuspend
	case "ready":
		return aReady
	case "lock":
		return aLock
	case "unlock":
		return aUnlock
	case "used":
		return aUsed
	case "freed":
		return aFreed
	case "lock_used":
		return aLockUsed
	case "unlock_full":
		return aUnlockFull
	case "overfull":
		return aOverfull
	case "full":
		return aFull
	case "free":
		return aFree
	case "requestsemaphore":
		return aRequestSemaphore
	case "exclusivesemaphore":
		return aExclusiveSemaphore
	case "assigned":
		return aAssigned
	case "waiting":
		return aWaiting
	case "released":
		return aReleased
	case "increment":
		return aIncrement
	case "decrement":
		return aDecrement
	case "queued":
		return aQueued
	case "read":
		return aRead
	case "write":
		return aWrite
	case "wait_event":
		return aWaitEvent
	case "set_event":
		return aSetEvent
	case "clear_event":
		return aClearEvent
	case "trigger":
		return aTrigger
	case "tag":
		return aTag
	case "description":
		return aDescription
	case "error":
		return aError
	case "finalize":
		return aFinalize
	case "set_frequence", "set_frequency":
		return aSetFrequency
	case "execute":
		return aCoreExecute
	case "idle":
		return aCoreIdle
	case "idle_execution":
		return aCoreIdleExecution
	case "execute_idle":
		return aCoreExecuteIdle
	case "wait_postexecution":
		return aCoreWaitPostexecution
	case "execute_waiting":
		return aCoreExecuteWaiting
	}
	if bytes.Contains(b, []byte("migration")) {
		return aMigration // fullmigration, enforcedmigration, ...
	}
	if hasUpper(b) {
		return parseAction(bytes.ToLower(b))
	}
	return aOther
}

func hasUpper(b []byte) bool {
	for _, c := range b {
		if c >= 'A' && c <= 'Z' {
			return true
		}
	}
	return false
}

// state is a state of one of the BTF state machines. stNone is "not
// initialized" (no interval: the trace does not say since when) and
// stGone is a final state (terminated): both close the open interval
// without opening one.
type state uint8

const (
	stNone state = iota
	stActive
	stRunning
	stReady
	stWaiting
	stPolling
	stParking
	stSuspended
	stFree
	stUsed
	stFull
	stOverfull
	stGone
	nStates
)

var stateNames = [nStates]string{
	stNone: "not initialized", stActive: "active", stRunning: "running", stReady: "ready",
	stWaiting: "waiting", stPolling: "polling", stParking: "parking", stSuspended: "suspended",
	stFree: "free", stUsed: "used", stFull: "full", stOverfull: "overfull", stGone: "terminated",
}

func (s state) String() string { return stateNames[s] }

// coreEffect says what a process transition does to the core it runs on.
// A polling process waits actively: it stays on its core (the seed's
// process states), which only park takes it off.
type coreEffect uint8

const (
	coreNone  coreEffect = iota
	coreRuns             // the process instance holds the core: it runs or polls on it
	coreStops            // it leaves the core
)

// transition is one row of a state machine table: the states an action is
// allowed from, the state it leads to, and its effect on the core.
type transition struct {
	from  uint32 // bit set of states
	to    state
	core  coreEffect
	known bool
}

func from(states ...state) uint32 {
	var m uint32
	for _, s := range states {
		m |= 1 << s
	}
	return m
}

// processTable is the seed's process state table (tasks and ISRs).
var processTable = [nActions]transition{
	aActivate:       {from(stNone), stActive, coreNone, true},
	aStart:          {from(stActive), stRunning, coreRuns, true},
	aResume:         {from(stReady), stRunning, coreRuns, true},
	aPreempt:        {from(stRunning), stReady, coreStops, true},
	aTerminate:      {from(stRunning), stGone, coreStops, true},
	aPoll:           {from(stRunning), stPolling, coreNone, true},
	aWait:           {from(stRunning), stWaiting, coreStops, true},
	aRelease:        {from(stWaiting), stReady, coreNone, true},
	aRun:            {from(stPolling), stRunning, coreRuns, true},
	aPark:           {from(stPolling), stParking, coreStops, true},
	aReleaseParking: {from(stParking), stReady, coreNone, true},
	aPollParking:    {from(stParking), stPolling, coreRuns, true},
}

// runnableTable is the seed's runnable state table.
var runnableTable = [nActions]transition{
	aStart:     {from(stNone), stRunning, coreNone, true},
	aTerminate: {from(stRunning), stGone, coreNone, true},
	aSuspend:   {from(stRunning), stSuspended, coreNone, true},
	aResume:    {from(stSuspended), stRunning, coreNone, true},
}

// semaphoreTable is the seed's semaphore state chart, driven by the
// semaphore's own actions.
var semaphoreTable = [nActions]transition{
	aReady:      {from(stNone), stFree, coreNone, true},
	aLock:       {from(stFree), stFull, coreNone, true},
	aUsed:       {from(stFree, stUsed), stUsed, coreNone, true},
	aFreed:      {from(stUsed), stFree, coreNone, true},
	aLockUsed:   {from(stUsed), stFull, coreNone, true},
	aUnlock:     {from(stFull), stFree, coreNone, true},
	aUnlockFull: {from(stFull), stUsed, coreNone, true},
	aOverfull:   {from(stFull, stOverfull), stOverfull, coreNone, true},
	aFull:       {from(stOverfull), stFull, coreNone, true},
	aFree:       {from(stNone, stFree, stUsed, stFull, stOverfull), stFree, coreNone, true},
}

// events are actions that are events only, per type: they need no
// transition and are not worth a diagnostic.
var eventOnly = map[entType][]action{
	tTask:      {aMtaLimitExceeded, aMigration},
	tISR:       {aMtaLimitExceeded, aMigration},
	tSemaphore: {aRequestSemaphore, aExclusiveSemaphore, aAssigned, aWaiting, aReleased, aIncrement, aDecrement, aQueued},
	tSignal:    {aRead, aWrite},
	tEvent:     {aWaitEvent, aSetEvent, aClearEvent},
	tStimulus:  {aTrigger},
	tSim:       {aTag, aDescription, aError, aFinalize},
	tCore:      {aSetFrequency, aCoreExecute, aCoreIdle, aCoreIdleExecution, aCoreExecuteIdle, aCoreWaitPostexecution, aCoreExecuteWaiting},
}

// knownAction[t][a] is true when the seed defines action a for type t.
var knownAction [nTypes][nActions]bool

// table[t] is the state machine of type t, nil for types without one.
var table [nTypes]*[nActions]transition

func init() {
	table[tTask], table[tISR] = &processTable, &processTable
	table[tRunnable] = &runnableTable
	table[tSemaphore] = &semaphoreTable
	for t := entType(0); t < nTypes; t++ {
		if tb := table[t]; tb != nil {
			for a := action(0); a < nActions; a++ {
				knownAction[t][a] = tb[a].known
			}
		}
		for _, a := range eventOnly[t] {
			knownAction[t][a] = true
		}
	}
}

// describe lists a bit set of states for messages.
func describe(set uint32) string {
	var names []string
	for s := state(0); s < nStates; s++ {
		if set&(1<<s) != 0 {
			names = append(names, s.String())
		}
	}
	return strings.Join(names, " or ")
}
