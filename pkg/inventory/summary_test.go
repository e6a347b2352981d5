package inventory_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelc/accelc/pkg/inventory"
)

// TestSummaryNamesMIGSlices: the per-type summary counts GPUs, not the
// MIG slices a node under MIG single reports as its devices, and says how
// many of the allocatable are slices (issue 18: "104 GPUs, 168
// allocatable" counted 48 slices as GPUs without saying so). Nodes: the
// real sample's A100 40GB pair (one MIG single 7×1g.5gb, one whole GPU)
// and its H100 pair (8 whole GPUs, one GPU cut 2×1g.10gb+2g.20gb+3g.40gb).
func TestSummaryNamesMIGSlices(t *testing.T) {
	raw, _, err := inventory.ReadFile("../../testdata/nodes/real-nodes-sample.json")
	require.NoError(t, err)
	inv := inventory.Classify(raw, builtin(t), inventory.Options{})
	by := map[string]inventory.TypeSummary{}
	for _, s := range inv.Summary() {
		by[s.AcceleratorType] = s
	}
	a100 := by["nvidia-a100-40gb"]
	assert.Equal(t, 1, a100.GPUs, "the MIG single node's 7 slices are not 7 GPUs")
	assert.Equal(t, 1, a100.UncountedNodes)
	assert.Equal(t, 8, a100.Allocatable)
	assert.Equal(t, 7, a100.MIGSlices)
	assert.Equal(t, "NVIDIA A100 40GB: 2 nodes, 1 GPU (not counting 1 node under MIG single, which reports slices), 8 allocatable (7 of the allocatable are MIG slices, not whole GPUs)", a100.String())
	h100 := by["nvidia-h100-80gb"]
	assert.Equal(t, 9, h100.GPUs)
	assert.Equal(t, 4, h100.MIGSlices)
	assert.Equal(t, "NVIDIA H100 80GB: 2 nodes, 9 GPUs, 12 allocatable (4 of the allocatable are MIG slices, not whole GPUs)", h100.String())
	t4 := by["nvidia-t4-16gb"]
	assert.Equal(t, "NVIDIA T4 16GB: 3 nodes, 5 GPUs, 24 allocatable (24 of the allocatable are shared replicas, not whole GPUs)", t4.String())

	// Replicas and slices of one type, as on gpu-pools.
	mixed := inventory.TypeSummary{DisplayName: "NVIDIA A100 80GB", Nodes: 5, GPUs: 16, UncountedNodes: 3, Allocatable: 144, Replicas: 48, MIGSlices: 96}
	assert.Equal(t, "NVIDIA A100 80GB: 5 nodes, 16 GPUs (not counting 3 nodes under MIG single, which reports slices), 144 allocatable (48 of the allocatable are shared replicas and 96 are MIG slices, not whole GPUs)", mixed.String())
}

// TestNodeTableShowsPins: a type pinned in CUE shows in the node table,
// not only in the JSON notes.
func TestNodeTableShowsPins(t *testing.T) {
	inv := inventory.Classify([]inventory.RawNode{
		node(t, "gpu-unlabelled-01", nil, m{"nvidia.com/gpu": "4"}, nil),
		node(t, "labelled", m{"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB"}, m{"nvidia.com/gpu": "4"}, nil),
	}, builtin(t), inventory.Options{Pins: map[string]string{"gpu-unlabelled-01": "nvidia-a100-40gb"}})
	var b strings.Builder
	require.NoError(t, inv.WriteView(&b, inventory.ViewOptions{}))
	assert.Contains(t, b.String(), "gpu-unlabelled-01  NVIDIA A100 40GB  nvidia-a100-40gb (pinned)")
	assert.Contains(t, b.String(), "labelled           NVIDIA A100 40GB  nvidia-a100-40gb           4")
	assert.True(t, inv.Nodes[0].Pinned)
	assert.False(t, inv.Nodes[1].Pinned)
}

// TestMemoryIsGB: the node view's memory is in GB (10^9 bytes) like the
// catalog's. For a node of unknown type it comes from GFD's
// nvidia.com/gpu.memory, in MiB: 81559 MiB (an H100's, real-nodes-sample
// node 192-222-54-148, here on a product no class lists) is 85.5GB, not
// "80GB" (79.6GiB).
func TestMemoryIsGB(t *testing.T) {
	inv := inventory.Classify([]inventory.RawNode{
		node(t, "unknown-h100", m{"nvidia.com/gpu.product": "NVIDIA-Unlisted-GPU", "nvidia.com/gpu.memory": "81559"}, m{"nvidia.com/gpu": "8"}, nil),
	}, builtin(t), inventory.Options{})
	require.Len(t, inv.Nodes, 1)
	assert.Equal(t, inventory.TypeUnknown, inv.Nodes[0].AcceleratorType)
	assert.Equal(t, 86, inv.Nodes[0].MemoryGB)
	doc, err := json.Marshal(inv.View())
	require.NoError(t, err)
	assert.Contains(t, string(doc), `"memoryGB":86`)
	assert.NotContains(t, string(doc), "memoryGiB")
}
