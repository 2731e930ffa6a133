package tlv_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/dbtest"
)

// TestArchiveIngestsLikeItsConversion: TLV's project archive of asp_short
// (detected by its zip header, no flags) gives exactly the events and
// state intervals of converting the raw asp_short.log with TLV's own rules
// and headers. (Not those of asp_short_standard_format.log: TLV's text
// writer dropped the separators between behavior arguments there, and the
// archive's log keeps them.)
func TestArchiveIngestsLikeItsConversion(t *testing.T) {
	dir := "../../../shared/testdata-external/toppers"
	file := func(s string) string { return filepath.Join(dir, "YixiaoLi__tlv4mc__"+s) }
	archive := file("sampleFiles__SampleLog__asp__asp_short.tlv")
	if _, err := os.Stat(archive); err != nil {
		t.Skip("no ../shared/testdata-external/toppers")
	}
	db := dbtest.Open(t)
	ra := dbtest.Ingest(t, db, archive, ingest.Options{})
	if ra.Format != "tlv-archive" {
		t.Fatalf("detected as %s", ra.Format)
	}
	rc := dbtest.Ingest(t, db, file("sampleFiles__SampleLog__asp__asp_short.log"), ingest.Options{Format: "tlv", Params: map[string]string{
		"resources": file("sampleFiles__SampleLog__asp__asp_short.res"),
		"rules":     file("convertRules__asp.cnv"),
		"headers":   file("resourceHeaders__asp.resh"),
	}})
	if ra.Events != rc.Events || ra.Events != 3087 {
		t.Fatalf("events: archive %d, conversion %d (want 3087)", ra.Events, rc.Events)
	}
	for _, q := range []string{
		"SELECT seq, ts, class, event, context_id, object_id, value, args FROM events WHERE run_id = ? ORDER BY seq",
		"SELECT object_id, instance, state, start_ts, end_ts, truncated FROM state_intervals WHERE run_id = ? ORDER BY ALL",
		"SELECT object_id, kind, name, attrs FROM objects WHERE run_id = ? ORDER BY object_id",
	} {
		if a, b := dbtest.Query(t, db.SQL(), q, ra.RunID), dbtest.Query(t, db.SQL(), q, rc.RunID); a != b {
			t.Errorf("archive and conversion differ: %s", q)
		}
	}
}
