package export

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// scratchPrefix names the scratch folders of `ingest --parquet` jobs in
// the system's temporary directory.
const scratchPrefix = "traceduck-ingest-"

// scratchLock is the file in a scratch folder that its job holds locked
// (flock) for as long as it runs, as a dataset's job file (Writer): a
// scratch folder whose lock nobody holds is a dead job's.
const scratchLock = "job.lock"

// Scratch is the private folder of one `ingest --parquet` job, where each
// run is ingested into a database before it moves into the dataset. A
// job killed with SIGKILL cannot remove it, and a run's database can be
// gigabytes (at 100M events, 5 GB; on a tmpfs, of memory), so the next
// job clears the folders of dead ones (NewScratch).
type Scratch struct {
	Dir  string
	lock *os.File
}

// NewScratch makes a scratch folder under parent (the system's temporary
// directory when empty), holding its lock, after removing the scratch
// folders of dead jobs there. Folders without a lock file (an older
// traceduck's, or one another job is making) are left alone.
func NewScratch(parent string) (*Scratch, error) {
	if parent == "" {
		parent = os.TempDir()
	}
	sweepScratch(parent)
	for attempt := 0; attempt < 100; attempt++ {
		dir, err := os.MkdirTemp(parent, scratchPrefix)
		if err != nil {
			return nil, err
		}
		f, _, err := createLocked(filepath.Join(dir, scratchLock))
		if err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		if f == nil {
			continue // another job's sweep took it for a dead job's: make another
		}
		fmt.Fprintf(f, "pid %d\n", os.Getpid())
		return &Scratch{Dir: dir, lock: f}, nil
	}
	return nil, fmt.Errorf("%s: could not make a scratch folder", parent)
}

// Close removes the folder, then drops its lock.
func (s *Scratch) Close() error {
	if s.lock == nil {
		return nil
	}
	err := os.RemoveAll(s.Dir)
	s.lock.Close()
	s.lock = nil
	return err
}

// sweepScratch removes the scratch folders under parent whose job is
// dead. It is best effort: a folder it cannot judge or remove stays, and
// the job goes on.
func sweepScratch(parent string) {
	if !canJudge {
		return
	}
	ents, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range ents {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), scratchPrefix) {
			continue
		}
		dir := filepath.Join(parent, e.Name())
		f, err := os.OpenFile(filepath.Join(dir, scratchLock), os.O_RDWR, 0)
		if err != nil {
			continue // not ours to judge: no lock file, or another user's
		}
		// Held locked while the folder is removed, so that its job, if it
		// was only making it, sees its lock file gone and makes another.
		if ok, err := tryLockFile(f); err == nil && ok {
			os.RemoveAll(dir)
		}
		f.Close()
	}
}
