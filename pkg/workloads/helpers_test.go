package workloads_test

import (
	"net"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/accelc/accelc/internal/controlplane"
)

// kubectlPath is the kubectl `make control-plane` put beside the API
// server, else the one on PATH; the test is skipped without one.
func kubectlPath(t testing.TB) string {
	t.Helper()
	bundled, err := filepath.Abs(filepath.Join("../../bin", "k8s-"+controlplane.K8sVersion, "kubectl"))
	require.NoError(t, err)
	if path, err := exec.LookPath(bundled); err == nil {
		return path
	}
	path, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("no kubectl: run `make control-plane`")
	}
	return path
}

// closedPort is a 127.0.0.1 address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}
