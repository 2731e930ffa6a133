package tlv

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/internal/recount"
	"github.com/traceduck/traceduck/internal/tracegen"
)

// TestWaitsTOPPERS ingests the real TOPPERS/ASP logs and compares the
// waits for kernel objects (resource_waits) with the recount of their raw
// lines (recount.ReadTOPPERS: from the call in which the task becomes
// WAITING to its wake-up, when the call returns ercd=0). The logs that
// have such waits must give some.
func TestWaitsTOPPERS(t *testing.T) {
	total := 0
	for _, c := range recount.TOPPERSLogs {
		name := strings.TrimSuffix(c.Log[strings.LastIndex(c.Log, "__")+2:], ".log")
		t.Run(name, func(t *testing.T) {
			log := externalFile(t, c.Log)
			res := ""
			if c.Res != "" {
				res = externalFile(t, c.Res)
			} else {
				res = fullRes(t)
			}
			rc := recountTOPPERS(t, log, res)
			db := dbtest.Open(t)
			run := ingestTLV(t, db, "toppers-asp", log, res, "", "")
			var want []string
			for k, s := range rc.Waits {
				want = append(want, fmt.Sprintf("%s | %d | %d\n", k, s.N, s.NS))
				total += int(s.N)
			}
			sort.Strings(want)
			got := dbtest.Query(t, db.SQL(), `SELECT resource || ' ' || waiter, count(*), sum(dur) FROM resource_waits
				WHERE run_id = ? AND NOT truncated AND resource_kind = split_part(resource, ' ', 1) GROUP BY ALL ORDER BY 1`, run.RunID)
			if got != strings.Join(want, "") {
				t.Errorf("complete waits per object and task:\n got %s\nwant %s", got, strings.Join(want, ""))
			}
			got = dbtest.Query(t, db.SQL(), `SELECT count(*) FILTER (WHERE ended = 'gave_up'), count(*) FILTER (WHERE truncated), count(*) FILTER (WHERE relation = 'hold')
				FROM resource_intervals WHERE run_id = ?`, run.RunID)
			if w := fmt.Sprintf("%d | %d | 0\n", rc.GaveUp, rc.OpenWaits); got != w {
				t.Errorf("waits given up, cut by the end, holds: got %s, want %s", got, w)
			}
			t.Logf("waits %v, gave up %d, open at the end %d", rc.Waits, rc.GaveUp, rc.OpenWaits)
		})
	}
	if total == 0 && !t.Skipped() {
		t.Error("no TOPPERS log has a wait for a kernel object")
	}
}

