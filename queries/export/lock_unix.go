//go:build unix

package export

import (
	"errors"
	"os"
	"syscall"
)

// canJudge says whether a claim whose job died can be told from a live
// one here: flock(2) locks are released by the kernel when their process
// ends, however it ends (on NFS, flock is a whole-file POSIX lock that
// the server releases when the client's lease expires).
const canJudge = true

// lockFile takes the exclusive lock of f, waiting for it.
func lockFile(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// tryLockFile takes the exclusive lock of f if no one holds it.
func tryLockFile(f *os.File) (bool, error) {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, syscall.EWOULDBLOCK):
			return false, nil
		case !errors.Is(err, syscall.EINTR):
			return false, err
		}
	}
}
