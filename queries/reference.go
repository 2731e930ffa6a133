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

// Doc is one documented unit of the library: the views, macros or tables
// one comment block of a .sql file documents, and that comment.
type Doc struct {
	Kind    string // view, macro or table
	Names   []string
	File    string
	Comment string // the comment's lines, without "-- "
}

// Docs lists the documented views, macros and tables that Install
// creates, in the order of their files.
func Docs() []Doc {
	var out []Doc
	for _, e := range refEntries() {
		out = append(out, Doc{Kind: e.kind, Names: e.names, File: e.file, Comment: strings.TrimRight(strings.Join(e.comment, "\n"), "\n")})
	}
	return out
}

// Summary is the comment's first sentence, without the "name: (call)"
// it starts with: what traceduck views prints on the name's line.
func (d Doc) Summary() string {
	text := strings.Join(strings.Fields(d.Comment), " ")
	for _, n := range d.Names {
		if rest, ok := strings.CutPrefix(text, n+": "); ok {
			text = rest
			break
		}
	}
	if strings.HasPrefix(text, "(") {
		// skip the call in parentheses, nested ones included
		depth := 0
		for i, r := range text {
			switch r {
			case '(':
				depth++
			case ')':
				depth--
			}
			if depth == 0 {
				text = strings.TrimSpace(text[i+1:])
				break
			}
		}
	}
	if i := strings.Index(text, ". "); i >= 0 {
		text = text[:i]
	}
	return strings.TrimSuffix(text, ".")
}

// refEntries reads the comment blocks of the .sql files.
func refEntries() []*refEntry {
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
	return entries
}

// Reference returns the reference page of the views, macros and tables
// that Install creates (docs/queries.md): for each, the comment written
// before it in its .sql file. A comment block followed by several CREATE
// statements documents them together.
func Reference() string {
	entries := refEntries()
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
