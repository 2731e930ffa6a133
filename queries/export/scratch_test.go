//go:build unix

package export

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"
)

// TestScratchSweep: a new scratch folder removes those of dead jobs (a
// lock file nobody holds) and nothing else: not a live job's, not a
// folder without a lock file, not a file or folder of another name.
func TestScratchSweep(t *testing.T) {
	parent := t.TempDir()
	mk := func(name string, lock bool) string {
		dir := filepath.Join(parent, name)
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "run.duckdb"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if lock {
			if err := os.WriteFile(filepath.Join(dir, scratchLock), []byte("pid 1\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	mk(scratchPrefix+"dead1", true)
	mk(scratchPrefix+"dead2", true)
	mk(scratchPrefix+"older", false) // no lock file: an older traceduck's, or being made
	mk("other-dead", true)           // not a scratch folder's name
	if err := os.WriteFile(filepath.Join(parent, scratchPrefix+"file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}

	live, err := NewScratch(parent)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(live.Dir) != parent {
		t.Fatalf("scratch folder %s is not under %s", live.Dir, parent)
	}
	want := []string{filepath.Base(live.Dir), "other-dead", scratchPrefix + "file", scratchPrefix + "older"}
	sort.Strings(want)
	if got := names(t, parent); !slices.Equal(got, want) {
		t.Fatalf("after the first scratch: %v, want %v", got, want)
	}

	// A second job leaves the first's folder, which is live.
	second, err := NewScratch(parent)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(live.Dir); err != nil {
		t.Fatalf("a live job's scratch folder was removed: %v", err)
	}

	// Closing removes the folder; a closed job's folder is gone even if
	// another job sweeps again.
	if err := live.Close(); err != nil {
		t.Fatal(err)
	}
	if err := live.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := os.Stat(live.Dir); !os.IsNotExist(err) {
		t.Fatalf("a closed job's scratch folder is still there: %v", err)
	}
	if err := second.Close(); err != nil {
		t.Fatal(err)
	}
	want = []string{"other-dead", scratchPrefix + "file", scratchPrefix + "older"}
	if got := names(t, parent); !slices.Equal(got, want) {
		t.Fatalf("after both closed: %v, want %v", got, want)
	}
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var n []string
	for _, e := range ents {
		n = append(n, e.Name())
	}
	sort.Strings(n)
	return n
}
