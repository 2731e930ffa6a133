package ftrace

import (
	"bytes"
	"fmt"
)

// bodyForm is what follows the timestamp of an event line.
type bodyForm uint8

const (
	formEvent     bodyForm = iota // "EVENT: fields" (tracepoints, trace_printk, trace-cmd's padded names)
	formFunction                  // "func <-parent" (function tracer)
	formSysEnter                  // "sys_read(fd: 3, ...)" (syscalls events as the kernel prints them)
	formSysExit                   // "sys_read -> 0x0"
	formKernStack                 // "<stack trace>", frames on the lines after it
	formUserStack                 // "<user stack trace>"
	formGraph                     // a function_graph line (graphLine holds it)
)

// eventLine is one parsed event line. The byte slices point into the
// line and are valid as long as it is.
type eventLine struct {
	task    []byte // the TASK column: a comm ("Web Content"), "<...>" or "<idle>"
	pid     int64  // the thread id of the TASK-PID column
	tgid    int64  // the TGID column; -1 without one or when printed as (-------)
	cpu     int64
	flags   []byte // irqs-off, need-resched, hardirq/softirq, preempt-depth; nil without the column
	ts      int64  // ns
	form    bodyForm
	name    []byte // the event's name (sched_switch, function, sys_read, ...)
	body    []byte // the fields text after the name
	graph   graphLine
	hasTask bool // false for function_graph lines without the funcgraph-proc column
}

// maxCPU bounds the CPU numbers accepted (objects are made per CPU).
const maxCPU = 1 << 16

// parseEventLine parses the /sys/kernel/tracing/trace layout, with or
// without the TGID and flags columns, as trace-cmd report prints it too:
//
//	TASK-PID (TGID) [CPU] FLAGS TIMESTAMP: BODY
//
// TASK may hold blanks, dashes and brackets, so the line is read from the
// CPU column outwards:
//  1. The CPU column is the first "[digits]" preceded by a blank whose
//     left side ends with "-PID", or "-PID (TGID)".
//  2. After it: an optional flags token, then the timestamp
//     SECONDS.FRACTION and a colon.
//  3. The body says which form the event has (readBody).
//
// It returns a message "expected ..., found ..." when the line is not
// one.
func parseEventLine(line []byte, e *eventLine) string {
	*e = eventLine{tgid: -1, hasTask: true}
	j, ok := cpuColumn(line, e)
	if !ok {
		return fmt.Sprintf("expected an event line \"TASK-PID [CPU] TIMESTAMP: EVENT: fields\", found %q", clip(line))
	}
	rest := skipBlanks(line[j:])
	tok, after := nextToken(rest)
	if !isTimestampToken(tok) {
		if len(tok) == 0 || len(tok) > 8 || !isFlags(tok) {
			return fmt.Sprintf("expected the flags or the timestamp after the CPU column, found %q", clip(tok))
		}
		e.flags = tok
		rest = skipBlanks(after)
		tok, after = nextToken(rest)
	}
	if len(tok) == 0 || tok[len(tok)-1] != ':' {
		return fmt.Sprintf("timestamp: expected SECONDS.FRACTION followed by a colon, found %q", clip(tok))
	}
	ts, msg := parseSeconds(tok[:len(tok)-1])
	if msg != "" {
		return "timestamp: " + msg
	}
	e.ts = ts
	return readBody(skipBlanks(after), e)
}

// cpuColumn finds the CPU column (step 1 of parseEventLine) and fills
// task, pid, tgid and cpu; it returns the offset after the column.
func cpuColumn(line []byte, e *eventLine) (int, bool) {
	for from := 0; from < len(line); {
		i := bytes.IndexByte(line[from:], '[')
		if i < 0 {
			return 0, false
		}
		i += from
		from = i + 1
		if i == 0 || line[i-1] != ' ' {
			continue
		}
		j := i + 1
		for j < len(line) && isDigit(line[j]) {
			j++
		}
		if j == i+1 || j-i-1 > 6 || j >= len(line) || line[j] != ']' || (j+1 < len(line) && line[j+1] != ' ') {
			continue
		}
		cpu, _ := parseUint(line[i+1 : j])
		if cpu >= maxCPU {
			continue
		}
		pre := trimRight(line[:i])
		tgid := int64(-1)
		if n := len(pre); n > 0 && pre[n-1] == ')' {
			k := bytes.LastIndexByte(pre, '(')
			if k < 0 {
				continue
			}
			inner := bytes.Trim(pre[k+1:n-1], " ")
			switch {
			case len(inner) > 0 && len(bytes.Trim(inner, "-")) == 0:
				// (-------): the tgid is not known
			case isDigits(inner) && len(inner) <= 10:
				tgid, _ = parseUint(inner)
			default:
				continue
			}
			pre = trimRight(pre[:k])
		}
		d := len(pre)
		for d > 0 && isDigit(pre[d-1]) {
			d--
		}
		if d == len(pre) || d < 2 || pre[d-1] != '-' || len(pre)-d > 10 {
			continue
		}
		pid, _ := parseUint(pre[d:])
		task := trimLeft(pre[:d-1])
		if len(task) == 0 {
			continue
		}
		e.task, e.pid, e.tgid, e.cpu = task, pid, tgid, cpu
		return j + 1, true
	}
	return 0, false
}

