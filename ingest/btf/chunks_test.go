package btf_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/ingest/btf"
	"github.com/traceduck/traceduck/internal/tracegen"
	"github.com/traceduck/traceduck/schema"
)

// recordSink keeps every batch it is sent, in order.
type recordSink struct {
	tables []string
	recs   []arrow.Record
}

func (s *recordSink) Put(table string, rec arrow.Record) error {
	rec.Retain()
	s.tables = append(s.tables, table)
	s.recs = append(s.recs, rec)
	return nil
}

func (s *recordSink) release() {
	for _, r := range s.recs {
		r.Release()
	}
}

// batchesOf ingests data with ing into a RunWriter of batchRows rows per
// batch and returns every batch it sent and the ingest's error (the run is
// finished, at a fixed time, when there is none).
func batchesOf(t testing.TB, ing ingest.Ingester, name string, data []byte, skipBad bool, batchRows int) (*recordSink, string) {
	t.Helper()
	sink := &recordSink{}
	w := schema.NewRunWriter(schema.RunInfo{RunID: 1, Name: "chunks", Source: name, Format: "btf", SkipBad: skipBad}, sink, memory.DefaultAllocator)
	w.SetBatchRows(batchRows)
	err := ing.Ingest(context.Background(), ingest.NewSource(name, bytes.NewReader(data), int64(len(data))), w)
	if err != nil {
		w.Abort()
		return sink, fmt.Sprintf("%v (after %d events)", err, w.Events())
	}
	if err := w.Finish(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)); err != nil {
		t.Fatalf("Finish: %v", err)
	}
	return sink, ""
}

// sameBatches ingests data line by line and in chunks of each size, and
// fails unless every batch of every table, and the error, are the same.
func sameBatches(t *testing.T, what string, data []byte, skipBad bool, batchRows int, sizes ...int) {
	t.Helper()
	want, wantErr := batchesOf(t, btf.Chunked(-1), "t.btf", data, skipBad, batchRows)
	defer want.release()
	for _, size := range sizes {
		got, gotErr := batchesOf(t, btf.Chunked(size), "t.btf", data, skipBad, batchRows)
		diff := ""
		if wantErr == "" {
			diff = diffBatches(want, got)
		} // else which batches were loaded before the abort depends on timing
		if diff != "" || gotErr != wantErr {
			got.release()
			t.Fatalf("%s, chunks of %d bytes: %s\nerror %q, want %q", what, size, diff, gotErr, wantErr)
		}
		got.release()
	}
}

func diffBatches(want, got *recordSink) string {
	if strings.Join(want.tables, ",") != strings.Join(got.tables, ",") {
		return fmt.Sprintf("batches of tables %v, want %v", got.tables, want.tables)
	}
	for i := range want.recs {
		if !array.RecordEqual(want.recs[i], got.recs[i]) {
			wj, _ := want.recs[i].MarshalJSON()
			gj, _ := got.recs[i].MarshalJSON()
			return fmt.Sprintf("batch %d of %s differs:\n got %.2000s\nwant %.2000s", i, want.tables[i], gj, wj)
		}
	}
	return ""
}

