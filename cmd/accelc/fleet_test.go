package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRenderFleet renders every cluster folder of a copy of the examples,
// one of them broken: the good ones are written, the broken one is named,
// and the exit code is 1; the shared fleet package is not a cluster.
func TestRenderFleet(t *testing.T) {
	fleet := filepath.Join(t.TempDir(), "fleet")
	require.NoError(t, os.CopyFS(fleet, os.DirFS("../../examples/clusters")))
	out := filepath.Join(t.TempDir(), "out")
	run := runMain

	code, stdout, errOut := run("render", "--fleet", fleet, "-o", out)
	require.Equal(t, exitOK, code, errOut)
	for _, c := range []string{"gpu-pools", "hetero-prod", "small-lab"} {
		assert.FileExists(t, filepath.Join(out, c, "kustomization.yaml"))
		assert.Contains(t, stdout, filepath.Join(out, c, "kustomization.yaml"))
	}
	assert.NoDirExists(t, filepath.Join(out, "fleet"))
	assert.Contains(t, errOut, filepath.Join(fleet, "hetero-prod")+": warning: inventory:", "messages name their cluster")

	broken := filepath.Join(fleet, "broken")
	require.NoError(t, os.Mkdir(broken, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(broken, "cluster.cue"), []byte("package cluster\n\ncluster: name: \"broken\"\nprofiles: x: gpu: max: \"eight\"\n"), 0o644))
	code, stdout, errOut = run("render", "--fleet", fleet, "-o", out)
	assert.Equal(t, exitInput, code)
	assert.Contains(t, errOut, broken+": ")
	assert.Contains(t, errOut, "1 of 4 clusters failed to render")
	assert.Contains(t, stdout, filepath.Join(out, "small-lab", "kustomization.yaml"))

	code, _, _ = run("render", fleet, "--fleet", fleet)
	assert.Equal(t, exitUsage, code)
}
