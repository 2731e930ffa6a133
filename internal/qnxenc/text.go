package qnxenc

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// multiLine are the events traceprinter prints with one field per line,
// the keys right-aligned.
var multiLine = map[string]bool{"PROCCREATE_NAME": true, "PROCDESTROY_NAME": true, "PROCTHREAD_NAME": true}

// WriteText prints a trace the way traceprinter does: the header block
// with right-aligned keys, then one line per event (more for the events
// traceprinter splits over lines), with its irregular spacing.
func WriteText(w io.Writer, h Header, events []Event) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "TRACEPRINTER version 1.02\nTRACEPARSER LIBRARY version 1.02\n -- HEADER FILE INFORMATION -- \n")
	for _, a := range h.Attrs {
		fmt.Fprintf(bw, "%22s:: %s\n", "TRACE_"+a[0], a[1])
	}
	fmt.Fprintf(bw, " -- KERNEL EVENTS -- \n")
	for i := range events {
		writeEvent(bw, &events[i])
	}
	return bw.Flush()
}

func writeEvent(w *bufio.Writer, e *Event) {
	fmt.Fprintf(w, "t:0x%08x CPU:%02d ", uint32(e.Cycles), e.CPU)
	switch {
	case e.Class == "CONTROL" && e.Name == "BUFFER":
		// "CONTROL: BUFFER sequence = 33, num_events = 714"
		parts := make([]string, len(e.Fields))
		for i, f := range e.Fields {
			parts[i] = f.Key + " = " + f.Value
		}
		fmt.Fprintf(w, "CONTROL: BUFFER %s\n", strings.Join(parts, ", "))
		return
	case e.Class == "USREVENT" && len(e.Fields) > 0 && e.Fields[0].Key == "d0":
		// a numeric user event: "USREVENT:EVENT:5, 0x00000001 0x00000002"
		fmt.Fprintf(w, "USREVENT:%s,", e.Name)
		for _, f := range e.Fields {
			fmt.Fprintf(w, " %s", f.Value)
		}
		w.WriteByte('\n')
		return
	case strings.HasPrefix(e.Class, "KER_") || strings.HasPrefix(e.Class, "INT_"):
		fmt.Fprintf(w, "%s:%s", e.Class, e.Name)
	default:
		fmt.Fprintf(w, "%-8s:%s", e.Class, e.Name)
	}
	if multiLine[e.Name] || MultiLine(e) {
		w.WriteByte('\n')
		for _, f := range e.Fields {
			fmt.Fprintf(w, "%26s:%s\n", f.Key, f.Value)
		}
		return
	}
	if e.Class == "THREAD" || e.Class == "VTHREAD" {
		// the state events pad the name and end with a blank
		fmt.Fprintf(w, "%*s", max(0, 13-len(e.Name)), "")
	}
	for _, f := range e.Fields {
		v := f.Value
		if f.Quoted || (e.Class == "USREVENT" && f.Key == "STR") { // traceprinter always quotes a user string
			v = `"` + v + `"`
		}
		if f.Key == "" {
			fmt.Fprintf(w, " %s", v)
		} else {
			fmt.Fprintf(w, " %s:%s", f.Key, v)
		}
	}
	if (e.Class == "THREAD" || e.Class == "VTHREAD") && e.Name != "THCREATE" && e.Name != "THDESTROY" {
		w.WriteByte(' ')
	}
	w.WriteByte('\n')
}
