package qnx

import (
	"context"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/schema"
)

// KevIngester reads the binary .kev files tracelogger writes.
type KevIngester struct{}

// The binary format is recognized strictly by its header, before the
// lenient text formats.
func init() { ingest.Register(5, KevIngester{}) }

// Format describes .kev.
func (KevIngester) Format() ingest.Format {
	return ingest.Format{Name: "kev", Description: "QNX Neutrino binary system trace (.kev) as tracelogger writes it", Patterns: []string{"*.kev"}, Offsets: true}
}

// Sniff recognizes the .kev file header.
func (KevIngester) Sniff(head []byte) bool { return sniffKev(head) }

// Ingest reads a .kev trace into w through the same machine as the text.
func (KevIngester) Ingest(ctx context.Context, src *ingest.Source, w *schema.RunWriter) error {
	m := newMachine(w)
	if err := readKev(ctx, src, w, m); err != nil {
		return err
	}
	return m.finish()
}
