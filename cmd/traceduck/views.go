package main

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/traceduck/traceduck/queries"
	"github.com/traceduck/traceduck/schema"
)

// viewsWidth is the width views fits its lines in.
const viewsWidth = 100

func newViewsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "views [NAME]",
		Short: "List the tables, views and macros of every traceduck database, or describe one",
		Long: `Views lists what every traceduck database holds: its tables, and the views
and macros traceduck installs, each with the first sentence of its
documentation. With a NAME it prints that table's columns, or that view's
or macro's whole documentation (docs/queries.md has them all). Every DuckDB
client sees the same tables, views and macros.`,
		Example: `  traceduck views
  traceduck views state_stats_window
  traceduck views state_intervals`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				return describeName(cmd.OutOrStdout(), args[0])
			}
			listViews(cmd.OutOrStdout())
			return nil
		},
	}
}

// listViews prints the tables, then the views, then the macros, a line
// each.
func listViews(w io.Writer) {
	line := func(name, what string) {
		const col = 28
		pad := col - len(name)
		if pad < 2 {
			fmt.Fprintf(w, "  %s\n", name)
			name, pad = "", col
		}
		fmt.Fprintf(w, "  %s%s%s\n", name, strings.Repeat(" ", pad), cutWords(what, viewsWidth-2-col))
	}
	fmt.Fprintln(w, "Tables (traceduck views TABLE lists its columns):")
	for _, t := range schema.TableNames() {
		doc, _, _ := schema.TableDoc(t)
		line(t, doc)
	}
	docs := queries.Docs()
	for _, d := range docs {
		if d.Kind == "table" {
			for _, n := range d.Names {
				line(n, d.Summary())
			}
		}
	}
	for _, kind := range []struct{ kind, title string }{{"view", "Views"}, {"macro", "Macros (called as name(...) in FROM or in an expression)"}} {
		fmt.Fprintf(w, "\n%s:\n", kind.title)
		for _, d := range docs {
			if d.Kind != kind.kind {
				continue
			}
			for _, n := range d.Names {
				line(n, d.Summary())
			}
		}
	}
}

// describeName prints a table's columns or a view's or macro's
// documentation; a name that is none of them is a usage error naming the
// closest.
func describeName(w io.Writer, name string) error {
	if doc, cols, ok := schema.TableDoc(name); ok {
		fmt.Fprintf(w, "%s (table): %s\n\n", name, doc)
		width := 0
		for _, c := range cols {
			width = max(width, len(c[0]))
		}
		for _, c := range cols {
			fmt.Fprintf(w, "  %-*s  %s\n", width, c[0], c[1])
		}
		return nil
	}
	var all []string
	for _, d := range queries.Docs() {
		for _, n := range d.Names {
			if n == name {
				fmt.Fprintf(w, "%s (%s, queries/%s)\n\n%s\n", strings.Join(d.Names, ", "), d.Kind, d.File, d.Comment)
				return nil
			}
			all = append(all, n)
		}
	}
	all = append(all, schema.TableNames()...)
	return usagef("%s: no table, view or macro of that name%s", cellText(name), closestNote(name, all))
}

// closestNote is ` (closest: a, b, c)` naming the names nearest to s (by
// edit distance, at most three), or "" when none is near.
func closestNote(s string, names []string) string {
	type cand struct {
		name string
		d    int
	}
	var cs []cand
	for _, n := range names {
		d := editDistance(strings.ToLower(s), strings.ToLower(n))
		if d <= max(2, len(s)/3) || strings.Contains(strings.ToLower(n), strings.ToLower(s)) {
			cs = append(cs, cand{n, d})
		}
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].d < cs[j].d })
	if len(cs) == 0 {
		return ""
	}
	var out []string
	for i, c := range cs {
		if i == 3 {
			break
		}
		out = append(out, cellText(c.name))
	}
	return " (closest: " + strings.Join(out, ", ") + ")"
}

// editDistance is the Levenshtein distance of a and b (bytes), bounded:
// names longer than 256 bytes count as far from everything.
func editDistance(a, b string) int {
	if len(a) > 256 || len(b) > 256 {
		return 1 << 20
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// cutWords shortens s to at most n bytes at a word boundary, ending in
// "..." when it cut.
func cutWords(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := s[:n-3]
	if i := strings.LastIndexByte(cut, ' '); i > n/2 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " ,;:") + "..."
}
