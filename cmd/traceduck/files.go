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
func writeFileAtomic(path string, write func(io.Writer) error) error {
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
