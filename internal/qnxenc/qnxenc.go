// Package qnxenc writes QNX Neutrino traces, for tests and the trace
// generator: text.go and kev.go write the traceprinter text and the binary
// .kev from one list of events, so that tests can check that traceduck
// reads both forms of the same trace into the same tables. The tables of
// the .kev layout and of how traceprinter prints each class and event
// belong to the reader: ingest/qnx/kevlayout, which the writer inverts.
// traceduck itself never writes traces.
package qnxenc

// Event is one kernel event as traceprinter prints it.
type Event struct {
	CPU    int
	Cycles uint64 // the full 64-bit cycle count; traceprinter prints the low 32 bits
	Class  string // CONTROL, PROCESS, THREAD, KER_CALL, KER_EXIT, INT_ENTR, INT_EXIT, INT_HANDLER_ENTR, INT_HANDLER_EXIT, COMM, SYSTEM, USER
	Name   string // BUFFER, TIME, PROCCREATE_NAME, THRUNNING, MSG_SENDV/11, 0x00000000 (INT_* vector), ...
	Fields []Field
}

// Field is one key:value as traceprinter prints it; an empty key prints
// the value alone, e.g. the "(0)" after an interrupt vector. A Quoted value
// (a string argument) prints in double quotes, msg:"text"; the quotes are
// not part of the value, as readers of the text take them off.
type Field struct {
	Key, Value string
	Quoted     bool
}

// Header is the file header: the TRACE_* attributes in order (without the
// TRACE_ prefix and the "::"), e.g. {"CYCLES_PER_SEC", "736629000"}.
type Header struct {
	Attrs        [][2]string
	LittleEndian bool
}

// Attr returns a header attribute.
func (h Header) Attr(key string) string {
	for _, a := range h.Attrs {
		if a[0] == key {
			return a[1]
		}
	}
	return ""
}
