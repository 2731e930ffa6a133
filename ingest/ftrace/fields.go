package ftrace

import (
	"bytes"
	"strconv"

	"github.com/traceduck/traceduck/ingest"
)

// field is one key and value of an event. raw marks a value that is JSON
// already (an array, a number the reader computed); the others are
// written as JSON strings.
type field struct {
	key, value []byte
	raw        bool
}

// keys the reader names itself
var (
	kText      = []byte("text")
	kIP        = []byte("ip")
	kParentIP  = []byte("parent_ip")
	kRet       = []byte("ret")
	kID        = []byte("id")
	kArgs      = []byte("args")
	kFunc      = []byte("func")
	kDepth     = []byte("depth")
	kDuration  = []byte("duration_ns")
	kPrevComm  = []byte("prev_comm")
	kPrevPID   = []byte("prev_pid")
	kPrevPrio  = []byte("prev_prio")
	kPrevState = []byte("prev_state")
	kNextComm  = []byte("next_comm")
	kNextPID   = []byte("next_pid")
	kNextPrio  = []byte("next_prio")
	kComm      = []byte("comm")
	kPID       = []byte("pid")
	kPrio      = []byte("prio")
	kSuccess   = []byte("success")
	kTargetCPU = []byte("target_cpu")
	kChildPID  = []byte("child_pid")
	kChildComm = []byte("child_comm")
	kIrq       = []byte("irq")
	kVec       = []byte("vec")
	kName      = []byte("name")
	kAction    = []byte("action")
	kNewComm   = []byte("newcomm")
)

// splitFields reads the "key=value" fields most events print:
//   - a value runs to the next blank followed by a key and "=" (a comm
//     may hold blanks: "comm=Web Content pid=2711"), without the "==>"
//     of sched_switch;
//   - "[key=value]" is a field too ("vec=1 [action=TIMER]"), while a
//     bracket without "=" stays in the value before it ("5014167 [ns]");
//   - text before the first key, or not in that form at all, is the
//     field "text" ("work struct 0000: function vmstat_update").
func splitFields(body []byte, out []field) []field {
	body = trimRight(body)
	p := findKey(body, 0)
	if t := bytes.TrimSpace(body[:p]); len(t) > 0 {
		out = append(out, field{key: kText, value: t})
	}
	for p < len(body) {
		if body[p] == '[' {
			k := identEnd(body[p+1:])
			close := bytes.IndexByte(body[p:], ']') + p
			out = append(out, field{key: body[p+1 : p+1+k], value: body[p+2+k : close]})
			next := findKey(body, close+1)
			if t := bytes.TrimSpace(body[close+1 : next]); len(t) > 0 {
				out = append(out, field{key: kText, value: t})
			}
			p = next
			continue
		}
		k := identEnd(body[p:])
		next := findKey(body, p+k+1)
		v := trimRight(body[p+k+1 : next])
		if bytes.HasSuffix(v, []byte(" ==>")) {
			v = trimRight(v[:len(v)-4])
		}
		out = append(out, field{key: body[p : p+k], value: v})
		p = next
	}
	return out
}

// findKey returns where the next field starts at or after from: a key
// and "=" at the start of body or after a blank, or a "[key=value]"
// there; len(body) when none.
func findKey(body []byte, from int) int {
	for q := from; q < len(body); q++ {
		if q > 0 && body[q-1] != ' ' {
			continue
		}
		if body[q] == '[' {
			k := identEnd(body[q+1:])
			if k > 0 && q+1+k < len(body) && body[q+1+k] == '=' {
				close := bytes.IndexByte(body[q:], ']')
				if close > 0 && bytes.IndexByte(body[q:q+close], ' ') < 0 {
					return q
				}
			}
			continue
		}
		if k := identEnd(body[q:]); k > 0 && q+k < len(body) && body[q+k] == '=' {
			return q
		}
	}
	return len(body)
}

