package render

// The lock a render holds on its output directory while it writes.

import (
	"fmt"
	"path/filepath"
	"time"
)

// lockPoll is how often a render waiting for another one retries.
const lockPoll = 50 * time.Millisecond

// lockPath is the lock file that serialises renders of dir: beside it,
// so that it survives dir's replacement.
func lockPath(dir string) string {
	return filepath.Join(filepath.Dir(dir), "."+filepath.Base(dir)+".lock")
}

func busy(dir, path string, timeout time.Duration) error {
	return fmt.Errorf("%s: another accelc render has held its lock (%s) for more than %s: wait for it to finish, then render again", dir, path, timeout)
}
