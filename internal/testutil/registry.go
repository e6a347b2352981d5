package testutil

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Registry starts the CNCF distribution registry (Debian's
// docker-registry) on a free 127.0.0.1 port for the test, stops it by PID
// when the test ends, and returns its address. It skips the test where
// the registry is not installed (make registry), and fails it under
// CI=true.
func Registry(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("docker-registry")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true and docker-registry is missing: make registry installs it")
		}
		t.Skip("docker-registry not installed: make registry")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yml")
	require.NoError(t, os.WriteFile(cfg, []byte(fmt.Sprintf(`version: 0.1
log: {level: warn}
storage:
  filesystem: {rootdirectory: %s}
  delete: {enabled: true}
http:
  addr: %s
`, filepath.Join(dir, "data"), addr)), 0o644))
	cmd := exec.Command(bin, "serve", cfg)
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("docker-registry:\n%s", logs.String())
		}
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/v2/")
		if err == nil {
			resp.Body.Close()
			break
		}
		require.True(t, time.Now().Before(deadline), "docker-registry did not start: %v\n%s", err, logs.String())
		time.Sleep(50 * time.Millisecond)
	}
	return addr
}
