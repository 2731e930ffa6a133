//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReportDiskFull writes report --html and --json onto a 64 KiB tmpfs
// that is nearly full: each fails with one line saying so, the report
// that was there is left as it was, and no half file or temporary file is
// left behind. It needs the right to mount (root) and is skipped without
// it.
func TestReportDiskFull(t *testing.T) {
	t.Parallel()
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

// TestReportToSpecialFiles: a report written to a named pipe goes into
// the pipe (a reader gets it) and the pipe stays one; to a device (a
// copy of /dev/null's node, made where root may) the device stays; to a
// symbolic link, the link stays and its target is the report. Renaming
// over them, as a regular file is replaced, once made root's /dev/null a
// regular file.
func TestReportToSpecialFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "t.duckdb")
	mustRun(t, dir, nil, "ingest", "--db", db, seedSample)

	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	got := make(chan []byte, 1)
	go func() {
		b, _ := os.ReadFile(fifo) // blocks until the writer opens it
		got <- b
	}()
	mustRun(t, dir, nil, "report", "--db", db, "--json", fifo)
	select {
	case b := <-got:
		if !strings.Contains(string(b), `"metrics"`) {
			t.Errorf("the pipe's reader got %.200q", b)
		}
	case <-time.After(30 * time.Second):
		t.Errorf("nothing was written into the pipe")
		if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close() // let the reader go
		}
	}
	if st, err := os.Lstat(fifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the pipe is no longer one: %v %v", st.Mode(), err)
	}

	target := filepath.Join(dir, "reports", "r.html")
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "latest.html")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	mustRun(t, dir, nil, "report", "--db", db, "--html", link)
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link is no longer one: %v", err)
	}
	if b, err := os.ReadFile(target); err != nil || !strings.Contains(string(b), "<html") {
		t.Errorf("the link's target: %v %.100q", err, b)
	}

	dev := filepath.Join(dir, "null")
	if err := syscall.Mknod(dev, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		t.Logf("mknod (root only): %v; the device case is not run", err)
		return
	}
	mustRun(t, dir, nil, "export", "--db", db, "--run", "1", "--chrome", dev)
	if st, err := os.Lstat(dev); err != nil || st.Mode()&os.ModeCharDevice == 0 {
		t.Errorf("the device is no longer one: %v %v", st.Mode(), err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".null.*")); len(left) > 0 {
		t.Errorf("left beside the device: %v", left)
	}
}
