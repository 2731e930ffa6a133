package queries_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/traceduck/traceduck/queries"
	"github.com/traceduck/traceduck/schema"
)

// globDB is an in-memory database with the queries installed.
func globDB(t *testing.T) *sql.DB {
	t.Helper()
	sdb, err := schema.Open(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sdb.Close() })
	db := sdb.SQL()
	db.SetMaxOpenConns(1) // one in-memory database
	if err := queries.Install(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	return db
}

// glob_regex says what GLOB says, on every pattern and name of the table
// (every pair is tried), ASCII and the pattern syntax's corners: escapes,
// classes with ! and ranges, a ] first in a class, patterns GLOB never
// matches (an unclosed [, an empty class, a \ at the end), regular
// expression characters that must be taken literally, newlines.
func TestGlobRegexIsGlob(t *testing.T) {
	db := globDB(t)
	patterns := []string{
		"", "*", "**", "?", "??", "a", "abc", "a*", "*c", "*b*", "a?c", "a*c", "*a*b*c*",
		"[abc]", "[a-c]x", "[!a-c]x", "[]]", "[]a]", "[!]a]", "[!]]", "[]-a]", "[a-]", "[-a]",
		"[*]", "[?]", "[\\]", "[[]", "[^a]", "[!^]", "a[b", "[", "[]", "[!]", "a\\", "\\*", "\\?",
		"\\[a]", "\\a", "a\\*b", ".", "a.c", "a+", "(a)", "a|b", "$", "^a", "{1}", "T_1MS_*",
		"Core_[01]", "*_[0-9]", "a*a*a*a*b", "\n", "a?", "*\n*",
		"[a-]x]", "[a-]]", "[ab-c]", "[--a]", "[!!]", "[a-c-]", "[!a-]", "[\\-a]", "[z-a]", "[!z-a]", "[z-ab]",
	}
	names := []string{
		"", "a", "b", "c", "x", "ax", "bx", "dx", "abc", "abbc", "ac", "a.c", "aXc", "]", "]x",
		"-", "!", "^", "*", "?", "[", "\\", "a[b", "a*b", "ab", "a\\", "a+", "(a)", "a|b", "$",
		"^a", "{1}", "T_1MS_0", "T_1MS_", "Core_0", "Core_2", "Task_10ms_3", "aaaaab", "aaaa",
		"a\nb", "\n", "abc\n",
	}
	var b strings.Builder
	b.WriteString("CREATE TABLE cases AS SELECT * FROM (VALUES ")
	n := 0
	for _, p := range patterns {
		for _, s := range names {
			if n > 0 {
				b.WriteString(", ")
			}
			b.WriteString("(" + queries.Literal(p) + ", " + queries.Literal(s) + ")")
			n++
		}
	}
	b.WriteString(") v(pattern, name)")
	if _, err := db.Exec(b.String()); err != nil {
		t.Fatal(err)
	}
	rows, err := db.Query(`SELECT pattern, name, name GLOB pattern, regexp_full_match(name, glob_regex(pattern)), glob_regex(pattern)
		FROM cases ORDER BY pattern, name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	count, matched := 0, 0
	for rows.Next() {
		var p, s, re string
		var glob, ours bool
		if err := rows.Scan(&p, &s, &glob, &ours, &re); err != nil {
			t.Fatal(err)
		}
		count++
		if glob {
			matched++
		}
		if glob != ours {
			t.Errorf("%q GLOB %q is %v, glob_regex (%q) says %v", s, p, glob, re, ours)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if count != n || matched < 100 {
		t.Errorf("%d pairs compared (want %d), %d matched: the table does not try what it should", count, n, matched)
	}
}

// Where glob_regex differs from GLOB, by design: ? and a class take a
// character, not a byte; NULL is NULL.
func TestGlobRegexDifferences(t *testing.T) {
	db := globDB(t)
	for _, c := range []struct{ name, pattern, want string }{
		{"Täsk", "T?sk", "true"},
		{"Täsk", "T[äö]sk", "true"},
		{"Tsk", "T?sk", "false"},
		{"x", "NULL", "NULL"},
	} {
		pat := queries.Literal(c.pattern)
		if c.pattern == "NULL" {
			pat = "NULL"
		}
		var got sql.NullBool
		if err := db.QueryRow("SELECT regexp_full_match(" + queries.Literal(c.name) + ", glob_regex(" + pat + "))").Scan(&got); err != nil {
			t.Fatal(err)
		}
		s := "NULL"
		if got.Valid {
			s = map[bool]string{true: "true", false: "false"}[got.Bool]
		}
		if s != c.want {
			t.Errorf("%q against %s: %s, want %s", c.name, c.pattern, s, c.want)
		}
	}
}

// Many stars against a long name: GLOB backtracks (three stars took 18 s
// through eco_selection on a 300-character name), glob_regex does not.
func TestGlobRegexLinear(t *testing.T) {
	db := globDB(t)
	name := strings.Repeat("T", 300)
	pattern := strings.Repeat("*T", 40) + "*X"
	start := time.Now()
	var got bool
	if err := db.QueryRow("SELECT regexp_full_match(" + queries.Literal(name) + ", glob_regex(" + queries.Literal(pattern) + "))").Scan(&got); err != nil {
		t.Fatal(err)
	}
	if got {
		t.Error("matched")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("40 stars against 300 characters took %v", d)
	}
}
