package export

import (
	"bufio"
	"context"
	"database/sql"
	_ "embed"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/traceduck/traceduck/ingest"
)

var (
	//go:embed chrome_tracks.sql
	chromeTracksSQL string
	//go:embed chrome_slices.sql
	chromeSlicesSQL string
	//go:embed chrome_events.sql
	chromeEventsSQL string
	//go:embed chrome_load.sql
	chromeLoadSQL string
	//go:embed chrome_flows.sql
	chromeFlowsSQL string
	//go:embed chrome_resources.sql
	chromeResourcesSQL string
	//go:embed chrome_calls.sql
	chromeCallsSQL string
)

// ChromeOptions says what the Chrome export writes.
type ChromeOptions struct {
	Run int32
	// From and To bound the time window [From, To) in ns; a nil bound is
	// the run's start or end. Intervals are clipped to the window.
	From, To *int64
	// LoadWindow is the width of the CPU load counter's windows in ns; 0
	// chooses about 1000 windows over the exported time. One that would
	// make more than MaxLoadWindows windows is refused.
	LoadWindow int64
}

// MaxLoadWindows bounds the CPU load windows of an export: one counter
// value per CPU and window, about 70 bytes each (a million windows of 8
// CPUs is about 560 MB of JSON, more than Perfetto UI opens comfortably).
const MaxLoadWindows = 1_000_000

// ChromeResult counts what the export wrote.
type ChromeResult struct {
	Slices, Instants, Counters, Tracks int
	Flows                              int // arrows: a message's (client to server) and its reply's (server to client)
	Holds, Waits                       int // slices of the tracks "RESOURCE holds" and "RESOURCE waits"
	Calls                              int // slices of the tracks "OBJECT calls" (service_calls)
}

// Chrome process ids: the CPUs, then the real processes keep their pid,
// the groups by kind get ids above every 32-bit pid (kindPidBase + n).
const (
	cpusPid     = 0x7fff_0000
	kindPidBase = 0x7fff_0001
)

// laneShift makes the tid of an object's extra lane: intervals of one
// object that overlap without nesting (several instances of a BTF task)
// would break the nesting of complete events on one track, so they go to
// lane 1, 2... shown as threads "NAME #lane".
const laneShift = 24

// relationShift makes the tids of a resource's tracks of holds (1) and
// waits (2), and of an object's track of calls (3), beside the resource's own track: above every object id and
// lane, below 2^53 (JSON numbers are doubles for chrome://tracing).
const relationShift = 40

// track is where one object's events go.
type track struct {
	pid, tid int64
	name     string
	kind     string
	counter  bool
	lanes    [][]int64 // per lane, the end times of the open slices (a stack)
}

