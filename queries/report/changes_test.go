package report_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/queries/report"
	"github.com/traceduck/traceduck/queries/report/internal/demoruns"
)

// A task that no longer runs has no samples in the run: its values are
// gone, not changed. The largest changes list them apart, in the
// Markdown and on the page, and so a value that fell to 0 (-100%).
func TestLargestChangesNoSamples(t *testing.T) {
	const gone = "Task_50ms_2"
	dir := t.TempDir()
	runs, err := demoruns.Write(dir)
	if err != nil {
		t.Fatal(err)
	}
	// v4 is v1 without every line of the task.
	var kept []string
	for _, line := range strings.SplitAfter(string(runs[0].Trace), "\n") {
		if !strings.Contains(line, gone) {
			kept = append(kept, line)
		}
	}
	v4 := filepath.Join(dir, "v4.btf")
	if err := os.WriteFile(v4, []byte(strings.Join(kept, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	db := openSummarized(t)
	dbtest.Ingest(t, db, runs[0].Path, ingest.Options{Name: "v1"})
	dbtest.Ingest(t, db, v4, ingest.Options{Name: "v4"})
	rep, err := report.Build(context.Background(), db.SQL(), report.Options{Database: "runs.duckdb", Baseline: "v1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"running_share", "response_p99"} {
		if _, ok := rep.Value(m, gone, 2); ok {
			t.Fatalf("v4 has a %s of %s", m, gone)
		}
	}

	var md bytes.Buffer
	if err := rep.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	_, dropped, ok := strings.Cut(md.String(), "### Dropped to 0 or gone since v1\n\n")
	if !ok {
		t.Fatalf("the Markdown lists nothing dropped:\n%s", md.String())
	}
	want := `A value that fell to 0 (-100%, whatever it was), or that a run no longer has (no samples in this run: the metric found nothing to measure for the key, such as a task without a complete instance), is listed here apart from the changes: it tells that something stopped, not how much it changed.

| metric | key | v1 | v4 |
| --- | --- | ---: | ---: |
| running_share | Task_50ms_2 | 15.9% | no samples |
| response_p50 | Task_50ms_2 | 8.697 ms | no samples |
| response_p99 | Task_50ms_2 | 12.42 ms | no samples |
| response_max | Task_50ms_2 | 12.42 ms | no samples |
| sched_latency_p99 | Task_50ms_2 | 358.9 us | no samples |
`
	if dropped != want {
		t.Errorf("the Markdown's dropped values:\n%s\nwant:\n%s", dropped, want)
	}
	if changes, _, _ := strings.Cut(md.String(), "### Dropped"); strings.Contains(changes, gone) {
		t.Errorf("%s is among the changes:\n%s", gone, changes)
	}

	page := pageOf(t, rep)
	sec := page[strings.Index(page, `<h2 id="changes">`):strings.Index(page, `<h2 id="runs">`)]
	_, droppedHTML, ok := strings.Cut(sec, `<h3 id="dropped">Dropped to 0 or gone since v1</h3>`)
	if !ok || strings.Contains(strings.TrimSuffix(sec, droppedHTML), gone) {
		t.Fatalf("the page's largest changes do not list %s apart:\n%s", gone, sec)
	}
	if !strings.Contains(droppedHTML, "no samples in this run: the metric found nothing to measure for the key") {
		t.Errorf("the page does not explain the dropped values:\n%s", droppedHTML)
	}
	rows := regexp.MustCompile(`<tr><td><a href="#metric-([a-z_0-9]+)">[^<]*</a></td><td>([^<]*)</td><td class="n">[^<]*</td><td class="n missing" title="no samples in this run: [^"]*">no samples</td></tr>`).FindAllStringSubmatch(droppedHTML, -1)
	if len(rows) != 5 {
		t.Errorf("%d rows of no samples, want 5:\n%s", len(rows), droppedHTML)
	}
	for _, r := range rows {
		if r[2] != gone {
			t.Errorf("%s of %s has no samples, want only %s", r[1], r[2], gone)
		}
	}
}

// In the three runs, Task_2ms_4's p99 wait for a CPU fell to 0 in v3
// (328 of its 329 waits are 0): the page lists it apart from the
// changes, and its trend no longer comes first in its plot, as a -100%
// that outranked every real change.
func TestLargestChangesDropToZero(t *testing.T) {
	page := pageOf(t, regressionReport(t))
	sec := page[strings.Index(page, `<h2 id="changes">`):strings.Index(page, `<h2 id="runs">`)]
	changes, dropped, ok := strings.Cut(sec, `<h3 id="dropped">`)
	if !ok {
		t.Fatalf("nothing listed as dropped:\n%s", sec)
	}
	row := `<tr><td><a href="#metric-sched_latency_p99">sched_latency_p99</a></td><td>Task_2ms_4</td>`
	if strings.Contains(changes, row) || !strings.Contains(dropped, row) {
		t.Errorf("Task_2ms_4's sched_latency_p99 is not listed apart:\n%s", sec)
	}
	if !strings.Contains(dropped, `title="0 against 8.857 us in v1: -8.857 us (-100%): dropped to 0">0<span class="chg">-100%</span>`) {
		t.Errorf("the dropped cell:\n%s", dropped)
	}
	for _, p := range plotsOf(t, page) {
		if strings.HasPrefix(p.title, "sched_latency_p99") && (len(p.legend) == 0 || p.legend[0].name == "Task_2ms_4") {
			t.Errorf("%q draws first %v", p.title, p.legend)
		}
	}
}