// get returns the value of the first field with that key.
func get(fs []field, key []byte) ([]byte, bool) {
	for i := range fs {
		if bytes.Equal(fs[i].key, key) {
			return fs[i].value, true
		}
	}
	return nil, false
}

// getInt returns a field's value as a decimal integer.
func getInt(fs []field, key []byte) (int64, bool) {
	v, ok := get(fs, key)
	if !ok {
		return 0, false
	}
	neg := len(v) > 0 && v[0] == '-'
	if neg {
		v = v[1:]
	}
	n, ok := parseUint(v)
	if neg {
		n = -n
	}
	return n, ok
}

// switchPlugin reads sched_switch as trace-cmd's sched plugin prints it:
// "prev_comm:prev_pid [prev_prio] STATE ==> next_comm:next_pid [next_prio]".
func switchPlugin(body []byte, out []field) ([]field, bool) {
	i := bytes.Index(body, []byte(" ==> "))
	if i < 0 {
		return out, false
	}
	left, right := trimRight(body[:i]), bytes.TrimSpace(body[i+5:])
	j := bytes.LastIndexByte(left, ' ')
	if j < 0 {
		return out, false
	}
	state := left[j+1:]
	comm, pid, prio, ok := commPIDPrio(trimRight(left[:j]))
	if !ok {
		return out, false
	}
	ncomm, npid, nprio, ok := commPIDPrio(right)
	if !ok {
		return out, false
	}
	return append(out, field{key: kPrevComm, value: comm}, field{key: kPrevPID, value: pid}, field{key: kPrevPrio, value: prio},
		field{key: kPrevState, value: state}, field{key: kNextComm, value: ncomm}, field{key: kNextPID, value: npid}, field{key: kNextPrio, value: nprio}), true
}

// wakeupPlugin reads sched_wakeup as trace-cmd's sched plugin prints it:
// "comm:pid [prio] success=1 CPU:003" (success and CPU optional).
func wakeupPlugin(body []byte, out []field) ([]field, bool) {
	body = trimRight(body)
	rest := body
	var tail []byte
	if i := bytes.Index(body, []byte("] ")); i >= 0 {
		rest, tail = body[:i+1], body[i+2:]
	}
	comm, pid, prio, ok := commPIDPrio(rest)
	if !ok {
		return out, false
	}
	out = append(out, field{key: kComm, value: comm}, field{key: kPID, value: pid}, field{key: kPrio, value: prio})
	for len(tail) > 0 {
		var tok []byte
		tok, tail = nextToken(skipBlanks(tail))
		tail = skipBlanks(tail)
		switch {
		case bytes.HasPrefix(tok, []byte("success=")):
			out = append(out, field{key: kSuccess, value: tok[8:]})
		case bytes.HasPrefix(tok, []byte("CPU:")):
			out = append(out, field{key: kTargetCPU, value: tok[4:]})
		case len(tok) > 0:
			out = append(out, field{key: kText, value: tok})
		}
	}
	return out, true
}

// commPIDPrio splits "comm:pid [prio]" (the prio is optional; the comm
// may hold colons and blanks: the pid follows the last colon).
func commPIDPrio(b []byte) (comm, pid, prio []byte, ok bool) {
	if n := len(b); n > 0 && b[n-1] == ']' {
		i := bytes.LastIndexByte(b, '[')
		if i < 1 {
			return nil, nil, nil, false
		}
		prio = b[i+1 : n-1]
		b = trimRight(b[:i])
	}
	c := bytes.LastIndexByte(b, ':')
	if c < 0 || !isDigits(b[c+1:]) {
		return nil, nil, nil, false
	}
	return b[:c], b[c+1:], prio, true
}

