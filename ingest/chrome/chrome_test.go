package chrome_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	_ "github.com/traceduck/traceduck/ingest/chrome"
	"github.com/traceduck/traceduck/internal/dbtest"
)

// TestGolden: every hand-written trace in testdata gives the tables in
// its .golden file (reviewed line by line; -update rewrites them).
func TestGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.json")
	if len(files) == 0 {
		t.Fatal("no testdata/*.json")
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			db := dbtest.Open(t)
			res := dbtest.Ingest(t, db, path, ingest.Options{})
			if res.Format != "chrome" {
				t.Fatalf("detected as %s", res.Format)
			}
			dbtest.Golden(t, strings.TrimSuffix(path, ".json")+".golden", dbtest.Dump(t, db.SQL()))
		})
	}
}

// intervals lists a run's state intervals as "object inst state start end
// dur [cut]", ordered by object, instance and start.
const intervalsSQL = `SELECT o.name || ' ' || s.instance || ' ' || s.state || ' ' || s.start_ts || ' ' || s.end_ts || ' ' || s.dur ||
       CASE WHEN s.truncated THEN ' cut' ELSE '' END
FROM state_intervals s JOIN objects o USING (run_id, object_id)
ORDER BY o.object_id, s.instance, s.start_ts, s.end_ts`

func checkIntervals(t *testing.T, path string, want []string) {
	t.Helper()
	db := dbtest.Open(t)
	dbtest.Ingest(t, db, path, ingest.Options{})
	got := dbtest.Query(t, db.SQL(), intervalsSQL)
	if w := strings.Join(want, "\n") + "\n"; got != w {
		t.Errorf("%s intervals:\n got:\n%s\nwant:\n%s", path, got, w)
	}
}

// TestSlicesByHand: B/E nesting, an X inside a B, ts and dur as numeric
// strings and with decimals of µs, a B never ended (cut at the end of the
// trace, the instant at 20 µs), counters with two series. Worked by hand
// from testdata/slices.json (1 µs = 1000 ns):
//
//	main (1/1): A 0..10 µs depth 0; B 1.5..4 depth 1; C 5..5+2.25 depth 1
//	            (B ended at 4, so C is B's sibling inside A).
//	1/2:        D "3".."3"+"1.000" depth 0; U from 9, never ended: cut at 20.
//	ctr cats:   1 from 0 to 8, then 1.50 (= 1.5) to the end (cut).
//	ctr dogs:   2 from 0 to 8, then "3" to the end (cut).
func TestSlicesByHand(t *testing.T) {
	checkIntervals(t, "testdata/slices.json", []string{
		"main 0 A 0 10000 10000",
		"main 1 B 1500 4000 2500",
		"main 1 C 5000 7250 2250",
		"1/2 0 D 3000 4000 1000",
		"1/2 0 U 9000 20000 11000 cut",
		"ctr cats 0 1 0 8000 8000",
		"ctr cats 0 1.5 8000 20000 12000 cut",
		"ctr dogs 0 2 0 8000 8000",
		"ctr dogs 0 3 8000 20000 12000 cut",
	})
}

// TestAsyncByHand: nestable async slices by category and id (a local id2
// is another track), an enclosing end that cuts a slice still open in it,
// the older S/T/p/F slices with their steps, object lifetimes. From
// testdata/async.json:
//
//	net 0x10:  request 100..200 depth 0; dns 110..130 depth 1; connect
//	           140.. still open when request ends at 200: cut there.
//	net 0x10 (local to pid 7): request 150..170.
//	load 5:    S 300, F 400; steps T parse 320..350, T layout 350..400.
//	save 5:    S 410, F 430; step p open: from the S, 410..415.
//	Layer 0x1: alive 600..650 (life 0), 660.. to the end, 700 (life 1, cut).
func TestAsyncByHand(t *testing.T) {
	checkIntervals(t, "testdata/async.json", []string{
		"net 0x10 0 request 100000 200000 100000",
		"net 0x10 1 dns 110000 130000 20000",
		"net 0x10 1 connect 140000 200000 60000 cut",
		"net 0x10 0 request 150000 170000 20000",
		"load 5 0 load 300000 400000 100000",
		"load 5 1 load:parse 320000 350000 30000",
		"load 5 1 load:layout 350000 400000 50000",
		"save 5 0 save 410000 430000 20000",
		"save 5 1 save:open 410000 415000 5000",
		"Layer 0x1 0 alive 600000 650000 50000",
		"Layer 0x1 1 alive 660000 700000 40000 cut",
	})
}

// TestCompleteEventsAnyOrder: complete events written where they end
// (children before their parent, as clang's -ftime-trace writes them)
// give the same intervals, depths included, as written where they begin.
// By hand: root 0..10 depth 0; mid1 0..5 and mid2 6..9 depth 1; leaf1 1..3
// and leaf2 6..7 depth 2; next 10..14 depth 0, and zero (10..10, 0 µs)
// inside it at depth 1: at equal starts the longer slice encloses.
func TestCompleteEventsAnyOrder(t *testing.T) {
	want := []string{
		"1/1 0 root 0 10000 10000",
		"1/1 0 next 10000 14000 4000",
		"1/1 1 mid1 0 5000 5000",
		"1/1 1 mid2 6000 9000 3000",
		"1/1 1 zero 10000 10000 0",
		"1/1 2 leaf1 1000 3000 2000",
		"1/1 2 leaf2 6000 7000 1000",
	}
	checkIntervals(t, "testdata/completion-order.json", want)
	checkIntervals(t, "testdata/begin-order.json", want)
}

// TestCrashedWriter: a file cut in the middle of an event (no closing
// ']'): the events before it are read, the cut one is left out, the open
// B slices end at the last time of the trace (8 µs), cut.
func TestCrashedWriter(t *testing.T) {
	checkIntervals(t, "testdata/crashed.json", []string{
		"1/1 0 A 1000 8000 7000 cut",
		"1/1 1 B 2000 5000 3000",
		"1/1 1 C 6000 7000 1000",
		"1/1 1 D 8000 8000 0 cut",
	})
}
