package queries_test

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/internal/tracegen"
	"github.com/traceduck/traceduck/schema"
)

var ecoOrders = []string{"eco", "eoc", "ceo", "coe", "oec", "oce"}

const (
	seedBTF    = "../samples/btf/seed-example.btf"
	rtosBTF    = "../samples/btf/rtos-2core.btf"
	neutrino   = "../samples/qnx/neutrino-2cpu.txt"
	tlvSampleD = "../samples/tlv/"
)

// ingestSamples ingests the seed example (run 1), the 2-core BTF sample
// (run 2), the QNX sample (run 3), the TLV sample (run 4) and a generated
// Baget log (run 5).
func ingestSamples(t *testing.T) *schema.DB {
	t.Helper()
	db := dbtest.Open(t)
	dbtest.Ingest(t, db, seedBTF, ingest.Options{})
	dbtest.Ingest(t, db, rtosBTF, ingest.Options{})
	dbtest.Ingest(t, db, neutrino, ingest.Options{})
	dbtest.Ingest(t, db, tlvSampleD+"tiny.log", ingest.Options{Format: "tlv", Params: map[string]string{
		"resources": tlvSampleD + "tiny.res", "rules": tlvSampleD + "tiny.cnv", "headers": tlvSampleD + "tiny.resh"}})
	log, desc, _, err := tracegen.GenerateBaget(tracegen.BagetConfig{Events: 2000, CPUs: 2, Seed: 3, ABI: "le32"})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	logPath, descPath := filepath.Join(dir, "gen.blog"), filepath.Join(dir, "gen.xml")
	if err := os.WriteFile(logPath, log, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(descPath, desc, 0o644); err != nil {
		t.Fatal(err)
	}
	dbtest.Ingest(t, db, logPath, ingest.Options{Format: "baget", Params: map[string]string{"description": descPath}})
	return db
}

// treeText is a run's tree as lines "depth level label count eco_id",
// indented by depth.
func treeText(t *testing.T, db *sql.DB, q string) string {
	t.Helper()
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimSuffix(dbtest.Query(t, db, q), "\n"), "\n") {
		f := strings.Split(line, " | ")
		d, _ := strconv.Atoi(f[0])
		fmt.Fprintf(&b, "%s%s %s %s", strings.Repeat("  ", d), f[1], f[2], f[3])
		if f[4] != "NULL" {
			fmt.Fprintf(&b, " eco=%s", f[4])
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// TestEcoTreeSeedExample: the trees of the BTF chapter's six-line example,
// written out by hand from the listing (every event is its own triple, so
// counts add up only where the hierarchy groups them), then all six orders
// and both sorts against a golden file.
func TestEcoTreeSeedExample(t *testing.T) {
	db := dbtest.Open(t)
	dbtest.Ingest(t, db, seedBTF, ingest.Options{})
	q := "SELECT depth, level, label, count, eco_id FROM eco_tree('%s'%s) ORDER BY pos"
	for _, tc := range []struct{ order, sort, want string }{
		{"eco", "", `run seed-example 6
  class R 2
    event R:start 1
      context T_1MS_1 1
        object Runnable_0 1 eco=4
    event R:terminate 1
      context T_1MS_1 1
        object Runnable_0 1 eco=5
  class STI 1
    event STI:trigger 1
      context Sim 1
        object S_1MS 1 eco=1
  class T 3
    event T:activate 1
      context S_1MS 1
        object T_1MS_0 1 eco=2
    event T:start 1
      context Core_0 1
        object T_1MS_0 1 eco=3
    event T:terminate 1
      context Core_1 1
        object T_1MS_0 1 eco=6
`},
		// T_1MS_0 is the main object of three events, Runnable_0 of two.
		{"oec", ", sort_by := 'count'", `run seed-example 6
  object.kind task 3
    object T_1MS_0 3
      event T:activate 1
        context S_1MS 1 eco=2
      event T:start 1
        context Core_0 1 eco=3
      event T:terminate 1
        context Core_1 1 eco=6
  object.kind runnable 2
    object Runnable_0 2
      event R:start 1
        context T_1MS_1 1 eco=4
      event R:terminate 1
        context T_1MS_1 1 eco=5
  object.kind stimulus 1
    object S_1MS 1
      event STI:trigger 1
        context Sim 1 eco=1
`},
		// The two cores are contexts of kind cpu; T_1MS_1 is the context
		// of both runnable events, one (context, object) pair.
		{"coe", "", `run seed-example 6
  context.kind cpu 2
    context Core_0 1
      object T_1MS_0 1
        event T:start 1 eco=3
    context Core_1 1
      object T_1MS_0 1
        event T:terminate 1 eco=6
  context.kind stimulus 1
    context S_1MS 1
      object T_1MS_0 1
        event T:activate 1 eco=2
  context.kind system 1
    context Sim 1
      object S_1MS 1
        event STI:trigger 1 eco=1
  context.kind task 2
    context T_1MS_1 2
      object Runnable_0 2
        event R:start 1 eco=4
        event R:terminate 1 eco=5
`},
	} {
		if got := treeText(t, db.SQL(), fmt.Sprintf(q, tc.order, tc.sort)); got != tc.want {
			t.Errorf("eco_tree('%s'%s):\n%s\nwant\n%s", tc.order, tc.sort, got, tc.want)
		}
	}
	var all strings.Builder
	for _, order := range ecoOrders {
		for _, sort := range []string{"name", "count"} {
			fmt.Fprintf(&all, "-- eco_tree('%s', sort_by := '%s')\n", order, sort)
			all.WriteString(dbtest.Query(t, db.SQL(), fmt.Sprintf(
				"SELECT * FROM eco_tree('%s', sort_by := '%s')", order, sort)))
		}
	}
	dbtest.Golden(t, "testdata/eco_tree_seed.golden", all.String())
}

// qnxLine is an event line of traceprinter's output: its class and event
// words (INT_ENTR, INT_EXIT and the handler events print the event where
// the class goes and the interrupt vector after the colon).
var qnxLine = regexp.MustCompile(`^t:0x[0-9a-f]+ CPU:\d+ ([A-Z_]+) *: *([A-Za-z_0-9]+(:\d+)?)`)

// TestEcoTreeQNXHandCounts: on the QNX sample, the event nodes (depth 2 of
// eco) and their classes count what a plain reading of the text counts,
// and the interrupt events split over their interrupts (eoc, depth 3) as
// the vectors printed on the lines say.
func TestEcoTreeQNXHandCounts(t *testing.T) {
	f, err := os.Open(neutrino)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	events, classes, irqs := map[string]int{}, map[string]int{}, map[string]int{}
	sc := bufio.NewScanner(f)
	lines := 0
	for sc.Scan() {
		m := qnxLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		lines++
		class, event := m[1], m[2]
		if strings.HasPrefix(class, "INT_") {
			vec, err := strconv.ParseUint(strings.TrimPrefix(event, "0x"), 16, 32)
			if err != nil {
				t.Fatal(err)
			}
			irqs[fmt.Sprintf("INT:%s | irq %d", class, vec)]++
			class, event = "INT", class
		}
		events[class+":"+event]++
		classes[class]++
	}
	if lines != 3001 {
		t.Fatalf("read %d event lines, want 3001", lines)
	}
	db := dbtest.Open(t)
	dbtest.Ingest(t, db, neutrino, ingest.Options{})
	compareCounts(t, "events", dbtest.Query(t, db.SQL(), "SELECT label, count FROM eco_tree('eco') WHERE depth = 2"), events)
	compareCounts(t, "classes", dbtest.Query(t, db.SQL(), "SELECT label, count FROM eco_tree('eco') WHERE depth = 1"), classes)
	compareCounts(t, "interrupts", dbtest.Query(t, db.SQL(),
		"SELECT path[2] || ' | ' || label, count FROM eco_tree('eoc') WHERE depth = 3 AND path[1] = 'INT'"), irqs)
	if got := dbtest.Query(t, db.SQL(), "SELECT count FROM eco_tree('oce') WHERE depth = 0"); got != "3001\n" {
		t.Errorf("root count %q, want 3001", got)
	}
	// The ceo tree down to the contexts, sorted by count.
	dbtest.Golden(t, "testdata/eco_tree_qnx_ceo.golden",
		treeText(t, db.SQL(), "SELECT depth, level, label, count, eco_id FROM eco_tree('ceo', sort_by := 'count') WHERE depth <= 2 ORDER BY pos"))
}

func compareCounts(t *testing.T, what, rows string, want map[string]int) {
	t.Helper()
	got := map[string]int{}
	for _, line := range strings.Split(strings.TrimSuffix(rows, "\n"), "\n") {
		i := strings.LastIndex(line, " | ")
		n, err := strconv.Atoi(line[i+3:])
		if err != nil {
			t.Fatalf("%s: %q", what, line)
		}
		got[line[:i]] = n
	}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("%s: %s counts %d, want %d", what, k, got[k], n)
		}
	}
	for k, n := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: %s (%d) is not in the text", what, k, n)
		}
	}
}

