package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/queries/dtracefmt"
	"github.com/traceduck/traceduck/queries/dtracefmt/toolkit"
)

// trimBlanks removes trailing blanks from every line.
func trimBlanks(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}

// rowsSQL is a query whose rows are (key, value, weight): one row per
// non-empty bucket of each block, the key NULL unless keyed, the value a
// member of the bucket (one below the lower bound for "< lower") and the
// weight its count.
func rowsSQL(t *testing.T, blocks []toolkit.Block, spec dtracefmt.Spec, keyed bool) string {
	t.Helper()
	var vals []string
	for _, b := range blocks {
		for _, r := range b.Rows {
			if r.Count == 0 {
				continue
			}
			v := toolkit.Bucket(r.Label)
			if v == dtracefmt.Underflow {
				v = spec.Lower - 1
			}
			key := "NULL"
			if keyed {
				key = "'" + strings.ReplaceAll(b.Key(), "'", "''") + "'"
			}
			vals = append(vals, fmt.Sprintf("(%s, %d, %d)", key, v, r.Count))
		}
	}
	return fmt.Sprintf("SELECT * FROM (VALUES %s) t(key, value, weight)", strings.Join(vals, ", "))
}

// TestHistAsDTracePrinted feeds the (value, count) rows of histograms
// DTrace printed in the DTraceToolkit examples through --sql as (value,
// weight) or (key, value, weight) rows and compares the output with
// DTrace's, byte for byte (after removing trailing blanks where the
// example lost them): unkeyed quantize and lquantize blocks with "< 0"
// and ">= 170" rows, and whole keyed outputs in DTrace's default key
// layout and order.
func TestHistAsDTracePrinted(t *testing.T) {
	t.Parallel()
	if toolkit.Dir() == "" {
		t.Skip("DTraceToolkit examples (../shared/testdata-external/dtrace) not available")
	}
	dir := t.TempDir()
	read := func(file string) []toolkit.Block {
		b, err := toolkit.Read(filepath.Join(toolkit.Dir(), "opendtrace__toolkit__Examples__"+file))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	session := func(file string, i int) toolkit.Session {
		s, err := toolkit.Sessions(filepath.Join(toolkit.Dir(), "opendtrace__toolkit__Examples__"+file))
		if err != nil {
			t.Fatal(err)
		}
		return s[i]
	}
	q := dtracefmt.Spec{Kind: dtracefmt.Quantize}
	priclass := dtracefmt.Spec{Kind: dtracefmt.LQuantize, Lower: 0, Upper: 170, Step: 10}
	cpuwalk := dtracefmt.Spec{Kind: dtracefmt.LQuantize, Lower: 0, Upper: 1024, Step: 1}
	for _, tc := range []struct {
		name   string
		blocks []toolkit.Block
		text   string // DTrace's output, dedented
		spec   dtracefmt.Spec
		flags  []string
		keyed  bool
	}{
		{"j_calldist", read("j_calldist_example.txt")[:1], "", q, []string{"--quantize"}, false},
		{"py_calldist 2 buckets", read("py_calldist_example.txt")[23:24], "", q, nil, false},
		{"priclass SYS, < and >=", read("priclass_example.txt")[1:2], "", priclass, []string{"--lquantize", "0,170,10"}, false},
		// cpuwalk's lquantize(cpu, 0, MAXCPU, 1): any upper bound above the
		// CPUs prints the same rows.
		{"cpuwalk 4 CPUs", read("cpuwalk_example.txt")[3:4], "", cpuwalk, []string{"--lquantize", "0,1024"}, false},
		{"lockbydist keyed", session("lockbydist_example.txt", 0).Blocks, session("lockbydist_example.txt", 0).Text, q, nil, true},
		{"priclass keyed", session("priclass_example.txt", 0).Blocks, session("priclass_example.txt", 0).Text, priclass, []string{"--lquantize", "0,170,10"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"hist", "--sql", rowsSQL(t, tc.blocks, tc.spec, tc.keyed)}, tc.flags...)
			got := mustRun(t, dir, nil, args...)
			want := "\n" + tc.blocks[0].Text + "\n" // unkeyed: the header's blank line, the block, a blank line
			if tc.keyed {
				want = tc.text + "\n"
			}
			if tc.blocks[0].Trimmed {
				got = trimBlanks(got)
			}
			if got != want {
				t.Errorf("traceduck %q:\n%s\nDTrace printed:\n%s", args[3:], got, want)
			}
		})
	}
}

