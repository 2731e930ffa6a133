// Package demoruns writes three runs of one generated system, the third
// with a task made slower: the runs of the report's tests and of the
// example in docs/report.md.
package demoruns

import (
	"bytes"
	"os"
	"path/filepath"

	"github.com/traceduck/traceduck/internal/tracegen"
)

// SlowTask is the task v3 makes slower (a task of seed 7 on 2 cores with
// 5 tasks: Task_5ms_0, Task_1ms_1, Task_50ms_2, Task_10ms_3, Task_2ms_4).
const SlowTask = "Task_10ms_3"

// Run is one run to write: its name (the --name to ingest it with) and
// the generator's configuration.
type Run struct {
	Name   string
	Config tracegen.Config
}

// Runs are v1, v2 (v1 traced a little longer) and v3 (SlowTask's
// execution times 40% longer).
var Runs = []Run{
	{"v1", tracegen.Config{Events: 20_000, Cores: 2, Tasks: 5, Seed: 7}},
	{"v2", tracegen.Config{Events: 21_000, Cores: 2, Tasks: 5, Seed: 7}},
	{"v3", tracegen.Config{Events: 20_000, Cores: 2, Tasks: 5, Seed: 7, ExecScale: map[string]float64{SlowTask: 1.4}}},
}

// Written is a run written to a file, with what the generator knows.
type Written struct {
	Run
	Path  string
	Trace []byte
	Truth tracegen.Truth
}

// Write writes every run to dir/NAME.btf.
func Write(dir string) ([]Written, error) {
	var out []Written
	for _, r := range Runs {
		var buf bytes.Buffer
		truth, err := tracegen.WriteBTF(&buf, r.Config)
		if err != nil {
			return nil, err
		}
		path := filepath.Join(dir, r.Name+".btf")
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			return nil, err
		}
		out = append(out, Written{r, path, buf.Bytes(), truth})
	}
	return out, nil
}
