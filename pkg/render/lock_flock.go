//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package render

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
	"time"
)

// lockDir takes an exclusive flock on <parent>/.<name>.lock, waiting up
// to timeout for another render to release it. The kernel releases it
// when the process dies, so a killed render never leaves dir locked. The
// lock file stays: removing it would let two renders lock two files.
func lockDir(dir string, timeout time.Duration) (unlock func(), err error) {
	path := lockPath(dir)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("locking %s for the render: %w", dir, err)
	}
	deadline := time.Now().Add(timeout)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() {
				_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
				f.Close()
			}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, fmt.Errorf("locking %s for the render (%s): %w", dir, path, err)
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, busy(dir, path, timeout)
		}
		time.Sleep(lockPoll)
	}
}

// ownedByUs reports whether this user owns fi.
func ownedByUs(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}