// Chrome writes run opt.Run in the Trace Event Format (the JSON object
// form), which Perfetto UI and chrome://tracing open: state intervals as
// complete events ("X") on one thread track per object (in a run of
// several CPUs coloured by the core they began on, cname), grouped into a
// process per real process, per object kind, and one for the CPUs (whose
// intervals say what ran on them); the events no slice shows (neither an
// end of one of their object's intervals nor of a call) as instant
// events ("i"); the states of numeric signals and counters, and
// the load of each CPU, as counter events ("C"); holds and waits of each
// resource as complete events named after the holder or waiter on two
// tracks beside the resource's, "RESOURCE holds" and "RESOURCE waits"
// (several open at once go to lanes, as above); the complete calls of
// service_calls (TOPPERS's service calls) as complete events on a track
// "OBJECT calls" beside the object's; messages as flows ("s"
// to "f": an arrow from the client's track at the send to the server's
// at the receive, and one back at the reply); names as metadata ("M").
// Timestamps are µs with ns digits. The output is written as the rows
// stream from the database; nothing is held per event.
func Chrome(ctx context.Context, db *sql.DB, w io.Writer, opt ChromeOptions) (ChromeResult, error) {
	var res ChromeResult
	var name, format, source string
	var first, last sql.NullInt64
	err := db.QueryRowContext(ctx, `SELECT coalesce(name, ''), format, coalesce(source, ''), first_ts, last_ts FROM runs WHERE run_id = ?`, opt.Run).
		Scan(&name, &format, &source, &first, &last)
	if err == sql.ErrNoRows {
		return res, fmt.Errorf("run %d: no such run (see 'SELECT run_id, name FROM runs')", opt.Run)
	}
	if err != nil {
		return res, err
	}
	from, to := int64(math.MinInt64), int64(math.MaxInt64)
	if opt.From != nil {
		from = *opt.From
	}
	if opt.To != nil {
		to = *opt.To
	}
	if from >= to {
		return res, fmt.Errorf("time window [%d, %d): expected --from before --to", from, to)
	}
	span := func(lo, hi int64) int64 {
		if first.Valid && lo < first.Int64 {
			lo = first.Int64
		}
		if last.Valid && hi > last.Int64 {
			hi = last.Int64
		}
		return hi - lo
	}(from, to)
	window := opt.LoadWindow
	if window <= 0 {
		window = niceWindow(span / 1000)
	}
	if n := windowsOver(span, window); n > MaxLoadWindows {
		return res, fmt.Errorf("CPU load window of %d ns: expected at most %d windows over the %d ns exported, found %d (a wider --load-window, or --from and --to, makes fewer)",
			window, MaxLoadWindows, span, n)
	}
	args := []any{sql.Named("run", opt.Run), sql.Named("from", from), sql.Named("to", to)}

	out := &chromeWriter{w: bufio.NewWriterSize(w, 1<<16)}
	out.raw(`{"displayTimeUnit":"ns","otherData":{"traceduck_run":`)
	out.int(int64(opt.Run))
	out.raw(`,"name":`)
	out.str(name)
	out.raw(`,"format":`)
	out.str(format)
	out.raw(`,"source":`)
	out.str(source)
	out.raw(`},"traceEvents":[`)

	// 1. Tracks: one thread per object, one process per group, named by
	//    metadata events.
	tracks, err := chromeTracks(ctx, db, opt.Run, out)
	if err != nil {
		return res, err
	}
	res.Tracks = len(tracks)
	cpuByName := map[string]*track{}
	for _, t := range tracks {
		if t.pid == cpusPid {
			cpuByName[t.name] = t
		}
	}

	// A run of several CPUs colours each state slice by the core it
	// began on (TLV's figure 11: the executing core as the background of
	// the task states).
	multiCPU := len(cpuByName) > 1

	// 2. Slices, sorted by start (the longer first): each goes to the
	//    first lane of its object where it nests (every open slice that
	//    ended by its start is closed first); counters' states become
	//    counter events.
	rows, err := db.QueryContext(ctx, chromeSlicesSQL, args...)
	if err != nil {
		return res, err
	}
	for rows.Next() {
		var (
			obj                int64
			instance           sql.NullInt64
			state              sql.NullString
			cpu                sql.NullInt64
			start, end         int64
			truncated, clipped bool
		)
		if err := rows.Scan(&obj, &state, &instance, &cpu, &start, &end, &truncated, &clipped); err != nil {
			rows.Close()
			return res, err
		}
		t := tracks[obj]
		if t == nil {
			continue
		}
		if t.counter {
			v, _ := strconv.ParseFloat(state.String, 64)
			out.counter(t.pid, t.name, start, "value", v)
			res.Counters++
			continue
		}
		tid := t.tid + int64(t.lane(start, end))<<laneShift
		if tid != t.tid && !out.named[tid] {
			out.threadName(t.pid, tid, fmt.Sprintf("%s #%d", t.name, tid>>laneShift))
		}
		out.sep()
		out.raw(`{"ph":"X"`)
		if state.Valid {
			out.raw(`,"name":`)
			out.str(state.String)
		}
		out.raw(`,"cat":`)
		out.str(t.kind)
		if cpu.Valid && multiCPU {
			out.raw(`,"cname":`)
			out.str(CoreColour(cpu.Int64))
		}
		out.raw(`,"ts":`)
		out.us(start)
		out.raw(`,"dur":`)
		out.us(end - start)
		out.ids(t.pid, tid)
		out.raw(`,"args":{`)
		comma := ""
		if instance.Valid {
			out.raw(`"instance":`)
			out.int(instance.Int64)
			comma = ","
		}
		if cpu.Valid {
			out.raw(comma + `"cpu":`)
			out.int(cpu.Int64)
			comma = ","
		}
		if truncated {
			out.raw(comma + `"truncated":true`)
			comma = ","
		}
		if clipped {
			out.raw(comma + `"clipped":true`)
		}
		out.raw(`}}`)
		res.Slices++
	}
	if err := rows.Close(); err != nil {
		return res, err
	}
	if err := rows.Err(); err != nil {
		return res, err
	}

	// 2b. Holds and waits, on their resource's two tracks.
	if res.Holds, res.Waits, err = chromeResources(ctx, db, out, tracks, args); err != nil {
		return res, err
	}

	// 2c. Service calls, on their object's track of calls.
	if res.Calls, err = chromeCalls(ctx, db, out, tracks, args); err != nil {
		return res, err
	}

	// 3. The events no slice shows, as instants on their object's track
	//    (or the whole process's when they have none).
	rows, err = db.QueryContext(ctx, chromeEventsSQL, args...)
	if err != nil {
		return res, err
	}
	for rows.Next() {
		var (
			ts                 int64
			class, event       sql.NullString // NULL: a Chrome event without cat (or name)
			obj, cpu           sql.NullInt64
			context, value, js sql.NullString
		)
		if err := rows.Scan(&ts, &class, &event, &obj, &context, &value, &js, &cpu); err != nil {
			rows.Close()
			return res, err
		}
		out.sep()
		// Members of NULL columns are left out, as the format allows for
		// cat (and Perfetto for name): read back, they are NULL again.
		out.raw(`{"ph":"i"`)
		if event.Valid {
			out.raw(`,"name":`)
			out.str(event.String)
		}
		if class.Valid {
			out.raw(`,"cat":`)
			out.str(class.String)
		}
		out.raw(`,"ts":`)
		out.us(ts)
		if t := tracks[obj.Int64]; obj.Valid && t != nil {
			out.ids(t.pid, t.tid)
			out.raw(`,"s":"t"`)
		} else {
			out.ids(cpusPid, 0)
			out.raw(`,"s":"p"`)
		}
		out.raw(`,"args":{`)
		comma := ""
		if context.Valid {
			out.raw(`"context":`)
			out.str(context.String)
			comma = ","
		}
		if value.Valid {
			out.raw(comma + `"value":`)
			out.str(value.String)
			comma = ","
		}
		if cpu.Valid {
			out.raw(comma + `"cpu":`)
			out.int(cpu.Int64)
			comma = ","
		}
		if js.Valid && js.String != "" {
			// args is JSON already (the tables hold valid JSON only).
			out.raw(comma + `"args":`)
			out.raw(js.String)
		}
		out.raw(`}}`)
		res.Instants++
	}
	if err := rows.Close(); err != nil {
		return res, err
	}
	if err := rows.Err(); err != nil {
		return res, err
	}

	// 4. Messages: an arrow from the client to the server, and one back
	//    for the reply, each bound to the slices around its ends.
	if res.Flows, err = chromeFlows(ctx, db, out, tracks, args); err != nil {
		return res, err
	}

	// 5. CPU load per window, one counter track per CPU.
	if len(cpuByName) > 0 {
		rows, err = db.QueryContext(ctx, chromeLoadSQL, append(args, sql.Named("window", window))...)
		if err != nil {
			return res, err
		}
		for rows.Next() {
			var cpu string
			var ws int64
			var load float64
			if err := rows.Scan(&cpu, &ws, &load); err != nil {
				rows.Close()
				return res, err
			}
			out.counter(cpusPid, "CPU load", ws, cpu, load)
			res.Counters++
		}
		if err := rows.Close(); err != nil {
			return res, err
		}
		if err := rows.Err(); err != nil {
			return res, err
		}
	}
	out.raw("]}\n")
	return res, out.w.Flush()
}

