package chrome_test

import (
	"bytes"
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/chromegen"
	"github.com/traceduck/traceduck/internal/dbtest"
)

// TestViewsOnChrome: the state and histogram views answer on a Chrome run
// what the generator's truth says: per thread and slice name, state_stats
// gives the count, total, maximum and nearest-rank median of the slice
// durations; at level 1 (slice name -> category) the total of a category
// is the total of its slices; hist_quantize over durations_in_state gives
// the power-of-two buckets of the durations of one slice name.
func TestViewsOnChrome(t *testing.T) {
	var b bytes.Buffer
	tr, err := chromegen.Write(&b, sampleConfig)
	if err != nil {
		t.Fatal(err)
	}
	db := dbtest.Open(t)
	dbtest.Ingest(t, db, samplePath, ingest.Options{})
	names := map[string]string{"1/1": "CrBrowserMain", "1/2": "Chrome_IOThread", "2/3": "CrRendererMain", "2/4": "Compositor"}

	durs := map[string][]int64{} // "thread state" -> complete durations
	cats := map[string]int64{}   // "thread category" -> total
	layout := map[string]int64{} // "thread bucket" -> Layout slices
	for _, s := range tr.Slices {
		if s.Truncated {
			continue
		}
		th := names[fmt.Sprintf("%d/%d", s.PID, s.TID)]
		d := s.End - s.Start
		durs[th+" "+s.Name] = append(durs[th+" "+s.Name], d)
		cat := "blink"
		if s.Name == "RunTask" {
			cat = "toplevel"
		}
		cats[th+" "+cat] += d
		if s.Name == "Layout" {
			layout[fmt.Sprintf("%s %d", th, int64(1)<<(63-leadingZeros(d)))]++
		}
	}

	var want []string
	for k, ds := range durs {
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		var total int64
		for _, d := range ds {
			total += d
		}
		rank := max(1, int(math.Ceil(0.5*float64(len(ds)))))
		want = append(want, fmt.Sprintf("%s %d %d %d %d", k, len(ds), total, ds[len(ds)-1], ds[rank-1]))
	}
	sort.Strings(want)
	got := dbtest.Query(t, db.SQL(), `SELECT object || ' ' || state || ' ' || count || ' ' || total_ns || ' ' || max_ns || ' ' || p50_ns
		FROM state_stats WHERE kind = 'thread' AND level = 0 AND count > 0 ORDER BY 1`)
	if w := strings.Join(want, "\n") + "\n"; got != w {
		t.Errorf("state_stats level 0:\n%s\nwant:\n%s", got, w)
	}

	want = want[:0]
	for k, total := range cats {
		want = append(want, fmt.Sprintf("%s %d", k, total))
	}
	sort.Strings(want)
	got = dbtest.Query(t, db.SQL(), `SELECT object || ' ' || state || ' ' || sum(total_ns)
		FROM state_stats WHERE kind = 'thread' AND level = 1 AND count > 0 GROUP BY object, state ORDER BY 1`)
	if w := strings.Join(want, "\n") + "\n"; got != w {
		t.Errorf("state_stats level 1 (categories):\n%s\nwant:\n%s", got, w)
	}

	want = want[:0]
	for k, n := range layout {
		want = append(want, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(want)
	got = dbtest.Query(t, db.SQL(), `SELECT key || ' ' || bucket || ' ' || count FROM hist_quantize(
		'SELECT object AS key, value FROM durations_in_state(''Layout'', object_kind := ''thread'')') ORDER BY 1`)
	if w := strings.Join(want, "\n") + "\n"; got != w || len(want) < 3 {
		t.Errorf("hist_quantize of Layout:\n%s\nwant:\n%s", got, w)
	}
}

func leadingZeros(x int64) int {
	n := 0
	for i := 63; i >= 0 && x&(1<<uint(i)) == 0; i-- {
		n++
	}
	return n
}
