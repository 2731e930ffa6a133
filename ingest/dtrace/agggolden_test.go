package dtrace

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/dbtest"
)

// TestAggregationsGolden ingests the small outputs in
// testdata/aggregations through the ingester and compares every table
// with its golden file (go test -update rewrites them).
//
//   - default.txt: DTrace's default output at exit (count, quantize,
//     lquantize with < 0) after trace output, without ^C;
//   - printa.txt: printa formats: keys with \0, headings, a weighted
//     quantize with counts of both signs, an llquantize, a printf table;
//   - bpftrace.txt: hist, lhist, a stack key, maps with several keys.
func TestAggregationsGolden(t *testing.T) {
	paths, err := filepath.Glob("testdata/aggregations/*.txt")
	if err != nil || len(paths) == 0 {
		t.Fatal("no test files")
	}
	for _, p := range paths {
		if strings.HasSuffix(p, "-run2.txt") {
			continue // the second run of TestCompareRuns
		}
		t.Run(filepath.Base(p), func(t *testing.T) {
			db := dbtest.Open(t)
			dbtest.Ingest(t, db, p, ingest.Options{})
			dbtest.Golden(t, strings.TrimSuffix(p, ".txt")+".golden", dbtest.Dump(t, db.SQL()))
		})
	}
}

// TestCompareRuns: two runs of one script compare bucket by bucket in
// SQL, joined on (agg, key, label); the counts were read off the two
// files by hand.
func TestCompareRuns(t *testing.T) {
	db := dbtest.Open(t)
	dbtest.Ingest(t, db, "testdata/aggregations/default.txt", ingest.Options{})
	dbtest.Ingest(t, db, "testdata/aggregations/default-run2.txt", ingest.Options{})
	got := dbtest.Query(t, db.SQL(), `
		WITH a AS (SELECT * FROM histograms WHERE run_id = 1), b AS (SELECT * FROM histograms WHERE run_id = 2)
		SELECT coalesce(a.key, b.key), coalesce(a.label, b.label), coalesce(a.count, 0), coalesce(b.count, 0), coalesce(b.count, 0) - coalesce(a.count, 0)
		FROM a FULL JOIN b ON a.agg = b.agg AND a.key = b.key AND a.label = b.label
		WHERE coalesce(a.count, 0) <> coalesce(b.count, 0)
		ORDER BY 1, coalesce(a.bucket_lo, b.bucket_lo) NULLS FIRST`)
	want := `0 | 0 | 6 | 9 | 3
0 | 1 | 0 | 1 | 1
0 | 2 | 6 | 2 | -4
bash | 0 | 4 | 6 | 2
bash | 4 | 8 | 5 | -3
bash | 8 | 0 | 2 | 2
sshd | 32 | 15 | 12 | -3
sshd | 64 | 1 | 3 | 2
`
	if got != want {
		t.Errorf("histogram differences:\n%s\nwant\n%s", got, want)
	}
	got = dbtest.Query(t, db.SQL(), `
		SELECT coalesce(a.key, b.key), a.value, b.value FROM
		(SELECT * FROM aggregations WHERE run_id = 1) a FULL JOIN (SELECT * FROM aggregations WHERE run_id = 2) b USING (agg, key)
		ORDER BY 1`)
	want = `bash | 12 | 20
cron | NULL | 1
sshd | 4 | 3
`
	if got != want {
		t.Errorf("count differences:\n%s\nwant\n%s", got, want)
	}
	// the same buckets in both runs: the function is read alike
	got = dbtest.Query(t, db.SQL(), `SELECT key, string_agg(DISTINCT func, ',') FROM histograms GROUP BY key ORDER BY key`)
	if want := "0 | lquantize\nbash | quantize\nsshd | quantize\n"; got != want {
		t.Errorf("functions:\n%s", got)
	}
}