// The hand-made traces of the histogram tests, shared with
// queries/hist_test.go, which says what they hold.
var (
	histBTF = filepath.Join("..", "..", "queries", "testdata", "hist-hand.btf")
	histQNX = filepath.Join("..", "..", "queries", "testdata", "hist-hand.txt")
)

// histDB ingests histBTF (run 1) and histQNX (run 2) into a database.
func histDB(t *testing.T, dir string) string {
	t.Helper()
	db := filepath.Join(dir, "h.duckdb")
	btf, err := filepath.Abs(histBTF)
	if err != nil {
		t.Fatal(err)
	}
	qnx, err := filepath.Abs(histQNX)
	if err != nil {
		t.Fatal(err)
	}
	mustRun(t, dir, nil, "ingest", "--db", db, btf)
	mustRun(t, dir, nil, "ingest", "--db", db, "--format", "qnx", qnx)
	return db
}

// lines turns a test's expected output into text: "|" ends a line, so
// that the trailing blanks are visible.
func lines(s string) string { return strings.ReplaceAll(strings.TrimPrefix(s, "\n"), "|\n", "\n") }

// TestHistStates histograms state durations of a BTF and a QNX trace
// whose intervals are known by hand. Bars: round(40 × count / total).
func TestHistStates(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := histDB(t, dir)
	for _, tc := range []struct {
		args []string
		want string
	}{
		// A: 30 → 16, 200 → 128, 500 → 256, 1600 → 1024 (total 4, 10 '@'
		// each, sum 1424); B: 200 → 128 (sum 128, printed first). Without
		// --run, the histograms of each run are headed by it.
		{[]string{"--state", "running", "--kind", "task"}, lines(`
run 1: hist-hand
|
  B                                                 |
           value  ------------- Distribution ------------- count    |
              64 |                                         0        |
             128 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@ 1        |
             256 |                                         0        |
|
  A                                                 |
           value  ------------- Distribution ------------- count    |
               8 |                                         0        |
              16 |@@@@@@@@@@                               1        |
              32 |                                         0        |
              64 |                                         0        |
             128 |@@@@@@@@@@                               1        |
             256 |@@@@@@@@@@                               1        |
             512 |                                         0        |
            1024 |@@@@@@@@@@                               1        |
            2048 |                                         0        |
|
`)},
		// --object A, --unit us: 0, 0, 0, 1 µs; lquantize steps of 1 µs.
		{[]string{"--state", "running", "--object", "A", "--run", "1", "--unit", "us", "--lquantize", "0,3"}, lines(`
  A                                                 |
           value  ------------- Distribution ------------- count    |
             < 0 |                                         0        |
               0 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@           3        |
               1 |@@@@@@@@@@                               1        |
               2 |                                         0        |
|
`)},
		// QNX: the thread ran 512, 128 and 256 ns.
		{[]string{"--state", "RUNNING", "--kind", "thread", "--buckets", "0,200ns,500ns,1us"}, lines(`
run 2: hist-hand
|
  app/1                                             |
           value  ------------- Distribution ------------- count    |
             < 0 |                                         0        |
               0 |@@@@@@@@@@@@@                            1        |
             200 |@@@@@@@@@@@@@                            1        |
             500 |@@@@@@@@@@@@@                            1        |
         >= 1000 |                                         0        |
|
`)},
	} {
		args := append([]string{"hist", "--db", db}, tc.args...)
		if got := mustRun(t, dir, nil, args...); got != tc.want {
			t.Errorf("traceduck %q:\ngot:\n%s\nwant:\n%s", args, got, tc.want)
		}
	}
}