// chromeFlows writes the messages of message_round_trips as flow events:
// "s" on the sender's track, "f" on the receiver's with "bp":"e" (bound
// to the slice that encloses it, as at the "s"), one id per arrow, cat
// "message", name "message" (a round trip's request), "reply" or
// "one-way"; args msg_id and the durations.
func chromeFlows(ctx context.Context, db *sql.DB, out *chromeWriter, tracks map[int64]*track, args []any) (int, error) {
	rows, err := db.QueryContext(ctx, chromeFlowsSQL, args...)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	n := 0
	arrow := func(name string, from, to *track, start, end int64, id sql.NullInt64, durs [3]sql.NullInt64) {
		n++
		for i, t := range []*track{from, to} {
			out.sep()
			if i == 0 {
				out.raw(`{"ph":"s","name":`)
			} else {
				out.raw(`{"ph":"f","bp":"e","name":`)
			}
			out.str(name)
			out.raw(`,"cat":"message","id":`)
			out.int(int64(n))
			out.raw(`,"ts":`)
			if i == 0 {
				out.us(start)
			} else {
				out.us(end)
			}
			out.ids(t.pid, t.tid)
			out.raw(`,"args":{`)
			comma := ""
			if id.Valid {
				out.raw(`"msg_id":`)
				out.int(id.Int64)
				comma = ","
			}
			for k, key := range []string{"wait_ns", "service_ns", "total_ns"} {
				if durs[k].Valid {
					out.raw(comma + `"` + key + `":`)
					out.int(durs[k].Int64)
					comma = ","
				}
			}
			out.raw(`}}`)
		}
	}
	for rows.Next() {
		var (
			client, server       int64
			id, reply            sql.NullInt64
			oneWay               bool
			send, receive        int64
			wait, service, total sql.NullInt64
		)
		if err := rows.Scan(&client, &server, &id, &oneWay, &send, &receive, &reply, &wait, &service, &total); err != nil {
			return n, err
		}
		c, s := tracks[client], tracks[server]
		if c == nil || s == nil || c.counter || s.counter {
			continue
		}
		durs := [3]sql.NullInt64{wait, service, total}
		if oneWay {
			arrow("one-way", c, s, send, receive, id, durs)
			continue
		}
		arrow("message", c, s, send, receive, id, durs)
		if reply.Valid {
			arrow("reply", s, c, reply.Int64, reply.Int64, id, durs)
		}
	}
	if err := rows.Close(); err != nil {
		return n, err
	}
	return n, rows.Err()
}

