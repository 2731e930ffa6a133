//go:build linux

package safety_test

import (
	"fmt"
	"github.com/traceduck/traceduck/internal/clitest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

// TestDiskFull ingests into a database on a 12 MiB tmpfs until the disk
// is full: that ingest fails with one line saying so, the database opens
// and holds every run ingested before it, exactly, and once the file
// system is made larger the same ingest succeeds. It needs the right to
// mount (root) and is skipped without it.
func TestDiskFull(t *testing.T) {
	dir := t.TempDir()
	mnt := filepath.Join(dir, "small")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	// 12 MiB: a database of one small run takes 6 MB, 1.75 of them the
	// seven tables of its report summary (a block of 256 KiB each); with
	// 8 MiB the second run's WAL did not fit.
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=12m"); err != nil {
		t.Skipf("cannot mount a 12 MiB tmpfs to fill (%v): the disk-full test needs root", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(mnt, 0); err != nil {
			t.Errorf("unmount %s: %v", mnt, err)
		}
	})
	db := filepath.Join(mnt, "t.duckdb")
	c := &crashCheck{t: t, dir: dir, db: db}
	clitest.MustRun(t, dir, nil, "ingest", "--db", db, clitest.SeedSample)
	c.commit(1)

	// Each trace takes about 0.5 MB of the database: the disk is full
	// after a few.
	failed := ""
	var failure clitest.Result
	for i := 2; i < 40 && failed == ""; i++ {
		trace := filepath.Join(dir, fmt.Sprintf("part%d.btf", i))
		writeBigBTFSeed(t, trace, 15_000, int64(i))
		r := clitest.Td(t, dir, "ingest", "--db", db, trace)
		switch {
		case r.Code == 0:
			c.commit(int32(i))
		default:
			failed, failure = trace, r
		}
	}
	if failed == "" {
		t.Fatal("the disk never got full")
	}
	if len(c.runs) < 2 {
		t.Fatalf("the first trace did not fit already: %s", failure)
	}
	want := regexp.MustCompile(`^traceduck: ` + regexp.QuoteMeta(failed) + `: disk full, nothing of it was written: .*No space left on device\n$`)
	if failure.Code != 1 || !want.MatchString(failure.Stderr) {
		t.Errorf("ingest on a full disk: %s\nwant exit 1 and one line matching %s", failure, want)
	}
	t.Logf("after %d runs: %s", len(c.runs), strings.TrimSpace(failure.Stderr))
	c.check("after the disk got full")

	if err := syscall.Mount("tmpfs", mnt, "tmpfs", syscall.MS_REMOUNT, "size=64m"); err != nil {
		t.Fatalf("make the tmpfs larger: %v", err)
	}
	out := clitest.MustRun(t, dir, nil, "ingest", "--db", db, failed)
	next := c.runs[len(c.runs)-1] + 1
	if !strings.HasPrefix(out, fmt.Sprintf("run %d: %s (btf, ", next, failed)) {
		t.Errorf("ingest once there is room: %q", out)
	}
	c.commit(next)
	c.check("after the ingest that fits")
}
