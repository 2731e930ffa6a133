package queries

import "strings"

// The one way a string a user or a trace gave is written into SQL text,
// where a bound parameter cannot go (a macro's argument in a query that
// is also printed, a list literal): everything else binds it as a
// parameter.

// Literal is s as a SQL string literal. Quotes are doubled (DuckDB reads
// no escapes inside '...'); a NUL byte, which would end the query text at
// the C interface, is written as chr(0). Bytes that are not UTF-8 are
// left as they are: DuckDB refuses the query (a path must not be changed,
// and no name in the tables holds them: ingest repairs them to U+FFFD).
func Literal(s string) string {
	if !strings.Contains(s, "\x00") {
		return "'" + strings.ReplaceAll(s, "'", "''") + "'"
	}
	parts := strings.Split(s, "\x00")
	for i, p := range parts {
		parts[i] = "'" + strings.ReplaceAll(p, "'", "''") + "'"
	}
	return "(" + strings.Join(parts, " || chr(0) || ") + ")"
}

// LiteralList is items as a DuckDB list of VARCHAR.
func LiteralList(items []string) string {
	quoted := make([]string, len(items))
	for i, s := range items {
		quoted[i] = Literal(s)
	}
	return "[" + strings.Join(quoted, ", ") + "]::VARCHAR[]"
}

// Ident is s as a quoted SQL identifier (a table or column name); an
// identifier holds no NUL byte, so any is left out.
func Ident(s string) string {
	return `"` + strings.ReplaceAll(strings.ReplaceAll(s, "\x00", ""), `"`, `""`) + `"`
}
