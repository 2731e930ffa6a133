package kevlayout_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestReaderOwnsItsTables: the reader (ingest/qnx, its files other than
// tests) imports the layout from here, never from the package that writes
// test traces.
func TestReaderOwnsItsTables(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no files of ingest/qnx: %v", err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		ast, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, im := range ast.Imports {
			if strings.Contains(im.Path.Value, "internal/qnxenc") {
				t.Errorf("%s imports %s", f, im.Path.Value)
			}
		}
	}
}
