package tlv

import (
	"os"
	"path/filepath"
	"testing"
)

// TestConfigFileBound: rule, header and resource files are read whole, so
// a file over MaxConfigSize (a device, a log given by mistake) is refused
// by its size, before it is parsed, and no more than the bound is read.
func TestConfigFileBound(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.json")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxConfigSize + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for _, c := range []struct {
		load func(string) error
		want string
	}{
		{func(p string) error { _, err := LoadRules(p); return err }, "expected a conversion rule file of at most 16777216 bytes, found a larger file"},
		{func(p string) error { _, err := LoadHeaders(p); return err }, "expected a resource header file of at most 16777216 bytes, found a larger file"},
		{func(p string) error { _, err := LoadResourceFile(p); return err }, "expected a resource file of at most 16777216 bytes, found a larger file"},
		{func(p string) error { _, err := LoadOptions(p, Options{}); return err }, "expected a resource file of at most 16777216 bytes, found a larger file"},
	} {
		err := c.load(big)
		if err == nil || err.Error() != big+": "+c.want {
			t.Errorf("error\n got %v\nwant %s: %s", err, big, c.want)
		}
	}
	// At the bound, the file is read and parsed (and fails as JSON).
	if err := os.Truncate(big, MaxConfigSize); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadRules(big); err == nil || err.Error() == big+": expected a conversion rule file of at most 16777216 bytes, found a larger file" {
		t.Errorf("a file of exactly the bound: %v", err)
	}
}
