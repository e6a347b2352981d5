//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package render

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"
)

// lockDir takes <parent>/.<name>.lock by creating it exclusively, waiting
// up to timeout for another render to remove it. Without flock a killed
// render leaves the file behind; the timeout's message says to remove it.
func lockDir(dir string, timeout time.Duration) (unlock func(), err error) {
	path := lockPath(dir)
	deadline := time.Now().Add(timeout)
	for {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			f.Close()
			return func() { _ = os.Remove(path) }, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("locking %s for the render: %w", dir, err)
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%w (if no render is running, a killed one left %s: remove it)", busy(dir, path, timeout), path)
		}
		time.Sleep(lockPoll)
	}
}

// ownedByUs cannot tell owners apart here; the name and marker decide.
func ownedByUs(fs.FileInfo) bool { return true }
