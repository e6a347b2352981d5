package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelc/accelc/pkg/inventory"
)

// TestSnapshotAge: render and vet warn about a snapshot older than
// --max-snapshot-age, and say how to refresh it; 0 turns the warning off.
func TestSnapshotAge(t *testing.T) {
	snap, err := inventory.ReadSnapshot("../../examples/clusters/small-lab/inventory.json")
	require.NoError(t, err)
	snap.Source = &inventory.Source{Cluster: "small-lab", TakenAt: time.Now().Add(-10 * 24 * time.Hour)}
	var buf bytes.Buffer
	require.NoError(t, snap.Write(&buf))
	file := filepath.Join(t.TempDir(), "inventory.json")
	require.NoError(t, os.WriteFile(file, buf.Bytes(), 0o644))

	run := func(args ...string) (int, string) {
		var stdout, stderr bytes.Buffer
		code := Main(args, &stdout, &stderr)
		return code, stderr.String()
	}
	code, stderr := run("render", "../../examples/clusters/small-lab", "--inventory", file, "-o", filepath.Join(t.TempDir(), "out"))
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "was taken 10d ago from cluster small-lab (more than --max-snapshot-age 7d)")
	assert.Contains(t, stderr, "accelc inventory snapshot --live -o "+file)

	code, stderr = run("vet", "../../examples/clusters/small-lab", "--inventory", file, "--max-snapshot-age", "720h")
	require.Equal(t, 0, code, stderr)
	assert.NotContains(t, stderr, "was taken")

	code, stderr = run("vet", "../../examples/clusters/small-lab", "--inventory", file, "--max-snapshot-age", "0")
	require.Equal(t, 0, code, stderr)
	assert.Empty(t, stderr)

	code, stderr = run("vet", "../../examples/clusters/small-lab", "--kubeconfig", "x")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "only apply with --live")
}
