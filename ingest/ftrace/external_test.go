package ftrace_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/internal/recount"
)

const externalDir = "../../../shared/testdata-external/ftrace"

func externalFiles(t *testing.T) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(externalDir, "*"))
	if len(files) == 0 {
		t.Skip("no ../shared/testdata-external/ftrace beside the repository")
	}
	return files
}

// eventLine is the line pattern Perfetto's systrace tokenizer uses
// (src/trace_processor/importers/systrace/systrace_line_tokenizer.cc),
// a second reading of the layout independent of the ingester's.
var eventLine = regexp.MustCompile(`-(\d+)\s+\(?\s*(\d+|-+)?\)?\s?\[(\d+)\]\s*[a-zA-Z0-9.]{0,4}\s+(\d+\.\d+):\s+(\S+)`)

// rawFigures are computed from a file's sched_switch lines with the
// pattern above and plain string splitting, as Perfetto's thread_state
// builds them: a thread runs from the switch that names it next to the
// next switch that names it (as prev, or as next on another CPU); each
// switch out opens a state named by prev_state.
type rawFigures struct {
	events  int
	running map[string][2]int64 // tid -> complete running intervals: count, total ns
	off     map[string]int64    // prev_state letter(s) -> switches out of a thread in it
}

func computeRaw(t *testing.T, path string) rawFigures {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fig := rawFigures{running: map[string][2]int64{}, off: map[string]int64{}}
	since := map[string]int64{}
	field := recount.FtraceField
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		m := eventLine.FindStringSubmatchIndex(sc.Text())
		if m == nil {
			continue
		}
		line := sc.Text()
		fig.events++
		if line[m[10]:m[11]] != "sched_switch:" {
			continue
		}
		sec, frac, _ := strings.Cut(line[m[8]:m[9]], ".")
		s, _ := strconv.ParseInt(sec, 10, 64)
		us, _ := strconv.ParseInt((frac + "000000")[:6], 10, 64)
		ts := s*1_000_000_000 + us*1000
		body := line[m[11]:]
		prev, next, state := field(body, "prev_pid"), field(body, "next_pid"), field(body, "prev_state")
		for _, tid := range []string{prev, next} {
			if start, ok := since[tid]; ok {
				r := fig.running[tid]
				fig.running[tid] = [2]int64{r[0] + 1, r[1] + ts - start}
				delete(since, tid)
			}
		}
		if prev != "0" {
			fig.off[state]++
		}
		if next != "0" {
			since[next] = ts
		}
	}
	return fig
}

// stateName is the ingester's name of a prev_state.
func stateName(s string) string {
	switch s {
	case "R", "R+":
		return "runnable"
	case "S":
		return "sleeping"
	case "D":
		return "uninterruptible"
	}
	return s
}

// TestExternalFiles: every real ftrace file is detected and ingests; it
// gives one event per event line (counted with Perfetto's pattern); and
// the thread states agree with the raw sched_switch lines read Perfetto's
// way: the count and total of the complete running intervals of every
// thread, and the number of states each prev_state opens.
func TestExternalFiles(t *testing.T) {
	for _, path := range externalFiles(t) {
		t.Run(filepath.Base(path)[max(0, len(filepath.Base(path))-40):], func(t *testing.T) {
			db := dbtest.Open(t)
			res := dbtest.Ingest(t, db, path, ingest.Options{})
			if res.Format != "ftrace" {
				t.Fatalf("detected as %s", res.Format)
			}
			raw := computeRaw(t, path)
			if res.Events != int64(raw.events) {
				t.Errorf("events: ingested %d, event lines %d", res.Events, raw.events)
			}
			var want []string
			for tid, r := range raw.running {
				want = append(want, fmt.Sprintf("%s | %d | %d", tid, r[0], r[1]))
			}
			sort.Strings(want)
			got := dbtest.Query(t, db.SQL(), `SELECT o.native_id::VARCHAR AS tid, count(*), sum(s.dur)
				FROM state_intervals s JOIN objects o USING (run_id, object_id)
				WHERE o.kind = 'thread' AND s.instance = 0 AND s.state = 'running' AND NOT s.truncated
				GROUP BY tid ORDER BY tid`)
			if got != strings.Join(want, "\n")+"\n" && len(want) > 0 {
				t.Errorf("running per thread (tid | count | total):\n got %s\nwant %s", got, strings.Join(want, "\n"))
			}
			want = want[:0]
			byName := map[string]int64{}
			for st, n := range raw.off {
				byName[stateName(st)] += n
			}
			for st, n := range byName {
				want = append(want, fmt.Sprintf("%s | %d", st, n))
			}
			sort.Strings(want)
			// every switch out opens one interval; a wakeup opens the
			// other runnable ones, which are left out here
			got = dbtest.Query(t, db.SQL(), `SELECT s.state, count(*) FROM state_intervals s JOIN events e ON e.run_id = s.run_id AND e.seq = s.start_seq
				JOIN objects o ON o.run_id = s.run_id AND o.object_id = s.object_id
				WHERE o.kind = 'thread' AND s.instance = 0 AND e.event = 'sched_switch' AND s.state <> 'running' GROUP BY s.state ORDER BY s.state`)
			if len(want) > 0 && got != strings.Join(want, "\n")+"\n" {
				t.Errorf("states opened by switches out:\n got %s\nwant %s", got, strings.Join(want, "\n"))
			}
			if len(raw.running) > 0 {
				t.Logf("%d threads ran; switches out: %v", len(raw.running), byName)
			}
		})
	}
}

// TestExternalGolden: every table of three real files, as read (review a
// change line by line: -update rewrites them).
func TestExternalGolden(t *testing.T) {
	files := externalFiles(t)
	for _, name := range []string{"trace-android-sched-irq", "trace-android-sched-irq-syscall", "trace-critical-path"} {
		var path string
		for _, f := range files {
			if strings.HasSuffix(f, "__"+name) {
				path = f
			}
		}
		if path == "" {
			t.Errorf("no file ending in %s", name)
			continue
		}
		t.Run(name, func(t *testing.T) {
			db := dbtest.Open(t)
			dbtest.Ingest(t, db, path, ingest.Options{Name: name})
			dbtest.Golden(t, filepath.Join("testdata", "external", name+".golden"), dbtest.Dump(t, db.SQL()))
		})
	}
}
