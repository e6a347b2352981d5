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

// TestExtendedResource: Kubernetes' own resources (no domain, or under
// kubernetes.io) are not extended resources; every device plugin's is.
func TestExtendedResource(t *testing.T) {
	for name, want := range map[string]bool{
		"cpu": false, "memory": false, "pods": false, "ephemeral-storage": false, "storage": false,
		"hugepages-2Mi": false, "hugepages-1Gi": false, "attachable-volumes-aws-ebs": false,
		"kubernetes.io/batch-cpu": false, "example.kubernetes.io/x": false,
		"alpha.kubernetes.io/nvidia-gpu": true,
		"nvidia.com/gpu":                 true, "nvidia.com/GH100_H200_141GB": true, "huawei.com/Ascend910": true,
		"vpc.amazonaws.com/efa": true, "example.com/fpga": true, "devices.kubevirt.io/kvm": true,
	} {
		assert.Equal(t, want, inventory.ExtendedResource(name), name)
	}
}

// TestVendorResource: the whole domain of a GPU vendor is an accelerator's
// (R6), as are the resources classification counts.
func TestVendorResource(t *testing.T) {
	for name, want := range map[string]bool{
		"nvidia.com/gpu": true, "nvidia.com/GH100_H200_141GB": true, "nvidia.com/mig-1g.10gb": true,
		"alpha.kubernetes.io/nvidia-gpu": true, "huawei.com/Ascend910": true, "qualcomm.com/qaic": true,
		"aws.amazon.com/neuroncore": true, "google.com/tpu": true, "cloud-tpus.google.com/v3": true,
		"aws.amazon.com/efa": false, "vpc.amazonaws.com/efa": false, "example.com/fpga": false, "google.com/other": false,
	} {
		assert.Equal(t, want, inventory.VendorResource(name), name)
	}
}

// TestResourcesOfEveryNode: the inventory keeps every extended resource
// every node advertises, in capacity or allocatable, the nodes without
// accelerators' too, with the nodes that advertise each.
func TestResourcesOfEveryNode(t *testing.T) {
	gpu := node(t, "gpu-1", m{"nvidia.com/gpu.product": "NVIDIA-H200", "nvidia.com/gpu.count": "8"},
		m{"cpu": "96", "memory": "2Ti", "nvidia.com/gpu": "8", "vpc.amazonaws.com/efa": "32", "hugepages-1Gi": "0"}, nil)
	fpga := node(t, "cpu-2", nil, m{"cpu": "32", "example.com/fpga": "2"}, m{"cpu": "31", "example.com/fpga": "2", "smarter-devices/fuse": "10"})
	plain := node(t, "cpu-1", nil, m{"cpu": "8", "pods": "110"}, nil)
	inv := inventory.Classify([]inventory.RawNode{gpu, fpga, plain}, builtin(t), inventory.Options{})
	// The FPGA node is an accelerator node: its device is one to the
	// policies, and no node that has one is invisible (issue 48).
	require.Len(t, inv.Nodes, 2)
	assert.Equal(t, "cpu-2", inv.Nodes[0].Name)
	assert.Equal(t, inventory.TypeUnknown, inv.Nodes[0].AcceleratorType)
	assert.Contains(t, strings.Join(inv.Nodes[0].Notes, "\n"), "advertises example.com/fpga, an extended resource of no vendor accelc knows")
	assert.Equal(t, 1, inv.OtherNodes)
	// Declared not an accelerator, it leaves the node a plain one.
	declared := inventory.Classify([]inventory.RawNode{gpu, fpga, plain}, builtin(t), inventory.Options{NonAccelerator: func(r string) bool {
		return r == "example.com/fpga" || strings.HasPrefix(r, "smarter-devices/")
	}})
	assert.Len(t, declared.Nodes, 1)
	assert.Equal(t, map[string][]string{
		"nvidia.com/gpu":        {"gpu-1"},
		"vpc.amazonaws.com/efa": {"gpu-1"},
		"example.com/fpga":      {"cpu-2"},
		"smarter-devices/fuse":  {"cpu-2"},
	}, inv.Resources)
}

// TestSnapshotNamespaces: a snapshot keeps the cluster's namespaces in its
// source; one without them (older, or plain kubectl output) knows none.
func TestSnapshotNamespaces(t *testing.T) {
	snap := &inventory.Snapshot{
		Source: &inventory.Source{Cluster: "prod", TakenAt: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), Namespaces: []string{"default", "gpu-operator", "kube-system"}},
		Nodes:  []inventory.RawNode{node(t, "n", nil, m{"cpu": "1"}, nil)},
	}
	var buf bytes.Buffer
	require.NoError(t, snap.Write(&buf))
	assert.Contains(t, buf.String(), `"namespaces": [`)
	back, err := inventory.DecodeSnapshot(buf.Bytes())
	require.NoError(t, err)
	inv := back.Classify(builtin(t), inventory.Options{})
	got, ok := inv.Source.KnownNamespaces()
	assert.True(t, ok)
	assert.Equal(t, []string{"default", "gpu-operator", "kube-system"}, got)

	old, err := inventory.DecodeSnapshot([]byte(`{"kind": "List", "accelc": {"cluster": "prod", "takenAt": "2026-01-01T00:00:00Z", "podsCounted": false}, "items": []}`))
	require.NoError(t, err)
	_, ok = old.Source.KnownNamespaces()
	assert.False(t, ok, "a snapshot from before namespaces were kept")
	plain, err := inventory.DecodeSnapshot([]byte(`{"kind": "List", "items": []}`))
	require.NoError(t, err)
	_, ok = plain.Source.KnownNamespaces()
	assert.False(t, ok, "kubectl's own output")
}
