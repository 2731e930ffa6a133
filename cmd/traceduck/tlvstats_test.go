package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTLVStats: TLV's own .sgr files on asp_short.log: the task dispatch
// count prints each task's dispatches (the raw log's "dispatch to task
// N." lines: LOGTASK 38, TASK1 27, TASK2 12, TASK3 17, MAIN_TASK 23, as
// grep counts them); the CPU utilization, a Ruby script, is refused at
// its Mode with the reason (exit 1); csv of a file of several statistics
// needs --stat.
func TestTLVStats(t *testing.T) {
	t.Parallel()
	const dir0 = "../../../shared/testdata-external/toppers/YixiaoLi__tlv4mc__"
	log, err := filepath.Abs(dir0 + "sampleFiles__SampleLog__asp__asp_short.log")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(log); err != nil {
		t.Skipf("no %s beside the repository", log)
	}
	res, _ := filepath.Abs(dir0 + "sampleFiles__SampleLog__asp__asp_short.res")
	count, _ := filepath.Abs(dir0 + "statisticsGenerationRules__task_dispatch_count.sgr")
	cpu, _ := filepath.Abs(dir0 + "statisticsGenerationRules__asp_cpu_utilization.sgr")
	dir := t.TempDir()
	db := filepath.Join(dir, "t.duckdb")
	mustRun(t, dir, nil, "ingest", "--db", db, "--format", "toppers-asp", "--resources", res, log)

	out := mustRun(t, dir, nil, "tlv-stats", "--db", db, "--sgr", count, "--output", "csv")
	if want := "run_id,resource,count\r\n1,LOGTASK,38\r\n1,TASK1,27\r\n1,TASK2,12\r\n1,TASK3,17\r\n1,MAIN_TASK,23\r\n"; out != want {
		t.Errorf("task_dispatch_count:\n%s\nwant\n%s", out, want)
	}
	out = mustRun(t, dir, nil, "tlv-stats", "--db", db, "--sgr", count)
	if !strings.HasPrefix(out, "task_dispatch_count: タスクのディスパッチ回数 (Count)\n") {
		t.Errorf("table output: %q", out)
	}
	expectExit(t, td(t, dir, "tlv-stats", "--db", db, "--sgr", cpu), 1,
		cpu+`:10:10: in statistic "asp_cpu_utilization": Mode: expected Basic, found "Script"`)

	two := filepath.Join(dir, "two.sgr")
	if err := os.WriteFile(two, []byte(`{
 "dispatches": {"Mode": "Basic", "BasicRule": {"Method": "Count", "When": {"ResourceType": "Task", "BehaviorName": "dispatch"}}},
 "calls": {"Mode": "Basic", "BasicRule": {"Method": "Count", "When": {"ResourceName": "MAIN_TASK", "BehaviorName": "enterSVC", "BehaviorArg": "act_tsk, tskid=2."}}}
}`), 0o644); err != nil {
		t.Fatal(err)
	}
	expectExit(t, td(t, dir, "tlv-stats", "--db", db, "--sgr", two, "--output", "csv"), 2, "--output csv prints one statistic")
	if out := mustRun(t, dir, nil, "tlv-stats", "--db", db, "--sgr", two, "--output", "csv", "--stat", "calls"); out != "run_id,resource,count\r\n1,MAIN_TASK,1\r\n" {
		t.Errorf("calls: %q", out)
	}
	if out := mustRun(t, dir, nil, "tlv-stats", "--db", db, "--sgr", two, "--output", "csv", "--stat", "dispatches"); !strings.Contains(out, "1,LOGTASK,38\r\n") {
		t.Errorf("dispatches: %q", out)
	}
}
