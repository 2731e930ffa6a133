package btf_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/ingest/btf"
)

func head(t *testing.T, path string) []byte {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b[:min(len(b), ingest.SniffSize)]
}

func TestSniff(t *testing.T) {
	var yes []string
	yes, _ = filepath.Glob("testdata/*.btf")
	ext, _ := filepath.Glob(filepath.Join(externalDir, "*.btf"))
	yes = append(yes, ext...)
	for _, f := range yes {
		if !(btf.Ingester{}).Sniff(head(t, f)) {
			t.Errorf("%s: not recognized as BTF", f)
		}
	}
	// Other formats' real files must not be taken for BTF.
	var no []string
	for _, dir := range []string{"qnx", "toppers", "dtrace", "ftrace", "chrome-json"} {
		m, _ := filepath.Glob(filepath.Join(externalDir, "..", dir, "*"))
		no = append(no, m...)
	}
	for _, f := range no {
		if (btf.Ingester{}).Sniff(head(t, f)) {
			t.Errorf("%s: taken for BTF", f)
		}
	}
	for _, s := range []string{"", "hello\n", "1,2,3\n", "0,a,0,T,b,0\n", "x,a,0,T,b,0,start\n", "0,a,0,T!,b,0,start\n", "{\"traceEvents\":[]}"} {
		if (btf.Ingester{}).Sniff([]byte(s)) {
			t.Errorf("%q taken for BTF", s)
		}
	}
	for _, s := range []string{"0,a,0,T,b,0,start", "# comment\n\n 10 , a , , STI , b , , trigger , x,y\n", "#timeScale us\n"} {
		if !(btf.Ingester{}).Sniff([]byte(s)) {
			t.Errorf("%q not recognized", s)
		}
	}
	if len(no) > 0 {
		t.Logf("%d BTF files recognized, %d other files refused", len(yes), len(no))
	}
}
