package inventory_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelc/accelc/pkg/inventory"
)

// TestSnapshotRoundTrip writes a snapshot with its source and use counts
// and reads it back: the summary then says how many GPUs are available.
func TestSnapshotRoundTrip(t *testing.T) {
	taken := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	h200 := node(t, "h200-a", m{"nvidia.com/gpu.product": "NVIDIA-H200", "nvidia.com/gpu.count": "8"}, m{"nvidia.com/gpu": "8"}, nil)
	h200.Metadata.Annotations = map[string]string{
		inventory.AnnotationInUse:                                "3",
		"projectcalico.org/IPv4Address":                          "10.0.0.7/24",
		"node.alpha.kubernetes.io/ttl":                           "0",
		"volumes.kubernetes.io/controller-managed-attach-detach": "true",
	}
	h200b := node(t, "h200-b", m{"nvidia.com/gpu.product": "NVIDIA-H200", "nvidia.com/gpu.count": "8"}, m{"nvidia.com/gpu": "8"}, nil)
	h200b.Metadata.Annotations = map[string]string{inventory.AnnotationInUse: "1"}
	snap := &inventory.Snapshot{
		Source: &inventory.Source{Cluster: "prod-east", TakenAt: taken, PodsCounted: true},
		Nodes:  []inventory.RawNode{h200, h200b},
	}
	var buf bytes.Buffer
	require.NoError(t, snap.Write(&buf))
	assert.NotContains(t, buf.String(), "10.0.0.7", "annotations other than accelc's are dropped")
	assert.NotContains(t, buf.String(), "controller-managed-attach-detach")

	back, err := inventory.DecodeSnapshot(buf.Bytes())
	require.NoError(t, err)
	require.Equal(t, snap.Source, back.Source)
	age, ok := back.Source.Age(taken.Add(36 * time.Hour))
	assert.True(t, ok)
	assert.Equal(t, 36*time.Hour, age)

	inv := back.Classify(builtin(t), inventory.Options{})
	require.Len(t, inv.Nodes, 2)
	assert.Equal(t, 3, inv.Nodes[0].InUse)
	assert.Equal(t, 5, inv.Nodes[0].Free())
	sum := inv.Summary()
	require.Len(t, sum, 1)
	assert.Equal(t, "NVIDIA H200 141GB: 2 nodes, 16 GPUs, 12 available", sum[0].String())

	var view bytes.Buffer
	require.NoError(t, inv.WriteView(&view, inventory.ViewOptions{}))
	assert.Contains(t, view.String(), "IN USE")

	var again bytes.Buffer
	require.NoError(t, back.Write(&again))
	assert.Equal(t, buf.String(), again.String(), "writing is deterministic")
}

// TestPlainSnapshotHasNoAge: kubectl output says nothing of when it was
// taken, and nothing of use.
func TestPlainSnapshotHasNoAge(t *testing.T) {
	snap, err := inventory.DecodeSnapshot([]byte(`{"kind":"NodeList","items":[{"metadata":{"name":"a"},"status":{"capacity":{"nvidia.com/gpu":"1"}}}]}`))
	require.NoError(t, err)
	_, ok := snap.Source.Age(time.Now())
	assert.False(t, ok)
	inv := snap.Classify(builtin(t), inventory.Options{})
	assert.False(t, inv.UsageKnown())
	assert.True(t, strings.HasSuffix(inv.Summary()[0].String(), "1 allocatable"))
}

// TestSelectAndSort filters the real sample by type, sharing and status.
func TestSelectAndSort(t *testing.T) {
	inv, err := inventory.Load("../../testdata/nodes/real-nodes-sample.json", builtin(t), inventory.Options{})
	require.NoError(t, err)
	names := func(inv *inventory.Inventory) []string {
		var out []string
		for _, n := range inv.Nodes {
			out = append(out, n.Name)
		}
		return out
	}
	assert.Equal(t, []string{"node-07", "node-20"}, names(inv.Select(inventory.Filter{Sharing: []string{"time-sliced"}})))
	assert.Equal(t, []string{"node-03", "node-17"}, names(inv.Select(inventory.Filter{Sharing: []string{"mig-single"}})))
	assert.Empty(t, names(inv.Select(inventory.Filter{Status: []string{"Ready"}})))
	sel := inv.Select(inventory.Filter{Types: []string{"nvidia-t4-16gb", "UNKNOWN"}})
	require.NoError(t, sel.Sort("gpus"))
	assert.Equal(t, []string{"node-21", "node-20", "219.245.186.40", "node-07", "gke-dev-pangeo-io-cl-jupyter-gpu-pool-026fa47a-q754"}, names(sel))
	assert.Error(t, sel.Sort("colour"))
}
