package queries_test

import (
	"database/sql"
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/internal/tracegen"
	"github.com/traceduck/traceduck/queries/dtracefmt"
	"github.com/traceduck/traceduck/queries/dtracefmt/toolkit"
)

// bucketSQL is the SQL bucket macro call of a spec for the value x.
func bucketSQL(s dtracefmt.Spec, x string) string {
	switch s.Kind {
	case dtracefmt.Quantize:
		return fmt.Sprintf("quantize_bucket(%s)", x)
	case dtracefmt.LQuantize:
		return fmt.Sprintf("lquantize_bucket(%s, %d, %d, %d)", x, s.Lower, s.Upper, s.Step)
	case dtracefmt.LLQuantize:
		return fmt.Sprintf("llquantize_bucket(%s, %d, %d, %d, %d)", x, s.Factor, s.Low, s.High, s.NSteps)
	case dtracefmt.Linear:
		return fmt.Sprintf("linear_bucket(%s, %d, %d, %d)", x, s.Lower, s.Step, s.Levels)
	case dtracefmt.Edges:
		e := make([]string, len(s.Edges))
		for i, v := range s.Edges {
			e[i] = strconv.FormatInt(v, 10)
		}
		return fmt.Sprintf("edges_bucket(%s, [%s])", x, strings.Join(e, ", "))
	}
	panic("unknown kind")
}

