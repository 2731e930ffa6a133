package queries_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/bench"
	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/queries"
	"github.com/traceduck/traceduck/schema"
)

// TestSchedRowsEveryFormat: the rows of task_instances and sched_latency
// written at ingest (schema/sched.go) equal their SQL references exactly,
// for every format the generator writes, on traces of several seeds, sizes
// and core counts, and on the same traces cut at the end (mid-line, mid
// instance) and, for the text formats, at the start (instances and waits
// that began before the trace). Every run of a format goes into one
// database, so that the rows of several runs are compared together;
// some with small batches, which cross batch boundaries. No object may be
// left to the reference on these traces (sched_fallback): the comparison
// is of the rows written. And cpu_load, computed without the holders'
// names, is cpu_load_by_holder summed over them.
func TestSchedRowsEveryFormat(t *testing.T) {
	type gen struct {
		events, cores int
		seed          int64
	}
	gens := []gen{{2000, 0, 1}, {5000, 1, 7}, {9000, 3, 42}}
	if testing.Short() {
		gens = gens[:1]
	}
	for _, format := range bench.Formats {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			db := dbtest.Open(t)
			dir := t.TempDir()
			runs := 0
			for i, g := range gens {
				cores := g.cores
				if format == "toppers-asp" {
					cores = 1 // single core
				}
				path := filepath.Join(dir, fmt.Sprintf("gen%d.trace", i))
				tr, err := bench.Generate(path, bench.GenConfig{Format: format, Events: g.events, Cores: cores, Seed: g.seed})
				if err != nil {
					t.Fatal(err)
				}
				opt := ingest.Options{Format: tr.Format, Params: tr.Params}
				if i == 1 {
					opt.BatchRows = 97
				}
				dbtest.Ingest(t, db, path, opt)
				runs++
				data, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				for j, cut := range cuts(format, data, g.seed) {
					p := filepath.Join(dir, fmt.Sprintf("gen%d-cut%d.trace", i, j))
					if err := os.WriteFile(p, cut, 0o644); err != nil {
						t.Fatal(err)
					}
					o := opt
					o.SkipBad = true // a line or record cut in the middle
					if _, err := ingest.Path(context.Background(), db, p, o); err != nil {
						t.Logf("cut %d of %s: %v (not ingested)", j, path, err)
						continue
					}
					runs++
				}
			}
			// cpu_load is cpu_load_by_holder summed over the holders
			// (it is computed without them)
			for _, w := range []string{"1000000", "333333"} {
				byHolder := `SELECT run_id, cpu, window_start, window_end, coalesce(sum(ns) FILTER (WHERE busy), 0)::BIGINT,
					sum(ns)::BIGINT, coalesce(sum(ns) FILTER (WHERE busy), 0) / (window_end - window_start)
					FROM cpu_load_by_holder(` + w + `) GROUP BY run_id, cpu, window_start, window_end`
				if d := dbtest.Query(t, db.SQL(), `SELECT count(*) FROM ((FROM cpu_load(`+w+`) EXCEPT ALL `+byHolder+`)
					UNION ALL (`+byHolder+` EXCEPT ALL FROM cpu_load(`+w+`)))`); d != "0\n" {
					t.Errorf("cpu_load(%s) differs from cpu_load_by_holder summed in %s rows", w, d)
				}
			}
			c := dbtest.CheckSched(t, db.SQL())
			if c.Stored != int64(runs) || c.Fallback != 0 || c.Instances == 0 || c.Waits == 0 {
				t.Errorf("%d runs: %+v; want every run's rows stored, none left to the reference, and rows", runs, c)
			}
			t.Logf("%s: %d runs, %d instances, %d waits for a CPU", format, runs, c.Instances, c.Waits)
		})
	}
}

