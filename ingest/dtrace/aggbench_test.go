package dtrace

import (
	"bytes"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/schema"
)

// aggBenchInput is a large synthetic output: after ^C, 20000 quantize
// distributions of 20 rows under printa keys, an lquantize aggregation
// of 2000 keys, and a count() aggregation of 100000 keys.
func aggBenchInput() []byte {
	rng := rand.New(rand.NewSource(1))
	var b strings.Builder
	b.WriteString("Tracing... Hit Ctrl-C to end.\n^C\n\nSizes by process,\n\n")
	for k := 0; k < 20000; k++ {
		var v []int64
		for i := 0; i < 50; i++ {
			v = append(v, rng.Int63n(1<<uint(2+rng.Intn(18))))
		}
		fmt.Fprintf(&b, "   %6d  proc-%d\\0\n", k, k)
		simPrint(&b, simQuantizeDist(v, false).printed(62, 64))
		b.WriteString("\n")
	}
	b.WriteString("Queue lengths,\n\n")
	for k := 0; k < 2000; k++ {
		var v []int64
		for i := 0; i < 50; i++ {
			v = append(v, rng.Int63n(40)-5)
		}
		fmt.Fprintf(&b, "    CPU %d\n", k)
		simPrint(&b, newSimLquantize(v, 0, 32, 1).printed(0, 2))
	}
	b.WriteString("\n")
	for k := 0; k < 100000; k++ {
		fmt.Fprintf(&b, "  %-50s %15d\n", fmt.Sprintf("syscall-%d", k), k*7)
	}
	return []byte(b.String())
}

// BenchmarkAggregations reads aggBenchInput through the aggregation
// reader into a run writer whose batches go nowhere: the parse rate.
func BenchmarkAggregations(b *testing.B) {
	data := aggBenchInput()
	lines := bytes.Count(data, []byte("\n"))
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w := schema.NewRunWriter(schema.RunInfo{RunID: 1, Source: "bench"}, dbtest.Discard{}, memory.DefaultAllocator)
		if err := aggFeed(w, data, ScalarsAuto); err != nil {
			b.Fatal(err)
		}
		if err := w.Finish(time.Unix(0, 0)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(lines)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}

// aggCount counts the rows sent to histograms and aggregations.
type aggCount struct{ buckets, scalars int64 }

func (c *aggCount) Put(table string, rec arrow.Record) error {
	switch table {
	case schema.TableHistograms:
		c.buckets += rec.NumRows()
	case schema.TableAggregations:
		c.scalars += rec.NumRows()
	}
	return nil
}

// TestBenchInputReads: the benchmark's input is read in full, as many
// rows as it printed (counted by a regular expression).
func TestBenchInputReads(t *testing.T) {
	if testing.Short() {
		t.Skip("large input")
	}
	data := aggBenchInput()
	c := &aggCount{}
	w := schema.NewRunWriter(schema.RunInfo{RunID: 1, Source: "bench"}, c, memory.DefaultAllocator)
	if err := aggFeed(w, data, ScalarsAuto); err != nil {
		t.Fatal(err)
	}
	if err := w.Finish(time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	var rows int64
	for _, line := range strings.Split(string(data), "\n") {
		if distRowText.MatchString(line) {
			rows++
		}
	}
	if c.buckets != rows || c.scalars != 100000 {
		t.Errorf("%d buckets of %d rows, %d scalars", c.buckets, rows, c.scalars)
	}
}
