package schema

import (
	"context"
	"fmt"
	"testing"
)

// TestAggregationTables writes both tables across batch boundaries and
// reads them back: NULL bounds, NULL title, dictionary columns, JSON keys,
// negative values; nothing leaks.
func TestAggregationTables(t *testing.T) {
	db, mem := openTest(t)
	_, err := db.Ingest(context.Background(), RunInfo{Name: "aggs", SHA256: "a1"}, IngestOptions{BatchRows: 3}, func(w *RunWriter) error {
		for i := 0; i < 7; i++ {
			a := Aggregation{Agg: w.Sym("#1"), Title: NoSym, Key: []byte(fmt.Sprintf("k%d", i)), Keys: []byte(fmt.Sprintf(`["k%d"]`, i)), Value: int64(i) - 3, Line: int64(10 + i)}
			if i == 6 {
				a.Agg, a.Title, a.Key, a.Keys = w.Sym("@bytes"), w.Sym("Count,"), []byte{}, []byte("[]")
			}
			if err := w.Aggregation(&a); err != nil {
				return err
			}
		}
		h := Histogram{Agg: w.Sym("#2"), Title: w.Sym("PID  CMD"), Key: []byte("7110  -bash"), Keys: []byte(`["7110","-bash"]`), Func: w.Sym("lquantize")}
		buckets := []Bucket{
			{Label: []byte("< 0"), Hi: 0, HasHi: true, Count: 1, Line: 20},
			{Label: []byte("0"), Lo: 0, Hi: 10, HasLo: true, HasHi: true, Count: 5, Line: 21},
			{Label: []byte("10"), Lo: 10, Hi: 20, HasLo: true, HasHi: true, Count: -2, Line: 22},
			{Label: []byte(">= 20"), Lo: 20, HasLo: true, Count: 0, Line: 23},
		}
		if err := w.Histogram(&h, buckets); err != nil {
			return err
		}
		h.Func = NoSym
		return w.Histogram(&h, buckets[1:2])
	})
	if err != nil {
		t.Fatal(err)
	}
	mem.AssertSize(t, 0)
	got := queryString(t, db.SQL(), "SELECT agg, coalesce(title, 'NULL'), key, keys, value, src_line FROM aggregations ORDER BY src_line")
	want := "#1 NULL k0 [\"k0\"] -3 10\n#1 NULL k1 [\"k1\"] -2 11\n#1 NULL k2 [\"k2\"] -1 12\n#1 NULL k3 [\"k3\"] 0 13\n#1 NULL k4 [\"k4\"] 1 14\n#1 NULL k5 [\"k5\"] 2 15\n@bytes Count,  [] 3 16"
	if got != want {
		t.Errorf("aggregations:\n%s\nwant\n%s", got, want)
	}
	got = queryString(t, db.SQL(), "SELECT agg, title, key, keys->>1, func, label, bucket_lo, bucket_hi, count, src_line FROM histograms ORDER BY src_line, func NULLS LAST")
	want = "#2 PID  CMD 7110  -bash -bash lquantize < 0 NULL 0 1 20\n" +
		"#2 PID  CMD 7110  -bash -bash lquantize 0 0 10 5 21\n" +
		"#2 PID  CMD 7110  -bash -bash NULL 0 0 10 5 21\n" +
		"#2 PID  CMD 7110  -bash -bash lquantize 10 10 20 -2 22\n" +
		"#2 PID  CMD 7110  -bash -bash lquantize >= 20 20 NULL 0 23"
	if got != want {
		t.Errorf("histograms:\n%s\nwant\n%s", got, want)
	}
}

// TestAggregationsAbort: rows of a failed ingest are not loaded, and
// their builders are released.
func TestAggregationsAbort(t *testing.T) {
	db, mem := openTest(t)
	boom := fmt.Errorf("bad line")
	_, err := db.Ingest(context.Background(), RunInfo{Name: "x"}, IngestOptions{BatchRows: 2}, func(w *RunWriter) error {
		for i := 0; i < 5; i++ {
			if err := w.Aggregation(&Aggregation{Agg: w.Sym("#1"), Title: NoSym, Key: []byte("k"), Value: 1, Line: 1}); err != nil {
				return err
			}
			if err := w.Histogram(&Histogram{Agg: w.Sym("#1"), Title: NoSym, Key: []byte("k"), Func: NoSym}, []Bucket{{Label: []byte("1"), Count: 1}}); err != nil {
				return err
			}
		}
		return boom
	})
	if err != boom {
		t.Fatalf("got %v", err)
	}
	mem.AssertSize(t, 0)
	if got := queryString(t, db.SQL(), "SELECT (SELECT count(*) FROM aggregations) + (SELECT count(*) FROM histograms)"); got != "0" {
		t.Errorf("%s rows left by the failed ingest", got)
	}
}
