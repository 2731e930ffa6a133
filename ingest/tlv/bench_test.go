package tlv_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/ingest/tlv"
	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/internal/tracegen"
)

// The benchmarks read generated logs (internal/tracegen.WriteTLV: the BTF
// simulator's schedule of 8 tasks) through the TLV ingester into a run
// writer whose sink drops the batches: reading, conversion rules, the
// resources' state and the Arrow batches, without DuckDB. They report
// raw lines/s and events/s, and raw lines per CPU-second (user + system
// time of the process, all its threads: steadier than the wall time on a
// loaded machine):
//
//	go test -run XXX -bench . -benchmem ./ingest/tlv/
//
// The standard format reads a million lines; the TOPPERS logs, read
// through the bundled rules (each line tried against every rule, with
// look-ahead regular expressions), 100k lines. BenchmarkConvert* time
// the rule engine alone: `traceduck convert` of the TOPPERS logs into
// io.Discard (the rules, the resources' state, the standard-format lines
// written), no tables.
func BenchmarkStandardFormat(b *testing.B) {
	benchTLV(b, tracegen.TLVStandard, 1_000_000, 2)
}

func BenchmarkTOPPERSASP(b *testing.B) {
	benchTLV(b, tracegen.TOPPERSASP, 100_000, 1)
}

func BenchmarkTOPPERSFMP(b *testing.B) {
	benchTLV(b, tracegen.TOPPERSFMP, 100_000, 2)
}

func BenchmarkConvertASP(b *testing.B) {
	benchConvert(b, tracegen.TOPPERSASP, 100_000, 1)
}

func BenchmarkConvertFMP(b *testing.B) {
	benchConvert(b, tracegen.TOPPERSFMP, 100_000, 2)
}

func benchLog(b *testing.B, style tracegen.TLVStyle, lines, cores int) (ingest.Ingester, []byte, tracegen.TLVTruth) {
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
	return ing, log.Bytes(), truth
}

func benchTLV(b *testing.B, style tracegen.TLVStyle, lines, cores int) {
	ing, log, truth := benchLog(b, style, lines, cores)
	cpu0 := cpuSeconds()
	dbtest.BenchParse(b, ing, log, int64(truth.Events))
	reportLines(b, truth.Lines, cpuSeconds()-cpu0)
}

func benchConvert(b *testing.B, style tracegen.TLVStyle, lines, cores int) {
	ing, log, truth := benchLog(b, style, lines, cores)
	b.SetBytes(int64(len(log)))
	b.ReportAllocs()
	cpu0 := cpuSeconds()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		src := ingest.NewSource("bench", bytes.NewReader(log), int64(len(log)))
		if _, err := ing.(*tlv.Ingester).Convert(context.Background(), src, io.Discard, false); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	reportLines(b, truth.Lines, cpuSeconds()-cpu0)
}

func reportLines(b *testing.B, lines int, cpu float64) {
	b.ReportMetric(float64(lines)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
	if cpu > 0 {
		b.ReportMetric(float64(lines)*float64(b.N)/cpu, "lines/CPU-s")
	}
}

// cpuSeconds is the user and system time of the process so far.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}
