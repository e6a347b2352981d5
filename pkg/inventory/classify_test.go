package inventory_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	_ "github.com/accelc/accelc/internal/testutil"
	"github.com/accelc/accelc/pkg/catalog"
	"github.com/accelc/accelc/pkg/inventory"
)

func builtin(t testing.TB) *catalog.Catalog {
	t.Helper()
	cat, err := catalog.Builtin()
	require.NoError(t, err)
	return cat
}

// TestRealNodes classifies the verbatim label sets of real clusters
// (testdata/nodes/real-nodes-sample.json; docs/hardware.md says what it holds).
func TestRealNodes(t *testing.T) {
	raw, problems, err := inventory.ReadFile("../../testdata/nodes/real-nodes-sample.json")
	require.NoError(t, err)
	require.Empty(t, problems)
	inv := inventory.Classify(raw, builtin(t), inventory.Options{})
	require.Zero(t, inv.OtherNodes)

	type want struct {
		typ         string
		vendor      string
		count       int
		allocatable int
		sharing     inventory.Sharing
		replicas    int
		mig         map[string]int
	}
	wants := map[string]want{
		"192-222-54-148":   {"nvidia-h100-80gb", "nvidia", 8, 8, inventory.Exclusive, 0, nil},
		"s4124-0073-mixed": {"nvidia-h100-80gb", "nvidia", 1, 4, inventory.MIGMixed, 0, map[string]int{"1g.10gb": 2, "2g.20gb": 1, "3g.40gb": 1}},
		"node-03":          {"nvidia-a100-40gb", "nvidia", 7, 7, inventory.MIGSingle, 0, map[string]int{"1g.5gb": 7}},
		"node-06":          {"nvidia-a100-40gb", "nvidia", 1, 1, inventory.Exclusive, 0, nil},
		"node-07":          {"nvidia-t4-16gb", "nvidia", 1, 8, inventory.TimeSliced, 8, nil},
		"node-13":          {"amd-mi300x-192gb", "amd", 0, 0, inventory.Exclusive, 0, nil},
		"gke-dev-pangeo-io-cl-jupyter-gpu-pool-026fa47a-q754": {"nvidia-t4-16gb", "nvidia", 0, 0, inventory.Exclusive, 0, nil},
		"node-17":        {"nvidia-a100-80gb", "nvidia", 0, 0, inventory.MIGSingle, 0, nil},
		"node-20":        {"nvidia-t4-16gb", "nvidia", 4, 16, inventory.TimeSliced, 4, nil},
		"219.245.186.40": {"unknown", "nvidia", 3, 3, inventory.Exclusive, 0, nil},
		"node-21":        {"unknown", "intel", 8, 8, inventory.Exclusive, 0, nil},
	}
	require.Len(t, inv.Nodes, len(wants))
	for _, n := range inv.Nodes {
		w, ok := wants[n.Name]
		if !assert.True(t, ok, n.Name) {
			continue
		}
		assert.Equal(t, w.typ, n.AcceleratorType, n.Name)
		assert.Equal(t, w.vendor, n.Vendor, n.Name)
		assert.Equal(t, w.count, n.Count, n.Name)
		assert.Equal(t, w.allocatable, n.Allocatable, n.Name)
		assert.Equal(t, w.sharing, n.Sharing, n.Name)
		assert.Equal(t, w.replicas, n.Replicas, n.Name)
		assert.Equal(t, w.mig, n.MIGDevices, n.Name)
		assert.NotEmpty(t, n.Notes, "%s: every classification says why", n.Name)
		if w.typ == "unknown" {
			assert.Equal(t, inventory.TypeUnknown, n.AcceleratorType)
			assert.Contains(t, n.DisplayName, "type unknown")
		}
	}
}

