package serve

import (
	"io/fs"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestSetMemoryLimit: the Go memory limit follows the container's cgroup
// (v2, else v1), unless GOMEMLIMIT says otherwise; no limit, none set.
func TestSetMemoryLimit(t *testing.T) {
	for _, c := range []struct {
		name  string
		env   string
		files map[string]string
		want  int64
		msg   string
	}{
		{"v2", "", map[string]string{"/sys/fs/cgroup/memory.max": "536870912\n"}, 536870912 * 85 / 100,
			"Go memory limit 435 MiB: 85% of the container's 512 MiB (/sys/fs/cgroup/memory.max)"},
		{"v1", "", map[string]string{"/sys/fs/cgroup/memory/memory.limit_in_bytes": "1073741824\n"}, 1073741824 * 85 / 100,
			"Go memory limit 870 MiB: 85% of the container's 1024 MiB (/sys/fs/cgroup/memory/memory.limit_in_bytes)"},
		{"v2 without a limit", "", map[string]string{"/sys/fs/cgroup/memory.max": "max\n"}, -1, ""},
		{"v1 without a limit", "", map[string]string{"/sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712\n"}, -1, ""},
		{"no cgroup", "", nil, -1, ""},
		{"GOMEMLIMIT wins", "300MiB", map[string]string{"/sys/fs/cgroup/memory.max": "536870912\n"}, -1, "Go memory limit from GOMEMLIMIT=300MiB"},
	} {
		t.Run(c.name, func(t *testing.T) {
			read := func(name string) ([]byte, error) {
				if data, ok := c.files[name]; ok {
					return []byte(data), nil
				}
				return nil, fs.ErrNotExist
			}
			set := int64(-1)
			msg := setMemoryLimit(c.env, read, func(n int64) int64 { set = n; return 0 })
			assert.Equal(t, c.want, set)
			assert.Equal(t, c.msg, msg)
		})
	}
}