// TestWaitsGenerated: the standard format the generator writes for BTF's
// schedule (a task that waits for SEM_Shared calls wai_sem and spins,
// SPINNING or PARKED, until it is assigned the semaphore; one that waits
// for EV_Done calls wai_flg and is WAITING until set_event) gives exactly
// the simulator's waits for SEM_Shared and EV_Done (tracegen's Truth,
// kept as it simulated), as "semaphore 1" and "eventflag 1", with no
// holds.
func TestWaitsGenerated(t *testing.T) {
	for _, cfg := range []tracegen.Config{
		{Events: 30_000, Cores: 2, Tasks: 6, Seed: 3},
		{Events: 40_000, Cores: 4, Tasks: 8, Seed: 11, TimeScale: "us"},
	} {
		t.Run(fmt.Sprintf("cores%d_seed%d", cfg.Cores, cfg.Seed), func(t *testing.T) {
			dir := t.TempDir()
			var log, res bytes.Buffer
			tr, err := tracegen.WriteTLV(&log, &res, cfg, tracegen.TLVStandard)
			if err != nil {
				t.Fatal(err)
			}
			logPath, resPath := filepath.Join(dir, "gen.log"), filepath.Join(dir, "gen.res")
			for p, b := range map[string][]byte{logPath: log.Bytes(), resPath: res.Bytes()} {
				if err := os.WriteFile(p, b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			db := dbtest.Open(t)
			run := ingestTLV(t, db, "tlv", logPath, resPath, "", "")
			for _, c := range []struct {
				resource, kind string
				truth          map[string]tracegen.Sum
			}{{"semaphore 1", "semaphore", tr.Schedule.Waits}, {"eventflag 1", "eventflag", tr.Schedule.EvWaits}} {
				var want []string
				n := int64(0)
				for task, s := range c.truth {
					if s.N > 0 {
						want = append(want, fmt.Sprintf("%s | %d | %d\n", task, s.N, s.NS))
						n += s.N
					}
				}
				if n == 0 {
					t.Fatalf("the generator made no wait for %s", c.resource)
				}
				sort.Strings(want)
				got := dbtest.Query(t, db.SQL(), `SELECT waiter, count(*), sum(dur) FROM resource_waits
					WHERE run_id = ? AND resource = ? AND resource_kind = ? AND NOT truncated GROUP BY ALL ORDER BY 1`, run.RunID, c.resource, c.kind)
				if got != strings.Join(want, "") {
					t.Errorf("complete waits per task for %s:\n got %s\nwant %s", c.resource, got, strings.Join(want, ""))
				}
			}
			got := dbtest.Query(t, db.SQL(), `SELECT count(*) FILTER (WHERE truncated), count(*) FILTER (WHERE relation = 'hold' OR ended = 'gave_up')
				FROM resource_intervals WHERE run_id = ?`, run.RunID)
			if w := fmt.Sprintf("%d | 0\n", tr.Schedule.OpenWaits+tr.Schedule.EvOpenWaits); got != w {
				t.Errorf("waits cut by the end, holds or waits given up: got %s, want %s", got, w)
			}
		})
	}
}

// TestWaitsStandardFormat: the calls of the bundled header's Waits, in a
// standard-format log: a wait ends at the wake-up (leaving WAITING or
// WAITING-SUSPENDED) when the call returns ercd=0 (assigned) or another
// code (gave up, a timeout); a call that does not block is no wait; one
// whose arguments name no object is not followed (an info diagnostic); a
// wait still open at the end is cut there; no hold is made.
func TestWaitsStandardFormat(t *testing.T) {
	dir := t.TempDir()
	res := `{"TimeScale": "ns", "ResourceHeaders": ["asp"], "Resources": {
		"TASK1": {"Type": "Task", "Attributes": {"id": 1, "state": "RUNNING"}},
		"TASK2": {"Type": "Task", "Attributes": {"id": 2, "state": "RUNNABLE"}}}}`
	log := `[100]TASK1.enterSVC(wai_sem, semid=1.)
[110]TASK1.state=WAITING
[150]TASK1.state=WAITING-SUSPENDED
[200]TASK1.state=SUSPENDED
[250]TASK1.state=RUNNABLE
[300]TASK1.state=RUNNING
[310]TASK1.leaveSVC(wai_sem, ercd=0.)
[400]TASK1.enterSVC(twai_sem, semid=1 tmout=50.)
[410]TASK1.state=WAITING
[460]TASK1.state=RUNNABLE
[470]TASK1.state=RUNNING
[480]TASK1.leaveSVC(twai_sem, ercd=-50.)
[500]TASK1.enterSVC(wai_sem, semid=1.)
[510]TASK1.leaveSVC(wai_sem, ercd=0.)
[520]TASK1.enterSVC(wai_sem)
[530]TASK1.leaveSVC(wai_sem, ercd=0.)
[600]TASK2.enterSVC(wai_flg, flgid=3 waiptn=1.)
[610]TASK2.state=WAITING
[700]TASK1.state=DORMANT
`
	logPath, resPath := filepath.Join(dir, "w.log"), filepath.Join(dir, "w.res")
	if err := os.WriteFile(logPath, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(resPath, []byte(res), 0o644); err != nil {
		t.Fatal(err)
	}
	db := dbtest.Open(t)
	ingestTLV(t, db, "tlv", logPath, resPath, "", "")
	got := dbtest.Query(t, db.SQL(), `SELECT r.name, i.resource_kind, i.relation, a.name, i.start_ts, i.end_ts, i.dur, i.ended, i.truncated
		FROM resource_intervals i JOIN objects r ON r.run_id = i.run_id AND r.object_id = i.resource_id
		JOIN objects a ON a.run_id = i.run_id AND a.object_id = i.actor_id ORDER BY i.start_ts`)
	want := `semaphore 1 | semaphore | wait | TASK1 | 100 | 200 | 100 | assigned | false
semaphore 1 | semaphore | wait | TASK1 | 400 | 460 | 60 | gave_up | false
eventflag 3 | eventflag | wait | TASK2 | 600 | 700 | 100 | NULL | true
`
	if got != want {
		t.Errorf("holds and waits:\n got %s\nwant %s", got, want)
	}
	got = dbtest.Query(t, db.SQL(), `SELECT src_line, severity, message FROM diagnostics WHERE message LIKE '%wai_sem%'`)
	if want := "15 | info | a call wai_sem whose arguments name no semid: no wait is followed (the object it waits for is not known)\n"; got != want {
		t.Errorf("diagnostics: %s, want %s", got, want)
	}
	got = dbtest.Query(t, db.SQL(), `SELECT kind, name, native_id FROM objects WHERE kind IN ('semaphore', 'eventflag') ORDER BY name`)
	if want := "eventflag | eventflag 3 | 3\nsemaphore | semaphore 1 | 1\n"; got != want {
		t.Errorf("objects: %s, want %s", got, want)
	}
}
