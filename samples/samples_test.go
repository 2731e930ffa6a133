package samples

import (
	"bytes"
	"os"
	"testing"
)

func TestGeneratedSamplesUpToDate(t *testing.T) {
	for _, g := range Generated() {
		var b bytes.Buffer
		if err := g.Write(&b); err != nil {
			t.Fatal(err)
		}
		have, err := FS.ReadFile(g.Path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(have, b.Bytes()) {
			t.Errorf("%s is not what the generator writes: run go run ./samples/internal/gen", g.Path)
		}
	}
}

func TestListedSamplesExist(t *testing.T) {
	for _, s := range List() {
		if _, err := FS.ReadFile(s.Path); err != nil {
			t.Error(err)
		}
	}
}

// TestTLVSampleIsTheDocumentedExample: the demo's TLV sample, which
// README.md walks through, is the example ingest/tlv's tests read
// (ingest/tlv/testdata/example).
func TestTLVSampleIsTheDocumentedExample(t *testing.T) {
	for _, name := range []string{"tiny.log", "tiny.res", "tiny.cnv", "tiny.resh"} {
		have, err := FS.ReadFile("tlv/" + name)
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile("../ingest/tlv/testdata/example/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(have, want) {
			t.Errorf("samples/tlv/%s differs from ingest/tlv/testdata/example/%s", name, name)
		}
	}
}