// TestHistRuns: without --run, runs that share object names (the BTF
// trace ingested twice) get one set of histograms each, headed by the
// run; --pool makes one histogram per object over the runs and says it
// pooled them; --output gives the run as columns, or the pooling on
// standard error. Before, --state pooled the runs without a word (A's
// 128 bucket counted 2).
func TestHistRuns(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := histDB(t, dir)
	second := writeFile(t, dir, "second.btf", append(readFile(t, histBTF), '\n'))
	mustRun(t, dir, nil, "ingest", "--db", db, "--name", "second", second)
	b := lines(`
  B                                                 |
           value  ------------- Distribution ------------- count    |
              64 |                                         0        |
             128 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@ 1        |
             256 |                                         0        |
|
`)
	if got, want := mustRun(t, dir, nil, "hist", "--db", db, "--state", "running", "--object", "B"), "run 1: hist-hand\n\n"+b+"run 3: second\n\n"+b; got != want {
		t.Errorf("per run:\n%s\nwant:\n%s", got, want)
	}
	if got, want := mustRun(t, dir, nil, "hist", "--db", db, "--state", "running", "--object", "B", "--run", "3"), b; got != want {
		t.Errorf("--run 3:\n%s\nwant:\n%s", got, want)
	}
	pooled := lines(`
pooled 2 runs: 1 (hist-hand), 3 (second)
|
  B                                                 |
           value  ------------- Distribution ------------- count    |
              64 |                                         0        |
             128 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@ 2        |
             256 |                                         0        |
|
`)
	if got := mustRun(t, dir, nil, "hist", "--db", db, "--state", "running", "--object", "B", "--pool"); got != pooled {
		t.Errorf("--pool:\n%s\nwant:\n%s", got, pooled)
	}
	r := td(t, dir, "hist", "--db", db, "--state", "running", "--kind", "task", "-o", "csv")
	crlf := func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") } // CSV's line ends
	if want := crlf("run_id,run,key,bucket,label,count\n1,hist-hand,A,16,16,1\n1,hist-hand,A,128,128,1\n1,hist-hand,A,256,256,1\n1,hist-hand,A,1024,1024,1\n1,hist-hand,B,128,128,1\n" +
		"3,second,A,16,16,1\n3,second,A,128,128,1\n3,second,A,256,256,1\n3,second,A,1024,1024,1\n3,second,B,128,128,1\n"); r.code != 0 || r.stdout != want || r.stderr != "" {
		t.Errorf("per run, csv: %s\nwant stdout:\n%s", r, want)
	}
	r = td(t, dir, "hist", "--db", db, "--state", "running", "--object", "B", "--pool", "-o", "csv")
	if r.code != 0 || r.stdout != crlf("key,bucket,label,count\nB,128,128,2\n") || r.stderr != "traceduck: pooled 2 runs: 1 (hist-hand), 3 (second)\n" {
		t.Errorf("--pool, csv: %s", r)
	}
}

// TestHistStateMissing: a --state with nothing to count says why, exit
// 1: unknown (with the states there), an aggregate of state_levels (with
// the --level that gives it, which then works), only truncated intervals.
func TestHistStateMissing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := histDB(t, dir)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--state", "runing", "--kind", "task"}, `traceduck: no complete interval of state "runing" among the objects of every run, kind "task"; the states there: "running", "active", "ready"` + "\n"},
		{[]string{"--state", "running", "--kind", "core"}, `traceduck: no complete interval of state "running" among the objects of every run, kind "core": they have no state intervals` + "\n"},
		{[]string{"--state", "busy"}, `traceduck: state "busy" is an aggregated state (state_levels: level 3 of kind cpu in run 1), not a state of state_intervals: give --level 3 (or in SQL: state_trace(3, ...), durations_in_state_level('busy', 3, ...))` + "\n"},
		{[]string{"--state", "tasks", "--run", "1", "--kind", "cpu"}, `traceduck: state "tasks" is an aggregated state (state_levels: level 2 of kind cpu in run 1), not a state of state_intervals: give --level 2 (or in SQL: state_trace(2, ...), durations_in_state_level('tasks', 2, ...))` + "\n"},
		{[]string{"--state", "running", "--run", "1", "--level", "1"}, `traceduck: no complete interval of state "running" at level 1 among the objects of run 1; it is a state of state_intervals: leave out --level; the states there at level 1: "on_cpu", "A", "idle", "runnable", "B"` + "\n"},
		{[]string{"--state", "alive", "--run", "2"}, `traceduck: state "alive" has no complete interval among the objects of run 2: its 1 interval is cut by the start or the end of the trace (the histograms count complete intervals)` + "\n"},
	} {
		args := append([]string{"hist", "--db", db}, tc.args...)
		r := td(t, dir, args...)
		if r.code != 1 || r.stdout != "" || r.stderr != tc.want {
			t.Errorf("traceduck %q: %s\nwant stderr %q", args, r, tc.want)
		}
	}
	// The aggregate, with the --level the message gives: the core was busy
	// 500, 2000 and 30 ns (-1, its top level, is the same).
	busy := lines(`
  Core_0                                            |
           value  ------------- Distribution ------------- count    |
               8 |                                         0        |
              16 |@@@@@@@@@@@@@                            1        |
              32 |                                         0        |
              64 |                                         0        |
             128 |                                         0        |
             256 |@@@@@@@@@@@@@                            1        |
             512 |                                         0        |
            1024 |@@@@@@@@@@@@@                            1        |
            2048 |                                         0        |
|
`)
	for _, level := range []string{"3", "-1"} {
		if got := mustRun(t, dir, nil, "hist", "--db", db, "--state", "busy", "--level", level, "--run", "1"); got != busy {
			t.Errorf("--level %s:\n%s\nwant:\n%s", level, got, busy)
		}
	}
}

