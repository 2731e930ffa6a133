package btf_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	_ "github.com/traceduck/traceduck/ingest/btf"
	"github.com/traceduck/traceduck/internal/dbtest"
)

// TestGolden ingests each testdata/*.btf and compares every table with
// the .golden file beside it.
func TestGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.btf")
	if len(files) == 0 {
		t.Fatal("no testdata")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			db := dbtest.Open(t)
			dbtest.Ingest(t, db, f, ingest.Options{Format: "btf", BatchRows: 4})
			dbtest.Golden(t, strings.TrimSuffix(f, ".btf")+".golden", dbtest.Dump(t, db.SQL()))
		})
	}
}
