// Package tracegen is a deterministic synthetic RTOS schedule simulator that
// writes a BTF (Best Trace Format) trace and returns the ground truth of what
// it simulated. It is meant for tests and benchmarks of the BTF ingestion
// path: the Truth is computed from the simulator's own state, never by
// re-parsing the output.
//
// # Simulated system
//
//   - Cores Core_0..Core_{K-1}, each announced at time 0 with
//     "0,Core_i,0,C,Core_i,0,set_frequency,200000000".
//   - Periodic tasks Task_<period>ms_<n> (periods drawn from
//     {1,2,5,10,20,50,100} ms), task n is bound to core n%K, rate-monotonic
//     static priorities (unique), all released at time 0. Each activation is
//     "t,SIM,-1,STI,Timer_<task>,<n>,trigger" followed by
//     "t,Timer_<task>,<n>,T,<task>,<inst>,activate", or, when the previous
//     instance is still alive, by the notification
//     "t,<task>,<inst>,T,<task>,<inst>,mtalimitexceeded" (no new instance).
//   - One ISR ISR_Tick per core (type I) activated about every 1 ms by the
//     stimulus IRQ_Tick_Core_<i>. The ISR has a higher priority than every
//     task. ISR_Tick is one entity shared by all cores, so its instance
//     counter is global (instances on different cores never share a number).
//   - Each task instance runs 1..3 runnables Run_<task>_<k> sequentially.
//   - One global mutex SEM_Shared, one signal SIG_Speed, one event EV_Done.
//
// # Exact event sequences
//
// Preemption of a task by the tick ISR (task X running runnable R):
//
//	t,SIM,-1,STI,IRQ_Tick_Core_0,n,trigger
//	t,IRQ_Tick_Core_0,n,I,ISR_Tick,i,activate
//	t,X,x,R,R,r,suspend
//	t,Core_0,0,T,X,x,preempt
//	t,Core_0,0,I,ISR_Tick,i,start
//	t+d,Core_0,0,I,ISR_Tick,i,terminate
//	t+d,Core_0,0,T,X,x,resume
//	t+d,X,x,R,R,r,resume
//
// (The same applies to preemption of a task by a higher-priority task.)
//
// Semaphore SEM_Shared (a mutex), free case:
//
//	t,X,x,SEM,SEM_Shared,0,requestsemaphore
//	t,SEM_Shared,0,SEM,SEM_Shared,0,lock          (free -> full)
//	t,X,x,SEM,SEM_Shared,0,assigned
//	...critical section...
//	u,X,x,SEM,SEM_Shared,0,released
//	u,SEM_Shared,0,SEM,SEM_Shared,0,unlock        (full -> free)
//
// Contention (the semaphore is owned by O, a task on another core):
//
//	t,P,p,SEM,SEM_Shared,0,requestsemaphore
//	t,SEM_Shared,0,SEM,SEM_Shared,0,overfull      (full|overfull -> overfull)
//	t,P,p,SEM,SEM_Shared,0,waiting
//	t,Core_j,0,T,P,p,poll                         (running -> polling)
//	...
//	u,O,o,SEM,SEM_Shared,0,released
//	u,P,p,SEM,SEM_Shared,0,assigned               (ownership handed over, no unlock)
//	u,Core_j,0,T,P,p,run                          (polling -> running)
//	u,SEM_Shared,0,SEM,SEM_Shared,0,full          (overfull -> full, only when no other process waits)
//
// A polling task occupies its core (active waiting, the BTF seed's process
// states): the core is busy, held by the polling task. If a higher-priority
// process (e.g. the tick ISR) needs that core, the poller is parked:
// "suspend" of its runnable, then "Core_j,0,T,P,p,park" (polling -> parking).
// When the core becomes free again and the semaphore is still taken, it gets
// "poll_parking" (parking -> polling) followed by the runnable "resume". If
// the semaphore is handed over while it is parked, the "assigned" line is
// followed by "Core_j,0,T,P,p,release_parking" (parking -> ready) and the
// task later gets "resume" (ready -> running) and its runnable "resume".
//
// Same-core contention cannot happen: a task holding SEM_Shared runs with the
// priority ceiling of the semaphore on its core (immediate ceiling protocol),
// so no other user of the semaphore on that core can preempt it.
//
// Counting semaphore SEM_Pool (only with Config.PoolUnits >= 2): each task
// that uses it (drawn after everything else) takes one unit at the start
// of its first runnable, for a short section, and gives it back before
// anything else it does; several tasks hold it at once, up to the units.
// The semaphore's own actions follow the seed's counting semaphore:
//
//	t,X,x,SEM,SEM_Pool,0,requestsemaphore
//	t,SEM_Pool,0,SEM,SEM_Pool,0,used          (free -> used, or used -> used; lock_used when the last unit goes: used -> full)
//	t,X,x,SEM,SEM_Pool,0,assigned
//	u,X,x,SEM,SEM_Pool,0,released
//	u,SEM_Pool,0,SEM,SEM_Pool,0,used          (used -> used; unlock_full from full; freed when the last unit comes back)
//
// A request when every unit is taken waits as for SEM_Shared (overfull,
// waiting, poll); a release hands the unit to the first waiter (assigned,
// run or release_parking; full when no other waits). Its users run at the
// same priority ceiling as SEM_Shared's while they hold a unit.
//
// Event EV_Done: a setter task A and a waiter task B (chosen from the seed)
// with prio(B) > prio(A) and period(A) = m*period(B), preferably on the same
// core. A sets the event at the end of every instance. In the instances
// released by its activations n with n%m == 0 (released together with A's),
// B does, before its first runnable:
//
//	t,B,b,EVENT,EV_Done,0,wait_event
//	t,Core_j,0,T,B,b,wait                         (running -> waiting; only if the event is not set)
//	...
//	u,A,a,EVENT,EV_Done,0,set_event,B
//	u,Core_j,0,T,B,b,release                      (waiting -> ready; only if B waits)
//	...
//	v,Core_j,0,T,B,b,resume
//	v,B,b,EVENT,EV_Done,0,clear_event
//
// If the event is already set, wait_event is directly followed by
// clear_event.
//
// Signal SIG_Speed: task 0 writes it at the end of its last runnable
// ("t,X,x,SIG,SIG_Speed,0,write,<value>") and the last task reads it at the
// start of its first runnable ("t,Y,y,SIG,SIG_Speed,0,read,<current value>").
//
// Priority inversion (only with Config.Inversion): three more tasks on
// Core_0, above every other task, Inv_Low < Inv_Mid < Inv_High (period
// 20 ms, released 200, 500 and 800 us into each period), and a semaphore
// SEM_Inv without a priority ceiling. Inv_Low takes SEM_Inv and computes
// for 1.5 ms holding it; Inv_High preempts it, asks for SEM_Inv and
// blocks (it waits off the core, unlike SEM_Shared's pollers); Inv_Mid
// preempts Inv_Low and runs 500 us while Inv_High waits: a priority
// inversion. Inv_Low gives SEM_Inv to Inv_High when it releases it:
//
//	t,Inv_High,h,SEM,SEM_Inv,0,requestsemaphore
//	t,SEM_Inv,0,SEM,SEM_Inv,0,overfull
//	t,Inv_High,h,SEM,SEM_Inv,0,waiting
//	t,Core_0,0,T,Inv_High,h,wait                  (running -> waiting)
//	...
//	u,Inv_Low,l,SEM,SEM_Inv,0,released
//	u,Inv_High,h,SEM,SEM_Inv,0,assigned
//	u,Core_0,0,T,Inv_High,h,release               (waiting -> ready)
//	u,SEM_Inv,0,SEM,SEM_Inv,0,full
//
// The trace then tells the priorities, which the truth of the inversions
// uses (the effective ones): every task's first activate carries the note
// "pri:N", N = 2 x its rank (1 the lowest task; ISRs have none), and a
// holder of SEM_Shared or SEM_Pool, which runs at the ceiling 2 x c + 1
// (c the highest rank of their users on its core), says so with the
// FreeRTOS BTF logger's words:
//
//	t,Core_j,0,STI,task,0,trigger,priority_inherit X pri:N      (it runs at the ceiling)
//	t,Core_j,0,STI,task,0,trigger,priority_disinherit X pri:N   (back at its own priority)
//
// Within one timestamp, compute completions are processed first (cores in
// index order), then activations (tasks in index order, then ISRs), then
// scheduling decisions.
package tracegen

