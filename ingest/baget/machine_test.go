package baget_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/ingest/baget"
	"github.com/traceduck/traceduck/internal/tracegen"
)

// TestDescriptionNextToLog: without --description the ingester reads
// OS_VERSION-ARCH.xml next to the log (docs 1.1), detects the format by its
// magic, and without such a file fails asking for --description.
func TestDescriptionNextToLog(t *testing.T) {
	log, desc, truth, err := tracegen.GenerateBaget(tracegen.BagetConfig{Events: 500, Seed: 2, ABI: "be64"})
	if err != nil {
		t.Fatal(err)
	}
	if !(&baget.Ingester{}).Sniff(log) || (&baget.Ingester{}).Sniff([]byte("BAGETTR")) {
		t.Error("Sniff: expected the magic to be recognized, and only it")
	}
	dir := t.TempDir()
	logPath := filepath.Join(dir, "trace.blog")
	if err := os.WriteFile(logPath, log, 0o644); err != nil {
		t.Fatal(err)
	}
	db := openDB(t)
	if _, err := ingest.Path(context.Background(), db, logPath, ingest.Options{Format: "baget"}); err == nil || !strings.Contains(err.Error(), "--description") {
		t.Fatalf("without a description: expected an error asking for --description, got %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "minirtos-2.1-ppc64.xml"), desc, 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := ingest.Path(context.Background(), db, logPath, ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Format != "baget" || res.Events != int64(truth.Events) {
		t.Errorf("detected %s with %d events, want baget with %d", res.Format, res.Events, truth.Events)
	}
}
