package qnx_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	_ "github.com/traceduck/traceduck/ingest/qnx"
	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/internal/recount"
)

const shared = "../../../shared"

// seedListing is the traceprinter listing of the seed document
// (recount.QNXSeedListing).
func seedListing(t *testing.T) string {
	text, err := recount.QNXSeedListing(filepath.Join(shared, "seeds", "qnx-neutrino-trace-interpretation.ru.txt"))
	if err != nil {
		t.Skip("no ../shared/seeds beside the repository")
	}
	return text
}

func TestSeedListingGolden(t *testing.T) {
	text := seedListing(t)
	if n := strings.Count(text, "\nt:0x"); n < 80 {
		t.Fatalf("extracted %d event lines from the seed", n)
	}
	path := filepath.Join(t.TempDir(), "seed-listing.txt")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	db := dbtest.Open(t)
	res := dbtest.Ingest(t, db, path, ingest.Options{})
	if res.Format != "qnx" {
		t.Fatalf("detected as %s", res.Format)
	}
	dbtest.Golden(t, "testdata/seed-listing.golden", dbtest.Dump(t, db.SQL()))
}

func TestRealExcerptGolden(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(shared, "testdata-external", "qnx", "*.txt"))
	if len(files) == 0 {
		t.Skip("no ../shared/testdata-external/qnx beside the repository")
	}
	db := dbtest.Open(t)
	res := dbtest.Ingest(t, db, files[0], ingest.Options{})
	if res.Format != "qnx" || res.Events != 10 {
		t.Fatalf("%s, %d events", res.Format, res.Events)
	}
	dbtest.Golden(t, "testdata/real-excerpt.golden", dbtest.Dump(t, db.SQL()))
}
