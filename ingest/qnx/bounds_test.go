package qnx_test

import (
	"context"
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
			path := filepath.Join(t.TempDir(), "bad.txt")
			if err := os.WriteFile(path, []byte(head+event+c.body+next), 0o644); err != nil {
				t.Fatal(err)
			}
			db := dbtest.Open(t)
			_, err := ingest.Path(context.Background(), db, path, ingest.Options{})
			if err == nil || "bad.txt"+strings.TrimPrefix(err.Error(), path) != c.want {
				t.Fatalf("error\n got %v\nwant %s", err, c.want)
			}
			res := dbtest.Ingest(t, db, path, ingest.Options{SkipBad: true})
			if res.Events != 3 {
				t.Errorf("--skip-bad: %d events, want 3", res.Events)
			}
			want := strings.TrimPrefix(c.want, "bad.txt:")
			if got := dbtest.Query(t, db.SQL(), "SELECT src_line || ': ' || message FROM diagnostics WHERE severity = 'error'"); got != want+"\n" {
				t.Errorf("--skip-bad diagnostics\n got %s\nwant %s", got, want)
			}
		})
	}
}
