package ftrace_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/ingest/ftrace"
	"golang.org/x/tools/txtar"
)

func head(b []byte) []byte { return b[:min(len(b), ingest.SniffSize)] }

func detect(data []byte) string {
	ing, err := ingest.Detect(ingest.NewSource("x", bytes.NewReader(data), int64(len(data))))
	if err != nil {
		return ""
	}
	return ing.Format().Name
}

// TestSniffFtrace: the real files, the hand-worked traces, the sample and
// the layouts the reader takes are recognized, and detected as ftrace in
// the whole chain.
func TestSniffFtrace(t *testing.T) {
	var traces [][]byte
	var names []string
	ext, _ := filepath.Glob(filepath.Join(externalDir, "*"))
	for _, p := range ext {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		traces, names = append(traces, b), append(names, p)
	}
	hand, _ := filepath.Glob("testdata/hand/*.txtar")
	for _, p := range hand {
		ar, err := txtar.ParseFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range ar.Files {
			if f.Name == "trace.txt" {
				traces, names = append(traces, f.Data), append(names, p)
			}
		}
	}
	sample, err := os.ReadFile("../../samples/ftrace/sched-4cpu.txt")
	if err != nil {
		t.Fatal(err)
	}
	traces, names = append(traces, sample), append(names, "sample")
	for _, s := range []string{
		"# tracer: function_graph\n",
		"version = 6\ncpus=2\n",
		"version = 6\nCPU 0 is empty\ncpus=2\nCPU:1 [12 EVENTS DROPPED]\n  bash-1 [001] 1.000001: sched_wakeup: comm=a pid=2\n",
		"  bash-1 [001] 1.000001: sched_wakeup: comm=a pid=2\n",
		"  bash-1 (      1) [001] d..2 1.000001: sched_wakeup: comm=a pid=2\n",
		"  <...>-4083  [004] ....   395.705673: sys_rt_sigprocmask -> 0x0\n",
	} {
		traces, names = append(traces, []byte(s)), append(names, s)
	}
	if len(hand) < 5 {
		t.Fatalf("%d hand traces", len(hand))
	}
	for i, b := range traces {
		if !(ftrace.Ingester{}).Sniff(head(b)) {
			t.Errorf("%s: not recognized", names[i])
		}
		if got := detect(b); got != "ftrace" {
			t.Errorf("%s: detected as %q", names[i], got)
		}
	}
}

// TestSniffOthers: no sample, test file or real trace of another format
// is taken for ftrace, by the sniffer alone or in the detection chain.
func TestSniffOthers(t *testing.T) {
	roots := []string{"../../samples", "../btf/testdata", "../qnx/testdata", "../tlv/testdata", "../dtrace/testdata", "../baget", "../chrome", "../../cmd/traceduck/testdata", "../../queries/testdata"}
	for _, f := range []string{"btf", "qnx", "toppers", "dtrace", "chrome-json"} {
		roots = append(roots, filepath.Join(externalDir, "..", f))
	}
	n := 0
	for _, root := range roots {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || strings.Contains(p, "/fuzz/") || strings.Contains(p, "/badinput/") || strings.Contains(p, "samples/ftrace/") {
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			n++
			if (ftrace.Ingester{}).Sniff(head(b)) {
				t.Errorf("%s taken for ftrace", p)
			}
			if got := detect(b); got == "ftrace" {
				t.Errorf("%s detected as ftrace", p)
			}
			return nil
		})
	}
	if n < 50 {
		t.Errorf("only %d files looked at", n)
	}
	for _, s := range []string{"", "hello\n", "# comment\nhello\n", "version = 6\nhello\n", "cpus=2\n", "0,a,0,T,b,0,start\n", "t:0x00000001 CPU:00 THREAD  :THCREATE pid:1 tid:1\n", "{\"traceEvents\":[]}", "[1000]Task.state=RUNNING\n"} {
		if (ftrace.Ingester{}).Sniff([]byte(s)) {
			t.Errorf("%q taken for ftrace", s)
		}
	}
	t.Logf("%d files refused", n)
}