// chromeResources writes the holds and waits of resource_intervals as
// complete events: name the holder or waiter, cat "hold" or "wait", on
// the track "RESOURCE holds" or "RESOURCE waits" of the resource's
// process; args the resource's kind, how it ended (released, assigned,
// gave_up), truncated and clipped as for slices.
func chromeResources(ctx context.Context, db *sql.DB, out *chromeWriter, tracks map[int64]*track, args []any) (holds, waits int, err error) {
	rows, err := db.QueryContext(ctx, chromeResourcesSQL, args...)
	if err != nil {
		return 0, 0, err
	}
	defer rows.Close()
	var (
		sub    *track
		subRes int64 = -1
		subRel string
	)
	for rows.Next() {
		var (
			resource           int64
			relation, actor    string
			kind, ended        sql.NullString
			start, end         int64
			truncated, clipped bool
		)
		if err := rows.Scan(&resource, &relation, &actor, &kind, &ended, &start, &end, &truncated, &clipped); err != nil {
			return holds, waits, err
		}
		rt := tracks[resource]
		if rt == nil {
			continue
		}
		if resource != subRes || relation != subRel {
			rel, label := int64(1), " holds"
			if relation == "wait" {
				rel, label = 2, " waits"
			}
			sub = &track{pid: rt.pid, tid: rt.tid + rel<<relationShift, name: rt.name + label, kind: relation}
			subRes, subRel = resource, relation
			out.threadName(sub.pid, sub.tid, sub.name)
			out.metaInt("thread_sort_index", sub.pid, sub.tid, int(rt.tid))
		}
		tid := sub.tid + int64(sub.lane(start, end))<<laneShift
		if tid != sub.tid && !out.named[tid] {
			out.threadName(sub.pid, tid, fmt.Sprintf("%s #%d", sub.name, tid>>laneShift&(1<<(relationShift-laneShift)-1)))
		}
		out.sep()
		out.raw(`{"ph":"X","name":`)
		out.str(actor)
		out.raw(`,"cat":`)
		out.str(relation)
		out.raw(`,"ts":`)
		out.us(start)
		out.raw(`,"dur":`)
		out.us(end - start)
		out.ids(sub.pid, tid)
		out.raw(`,"args":{"resource":`)
		out.str(rt.name)
		if kind.Valid {
			out.raw(`,"kind":`)
			out.str(kind.String)
		}
		if ended.Valid {
			out.raw(`,"ended":`)
			out.str(ended.String)
		}
		if truncated {
			out.raw(`,"truncated":true`)
		}
		if clipped {
			out.raw(`,"clipped":true`)
		}
		out.raw(`}}`)
		if relation == "wait" {
			waits++
		} else {
			holds++
		}
	}
	return holds, waits, rows.Err()
}

