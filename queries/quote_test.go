package queries_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/queries"
	"github.com/traceduck/traceduck/schema"
)

// TestLiteral reads back through DuckDB every string that could end or
// bend a literal, as a literal, in a list and as an identifier: what
// comes back is the string, and the statement stays one SELECT. Text
// that is not UTF-8 is refused by DuckDB.
func TestLiteral(t *testing.T) {
	db, err := schema.Open(context.Background(), filepath.Join(t.TempDir(), "q.duckdb"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, c := range []struct{ in, want string }{
		{"O'Brien", "O'Brien"},
		{"'; DROP TABLE runs; --", "'; DROP TABLE runs; --"},
		{"x--y", "x--y"},
		{"/* c */", "/* c */"},
		{`a"b`, `a"b`},
		{`back\slash\'`, `back\slash\'`},
		{"$$dollar$$", "$$dollar$$"},
		{"a\x00'; DROP TABLE runs; --", "a\x00'; DROP TABLE runs; --"},
		{"\x00", "\x00"},
		{"ünïcödé ✓", "ünïcödé ✓"},
		{"", ""},
	} {
		var got, inList, ident string
		q := "SELECT " + queries.Literal(c.in) + ", (" + queries.LiteralList([]string{"z", c.in}) + ")[2], " +
			"(SELECT " + queries.Ident(c.in+"col") + " FROM (SELECT 1 AS " + queries.Ident(c.in+"col") + "))::VARCHAR"
		if err := db.SQL().QueryRow(q).Scan(&got, &inList, &ident); err != nil {
			t.Errorf("%q: %s: %v", c.in, q, err)
			continue
		}
		if got != c.want || inList != c.want || ident != "1" {
			t.Errorf("%q: literal %q, in a list %q, identifier %q; want %q, %q, 1", c.in, got, inList, ident, c.want, c.want)
		}
	}
	var s string
	if err := db.SQL().QueryRow("SELECT " + queries.Literal("bad \xff\xfe'; DROP TABLE runs; --")).Scan(&s); err == nil || !strings.Contains(err.Error(), "Invalid unicode") {
		t.Errorf("a literal that is not UTF-8: %q, %v; want DuckDB's refusal", s, err)
	}
	var n int
	if err := db.SQL().QueryRow("SELECT count(*) FROM runs").Scan(&n); err != nil {
		t.Errorf("the table runs after the literals: %v", err)
	}
}
