package btf_test

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

// TestHeaderBounds: header lines and entity table rows are kept in memory
// for runs.meta, so their number and bytes are bounded; past a bound the
// read stops at that line, and with --skip-bad one diagnostic says so,
// the rest of the header is not kept and the events are read.
func TestHeaderBounds(t *testing.T) {
	var lines strings.Builder
	for i := 0; i < 4097; i++ {
		fmt.Fprintf(&lines, "#key%d value\n", i)
	}
	row := "#-1 " + strings.Repeat("n", 1<<20-8) + "\n" // 1 MiB - 3 bytes of id and name
	for _, c := range []struct {
		name, header, want, meta, kept string
	}{
		{"header lines", lines.String(),
			`bad.btf:4098: expected at most 4096 header lines "#name value", found more (the rest are not kept)`,
			"SELECT json_array_length(meta->'header') FROM runs", "4096\n"},
		{"table rows", "#entityTable\n" + strings.Repeat(row, 17),
			`bad.btf:21: #entityTable row: expected at most 16777216 bytes of entity table rows, found more (the rest are not kept)`,
			"SELECT json_array_length(meta->'entityTable') FROM runs", "16\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "bad.btf")
			data := goodHead + c.header + "5,Core_0,0,T,A,0,start\n"
			if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
			db := dbtest.Open(t)
			_, err := ingest.Path(context.Background(), db, path, ingest.Options{})
			if err == nil || "bad.btf"+strings.TrimPrefix(err.Error(), path) != c.want {
				t.Fatalf("error\n got %v\nwant %s", err, c.want)
			}
			res := dbtest.Ingest(t, db, path, ingest.Options{SkipBad: true})
			if res.Events != 2 {
				t.Errorf("--skip-bad: %d events, want 2", res.Events)
			}
			want := strings.TrimPrefix(c.want, "bad.btf:")
			if got := dbtest.Query(t, db.SQL(), "SELECT src_line || ': ' || message FROM diagnostics WHERE severity = 'error'"); got != want+"\n" {
				t.Errorf("--skip-bad diagnostics\n got %s\nwant %s", got, want)
			}
			if got := dbtest.Query(t, db.SQL(), c.meta); got != c.kept {
				t.Errorf("%s: %s, want %s", c.meta, got, c.kept)
			}
		})
	}
}