// chromeCalls writes the complete calls of service_calls as complete
// events: name the call, cat "call", on the track "OBJECT calls" beside
// the object's (a call spans the states its object goes through: a task
// in dly_tsk waits and becomes ready inside it, so calls and states do
// not nest on one track); args the call's arguments and what it returned
// (the enter's and the leave's args), the processor, backwards (the log
// timestamps the leave before the enter: a call of no length) and
// clipped.
func chromeCalls(ctx context.Context, db *sql.DB, out *chromeWriter, tracks map[int64]*track, args []any) (int, error) {
	rows, err := db.QueryContext(ctx, chromeCallsSQL, args...)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	var (
		sub    *track
		subObj int64 = -1
		n      int
	)
	for rows.Next() {
		var (
			obj                 int64
			call                string
			start, end          int64
			backwards, clipped  bool
			enterArgs, leaveArg sql.NullString
			cpu                 sql.NullInt64
		)
		if err := rows.Scan(&obj, &call, &start, &end, &backwards, &enterArgs, &leaveArg, &cpu, &clipped); err != nil {
			return n, err
		}
		ot := tracks[obj]
		if ot == nil || ot.counter {
			continue
		}
		if obj != subObj {
			sub = &track{pid: ot.pid, tid: ot.tid + 3<<relationShift, name: ot.name + " calls", kind: "call"}
			subObj = obj
			out.threadName(sub.pid, sub.tid, sub.name)
			out.metaInt("thread_sort_index", sub.pid, sub.tid, int(ot.tid))
		}
		tid := sub.tid + int64(sub.lane(start, end))<<laneShift
		if tid != sub.tid && !out.named[tid] {
			out.threadName(sub.pid, tid, fmt.Sprintf("%s #%d", sub.name, tid>>laneShift&(1<<(relationShift-laneShift)-1)))
		}
		out.sep()
		out.raw(`{"ph":"X","name":`)
		out.str(call)
		out.raw(`,"cat":"call","ts":`)
		out.us(start)
		out.raw(`,"dur":`)
		out.us(end - start)
		out.ids(sub.pid, tid)
		out.raw(`,"args":{"object":`)
		out.str(ot.name)
		// args are JSON already (the tables hold valid JSON only).
		if enterArgs.Valid && enterArgs.String != "" {
			out.raw(`,"enter":`)
			out.raw(enterArgs.String)
		}
		if leaveArg.Valid && leaveArg.String != "" {
			out.raw(`,"leave":`)
			out.raw(leaveArg.String)
		}
		if cpu.Valid {
			out.raw(`,"cpu":`)
			out.int(cpu.Int64)
		}
		if backwards {
			out.raw(`,"backwards":true`)
		}
		if clipped {
			out.raw(`,"clipped":true`)
		}
		out.raw(`}}`)
		n++
	}
	return n, rows.Err()
}

// chromeTracks reads the tracks and writes their names.
func chromeTracks(ctx context.Context, db *sql.DB, run int32, out *chromeWriter) (map[int64]*track, error) {
	rows, err := db.QueryContext(ctx, chromeTracksSQL, sql.Named("run", run))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	tracks := map[int64]*track{}
	groups := map[string]int64{}
	nextKindPid := int64(kindPidBase)
	for rows.Next() {
		var (
			obj, order             int64
			kind, name, key, gname string
			native                 sql.NullInt64
			counter                bool
		)
		if err := rows.Scan(&obj, &kind, &name, &native, &key, &gname, &order, &counter); err != nil {
			return nil, err
		}
		pid, seen := groups[key]
		if !seen {
			switch {
			case key == "cpus":
				pid = cpusPid
			case order == 1:
				pid, _ = strconv.ParseInt(key[len("pid:"):], 10, 64)
			default:
				pid = nextKindPid
				nextKindPid++
			}
			groups[key] = pid
			out.meta("process_name", pid, 0, "name", gname)
			out.metaInt("process_sort_index", pid, 0, len(groups))
		}
		t := &track{pid: pid, tid: obj, name: name, kind: kind, counter: counter}
		tracks[obj] = t
		if !counter {
			label := name
			if native.Valid && kind != "cpu" {
				label = fmt.Sprintf("%s (%d)", name, native.Int64)
			}
			out.threadName(pid, obj, label)
			out.metaInt("thread_sort_index", pid, obj, int(obj))
		}
	}
	return tracks, rows.Err()
}

// coreColours are reserved colour names of the Trace Event Format
// (Catapult's color_scheme: "cname"), one per core, distinct at a
// glance. chrome://tracing paints a slice with its cname; Perfetto UI
// ignores cname on purpose and colours a slice by its name.
var coreColours = [...]string{"thread_state_running", "rail_response", "bad", "terrible", "rail_animation", "olive", "yellow", "grey"}

