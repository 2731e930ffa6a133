// Package ftrace reads Linux ftrace text: the /sys/kernel/tracing/trace
// file (with or without the TGID and flags columns, any tracer: nop with
// events, function, function_graph) and the output of trace-cmd report.
// Scheduling events become thread and CPU states, interrupt and softirq
// events interrupt intervals, system call events system call intervals,
// and every line an event with its fields in args. README.md in this
// directory documents what each part becomes.
package ftrace

import (
	"bytes"
	"context"
	"strconv"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/schema"
)

// Order 35: after QNX traceprinter text (20) and Chrome JSON (30), before
// TLV (40) and DTrace (50). The sniffer wants "# tracer:", trace-cmd's
// header, or an event line whose "TASK-PID [CPU] ... SECONDS.FRACTION:"
// no other format writes.
func init() { ingest.Register(35, Ingester{}) }

// Ingester reads ftrace text.
type Ingester struct{}

// Format describes the format.
func (Ingester) Format() ingest.Format {
	return ingest.Format{Name: "ftrace", Description: "Linux ftrace text (/sys/kernel/tracing/trace, trace-cmd report): threads, CPUs, interrupts, system calls, every event with its fields",
		Patterns: []string{"trace", "*.trace", "trace*.txt", "*.ftrace"}}
}

// Sniff recognizes, among the first lines: "# tracer: " (the trace
// file's header), or trace-cmd report's header lines ("version = N",
// "cpus=N") and comments followed by an event line, or an event line
// first (a trace cut from its header).
func (Ingester) Sniff(head []byte) bool {
	lr := ingest.NewLineReader(bytes.NewReader(head))
	var e eventLine
	header := 0
	for i := 0; i < 64; i++ {
		line, ok := lr.Next()
		if !ok {
			return header >= 2
		}
		t := trimRight(line)
		switch {
		case len(skipBlanks(t)) == 0:
		case bytes.HasPrefix(t, []byte("# tracer: ")):
			return true
		case t[0] == '#':
		case cmdHeader(t) != "":
			header++
		default:
			if _, _, ok := lostMarker(t); ok {
				continue
			}
			return parseEventLine(t, &e) == ""
		}
	}
	return false
}

// cmdHeader names the trace-cmd report header line t is, or "".
func cmdHeader(t []byte) string {
	switch {
	case bytes.HasPrefix(t, []byte("version = ")) && isDigits(t[10:]):
		return "version"
	case bytes.HasPrefix(t, []byte("cpus=")) && isDigits(t[5:]):
		return "cpus"
	case len(t) > 13 && bytes.HasPrefix(t, []byte("CPU ")) && bytes.HasSuffix(t, []byte(" is empty")) && isDigits(t[4:len(t)-9]):
		return "empty"
	}
	return ""
}

// Ingest reads the trace into w.
func (Ingester) Ingest(ctx context.Context, src *ingest.Source, w *schema.RunWriter) error {
	r := newReader(w)
	file := w.Info().Source
	lr := ingest.NewLineReader(src)
	if err := lr.Each(ctx, file, "trace", r.line); err != nil {
		return err
	}
	if lr.Unterminated() {
		// The kernel ends every line it prints: a last line without a line
		// end was cut, and what is left of it may read as another form (a
		// cut "sched_switch: ..." reads as a function tracer line).
		w.Diagf(schema.Warning, lr.Line(), schema.NoSeq, "expected a line end at the end of the file, found none: the trace was cut inside line %d, which was read as far as it goes", lr.Line())
	}
	return r.end()
}

// maxFrames bounds the stack frames kept for one event.
const maxFrames = 1024

// reader holds an event line until the next line that is not one of its
// stack frames (" => func"): the frames go into its args.
type reader struct {
	w  *schema.RunWriter
	m  *machine
	ev eventLine

	have    bool
	buf     []byte // the held line's bytes (ev points into them)
	lineNo  int64
	stack   []byte // its frames so far, a JSON array without the closing bracket
	nFrames int
}

func newReader(w *schema.RunWriter) *reader {
	return &reader{w: w, m: newMachine(w)}
}