// TestHistSQL: --sql shapes, weights, integer keys, statements before
// the query, response times from the BTF run, the other outputs.
func TestHistSQL(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := histDB(t, dir)
	for _, tc := range []struct {
		args []string
		want string
	}{
		// Response times of the BTF tasks: A 600, 2000, 30; B 200.
		{[]string{"--db", db, "--sql", "SELECT key, value FROM durations_between_events('activate', 'terminate', by_instance := true)", "--llquantize", "10,1,3,10"}, lines(`
  B                                                 |
           value  ------------- Distribution ------------- count    |
             100 |                                         0        |
             200 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@ 1        |
             300 |                                         0        |
|
  A                                                 |
           value  ------------- Distribution ------------- count    |
              20 |                                         0        |
              30 |@@@@@@@@@@@@@                            1        |
              40 |                                         0        |
              50 |                                         0        |
              60 |                                         0        |
              70 |                                         0        |
              80 |                                         0        |
              90 |                                         0        |
             100 |                                         0        |
             200 |                                         0        |
             300 |                                         0        |
             400 |                                         0        |
             500 |                                         0        |
             600 |@@@@@@@@@@@@@                            1        |
             700 |                                         0        |
             800 |                                         0        |
             900 |                                         0        |
            1000 |                                         0        |
            2000 |@@@@@@@@@@@@@                            1        |
            3000 |                                         0        |
|
`)},
		// Integer keys ("%8d" for INTEGER), ordered by sum: 7 → 4, 3 → 2.
		{[]string{"--sql", "SELECT * FROM (VALUES (7::INTEGER, 9), (3::INTEGER, 2)) t(k, v)"}, lines(`
        3|
           value  ------------- Distribution ------------- count    |
               1 |                                         0        |
               2 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@ 1        |
               4 |                                         0        |
|
        7|
           value  ------------- Distribution ------------- count    |
               4 |                                         0        |
               8 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@ 1        |
              16 |                                         0        |
|
`)},
		// A weight is added to the bucket (negative ones too); a NULL key
		// in every row is no key; a statement before the query runs
		// first.
		{[]string{"--sql", "CREATE TEMP TABLE w AS SELECT * FROM (VALUES (1, 3), (-1, -1)) t(v, w); SELECT NULL, v, w FROM w"}, lines(`
|
           value  ------------- Distribution ------------- count    |
              -2                     |                     0        |
              -1                @@@@@|                     -1       |
               0                     |                     0        |
               1                     |@@@@@@@@@@@@@@@      3        |
               2                     |                     0        |
|
`)},
		// --linear 4 over 3..100: width (100-3)/4 + 1 = 25.
		{[]string{"--sql", "SELECT range FROM range(3, 101)", "--linear", "4"}, lines(`
|
           value  ------------- Distribution ------------- count    |
             < 3 |                                         0        |
               3 |@@@@@@@@@@                               25       |
              28 |@@@@@@@@@@                               25       |
              53 |@@@@@@@@@@                               25       |
              78 |@@@@@@@@@                                23       |
          >= 103 |                                         0        |
|
`)},
		{[]string{"--sql", "SELECT 'x', unnest([1, 5, 5, -3])", "--output", "csv"},
			"key,bucket,label,count\r\nx,-2,-2,1\r\nx,1,1,1\r\nx,4,4,2\r\n"},
	} {
		args := append([]string{"hist"}, tc.args...)
		if got := mustRun(t, dir, nil, args...); got != tc.want {
			t.Errorf("traceduck %q:\ngot:\n%s\nwant:\n%s", args, got, tc.want)
		}
	}
	// No rows: nothing, as DTrace prints nothing for an empty aggregation.
	if got := mustRun(t, dir, nil, "hist", "--sql", "SELECT 1 WHERE false"); got != "" {
		t.Errorf("no rows: %q", got)
	}
}

func TestHistErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := histDB(t, dir)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"hist"}, 2, "traceduck: give --state STATE or --sql QUERY\n"},
		{[]string{"hist", "--sql", "SELECT 1", "--state", "x"}, 2, "traceduck: --state and --sql: give one\n"},
		{[]string{"hist", "--state", "running"}, 2, "traceduck: --state needs --db\n"},
		{[]string{"hist", "--sql", "SELECT 1", "--kind", "task"}, 2, "traceduck: --kind, --object, --run, --pool and --level select the objects of --state, not the rows of --sql\n"},
		{[]string{"hist", "--sql", "SELECT 1", "--pool"}, 2, "traceduck: --kind, --object, --run, --pool and --level select the objects of --state, not the rows of --sql\n"},
		{[]string{"hist", "--sql", "SELECT 1", "--level", "0"}, 2, "traceduck: --kind, --object, --run, --pool and --level select the objects of --state, not the rows of --sql\n"},
		{[]string{"hist", "--db", db, "--state", "running", "--pool", "--run", "1"}, 2, "traceduck: --pool and --run: give one (--run keeps one run, --pool pools every run)\n"},
		{[]string{"hist", "--sql", "SELECT 1", "--quantize", "--linear", "3"}, 2, "traceduck: --quantize, --linear: give one kind of buckets\n"},
		{[]string{"hist", "--sql", "SELECT 1", "--lquantize", "0,100,0"}, 2, "traceduck: lquantize( ) argument #3 must be a non-zero positive integer constant\n"},
		{[]string{"hist", "--sql", "SELECT 1", "--lquantize", "0"}, 2, "traceduck: --lquantize \"0\": expected LOWER,UPPER[,STEP]\n"},
		{[]string{"hist", "--sql", "SELECT 1", "--lquantize", "0,x"}, 2, "traceduck: --lquantize \"0,x\": \"x\" is not an integer (expected LOWER,UPPER[,STEP])\n"},
		{[]string{"hist", "--sql", "SELECT 1", "--llquantize", "10,0,6,15"}, 2, "traceduck: llquantize( ) factor (argument #1) must evenly divide the number of steps per magnitude (argument #4), and the number of steps per magnitude must evenly divide a power of the factor\n"},
		{[]string{"hist", "--sql", "SELECT 1", "--linear", "0"}, 2, "traceduck: --linear 0: the number of buckets must be at least 1\n"},
		{[]string{"hist", "--sql", "SELECT 1", "--buckets", "0,10parsecs"}, 2, "traceduck: --buckets \"0,10parsecs\": \"10parsecs\": unknown unit \"parsecs\" (ns, us, ms, s)\n"},
		{[]string{"hist", "--sql", "SELECT 1", "--buckets", "0,1500ns", "--unit", "us"}, 2, "traceduck: --buckets \"0,1500ns\": \"1500ns\" is not a whole number of us (--unit)\n"},
		{[]string{"hist", "--sql", "SELECT 1", "--buckets", "5,1"}, 2, "traceduck: bucket edges: [5 1] are not in strictly ascending order\n"},
		{[]string{"hist", "--sql", "SELECT 1", "--buckets", "0,,1"}, 2, "traceduck: --buckets \"0,,1\": an empty edge\n"},
		{[]string{"hist", "--sql", "SELECT 1, 2, 3, 4"}, 2, "traceduck: --sql: the query returns 4 columns; give (value), (key, value) or (key, value, weight)\n"},
		{[]string{"hist", "--sql", ";"}, 2, "traceduck: --sql: no query\n"},
		{[]string{"hist", "--sql", "SELECT * FROM (VALUES (NULL, 1), ('a', 2)) t(k, v)"}, 1, "traceduck: some rows have a NULL key and some have not: give every row a key (coalesce(key, ...)), or none\n"},
		{[]string{"hist", "--db", db, "--state", "running", "--run", "9"}, 2, "traceduck: --run 9: no such run (the runs: "},
		{[]string{"hist", "--sql", "SELECT 'x'"}, 2, "traceduck: --sql: the value column is VARCHAR, not a number\n"},
		{[]string{"hist", "--sql", "SELECT 'k', 1, 'w'"}, 2, "traceduck: --sql: the weight column is VARCHAR, not a number\n"},
	} {
		r := td(t, dir, tc.args...)
		if r.code != tc.code || !strings.HasPrefix(r.stderr, tc.want) && !strings.Contains(r.stderr, tc.want) {
			t.Errorf("traceduck %q: exit %d, want %d; stderr %q, want %q", tc.args, r.code, tc.code, r.stderr, tc.want)
		}
		if tc.code == 2 && tc.want[len(tc.want)-1] == '\n' && !strings.HasPrefix(r.stderr, tc.want) {
			t.Errorf("traceduck %q: stderr %q, want it to start %q", tc.args, r.stderr, tc.want)
		}
	}
}
