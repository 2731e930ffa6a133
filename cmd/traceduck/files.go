package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// writeFileAtomic writes a whole output file (a report, a Chrome trace)
// as write produces it: into a temporary file beside path, synced, then
// renamed over path. A write that fails (a full disk, an error of write
// itself, an interrupt) leaves no half file under path, and a file that
// was there is left as it was.
//
// Only a regular file (or none) is replaced so: a path that is a device or
// a named pipe (/dev/null, /dev/stdout, a FIFO a viewer reads) is written
// in place, since renaming over it would replace the device node itself
// (as root, /dev/null became a regular file); a symbolic link is followed,
// and its target replaced, the link kept.
func writeFileAtomic(path string, write func(io.Writer) error) error {
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		if st.IsDir() {
			return fmt.Errorf("%s: is a directory, not a file", path)
		}
		return writeInPlace(path, write)
	}
	path = followLinks(path)
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	name := tmp.Name()
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(name)
		}
	}()
	if err := tmp.Chmod(0o644); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	err = write(tmp)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	done = true
	if err == nil {
		err = os.Rename(name, path)
	}
	if err != nil {
		os.Remove(name)
		return fileWriteError(path, name, err)
	}
	return nil
}

// fileWriteError words a failed writeFileAtomic: the path the user gave, not
// the temporary file's, and that nothing of it was written.
func fileWriteError(path, tmp string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == tmp {
		err = pe.Err
	}
	if errors.Is(err, syscall.ENOSPC) {
		return fmt.Errorf("%s: disk full, nothing of it was written: %w", path, err)
	}
	return fmt.Errorf("%s: nothing of it was written: %w", path, err)
}

// writeInPlace writes to a path that is not a regular file (a device, a
// named pipe) as it is.
func writeInPlace(path string, write func(io.Writer) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	err = write(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// followLinks is the file a chain of symbolic links at path names (its
// last link's target, which need not exist yet); path when it is no link.
func followLinks(path string) string {
	for i := 0; i < 40; i++ {
		st, err := os.Lstat(path)
		if err != nil || st.Mode()&os.ModeSymlink == 0 {
			return path
		}
		t, err := os.Readlink(path)
		if err != nil {
			return path
		}
		if !filepath.IsAbs(t) {
			t = filepath.Join(filepath.Dir(path), t)
		}
		path = t
	}
	return path
}
