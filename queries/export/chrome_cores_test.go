package export_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/internal/tracegen"
	"github.com/traceduck/traceduck/queries/export"
)

// TestChromeCoreColours (TLV's figure 11: the executing core as the
// background of the task states): on a generated TOPPERS/FMP log of two
// cores, each task's RUNNING slice is coloured (cname) and tagged
// (args.cpu) with the processor of the raw line "[T]:[P]: dispatch to
// task N." that began it; the slices of the two cores have two colours.
// A run of one processor has no colours.
func TestChromeCoreColours(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var logBuf, resBuf bytes.Buffer
	if _, err := tracegen.WriteTLV(&logBuf, &resBuf, tracegen.Config{Events: 5_000, Cores: 2, Tasks: 6, Seed: 2}, tracegen.TOPPERSFMP); err != nil {
		t.Fatal(err)
	}
	log, res := filepath.Join(dir, "fmp.log"), filepath.Join(dir, "fmp.res")
	if err := os.WriteFile(log, logBuf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(res, resBuf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	// The raw lines: task id -> name from the resource file (its time
	// unit is ns), "TASK TS" -> processor of the dispatch.
	var rf struct {
		TimeScale string
		Resources map[string]struct {
			Type       string
			Attributes map[string]any
		}
	}
	if err := json.Unmarshal(resBuf.Bytes(), &rf); err != nil {
		t.Fatal(err)
	}
	if rf.TimeScale != "ns" {
		t.Fatalf("TimeScale %q: expected ns", rf.TimeScale)
	}
	task := map[string]string{}
	for name, r := range rf.Resources {
		if r.Type == "Task" {
			task[fmt.Sprint(r.Attributes["id"])] = name
		}
	}
	want := map[string]int64{}
	for _, m := range regexp.MustCompile(`(?m)^\[(\d+)\]:\[(\d+)\]: dispatch to task (\d+)\.`).FindAllSubmatch(logBuf.Bytes(), -1) {
		prc, _ := strconv.ParseInt(string(m[2]), 10, 64)
		want[task[string(m[3])]+" "+string(m[1])] = prc
	}
	if len(want) < 100 {
		t.Fatalf("only %d dispatches", len(want))
	}

	db := dbtest.Open(t)
	dbtest.Ingest(t, db, log, ingest.Options{Format: "toppers-fmp", Params: map[string]string{"resources": res}})
	var buf bytes.Buffer
	if _, err := export.Chrome(ctx, db.SQL(), &buf, export.ChromeOptions{Run: 1}); err != nil {
		t.Fatal(err)
	}
	names := map[[2]int64]string{}
	colours := map[string]bool{}
	seen := 0
	for _, e := range parseChrome(t, buf.Bytes()) {
		key := [2]int64{*e.Pid, *e.Tid}
		if e.Ph == "M" && e.Name == "thread_name" {
			var n string
			if err := json.Unmarshal(e.Args["name"], &n); err != nil {
				t.Fatal(err)
			}
			names[key] = n
		}
		if e.Ph != "X" || e.Cat != "Task" || e.Name != "state=RUNNING" {
			continue
		}
		var cpu int64
		if err := json.Unmarshal(e.Args["cpu"], &cpu); err != nil {
			t.Fatalf("RUNNING slice without args.cpu: %v", e.Args)
		}
		name := regexp.MustCompile(` \(\d+\)$`).ReplaceAllString(names[key], "")
		k := fmt.Sprintf("%s %d", name, ns(t, e.Ts))
		prc, ok := want[k]
		if !ok {
			t.Fatalf("RUNNING slice %s: no dispatch line then", k)
		}
		if cpu != prc || e.Cname != export.CoreColour(prc) {
			t.Errorf("RUNNING slice %s: cpu %d, cname %q; the line says processor %d (%q)", k, cpu, e.Cname, prc, export.CoreColour(prc))
		}
		colours[e.Cname] = true
		seen++
	}
	if seen < len(want)*9/10 || len(colours) != 2 {
		t.Errorf("%d RUNNING slices checked of %d dispatches, colours %v", seen, len(want), colours)
	}

	// One processor: no colour.
	db1 := dbtest.Open(t)
	logBuf.Reset()
	resBuf.Reset()
	if _, err := tracegen.WriteTLV(&logBuf, &resBuf, tracegen.Config{Events: 2_000, Cores: 1, Tasks: 3, Seed: 2}, tracegen.TOPPERSASP); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(log, logBuf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(res, resBuf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	dbtest.Ingest(t, db1, log, ingest.Options{Format: "toppers-asp", Params: map[string]string{"resources": res}})
	buf.Reset()
	if _, err := export.Chrome(ctx, db1.SQL(), &buf, export.ChromeOptions{Run: 1}); err != nil {
		t.Fatal(err)
	}
	for _, e := range parseChrome(t, buf.Bytes()) {
		if e.Cname != "" {
			t.Fatalf("a run of one processor has a colour: %+v", e)
		}
	}
}
