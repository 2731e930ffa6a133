package tlv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/internal/dbtest"
)

// TestGolden ingests the small traces of testdata/ (the paper's figs. 3
// and 8, a radix-16 trace, conditional selections of several resources):
// NAME.golden holds the standard-format lines read (converted, for fig. 8)
// and every table. go test -run Golden -update rewrites them.
func TestGolden(t *testing.T) {
	for _, name := range []string{"fig3", "fig8", "radix16", "select"} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join("testdata", name)
			res := filepath.Join(dir, name+".res")
			log := filepath.Join(dir, name+".log")
			rules := ""
			if _, err := os.Stat(filepath.Join(dir, name+".cnv")); err == nil {
				rules = filepath.Join(dir, name+".cnv")
			}
			headers := filepath.Join("testdata", "common.resh")
			useLoader(t)
			s, err := LoadSetup(res, splitList(rules), []string{headers}, nil)
			if err != nil {
				t.Fatal(err)
			}
			c := convertFile(t, s, log, false)
			var b strings.Builder
			b.WriteString("-- standard format\n")
			for _, l := range c.lines {
				b.WriteString(l + "\n")
			}
			b.WriteString("\n")
			db := dbtest.Open(t)
			ingestTLV(t, db, "tlv", log, res, rules, headers)
			b.WriteString(dbtest.Dump(t, db.SQL()))
			dbtest.Golden(t, filepath.Join(dir, name+".golden"), b.String())
		})
	}
}

// TestGoldenFMP reads TOPPERS/FMP logs with --format toppers-fmp and the
// bundled rules: the paper's fig. 1, and processors whose lines
// interleave with times going backwards.
func TestGoldenFMP(t *testing.T) {
	useLoader(t)
	for _, name := range []string{"fig1", "fmp-reorder"} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join("testdata", name)
			res := filepath.Join(dir, name+".res")
			log := filepath.Join(dir, name+".log")
			s, err := LoadSetup(res, nil, nil, []string{"fmp"})
			if err != nil {
				t.Fatal(err)
			}
			c := convertFile(t, s, log, true)
			var b strings.Builder
			b.WriteString("-- standard format\n")
			for _, l := range c.lines {
				b.WriteString(l + "\n")
			}
			b.WriteString("\n")
			db := dbtest.Open(t)
			ingestTLV(t, db, "toppers-fmp", log, res, "", "")
			b.WriteString(dbtest.Dump(t, db.SQL()))
			dbtest.Golden(t, filepath.Join(dir, name+".golden"), b.String())
		})
	}
}
