package tlv

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/traceduck/traceduck/ingest"
)

func TestSniff(t *testing.T) {
	g := &Ingester{kind: kindTLV}
	for _, c := range []struct {
		file string
		want bool
	}{
		{"testdata/fig3/fig3.log", true},
		{"testdata/radix16/radix16.log", true},
		{"testdata/select/select.log", true},
		{"testdata/fig8/fig8.log", false},    // a raw log: needs --format
		{"testdata/fig1/fig1.log", false},    // FMP
		{"testdata/example/tiny.log", false}, // made-up format
		{"../../samples/btf/seed-example.btf", false},
	} {
		b, err := os.ReadFile(c.file)
		if err != nil {
			t.Fatal(err)
		}
		if got := g.Sniff(b); got != c.want {
			t.Errorf("%s: sniffed %v, want %v", c.file, got, c.want)
		}
	}
	// Detection picks tlv for a standard-format log (and only tlv sniffs).
	src, err := ingest.Open(filepath.Join("testdata", "fig3", "fig3.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	ing, err := ingest.Detect(src)
	if err != nil || ing.Format().Name != "tlv" {
		t.Errorf("detected %v, %v", ing, err)
	}
	if (&Ingester{kind: kindASP}).Sniff([]byte("[1] dispatch to task 1.\n")) {
		t.Error("toppers-asp sniffed")
	}
}

func TestNeedsResources(t *testing.T) {
	for _, k := range []ingKind{kindTLV, kindASP, kindFMP} {
		_, err := ingest.Configure(&Ingester{kind: k}, map[string]string{})
		if err == nil {
			t.Errorf("kind %d: no error without --resources", k)
		}
		_, err = ingest.Configure(&Ingester{kind: k}, map[string]string{"resources": "x.res", "kev": "1"})
		if err == nil {
			t.Errorf("kind %d: no error for --kev", k)
		}
	}
}

// FuzzFMPPrefix: fmpPrefix reads the prefix of an FMP line as the
// regular expression fmpLine does.
func FuzzFMPPrefix(f *testing.F) {
	for _, s := range []string{"[12]:[1]: dispatch to task 2.", " \t[1f]:[2:7]: x", "[1]:[]: x", "[1]:[2:]]: x", "[1]:[2]", "[1]:[2]:", "\v[1]:[2]:", "[a]:[0:x:y]:z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tm, prc, ok := fmpPrefix(s)
		m := fmpLine.FindStringSubmatch(s)
		if ok != (m != nil) || ok && (tm != m[1] || prc != m[2]) {
			t.Fatalf("%q: fmpPrefix %q %q %v, fmpLine %q", s, tm, prc, ok, m)
		}
	})
}
