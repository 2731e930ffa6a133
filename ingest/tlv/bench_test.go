package tlv_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/internal/tracegen"
)

// The benchmarks read generated logs (internal/tracegen.WriteTLV: the BTF
// simulator's schedule of 8 tasks) through the TLV ingester into a run
// writer whose sink drops the batches: reading, conversion rules, the
// resources' state and the Arrow batches, without DuckDB. They report
// raw lines/s and events/s:
//
//	go test -run XXX -bench . -benchmem ./ingest/tlv/
//
// The standard format reads a million lines; the TOPPERS logs, read
// through the bundled rules (each line tried against every rule, with
// look-ahead regular expressions), 100k lines.
func BenchmarkStandardFormat(b *testing.B) {
	benchTLV(b, tracegen.TLVStandard, 1_000_000, 2)
}

func BenchmarkTOPPERSASP(b *testing.B) {
	benchTLV(b, tracegen.TOPPERSASP, 100_000, 1)
}

func BenchmarkTOPPERSFMP(b *testing.B) {
	benchTLV(b, tracegen.TOPPERSFMP, 100_000, 2)
}

func benchTLV(b *testing.B, style tracegen.TLVStyle, lines, cores int) {
	var log, res bytes.Buffer
	truth, err := tracegen.WriteTLV(&log, &res, tracegen.Config{Events: lines, Cores: cores, Tasks: 8, Seed: 1}, style)
	if err != nil {
		b.Fatal(err)
	}
	resPath := filepath.Join(b.TempDir(), "bench.res")
	if err := os.WriteFile(resPath, res.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	ing, err := ingest.Lookup(style.String())
	if err != nil {
		b.Fatal(err)
	}
	if ing, err = ingest.Configure(ing, map[string]string{"resources": resPath}); err != nil {
		b.Fatal(err)
	}
	dbtest.BenchParse(b, ing, log.Bytes(), int64(truth.Events))
	b.ReportMetric(float64(truth.Lines)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}