// CoreColour is the cname of the slices that began on CPU cpu (the
// colours repeat after eight cores).
func CoreColour(cpu int64) string {
	if cpu < 0 {
		cpu = -cpu
	}
	return coreColours[cpu%int64(len(coreColours))]
}

// lane returns the lane of the object's track where [start, end) nests.
func (t *track) lane(start, end int64) int {
	for i := range t.lanes {
		s := t.lanes[i]
		for len(s) > 0 && s[len(s)-1] <= start {
			s = s[:len(s)-1]
		}
		t.lanes[i] = s
		if len(s) == 0 || end <= s[len(s)-1] {
			t.lanes[i] = append(s, end)
			return i
		}
	}
	t.lanes = append(t.lanes, []int64{end})
	return len(t.lanes) - 1
}

// windowsOver is the number of windows of width w (> 0) that cover span
// ns, rounded up, without the overflow of span + w - 1.
func windowsOver(span, w int64) int64 {
	if span <= 0 {
		return 0
	}
	n := span / w
	if span%w != 0 {
		n++
	}
	return n
}

// niceWindow rounds a width up to 1, 2 or 5 times a power of ten ns, at
// least 1 µs.
func niceWindow(ns int64) int64 {
	w := int64(1000)
	for w < ns {
		switch {
		case w*2 >= ns:
			return w * 2
		case w*5 >= ns:
			return w * 5
		}
		w *= 10
	}
	return w
}

// chromeWriter appends JSON to a buffered writer; the first write error
// is the one Flush returns.
type chromeWriter struct {
	w     *bufio.Writer
	buf   []byte
	n     int // events written
	named map[int64]bool
}

func (c *chromeWriter) raw(s string) { c.w.WriteString(s) }

func (c *chromeWriter) str(s string) {
	c.buf = ingest.AppendJSONString(c.buf[:0], []byte(s))
	c.w.Write(c.buf)
}

func (c *chromeWriter) int(v int64) {
	c.buf = strconv.AppendInt(c.buf[:0], v, 10)
	c.w.Write(c.buf)
}

// us writes ns as µs with three decimals: exact, no float rounding.
func (c *chromeWriter) us(ns int64) {
	b := c.buf[:0]
	if ns < 0 {
		b = append(b, '-')
		ns = -ns
	}
	b = strconv.AppendUint(b, uint64(ns)/1000, 10)
	if frac := uint64(ns) % 1000; frac != 0 {
		b = append(b, '.', byte('0'+frac/100), byte('0'+frac/10%10), byte('0'+frac%10))
	}
	c.buf = b
	c.w.Write(b)
}

func (c *chromeWriter) sep() {
	if c.n > 0 {
		c.w.WriteString(",\n")
	} else {
		c.w.WriteString("\n")
	}
	c.n++
}

func (c *chromeWriter) ids(pid, tid int64) {
	c.raw(`,"pid":`)
	c.int(pid)
	c.raw(`,"tid":`)
	c.int(tid)
}

func (c *chromeWriter) meta(what string, pid, tid int64, key, value string) {
	c.sep()
	c.raw(`{"ph":"M","name":`)
	c.str(what)
	c.ids(pid, tid)
	c.raw(`,"args":{`)
	c.str(key)
	c.raw(`:`)
	c.str(value)
	c.raw(`}}`)
}

func (c *chromeWriter) metaInt(what string, pid, tid int64, v int) {
	c.sep()
	c.raw(`{"ph":"M","name":`)
	c.str(what)
	c.ids(pid, tid)
	c.raw(`,"args":{"sort_index":`)
	c.int(int64(v))
	c.raw(`}}`)
}

func (c *chromeWriter) threadName(pid, tid int64, name string) {
	if c.named == nil {
		c.named = map[int64]bool{}
	}
	c.named[tid] = true
	c.meta("thread_name", pid, tid, "name", name)
}

func (c *chromeWriter) counter(pid int64, name string, ts int64, series string, v float64) {
	c.sep()
	c.raw(`{"ph":"C","name":`)
	c.str(name)
	c.raw(`,"ts":`)
	c.us(ts)
	c.ids(pid, 0)
	c.raw(`,"args":{`)
	c.str(series)
	c.raw(`:`)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		v = 0
	}
	c.buf = strconv.AppendFloat(c.buf[:0], v, 'g', -1, 64)
	c.w.Write(c.buf)
	c.raw(`}}`)
}
