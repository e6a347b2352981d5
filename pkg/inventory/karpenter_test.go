package inventory_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelc/accelc/pkg/catalog"
	"github.com/accelc/accelc/pkg/inventory"
)

// TestKarpenterNodes: a node Karpenter launched from one of accelc's
// NodePools is classified before any feature discovery has labelled it:
// by its instance type, else by the type label the NodePool gave it;
// without the cluster's type label in the options, the label alone says
// nothing.
func TestKarpenterNodes(t *testing.T) {
	cat, err := catalog.Builtin()
	require.NoError(t, err)
	raw, _, err := inventory.Decode([]byte(`{"kind":"NodeList","items":[
	  {"metadata":{"name":"karp-1","labels":{"node.kubernetes.io/instance-type":"p5e.48xlarge","karpenter.sh/nodepool":"accelc-h200","karpenter.sh/capacity-type":"on-demand","accelerator.opendatahub.io/type":"nvidia-h200-141gb"}},"status":{"capacity":{"nvidia.com/gpu":"8"},"conditions":[{"type":"Ready","status":"True"}]}},
	  {"metadata":{"name":"karp-2","labels":{"karpenter.sh/nodepool":"accelc-h200","accelerator.opendatahub.io/type":"nvidia-h200-141gb"}},"status":{"capacity":{"nvidia.com/gpu":"8"},"conditions":[{"type":"Ready","status":"True"}]}}]}`))
	require.NoError(t, err)
	byName := func(inv *inventory.Inventory) map[string]inventory.Node {
		out := map[string]inventory.Node{}
		for _, n := range inv.Nodes {
			out[n.Name] = n
		}
		return out
	}
	got := byName(inventory.Classify(raw, cat, inventory.Options{TypeLabel: "accelerator.opendatahub.io/type"}))
	assert.Equal(t, "nvidia-h200-141gb", got["karp-1"].AcceleratorType)
	assert.Equal(t, []string{"type from node.kubernetes.io/instance-type=p5e.48xlarge"}, got["karp-1"].Notes)
	assert.Equal(t, "nvidia-h200-141gb", got["karp-2"].AcceleratorType)
	assert.Equal(t, "nvidia", got["karp-2"].Vendor)
	assert.Equal(t, []string{"type from accelerator.opendatahub.io/type=nvidia-h200-141gb, as NodePool accelc-h200 launched it"}, got["karp-2"].Notes)
	assert.Equal(t, 8, got["karp-2"].Allocatable)

	plain := byName(inventory.Classify(raw, cat, inventory.Options{}))
	assert.Equal(t, inventory.TypeUnknown, plain["karp-2"].AcceleratorType)
}