func generated(t *testing.T, events int, seed int64, cores int, scale string) []byte {
	t.Helper()
	var b bytes.Buffer
	cfg := tracegen.Config{Events: events, Cores: cores, Tasks: 6, Seed: seed, TimeScale: scale, PoolUnits: int(seed % 3), Inversion: seed%2 == 0}
	if _, err := tracegen.WriteBTF(&b, cfg); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestChunksSameTables: the chunked reader gives exactly the batches of
// every table that the line-by-line reader gives, on generated traces of
// several seeds and sizes, with chunks from one byte (a cut after every
// line end, and lines split across reads everywhere) to the default; with
// LF, CRLF and lone-CR line ends, and a last line without its line end.
func TestChunksSameTables(t *testing.T) {
	sizes := []int{1, 2, 3, 7, 64, 333, 4096, 0}
	for _, seed := range []int64{1, 2, 3} {
		for _, events := range []int{300, 5000} {
			data := generated(t, events, seed, 1+int(seed%3), []string{"ns", "us", "ps"}[seed%3])
			variants := map[string][]byte{
				"LF":           data,
				"CRLF":         bytes.ReplaceAll(data, []byte("\n"), []byte("\r\n")),
				"CR":           bytes.ReplaceAll(data, []byte("\n"), []byte("\r")),
				"no last LF":   bytes.TrimSuffix(data, []byte("\n")),
				"no last CRLF": bytes.TrimSuffix(bytes.ReplaceAll(data, []byte("\n"), []byte("\r\n")), []byte("\r\n")),
				"blank lines":  bytes.ReplaceAll(data, []byte("\n"), []byte("\n \t\n\r\n")),
			}
			for name, v := range variants {
				sameBatches(t, fmt.Sprintf("seed %d, %d events, %s", seed, events, name), v, false, 3+int(seed)*50, sizes...)
			}
		}
	}
	// A long trace in default chunks: many chunks, and batches of the
	// default size.
	sameBatches(t, "200k events", generated(t, 200_000, 4, 2, "ns"), false, schema.DefaultBatchRows, 0, 100_000)
}

// TestChunksBadLineLater: a bad line in a later chunk stops the ingest
// with FILE:LINE of that line, after the events before it; with SkipBad it
// is a diagnostic at that line, and the ingest goes on.
func TestChunksBadLineLater(t *testing.T) {
	data := generated(t, 20000, 5, 2, "ns")
	lines := bytes.SplitAfter(data, []byte("\n"))
	for _, at := range []int{len(lines) / 2, len(lines) - 2} {
		for _, bad := range []string{"12x,Core_0,0,T,A,0,start\n", "1,a,0,T,b,0\n", "#timeScale weeks\n", "5,a,,T,,0,start\n"} {
			var b bytes.Buffer
			for i, l := range lines {
				if i == at {
					b.WriteString(bad)
				}
				b.Write(l)
			}
			sameBatches(t, fmt.Sprintf("%q at line %d", bad, at+1), b.Bytes(), false, 1000, 1, 5000, 0)
			sameBatches(t, fmt.Sprintf("%q at line %d, skip bad", bad, at+1), b.Bytes(), true, 1000, 1, 5000, 0)
			_, err := batchesOf(t, btf.Ingester{}, "t.btf", b.Bytes(), false, 1000)
			if want := fmt.Sprintf("t.btf:%d: ", at+1); !strings.HasPrefix(err, want) {
				t.Errorf("%q at line %d: error %q, want it to start with %q", bad, at+1, err, want)
			}
		}
	}
}

// TestChunksLineTooLong: a line over the bound in a later chunk, with
// every line end, stops the ingest at its line, after the events before.
func TestChunksLineTooLong(t *testing.T) {
	data := generated(t, 5000, 6, 2, "ns")
	long := bytes.Repeat([]byte("x"), ingest.MaxLineBytes+2)
	for _, nl := range []string{"\n", "\r\n", "\r"} {
		in := bytes.ReplaceAll(data, []byte("\n"), []byte(nl))
		in = append(append(append(in, long...), nl...), "1,a,0,T,b,0,activate"...)
		sameBatches(t, "long line, "+fmt.Sprintf("%q", nl), in, false, 1000, 1, 100, 0)
		_, err := batchesOf(t, btf.Ingester{}, "t.btf", in, false, 1000)
		if want := fmt.Sprintf("t.btf:%d: expected a BTF line, found a line longer than %d bytes", bytes.Count(data, []byte("\n"))+1, ingest.MaxLineBytes); !strings.HasPrefix(err, want+" (after ") {
			t.Errorf("%q: error %q, want %q", nl, err, want)
		}
	}
}

// TestChunksExternal: the real BTF traces, in small and default chunks.
func TestChunksExternal(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(externalDir, "*.btf"))
	if len(files) == 0 {
		t.Skip("no ../shared/testdata-external/btf beside the repository")
	}
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		sameBatches(t, filepath.Base(path), data, false, schema.DefaultBatchRows, 1, 1000, 0)
		sameBatches(t, filepath.Base(path)+", skip bad", data, true, 777, 13)
	}
}

// TestChunksFuzzSeeds: the fuzz seeds (every line end, odd fields, bad
// lines) in chunks of 1 to 9 bytes.
func TestChunksFuzzSeeds(t *testing.T) {
	for _, s := range fuzzSeeds {
		for _, skip := range []bool{false, true} {
			sameBatches(t, fmt.Sprintf("%q", s), []byte(s), skip, 3, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0)
		}
	}
}
