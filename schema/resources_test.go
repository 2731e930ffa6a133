package schema

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow/memory"
)

// TestResourceTracker runs the scripts of testdata/resources/*.txtar: the
// verbs a format speaks to the resource tracker, and the holds and waits
// that must come out. Script lines (times in ns; every verb is also an
// event at its time):
//
//	declare R KIND [unowned]        the resource's kind ("-": the object's)
//	request R A TS [INST]           also wait, assign, release, giveup
//	woken R A TS
//	event TS                        an event of no resource
//	holds R A | waiting R A         what the tracker says (into result)
//
// intervals: "R KIND hold|wait A[#INST] start..end dur ended [cut]
// seq=START..END", in the order written; diagnostics: "severity count
// message".
func TestResourceTracker(t *testing.T) {
	runScriptCases(t, "testdata/resources/*.txtar", []string{"intervals", "diagnostics", "result"}, false, func(t *testing.T, script string) map[string]string { return runResourceScript(t, script, 0) })
}

func runResourceScript(t *testing.T, script string, batchRows int) map[string]string {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	sink := &rowSink{}
	w := NewRunWriter(RunInfo{RunID: 1, Name: "resources"}, sink, mem)
	if batchRows > 0 {
		w.SetBatchRows(batchRows)
	} else {
		w.SetBatchRows(2)
	}
	res := w.Resources()
	num := func(s string) int64 {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		return n
	}
	ev := func(ts int64) Seq {
		seq, err := w.Event(&Event{TS: ts, CPU: NoCPU, Class: w.Sym("x"), Event: w.Sym("x"), Context: NoObject, Object: NoObject,
			SourceInstance: NoInstance, TargetInstance: NoInstance, Line: int64(w.Events() + 1)})
		if err != nil {
			t.Fatal(err)
		}
		return seq
	}
	var result []string
	for _, l := range strings.Split(script, "\n") {
		f := strings.Fields(l)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		var err error
		switch f[0] {
		case "declare":
			spec := ResourceSpec{Kind: f[2], Unowned: len(f) > 3 && f[3] == "unowned"}
			if spec.Kind == "-" {
				spec.Kind = ""
			}
			res.Declare(w.Object("semaphore", f[1]), spec)
		case "woken":
			ts := num(f[3])
			err = res.Woken(w.Object("semaphore", f[1]), w.Object("task", f[2]), ts, ev(ts))
		case "request", "wait", "assign", "release", "giveup":
			r, a, ts := w.Object("semaphore", f[1]), w.Object("task", f[2]), num(f[3])
			inst := NoInstance
			if len(f) > 4 {
				inst = num(f[4])
			}
			seq := ev(ts)
			switch f[0] {
			case "request":
				err = res.Request(r, a, inst, ts, seq)
			case "wait":
				err = res.Wait(r, a, inst, ts, seq)
			case "assign":
				err = res.Assign(r, a, inst, ts, seq)
			case "release":
				err = res.Release(r, a, inst, ts, seq)
			case "giveup":
				err = res.GiveUp(r, a, inst, ts, seq)
			}
		case "event":
			ev(num(f[1]))
		case "holds":
			result = append(result, fmt.Sprintf("holds %s %s %d", f[1], f[2], res.Holds(w.Object("semaphore", f[1]), w.Object("task", f[2]))))
		case "waiting":
			result = append(result, fmt.Sprintf("waiting %s %s %v", f[1], f[2], res.Waiting(w.Object("semaphore", f[1]), w.Object("task", f[2]))))
		default:
			t.Fatalf("unknown verb %q", f[0])
		}
		if err != nil {
			result = append(result, f[0]+": "+err.Error())
		}
	}
	if err := w.Finish(time.Now()); err != nil {
		result = append(result, "finish: "+err.Error())
	}
	names := map[string]string{}
	for _, o := range sink.rows[TableObjects] {
		names[o["object_id"]] = o["name"]
	}
	var iv []string
	for _, r := range sink.rows[TableResourceIntervals] {
		actor := names[r["actor_id"]]
		if r["actor_instance"] != "NULL" {
			actor += "#" + r["actor_instance"]
		}
		cut := ""
		if r["truncated"] == "true" {
			cut = " cut"
		}
		iv = append(iv, fmt.Sprintf("%s %s %s %s %s..%s %s %s%s seq=%s..%s", names[r["resource_id"]], r["resource_kind"], r["relation"], actor,
			r["start_ts"], r["end_ts"], r["dur"], r["ended"], cut, r["start_seq"], r["end_seq"]))
	}
	var dg []string
	for _, d := range sink.rows[TableDiagnostics] {
		dg = append(dg, fmt.Sprintf("%s %s %s", d["severity"], d["count"], d["message"]))
	}
	return map[string]string{"intervals": strings.Join(iv, "\n"), "diagnostics": strings.Join(dg, "\n"), "result": strings.Join(result, "\n")}
}

