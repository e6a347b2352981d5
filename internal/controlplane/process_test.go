package controlplane

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A server that exits because its port was taken is reported as a bind
// conflict, which Start retries on other ports.
func TestWaitForBindConflict(t *testing.T) {
	cp := &ControlPlane{dir: t.TempDir()}
	p, err := cp.run("server", "/bin/sh", "-c", "echo 'listen tcp 127.0.0.1:1234: bind: address already in use' >&2; exit 1")
	require.NoError(t, err)
	err = cp.waitFor(t.Context(), p, func(context.Context) error { return errors.New("not yet") })
	assert.ErrorIs(t, err, errBindConflict)
}

// Any other early exit is an error; the log holds why.
func TestWaitForExit(t *testing.T) {
	cp := &ControlPlane{dir: t.TempDir()}
	p, err := cp.run("server", "/bin/sh", "-c", "echo 'bad flag --frobnicate' >&2; exit 2")
	require.NoError(t, err)
	err = cp.waitFor(t.Context(), p, func(context.Context) error { return errors.New("not yet") })
	require.Error(t, err)
	assert.NotErrorIs(t, err, errBindConflict)
	assert.EqualError(t, err, "server exited: exit status 2")
	assert.Equal(t, "bad flag --frobnicate", p.tail())
}

// stop ends the whole process group: the server and what it started.
func TestStopProcessGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	p, err := startProcess(dir, "server", "/bin/sh", "-c", "sleep 300 & echo $! > "+pidFile+"; wait")
	require.NoError(t, err)
	var child int
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(pidFile)
		if err != nil || !strings.HasSuffix(string(b), "\n") {
			return false
		}
		child, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil
	}, 5*time.Second, 10*time.Millisecond)

	require.NoError(t, p.stop())
	done, _ := p.exited()
	assert.True(t, done)
	// The child was in the group: it is gone, or dead and not yet reaped.
	assert.Eventually(t, func() bool { return dead(child) }, 5*time.Second, 10*time.Millisecond,
		"child %d outlived its process group", child)
}

// dead reports whether pid is gone or a zombie.
func dead(pid int) bool {
	if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return os.IsNotExist(err)
	}
	// pid (comm) state ...: the state follows the last ')'.
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(fields) > 0 && fields[0] == "Z"
}

func TestFreePorts(t *testing.T) {
	ports, err := freePorts(4)
	require.NoError(t, err)
	seen := map[int]bool{}
	for _, port := range ports {
		assert.False(t, seen[port], "port %d picked twice", port)
		seen[port] = true
	}
}
