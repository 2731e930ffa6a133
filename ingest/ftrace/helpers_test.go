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
// truth and the hand-worked tests write them. A CPU's intervals are
// written by the CPU tracker with instance = the holder's object: they
// show the holder's name there ("-" for nothing).
const intervalsSQL = `SELECT o.name, CASE WHEN o.kind = 'cpu' THEN coalesce(h.name, '-') ELSE s.instance::VARCHAR END AS inst,
	s.state, s.start_ts, s.end_ts, coalesce(s.cpu, -1), s.truncated
	FROM state_intervals s JOIN objects o USING (run_id, object_id)
	LEFT JOIN objects h ON h.run_id = s.run_id AND h.object_id = s.instance AND o.kind = 'cpu'
	WHERE s.run_id = $1
	ORDER BY o.name, CASE WHEN o.kind = 'cpu' THEN 0 ELSE s.instance END, s.start_ts, s.end_ts`
