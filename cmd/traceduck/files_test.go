//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestReportDiskFull writes report --html and --json onto a 64 KiB tmpfs
// that is nearly full: each fails with one line saying so, the report
// that was there is left as it was, and no half file or temporary file is
// left behind. It needs the right to mount (root) and is skipped without
// it.
func TestReportDiskFull(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "t.duckdb")
	mustRun(t, dir, nil, "ingest", "--db", db, seedSample)
	mnt := filepath.Join(dir, "small")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=64k"); err != nil {
		t.Skipf("cannot mount a 64 KiB tmpfs to fill (%v): the disk-full test needs root", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(mnt, 0); err != nil {
			t.Errorf("unmount %s: %v", mnt, err)
		}
	})
	for _, flag := range []string{"--html", "--json"} {
		path := filepath.Join(mnt, "report"+strings.TrimPrefix(flag, "--"))
		const old = "the report of yesterday\n"
		if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
			t.Fatal(err)
		}
		// Fill the rest but for 4 KiB: the report is larger than that and
		// the page of the old one.
		filler := filepath.Join(mnt, "filler")
		f, err := os.Create(filler)
		if err != nil {
			t.Fatal(err)
		}
		for {
			var st syscall.Statfs_t
			if err := syscall.Statfs(mnt, &st); err != nil {
				t.Fatal(err)
			}
			free := int64(st.Bavail) * st.Bsize
			if free <= 4<<10 {
				break
			}
			if _, err := f.Write(make([]byte, min(free-4<<10, 4096))); err != nil {
				t.Fatal(err)
			}
		}
		f.Close()

		r := td(t, dir, "report", "--db", db, flag, path)
		want := "traceduck: " + path + ": disk full, nothing of it was written: no space left on device\n"
		if r.code != 1 || r.stderr != want {
			t.Errorf("report %s on a full disk: %s\nwant exit 1 and %q", flag, r, want)
		}
		if got, _ := os.ReadFile(path); string(got) != old {
			t.Errorf("report %s on a full disk changed the report that was there: %d bytes", flag, len(got))
		}
		ents, _ := os.ReadDir(mnt)
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		if len(names) != 2 {
			t.Errorf("report %s on a full disk left %q, want only the old report and the filler", flag, names)
		}
		os.Remove(filler)

		// With room, the same command writes the report.
		mustRun(t, dir, nil, "report", "--db", db, flag, path)
		if got, _ := os.ReadFile(path); len(got) < 8<<10 {
			t.Errorf("report %s: %d bytes, expected a report of more than 8 KiB", flag, len(got))
		}
		os.Remove(path)
	}
}
