package tlv

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/traceduck/traceduck/ingest"
)

// TestSniffRawTOPPERS: raw ASP and FMP logs are told by their lines (all
// of the first ones of the format, one of them a message only the TOPPERS
// kernel prints); other "[number] text" logs and the standard format are
// not taken for them, nor they for one another.
func TestSniffRawTOPPERS(t *testing.T) {
	asp := "[1926099] dispatch to task 1.\n[1926446] enter to ena_int intno=2.\n[1926624] leave from ena_int ercd=0.\n[1926926] System logging task is started on port 1.\n"
	fmp := "[0]:[1]: task 1 becomes RUNNABLE.\n[0]:[2]: task 2 becomes RUNNABLE.\n[10]:[1]: dispatch to task 1.\n"
	std := "[100]MAIN_TASK.state=RUNNING\n[110]MAIN_TASK.enterSVC(dly_tsk, 10)\n[120]MAIN_TASK.state=WAITING\n"
	other := "[1] server started\n[2] listening on port 80\n[3] request from 10.0.0.1\n"
	few := "[1926099] dispatch to task 1.\n[1926446] enter to ena_int intno=2.\n"
	cut := asp + "[1927000] ente" // the head's last line cut
	for _, tc := range []struct {
		name string
		head string
		want map[ingKind]bool
	}{
		{"asp", asp, map[ingKind]bool{kindASP: true}},
		{"asp cut", cut, map[ingKind]bool{kindASP: true}},
		{"fmp", fmp, map[ingKind]bool{kindFMP: true}},
		{"standard", std, map[ingKind]bool{kindTLV: true}},
		{"another log", other, map[ingKind]bool{}},
		{"two lines", few, map[ingKind]bool{}},
	} {
		for _, k := range []ingKind{kindTLV, kindASP, kindFMP} {
			if got := (&Ingester{kind: k}).Sniff([]byte(tc.head)); got != tc.want[k] {
				t.Errorf("%s: %s sniffs %v", tc.name, (&Ingester{kind: k}).Format().Name, got)
			}
		}
	}
}

// TestSniff: the standard format is told by its lines; raw TOPPERS logs
// by theirs (fig8 is ASP, fig1 FMP), each by its own format only.
func TestSniff(t *testing.T) {
	const none = ingKind(255)
	for _, c := range []struct {
		file string
		want ingKind // none: no format
	}{
		{"testdata/fig3/fig3.log", kindTLV},
		{"testdata/radix16/radix16.log", kindTLV},
		{"testdata/select/select.log", kindTLV},
		{"testdata/fig8/fig8.log", kindASP},
		{"testdata/fig1/fig1.log", kindFMP},
		{"testdata/example/tiny.log", none}, // made-up format
		{"../../samples/btf/seed-example.btf", none},
	} {
		b, err := os.ReadFile(c.file)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []ingKind{kindTLV, kindASP, kindFMP} {
			if got := (&Ingester{kind: k}).Sniff(b); got != (k == c.want) {
				t.Errorf("%s: %s sniffed %v", c.file, (&Ingester{kind: k}).Format().Name, got)
			}
		}
	}
	// Detection picks each format for its log.
	for file, want := range map[string]string{
		filepath.Join("testdata", "fig3", "fig3.log"): "tlv",
		filepath.Join("testdata", "fig8", "fig8.log"): "toppers-asp",
		filepath.Join("testdata", "fig1", "fig1.log"): "toppers-fmp",
	} {
		src, err := ingest.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		ing, err := ingest.Detect(src)
		src.Close()
		if err != nil || ing.Format().Name != want {
			t.Errorf("%s: detected %v, %v; want %s", file, ing, err, want)
		}
	}
}

// TestNeedsResources: without --resources the resource file is the one
// beside the log; none there (or standard input) is an error naming the
// flag. A flag the TLV formats do not take is refused.
func TestNeedsResources(t *testing.T) {
	for _, k := range []ingKind{kindTLV, kindASP, kindFMP} {
		ing, err := ingest.Configure(&Ingester{kind: k}, map[string]string{})
		if err != nil {
			t.Fatalf("kind %d: %v", k, err)
		}
		name := (&Ingester{kind: k}).Format().Name
		_, _, err = ing.(*Ingester).setupFor(filepath.Join("testdata", "none.log"))
		if want := "format " + name + " needs --resources FILE.res (the resource file that declares the trace's resources): there is no " + filepath.Join("testdata", "none.res") + " beside the log"; err == nil || err.Error() != want {
			t.Errorf("kind %d: %v, want %s", k, err, want)
		}
		_, _, err = ing.(*Ingester).setupFor("-")
		if want := "format " + name + " needs --resources FILE.res (the resource file that declares the trace's resources) for a log on standard input"; err == nil || err.Error() != want {
			t.Errorf("kind %d: %v, want %s", k, err, want)
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
