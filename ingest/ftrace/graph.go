package ftrace

import (
	"bytes"
	"fmt"
)

// graphKind is what a function_graph line shows.
type graphKind uint8

const (
	graphNone    graphKind = iota // an interrupt marker (==========>) or nothing: no event
	graphEntry                    // "func() {"
	graphExit                     // "}" or "} /* func */"
	graphLeaf                     // "func();": entry and return in one line
	graphComment                  // "/* text */": an event or trace_printk printed by the graph tracer
)

// graphLine is one function_graph line.
type graphLine struct {
	kind   graphKind
	fn     []byte // the function (exit: only with funcgraph-tail)
	depth  int
	dur    int64 // ns, when hasDur
	hasDur bool
	text   []byte // a comment's text
}

// parseGraphLine parses a line of the function_graph tracer:
//
//	6800.190947 |   4)   <...>-7683   |               |  do_syscall_64() {
//	6800.190948 |   4)   <...>-7683   |   0.322 us    |    _raw_spin_lock();
//
// that is [TIMESTAMP |] CPU) [TASK-PID |] [DURATION] | BODY. matched is
// false when the line does not begin with a CPU column "N)" (with or
// without the timestamp before it); msg says what is wrong with a line
// that does. The absolute timestamp (options/funcgraph-abstime) is
// required: without it the lines carry durations only.
func parseGraphLine(line []byte, e *eventLine) (matched bool, msg string) {
	*e = eventLine{tgid: -1, form: formGraph}
	t := skipBlanks(trimRight(line))
	hasTS := false
	if tok, after := nextToken(t); len(tok) > 0 && isDigit(tok[0]) && bytes.IndexByte(tok, '.') > 0 {
		rest := skipBlanks(after)
		if len(rest) > 0 && rest[0] == '|' {
			ts, m := parseSeconds(tok)
			if m != "" {
				return true, "timestamp: " + m
			}
			e.ts, hasTS = ts, true
			t = skipBlanks(rest[1:])
		}
	}
	d := 0
	for d < len(t) && isDigit(t[d]) {
		d++
	}
	if d == 0 || d > 6 || d >= len(t) || t[d] != ')' {
		return false, ""
	}
	e.cpu, _ = parseUint(t[:d])
	if e.cpu >= maxCPU {
		return true, fmt.Sprintf("CPU: expected a CPU number under %d, found %q", maxCPU, t[:d])
	}
	rest := t[d+1:]
	bar := bytes.IndexByte(rest, '|')
	if bar < 0 && bytes.Contains(rest, []byte("=>")) {
		// "CPU) prev-1 => next-2": the graph tracer's own switch marker
		e.graph.kind = graphNone
		return true, ""
	}
	if !hasTS {
		return true, fmt.Sprintf("expected a function_graph line with an absolute timestamp \"SECONDS.FRACTION | CPU)\" (options/funcgraph-abstime), found %q", clip(t))
	}
	if bar < 0 {
		return true, fmt.Sprintf("expected \"| function\" after the CPU column, found %q", clip(rest))
	}
	seg := bytes.TrimSpace(rest[:bar])
	rest = rest[bar+1:]
	if task, pid, ok := taskPID(seg); ok {
		e.task, e.pid, e.hasTask = task, pid, true
		bar = bytes.IndexByte(rest, '|')
		if bar < 0 {
			return true, fmt.Sprintf("expected \"DURATION | function\" after the task, found %q", clip(rest))
		}
		seg = bytes.TrimSpace(rest[:bar])
		rest = rest[bar+1:]
	}
	g := &e.graph
	switch {
	case len(seg) == 0:
	case bytes.Equal(seg, []byte("==========>")), bytes.Equal(seg, []byte("<==========")):
		g.kind = graphNone
		return true, ""
	default:
		dur, ok := graphDuration(seg)
		if !ok {
			return true, fmt.Sprintf("expected a duration \"N.NNN us\" or nothing before \"|\", found %q", clip(seg))
		}
		g.dur, g.hasDur = dur, true
	}
	spaces := 0
	for spaces < len(rest) && rest[spaces] == ' ' {
		spaces++
	}
	g.depth = max(0, (spaces-2)/2)
	body := rest[spaces:]
	switch {
	case bytes.HasSuffix(body, []byte("() {")) && len(body) > 4:
		g.kind, g.fn = graphEntry, body[:len(body)-4]
		e.name = []byte("funcgraph_entry")
	case bytes.HasSuffix(body, []byte("();")) && len(body) > 3:
		g.kind, g.fn = graphLeaf, body[:len(body)-3]
		e.name = []byte("funcgraph_leaf")
	case len(body) > 0 && body[0] == '}':
		g.kind = graphExit
		e.name = []byte("funcgraph_exit")
		if c := bytes.TrimSpace(body[1:]); bytes.HasPrefix(c, []byte("/*")) && bytes.HasSuffix(c, []byte("*/")) && len(c) >= 4 {
			g.fn = bytes.TrimSpace(c[2 : len(c)-2])
		}
	case bytes.HasPrefix(body, []byte("/*")) && bytes.HasSuffix(body, []byte("*/")) && len(body) >= 4:
		g.kind, g.text = graphComment, bytes.TrimSpace(body[2:len(body)-2])
	default:
		return true, fmt.Sprintf("expected \"func() {\", \"func();\", \"}\" or \"/* comment */\" after the duration column, found %q", clip(body))
	}
	return true, ""
}

// taskPID recognizes the funcgraph-proc column "comm-PID".
func taskPID(seg []byte) (task []byte, pid int64, ok bool) {
	d := len(seg)
	for d > 0 && isDigit(seg[d-1]) {
		d--
	}
	if d == len(seg) || d < 2 || seg[d-1] != '-' || len(seg)-d > 10 {
		return nil, 0, false
	}
	pid, _ = parseUint(seg[d:])
	return seg[:d-1], pid, true
}

// graphDuration parses "0.541 us", with the overhead mark the tracer
// may put before it ("+ 10.250 us", "! 120.9 us", "# ", "* ", "@ ", "$ ").
func graphDuration(seg []byte) (int64, bool) {
	if len(seg) > 2 && bytes.IndexByte([]byte("+!#*@$"), seg[0]) >= 0 && seg[1] == ' ' {
		seg = skipBlanks(seg[2:])
	}
	num, unit := nextToken(seg)
	if !bytes.Equal(bytes.TrimSpace(unit), []byte("us")) {
		return 0, false
	}
	dot := bytes.IndexByte(num, '.')
	intPart, frac := num, []byte(nil)
	if dot >= 0 {
		intPart, frac = num[:dot], num[dot+1:]
	}
	if !isDigits(intPart) || len(intPart) > 12 || len(frac) > 3 || (dot >= 0 && !isDigits(frac)) {
		return 0, false
	}
	v, _ := parseUint(intPart)
	ns := v * 1000
	mul := int64(100)
	for _, c := range frac {
		ns += int64(c-'0') * mul
		mul /= 10
	}
	return ns, true
}