// sqlBuckets returns the SQL macro's bucket of every value.
func sqlBuckets(t *testing.T, db *sql.DB, s dtracefmt.Spec, values []int64) []int64 {
	t.Helper()
	lits := make([]string, len(values))
	for i, v := range values {
		lits[i] = strconv.FormatInt(v, 10)
	}
	q := fmt.Sprintf("SELECT %s FROM (SELECT unnest([%s]::BIGINT[]) AS v, generate_subscripts([%s], 1) AS i) ORDER BY i",
		bucketSQL(s, "v"), strings.Join(lits, ","), strings.Join(lits, ","))
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var b int64
		if err := rows.Scan(&b); err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// testValues are values around every power of two and of ten, the ends
// of the int64 range, and random values of every magnitude.
func testValues() []int64 {
	vals := []int64{0, 1, -1, math.MaxInt64, math.MinInt64, math.MaxInt64 - 1, math.MinInt64 + 1}
	for k := 0; k < 63; k++ {
		p := int64(1) << k
		vals = append(vals, p-1, p, p+1, -p+1, -p, -p-1)
	}
	for p := int64(1); p <= 1e18; p *= 10 {
		vals = append(vals, p-1, p, p+1, 3*p-1, 3*p)
	}
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 400; i++ {
		vals = append(vals, r.Int63()>>r.Intn(63), -(r.Int63() >> r.Intn(63)))
	}
	return vals
}

// TestBucketMacrosAgreeWithGo compares every SQL bucket macro with the Go
// implementation of the kernel's bucketing (dtracefmt.Spec.Bucket), on
// values next to every power of two and ten and at the ends of the range.
func TestBucketMacrosAgreeWithGo(t *testing.T) {
	db := dbtest.Open(t).SQL()
	values := testValues()
	for _, s := range []dtracefmt.Spec{
		{Kind: dtracefmt.Quantize},
		{Kind: dtracefmt.LQuantize, Lower: 0, Upper: 100, Step: 10},
		{Kind: dtracefmt.LQuantize, Lower: -1000, Upper: 995, Step: 7}, // 285 levels, top 995
		{Kind: dtracefmt.LQuantize, Lower: math.MinInt32, Upper: math.MinInt32 + 65535*65535, Step: 65535},
		{Kind: dtracefmt.LLQuantize, Factor: 10, Low: 0, High: 1, NSteps: 20},
		{Kind: dtracefmt.LLQuantize, Factor: 10, Low: 2, High: 3, NSteps: 10},
		{Kind: dtracefmt.LLQuantize, Factor: 10, Low: 3, High: 17, NSteps: 100},
		{Kind: dtracefmt.LLQuantize, Factor: 2, Low: 0, High: 61, NSteps: 2},
		{Kind: dtracefmt.LLQuantize, Factor: 3, Low: 1, High: 38, NSteps: 27},
		{Kind: dtracefmt.LLQuantize, Factor: 4, Low: 0, High: 29, NSteps: 64},
		{Kind: dtracefmt.Linear, Lower: -50, Step: 25, Levels: 8},
		{Kind: dtracefmt.Edges, Edges: []int64{0, 10_000, 100_000, 1_000_000}},
		{Kind: dtracefmt.Edges, Edges: []int64{math.MinInt64 + 1, -5, 0, math.MaxInt64}},
	} {
		if err := s.Check(); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		got := sqlBuckets(t, db, s, values)
		want := map[int64]int64{}
		for i, v := range values {
			want[s.Bucket(v)]++
			if got[i] != s.Bucket(v) {
				t.Errorf("%s of %d: SQL says %d, Go says %d", s, v, got[i], s.Bucket(v))
			}
		}
		// The histogram table macro (hist_llquantize works its buckets out
		// its own way) gives the same counts.
		if s.Kind != dtracefmt.Linear {
			lits := make([]string, len(values))
			for i, v := range values {
				lits[i] = strconv.FormatInt(v, 10)
			}
			// bucketSQL's call with the query for the value, renamed.
			q := bucketSQL(s, "'SELECT unnest(["+strings.Join(lits, ",")+"]::BIGINT[]) AS value'")
			q = "hist_" + strings.Replace(q, "_bucket(", "(", 1)
			rows, err := db.Query("SELECT bucket, count FROM " + q)
			if err != nil {
				t.Fatalf("%s: %v", q[:40], err)
			}
			n := 0
			for rows.Next() {
				var b, c int64
				if err := rows.Scan(&b, &c); err != nil {
					t.Fatal(err)
				}
				if want[b] != c {
					t.Errorf("%s: bucket %d: the table macro counts %d, Go %d", s, b, c, want[b])
				}
				n++
			}
			rows.Close()
			if n != len(want) {
				t.Errorf("%s: the table macro has %d buckets, Go %d", s, n, len(want))
			}
		}
	}
}

// TestBucketMacrosAsDTrace checks the macros against buckets DTrace
// itself reported (the aggregation walks of node-libdtrace's tests, run
// against a live DTrace): each bucket's range and count.
func TestBucketMacrosAsDTrace(t *testing.T) {
	db := dbtest.Open(t).SQL()
	for _, tc := range []struct {
		spec            dtracefmt.Spec
		from, to, every int64
		want            string // bucket:count, ...
	}{
		// @ = quantize(i) for i in -32..31.
		{dtracefmt.Spec{Kind: dtracefmt.Quantize}, -32, 31, 1,
			"-32:1 -16:16 -8:8 -4:4 -2:2 -1:1 0:1 1:1 2:2 4:4 8:8 16:16"},
		// @ = llquantize(i, 10, 0, 1, 20) for i in 0..100: 0 is below
		// 10^0, then steps of 1 to 9, steps of 5 to 99, and 100 and up.
		{dtracefmt.Spec{Kind: dtracefmt.LLQuantize, Factor: 10, Low: 0, High: 1, NSteps: 20}, 0, 100, 1,
			"U:1 1:1 2:1 3:1 4:1 5:1 6:1 7:1 8:1 9:1 10:5 15:5 20:5 25:5 30:5 35:5 40:5 45:5 50:5 55:5 60:5 65:5 70:5 75:5 80:5 85:5 90:5 95:5 100:1"},
		// @ = llquantize(i, 10, 2, 3, 10) for i = 0, 50, ..., 10050.
		{dtracefmt.Spec{Kind: dtracefmt.LLQuantize, Factor: 10, Low: 2, High: 3, NSteps: 10}, 0, 10050, 50,
			"U:2 100:2 200:2 300:2 400:2 500:2 600:2 700:2 800:2 900:2 1000:20 2000:20 3000:20 4000:20 5000:20 6000:20 7000:20 8000:20 9000:20 10000:2"},
	} {
		var values []int64
		for v := tc.from; v <= tc.to; v += tc.every {
			values = append(values, v)
		}
		got := sqlBuckets(t, db, tc.spec, values)
		var parts []string
		for i := 0; i < len(got); {
			j := i
			for j < len(got) && got[j] == got[i] {
				j++
			}
			b := strconv.FormatInt(got[i], 10)
			if got[i] == dtracefmt.Underflow {
				b = "U"
			}
			parts = append(parts, fmt.Sprintf("%s:%d", b, j-i))
			i = j
		}
		if s := strings.Join(parts, " "); s != tc.want {
			t.Errorf("%s:\ngot  %s\nwant %s", tc.spec, s, tc.want)
		}
	}
}

// TestBucketMacrosMatchToolkit checks that values at both ends of every
// non-empty bucket DTrace printed in the DTraceToolkit examples fall into
// that bucket by the SQL macros: the row's value and the last value
// before the next bucket.
func TestBucketMacrosMatchToolkit(t *testing.T) {
	if toolkit.Dir() == "" {
		t.Skip("DTraceToolkit examples (../shared/testdata-external/dtrace) not available")
	}
	blocks, err := toolkit.ReadAll(toolkit.Dir())
	if err != nil {
		t.Fatal(err)
	}
	db := dbtest.Open(t).SQL()
	checked := 0
	for _, b := range blocks {
		spec, err := b.Spec()
		if err != nil {
			t.Fatal(err)
		}
		var values, want []int64
		for _, r := range b.Rows {
			if r.Count == 0 {
				continue
			}
			bucket := toolkit.Bucket(r.Label)
			switch {
			case strings.HasPrefix(r.Label, "< "):
				values = append(values, spec.Lower-1, spec.Lower-1000)
			case strings.HasPrefix(r.Label, ">= "):
				values = append(values, bucket, bucket+1000)
			case spec.Kind == dtracefmt.LQuantize:
				values = append(values, bucket, bucket+spec.Step-1)
			case bucket > 0: // quantize: [b, 2b)
				values = append(values, bucket, 2*bucket-1)
			case bucket < 0: // quantize: (2b, b]
				values = append(values, bucket, 2*bucket+1)
			default:
				values = append(values, 0, 0)
			}
			want = append(want, bucket, bucket)
		}
		got := sqlBuckets(t, db, spec, values)
		for i := range values {
			checked++
			if got[i] != want[i] {
				t.Errorf("%s:%d (%s): %d is in bucket %d by the macro, DTrace printed it in %d", b.File, b.Line, spec, values[i], got[i], want[i])
			}
		}
	}
	if checked < 1000 {
		t.Errorf("checked only %d values", checked)
	}
	t.Logf("checked %d values of %d histograms", checked, len(blocks))
}

// TestBucketChecksAgree: the SQL macros refuse the same parameters as
// DTrace's compiler (and dtracefmt.Spec.Check) with the same words.
func TestBucketChecksAgree(t *testing.T) {
	db := dbtest.Open(t).SQL()
	for _, s := range []dtracefmt.Spec{
		{Kind: dtracefmt.LQuantize, Lower: 0, Upper: 100, Step: 0},
		{Kind: dtracefmt.LQuantize, Lower: 0, Upper: 100, Step: 70000},
		{Kind: dtracefmt.LQuantize, Lower: 100, Upper: 0, Step: 1},
		{Kind: dtracefmt.LQuantize, Lower: 0, Upper: 10, Step: 20},
		{Kind: dtracefmt.LQuantize, Lower: 0, Upper: 1000000, Step: 1},
		{Kind: dtracefmt.LQuantize, Lower: -1 << 40, Upper: 0, Step: 1},
		{Kind: dtracefmt.LQuantize, Lower: 0, Upper: 1 << 40, Step: 1},
		{Kind: dtracefmt.LLQuantize, Factor: 1, Low: 0, High: 6, NSteps: 20},
		{Kind: dtracefmt.LLQuantize, Factor: 10, Low: 4, High: 3, NSteps: 20},
		{Kind: dtracefmt.LLQuantize, Factor: 10, Low: 0, High: 6, NSteps: 5},
		{Kind: dtracefmt.LLQuantize, Factor: 10, Low: 0, High: 6, NSteps: 15},
		{Kind: dtracefmt.LLQuantize, Factor: 10, Low: 2, High: 6, NSteps: 80},
		{Kind: dtracefmt.LLQuantize, Factor: 100, Low: 0, High: 9, NSteps: 100}, // 100^11 > 2^64
		{Kind: dtracefmt.LLQuantize, Factor: 70000, Low: 0, High: 1, NSteps: 70000},
		{Kind: dtracefmt.LLQuantize, Factor: 10, Low: -1, High: 1, NSteps: 10},
	} {
		var sqlCheck sql.NullString
		var q string
		if s.Kind == dtracefmt.LQuantize {
			q = fmt.Sprintf("SELECT lquantize_check(%d, %d, %d)", s.Lower, s.Upper, s.Step)
		} else {
			q = fmt.Sprintf("SELECT llquantize_check(%d, %d, %d, %d)", s.Factor, s.Low, s.High, s.NSteps)
		}
		if err := db.QueryRow(q).Scan(&sqlCheck); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		goErr := s.Check()
		if goErr == nil || !sqlCheck.Valid || sqlCheck.String != goErr.Error() {
			t.Errorf("%s: SQL says %q, Go says %v", s, sqlCheck.String, goErr)
		}
		// And the bucket macro raises it.
		_, err := db.Exec("SELECT " + bucketSQL(s, "5"))
		if err == nil || !strings.Contains(err.Error(), sqlCheck.String) {
			t.Errorf("%s: the bucket macro says %v, want %q", s, err, sqlCheck.String)
		}
	}
	// The FreeBSD regression test: 100^9 fits, but the buckets go up to
	// 100^10, which does not.
	var msg string
	if err := db.QueryRow("SELECT llquantize_check(100, 0, 9, 100)").Scan(&msg); err != nil {
		t.Fatal(err)
	}
	if msg != "llquantize( ) factor (100) raised to power of high magnitude (9) plus 1 overflows 64-bits" {
		t.Errorf("llquantize(v, 100, 0, 9, 100): %q", msg)
	}
}

// TestHistTableMacros: keys, weights, the truncation of values and
// weights, NULL values, the labels, and invalid parameters refused even
// without rows.
func TestHistTableMacros(t *testing.T) {
	db := dbtest.Open(t).SQL()
	rows := `SELECT * FROM (VALUES ('a', 5, 2), ('a', 7.9, 1), ('b', -3, 1), ('a', 100, 1.9), ('b', NULL, 5), ('a', 0, -1)) t(key, value, weight)`
	lit := "'" + strings.ReplaceAll(rows, "'", "''") + "'"
	for _, tc := range []struct{ q, want string }{
		// a: 0 (-1), 5 (2), 7 (1), 100 (1); b: -3 (1), NULL left out.
		{"SELECT * FROM hist_quantize(" + lit + ")",
			"a | 0 | 0 | -1\na | 4 | 4 | 3\na | 64 | 64 | 1\nb | -2 | -2 | 1\n"},
		{"SELECT * FROM hist_lquantize(" + lit + ", 0, 50, 5)",
			"a | 0 | 0 | -1\na | 5 | 5 | 3\na | 50 | >= 50 | 1\nb | -9223372036854775808 | < 0 | 1\n"},
		{"SELECT * FROM hist_llquantize(" + lit + ", 10, 0, 1, 10)",
			"a | -9223372036854775808 | < 1 | -1\na | 5 | 5 | 2\na | 7 | 7 | 1\na | 100 | >= 100 | 1\nb | -9223372036854775808 | < 1 | 1\n"},
		{"SELECT * FROM hist_edges(" + lit + ", [0, 6, 10])",
			"a | 0 | 0 | 1\na | 6 | 6 | 1\na | 10 | >= 10 | 1\nb | -9223372036854775808 | < 0 | 1\n"},
		// min -3, max 100: width (100 - -3) / 4 + 1 = 26; a's 0, 5, 7
		// are in [-3, 23), 100 in [75, 101).
		{"SELECT * FROM hist_linear(" + lit + ", 4)",
			"a | -3 | -3 | 2 | -3 | 26\na | 75 | 75 | 1 | -3 | 26\nb | -3 | -3 | 1 | -3 | 26\n"},
		// Without key and weight columns.
		{"SELECT * FROM hist_quantize('SELECT range AS value FROM range(1, 8)')",
			"NULL | 1 | 1 | 1\nNULL | 2 | 2 | 2\nNULL | 4 | 4 | 4\n"},
	} {
		if got := dbtest.Query(t, db, tc.q); got != tc.want {
			t.Errorf("%s:\ngot:\n%s\nwant:\n%s", tc.q, got, tc.want)
		}
	}
	for _, tc := range []struct{ q, want string }{
		{"SELECT * FROM hist_lquantize('SELECT 1 AS value WHERE false', 0, 10, 0)", "lquantize( ) argument #3 must be a non-zero positive integer constant"},
		{"SELECT * FROM hist_llquantize('SELECT 1 AS value WHERE false', 10, 0, 1, 15)", "llquantize( ) factor (argument #1) must evenly divide"},
		{"SELECT * FROM hist_linear('SELECT 1 AS value WHERE false', 0)", "hist_linear: the number of buckets must be at least 1"},
		{"SELECT * FROM hist_edges('SELECT 1 AS value', [5, 3])", "bucket edges: [5, 3] are not in strictly ascending order"},
		{"SELECT * FROM hist_edges('SELECT 1 AS value', [5])", "bucket edges: give at least two edges"},
	} {
		_, err := db.Exec(tc.q)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.q, err, tc.want)
		}
	}
}

