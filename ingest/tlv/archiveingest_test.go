package tlv_test

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"context"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/schema"
)

// TestArchiveIngestsLikeItsConversion: TLV's project archive of asp_short
// (detected by its zip header, no flags) gives exactly the events and
// state intervals of converting the raw asp_short.log with TLV's own rules
// and headers. (Not those of asp_short_standard_format.log: TLV's text
// writer dropped the separators between behavior arguments there, and the
// archive's log keeps them.)
func TestArchiveIngestsLikeItsConversion(t *testing.T) {
	dir := "../../../shared/testdata-external/toppers"
	file := func(s string) string { return filepath.Join(dir, "YixiaoLi__tlv4mc__"+s) }
	archive := file("sampleFiles__SampleLog__asp__asp_short.tlv")
	if _, err := os.Stat(archive); err != nil {
		t.Skip("no ../shared/testdata-external/toppers")
	}
	db := dbtest.Open(t)
	ra := dbtest.Ingest(t, db, archive, ingest.Options{})
	if ra.Format != "tlv-archive" {
		t.Fatalf("detected as %s", ra.Format)
	}
	rc := dbtest.Ingest(t, db, file("sampleFiles__SampleLog__asp__asp_short.log"), ingest.Options{Format: "tlv", Params: map[string]string{
		"resources": file("sampleFiles__SampleLog__asp__asp_short.res"),
		"rules":     file("convertRules__asp.cnv"),
		"headers":   file("resourceHeaders__asp.resh"),
	}})
	if ra.Events != rc.Events || ra.Events != 3087 {
		t.Fatalf("events: archive %d, conversion %d (want 3087)", ra.Events, rc.Events)
	}
	for _, q := range []string{
		"SELECT seq, ts, class, event, context_id, object_id, value, args FROM events WHERE run_id = ? ORDER BY seq",
		"SELECT object_id, instance, state, start_ts, end_ts, truncated FROM state_intervals WHERE run_id = ? ORDER BY ALL",
		"SELECT object_id, kind, name, attrs FROM objects WHERE run_id = ? ORDER BY object_id",
	} {
		if a, b := dbtest.Query(t, db.SQL(), q, ra.RunID), dbtest.Query(t, db.SQL(), q, rc.RunID); a != b {
			t.Errorf("archive and conversion differ: %s", q)
		}
	}
}

// zipEntry is an entry of zipArchive: its name and its content,
// deflated (deflated).
type zipEntry struct {
	name string
	d    deflatedEntry
}

type deflatedEntry struct {
	comp []byte
	crc  uint32
	size int64
}

// deflated compresses what write writes (at the fastest level, which
// makes a bomb of hundreds of MiB a few hundred KB all the same), as it
// is written: it never exists inflated.
func deflated(write func(w io.Writer)) deflatedEntry {
	var b bytes.Buffer
	fw, _ := flate.NewWriter(&b, flate.BestSpeed)
	crc := crc32.NewIEEE()
	n := &countWriter{}
	write(io.MultiWriter(fw, crc, n))
	fw.Close()
	return deflatedEntry{b.Bytes(), crc.Sum32(), n.n}
}

