package qnx

import (
	"github.com/traceduck/traceduck/schema"
)

// machine turns events into rows: it rebuilds 64-bit time, tracks what
// runs on each CPU (the context of events that do not name their source),
// and drives the thread, process, interrupt, kernel-call and CPU state
// intervals. Both readers feed it.
type machine struct {
	w *schema.RunWriter
}

func newMachine(w *schema.RunWriter) *machine {
	return &machine{w: w}
}

// header records one attribute of the trace's header, with its key as
// traceprinter prints it (TRACE_CYCLES_PER_SEC, ...).
func (m *machine) header(key, value string) {
	m.w.SetMeta(key, value)
}

// handle applies one event.
func (m *machine) handle(e *event) error {
	return nil
}

// finish ends the trace.
func (m *machine) finish() error {
	return nil
}
