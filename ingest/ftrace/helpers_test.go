package ftrace

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/schema"
)

// ingestText writes text as one run of db through the ftrace ingester,
// in batches of batchRows rows (small ones cross batch boundaries), and
// returns the run's id.
func ingestText(t testing.TB, db *schema.DB, name string, text []byte, skipBad bool, batchRows int) (int32, error) {
	t.Helper()
	info := schema.RunInfo{Name: name, Source: name, Format: "ftrace", SHA256: strconv.Itoa(len(text)) + name, SkipBad: skipBad}
	return db.Ingest(context.Background(), info, schema.IngestOptions{Force: true, BatchRows: batchRows}, func(w *schema.RunWriter) error {
		return Ingester{}.Ingest(context.Background(), ingest.NewSource(name, bytes.NewReader(text), int64(len(text))), w)
	})
}

// intervalsSQL lists a run's state intervals by object name, as the
// truth and the hand-worked tests write them.
const intervalsSQL = `SELECT o.name, s.instance, s.state, s.start_ts, s.end_ts, coalesce(s.cpu, -1), s.truncated
	FROM state_intervals s JOIN objects o USING (run_id, object_id) WHERE s.run_id = $1
	ORDER BY o.name, s.instance, s.start_ts, s.end_ts`

// firstDiff shows the first lines where two texts differ.
func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	shown := 0
	for i := 0; i < max(len(w), len(g)) && shown < 10; i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			fmt.Fprintf(&b, "line %d:\n  want: %s\n   got: %s\n", i+1, wl, gl)
			shown++
		}
	}
	fmt.Fprintf(&b, "(%d lines wanted, %d got)", len(w), len(g))
	return b.String()
}
