package tlv

import (
	"context"
	"fmt"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/schema"
)

// ArchiveIngester reads TLV project archives (.tlv): a zip holding the
// converted log, the resource file with its types, and TLV's display
// settings. The archive is read in memory within ArchiveLimits, its log
// inflated as it is read; nothing is written from its entry names.
type ArchiveIngester struct {
	headers []string
}

// A zip is recognized by its header, before the text formats.
func init() { ingest.Register(6, &ArchiveIngester{}) }

// Format describes the format.
func (a *ArchiveIngester) Format() ingest.Format {
	return ingest.Format{Name: "tlv-archive", Description: "TraceLogVisualizer project archive (.tlv): the converted log with its resource file", Patterns: []string{"*.tlv"}}
}

// Sniff recognizes a zip file.
func (a *ArchiveIngester) Sniff(head []byte) bool { return IsArchive(head) }

// Params: the archive holds its resource file and types; headers may be
// given for types it does not embed.
func (a *ArchiveIngester) Params() []ingest.Param {
	return []ingest.Param{{Name: "headers", Help: "TLV resource headers (.resh): a file or directory, comma-separated (bundled headers are searched last)"}}
}

// With takes --headers.
func (a *ArchiveIngester) With(params map[string]string) (ingest.Ingester, error) {
	for k := range params {
		if k != "headers" {
			return nil, fmt.Errorf("format tlv-archive takes no --%s (the archive holds its resource file and log)", k)
		}
	}
	return &ArchiveIngester{headers: splitList(params["headers"])}, nil
}

// Ingest reads the archive's log with its resource file.
func (a *ArchiveIngester) Ingest(ctx context.Context, src *ingest.Source, w *schema.RunWriter) error {
	ar, err := ReadArchive(src, src.Size, src.Name)
	if err != nil {
		return err
	}
	cfg, err := ar.Config(a.headers)
	if err != nil {
		return err
	}
	name, log, err := ar.OpenLog()
	if err != nil {
		return err
	}
	defer log.Close()
	w.SetMeta("archive_log", name)
	sink := newTableSink(w)
	rd, err := NewReader(cfg.Setup(), sink, sink)
	if err != nil {
		return err
	}
	sink.start(rd, false)
	inner := ingest.NewSource(src.Name+"["+name+"]", log, -1)
	inner.NoHash() // the archive is hashed, not its log
	if err := rd.ReadAll(ctx, inner, inner.Name, false); err != nil {
		return err
	}
	return sink.finish(rd)
}