// cuts are the trace cut at awkward places: at the end, at a third and at
// two thirds of its bytes (text: in the middle of a line; kev: of a
// record; Baget: at the end of a block), and for the text formats without a part of its first lines
// (after the header, which the formats need).
func cuts(format string, data []byte, seed int64) [][]byte {
	var out [][]byte
	for _, f := range []int{3, 2} {
		n := len(data) * (f - 1) / f
		n -= int(seed) % 7 // not at a round offset
		if format == "baget" {
			n -= n % 1024 // the log is whole blocks: cut at one's end
		}
		if n > 0 {
			out = append(out, data[:n])
		}
	}
	switch format {
	case "kev", "baget":
		return out // binary: the start is a header of its own
	}
	// Keep the header lines (#..., ftrace's and DTrace's too), drop a
	// third of the lines after them.
	lines := bytes.SplitAfter(data, []byte("\n"))
	head := 0
	for head < len(lines) && (bytes.HasPrefix(lines[head], []byte("#")) || len(bytes.TrimSpace(lines[head])) == 0) {
		head++
	}
	if format == "qnx" {
		// the traceprinter header, to its KERNEL EVENTS line, and the two
		// CONTROL events of the first buffer (the time's high bits)
		for i, l := range lines {
			if bytes.Contains(l, []byte("-- KERNEL EVENTS --")) {
				head = i + 3
				break
			}
		}
	}
	drop := head + (len(lines)-head)/3
	for format == "qnx" && drop < len(lines) && !bytes.HasPrefix(lines[drop], []byte("t:")) {
		drop++ // not in the middle of an event of several lines
	}
	if drop < len(lines) {
		out = append(out, append(bytes.Join(lines[:head], nil), bytes.Join(lines[drop:], nil)...))
	}
	return out
}

// TestSchedClassMatchesSQL: schema's Go table of the scheduling classes,
// which the ingest classifies intervals with, is the macro sched_class of
// sched.sql, for every format, a set of kinds and states (each rule's
// states, other cases of them, near misses, the empty string and NULL).
func TestSchedClassMatchesSQL(t *testing.T) {
	db := dbtest.Open(t)
	formats := append(append([]string(nil), bench.Formats...), "tlv-archive", "chrome", "")
	kinds := []string{"task", "isr", "thread", "process", "cpu", "semaphore", "runnable", "Task", ""}
	states := []string{"running", "active", "ready", "waiting", "polling", "parking", "terminated", "RUNNING", "READY", "RECEIVE",
		"runnable", "sleeping", "off_cpu", "thrRun", "thrReady", "thrInterrupted", "thrNotReady", "thrrun",
		"state=RUNNING", "state=ACTIVE", "state=RUNNABLE", "State=Ready", "STATE=SPINNING", "state=parked", "state=WAITING",
		"state=", "state", "prio=5", " state=RUNNING", "state=RUNNING ", "STATE=PAR\u212aED", "running\x00", ""}
	var rows []string
	for _, f := range formats {
		for _, k := range kinds {
			for _, s := range append(states, "\x01NULL") {
				state := queries.Literal(s)
				if s == "\x01NULL" {
					state = "NULL"
				}
				rows = append(rows, fmt.Sprintf("(%s, %s, %s)", queries.Literal(f), queries.Literal(k), state))
			}
		}
	}
	got := dbtest.Query(t, db.SQL(), `SELECT f, k, s IS NULL, s, coalesce(sched_class(f, k, s), '') FROM (VALUES `+strings.Join(rows, ", ")+`) v(f, k, s)`)
	n := 0
	for _, line := range strings.Split(strings.TrimSuffix(got, "\n"), "\n") {
		p := strings.Split(line, " | ")
		if len(p) != 5 {
			t.Fatalf("%q", line)
		}
		null := p[2] == "true"
		if want := schema.SchedClassOf(p[0], p[1], p[3], null).String(); want != p[4] {
			t.Errorf("sched_class(%q, %q, %q): SQL %q, Go %q", p[0], p[1], p[3], p[4], want)
		}
		n++
	}
	if n != len(rows) {
		t.Errorf("%d of %d answered", n, len(rows))
	}
}