type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// zipArchive builds a zip of deflated entries.
func zipArchive(t *testing.T, entries ...zipEntry) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, e := range entries {
		w, err := zw.CreateRaw(&zip.FileHeader{Name: e.name, Method: zip.Deflate, CRC32: e.d.crc,
			CompressedSize64: uint64(len(e.d.comp)), UncompressedSize64: uint64(e.d.size)})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(e.d.comp)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// repeatTo writes unit over and over, size bytes in all (the last one cut).
func repeatTo(w io.Writer, unit string, size int64) {
	chunk := []byte(strings.Repeat(unit, max(1, (1<<20)/len(unit))))
	for size > 0 {
		n := min(size, int64(len(chunk)))
		w.Write(chunk[:n])
		size -= n
	}
}

func text(s string) deflatedEntry { return deflated(func(w io.Writer) { io.WriteString(w, s) }) }

// jsonLine is a log entry as TLV saves it, a JSON list holding one line
// of size bytes in all: ["xxx...x"].
func jsonLine(size int64) deflatedEntry {
	return deflated(func(w io.Writer) {
		io.WriteString(w, `["`)
		repeatTo(w, "x", size-4)
		io.WriteString(w, `"]`)
	})
}

const smallRes = `{"TimeScale": "ns", "ResourceHeaders": ["asp"], "Resources": {"TASK1": {"Type": "Task", "Attributes": {"id": 1}}}}`

// peakSink drops batches, keeping the most the Go heap held when one
// came.
type peakSink struct {
	mu   sync.Mutex
	peak uint64
}

func (s *peakSink) Put(string, arrow.Record) error {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	s.mu.Lock()
	s.peak = max(s.peak, m.HeapAlloc)
	s.mu.Unlock()
	return nil
}

// ingestArchive ingests an archive with a RunWriter without DuckDB (every
// batchRows events to sink) and returns the error and the bytes the Go
// heap allocated meanwhile.
func ingestArchive(t *testing.T, data []byte, sink schema.Sink, batchRows int) (error, uint64) {
	t.Helper()
	ing, err := ingest.Lookup("tlv-archive")
	if err != nil {
		t.Fatal(err)
	}
	w := schema.NewRunWriter(schema.RunInfo{Source: "x.tlv"}, sink, memory.NewGoAllocator())
	defer w.Abort()
	w.SetBatchRows(batchRows)
	src := ingest.NewSource("x.tlv", bytes.NewReader(data), int64(len(data)))
	alloc := dbtest.Allocated(func() { err = ing.Ingest(context.Background(), src, w) })
	return err, alloc
}

// TestArchiveMemory: an archive of a few hundred KB that inflates to the
// bounds of before (256 MiB an entry, 512 MiB in all) takes a few MiB of
// memory, not copies of what it inflates to: the log is inflated as it is
// read, never held whole, and the entries traceduck has no use for are
// not inflated. Before, the first case allocated 1.3 GB, the second 1.6 GB
// (the documented bound was 512 MiB).
func TestArchiveMemory(t *testing.T) {
	const entry = 256<<20 - 4096 // two and the resource file within 512 MiB
	const tooLong = "x.tlv[x.tlv!a.log]:1: expected a TLV standard-format line, found a line longer than 1048576 bytes"
	res, log := text(smallRes), jsonLine(entry)
	zeros := deflated(func(w io.Writer) { repeatTo(w, "\x00", entry) })
	for _, c := range []struct {
		name    string
		entries []zipEntry
	}{
		{"a log of one line of 256 MiB", []zipEntry{{"a.res", res}, {"a.log", log}}},
		{"512 MiB in all: settings and a log of 256 MiB each", []zipEntry{{"a.res", res}, {"a.viz", zeros}, {"a.log", log}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			data := zipArchive(t, c.entries...)
			err, alloc := ingestArchive(t, data, dbtest.Discard{}, 4096)
			if err == nil || err.Error() != tooLong {
				t.Errorf("error\n got %v\nwant %s", err, tooLong)
			}
			t.Logf("an archive of %d bytes: %d bytes allocated", len(data), alloc)
			if alloc > 16<<20 {
				t.Errorf("an archive of %d bytes allocated %d bytes, more than 16 MiB", len(data), alloc)
			}
		})
	}

	// A log of 32 MiB of lines: what the heap holds does not grow with
	// the log (it held the log inflated and a copy of it before: 125 MiB
	// more).
	t.Run("a log of 32 MiB of lines", func(t *testing.T) {
		const line = `"[1]TASK1.state=RUNNING` + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef" + `",` + "\n"
		const size = 32 << 20
		data := zipArchive(t, zipEntry{"a.res", res}, zipEntry{"a.log", deflated(func(w io.Writer) {
			io.WriteString(w, "[\n")
			repeatTo(w, line, size/int64(len(line))*int64(len(line)))
			io.WriteString(w, `"[2]TASK1.state=DORMANT"]`)
		})})
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		sink := &peakSink{}
		if err, _ := ingestArchive(t, data, sink, 4096); err != nil {
			t.Fatal(err)
		}
		if sink.peak == 0 {
			t.Fatal("no batch")
		}
		held := int64(sink.peak) - int64(before.HeapAlloc)
		t.Logf("an archive of %d bytes: the heap held at most %d bytes more", len(data), held)
		if held > 32<<20 {
			t.Errorf("reading a log of %d MiB the heap held %d MiB more, more than 32 MiB", size>>20, held>>20)
		}
	})
}
