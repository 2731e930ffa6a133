package queries_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/queries"
)

func TestSelectRuns(t *testing.T) {
	ctx := context.Background()
	db := dbtest.Open(t)
	if err := queries.Install(ctx, db.SQL()); err != nil {
		t.Fatal(err)
	}
	path := writeTemp(t, "tiny.btf", []byte("#version 2.1.4\n#timeScale ns\n0, Sim, 0, STI, S_1MS, 0, trigger\n"))
	for _, r := range []struct {
		name string
		tags [][2]string
	}{
		{"v1", [][2]string{{"build", "100"}}},
		{"v2", [][2]string{{"build", "101"}}},
		{"v2", [][2]string{{"build", "102"}, {"branch", "x"}}},
		{"other", nil},
	} {
		dbtest.Ingest(t, db, path, ingest.Options{Name: r.name, Tags: r.tags, Force: true})
	}
	// Tags edited by hand or by another tool may hold numbers.
	if _, err := db.SQL().Exec(`UPDATE runs SET tags = '{"build": 7, "ok": true}' WHERE run_id = 4`); err != nil {
		t.Fatal(err)
	}
	ids := func(sel string) string {
		runs, err := queries.SelectRuns(ctx, db.SQL(), sel)
		if err != nil {
			return "error: " + err.Error()
		}
		var s []string
		for _, r := range runs {
			s = append(s, fmt.Sprint(r.ID))
		}
		return strings.Join(s, ",")
	}
	for _, c := range []struct{ sel, want string }{
		{"", "1,2,3,4"},
		{"2", "2"},
		{"2-3", "2,3"},
		{"v2", "2,3"},
		{"v1, 4", "1,4"},
		{"build=101,branch=x", "2,3"},
		{"4,1", "1,4"},
		{"build=7,ok=true", "4"},
		{"v9", `error: runs selector "v9": "v9" selects no run (see 'SELECT run_id, name, tags FROM runs')`},
		{"3-2", `error: runs selector "3-2": range "3-2": expected FIRST-LAST with FIRST <= LAST`},
		{"1,,2", `error: runs selector "1,,2": item 2 is empty`},
		{"1-2147483648", `error: runs selector "1-2147483648": range "1-2147483648": expected run_ids of at most 2147483647, found 2147483648`},
		{"99999999999", `error: runs selector "99999999999": run_id 99999999999: expected a run_id of at most 2147483647, found 99999999999`},
		{"1-2147483647", "1,2,3,4"},
	} {
		if got := ids(c.sel); got != c.want {
			t.Errorf("SelectRuns(%q) = %s, want %s", c.sel, got, c.want)
		}
	}
}
