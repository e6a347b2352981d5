package inventory_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelc/accelc/pkg/inventory"
)

// node builds a raw node from labels and capacity (allocatable = capacity
// unless alloc is given).
func node(t *testing.T, name string, labels, capacity, alloc map[string]string) inventory.RawNode {
	t.Helper()
	obj := map[string]any{"kind": "Node", "metadata": map[string]any{"name": name, "labels": labels}}
	status := map[string]any{}
	if capacity != nil {
		status["capacity"] = capacity
		if alloc == nil {
			alloc = capacity
		}
	}
	if alloc != nil {
		status["allocatable"] = alloc
	}
	obj["status"] = status
	data, err := json.Marshal(obj)
	require.NoError(t, err)
	raw, problems, err := inventory.Decode(data)
	require.NoError(t, err)
	require.Empty(t, problems)
	return raw[0]
}

type m = map[string]string

// TestSchemes classifies one node per labelling scheme seen in real
// clusters; every case also checks the note that says why.
func TestSchemes(t *testing.T) {
	cases := []struct {
		name          string
		labels, cap   m
		alloc         m
		typ           string
		sharing       inventory.Sharing
		count, allocN int
		why           string // a note contains it
		types         map[string]int
	}{
		// NVIDIA GPU Feature Discovery.
		{name: "pcie-casing", labels: m{"nvidia.com/gpu.product": "NVIDIA-H100-PCIE", "nvidia.com/gpu.count": "2"}, cap: m{"nvidia.com/gpu": "2"},
			typ: "nvidia-h100-80gb", sharing: inventory.Exclusive, count: 2, allocN: 2, why: "nvidia.com/gpu.product=NVIDIA-H100-PCIE"},
		{name: "family-lies", labels: m{"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3", "nvidia.com/gpu.family": "ampere", "nvidia.com/gpu.count": "8"}, cap: m{"nvidia.com/gpu": "8"},
			typ: "nvidia-h100-80gb", sharing: inventory.Exclusive, count: 8, allocN: 8, why: "type from nvidia.com/gpu.product"},
		{name: "a10-not-a100", labels: m{"nvidia.com/gpu.product": "NVIDIA-A10", "nvidia.com/gpu.count": "1"}, cap: m{"nvidia.com/gpu": "1"},
			typ: "nvidia-a10-24gb", sharing: inventory.Exclusive, count: 1, allocN: 1, why: "NVIDIA-A10"},
		{name: "a10g-not-a10", labels: m{"nvidia.com/gpu.product": "NVIDIA-A10G", "nvidia.com/gpu.count": "4"}, cap: m{"nvidia.com/gpu": "4"},
			typ: "nvidia-a10g-24gb", sharing: inventory.Exclusive, count: 4, allocN: 4, why: "NVIDIA-A10G"},
		{name: "memory-in-bytes", labels: m{"nvidia.com/gpu.product": "NVIDIA-A100-SXM4", "nvidia.com/gpu.memory": "85899345920", "nvidia.com/gpu.count": "8"}, cap: m{"nvidia.com/gpu": "8"},
			typ: "nvidia-a100-80gb", sharing: inventory.Exclusive, count: 8, allocN: 8, why: "80GB from nvidia.com/gpu.memory"},
		{name: "memory-in-mib", labels: m{"nvidia.com/gpu.product": "NVIDIA-A100-SXM4", "nvidia.com/gpu.memory": "40960", "nvidia.com/gpu.count": "8"}, cap: m{"nvidia.com/gpu": "8"},
			typ: "nvidia-a100-40gb", sharing: inventory.Exclusive, count: 8, allocN: 8, why: "40GB from nvidia.com/gpu.memory"},
		{name: "time-slicing", labels: m{"nvidia.com/gpu.product": "Tesla-T4-SHARED", "nvidia.com/gpu.count": "1", "nvidia.com/gpu.replicas": "4", "nvidia.com/gpu.sharing-strategy": "time-slicing"}, cap: m{"nvidia.com/gpu": "4"},
			typ: "nvidia-t4-16gb", sharing: inventory.TimeSliced, count: 1, allocN: 4, why: "Tesla-T4-SHARED"},
		{name: "mps", labels: m{"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB-SHARED", "nvidia.com/gpu.count": "2", "nvidia.com/gpu.replicas": "10", "nvidia.com/gpu.sharing-strategy": "mps"}, cap: m{"nvidia.com/gpu": "20"},
			typ: "nvidia-a100-80gb", sharing: inventory.MPS, count: 2, allocN: 20, why: "SHARED"},
		{name: "rename-by-default", labels: m{"nvidia.com/gpu.product": "NVIDIA-L4", "nvidia.com/gpu.count": "1", "nvidia.com/gpu.replicas": "3"}, cap: m{"nvidia.com/gpu.shared": "3"},
			typ: "nvidia-l4-24gb", sharing: inventory.TimeSliced, count: 1, allocN: 3, why: "renameByDefault"},
		{name: "zero-allocatable", labels: m{"nvidia.com/gpu.product": "NVIDIA-L40S", "nvidia.com/gpu.count": "4"}, cap: m{"nvidia.com/gpu": "4"}, alloc: m{"nvidia.com/gpu": "0"},
			typ: "nvidia-l40s-48gb", sharing: inventory.Exclusive, count: 4, allocN: 0, why: "0 allocatable"},
		{name: "mig-mixed-only-profile-labels", labels: m{"nvidia.com/mig-3g.40gb.count": "2", "nvidia.com/mig-3g.40gb.product": "NVIDIA-H100-80GB-HBM3-MIG-3g.40gb", "nvidia.com/mig-1g.10gb.count": "3"},
			typ: "nvidia-h100-80gb", sharing: inventory.MIGMixed, allocN: 5, why: "nvidia.com/mig-3g.40gb.product"},
		// AMD's ROCm node labeller.
		{name: "amd-device-id-only", labels: m{"amd.com/gpu.device-id": "74a1", "amd.com/gpu.family": "AI", "amd.com/gpu.vram": "192G"}, cap: m{"amd.com/gpu": "8"},
			typ: "amd-mi300x-192gb", sharing: inventory.Exclusive, count: 8, allocN: 8, why: "amd.com/gpu.device-id=74a1"},
		{name: "amd-legacy-beta", labels: m{"beta.amd.com/gpu.device-id.74a1": "8", "beta.amd.com/gpu.family.AI": "8"}, cap: m{"amd.com/gpu": "8"},
			typ: "amd-mi300x-192gb", sharing: inventory.Exclusive, count: 8, allocN: 8, why: "beta.amd.com/gpu.device-id.<value>"},
		{name: "amd-legacy-beta-plain", labels: m{"beta.amd.com/gpu.product-name": "AMD_Instinct_MI300X_OAM"},
			typ: "amd-mi300x-192gb", sharing: inventory.Exclusive, why: "beta.amd.com/gpu.product-name=AMD_Instinct_MI300X_OAM"},
		{name: "amd-heterogeneous", labels: m{"amd.com/gpu.device-id.74a1": "4", "amd.com/gpu.device-id.740f": "4"}, cap: m{"amd.com/gpu": "8"},
			typ: inventory.TypeMixed, sharing: inventory.Exclusive, count: 8, allocN: 8, why: "names 2 types",
			types: map[string]int{"amd-mi300x-192gb": 4, "amd-mi210-64gb": 4}},
		{name: "amd-unknown-device", labels: m{"amd.com/gpu.device-id": "ffff"}, cap: m{"amd.com/gpu": "2"},
			typ: inventory.TypeUnknown, sharing: inventory.Exclusive, count: 2, allocN: 2, why: "amd.com/gpu.device-id=ffff is not in the catalog"},
		// Karpenter on AWS.
		{name: "karpenter", labels: m{"karpenter.k8s.aws/instance-gpu-name": "a100", "karpenter.k8s.aws/instance-gpu-manufacturer": "nvidia", "karpenter.k8s.aws/instance-gpu-count": "8", "karpenter.k8s.aws/instance-gpu-memory": "81920"}, cap: m{"nvidia.com/gpu": "8"},
			typ: "nvidia-a100-80gb", sharing: inventory.Exclusive, count: 8, allocN: 8, why: "80GB from karpenter.k8s.aws/instance-gpu-memory"},
		{name: "karpenter-old-name-no-capacity", labels: m{"karpenter.k8s.aws/instance-gpu-name": "nvidia-t4", "karpenter.k8s.aws/instance-gpu-manufacturer": "nvidia", "karpenter.k8s.aws/instance-gpu-count": "1", "karpenter.k8s.aws/instance-gpu-memory": "16384"},
			typ: "nvidia-t4-16gb", sharing: inventory.Exclusive, count: 1, allocN: 1, why: "karpenter.k8s.aws/instance-gpu-name=nvidia-t4"},
		{name: "karpenter-a10g", labels: m{"karpenter.k8s.aws/instance-gpu-name": "a10g", "karpenter.k8s.aws/instance-gpu-manufacturer": "nvidia", "karpenter.k8s.aws/instance-gpu-count": "4", "karpenter.k8s.aws/instance-gpu-memory": "24576", "node.kubernetes.io/instance-type": "g5.12xlarge"},
			typ: "nvidia-a10g-24gb", sharing: inventory.Exclusive, count: 4, allocN: 4, why: "karpenter"},
		// Alibaba Cloud ACK.
		{name: "alibaba", labels: m{"aliyun.accelerator/nvidia_name": "Tesla-V100-SXM2-16GB", "aliyun.accelerator/nvidia_count": "8", "aliyun.accelerator/nvidia_mem": "16160MiB"}, cap: m{"nvidia.com/gpu": "8"},
			typ: "nvidia-v100-16gb", sharing: inventory.Exclusive, count: 8, allocN: 8, why: "aliyun.accelerator/nvidia_name=Tesla-V100-SXM2-16GB"},
		{name: "alibaba-short-name", labels: m{"aliyun.accelerator/nvidia_name": "A100-SXM4", "aliyun.accelerator/nvidia_mem": "81251MiB"}, cap: m{"nvidia.com/gpu": "8"},
			typ: "nvidia-a100-80gb", sharing: inventory.Exclusive, count: 8, allocN: 8, why: "79GB from aliyun.accelerator/nvidia_mem"},
		// EKS node groups labelled by hand for the cluster autoscaler: the
		// instance type, set by AWS, wins over it.
		{name: "eks-accelerator", labels: m{"k8s.amazonaws.com/accelerator": "nvidia-tesla-t4"}, cap: m{"nvidia.com/gpu": "1"},
			typ: "nvidia-t4-16gb", sharing: inventory.Exclusive, count: 1, allocN: 1, why: "set by hand on the node group"},
		{name: "eks-accelerator-wrong", labels: m{"k8s.amazonaws.com/accelerator": "nvidia-tesla-a10", "node.kubernetes.io/instance-type": "g5.xlarge"}, cap: m{"nvidia.com/gpu": "1"},
			typ: "nvidia-a10g-24gb", sharing: inventory.Exclusive, count: 1, allocN: 1, why: "instance-type=g5.xlarge"},
		{name: "eks-accelerator-true", labels: m{"k8s.amazonaws.com/accelerator": "true"}, cap: m{"nvidia.com/gpu": "1"},
			typ: inventory.TypeUnknown, sharing: inventory.Exclusive, count: 1, allocN: 1, why: "names no catalog type"},
		// Node Feature Discovery with the device id in its PCI labels.
		{name: "nfd-pci-device", labels: m{"feature.node.kubernetes.io/pci-0302_10de_20b5.present": "true"}, cap: m{"nvidia.com/gpu": "4"},
			typ: "nvidia-a100-80gb", sharing: inventory.Exclusive, count: 4, allocN: 4, why: "PCI 10de:20b5"},
		{name: "nfd-vendor-only", labels: m{"feature.node.kubernetes.io/pci-0302_10de.present": "true"}, cap: m{"nvidia.com/gpu": "1"},
			typ: inventory.TypeUnknown, sharing: inventory.Exclusive, count: 1, allocN: 1, why: "names the vendor, not the model"},
		// Capacity alone.
		{name: "legacy-capacity", cap: m{"alpha.kubernetes.io/nvidia-gpu": "2"},
			typ: inventory.TypeUnknown, sharing: inventory.Exclusive, count: 2, allocN: 2, why: "install the GPU Operator"},
		{name: "gaudi-capacity", cap: m{"habana.ai/gaudi": "8"},
			typ: inventory.TypeUnknown, sharing: inventory.Exclusive, count: 8, allocN: 8, why: "pin the type"},
		{name: "amd-capacity", cap: m{"amd.com/gpu": "1"},
			typ: inventory.TypeUnknown, sharing: inventory.Exclusive, count: 1, allocN: 1, why: "pin the type"},
	}
	cat := builtin(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			inv := inventory.Classify([]inventory.RawNode{node(t, c.name, c.labels, c.cap, c.alloc)}, cat, inventory.Options{})
			require.Len(t, inv.Nodes, 1)
			n := inv.Nodes[0]
			assert.Equal(t, c.typ, n.AcceleratorType, "notes: %q", n.Notes)
			assert.Equal(t, c.sharing, n.Sharing)
			assert.Equal(t, c.count, n.Count, "count")
			assert.Equal(t, c.allocN, n.Allocatable, "allocatable")
			assert.Equal(t, c.types, n.Types)
			assert.Contains(t, strings.Join(n.Notes, "\n"), c.why)
		})
	}
}

// TestMixedNodeView shows a node with two AMD models as mixed, with what to do.
func TestMixedNodeView(t *testing.T) {
	inv := inventory.Classify([]inventory.RawNode{
		node(t, "amd-mixed", m{"amd.com/gpu.product-name.AMD_Instinct_MI300X_OAM": "4", "amd.com/gpu.product-name.AMD_Instinct_MI210": "4", "amd.com/gpu.device-id.74a1": "4", "amd.com/gpu.device-id.740f": "4"}, m{"amd.com/gpu": "8"}, nil),
	}, builtin(t), inventory.Options{})
	var b strings.Builder
	require.NoError(t, inv.WriteView(&b, inventory.ViewOptions{}))
	assert.Contains(t, b.String(), "Mixed: 4× AMD MI210 64GB, 4× AMD MI300X 192GB")
	assert.Contains(t, b.String(), "Mixed types: 1 node, 8 GPUs, 8 allocatable")
	assert.Contains(t, b.String(), "1 node needs attention:\n  amd-mixed (mixed): devices of more than one type")
}
