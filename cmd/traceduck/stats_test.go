package main

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// compareGolden compares got with testdata/NAME (go test -update rewrites it).
func compareGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s:\ngot:\n%s\nwant:\n%s", name, got, want)
	}
}

// TestStatsSeedExample prints the trees of the BTF chapter's example: the
// table tree is written out here by hand from the six lines of the
// listing; the other outputs are golden files.
func TestStatsSeedExample(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "t.duckdb")
	mustRun(t, dir, nil, "ingest", "--db", db, seedSample)
	got := mustRun(t, dir, nil, "stats", "--db", db, "--order", "coe")
	want := `node                 level         count      %  eco_id
-------------------  ------------  -----  -----  ------
seed-example         run               6  100.0
  cpu                context.kind      2   33.3
    Core_0           context           1   16.7
      T_1MS_0        object            1   16.7
        T:start      event             1   16.7       3
    Core_1           context           1   16.7
      T_1MS_0        object            1   16.7
        T:terminate  event             1   16.7       6
  stimulus           context.kind      1   16.7
    S_1MS            context           1   16.7
      T_1MS_0        object            1   16.7
        T:activate   event             1   16.7       2
  system             context.kind      1   16.7
    Sim              context           1   16.7
      S_1MS          object            1   16.7
        STI:trigger  event             1   16.7       1
  task               context.kind      2   33.3
    T_1MS_1          context           2   33.3
      Runnable_0     object            2   33.3
        R:start      event             1   16.7       4
        R:terminate  event             1   16.7       5
`
	if got != want {
		t.Errorf("stats --order coe:\n%s\nwant\n%s", got, want)
	}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"stats-seed-eco.table.golden", nil},
		{"stats-seed-oec-count.markdown.golden", []string{"--order", "oec", "--sort", "count", "--output", "markdown"}},
		{"stats-seed-eoc.csv.golden", []string{"--order", "eoc", "--output", "csv"}},
		{"stats-seed-ceo-depth2.json.golden", []string{"--order", "ceo", "--depth", "2", "--output", "json"}},
	} {
		compareGolden(t, tc.name, mustRun(t, dir, nil, append([]string{"stats", "--db", db, "--run", "1"}, tc.args...)...))
	}
}

// TestStatsEveryOrder: on the BTF and QNX samples, every order's csv is a
// tree whose roots count the run's events and whose every level sums to
// them; --depth cuts it, --run keeps one run.
func TestStatsEveryOrder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "t.duckdb")
	mustRun(t, dir, nil, "ingest", "--db", db, samplePath(t, "btf/rtos-2core.btf"), samplePath(t, "qnx/neutrino-2cpu.txt"))
	events := map[string]int64{"1": 4000, "2": 3001}
	for _, order := range []string{"eco", "eoc", "ceo", "coe", "oec", "oce"} {
		for _, depth := range []int{4, 2} {
			out := mustRun(t, dir, nil, "stats", "--db", db, "--order", order, "--depth", strconv.Itoa(depth), "-o", "csv")
			recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(recs[0], ",") != "run_id,pos,depth,level,label,count,eco_id,path,class,event,context_kind,context,object_kind,object,context_id,object_id" {
				t.Fatalf("header %v", recs[0])
			}
			sums := map[string]int64{}
			for _, r := range recs[1:] {
				d, _ := strconv.Atoi(r[2])
				n, _ := strconv.ParseInt(r[5], 10, 64)
				if d > depth {
					t.Errorf("%s --depth %d: a row at depth %d", order, depth, d)
				}
				sums[r[0]+"/"+r[2]] += n
			}
			for run, n := range events {
				for d := 0; d <= depth; d++ {
					if got := sums[run+"/"+strconv.Itoa(d)]; got != n {
						t.Errorf("%s: run %s depth %d sums to %d, want %d", order, run, d, got, n)
					}
				}
			}
		}
	}
	out := mustRun(t, dir, nil, "stats", "--db", db, "--run", "2", "--depth", "0", "-o", "json")
	var rows []map[string]any
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0]["label"] != "neutrino-2cpu" || rows[0]["count"] != 3001.0 {
		t.Errorf("--run 2 --depth 0: %v", rows)
	}
}

func TestStatsErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "t.duckdb")
	mustRun(t, dir, nil, "ingest", "--db", db, seedSample)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--depth", "5"}, 2, "--depth 5: want 0 (the runs only) to 4 (the triples)"},
		{[]string{"--depth", "-1"}, 2, "--depth -1: want 0 (the runs only) to 4 (the triples)"},
		{[]string{"--order", "ecx"}, 2, `"ecx" is not one of eco, eoc, ceo, coe, oec, oce`},
		{[]string{"--sort", "size"}, 2, `"size" is not one of name, count`},
		{[]string{"extra"}, 2, `unknown command "extra"`},
		{[]string{"--run", "7"}, 2, `--run 7: no such run (the runs: `},
	} {
		r := td(t, dir, append([]string{"stats", "--db", db}, tc.args...)...)
		expectExit(t, r, tc.code, tc.want)
	}
	r := td(t, dir, "stats", "--db", filepath.Join(dir, "none.duckdb"))
	expectExit(t, r, 1, "none.duckdb: no such database")
	for _, cmd := range []string{"stats", "events"} {
		out := mustRun(t, dir, nil, cmd, "--help")
		if !strings.Contains(out, "\nExamples:\n  traceduck ") {
			t.Errorf("traceduck %s --help has no Examples section", cmd)
		}
	}
}
