package dtrace_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	_ "github.com/traceduck/traceduck/ingest/all"
)

func detect(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ing, err := ingest.Detect(ingest.NewSource(path, bytes.NewReader(data), int64(len(data))))
	if err != nil {
		return ""
	}
	return ing.Format().Name
}

// TestSniffLast: dtrace stands last in the detection chain, so it can
// take no file another format recognizes.
func TestSniffLast(t *testing.T) {
	all := ingest.Ingesters()
	if last := all[len(all)-1].Format().Name; last != "dtrace" {
		t.Errorf("last in the detection chain: %s", last)
	}
}

// TestSniffOthersUnchanged: no sample, test file or external trace of
// another format is taken for DTrace output.
func TestSniffOthersUnchanged(t *testing.T) {
	roots := []string{"../../samples", "../btf/testdata", "../qnx/testdata", "../tlv/testdata", "../baget", "../../cmd/traceduck/testdata", "../../queries/testdata"}
	if _, err := os.Stat("../../../shared/testdata-external"); err == nil {
		for _, f := range []string{"btf", "qnx", "toppers", "ftrace", "chrome-json"} {
			roots = append(roots, "../../../shared/testdata-external/"+f)
		}
	}
	n := 0
	for _, root := range roots {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || strings.Contains(p, "/fuzz/") || strings.Contains(p, "/badinput/") || strings.HasPrefix(p, "../../samples/dtrace/") {
				return nil
			}
			n++
			if got := detect(t, p); got == "dtrace" {
				t.Errorf("%s detected as dtrace", p)
			}
			return nil
		})
	}
	if n < 20 {
		t.Errorf("only %d files looked at", n)
	}
}

// TestSniffDTrace: the toolkit's histogram files, the aggregation test
// files and event output are recognized.
func TestSniffDTrace(t *testing.T) {
	paths, _ := filepath.Glob("testdata/aggregations/*.txt")
	ext, _ := filepath.Glob("../../../shared/testdata-external/dtrace/*")
	for _, p := range ext {
		if data, err := os.ReadFile(p); err == nil && bytes.Contains(data, []byte("-- Distribution --")) {
			paths = append(paths, p)
		}
	}
	if len(paths) < 3 {
		t.Fatalf("%d files", len(paths))
	}
	for _, p := range paths {
		if got := detect(t, p); got != "dtrace" {
			t.Errorf("%s detected as %q", p, got)
		}
	}
	for _, head := range []string{
		"#traceduck-events 1 timestamp cpu pid tid probe\n1 0 1 1 sched:::on-cpu\n",
		"Attaching 2 probes...\n@x: 1\n",
		"dtrace: script 'x.d' matched 4 probes\nCPU     ID                    FUNCTION:NAME\n",
	} {
		ing, err := ingest.Detect(ingest.NewSource("x", strings.NewReader(head), -1))
		if err != nil || ing.Format().Name != "dtrace" {
			t.Errorf("%q: %v %v", head, ing, err)
		}
	}
}