// line reads one line:
//  1. a stack frame " => func" joins the event held; with none held
//     (the file begins inside a stack) it is counted in diagnostics;
//  2. any other line first hands the held event to the machine;
//  3. "#" lines are the header (tracer, entries-in-buffer/
//     entries-written) or comments, "##### CPU N buffer started ####"
//     a note; trace-cmd's header lines go to runs.meta; lost-event
//     markers go to the machine; a line of dashes (function_graph's
//     separator) is skipped;
//  4. anything else must be an event line, in the trace layout or the
//     function_graph one; it is held.
func (r *reader) line(line []byte, n int64) error {
	t := trimRight(line)
	if len(skipBlanks(t)) == 0 {
		return nil
	}
	if f, ok := frame(t); ok {
		switch {
		case !r.have:
			r.m.diagOnce(findOrphanFrames, schema.Info, n, schema.NoSeq, func() string {
				return "stack frames (\" => func\") with no event line before them (the file begins inside a stack): skipped"
			})
		case r.nFrames >= maxFrames:
			r.m.diagOnce(findTooManyFrames, schema.Warning, n, schema.NoSeq, func() string {
				return "a stack of more than " + strconv.Itoa(maxFrames) + " frames: the deeper frames are not kept"
			})
		default:
			if r.nFrames == 0 {
				r.stack = append(r.stack[:0], '[')
			} else {
				r.stack = append(r.stack, ',')
			}
			r.stack = ingest.AppendJSONString(r.stack, f)
			r.nFrames++
		}
		return nil
	}
	if err := r.flush(); err != nil {
		return err
	}
	switch {
	case t[0] == '#':
		if cpu, ok := bufferStarted(t); ok {
			r.m.diagOnce(findBufferStarted, schema.Info, n, schema.NoSeq, func() string {
				return "CPU " + strconv.FormatInt(cpu, 10) + "'s buffer starts here (##### CPU N buffer started ####): its older events were overwritten (count = such lines)"
			})
			return nil
		}
		r.header(t, n)
		return nil
	case cmdHeader(t) != "":
		r.cmdHeader(t)
		return nil
	case isDashes(t):
		return nil
	}
	if cpu, count, ok := lostMarker(t); ok {
		if cpu >= maxCPU {
			return r.w.BadLine(n, "expected a CPU number under %d in the lost-events marker, found %d", maxCPU, cpu)
		}
		return r.m.lost(cpu, count, n)
	}
	r.buf = append(r.buf[:0], t...)
	msg := parseEventLine(r.buf, &r.ev)
	if msg != "" {
		var g eventLine
		if matched, gmsg := parseGraphLine(r.buf, &g); matched {
			msg = gmsg
			r.ev = g
		}
	}
	if msg == "" {
		msg = r.w.TimeOutOfBounds(r.ev.ts)
	}
	if msg != "" {
		return r.w.BadLine(n, "%s", msg)
	}
	r.have, r.lineNo, r.nFrames = true, n, 0
	return nil
}

// flush hands the held event to the machine.
func (r *reader) flush() error {
	if !r.have {
		return nil
	}
	r.have = false
	var stack []byte
	if r.nFrames > 0 {
		r.stack = append(r.stack, ']')
		stack = r.stack
	}
	return r.m.event(&r.ev, r.lineNo, stack)
}

func (r *reader) end() error {
	if err := r.flush(); err != nil {
		return err
	}
	return r.m.finish()
}

// header reads the trace file's comment lines: "# tracer: NAME" and
// "# entries-in-buffer/entries-written: IN/WRITTEN   #P:CPUS"; the
// others (the column legend) are skipped.
func (r *reader) header(t []byte, n int64) {
	body := bytes.TrimSpace(t[1:])
	switch {
	case bytes.HasPrefix(body, []byte("tracer: ")):
		r.w.SetMeta("tracer", string(bytes.TrimSpace(body[8:])))
	case bytes.HasPrefix(body, []byte("entries-in-buffer/entries-written: ")):
		rest := body[len("entries-in-buffer/entries-written: "):]
		tok, rest := nextToken(rest)
		if slash := bytes.IndexByte(tok, '/'); slash > 0 {
			in, ok1 := parseUint(tok[:slash])
			wr, ok2 := parseUint(tok[slash+1:])
			if ok1 && ok2 {
				r.w.SetMeta("entries_in_buffer", in)
				r.w.SetMeta("entries_written", wr)
				r.m.entriesInBuffer, r.m.entriesWritten, r.m.entriesLine = in, wr, n
			}
		}
		if p := bytes.Index(rest, []byte("#P:")); p >= 0 {
			if v, ok := parseUint(rest[p+3:]); ok {
				r.w.SetMeta("cpus", v)
			}
		}
	}
}

// cmdHeader reads trace-cmd report's header lines.
func (r *reader) cmdHeader(t []byte) {
	switch cmdHeader(t) {
	case "version":
		v, _ := parseUint(t[10:])
		r.w.SetMeta("trace_cmd_version", v)
	case "cpus":
		v, _ := parseUint(t[5:])
		r.w.SetMeta("cpus", v)
	}
}

func isDashes(t []byte) bool {
	t = bytes.TrimSpace(t)
	return len(t) >= 8 && len(bytes.Trim(t, "-")) == 0
}