import (
	"errors"
	"fmt"
	"io"
)

// Config configures the generator.
type Config struct {
	Events    int    // approximate number of BTF data lines to produce (the simulation simply stops once reached)
	Cores     int    // >= 1
	Tasks     int    // number of periodic tasks (default 6 when 0)
	Seed      int64  // seed of math/rand; identical configs produce identical bytes
	TimeScale string // "ns" (default), "us" or "ps": the #timeScale header; timestamps are written in that unit
	// ExecScale multiplies the execution times of the named tasks (1.3:
	// 30% slower), so that two runs of one configuration differ by a known
	// regression. The task names follow from Seed, Cores and Tasks; a name
	// that is not one of them, or a factor <= 0, is an error.
	ExecScale map[string]float64
	// PoolUnits, when 2 or more, adds a counting semaphore SEM_Pool of
	// that many units (see "Counting semaphore" above); 0 leaves the
	// simulation exactly as without it.
	PoolUnits int
	// Inversion adds a known priority inversion (see "Priority
	// inversion" above) and writes the tasks' priorities; false leaves
	// the simulation and its bytes exactly as without it.
	Inversion bool
}

// Truth is what the generator knows, independent of any parser.
//
// The per-process maps (Running, Ready, Polling, Instances, Terminated)
// are keyed by process name: every task name plus "ISR_Tick" (summed over
// all cores). All names are present, possibly with a zero value. Durations
// are in ns.
type Truth struct {
	Lines        int                         // data lines written (events)
	ActionCounts map[string]int              // key "TYPE/action", e.g. "T/start", "SEM/lock", "R/terminate"
	Running      map[string]int64            // per process: total ns in state running (complete intervals only); polling is not running
	Ready        map[string]int64            // per process: total ns in state ready (entered by preempt, release or release_parking; left by resume)
	Polling      map[string]int64            // per process: total ns in state polling (entered by poll or poll_parking; left by run or park), complete intervals only
	Instances    map[string]int              // per process: instances activated
	Terminated   map[string]int              // per process: instances that terminated
	CoreBusy     map[string]int64            // per core name: ns during which a task or ISR held it, running or polling (complete holds only, from start, resume or poll_parking to preempt, terminate, wait or park)
	CoreHeld     map[string]map[string]int64 // per core name: ns each process held it as CoreBusy counts, and "idle" the ns nothing held it (from 0, or the last hold's end, to the next hold; the interval open at the end left out)
	Response     map[string]Sum              // per process: the instances that terminated and their summed response (activate to terminate)
	Latency      map[string]Sum              // per process: the waits for its core that ended (activate to start, and preempt, release or release_parking to resume) and their summed length
	// EvWaits are, per task, the complete waits for EV_Done: from a
	// wait_event that blocks (the wait) to the set_event that releases
	// it, counted at its clear_event (when a TLV rendering's wai_flg
	// returns); EvOpenWaits those the end cuts (blocked, or released and
	// not yet cleared).
	EvWaits     map[string]Sum
	EvOpenWaits int
	// PoolHolds, PoolWaits, PoolOpenHolds and PoolOpenWaits are the same
	// for SEM_Pool (Config.PoolUnits), and PoolMaxHolders the most tasks
	// that held it at once.
	PoolHolds, PoolWaits         map[string]Sum
	PoolOpenHolds, PoolOpenWaits int
	PoolMaxHolders               int
	// Holds and Waits are, per task, the complete holds of SEM_Shared
	// (assigned to released) and the complete waits for it (the
	// requestsemaphore that blocked, at the time of its waiting, to the
	// assigned that ended it). OpenHolds and OpenWaits count those still
	// open when the trace ends.
	Holds, Waits         map[string]Sum
	OpenHolds, OpenWaits int
	// Inversions (Config.Inversion) are the priority inversions of the
	// simulation, in the order they ended: every maximal interval during
	// which a task waited for a semaphore held by a task of a lower
	// effective priority that was ready (preempted) while a task of a
	// priority strictly between them held the holder's core (running or
	// polling), for each (semaphore, waiter, holder, middle task, core).
	// One still open at the end ends at LastTS.
	Inversions []Inversion
	FirstTS    int64 // ns, timestamp of the first data line
	LastTS     int64 // ns, timestamp of the last data line
}

