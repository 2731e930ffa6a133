package report_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	_ "github.com/traceduck/traceduck/ingest/btf"
	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/queries/report"
)

// TestResourceWaitP99: the metric resource_wait_p99 of two hand-written
// BTF runs. v1: issue 21's example, T2 waits 250 ns for Sem1. v2: T2
// waits 250 ns and T3 400 ns for Sem1 (p99 of 2 waits, nearest rank: the
// 2nd, 400), and T3 waits 100 ns for Sem2, which v1 does not have.
func TestResourceWaitP99(t *testing.T) {
	const v1 = `0,T1,0,SEM,Sem1,0,requestsemaphore
0,T1,0,SEM,Sem1,0,assigned
150,T2,0,SEM,Sem1,0,requestsemaphore
150,T2,0,SEM,Sem1,0,waiting
400,T1,0,SEM,Sem1,0,released
400,T2,0,SEM,Sem1,0,assigned
600,T2,0,SEM,Sem1,0,released
`
	const v2 = v1 + `700,T1,0,SEM,Sem1,0,requestsemaphore
700,T1,0,SEM,Sem1,0,assigned
700,T3,0,SEM,Sem1,0,requestsemaphore
700,T3,0,SEM,Sem1,0,waiting
1100,T1,0,SEM,Sem1,0,released
1100,T3,0,SEM,Sem1,0,assigned
1100,T3,0,SEM,Sem1,0,released
1200,T2,0,SEM,Sem2,0,requestsemaphore
1200,T2,0,SEM,Sem2,0,assigned
1250,T3,0,SEM,Sem2,0,requestsemaphore
1250,T3,0,SEM,Sem2,0,waiting
1350,T2,0,SEM,Sem2,0,released
1350,T3,0,SEM,Sem2,0,assigned
1400,T3,0,SEM,Sem2,0,released
`
	db := openSummarized(t)
	dir := t.TempDir()
	for _, v := range []struct{ name, text string }{{"v1", v1}, {"v2", v2}} {
		p := filepath.Join(dir, v.name+".btf")
		if err := os.WriteFile(p, []byte("#version 2.1.5\n"+v.text), 0o644); err != nil {
			t.Fatal(err)
		}
		dbtest.Ingest(t, db, p, ingest.Options{Name: v.name})
	}
	rep, err := report.Build(context.Background(), db.SQL(), report.Options{Database: "btf", Baseline: "v1"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range rep.Values {
		if v.Metric != "resource_wait_p99" {
			continue
		}
		s := v.Key + " " + fmtNum(v.Value)
		if v.Baseline != nil {
			s += " base " + fmtNum(*v.Baseline) + " change " + fmtNum(*v.Change)
		}
		got = append(got, s)
	}
	want := []string{"Sem1 250", "Sem1 400 base 250 change 150", "Sem2 100"}
	if len(got) != len(want) {
		t.Fatalf("resource_wait_p99: %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("resource_wait_p99: %q, want %q", got, want)
		}
	}
}

func fmtNum(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
