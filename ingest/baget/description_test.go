package baget

import (
	"bytes"
	"github.com/traceduck/traceduck/internal/dbtest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// update is the shared -update flag (defining our own would clash with
// internal/dbtest's in one test binary).
var update = dbtest.Update

// TestFieldTreeGolden prints the field trees of testdata/*.xml and compares
// them with testdata/*.golden.
func TestFieldTreeGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/*.xml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata/*.xml: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			d, err := Parse(filepath.Base(f), data)
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			d.Dump(&b)
			golden := strings.TrimSuffix(f, ".xml") + ".golden"
			if *update {
				if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			if !bytes.Equal(b.Bytes(), want) {
				t.Errorf("field tree differs from %s (go test -update rewrites it):\n%s", golden, b.String())
			}
		})
	}
}