// readBody reads what follows the timestamp:
//   - "<stack trace>" and "<user stack trace>": the stack's frames follow
//     on lines of their own;
//   - "sys_NAME(args)" and "sys_NAME -> value": a system call's entry and
//     exit as the syscalls events print them;
//   - "EVENT: fields": any other event (the name may be padded with
//     blanks, as trace-cmd report prints it);
//   - "func" or "func <-parent": the function tracer.
func readBody(body []byte, e *eventLine) string {
	body = trimRight(body)
	switch {
	case bytes.Equal(body, []byte("<stack trace>")):
		e.form, e.name = formKernStack, []byte("kernel_stack")
		return ""
	case bytes.Equal(body, []byte("<user stack trace>")):
		e.form, e.name = formUserStack, []byte("user_stack")
		return ""
	}
	id := identEnd(body)
	if id > 4 && bytes.HasPrefix(body, []byte("sys_")) && id < len(body) {
		switch {
		case body[id] == '(' && body[len(body)-1] == ')':
			e.form, e.name, e.body = formSysEnter, body[:id], body[id+1:len(body)-1]
			return ""
		case bytes.HasPrefix(body[id:], []byte(" -> ")):
			e.form, e.name, e.body = formSysExit, body[:id], body[id+4:]
			return ""
		}
	}
	tok, rest := nextToken(body)
	if n := len(tok); n > 1 && tok[n-1] == ':' {
		e.form, e.name, e.body = formEvent, tok[:n-1], skipBlanks(rest)
		return ""
	}
	if len(tok) > 0 && bytes.IndexByte(tok, ':') < 0 {
		rest = skipBlanks(rest)
		if len(rest) == 0 {
			e.form, e.name, e.body = formFunction, []byte("function"), tok
			return ""
		}
		if parent, after := nextToken(rest); bytes.HasPrefix(parent, []byte("<-")) && len(parent) > 2 && len(skipBlanks(after)) == 0 {
			e.form, e.name, e.body = formFunction, []byte("function"), body
			return ""
		}
	}
	return fmt.Sprintf("expected \"EVENT: fields\", a function, a system call or <stack trace> after the timestamp, found %q", clip(body))
}

// parseSeconds converts SECONDS.FRACTION (1 to 9 fractional digits) to
// ns exactly.
func parseSeconds(b []byte) (int64, string) {
	dot := bytes.IndexByte(b, '.')
	if dot <= 0 || dot > 10 || len(b)-dot-1 < 1 || len(b)-dot-1 > 9 || !isDigits(b[:dot]) || !isDigits(b[dot+1:]) {
		return 0, fmt.Sprintf("expected SECONDS.FRACTION (1 to 9 decimals), found %q", clip(b))
	}
	var sec, frac int64
	for _, c := range b[:dot] {
		sec = sec*10 + int64(c-'0')
	}
	digits := 0
	for _, c := range b[dot+1:] {
		frac = frac*10 + int64(c-'0')
		digits++
	}
	for ; digits < 9; digits++ {
		frac *= 10
	}
	if sec > (1<<63-1-frac)/1_000_000_000 {
		return 0, fmt.Sprintf("expected SECONDS.FRACTION under 9223372036 s, found %q", clip(b))
	}
	return sec*1_000_000_000 + frac, ""
}

