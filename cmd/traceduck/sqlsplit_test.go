package main

import (
	"math/big"
	"testing"

	"github.com/marcboeker/go-duckdb"
)

func TestLastStatement(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"SELECT 1", "SELECT 1"},
		{"SELECT 1;", "SELECT 1"},
		{"SELECT 1; SELECT 2 ;\n", "SELECT 2"},
		{"SELECT 1; -- last; not a statement\n", "SELECT 1"},
		{"SELECT 1; /* a ; /* nested ; */ still ; */", "SELECT 1"},
		{"SELECT 'a;b' AS x", "SELECT 'a;b' AS x"},
		{"SELECT 'it''s; fine'; SELECT 2", "SELECT 2"},
		{`SELECT "a;b" FROM t; SELECT 3`, "SELECT 3"},
		{`SELECT E'\';' AS x`, `SELECT E'\';' AS x`},
		{`SELECT 'no\'; SELECT 4`, "SELECT 4"},
		{"SELECT $$a;b$$; SELECT $tag$ ; $$ ; $tag$ AS y", "SELECT $tag$ ; $$ ; $tag$ AS y"},
		{"SELECT $1; SELECT 5", "SELECT 5"},
		{"  \n -- only a comment\n", ""},
		{"/* closed */ -- and a line comment", ""},
		// A comment never closed is for DuckDB to refuse.
		{"/* unterminated ; SELECT 2", "/* unterminated ; SELECT 2"},
		{"SELECT 1; /* unterminated", "/* unterminated"},
		{"", ""},
	} {
		if got := lastStatement(tc.in); got != tc.want {
			t.Errorf("lastStatement(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestFormatDecimal(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		v     int64
		scale uint8
		want  string
	}{
		{25, 1, "2.5"}, {-5, 3, "-0.005"}, {0, 2, "0.00"}, {1234, 0, "1234"}, {-120, 2, "-1.20"},
	} {
		d := duckdb.Decimal{Width: 18, Scale: tc.scale, Value: big.NewInt(tc.v)}
		if got := formatDecimal(d); got != tc.want {
			t.Errorf("formatDecimal(%d, scale %d) = %q, want %q", tc.v, tc.scale, got, tc.want)
		}
	}
}

func TestFormatInterval(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		iv   duckdb.Interval
		want string
	}{
		{duckdb.Interval{Micros: 90 * 60 * 1e6}, "01:30:00"},
		{duckdb.Interval{Months: 14, Days: 1, Micros: 1500}, "1 year 2 months 1 day 00:00:00.0015"},
		{duckdb.Interval{}, "00:00:00"},
		{duckdb.Interval{Days: 3}, "3 days"},
	} {
		if got := formatInterval(tc.iv); got != tc.want {
			t.Errorf("formatInterval(%+v) = %q, want %q", tc.iv, got, tc.want)
		}
	}
}