// histBTF (testdata/hist-hand.btf): task A (core 0) is activated at 0, 1000 and 5000; it runs
// 100..600 (500), 1000..1200 (200, preempted by B), 1400..3000 (1600),
// 5000..5030 (30). B runs 1200..1400 (200). Response times (activate to
// terminate of each instance): A 600, 2000, 30; B 200.
const histBTF = "testdata/hist-hand.btf"

// histQNX (testdata/hist-hand.txt): thread 1/1 of proc/boot/app (1 cycle = 1 ns) is READY at
// 0x100, RUNNING at 0x180 (ready 128), RECEIVE at 0x380 (running 512),
// READY at 0x400, RUNNING at 0x420 (ready 32), READY at 0x4a0 (running
// 128), RUNNING at 0x4c0 (ready 32) and RECEIVE at 0x5c0 (running 256).
const histQNX = "testdata/hist-hand.txt"

// TestDurationMacros histograms durations of a BTF and a QNX trace whose
// intervals are known by hand (see histBTF and histQNX).
func TestDurationMacros(t *testing.T) {
	db := dbtest.Open(t)
	dbtest.Ingest(t, db, histBTF, ingest.Options{Format: "btf"})
	dbtest.Ingest(t, db, histQNX, ingest.Options{Format: "qnx"})
	for _, tc := range []struct{ q, want string }{
		{"SELECT run_id, kind, object, value FROM durations_in_state('running', object_kind := 'task') ORDER BY run_id, object, start_ts",
			"1 | task | A | 500\n1 | task | A | 200\n1 | task | A | 1600\n1 | task | A | 30\n1 | task | B | 200\n"},
		{"SELECT run_id, object, value FROM durations_in_state('RUNNING', object_kind := 'thread') ORDER BY start_ts",
			"2 | app/1 | 512\n2 | app/1 | 128\n2 | app/1 | 256\n"},
		{"SELECT object, instance, start_ts, end_ts, value FROM durations_between_events('activate', 'terminate', by_instance := true) ORDER BY object, instance",
			"A | 0 | 0 | 600 | 600\nA | 1 | 1000 | 3000 | 2000\nA | 2 | 5000 | 5030 | 30\nB | 0 | 1200 | 1400 | 200\n"},
		// Scheduling latency of the QNX thread: READY to the next RUNNING
		// (the READY at 0x600 has no RUNNING after it: left out).
		{"SELECT object, value FROM durations_between_events('THREADY', 'THRUNNING', run := 2) ORDER BY start_ts",
			"app/1 | 128\napp/1 | 32\napp/1 | 32\n"},
		// quantize of all running intervals of both formats: 30 → 16;
		// 128, 200, 200, 256 → 128 (3) and 256; 500, 512 → 256, 512; 1600 → 1024.
		{"SELECT bucket, count FROM hist_quantize('SELECT value FROM durations_in_state(''running'') UNION ALL SELECT value FROM durations_in_state(''RUNNING'')')",
			"16 | 1\n128 | 3\n256 | 2\n512 | 1\n1024 | 1\n"},
		{"SELECT key, bucket, label, count FROM hist_lquantize('FROM durations_between_events(''activate'', ''terminate'', by_instance := true)', 0, 1000, 250)",
			"A | 0 | 0 | 1\nA | 500 | 500 | 1\nA | 1000 | >= 1000 | 1\nB | 0 | 0 | 1\n"},
	} {
		if got := dbtest.Query(t, db.SQL(), tc.q); got != tc.want {
			t.Errorf("%s:\ngot:\n%s\nwant:\n%s", tc.q, got, tc.want)
		}
	}
}

