package schema_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/schema"
)

// TestEcoTreeNodesByHand: the nodes the writer makes of triples whose
// names eco_tree must tell apart or merge as the SQL does: a missing
// class, event, context or object and the names '(none)' (merged: the
// same name), two objects of one name (apart: by object_id, NULL after
// every id), an unregistered context id, names that are not UTF-8 (the
// repaired names sort), counts that tie; in every order and sort, whole
// and in windows, equal to eco_tree_reference.
func TestEcoTreeNodesByHand(t *testing.T) {
	db := dbtest.Open(t)
	id, err := db.Ingest(context.Background(), schema.RunInfo{Name: t.Name(), Format: "btf"}, schema.IngestOptions{BatchRows: 5}, func(w *schema.RunWriter) error {
		s := func(n string) schema.Sym { return w.Sym(n) }
		core := w.Object("cpu", "Core_0")
		a1 := w.NewObject("task", "A")
		a2 := w.NewObject("task", "A")
		none := w.Object("(none)", "(none)")
		bad := w.Object("task", "B\xff\xfeC")
		b := w.Object("task", "B")
		kindless := w.NewObject("", "Z")
		ts := int64(0)
		ev := func(class, event schema.Sym, ctx, obj schema.ObjectID, n int) {
			for i := 0; i < n; i++ {
				ts += 10
				if _, err := w.Event(&schema.Event{TS: ts, CPU: 0, Class: class, Event: event, Context: ctx, Object: obj,
					SourceInstance: schema.NoInstance, TargetInstance: schema.NoInstance}); err != nil {
					t.Fatal(err)
				}
			}
		}
		ev(s("T"), s("start"), core, a1, 3)
		ev(s("T"), s("start"), core, a2, 3) // a tie with a1, told apart by id
		ev(s("T"), s("stop"), core, a2, 2)
		ev(schema.NoSym, s("start"), core, a1, 1) // class (none)
		ev(s("(none)"), s("start"), core, a1, 2)  // merged with it
		ev(s("T"), schema.NoSym, schema.NoObject, a1, 4)
		ev(s("T"), s("(none)"), none, schema.NoObject, 1) // a context named (none) with an id, an object missing
		ev(s("T"), s("(none)"), schema.NoObject, none, 1)
		ev(s("T"), s("start"), bad, b, 5)
		ev(s("T"), s("start"), b, bad, 5)
		ev(s("T"), s("x"), 0, kindless, 2) // context 0: no such object
		ev(s("R"), s("start"), kindless, a1, 2)
		ev(s("T"), s("start"), core, a1, 1)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var first, last int64
	if err := db.SQL().QueryRow("SELECT first_ts, last_ts FROM runs WHERE run_id = ?", id).Scan(&first, &last); err != nil {
		t.Fatal(err)
	}
	n := int64(0)
	for i, ord := range schema.EcoOrders {
		for _, sortBy := range []string{"name", "count"} {
			n += dbtest.CheckEco(t, db.SQL(), fmt.Sprintf("'%s', sort_by := '%s'", ord, sortBy))
		}
		// windows that cut the merged leaf and the ties
		sortBy := []string{"name", "count"}[i%2]
		dbtest.CheckEco(t, db.SQL(), fmt.Sprintf("'%s', sort_by := '%s', t_from := %d, t_to := %d", ord, sortBy, first+40, last-50))
		dbtest.CheckEco(t, db.SQL(), fmt.Sprintf("'%s', sort_by := '%s', t_to := %d", ord, sortBy, first+75))
	}
	if n == 0 {
		t.Fatal("eco_tree has no rows")
	}
	// the leaves of an order are the 12 triples, the two of class (none) one
	if got := dbtest.Query(t, db.SQL(), `SELECT ord_no, count(*) FILTER (WHERE depth = 4), count(*) FILTER (WHERE depth = 0), max(pos), max(last_pos)
		FROM eco_tree_nodes GROUP BY ord_no ORDER BY ord_no`); got == "" {
		t.Fatal("no eco_tree_nodes")
	} else {
		for _, line := range []string{"1 | 11 | 1 |", "6 | 11 | 1 |"} {
			if !strings.Contains("\n"+got, "\n"+line) {
				t.Errorf("eco_tree_nodes per order:\n%s\nwant a line starting %q", got, line)
			}
		}
	}
}