// functionFields reads the function tracer's "func <-parent" (and
// trace-cmd's "func <-- parent").
func functionFields(body []byte, out []field) []field {
	fn, rest := nextToken(skipBlanks(body))
	out = append(out, field{key: kIP, value: fn})
	rest = skipBlanks(rest)
	switch {
	case bytes.HasPrefix(rest, []byte("<--")):
		out = append(out, field{key: kParentIP, value: bytes.TrimSpace(rest[3:])})
	case bytes.HasPrefix(rest, []byte("<-")):
		out = append(out, field{key: kParentIP, value: bytes.TrimSpace(rest[2:])})
	case len(rest) > 0:
		out = append(out, field{key: kText, value: bytes.TrimSpace(rest)})
	}
	return out
}

// sysEnterFields reads the arguments of "sys_read(fd: 3, buf: 7ffd, count: 10)".
func sysEnterFields(body []byte, out []field) []field {
	for len(body) > 0 {
		part := body
		if i := bytes.Index(body, []byte(", ")); i >= 0 {
			part, body = body[:i], body[i+2:]
		} else {
			body = nil
		}
		if c := bytes.Index(part, []byte(": ")); c > 0 {
			out = append(out, field{key: part[:c], value: bytes.TrimSpace(part[c+2:])})
		} else if t := bytes.TrimSpace(part); len(t) > 0 {
			out = append(out, field{key: kText, value: t})
		}
	}
	return out
}

// rawSysFields reads raw_syscalls: sys_enter "NR 172 (29, c350, ...)"
// (id and args, an array) and sys_exit "NR 172 = 0" (id and ret). It
// builds the args array in scratch.
func rawSysFields(body []byte, out []field, scratch *[]byte) ([]field, bool) {
	body = bytes.TrimSpace(body)
	if !bytes.HasPrefix(body, []byte("NR ")) {
		return out, false
	}
	id, rest := nextToken(body[3:])
	if _, ok := getSigned(id); !ok {
		return out, false
	}
	out = append(out, field{key: kID, value: id})
	rest = skipBlanks(rest)
	switch {
	case bytes.HasPrefix(rest, []byte("= ")):
		out = append(out, field{key: kRet, value: bytes.TrimSpace(rest[2:])})
	case len(rest) >= 2 && rest[0] == '(' && rest[len(rest)-1] == ')':
		a := (*scratch)[:0]
		a = append(a, '[')
		in := rest[1 : len(rest)-1]
		for i := 0; len(in) > 0; i++ {
			part := in
			if c := bytes.IndexByte(in, ','); c >= 0 {
				part, in = in[:c], in[c+1:]
			} else {
				in = nil
			}
			if i > 0 {
				a = append(a, ',')
			}
			a = ingest.AppendJSONString(a, bytes.TrimSpace(part))
		}
		a = append(a, ']')
		*scratch = a
		out = append(out, field{key: kArgs, value: a, raw: true})
	case len(rest) > 0:
		out = append(out, field{key: kText, value: rest})
	}
	return out, true
}

func getSigned(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	v, ok := parseUint(b)
	if neg {
		v = -v
	}
	return v, ok
}

// appendArgs writes fields as a JSON object, then the stack (a JSON
// array) when there is one; a key given twice gets _2, _3, ...
func appendArgs(dst []byte, fs []field, stack []byte) []byte {
	dst = append(dst, '{')
	for i, f := range fs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = ingest.AppendJSONString(dst, f.key)
		if n := repeats(fs[:i], f.key); n > 0 {
			// the closing quote goes after the suffix
			dst = dst[:len(dst)-1]
			dst = append(dst, '_')
			dst = strconv.AppendInt(dst, int64(n+1), 10)
			dst = append(dst, '"')
		}
		dst = append(dst, ':')
		if f.raw {
			dst = append(dst, f.value...)
		} else {
			dst = ingest.AppendJSONString(dst, f.value)
		}
	}
	if stack != nil {
		if len(fs) > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `"stack":`...)
		dst = append(dst, stack...)
	}
	return append(dst, '}')
}

func repeats(fs []field, key []byte) int {
	n := 0
	for _, f := range fs {
		if bytes.Equal(f.key, key) {
			n++
		}
	}
	return n
}
