package export

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
)

// put writes the files of a dataset, names relative to dir; a name ending
// in / is a folder.
func put(t *testing.T, dir string, names ...string) {
	t.Helper()
	for _, n := range names {
		p := filepath.Join(dir, n)
		if strings.HasSuffix(n, "/") {
			if err := os.MkdirAll(p, 0o777); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o666); err != nil {
			t.Fatal(err)
		}
	}
}

// deadJob makes the job file of a job that died (a file nobody holds
// locked) and links the claims to it.
func deadJob(t *testing.T, dir, token string, claims ...string) {
	t.Helper()
	put(t, dir, filepath.Join(claimsDir, jobPrefix+token))
	for _, c := range claims {
		if err := os.Link(filepath.Join(dir, claimsDir, jobPrefix+token), filepath.Join(dir, claimsDir, c)); err != nil {
			t.Fatal(err)
		}
	}
}

// sorted is names sorted, one a line.
func sorted(names ...string) string {
	sort.Strings(names)
	return strings.Join(names, "\n")
}

// tree lists the files and empty folders under dir, sorted.
func tree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			if ents, _ := os.ReadDir(p); len(ents) == 0 && rel != "." {
				out = append(out, rel+"/")
			}
			return nil
		}
		out = append(out, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// TestCleanup: a new writer clears what dead jobs left (the partitions of
// their runs that are not committed, temporary files in the runs they
// had committed, their temporary files, their claims), the partitions of
// runs neither committed nor claimed and temporary files of no job, and
// leaves alone what a live job holds and files that are not traceduck's.
func TestCleanup(t *testing.T) {
	if !canJudge {
		t.Skip("no lock that dies with its process here")
	}
	dir := t.TempDir()
	put(t, dir, "runs/run_id=1/part-0.parquet", "events/run_id=1/part-0.parquet")
	live, err := NewWriter(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	id, err := live.claimNewRun()
	if err != nil {
		t.Fatal(err)
	}
	if id != 2 {
		t.Errorf("the live job claimed run_id %d, want 2", id)
	}
	if _, busy, err := live.claim("sha256=bbbb"); err != nil || busy != "" {
		t.Fatalf("claim sha256=bbbb: %q, %v", busy, err)
	}
	liveTmp := "part-0.parquet." + live.token + ".tmp"
	put(t, dir, "events/run_id=2/"+liveTmp, "overhead_items/"+liveTmp, "views.sql."+live.token+".tmp")

	put(t, dir,
		// Run 1 is committed: a dead job was replacing it.
		"events/run_id=1/part-0.parquet.dead0000dead0000.tmp",
		// Run 3, half written by the dead job.
		"events/run_id=3/part-0.parquet", "objects/run_id=3/part-0.parquet.dead0000dead0000.tmp",
		"runs/run_id=3/part-0.parquet.dead0000dead0000.tmp",
		"views.sql.dead0000dead0000.tmp",
		// Run 4, neither committed nor claimed (an older traceduck's), and
		// run 5's empty folder of runs (an older traceduck's claim).
		"events/run_id=4/part-0.parquet", "runs/run_id=5/",
		// Temporary files of an older traceduck (pid-count).
		"overhead_items/part-0.parquet.123-4.tmp", "views.sql.999.tmp",
		// Not traceduck's.
		"notes.tmp", "events/README.tmp",
	)
	deadJob(t, dir, "dead0000dead0000", "run_id=1", "run_id=3", "sha256=aaaa")

	w, err := NewWriter(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(tree(t, dir), "\n")
	want := sorted(
		claimsDir+"/"+jobPrefix+live.token,
		claimsDir+"/"+jobPrefix+w.token,
		claimsDir+"/run_id=2",
		claimsDir+"/sha256=bbbb",
		"events/README.tmp",
		"events/run_id=1/part-0.parquet",
		"events/run_id=2/"+liveTmp,
		"notes.tmp",
		"objects/",
		"overhead_items/"+liveTmp,
		"runs/run_id=1/part-0.parquet",
		"views.sql."+live.token+".tmp",
	)
	if got != want {
		t.Errorf("after the cleanup:\n%s\nwant:\n%s", got, want)
	}
	w.Close()

	// The live job ends without its files (as if killed after Close): a
	// later writer clears them.
	live.Close()
	w, err = NewWriter(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	got = strings.Join(tree(t, dir), "\n")
	want = strings.Join([]string{
		claimsDir + "/" + jobPrefix + w.token,
		"events/README.tmp",
		"events/run_id=1/part-0.parquet",
		"notes.tmp",
		"objects/",
		"overhead_items/",
		"runs/run_id=1/part-0.parquet",
	}, "\n")
	if got != want {
		t.Errorf("after the live job ended:\n%s\nwant:\n%s", got, want)
	}
}

// TestClaimNewRunConcurrent: jobs claiming run_ids at once (each clearing
// the dataset first, while the others hold claims) never share one, and
// skip the runs the dataset holds.
func TestClaimNewRunConcurrent(t *testing.T) {
	dir := t.TempDir()
	put(t, dir, "runs/run_id=1/part-0.parquet", "events/run_id=1/part-0.parquet")
	const jobs = 16
	var wg sync.WaitGroup
	ids := make([]int32, jobs)
	errs := make([]error, jobs)
	writers := make([]*Writer, jobs)
	for i := 0; i < jobs; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			w, err := NewWriter(dir, nil)
			if err != nil {
				errs[i] = err
				return
			}
			writers[i] = w
			ids[i], errs[i] = w.claimNewRun()
		}(i)
	}
	wg.Wait()
	seen := map[int32]bool{}
	for i := range ids {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if seen[ids[i]] {
			t.Errorf("run_id %d claimed twice", ids[i])
		}
		seen[ids[i]] = true
	}
	for id := int32(2); id <= jobs+1; id++ {
		if !seen[id] {
			t.Errorf("run_id %d not claimed; claimed %v", id, ids)
		}
	}
	for _, w := range writers {
		w.Close()
	}
	if ents, _ := os.ReadDir(filepath.Join(dir, claimsDir)); len(ents) != 0 {
		t.Errorf("claims left after every job ended: %v", ents)
	}
}

func TestTableFolder(t *testing.T) {
	for name, want := range map[string]string{
		"events":   "events",
		"My_Table": "My_Table",
		"../../x":  "%2E%2E%2F%2E%2E%2Fx",
		"/abs/p":   "%2Fabs%2Fp",
		".claims":  "%2Eclaims",
		"a b":      "a%20b",
		"100%":     "100%25",
		"run_id=1": "run_id%3D1",
		"ds-*[1]?": "ds%2D%2A%5B1%5D%3F",
		`C:\x`:     "C%3A%5Cx",
		"é":        "%C3%A9",
	} {
		if got := tableFolder(name); got != want {
			t.Errorf("tableFolder(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestTempToken(t *testing.T) {
	for name, want := range map[string]string{
		"part-0.parquet.0123456789abcdef.tmp": "0123456789abcdef",
		"views.sql.0123456789abcdef.tmp":      "0123456789abcdef",
		"part-0.parquet.123-4.tmp":            "123-4",
		"views.sql.999.tmp":                   "999",
		"notes.tmp":                           "",
		"part-0.parquet.tmp":                  "",
		"part-0.parquet":                      "",
		"other.parquet.0123.tmp":              "",
	} {
		got, ok := tempToken(name)
		if got != want || ok != (want != "") {
			t.Errorf("tempToken(%q) = %q, %v; want %q", name, got, ok, want)
		}
	}
}
