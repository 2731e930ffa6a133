// Package qnx reads QNX Neutrino system traces: the binary .kev files that
// tracelogger writes and the text traceprinter prints from them. Both
// readers turn their input into the same events — what traceprinter
// prints: a CPU, the low 32 bits of the cycle counter, a class, an event
// name and key:value fields — and one state machine (machine.go) turns
// those into tables, so the same trace gives the same tables in either
// form.
package qnx

import "bytes"

// event is one kernel event as traceprinter prints it:
//
//	t:0x4f86e276 CPU:00 KER_CALL:MSG_SENDV/11 coid:0x00000000 msg:"" (0x00040116)
//
// class is KER_CALL, name MSG_SENDV/11, and the fields are coid, msg and a
// positional "(0x00040116)" (empty key). The byte slices point into the
// reader's buffers and are valid until the reader produces the next event.
type event struct {
	pos    int64 // line of the event (text) or byte offset of its first record (.kev)
	cpu    int
	t      uint32 // low 32 bits of the cycle counter
	class  []byte // CONTROL, PROCESS, THREAD, VTHREAD, KER_CALL, KER_EXIT, KER_UNKNOWN, INT_ENTR, INT_EXIT, INT_HANDLER_ENTR, INT_HANDLER_EXIT, COMM, SYSTEM, USER, ...
	name   []byte // BUFFER, TIME, PROCCREATE_NAME, THRUNNING, MSG_SENDV/11, the vector of INT_* (0x00000000), ...
	fields []field
}

// field is one key:value of an event; positional values have an empty key.
type field struct {
	key, value []byte
}

// get returns the value of the first field with that key.
func (e *event) get(key string) ([]byte, bool) {
	for i := range e.fields {
		if string(e.fields[i].key) == key {
			return e.fields[i].value, true
		}
	}
	return nil, false
}

// reset empties e for reuse, keeping its field slice's capacity.
func (e *event) reset() {
	*e = event{fields: e.fields[:0]}
}

// appendField adds a field.
func (e *event) appendField(key, value []byte) {
	e.fields = append(e.fields, field{key, value})
}

// is reports whether the event is class:name.
func (e *event) is(class, name string) bool {
	return string(e.class) == class && string(e.name) == name
}

// callName splits a kernel call event name MSG_SENDV/11 into the call's
// name and number.
func callName(name []byte) (call []byte, num int, ok bool) {
	i := bytes.LastIndexByte(name, '/')
	if i < 0 {
		return name, -1, false
	}
	n := 0
	for _, c := range name[i+1:] {
		if c < '0' || c > '9' || n > 1<<20 {
			return name, -1, false
		}
		n = n*10 + int(c-'0')
	}
	return name[:i], n, i+1 < len(name)
}