// TestCloudInstanceTypes classifies nodes that carry only their cloud
// instance type and GPU capacity (no GPU Feature Discovery).
func TestCloudInstanceTypes(t *testing.T) {
	raw, problems, err := inventory.Decode([]byte(`{"kind": "List", "items": [
	  {"kind": "Node", "metadata": {"name": "aws-p4de", "labels": {"node.kubernetes.io/instance-type": "p4de.24xlarge"}}, "status": {"capacity": {"nvidia.com/gpu": "8"}}},
	  {"kind": "Node", "metadata": {"name": "aws-g5", "labels": {"node.kubernetes.io/instance-type": "g5.12xlarge"}}, "status": {"capacity": {"nvidia.com/gpu": "4"}}},
	  {"kind": "Node", "metadata": {"name": "gcp-a3", "labels": {"node.kubernetes.io/instance-type": "a3-ultragpu-8g"}}, "status": {"capacity": {"nvidia.com/gpu": "8"}}},
	  {"kind": "Node", "metadata": {"name": "azure-nc", "labels": {"beta.kubernetes.io/instance-type": "Standard_NC80adis_H100_v5"}}, "status": {"capacity": {"nvidia.com/gpu": "2"}}},
	  {"kind": "Node", "metadata": {"name": "gfd-wins", "labels": {"node.kubernetes.io/instance-type": "p4d.24xlarge", "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"}}},
	  {"kind": "Node", "metadata": {"name": "cpu", "labels": {"node.kubernetes.io/instance-type": "m6i.large"}}}
	]}`))
	require.NoError(t, err)
	require.Empty(t, problems)
	inv := inventory.Classify(raw, builtin(t), inventory.Options{})
	got := map[string]string{}
	for _, n := range inv.Nodes {
		got[n.Name] = n.AcceleratorType
	}
	assert.Equal(t, map[string]string{
		"aws-p4de": "nvidia-a100-80gb",
		"aws-g5":   "nvidia-a10g-24gb",
		"gcp-a3":   "nvidia-h200-141gb",
		"azure-nc": "nvidia-h100-94gb",
		"gfd-wins": "nvidia-a100-80gb", // GPU Feature Discovery's product beats the instance type
	}, got)
	assert.Equal(t, 1, inv.OtherNodes)
}

// TestBadQuantities: a capacity that is not a device count is a problem on
// that node, named with the resource and the value, reported once; the
// node's counts are not trusted (0 available), and the other nodes go on.
func TestBadQuantities(t *testing.T) {
	node := func(name, q string) inventory.RawNode {
		var n inventory.RawNode
		n.Kind = "Node"
		n.Metadata.Name = name
		n.Metadata.Labels = map[string]string{"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"}
		n.Status.Capacity = map[string]string{"nvidia.com/gpu": q, "cpu": "64"}
		n.Status.Allocatable = map[string]string{"nvidia.com/gpu": q}
		n.Status.Conditions = []inventory.Condition{{Type: "Ready", Status: "True"}}
		return n
	}
	bad := []string{"abc", "-8", "", "NaN", "1e18", "1.5"}
	raw := []inventory.RawNode{node("good", "8")}
	for i, q := range bad {
		raw = append(raw, node(string(rune('a'+i))+"-bad", q))
	}
	inv := inventory.Classify(raw, builtin(t), inventory.Options{})
	require.Len(t, inv.Nodes, len(raw), "bad nodes are kept, flagged")
	require.Len(t, inv.Problems, len(bad), "one problem per bad node")
	total := 0
	for _, n := range inv.Nodes {
		total += n.Free()
		if n.Name != "good" {
			assert.Zero(t, n.Allocatable, n.Name)
			assert.Zero(t, n.Count, n.Name)
			assert.Contains(t, n.Notes[len(n.Notes)-2], "device counts not trusted", n.Name)
		}
	}
	assert.Equal(t, 8, total, "only the good node's GPUs are available")
	for i, q := range bad {
		p := inv.Problems[i]
		assert.True(t, p.Kept)
		assert.Equal(t, string(rune('a'+i))+"-bad", p.Node)
		assert.Equal(t, "node "+p.Node+`: capacity nvidia.com/gpu "`+q+`", allocatable nvidia.com/gpu "`+q+
			`": not a device count (a whole number from 0 to 1048576); check the node's device plugin`, p.String())
		assert.Equal(t, "its accelerators are counted as 0 available", p.Effect())
	}
}
