package tlv

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/internal/recount"
	"github.com/traceduck/traceduck/internal/tracegen"
)

// TestConvertUnchanged pins what the rule engine produces, so that making
// it faster cannot change a byte of it: `traceduck convert` (Ingester.Convert)
// of every real TOPPERS log of the external collection (with TLV's own
// rules and header, and with the bundled ones) and of generated logs
// (internal/tracegen: TOPPERS/ASP, TOPPERS/FMP and the standard format,
// several seeds and sizes), and the tables an ingest of some of them
// writes. testdata/unchanged.golden holds, per case, the number of lines
// and the sha256 of the output (the tables' dump), and the notes in full.
// It was written by the engine before its speed-ups (issue 23); go test
// -run ConvertUnchanged -update rewrites it, which must not be needed
// unless a conversion was wrong.
func TestConvertUnchanged(t *testing.T) {
	if _, err := os.Stat(external); err != nil {
		t.Skipf("%s not available: %v", external, err)
	}
	useLoader(t)
	dir := t.TempDir()
	type tcase struct {
		name, format, log, res, rules, headers string
		tables                                 bool
	}
	var cases []tcase
	tlvRules := externalFile(t, "convertRules__asp.cnv")
	tlvHeaders := externalFile(t, "resourceHeaders__asp.resh")
	for _, c := range recount.TOPPERSLogs {
		name := strings.TrimSuffix(c.Log[strings.LastIndex(c.Log, "__")+2:], ".log")
		log := externalFile(t, c.Log)
		res := filepath.Join(dir, "full.res")
		if c.Res != "" {
			res = externalFile(t, c.Res)
		} else if err := os.WriteFile(res, []byte(recount.FullLogResources()), 0o644); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, tcase{name: "asp/" + name, format: "toppers-asp", log: log, res: res, tables: true})
		if c.Res != "" {
			cases = append(cases, tcase{name: "tlvrules/" + name, format: "tlv", log: log, res: res, rules: tlvRules, headers: tlvHeaders, tables: true})
		}
	}
	trace := "sampleFiles__SampleProgram__asp__asp_trace_log_sample"
	cases = append(cases, tcase{name: "asp/asp_trace_log_sample", format: "toppers-asp", log: externalFile(t, trace+".log"), res: externalFile(t, trace+".res")},
		tcase{name: "tlvrules/asp_trace_log_sample", format: "tlv", log: externalFile(t, trace+".log"), res: externalFile(t, trace+".res"), rules: tlvRules, headers: tlvHeaders},
		tcase{name: "std/asp_short_standard_format", format: "tlv",
			log: externalFile(t, "sampleFiles__SampleLog__asp__asp_short_standard_format.log"),
			res: externalFile(t, "sampleFiles__SampleLog__asp__asp_short_standard_format.res"), headers: tlvHeaders, tables: true},
		// TLV's conversion of asp_short.log (its visualizeScript sample)
		tcase{name: "std/visualizeScript_asp", format: "tlv", log: externalFile(t, "visualizeScript__asp.log"),
			res: externalFile(t, "sampleFiles__SampleLog__asp__asp_short.res"), headers: tlvHeaders})
	for _, g := range []struct {
		style        tracegen.TLVStyle
		lines, cores int
		seed         int64
		tables       bool
	}{
		{tracegen.TOPPERSASP, 20000, 1, 1, false},
		{tracegen.TOPPERSASP, 20000, 1, 2, false},
		{tracegen.TOPPERSASP, 7777, 1, 3, true},
		{tracegen.TOPPERSFMP, 20000, 2, 1, false},
		{tracegen.TOPPERSFMP, 20000, 2, 2, false},
		{tracegen.TOPPERSFMP, 9001, 3, 3, true},
		{tracegen.TLVStandard, 20000, 2, 1, false},
		{tracegen.TLVStandard, 5003, 3, 4, true},
	} {
		name := fmt.Sprintf("gen/%s-%d-cores%d-seed%d", g.style, g.lines, g.cores, g.seed)
		var log, res bytes.Buffer
		if _, err := tracegen.WriteTLV(&log, &res, tracegen.Config{Events: g.lines, Cores: g.cores, Tasks: 8, Seed: g.seed}, g.style); err != nil {
			t.Fatal(err)
		}
		base := filepath.Join(dir, strings.ReplaceAll(name, "/", "_"))
		if err := os.WriteFile(base+".log", log.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(base+".res", res.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, tcase{name: name, format: g.style.String(), log: base + ".log", res: base + ".res", tables: g.tables})
	}

	var b strings.Builder
	for _, c := range cases {
		fmt.Fprintf(&b, "== %s (%s)\n", c.name, c.format)
		params := map[string]string{"resources": c.res}
		if c.rules != "" {
			params["rules"] = c.rules
		}
		if c.headers != "" {
			params["headers"] = c.headers
		}
		ing, err := ingest.Lookup(c.format)
		if err != nil {
			t.Fatal(err)
		}
		if ing, err = ingest.Configure(ing, params); err != nil {
			t.Fatal(err)
		}
		src, err := ingest.Open(c.log)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		notes, err := ing.(*Ingester).Convert(context.Background(), src, &out, true)
		src.Close()
		if err != nil {
			fmt.Fprintf(&b, "error: %v\n", err)
		}
		fmt.Fprintf(&b, "convert: %d lines, sha256 %x\n", bytes.Count(out.Bytes(), []byte("\n")), sha256.Sum256(out.Bytes()))
		for _, n := range notes {
			fmt.Fprintf(&b, "note: %s line %d count %d: %s\n", n.Severity, n.Line, n.Count, n.Message)
		}
		if c.tables {
			db := dbtest.Open(t)
			ingestTLV(t, db, c.format, c.log, c.res, c.rules, c.headers)
			dump := dbtest.Dump(t, db.SQL())
			fmt.Fprintf(&b, "tables: %d lines, sha256 %x\n", strings.Count(dump, "\n"), sha256.Sum256([]byte(dump)))
		}
	}
	dbtest.Golden(t, filepath.Join("testdata", "unchanged.golden"), b.String())
}
