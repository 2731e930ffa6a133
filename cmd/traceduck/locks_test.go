package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// locksBTF is issue 21's worked example on Sem1 (T1 holds it 100..400, T2
// waits 150..400 and holds it 400..600), then Sem2: T1 holds it 700..750
// without waiting, T2 is assigned it at 800 and holds it past the end
// (truncated at 900, the last event).
const locksBTF = `#version 2.1.5
0,Sem1,0,SEM,Sem1,0,ready
100,T1,0,SEM,Sem1,0,requestsemaphore
100,T1,0,SEM,Sem1,0,assigned
150,T2,0,SEM,Sem1,0,requestsemaphore
150,T2,0,SEM,Sem1,0,waiting
400,T1,0,SEM,Sem1,0,released
400,T2,0,SEM,Sem1,0,assigned
600,T2,0,SEM,Sem1,0,released
700,T1,0,SEM,Sem2,0,requestsemaphore
700,T1,0,SEM,Sem2,0,assigned
750,T1,0,SEM,Sem2,0,released
800,T2,0,SEM,Sem2,0,requestsemaphore
800,T2,0,SEM,Sem2,0,assigned
900,T1,0,SEM,Sem1,0,requestsemaphore
`

// TestLocks checks traceduck locks against the example worked by hand:
// Sem1 has 2 holds (300 + 200 ns), 1 wait (T2, 250 ns, from 150), and 1
// of its 2 acquisitions waited (contention 0.5); Sem2 has 1 complete hold
// (50 ns), its 2 acquisitions did not wait (0), T2's hold is cut by the
// end (truncated 1).
func TestLocks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "t.duckdb")
	seed, err := filepath.Abs(seedSample)
	if err != nil {
		t.Fatal(err)
	}
	mustRun(t, dir, nil, "ingest", "--db", db, writeFile(t, dir, "locks.btf", []byte(locksBTF)), seed)

	got := mustRun(t, dir, nil, "locks", "--db", db)
	want := `run_id  resource  holders  holds  hold_total_ns  hold_max_ns  hold_p99_ns  waiters  waits  wait_total_ns  wait_max_ns  wait_p99_ns  longest_waiter  longest_wait_ts  contention  truncated
------  --------  -------  -----  -------------  -----------  -----------  -------  -----  -------------  -----------  -----------  --------------  ---------------  ----------  ---------
     1  Sem1            2      2            500          300          300        1      1            250          250          250  T2                          150         0.5          0
     1  Sem2            2      1             50           50           50        0      0           NULL         NULL         NULL  NULL                       NULL           0          1
`
	if got != want {
		t.Errorf("locks:\n%s\nwant\n%s", got, want)
	}

	got = mustRun(t, dir, nil, "locks", "--db", db, "--run", "1", "--resource", "*2", "--output", "csv")
	want = "run_id,resource_id,resource,resource_kind,holders,holds,hold_total_ns,hold_max_ns,hold_p99_ns,waiters,waits,wait_total_ns,wait_max_ns,wait_p99_ns,longest_waiter,longest_wait_ts,longest_wait_ns,acquisitions,waited,contention,truncated\r\n" +
		"1,"
	if !strings.HasPrefix(got, want) || !strings.HasSuffix(got, ",Sem2,semaphore,2,1,50,50,50,0,0,,,,,,,2,0,0,1\r\n") || strings.Count(got, "\n") != 2 {
		t.Errorf("locks --resource '*2' --output csv:\n%q", got)
	}

	// The seed's example has no semaphore: no row, and stderr says why.
	r := td(t, dir, "locks", "--db", db, "--run", "2")
	expectExit(t, r, 0, `no holds or waits of a resource in the selection; docs/semantics.md ("Resources: holds and waits") says which formats tell them`)
	if strings.Count(r.stdout, "\n") != 2 {
		t.Errorf("locks --run 2: want the header alone\n%s", r)
	}
	expectExit(t, td(t, dir, "locks", "--db", db, "--run", "7"), 2, "--run 7: no such run (the runs: ")
}
