package queries

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzOverheadSpec: any bytes as a probe spec parse or fail with
// FILE:LINE: expected ..., never panic; a parsed spec checks against the
// bundled parameters without panicking either.
func FuzzOverheadSpec(f *testing.F) {
	for _, name := range []string{"table7.spec", "composed.spec"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("probe a provider=fbt rate=1\necb count=3 pred=arg:2+cmp@70 prob=0.5 action=count+stack\n"))
	f.Add([]byte("session s refresh=0.5 chew_us=10\r\nprobe p provider=kprobe rate=1e3 cycles=9\n"))
	params, err := ReadOverheadParams("")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		spec, err := ParseOverheadSpec("f.spec", bytes.NewReader(data))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.spec") || !strings.Contains(err.Error(), "expected") {
				t.Fatalf("error without FILE:LINE: expected ...: %v", err)
			}
			return
		}
		if len(spec.Sessions) == 0 {
			t.Fatal("a spec without sessions parsed")
		}
		if err := spec.Check(params); err != nil && !strings.HasPrefix(err.Error(), "f.spec:") {
			t.Fatalf("check error without FILE:LINE: %v", err)
		}
	})
}

// FuzzOverheadParamFile: any bytes as one of the parameter files parse or
// fail with FILE:LINE, never panic.
func FuzzOverheadParamFile(f *testing.F) {
	for i, pf := range paramFiles {
		b, err := BundledOverheadParam(pf.file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(i), b)
	}
	f.Add(uint8(4), []byte("format\tclass\tevent\tprovider\tecbs\tpred\tprob\taction\tcycles\tcontext\tnote\n*\t*\t*\tsdt\t2\targ+cmp\t0.1\tcount:2@9\t\tusr\t\n"))
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		pf := paramFiles[int(which)%len(paramFiles)]
		tab, err := parseParamFile(pf, pf.file, data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), pf.file+":") || !strings.Contains(err.Error(), "expected") {
				t.Fatalf("error without FILE:LINE: expected ...: %v", err)
			}
			return
		}
		for _, r := range tab.rows {
			if len(r.vals) != len(pf.cols) {
				t.Fatalf("row of %d values, want %d", len(r.vals), len(pf.cols))
			}
		}
		// The parsed file in a full set: the cross-file checks must not
		// panic either.
		p, err := ReadOverheadParams("")
		if err != nil {
			t.Fatal(err)
		}
		p.tables[pf.file] = tab
		_ = p.check()
	})
}

// FuzzMeasuredCSV: any bytes as a --measured file parse or fail with
// FILE[:LINE]: expected ..., never panic; what parses has a session and a
// finite share >= 0 per row, rows in line order, no session twice.
func FuzzMeasuredCSV(f *testing.F) {
	f.Add([]byte("session,measured_pct\nrtos-2core,5.5\n2,3.1%\n"))
	f.Add([]byte("# measured\n\"a, b\",1\n\n c ,2e1\n"))
	f.Add([]byte("a,1\nb\"c,2\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseMeasuredCSV("m.csv", bytes.NewReader(data))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "m.csv") || !strings.Contains(err.Error(), "expected") {
				t.Fatalf("error without FILE:LINE: expected ...: %v", err)
			}
			return
		}
		seen := map[string]bool{}
		last := 0
		for _, r := range m.Rows {
			if r.Session == "" || seen[r.Session] || !(r.Pct >= 0) || r.Pct > 1e308 || r.Line <= last {
				t.Fatalf("row %+v after line %d", r, last)
			}
			seen[r.Session], last = true, r.Line
		}
		if len(m.Rows) == 0 {
			t.Fatal("a file without rows parsed")
		}
	})
}
