package bench

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func TestMain(m *testing.M) {
	if os.Getenv(ChildEnv) != "" {
		os.Exit(Child(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// A child's peak RSS is its own: 300 MB the parent holds do not show in
// it (they would in the Maxrss of wait4's rusage, see childResult).
func TestChildPeakRSSIsItsOwn(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "t.btf")
	tr, err := Generate(trace, GenConfig{Format: "btf", Events: 2000, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	held := make([]byte, 300<<20)
	for i := range held {
		held[i] = byte(i)
	}
	opt := Options{Exe: os.Args[0]}
	res, rss, err := opt.child("csv", "--db", filepath.Join(dir, "t.duckdb"), trace)
	if err != nil {
		t.Fatal(err)
	}
	runtime.KeepAlive(held)
	if res.Events != tr.Events || rss <= 0 || rss >= 250<<20 {
		t.Errorf("child: %d rows, peak RSS %d MB; want %d rows and its own RSS, well under the parent's 300 MB", res.Events, rss>>20, tr.Events)
	}
}
