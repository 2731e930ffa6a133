package queries

import (
	"fmt"
	"regexp"
	"strings"
)

// createStmt matches the first line of a statement that creates a view, a
// macro or a table, and captures what and its name.
var createStmt = regexp.MustCompile(`(?i)^CREATE (?:OR REPLACE )?(VIEW|MACRO|TABLE)(?: IF NOT EXISTS)? +(\w+)`)

// refEntry is one documented unit: a comment block and what is created
// right after it.
type refEntry struct {
	file    string
	kind    string
	names   []string
	comment []string
}

// Reference returns the reference page of the views, macros and tables
// that Install creates (docs/queries.md): for each, the comment written
// before it in its .sql file. A comment block followed by several CREATE
// statements documents them together.
func Reference() string {
	var entries []*refEntry
	for _, f := range Files() {
		text, _ := Source(f)
		var block []string
		var cur *refEntry
		for _, line := range strings.Split(text, "\n") {
			trimmed := strings.TrimSpace(line)
			switch {
			case strings.HasPrefix(line, "--"):
				if cur != nil {
					block, cur = nil, nil
				}
				block = append(block, strings.TrimPrefix(strings.TrimPrefix(line, "--"), " "))
			case createStmt.MatchString(trimmed):
				m := createStmt.FindStringSubmatch(trimmed)
				if cur == nil {
					cur = &refEntry{file: f, kind: strings.ToLower(m[1]), comment: block}
					entries = append(entries, cur)
				}
				cur.names = append(cur.names, m[2])
			case trimmed == "":
				if cur == nil {
					block = nil // a comment that documents nothing below it
				}
			}
		}
	}
	var b strings.Builder
	b.WriteString("# Views, macros and tables of every traceduck database\n\n")
	b.WriteString("Generated from the comments in `queries/*.sql` by `go test ./queries -run TestReference -update`;\n")
	b.WriteString("do not edit by hand. Every database traceduck writes has them, so any DuckDB client can use them.\n\n")
	b.WriteString("| name | what | file |\n| --- | --- | --- |\n")
	for _, e := range entries {
		fmt.Fprintf(&b, "| [%s](#%s) | %s | %s |\n", strings.Join(e.names, ", "), anchor(e.names[0]), e.kind, e.file)
	}
	for _, e := range entries {
		fmt.Fprintf(&b, "\n<a id=\"%s\"></a>\n## %s (%s, %s)\n\n```\n%s\n```\n", anchor(e.names[0]), strings.Join(e.names, ", "), e.kind, e.file,
			strings.TrimRight(strings.Join(e.comment, "\n"), "\n"))
	}
	return b.String()
}

func anchor(name string) string { return strings.ToLower(name) }
