package serve

// The Go memory limit set from the container's cgroup limit.

import (
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// memoryShare is the share of the container's memory limit the Go
// runtime is held to: the rest is for what it does not count (the
// binary's mapped text, the kernel's page tables and socket buffers) and
// for the moment between a collection being due and done.
const memoryShare = 0.85

// MemoryLimit is the Go memory limit for a container limited to limit
// bytes.
func MemoryLimit(limit int64) int64 { return int64(float64(limit) * memoryShare) }

// cgroupMemoryFiles are where a container's memory limit is read: cgroup
// v2's memory.max, then v1's memory.limit_in_bytes.
var cgroupMemoryFiles = []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}

// SetMemoryLimit holds the Go runtime to MemoryLimit of the container's
// memory limit, read from the cgroup the process runs in, so that the
// garbage collector works harder as the process nears it rather than the
// kernel killing it. GOMEMLIMIT, when set, wins and is left alone. It
// says what it did, for the log; "" when there is no limit to follow.
func SetMemoryLimit() string {
	return setMemoryLimit(os.Getenv("GOMEMLIMIT"), os.ReadFile, debug.SetMemoryLimit)
}

func setMemoryLimit(env string, read func(string) ([]byte, error), set func(int64) int64) string {
	if env != "" {
		return "Go memory limit from GOMEMLIMIT=" + env
	}
	for _, f := range cgroupMemoryFiles {
		data, err := read(f)
		if err != nil {
			continue
		}
		raw := strings.TrimSpace(string(data))
		limit, err := strconv.ParseInt(raw, 10, 64)
		// "max" (v2) or a page-rounded 2^63 (v1): no limit.
		if err != nil || limit <= 0 || limit >= 1<<60 {
			return ""
		}
		set(MemoryLimit(limit))
		return "Go memory limit " + mib(MemoryLimit(limit)) + ": " + strconv.Itoa(int(memoryShare*100)) + "% of the container's " + mib(limit) + " (" + f + ")"
	}
	return ""
}

func mib(n int64) string { return strconv.FormatInt(n>>20, 10) + " MiB" }