// isTimestampToken reports whether tok looks like "SECONDS.FRACTION:".
func isTimestampToken(tok []byte) bool {
	n := len(tok)
	if n < 4 || tok[n-1] != ':' {
		return false
	}
	dot := bytes.IndexByte(tok, '.')
	return dot > 0 && isDigits(tok[:dot]) && isDigits(tok[dot+1:n-1])
}

// isFlags reports whether tok can be the latency flags column ("d.h5",
// "dNs.", "....", "d..2.").
func isFlags(tok []byte) bool {
	for _, c := range tok {
		if !(c == '.' || isDigit(c) || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// lostMarker parses the markers of lost events: the kernel's
// "CPU:N [LOST M EVENTS]" and trace-cmd's "CPU:N [M EVENTS DROPPED]" or
// "CPU:N [EVENTS DROPPED]". count is -1 when the marker gives none.
func lostMarker(line []byte) (cpu, count int64, ok bool) {
	line = bytes.TrimSpace(line)
	if !bytes.HasPrefix(line, []byte("CPU:")) {
		return 0, 0, false
	}
	rest := line[4:]
	d := 0
	for d < len(rest) && isDigit(rest[d]) {
		d++
	}
	if d == 0 || d > 6 {
		return 0, 0, false
	}
	cpu, _ = parseUint(rest[:d])
	rest = rest[d:]
	if !bytes.HasPrefix(rest, []byte(" [")) || rest[len(rest)-1] != ']' {
		return 0, 0, false
	}
	in := rest[2 : len(rest)-1]
	switch {
	case len(in) > 12 && bytes.HasPrefix(in, []byte("LOST ")) && bytes.HasSuffix(in, []byte(" EVENTS")):
		n := in[5 : len(in)-7]
		if v, ok := parseUint(n); ok {
			return cpu, v, true
		}
	case bytes.Equal(in, []byte("EVENTS DROPPED")):
		return cpu, -1, true
	case bytes.HasSuffix(in, []byte(" EVENTS DROPPED")):
		if v, ok := parseUint(in[:len(in)-15]); ok {
			return cpu, v, true
		}
	}
	return 0, 0, false
}

// bufferStarted parses "##### CPU N buffer started ####", which the
// kernel prints where a CPU's buffer begins later than the others'.
func bufferStarted(line []byte) (int64, bool) {
	t := bytes.TrimSpace(line)
	if len(t) <= 30 || !bytes.HasPrefix(t, []byte("##### CPU ")) || !bytes.HasSuffix(t, []byte(" buffer started ####")) {
		return 0, false
	}
	n := t[len("##### CPU ") : len(t)-len(" buffer started ####")]
	v, ok := parseUint(n)
	return v, ok && v < maxCPU
}

// frame returns the text of a stack frame line " => func+0x1/0x2".
func frame(line []byte) ([]byte, bool) {
	t := skipBlanks(line)
	if !bytes.HasPrefix(t, []byte("=>")) {
		return nil, false
	}
	return bytes.TrimSpace(t[2:]), true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isDigits(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if !isDigit(c) {
			return false
		}
	}
	return true
}

// parseUint parses up to 18 decimal digits (no overflow possible).
func parseUint(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 || !isDigits(b) {
		return 0, false
	}
	var v int64
	for _, c := range b {
		v = v*10 + int64(c-'0')
	}
	return v, true
}

func isIdentStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isIdent(c byte) bool      { return isIdentStart(c) || isDigit(c) }

// identEnd returns the length of the identifier b starts with (0: none).
func identEnd(b []byte) int {
	if len(b) == 0 || !isIdentStart(b[0]) {
		return 0
	}
	i := 1
	for i < len(b) && isIdent(b[i]) {
		i++
	}
	return i
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' }

func skipBlanks(b []byte) []byte {
	for len(b) > 0 && isBlank(b[0]) {
		b = b[1:]
	}
	return b
}

func trimLeft(b []byte) []byte { return skipBlanks(b) }

func trimRight(b []byte) []byte {
	for len(b) > 0 && (isBlank(b[len(b)-1]) || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// nextToken splits off the token b starts with (up to a blank).
func nextToken(b []byte) (tok, rest []byte) {
	i := 0
	for i < len(b) && !isBlank(b[i]) {
		i++
	}
	return b[:i], b[i:]
}

// clip shortens a quoted excerpt in a message.
func clip(b []byte) string {
	if len(b) > 60 {
		return string(b[:60]) + "..."
	}
	return string(b)
}