// TestDurationsAgainstGeneratorTruth recomputes, from a generated BTF run,
// what the generator knows independently: each process's total running
// time (complete intervals) and number of terminated instances, and
// checks the duration macros and the histogram counts against them.
func TestDurationsAgainstGeneratorTruth(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gen.btf")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	truth, err := tracegen.WriteBTF(f, tracegen.Config{Events: 20000, Cores: 2, Tasks: 5, Seed: 3})
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	db := dbtest.Open(t)
	dbtest.Ingest(t, db, path, ingest.Options{Format: "btf"})
	rows, err := db.SQL().Query(`
		SELECT r.key, r.total, r.n, h.n, coalesce(i.n, 0)
		FROM (SELECT key, sum(value) AS total, count(*) AS n FROM durations_in_state('running') WHERE kind IN ('task', 'isr') GROUP BY key) r
		JOIN (SELECT key, sum(count) AS n FROM hist_quantize('SELECT key, value FROM durations_in_state(''running'') WHERE kind IN (''task'', ''isr'')') GROUP BY key) h USING (key)
		LEFT JOIN (SELECT key, count(*) AS n FROM durations_between_events('activate', 'terminate', by_instance := true) GROUP BY key) i USING (key)`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	seen := 0
	for rows.Next() {
		var key string
		var total, n, histN, instances int64
		if err := rows.Scan(&key, &total, &n, &histN, &instances); err != nil {
			t.Fatal(err)
		}
		seen++
		if total != truth.Running[key] {
			t.Errorf("%s: running %d ns by durations_in_state, %d by the generator", key, total, truth.Running[key])
		}
		if histN != n {
			t.Errorf("%s: hist_quantize counts %d intervals of %d", key, histN, n)
		}
		if instances != int64(truth.Terminated[key]) {
			t.Errorf("%s: %d activate..terminate intervals, the generator terminated %d instances", key, instances, truth.Terminated[key])
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if seen != len(truth.Running) {
		t.Errorf("%d processes ran, the generator has %d", seen, len(truth.Running))
	}
}
