package schema

import (
	"testing"
	"time"
)

// BenchmarkLevelMerger times the run writer's state intervals with and
// without the merged levels above 0: 1M intervals of two processors
// whose holders come and go (the levels of the CPU model: 3 above 0),
// batches dropped.
func BenchmarkLevelMerger(b *testing.B) {
	b.Run("levels", func(b *testing.B) { benchLevels(b, true) })
	b.Run("no_levels", func(b *testing.B) { benchLevels(b, false) })
}

func benchLevels(b *testing.B, levels bool) {
	for i := 0; i < b.N; i++ {
		w := NewRunWriter(RunInfo{Name: "bench"}, &nopSink{rows: map[string]int64{}}, nil)
		w.lv.off = !levels
		cpus := w.CPUs()
		var holders []ObjectID
		for h := 0; h < 8; h++ {
			holders = append(holders, w.Object("task", string(rune('a'+h))))
		}
		irq := w.Object("isr", "tick")
		ts := int64(0)
		for k := 0; k < 250_000; k++ {
			for c := CPU(0); c < 2; c++ {
				cpus.Run(c, holders[(k+int(c)*3)%8], ts, Seq(k))
				if k%4 == 0 {
					cpus.Enter(c, irq, ts+3, Seq(k))
					cpus.Leave(c, irq, ts+5, Seq(k))
				}
				if k%3 == 0 {
					cpus.Idle(c, ts+7, Seq(k))
				}
			}
			ts += 10
		}
		if err := w.Finish(time.Unix(0, 0)); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(w.lv.rows), "level_rows")
	}
}
