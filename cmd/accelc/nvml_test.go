package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestInventoryNVMLWithoutDriver checks the exit code testscript cannot:
// NVML missing is an outside system failing, exit 3.
func TestInventoryNVMLWithoutDriver(t *testing.T) {
	if _, err := exec.LookPath("nvidia-smi"); err == nil {
		t.Skip("this machine has the NVIDIA driver")
	}
	var stdout, stderr bytes.Buffer
	code := Main([]string{"inventory", "nvml", "--node-name", "gpu-1"}, &stdout, &stderr)
	assert.Equal(t, exitOutside, code)
	assert.Empty(t, stdout.String())
	assert.Regexp(t, `^NVML not available: `, stderr.String())
}

func TestResolveNodeName(t *testing.T) {
	t.Setenv("NODE_NAME", "from-downward-api")
	got, err := resolveNodeName("from-flag")
	require.NoError(t, err)
	assert.Equal(t, "from-flag", got)
	got, err = resolveNodeName("")
	require.NoError(t, err)
	assert.Equal(t, "from-downward-api", got)

	t.Setenv("NODE_NAME", "")
	host, err := os.Hostname()
	require.NoError(t, err)
	got, err = resolveNodeName("")
	require.NoError(t, err)
	assert.Equal(t, host, got)
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "report.json")
	require.NoError(t, os.WriteFile(path, []byte("old"), 0o600))
	require.NoError(t, writeFileAtomic(path, []byte("new\n")))

	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "new\n", string(got))
	info, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), info.Mode().Perm())
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary file is left beside the report")

	assert.Error(t, writeFileAtomic(filepath.Join(dir, "missing", "report.json"), nil))
}