// Inversion is one priority inversion of the simulation (ns).
type Inversion struct {
	Resource, High, Low, Middle, Core string
	Start, End                        int64
}

// Sum is a count of things and their summed length (ns).
type Sum struct{ N, NS int64 }

func (s *Sum) add(ns int64) { s.N, s.NS = s.N+1, s.NS+ns }

// WriteBTF simulates and writes a BTF trace to w; returns the truth.
func WriteBTF(w io.Writer, cfg Config) (Truth, error) {
	if cfg.Events <= 0 {
		return Truth{}, errors.New("tracegen: Events must be > 0")
	}
	if cfg.Cores < 1 {
		return Truth{}, errors.New("tracegen: Cores must be >= 1")
	}
	if cfg.Tasks < 0 {
		return Truth{}, errors.New("tracegen: Tasks must be >= 0")
	}
	if cfg.Tasks == 0 {
		cfg.Tasks = 6
	}
	if cfg.TimeScale == "" {
		cfg.TimeScale = "ns"
	}
	s, err := newSim(w, cfg)
	if err != nil {
		return Truth{}, err
	}
	s.run()
	if err := s.bw.Flush(); err != nil && s.werr == nil {
		s.werr = err
	}
	if s.werr != nil {
		return Truth{}, fmt.Errorf("tracegen: write: %w", s.werr)
	}
	return s.truth(), nil
}
