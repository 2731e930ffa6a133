package recount

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// TOPPERSCalls is what the raw lines of a TOPPERS/ASP log say of its
// service calls and dispatches, recounted by the small state machine of
// ReadTOPPERSCalls (not the ingester's code).
type TOPPERSCalls struct {
	// Calls: "CONTEXT CALL ENTER LEAVE ARGS | RET", sorted: ENTER and
	// LEAVE in ns, -1 for a missing end (a call that never returned:
	// ext_tsk; a return whose call was not seen); ARGS and RET the rest
	// of the lines as the kernel printed it ("dlytim=10.", "ercd=0.").
	Calls []string
	// Dispatches: per task, the lines "dispatch to task N."; their
	// times (ns) in DispatchTimes.
	Dispatches    map[string]int
	DispatchTimes map[string][]int64
	First         int64 // ns: the time of the first line the rules make events of (-1: none)
}

var (
	callEnterRe = regexp.MustCompile(`^enter to (\w\w+_\w+|get_utm)(?: (.+))?\.?\s*$`)
	callLeaveRe = regexp.MustCompile(`^leave (?:from|to) (\w\w+_\w+|get_utm)(?: (.+))?\.?\s*$`)
	// the calls any context may make; the others are the running task's
	anyContextRe = regexp.MustCompile(`^(i\w+_\w+|x?sns_\w+|get_utm|ext_ker)$`)
	texEnterRe   = regexp.MustCompile(`^enter to tex\b`)
)

// ReadTOPPERSCalls recounts the service calls of a TOPPERS/ASP log (one
// processor) with the resource file that names its tasks and handlers.
// Whose call it is, as TLV's rules say (the bundled asp.cnv): a task's
// call (a name not starting with i or x, not sns_*, get_utm or ext_ker)
// is the RUNNING task's: the one of the last "dispatch to task N." until
// "task N becomes X." says it stopped (no task: the line is no one's);
// any other is the current context's: the task of the last "dispatch to"
// or the handler (or task exception routine) of the last "enter to", the
// one that ran last. A call ends at the next "leave from" of its name in
// the same context.
func ReadTOPPERSCalls(logPath, resPath string) (*TOPPERSCalls, error) {
	names, _, scale, err := readRes(resPath)
	if err != nil {
		return nil, err
	}
	lines, err := readLogLines(logPath)
	if err != nil {
		return nil, err
	}
	rc := &TOPPERSCalls{Dispatches: map[string]int{}, DispatchTimes: map[string][]int64{}, First: -1}
	// seen notes the time of a line the rules make events of (asp_stats.log
	// begins with lines "[1] task 1 CPU utilization 40%." they do not read)
	seen := func(ts int64) {
		if rc.First < 0 {
			rc.First = ts
		}
	}
	type open struct {
		call  string
		enter int64
		args  string
	}
	var (
		running, current string
		pending          = map[string]*open{} // per context, its call in progress
	)
	for _, l := range lines {
		ts := l.ns * scale
		if m := callEnterRe.FindStringSubmatch(l.msg); m != nil && !handlerRe.MatchString(l.msg) {
			ctx := running
			if anyContextRe.MatchString(m[1]) {
				ctx = current
			}
			if ctx == "" {
				continue
			}
			seen(ts)
			if p := pending[ctx]; p != nil {
				rc.Calls = append(rc.Calls, fmt.Sprintf("%s %s %d -1 %s | ", ctx, p.call, p.enter, p.args))
			}
			pending[ctx] = &open{m[1], ts, m[2]}
			continue
		}
		if m := callLeaveRe.FindStringSubmatch(l.msg); m != nil && !handlerRe.MatchString(l.msg) {
			ctx := running
			if anyContextRe.MatchString(m[1]) {
				ctx = current
			}
			if ctx == "" {
				continue
			}
			seen(ts)
			if p := pending[ctx]; p != nil && p.call == m[1] {
				rc.Calls = append(rc.Calls, fmt.Sprintf("%s %s %d %d %s | %s", ctx, p.call, p.enter, ts, p.args, m[2]))
				delete(pending, ctx)
			} else {
				if p != nil {
					rc.Calls = append(rc.Calls, fmt.Sprintf("%s %s %d -1 %s | ", ctx, p.call, p.enter, p.args))
					delete(pending, ctx)
				}
				rc.Calls = append(rc.Calls, fmt.Sprintf("%s %s -1 %d  | %s", ctx, m[1], ts, m[2]))
			}
			continue
		}
		switch {
		case dispToRe.MatchString(l.msg):
			name, ok := names["Task "+dispToRe.FindStringSubmatch(l.msg)[1]]
			if !ok {
				continue
			}
			seen(ts)
			rc.Dispatches[name]++
			rc.DispatchTimes[name] = append(rc.DispatchTimes[name], ts)
			running, current = name, name
		case becomesRe.MatchString(l.msg):
			m := becomesRe.FindStringSubmatch(l.msg)
			if _, ok := names["Task "+m[1]]; ok {
				seen(ts)
			}
			if name := names["Task "+m[1]]; name == running && m[2] != "RUNNING" {
				running = ""
			}
		case handlerRe.MatchString(l.msg):
			m := handlerRe.FindStringSubmatch(l.msg)
			if name, ok := names[handlerTypes[m[2]]+" "+m[3]]; ok {
				seen(ts)
				if m[1] == "enter to" {
					current = name
				}
			}
		case texEnterRe.MatchString(l.msg):
			if name, ok := names["TaskExceptionRoutine"]; ok {
				seen(ts)
				current = name
			}
		}
	}
	for ctx, p := range pending {
		rc.Calls = append(rc.Calls, fmt.Sprintf("%s %s %d -1 %s | ", ctx, p.call, p.enter, p.args))
	}
	sort.Strings(rc.Calls)
	for i, c := range rc.Calls {
		rc.Calls[i] = strings.TrimSpace(c)
	}
	return rc, nil
}
