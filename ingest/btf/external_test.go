package btf_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/dbtest"
)

const externalDir = "../../../shared/testdata-external/btf"

// rawFigures are computed from the raw lines of a BTF file with plain
// string splitting, independently of the ingester.
type rawFigures struct {
	actions map[string]int64 // "TYPE action" -> events
	running map[string]int64 // task -> ns running, from start/resume/run until preempt/terminate/poll/wait/park
	events  int64
}

func computeRaw(t *testing.T, path string) rawFigures {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	mul := int64(1)
	fig := rawFigures{actions: map[string]int64{}, running: map[string]int64{}}
	type key struct{ task, inst string }
	since := map[key]int64{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.HasPrefix(line, "#timeScale") {
			switch strings.TrimSpace(strings.TrimPrefix(line, "#timeScale")) {
			case "us":
				mul = 1000
			case "ms":
				mul = 1000000
			}
		}
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		parts := strings.SplitN(line, ",", 8)
		for i := range parts {
			parts[i] = strings.TrimSpace(parts[i])
		}
		ts, err := strconv.ParseInt(parts[0], 10, 64)
		if err != nil {
			t.Fatalf("%s: %q", path, line)
		}
		ts *= mul
		typ, target, inst, action := parts[3], parts[4], parts[5], parts[6]
		fig.events++
		fig.actions[typ+" "+action]++
		if typ != "T" {
			continue
		}
		k := key{target, inst}
		switch action {
		case "start", "resume", "run":
			since[k] = ts
		case "preempt", "terminate", "poll", "wait", "park":
			if s, ok := since[k]; ok {
				fig.running[target] += ts - s
				delete(since, k)
			}
		}
	}
	return fig
}

func TestExternalFiles(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(externalDir, "*.btf"))
	if len(files) == 0 {
		t.Skip("no ../shared/testdata-external/btf beside the repository")
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			db := dbtest.Open(t)
			res := dbtest.Ingest(t, db, path, ingest.Options{})
			if res.Format != "btf" {
				t.Fatalf("detected as %s", res.Format)
			}
			raw := computeRaw(t, path)
			if res.Events != raw.events {
				t.Errorf("events: ingested %d, raw lines %d", res.Events, raw.events)
			}
			// events per action
			got := dbtest.Query(t, db.SQL(), "SELECT class || ' ' || event, count FROM event_counts ORDER BY 1")
			var want []string
			for k, v := range raw.actions {
				want = append(want, fmt.Sprintf("%s | %d", k, v))
			}
			sort.Strings(want)
			if got != strings.Join(want, "\n")+"\n" {
				t.Errorf("event counts:\n got %s\nwant %s", got, strings.Join(want, "\n"))
			}
			// running time of every task that ran
			got = dbtest.Query(t, db.SQL(), "SELECT object, total_ns FROM state_summary WHERE kind = 'task' AND state = 'running' ORDER BY object")
			want = want[:0]
			for task, ns := range raw.running {
				want = append(want, fmt.Sprintf("%s | %d", task, ns))
			}
			sort.Strings(want)
			if len(want) < 2 {
				t.Fatalf("fewer than two tasks ran: %v", want)
			}
			if got != strings.Join(want, "\n")+"\n" {
				t.Errorf("running time per task:\n got %s\nwant %s", got, strings.Join(want, "\n"))
			}
			t.Logf("diagnostics:\n%s", dbtest.Query(t, db.SQL(), "SELECT severity, count, src_line, message FROM diagnostics ORDER BY src_line"))
		})
	}
}
