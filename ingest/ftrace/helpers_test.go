package ftrace

import (
	"bytes"
	"context"
	"strconv"
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
