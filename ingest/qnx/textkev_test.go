package qnx

import (
	"bytes"
	"context"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/qnxenc"
	"github.com/traceduck/traceduck/schema"
)

// TestTextReadsAsKev: every sample event (every class, every printing
// quirk traceprinter has), printed as traceprinter text and written as
// .kev, reads back as the same event stream from both readers.
func TestTextReadsAsKev(t *testing.T) {
	for _, big := range []bool{false, true} {
		h := testHeader(big)
		evs := sampleEvents()
		var text bytes.Buffer
		if err := qnxenc.WriteText(&text, h, evs); err != nil {
			t.Fatal(err)
		}
		fromKev, _, err := decodeKev(t, "sample.kev", writeKev(t, h, evs, qnxenc.KevOptions{}), false)
		if err != nil {
			t.Fatal(err)
		}
		fromText := &recSink{}
		w := schema.NewRunWriter(schema.RunInfo{RunID: 1, Source: "sample.txt"}, &diagSink{}, nil)
		if err := readText(context.Background(), ingest.NewLineReader(&text), w, fromText); err != nil {
			t.Fatal(err)
		}
		w.Abort()
		if len(fromText.events) != len(fromKev.events) {
			t.Fatalf("text gives %d events, .kev %d", len(fromText.events), len(fromKev.events))
		}
		for i := range fromKev.events {
			a, b := fromText.events[i], fromKev.events[i]
			a.pos, b.pos = 0, 0 // a line and a byte offset
			if a.String() != b.String() {
				t.Errorf("event %d:\n text %s\n  kev %s", i, a, b)
			}
		}
	}
}
