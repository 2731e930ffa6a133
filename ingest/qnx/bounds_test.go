package qnx_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/dbtest"
)

// TestTextContinuationBound: the continuation lines of one event are held
// until the next event line, so their number and bytes are bounded; past
// the bound the read stops with the line where it went over, and with
// --skip-bad one diagnostic says so and the rest up to the next event is
// dropped.
func TestTextContinuationBound(t *testing.T) {
	event := "t:0x00000020 CPU:00 PROCESS :PROCCREATE_NAME\n" // line 6
	next := "t:0x00000030 CPU:00 THREAD :THREADY pid:1 tid:1\n"
	for _, c := range []struct {
		name, body, want string
	}{
		{"1025 lines", strings.Repeat("name:x\n", 1025),
			"bad.txt:1031: expected at most 1024 continuation lines and 1048576 bytes of fields after the event line 6, found more (the rest up to the next event line is dropped)"},
		{"2 MiB", strings.Repeat("name:"+strings.Repeat("x", 700<<10)+"\n", 3),
			"bad.txt:8: expected at most 1024 continuation lines and 1048576 bytes of fields after the event line 6, found more (the rest up to the next event line is dropped)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dbtest.BadThenSkipped(t, "bad.txt", []byte(head+event+c.body+next), c.want, 3)
		})
	}
}

// TestTextHeaderBound: header lines are kept for runs.meta, at most 4096.
func TestTextHeaderBound(t *testing.T) {
	var b strings.Builder
	b.WriteString("TRACEPRINTER version 1.02\n")
	for i := 0; i < 4096; i++ {
		fmt.Fprintf(&b, "  TRACE_KEY%d:: %d\n", i, i)
	}
	b.WriteString(" -- KERNEL EVENTS -- \nt:0x00000030 CPU:00 THREAD :THREADY pid:1 tid:1\n")
	path := filepath.Join(t.TempDir(), "bad.txt")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	db := dbtest.Open(t)
	const want = `bad.txt:4097: expected at most 4096 header lines before "-- KERNEL EVENTS --", found more (the rest are not kept)`
	_, err := ingest.Path(context.Background(), db, path, ingest.Options{})
	if err == nil || "bad.txt"+strings.TrimPrefix(err.Error(), path) != want {
		t.Fatalf("error\n got %v\nwant %s", err, want)
	}
	dbtest.Ingest(t, db, path, ingest.Options{SkipBad: true})
	got := dbtest.Query(t, db.SQL(), "SELECT (SELECT count(*) FROM diagnostics WHERE severity = 'error'), (SELECT meta->>'TRACE_KEY4094' FROM runs), (SELECT meta->>'TRACE_KEY4095' FROM runs)")
	if got != "1 | 4094 | NULL\n" {
		t.Errorf("--skip-bad: errors, TRACE_KEY4094, TRACE_KEY4095: %s", got)
	}
}
