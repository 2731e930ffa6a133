package btf_test

import (
	"fmt"
	"strings"
	"testing"

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
			db := dbtest.BadThenSkipped(t, "bad.btf", []byte(goodHead+c.header+"5,Core_0,0,T,A,0,start\n"), c.want, 2)
			if got := dbtest.Query(t, db.SQL(), c.meta); got != c.kept {
				t.Errorf("%s: %s, want %s", c.meta, got, c.kept)
			}
		})
	}
}
