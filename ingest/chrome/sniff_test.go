package chrome_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	_ "github.com/traceduck/traceduck/ingest/all"
	"github.com/traceduck/traceduck/ingest/chrome"
)

func head(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data[:min(len(data), ingest.SniffSize)]
}

// TestSniffChrome: the hand-written traces, the sample and every real
// Chrome JSON file are detected as chrome, in the chain of every format.
func TestSniffChrome(t *testing.T) {
	paths, _ := filepath.Glob("testdata/*.json")
	paths = append(paths, "../../samples/chrome/app.json")
	ext, _ := filepath.Glob(filepath.Join(externalDir, "*.json"))
	paths = append(paths, ext...)
	for _, p := range paths {
		h := head(t, p)
		ing, err := ingest.Detect(ingest.NewSource(p, bytes.NewReader(h), int64(len(h))))
		if err != nil || ing.Format().Name != "chrome" {
			t.Errorf("%s: detected as %v (%v)", p, ing, err)
		}
	}
}

// TestSniffOthers: no sample, test file or real trace of another format
// is taken for Chrome JSON, nor JSON that is not a trace.
func TestSniffOthers(t *testing.T) {
	roots := []string{"../../samples", "../btf/testdata", "../qnx/testdata", "../tlv/testdata", "../baget", "../dtrace/testdata", "../../cmd/traceduck/testdata", "../../queries/testdata"}
	if _, err := os.Stat("../../../shared/testdata-external"); err == nil {
		for _, f := range []string{"btf", "qnx", "toppers", "ftrace", "dtrace"} {
			roots = append(roots, "../../../shared/testdata-external/"+f)
		}
	}
	n := 0
	for _, root := range roots {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || strings.HasPrefix(p, "../../samples/chrome/") {
				return nil
			}
			n++
			if (chrome.Ingester{}).Sniff(head(t, p)) {
				t.Errorf("%s taken for Chrome JSON", p)
			}
			return nil
		})
	}
	if n < 50 {
		t.Errorf("only %d files looked at", n)
	}
	for _, s := range []string{
		``, `[]`, `[1, 2]`, `[{"a": 1}]`, `{}`, `{"a": 1}`, `[[{"ph": "B"}]]`,
		`{"type": "attached_probes", "data": {"probes": 1}}`, // bpftrace -f json
		`[{"name": "x", "args": {"ph": 1}}]`,                 // "ph" only nested
		`{"data": {"traceEvents": []}}`,
		"[100]Task.state=RUNNING\n", // TLV
		`[{"ph" "B"}]`,
	} {
		if (chrome.Ingester{}).Sniff([]byte(s)) {
			t.Errorf("%q taken for Chrome JSON", s)
		}
	}
	for _, s := range []string{
		`[{"ph":"B"`, "\xef\xbb\xbf \n[ {\"name\": \"a\", \"ph\": \"X\"}]",
		`{"otherData": {"a": [1, {"b": 2}]}, "traceEvents": [`,
		`[{"args": {"x": [1, 2]}, "ph": "i", "ts": 1, "name": "` + strings.Repeat("x", ingest.SniffSize),
	} {
		if !(chrome.Ingester{}).Sniff([]byte(s)[:min(len(s), ingest.SniffSize)]) {
			t.Errorf("%.60q not taken for Chrome JSON", s)
		}
	}
	// A first event whose "ph" lies beyond the head cannot be told: such a
	// file needs --format chrome.
	if cut := `[{"name": "` + strings.Repeat("x", ingest.SniffSize) + `", "ph": "B"}]`; (chrome.Ingester{}).Sniff([]byte(cut)[:ingest.SniffSize]) {
		t.Error("a head without \"ph\" taken for Chrome JSON")
	}
}