// TestResourceBounds: past MaxResourceActors actors on one resource, and
// past MaxResources resources, the verbs of the others are ignored, with
// one warning counted; the ones within the bounds are kept.
func TestResourceBounds(t *testing.T) {
	var b strings.Builder
	for i := 0; i <= MaxResourceActors; i++ {
		fmt.Fprintf(&b, "assign R A%d %d\n", i, i)
	}
	got := runResourceScript(t, b.String(), 1<<20)
	if n := strings.Count(got["intervals"], "\n") + 1; n != MaxResourceActors {
		t.Errorf("%d holds, want %d", n, MaxResourceActors)
	}
	if want := fmt.Sprintf("warning 1 more than %d tasks or threads act on one resource: the holds and waits of the others are not tracked", MaxResourceActors); got["diagnostics"] != want {
		t.Errorf("diagnostics %q, want %q", got["diagnostics"], want)
	}

	b.Reset()
	for i := 0; i <= MaxResources+1; i++ {
		fmt.Fprintf(&b, "assign R%d A %d\n", i, i)
	}
	got = runResourceScript(t, b.String(), 1<<20)
	if n := strings.Count(got["intervals"], "\n") + 1; n != MaxResources {
		t.Errorf("%d holds, want %d", n, MaxResources)
	}
	if want := fmt.Sprintf("warning 2 more than %d resources in one run: the holds and waits of the others are not tracked", MaxResources); got["diagnostics"] != want {
		t.Errorf("diagnostics %q, want %q", got["diagnostics"], want)
	}
}

// TestResourceActorsPerRun: past the run's bound of (resource, actor)
// pairs, new pairs are ignored with one warning counted.
func TestResourceActorsPerRun(t *testing.T) {
	defer func(n int) { actorsPerRun = n }(actorsPerRun)
	actorsPerRun = 3
	got := runResourceScript(t, "assign R A 1\nassign R B 2\nassign S A 3\nassign S B 4\nassign T A 5\nrelease R A 6\n", 0)
	want := "R semaphore hold A 1..6 5 released seq=1..6\nR semaphore hold B 2..6 4 NULL cut seq=2..NULL\nS semaphore hold A 3..6 3 NULL cut seq=3..NULL"
	if got["intervals"] != want {
		t.Errorf("intervals:\n%s\nwant\n%s", got["intervals"], want)
	}
	if want := "warning 2 more than 1048576 (resource, task or thread) pairs in one run: the holds and waits of the others are not tracked"; got["diagnostics"] != want {
		t.Errorf("diagnostics %q, want %q", got["diagnostics"], want)
	}
}

// BenchmarkResourceTracker: 28 events per iteration, the verbs of a
// contended semaphore (request, assign; request, wait; release, assign;
// release) for 8 tasks on 4 resources, with (verbs) and without (events)
// the resource model: the difference is the model's cost.
func BenchmarkResourceTracker(b *testing.B) {
	for _, verbs := range []bool{false, true} {
		b.Run(map[bool]string{false: "events", true: "verbs"}[verbs], func(b *testing.B) { benchResources(b, verbs) })
	}
}

func benchResources(b *testing.B, verbs bool) {
	w := NewRunWriter(RunInfo{RunID: 1, Name: "bench"}, discardSink{}, memory.NewGoAllocator())
	res := w.Resources()
	var rs, as [8]ObjectID
	for i := range rs {
		rs[i], as[i] = w.Object("semaphore", fmt.Sprint("S", i%4)), w.Object("task", fmt.Sprint("T", i))
	}
	ev := Event{CPU: NoCPU, Class: w.Sym("SEM"), Event: w.Sym("x"), Context: NoObject, Object: NoObject, SourceInstance: NoInstance, TargetInstance: NoInstance}
	ts := int64(0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for k := 0; k < 8; k += 2 {
			r, a, c := rs[k], as[k], as[k+1]
			for step := 0; step < 7; step++ {
				ts++
				ev.TS = ts
				seq, err := w.Event(&ev)
				if err != nil {
					b.Fatal(err)
				}
				if !verbs {
					continue
				}
				switch step {
				case 0:
					err = res.Request(r, a, 0, ts, seq)
				case 1:
					err = res.Assign(r, a, 0, ts, seq)
				case 2:
					err = res.Request(r, c, 0, ts, seq)
				case 3:
					err = res.Wait(r, c, 0, ts, seq)
				case 4:
					err = res.Release(r, a, 0, ts, seq)
				case 5:
					err = res.Assign(r, c, 0, ts, seq)
				case 6:
					err = res.Release(r, c, 0, ts, seq)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	b.StopTimer()
	if err := w.Finish(time.Now()); err != nil {
		b.Fatal(err)
	}
}
