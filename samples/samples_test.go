package samples

import (
	"bytes"
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