// ecoLeaf is one distinct (event, context, object) of a run, counted from
// the events table directly (not from eco_triples).
type ecoLeaf struct {
	run, eco       int64
	class, event   string
	ckind, context string
	cid            int64 // -1: none
	okind, object  string
	oid            int64
	count          int64
}

// dim is the coordinate of a leaf along one dimension: its group, its
// label, and the id that tells equal labels apart.
func (l ecoLeaf) dim(d byte) (group, label string, id int64) {
	switch d {
	case 'e':
		return l.class, l.class + ":" + l.event, -1
	case 'c':
		return l.ckind, l.context, l.cid
	default:
		return l.okind, l.object, l.oid
	}
}

func loadLeaves(t testing.TB, db *sql.DB) []ecoLeaf {
	t.Helper()
	rows, err := db.Query(`SELECT e.run_id, min(e.eco_id), max(e.eco_id), e.class, e.event,
		coalesce(c.kind, '(none)'), coalesce(c.name, '(none)'), coalesce(e.context_id, -1),
		coalesce(o.kind, '(none)'), coalesce(o.name, '(none)'), coalesce(e.object_id, -1), count(*)
		FROM events e
		LEFT JOIN objects c ON c.run_id = e.run_id AND c.object_id = e.context_id
		LEFT JOIN objects o ON o.run_id = e.run_id AND o.object_id = e.object_id
		GROUP BY ALL`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []ecoLeaf
	for rows.Next() {
		var l ecoLeaf
		var maxEco int64
		if err := rows.Scan(&l.run, &l.eco, &maxEco, &l.class, &l.event, &l.ckind, &l.context, &l.cid,
			&l.okind, &l.object, &l.oid, &l.count); err != nil {
			t.Fatal(err)
		}
		if l.eco != maxEco {
			t.Fatalf("run %d: events of one triple have eco_ids %d and %d", l.run, l.eco, maxEco)
		}
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// treeRow is one row of eco_tree.
type treeRow struct {
	run, pos, depth                             int64
	level, label                                string
	count                                       int64
	eco                                         sql.NullInt64
	path                                        []any
	class, event, ckind, context, okind, object sql.NullString
	cid, oid                                    sql.NullInt64
}

// key names the node by what it fixes: per dimension its full coordinate,
// its group, or '-'.
func (r treeRow) key() string {
	id := func(n sql.NullInt64) int64 {
		if n.Valid {
			return n.Int64
		}
		return -1
	}
	parts := []string{fmt.Sprint(r.run, "/", r.depth)}
	switch {
	case r.event.Valid:
		parts = append(parts, "e="+r.class.String+":"+r.event.String)
	case r.class.Valid:
		parts = append(parts, "E="+r.class.String)
	default:
		parts = append(parts, "-")
	}
	switch {
	case r.context.Valid:
		parts = append(parts, fmt.Sprintf("c=%s/%d", r.context.String, id(r.cid)))
	case r.ckind.Valid:
		parts = append(parts, "C="+r.ckind.String)
	default:
		parts = append(parts, "-")
	}
	switch {
	case r.object.Valid:
		parts = append(parts, fmt.Sprintf("o=%s/%d", r.object.String, id(r.oid)))
	case r.okind.Valid:
		parts = append(parts, "O="+r.okind.String)
	default:
		parts = append(parts, "-")
	}
	return strings.Join(parts, " ")
}

// leafKey is the key of the node at depth d above a leaf in an order.
func leafKey(l ecoLeaf, order string, d int) string {
	parts := []string{fmt.Sprint(l.run, "/", d)}
	for _, dim := range []byte("eco") {
		p := strings.IndexByte(order, dim) + 1
		group, _, _ := l.dim(dim)
		switch {
		case d > p && dim == 'e':
			parts = append(parts, "e="+l.class+":"+l.event)
		case d > p && dim == 'c':
			parts = append(parts, fmt.Sprintf("c=%s/%d", l.context, l.cid))
		case d > p:
			parts = append(parts, fmt.Sprintf("o=%s/%d", l.object, l.oid))
		case p == 1 && d >= 1:
			parts = append(parts, strings.ToUpper(string(dim))+"="+group)
		default:
			parts = append(parts, "-")
		}
	}
	return strings.Join(parts, " ")
}

func loadTree(t *testing.T, db *sql.DB, order, sortBy string) []treeRow {
	t.Helper()
	rows, err := db.Query(fmt.Sprintf(`SELECT run_id, pos, depth, level, label, count, eco_id, path,
		class, event, context_kind, context, object_kind, object, context_id, object_id
		FROM eco_tree('%s', sort_by := '%s')`, order, sortBy))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []treeRow
	for rows.Next() {
		var r treeRow
		if err := rows.Scan(&r.run, &r.pos, &r.depth, &r.level, &r.label, &r.count, &r.eco, &r.path,
			&r.class, &r.event, &r.ckind, &r.context, &r.okind, &r.object, &r.cid, &r.oid); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

var levelNames = map[byte][2]string{'e': {"class", "event"}, 'c': {"context.kind", "context"}, 'o': {"object.kind", "object"}}

// TestEcoTreeRecomputed checks every node of every order, both sorts, on
// runs of four formats (BTF, QNX, TLV, Baget) against counts recomputed
// from the events table in Go, and checks the tree's shape: rows in
// depth-first order, each path its parent's plus its label, each level
// what the order puts there, parents the sum of their children, siblings
// in the requested order, leaves naming their triple.
func TestEcoTreeRecomputed(t *testing.T) {
	db := ingestSamples(t)
	leaves := loadLeaves(t, db.SQL())
	for _, order := range ecoOrders {
		want := map[string]int64{}
		ecoOf := map[string]int64{}
		for _, l := range leaves {
			for d := 0; d <= 4; d++ {
				want[leafKey(l, order, d)] += l.count
			}
			ecoOf[leafKey(l, order, 4)] = l.eco
		}
		for _, sortBy := range []string{"name", "count"} {
			rows := loadTree(t, db.SQL(), order, sortBy)
			got := map[string]int64{}
			for _, r := range rows {
				k := r.key()
				if _, dup := got[k]; dup {
					t.Errorf("%s/%s: node %s twice", order, sortBy, k)
				}
				got[k] = r.count
				if r.depth == 4 && (!r.eco.Valid || r.eco.Int64 != ecoOf[k]) {
					t.Errorf("%s/%s: leaf %s has eco_id %v, want %d", order, sortBy, k, r.eco, ecoOf[k])
				}
			}
			if len(got) != len(want) {
				t.Errorf("%s/%s: %d nodes, want %d", order, sortBy, len(got), len(want))
			}
			for k, n := range want {
				if got[k] != n {
					t.Errorf("%s/%s: node %s counts %d, want %d", order, sortBy, k, got[k], n)
				}
			}
			checkShape(t, order, sortBy, rows)
		}
	}
}

func checkShape(t *testing.T, order, sortBy string, rows []treeRow) {
	t.Helper()
	type frame struct {
		row      treeRow
		children int64 // sum of the children's counts
		last     *treeRow
	}
	var stack []*frame
	closeTo := func(depth int64) {
		for int64(len(stack)) > depth {
			f := stack[len(stack)-1]
			if f.row.depth < 4 && f.children != f.row.count {
				t.Errorf("%s/%s: %v counts %d, its children %d", order, sortBy, f.row.path, f.row.count, f.children)
			}
			stack = stack[:len(stack)-1]
		}
	}
	var run, pos int64
	for _, r := range rows {
		if r.run != run {
			closeTo(0)
			run, pos = r.run, 0
		}
		pos++
		if r.pos != pos {
			t.Fatalf("%s/%s: run %d row %d has pos %d", order, sortBy, run, pos, r.pos)
		}
		closeTo(r.depth)
		if int64(len(stack)) != r.depth {
			t.Fatalf("%s/%s: run %d pos %d at depth %d has no parent", order, sortBy, run, pos, r.depth)
		}
		// The level and label the order puts at this depth.
		var wantLevel string
		switch r.depth {
		case 0:
			wantLevel = "run"
		case 1:
			wantLevel = levelNames[order[0]][0]
		default:
			wantLevel = levelNames[order[r.depth-2]][1]
		}
		if r.level != wantLevel {
			t.Errorf("%s/%s: %v is level %s, want %s", order, sortBy, r.path, r.level, wantLevel)
		}
		if r.depth > 0 {
			parent := stack[len(stack)-1]
			if fmt.Sprint(r.path) != fmt.Sprint(append(append([]any{}, parent.row.path...), r.label)) {
				t.Errorf("%s/%s: path %v under %v", order, sortBy, r.path, parent.row.path)
			}
			parent.children += r.count
			if prev := parent.last; prev != nil && !siblingsInOrder(*prev, r, sortBy) {
				t.Errorf("%s/%s: %v (%d) after %v (%d)", order, sortBy, r.path, r.count, prev.path, prev.count)
			}
			rr := r
			parent.last = &rr
		} else if len(r.path) != 0 {
			t.Errorf("root with path %v", r.path)
		}
		stack = append(stack, &frame{row: r})
	}
	closeTo(0)
}

func siblingsInOrder(a, b treeRow, sortBy string) bool {
	id := func(r treeRow) int64 {
		switch r.level {
		case "context":
			return r.cid.Int64
		case "object":
			return r.oid.Int64
		}
		return -1
	}
	if sortBy == "count" && a.count != b.count {
		return a.count > b.count
	}
	if a.label != b.label {
		return a.label < b.label
	}
	return id(a) < id(b)
}

func TestEcoTreeBadArguments(t *testing.T) {
	db := dbtest.Open(t)
	for _, tc := range []struct{ q, want string }{
		{"SELECT * FROM eco_tree('ecx')", `eco_tree: order "ecx" is not one of eco, eoc, ceo, coe, oec, oce`},
		{"SELECT * FROM eco_tree(NULL)", `eco_tree: order NULL is not one of eco, eoc, ceo, coe, oec, oce`},
		{"SELECT * FROM eco_tree('eco', sort_by := 'size')", `eco_tree: sort_by "size" is not one of name, count`},
	} {
		_, err := db.SQL().ExecContext(context.Background(), tc.q)
		if err == nil || !strings.Contains(err.Error(), "Invalid Input Error: "+tc.want) {
			t.Errorf("%s: error %v, want %q", tc.q, err, tc.want)
		}
	}
}

// sqlList is a list literal of marks.
func sqlList(marks []string) string {
	q := make([]string, len(marks))
	for i, m := range marks {
		q[i] = "'" + strings.ReplaceAll(m, "'", "''") + "'"
	}
	return "[" + strings.Join(q, ", ") + "]::VARCHAR[]"
}

// TestEcoSelectionOverride: the precedence rules on the seed example,
// whose six events are triples 1..6 (1 STI:trigger Sim>S_1MS, 2 T:activate
// S_1MS>T_1MS_0, 3 T:start Core_0>T_1MS_0, 4 R:start T_1MS_1>Runnable_0,
// 5 R:terminate T_1MS_1>Runnable_0, 6 T:terminate Core_1>T_1MS_0).
func TestEcoSelectionOverride(t *testing.T) {
	db := dbtest.Open(t)
	dbtest.Ingest(t, db, seedBTF, ingest.Options{})
	for _, tc := range []struct {
		name               string
		includes, excludes []string
		want               string // selected eco_ids, then each triple's deciding mark
	}{
		{"the issue's example: exclude wins a tie across dimensions",
			[]string{"event=T:start"}, []string{"context=Core_1"}, "3 | -,-,+event=T:start,-,-,-context=Core_1"},
		{"only excludes: everything else",
			nil, []string{"context=Core_1"}, "1 2 3 4 5 | -,-,-,-,-,-context=Core_1"},
		{"no marks: everything", nil, nil, "1 2 3 4 5 6 | -,-,-,-,-,-"},
		{"an event overrides its class",
			[]string{"event=T:start"}, []string{"class=T"}, "3 | -,-class=T,+event=T:start,-,-,-class=T"},
		{"all sets the default of unmarked triples",
			[]string{"all", "event=T:start"}, []string{"class=T"}, "1 3 4 5 | +all,-class=T,+event=T:start,+all,+all,-class=T"},
		{"a pair overrides an event, which overrides a class",
			[]string{"class=T", "event=T:terminate&context=Core_1"}, []string{"event=T:terminate"},
			"2 3 6 | -,+class=T,+class=T,-,-,+event=T:terminate&context=Core_1"},
		{"an exact name overrides a pattern",
			[]string{"object=T_1MS_0"}, []string{"object=T_1MS_*"}, "2 3 6 | -,+object=T_1MS_0,+object=T_1MS_0,-,-,+object=T_1MS_0"},
		{"a triple overrides a kind",
			[]string{"object.kind=task"}, []string{"eco=3"}, "2 6 | -,+object.kind=task,-eco=3,-,-,+object.kind=task"},
		{"a context and an object tie: exclude wins",
			[]string{"context=Core_0"}, []string{"object=T_1MS_0"}, " | -,-object=T_1MS_0,-object=T_1MS_0,-,-,-object=T_1MS_0"},
		{"an event name alone matches in any class",
			[]string{"event=start"}, nil, "3 4 | -,-,+event=start,+event=start,-,-"},
		{"an event with its class beats the name alone",
			[]string{"event=R:start"}, []string{"event=start"}, "4 | -,-,-event=start,+event=R:start,-,-"},
		{"two kinds fix two groups; one context outranks them",
			[]string{"context.kind=cpu&object.kind=task"}, []string{"context=Core_1"},
			"3 | -,-,+context.kind=cpu&object.kind=task,-,-,-context=Core_1"},
		{"a class, a pattern of events, and the (none) that matches nothing here",
			[]string{"class=R", "event=T:*ate"}, []string{"context=(none)"},
			"2 4 5 6 | -,+event=T:*ate,-,+class=R,+class=R,+event=T:*ate"},
		{"blanks around terms are ignored",
			[]string{" event = T:start & context = Core_0 "}, nil, "3 | -,-,+ event = T:start & context = Core_0 ,-,-,-"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := dbtest.Query(t, db.SQL(), fmt.Sprintf(`SELECT
				coalesce(string_agg(eco_id::VARCHAR, ' ' ORDER BY eco_id) FILTER (WHERE selected), ''),
				string_agg(coalesce(decided_by, '-'), ',' ORDER BY eco_id)
				FROM eco_selection(%s, %s)`, sqlList(tc.includes), sqlList(tc.excludes)))
			if got != tc.want+"\n" {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
			// selected_events lists exactly the events of those triples.
			ev := dbtest.Query(t, db.SQL(), fmt.Sprintf(`SELECT coalesce(string_agg(eco_id::VARCHAR, ' ' ORDER BY seq), '')
				FROM selected_events(%s, %s)`, sqlList(tc.includes), sqlList(tc.excludes)))
			if want := strings.SplitN(tc.want, " |", 2)[0]; ev != want+"\n" {
				t.Errorf("selected_events: %q, want %q", ev, want)
			}
		})
	}
}

// TestEcoSelectionNoneContext: on the TLV sample the events before any
// context is known have the context (none), which a mark names.
func TestEcoSelectionNoneContext(t *testing.T) {
	db := dbtest.Open(t)
	dbtest.Ingest(t, db, tlvSampleD+"tiny.log", ingest.Options{Format: "tlv", Params: map[string]string{
		"resources": tlvSampleD + "tiny.res", "rules": tlvSampleD + "tiny.cnv", "headers": tlvSampleD + "tiny.resh"}})
	got := dbtest.Query(t, db.SQL(), `SELECT eco_id, class, event, object FROM eco_selection(['context=(none)'], []) WHERE selected`)
	want := dbtest.Query(t, db.SQL(), `SELECT t.eco_id, t.class, t.event, o.name FROM eco_triples t
		JOIN objects o ON o.run_id = t.run_id AND o.object_id = t.object_id WHERE t.context_id IS NULL ORDER BY t.eco_id`)
	if got != want || strings.Count(got, "\n") != 2 {
		t.Errorf("context=(none) selects\n%s\nwant\n%s", got, want)
	}
	// The TLV event "state=" holds '=': the mark splits at the first one.
	got = dbtest.Query(t, db.SQL(), `SELECT sum(count) FROM eco_selection(['event=Thread:state='], []) WHERE selected`)
	want = dbtest.Query(t, db.SQL(), `SELECT count(*) FROM events WHERE class = 'Thread' AND event = 'state='`)
	if got != want || want == "0\n" {
		t.Errorf("event=Thread:state= selects %s events, want %s", got, want)
	}
}

func TestEcoMarksErrors(t *testing.T) {
	db := dbtest.Open(t)
	dbtest.Ingest(t, db, seedBTF, ingest.Options{})
	for _, tc := range []struct {
		includes, excludes []string
		want               string
	}{
		{[]string{"bogus"}, nil, `mark "bogus": expected all, class=, event=, context.kind=, context=, object.kind=, object= or eco=, found "bogus"`},
		{nil, []string{"task=T_1"}, `mark "task=T_1": expected all, class=, event=, context.kind=, context=, object.kind=, object= or eco=, found "task=T_1"`},
		{[]string{""}, nil, `mark "": empty`},
		{[]string{"event=T:start&"}, nil, `mark "event=T:start&": empty term`},
		{[]string{"all=1"}, nil, `mark "all=1": all takes no value, found "all=1"`},
		{[]string{"object="}, nil, `mark "object=": "object=" has no value`},
		{[]string{"eco=three"}, nil, `mark "eco=three": eco= takes an eco_id, found "three"`},
		{[]string{"all&class=T"}, nil, `mark "all&class=T": all goes alone`},
		{[]string{"class=T&event=T:start"}, nil, `mark "class=T&event=T:start": two terms on one dimension (event: class, event; context: context.kind, context; object: object.kind, object; eco: all three)`},
		{nil, []string{"eco=1&object=A"}, `mark "eco=1&object=A": two terms on one dimension`},
		{nil, []string{"context=A&context.kind=cpu"}, `mark "context=A&context.kind=cpu": two terms on one dimension`},
	} {
		for _, q := range []string{"SELECT * FROM eco_marks(%s, %s)", "SELECT * FROM eco_selection(%s, %s)", "SELECT * FROM selected_events(%s, %s)"} {
			q = fmt.Sprintf(q, sqlList(tc.includes), sqlList(tc.excludes))
			rows, err := db.SQL().Query(q)
			if err == nil {
				for rows.Next() {
				}
				err = rows.Err()
				rows.Close()
			}
			if err == nil || !strings.Contains(err.Error(), "Invalid Input Error: "+tc.want) {
				t.Errorf("%s: error %v, want %q", q, err, tc.want)
			}
		}
	}
}

// refMark is a mark as the reference resolver below reads it.
type refMark struct {
	no    int
	incl  bool
	text  string
	terms [][2]string // level, value
	spec  int
}

// parseRefMark reads a mark of the grammar eco_select.sql documents and
// ranks it: 16 per dimension fixed to a node (eco: 3), 4 per dimension
// fixed to a group, 1 per exact term (eco: 3; an event without its class
// is not exact).
func parseRefMark(no int, incl bool, text string) refMark {
	m := refMark{no: no, incl: incl, text: text}
	for _, term := range strings.Split(text, "&") {
		level, value, _ := strings.Cut(term, "=")
		level, value = strings.TrimSpace(level), strings.TrimSpace(value)
		m.terms = append(m.terms, [2]string{level, value})
		exact := !strings.ContainsAny(value, "*?[") && (level != "event" || strings.Contains(value, ":"))
		switch level {
		case "eco":
			m.spec += 16*3 + 3
		case "class", "context.kind", "object.kind":
			m.spec += 4
		case "event", "context", "object":
			m.spec += 16
		}
		if exact && level != "all" && level != "eco" {
			m.spec++
		}
	}
	return m
}

// globMatch matches * (any run of characters, '/' included, as DuckDB's
// GLOB does) and ? (one character).
func globMatch(pattern, s string) bool {
	if pattern == "" {
		return s == ""
	}
	switch pattern[0] {
	case '*':
		for i := 0; i <= len(s); i++ {
			if globMatch(pattern[1:], s[i:]) {
				return true
			}
		}
		return false
	case '?':
		return s != "" && globMatch(pattern[1:], s[1:])
	default:
		return s != "" && s[0] == pattern[0] && globMatch(pattern[1:], s[1:])
	}
}

func (m refMark) matches(l ecoLeaf) bool {
	for _, tv := range m.terms {
		v := tv[1]
		ok := false
		switch tv[0] {
		case "all":
			ok = true
		case "eco":
			ok = strconv.FormatInt(l.eco, 10) == v
		case "class":
			ok = globMatch(v, l.class)
		case "event":
			ok = globMatch(v, l.class+":"+l.event) || globMatch(v, l.event)
		case "context.kind":
			ok = globMatch(v, l.ckind)
		case "context":
			ok = globMatch(v, l.context)
		case "object.kind":
			ok = globMatch(v, l.okind)
		case "object":
			ok = globMatch(v, l.object)
		}
		if !ok {
			return false
		}
	}
	return true
}

// refSelect decides a triple: the most specific matching mark, exclude
// before include on a tie, then the first given; unmatched triples are
// selected when there is no include mark.
func refSelect(marks []refMark, l ecoLeaf) (bool, string) {
	var best *refMark
	anyInclude := false
	for i := range marks {
		m := &marks[i]
		anyInclude = anyInclude || m.incl
		if !m.matches(l) {
			continue
		}
		if best == nil || m.spec > best.spec || m.spec == best.spec && (!m.incl && best.incl || m.incl == best.incl && m.no < best.no) {
			best = m
		}
	}
	if best == nil {
		return !anyInclude, "-"
	}
	if best.incl {
		return true, "+" + best.text
	}
	return false, "-" + best.text
}

// TestEcoSelectionReference: random sets of marks built from the names of
// the BTF, QNX, TLV and Baget runs (exact and patterns, single terms,
// pairs and kinds, all, eco ids) select the same triples, decided by the
// same mark, in SQL as in the reference resolver above, and
// selected_events lists as many events as the selected triples count.
func TestEcoSelectionReference(t *testing.T) {
	db := ingestSamples(t)
	leaves := loadLeaves(t, db.SQL())
	rng := rand.New(rand.NewSource(1))
	term := func(l ecoLeaf) (string, byte) {
		pattern := func(s string) string {
			if s == "" {
				return s
			}
			switch rng.Intn(4) {
			case 0:
				return s[:rng.Intn(len(s)+1)] + "*"
			case 1:
				i := rng.Intn(len(s))
				return s[:i] + "?" + s[i+1:]
			}
			return s
		}
		switch rng.Intn(7) {
		case 0:
			return "class=" + pattern(l.class), 'e'
		case 1:
			if rng.Intn(3) == 0 {
				return "event=" + pattern(l.event), 'e'
			}
			return "event=" + pattern(l.class+":"+l.event), 'e'
		case 2:
			return "context.kind=" + pattern(l.ckind), 'c'
		case 3:
			return "context=" + pattern(l.context), 'c'
		case 4:
			return "object.kind=" + pattern(l.okind), 'o'
		case 5:
			return "object=" + pattern(l.object), 'o'
		}
		return "eco=" + strconv.FormatInt(l.eco, 10), 'x'
	}
	mark := func() string {
		if rng.Intn(15) == 0 {
			return "all"
		}
		l := leaves[rng.Intn(len(leaves))]
		first, d1 := term(l)
		if d1 == 'x' || rng.Intn(3) > 0 {
			return first
		}
		second, d2 := term(l)
		if d2 == d1 || d2 == 'x' {
			return first
		}
		return first + "&" + second
	}
	for iter := 0; iter < 60; iter++ {
		var includes, excludes []string
		for n := rng.Intn(4); n > 0; n-- {
			includes = append(includes, mark())
		}
		for n := rng.Intn(4); n > 0; n-- {
			excludes = append(excludes, mark())
		}
		var marks []refMark
		for _, m := range includes {
			marks = append(marks, parseRefMark(len(marks)+1, true, m))
		}
		for _, m := range excludes {
			marks = append(marks, parseRefMark(len(marks)+1, false, m))
		}
		want := map[string]string{}
		var wantEvents int64
		for _, l := range leaves {
			sel, by := refSelect(marks, l)
			want[fmt.Sprintf("%d/%d", l.run, l.eco)] = fmt.Sprintf("%v %s", sel, by)
			if sel {
				wantEvents += l.count
			}
		}
		rows, err := db.SQL().Query(fmt.Sprintf(`SELECT run_id, eco_id, selected, coalesce(decided_by, '-') FROM eco_selection(%s, %s)`,
			sqlList(includes), sqlList(excludes)))
		if err != nil {
			t.Fatalf("includes %q excludes %q: %v", includes, excludes, err)
		}
		got := map[string]string{}
		for rows.Next() {
			var run, eco int64
			var sel bool
			var by string
			if err := rows.Scan(&run, &eco, &sel, &by); err != nil {
				t.Fatal(err)
			}
			got[fmt.Sprintf("%d/%d", run, eco)] = fmt.Sprintf("%v %s", sel, by)
		}
		rows.Close()
		bad := 0
		for k, w := range want {
			if got[k] != w && bad < 5 {
				t.Errorf("includes %q excludes %q: triple %s: %q, want %q", includes, excludes, k, got[k], w)
				bad++
			}
		}
		if len(got) != len(want) {
			t.Errorf("%d triples, want %d", len(got), len(want))
		}
		var n int64
		if err := db.SQL().QueryRow(fmt.Sprintf("SELECT count(*) FROM selected_events(%s, %s)", sqlList(includes), sqlList(excludes))).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != wantEvents {
			t.Errorf("includes %q excludes %q: %d events, want %d", includes, excludes, n, wantEvents)
		}
	}
}

// TestEcoMarksSpecificity: the ranks eco_marks gives, in the order the
// precedence rule states: all < group < pattern node < node < group+node <
// pair < triple.
func TestEcoMarksSpecificity(t *testing.T) {
	db := dbtest.Open(t)
	got := dbtest.Query(t, db.SQL(), `SELECT DISTINCT mark, specificity FROM eco_marks(
		['all', 'class=T*', 'class=T', 'object=T_*', 'event=start', 'object=T_1', 'object=T_1&context.kind=cpu',
		 'event=T:start&context=Core_0', 'event=T:start&context=Core_0&object=T_1', 'eco=3'], []) ORDER BY specificity, mark`)
	want := `all | 0
class=T* | 4
class=T | 5
event=start | 16
object=T_* | 16
object=T_1 | 17
object=T_1&context.kind=cpu | 22
event=T:start&context=Core_0 | 34
eco=3 | 51
event=T:start&context=Core_0&object=T_1 | 51
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestEcoTreeExternalBTF: on the real BTF files beside the repository,
// each line is one event whose triple is (target type:action, source,
// target); the leaves of the eco tree count what plain splitting of the
// lines counts, and the contexts of ceo what the sources count.
func TestEcoTreeExternalBTF(t *testing.T) {
	files, _ := filepath.Glob("../../shared/testdata-external/btf/*.btf")
	if len(files) == 0 {
		t.Skip("no ../shared/testdata-external/btf beside the repository")
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			leaves, sources := map[string]int{}, map[string]int{}
			sc := bufio.NewScanner(f)
			sc.Buffer(make([]byte, 1<<20), 1<<20)
			for sc.Scan() {
				line := strings.TrimSpace(sc.Text())
				if line == "" || strings.HasPrefix(line, "#") {
					continue
				}
				p := strings.SplitN(line, ",", 8)
				for i := range p {
					p[i] = strings.TrimSpace(p[i])
				}
				leaves[fmt.Sprintf("%s:%s | %s | %s", p[3], p[6], p[1], p[4])]++
				sources[p[1]]++
			}
			db := dbtest.Open(t)
			dbtest.Ingest(t, db, path, ingest.Options{Format: "btf"})
			compareCounts(t, "triples", dbtest.Query(t, db.SQL(),
				"SELECT path[2] || ' | ' || path[3] || ' | ' || label, count FROM eco_tree('eco') WHERE depth = 4"), leaves)
			compareCounts(t, "contexts", dbtest.Query(t, db.SQL(),
				"SELECT label, count FROM eco_tree('ceo') WHERE depth = 2"), sources)
		})
	}
}

// FuzzEcoMarks: any pair of marks is either rejected with an error that
// quotes a mark, or accepted by eco_marks and eco_selection alike; an
// accepted mark of plain characters selects on the seed example what the
// reference resolver selects. The seed corpus replays as a normal test.
func FuzzEcoMarks(f *testing.F) {
	for _, seed := range [][2]string{
		{"event=T:start", "context=Core_1"}, {"all", "class=T"}, {"eco=3", "object=T_1MS_*"},
		{"event=T:start&context=Core_0&object=T_1MS_0", "context.kind=cpu&object.kind=task"},
		{"bogus", ""}, {"all=1", "eco=x"}, {"class=T&event=T:start", "&"}, {" event = start ", "context=(none)"},
		{"object=[TR]*", "event=*:?tart"}, {"context=it's", "object=\"q\""},
	} {
		f.Add(seed[0], seed[1])
	}
	db := dbtest.Open(f)
	dbtest.Ingest(f, db, seedBTF, ingest.Options{})
	leaves := loadLeaves(f, db.SQL())
	plain := regexp.MustCompile(`^[A-Za-z0-9_:=&.*() ]*$`)
	f.Fuzz(func(t *testing.T, include, exclude string) {
		if !utf8.ValidString(include) || !utf8.ValidString(exclude) || strings.ContainsRune(include+exclude, 0) {
			t.Skip("DuckDB strings are valid UTF-8 without NUL")
		}
		q := fmt.Sprintf("SELECT run_id, eco_id, selected, coalesce(decided_by, '-') FROM eco_selection(%s, %s)",
			sqlList([]string{include}), sqlList([]string{exclude}))
		got, selErr := queryAll(db.SQL(), q)
		_, marksErr := queryAll(db.SQL(), fmt.Sprintf("SELECT * FROM eco_marks(%s, %s)", sqlList([]string{include}), sqlList([]string{exclude})))
		if (selErr == nil) != (marksErr == nil) {
			t.Fatalf("eco_selection: %v; eco_marks: %v", selErr, marksErr)
		}
		if selErr != nil {
			if !strings.Contains(selErr.Error(), "Invalid Input Error: mark ") {
				t.Fatalf("%q, %q: %v", include, exclude, selErr)
			}
			return
		}
		if !plain.MatchString(include) || !plain.MatchString(exclude) {
			return
		}
		marks := []refMark{parseRefMark(1, true, include), parseRefMark(2, false, exclude)}
		var want []string
		for _, l := range leaves {
			sel, by := refSelect(marks, l)
			want = append(want, fmt.Sprintf("%d | %d | %v | %s", l.run, l.eco, sel, by))
		}
		sort.Strings(want)
		sort.Strings(got)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("%q, %q:\n%s\nwant\n%s", include, exclude, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
}

// queryAll returns the rows of q as lines of values joined by " | ".
func queryAll(db *sql.DB, q string) ([]string, error) {
	rows, err := db.Query(q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var out []string
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		parts := make([]string, len(vals))
		for i, v := range vals {
			parts[i] = fmt.Sprint(v)
		}
		out = append(out, strings.Join(parts, " | "))
	}
	return out, rows.Err()
}
