package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelc/accelc/pkg/cost"
	"github.com/accelc/accelc/pkg/inventory"
)

// TestCostCommand prices what hetero-prod's pods hold in a snapshot with
// pod data: 8 H200 in ml-research, 4 A100 80GB split over the two
// serving namespaces, 2 V100 in a namespace no team claims.
func TestCostCommand(t *testing.T) {
	file := snapshotWithPods(t, "hetero-prod", map[string]map[string]int{
		"worker-node-17": {"ml-research": 8},
		"worker-node-01": {"serving-prod": 3, "serving-staging": 1},
		"worker-node-21": {"scratch": 2},
	})

	run := runMain
	code, out, errOut := run("cost", "../../examples/clusters/hetero-prod", "--inventory", file, "-o", "json")
	require.Equal(t, exitOK, code, errOut)
	var got struct {
		Lines []cost.Line `json:"lines"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	require.Len(t, got.Lines, 3)
	ml, serving, none := got.Lines[0], got.Lines[1], got.Lines[2]
	assert.Equal(t, "ml-research", ml.Team)
	assert.Equal(t, 8, ml.Devices)
	assert.InDelta(t, 8.0, ml.GPUs, 1e-9, "whole GPUs: as many as devices")
	assert.InDelta(t, 5840.0, ml.GPUHours, 1e-9) // 8 × 730 h
	assert.InDelta(t, 29200.0, *ml.Cost, 1e-9)   // × $5
	assert.Equal(t, "model-serving", serving.Team)
	assert.Equal(t, "nvidia-a100-80gb", serving.Type)
	assert.Equal(t, 4, serving.Devices, "both serving namespaces")
	assert.InDelta(t, 8760.0, *serving.Cost, 1e-9) // 4 × 730 × $3
	assert.Equal(t, cost.Unassigned, none.Team)
	assert.InDelta(t, 2190.0, *none.Cost, 1e-9) // 2 × 730 × $1.50

	code, out, errOut = run("cost", "../../examples/clusters/hetero-prod", "--inventory", file, "--hours", "24")
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "ML Research")
	assert.Contains(t, out, "$960.00") // 8 × 24 × $5
	assert.Contains(t, out, "$60000.00")

	// A plain kubectl snapshot says nothing of pods.
	code, _, errOut = run("cost", "../../examples/clusters/hetero-prod")
	assert.Equal(t, exitInput, code)
	assert.Contains(t, errOut, "does not say what pods use")
}

// TestCostOfSharedDevices prices gpu-pools' slices and replicas as their
// share of a GPU: 3 replicas of an A100 time-sliced three ways are one
// A100; 2 3g.40gb slices are 6/7 of one.
func TestCostOfSharedDevices(t *testing.T) {
	file := snapshotWithPods(t, "gpu-pools", map[string]map[string]int{
		"a100-ts-01":    {"ds-notebooks": 3},
		"a100-mig3g-01": {"serving-prod": 2},
	})

	code, out, errOut := runMain("cost", "../../examples/clusters/gpu-pools", "--inventory", file, "-o", "json")
	require.Equal(t, exitOK, code, errOut)
	var got struct {
		Lines []cost.Line `json:"lines"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	require.Len(t, got.Lines, 2)
	ds, serving := got.Lines[0], got.Lines[1]
	assert.Equal(t, "data-science", ds.Team)
	assert.Equal(t, 3, ds.Devices)
	assert.InDelta(t, 1.0, ds.GPUs, 1e-9)
	assert.InDelta(t, 730*3.0, *ds.Cost, 1e-9) // one A100 × 730 h × $3
	assert.Equal(t, "model-serving", serving.Team)
	assert.Equal(t, 2, serving.Devices)
	assert.InDelta(t, 6.0/7, serving.GPUs, 1e-9)
	assert.InDelta(t, 730*3.0*6/7, *serving.Cost, 1e-9)

	code, out, errOut = runMain("cost", "../../examples/clusters/gpu-pools", "--inventory", file)
	require.Equal(t, exitOK, code, errOut)
	assert.Regexp(t, `Model Serving +NVIDIA A100 80GB +0\.86 +626 +\$2\.57 +\$1877\.14`, out)
}

// snapshotWithPods writes an example's inventory as a snapshot that
// counted pods: use gives, per node, the accelerators each namespace holds.
func snapshotWithPods(t *testing.T, example string, use map[string]map[string]int) string {
	t.Helper()
	snap, err := inventory.ReadSnapshot("../../examples/clusters/" + example + "/inventory.json")
	require.NoError(t, err)
	snap.Source = &inventory.Source{Cluster: example, TakenAt: time.Now().UTC(), PodsCounted: true}
	for i := range snap.Nodes {
		if by, ok := use[snap.Nodes[i].Metadata.Name]; ok {
			inventory.SetInUse(&snap.Nodes[i], by)
		}
	}
	var buf bytes.Buffer
	require.NoError(t, snap.Write(&buf))
	file := filepath.Join(t.TempDir(), "inventory.json")
	require.NoError(t, os.WriteFile(file, buf.Bytes(), 0o644))
	return file
}
