package main

import (
	"github.com/traceduck/traceduck/internal/clitest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEmptyAnswerNotes: a filter that matches nothing still exits 0 with
// an empty answer, and says on standard error what exists nearby; kinds
// match whatever their case.
func TestEmptyAnswerNotes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := clitest.DemoCopy(t, dir, "d.duckdb")
	for _, tc := range []struct {
		name string
		args []string
		note string // "" : no note, and rows
	}{
		// run 4 (TLV tiny) spells its kinds Thread, Semaphore, ...
		{"kind in another case", []string{"states", "--run", "4", "--kind", "thread"}, ""},
		{"kind not there", []string{"states", "--run", "4", "--kind", "task"},
			"traceduck: note: no object of kind task in run 4 (its kinds: Context, Irq, Semaphore, Thread, cpu)\n"},
		{"object typo", []string{"states", "--run", "1", "--object", "Task_1ms"},
			"traceduck: note: no object named Task_1ms in run 1 (closest: Task_1ms_1, Run_Task_1ms_1_0, Timer_Task_1ms_1)\n"},
		{"state typo", []string{"states", "--run", "1", "--state", "runing"},
			"traceduck: note: no state runing in run 1 (closest: running)\n"},
		{"aggregated state", []string{"states", "--run", "5", "--state", "cpuThreads"},
			"traceduck: note: state cpuThreads is a state of level 2 of kind cpu, not of level 0: give --level 2\n"},
		{"window outside", []string{"states", "--run", "1", "--from", "1s", "--to", "2s"},
			"traceduck: note: the window [1s, 2s) holds nothing: run 1's events lie in [0 ns, 133.055 ms]; --relative counts --from and --to from each run's first event\n"},
		{"event typo", []string{"events", "--run", "1", "--include", "event=T:strat"},
			"traceduck: note: no event T:strat in run 1 (closest: T:start)\n"},
		{"export window outside", []string{"export", "--run", "1", "--chrome", filepath.Join(dir, "x.json"), "--from", "1s", "--to", "2s"},
			"traceduck: note: the window [1 s, 2 s) holds nothing: run 1's events lie in [0 ns, 133.055 ms]\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := td(t, dir, append([]string{tc.args[0], "--db", db}, tc.args[1:]...)...)
			if r.code != 0 || r.stderr != tc.note {
				t.Errorf("%s\nwant exit 0 and stderr %q", r, tc.note)
			}
			if tc.note == "" && strings.Count(r.stdout, "\n") < 3 {
				t.Errorf("no rows:\n%s", r.stdout)
			}
		})
	}
}

// TestRawTOPPERSBesideItsResources: a raw TOPPERS/ASP log is detected
// without --format and read with the .res of its base name beside it,
// which the line names; without one, the error says which flag to give.
// asp_short.log holds 3087 events once converted (the same as its .tlv
// archive) and one time that goes back, at line 1454.
func TestRawTOPPERSBesideItsResources(t *testing.T) {
	t.Parallel()
	src := filepath.Join("..", "..", "..", "shared", "testdata-external", "toppers", "YixiaoLi__tlv4mc__sampleFiles__SampleLog__asp__asp_short")
	abs, err := filepath.Abs(src)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(abs + ".log"); err != nil {
		t.Skipf("no external test data: %v", err)
	}
	dir := t.TempDir()
	log := filepath.Join(dir, "asp_short.log")
	if err := os.Symlink(abs+".log", log); err != nil {
		t.Fatal(err)
	}
	r := td(t, dir, "ingest", "--db", "t.duckdb", log)
	expectExit(t, r, 1, "format toppers-asp needs --resources FILE.res (the resource file that declares the trace's resources): there is no "+filepath.Join(dir, "asp_short.res")+" beside the log")
	if err := os.Symlink(abs+".res", filepath.Join(dir, "asp_short.res")); err != nil {
		t.Fatal(err)
	}
	out := mustRun(t, dir, nil, "ingest", "--db", "t.duckdb", log)
	want := "run 1: " + log + " (toppers-asp, 3087 events, "
	tail := "; read with " + filepath.Join(dir, "asp_short.res") + ", found beside it; 1 warning, first: " + log + ":1454: timestamps go backwards"
	if !strings.HasPrefix(out, want) || !strings.Contains(out, tail) {
		t.Errorf("ingest printed %q, want %q ... %q", out, want, tail)
	}
}
