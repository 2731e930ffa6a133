package qnx_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/internal/qnxenc"
	"github.com/traceduck/traceduck/internal/tracegen"
)

// TestKevSameAsText: a generated trace written as .kev (little and big
// endian, combine events interleaved with others) and as traceprinter text
// gives identical events, objects and state intervals, and the .kev run
// matches the generator's ground truth too.
func TestKevSameAsText(t *testing.T) {
	for _, cfg := range truthConfigs {
		for _, v := range []struct {
			big        bool
			interleave int
		}{{false, 0}, {true, 6}} {
			t.Run(fmt.Sprintf("cpus%d-seed%d-big%v-interleave%d", cfg.CPUs, cfg.Seed, v.big, v.interleave), func(t *testing.T) {
				h, events, truth, err := tracegen.GenerateQNX(cfg)
				if err != nil {
					t.Fatal(err)
				}
				if v.big {
					for i, a := range h.Attrs {
						if a[0] == "LITTLE_ENDIAN" {
							h.Attrs[i] = [2]string{"BIG_ENDIAN", "TRUE"}
						}
					}
				}
				opt := qnxenc.KevOptions{Interleave: v.interleave}
				dir := t.TempDir()
				text := writeTrace(t, dir, "trace.txt", h, events, func(f *os.File, h qnxenc.Header, ev []qnxenc.Event) error { return qnxenc.WriteText(f, h, ev) })
				kev := writeTrace(t, dir, "trace.kev", h, events, func(f *os.File, h qnxenc.Header, ev []qnxenc.Event) error {
					return qnxenc.WriteKevOptions(f, h, ev, opt)
				})
				db := dbtest.Open(t)
				rt := dbtest.Ingest(t, db, text, ingest.Options{})
				rk := dbtest.Ingest(t, db, kev, ingest.Options{})
				if rt.Format != "qnx" || rk.Format != "kev" {
					t.Fatalf("detected %s and %s", rt.Format, rk.Format)
				}
				for _, q := range []string{
					// src_line is a line in one and a byte offset in the other
					"SELECT seq, ts, ts_raw, cpu, class, event, context_id, object_id, value, args, eco_id FROM events WHERE run_id = ? ORDER BY seq",
					"SELECT object_id, kind, name, native_id, pid, parent_id, attrs FROM objects WHERE run_id = ? ORDER BY object_id",
					"SELECT object_id, instance, state, start_ts, end_ts, dur, cpu, start_seq, end_seq, truncated FROM state_intervals WHERE run_id = ? ORDER BY object_id, instance, start_seq",
					"SELECT kind, state, level, parent_state FROM state_levels WHERE run_id = ? ORDER BY ALL",
					"SELECT class, event, context_id, object_id, count FROM eco_triples WHERE run_id = ? ORDER BY eco_id",
				} {
					a, b := dbtest.Query(t, db.SQL(), q, rt.RunID), dbtest.Query(t, db.SQL(), q, rk.RunID)
					if a != b {
						t.Errorf("%s:\n%s", q, firstDiff(a, b))
					}
				}
				checkTruth(t, db, rk.RunID, truth)
			})
		}
	}
}
