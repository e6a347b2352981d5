package inventory_test

import (
	"fmt"

	"github.com/accelc/accelc/pkg/catalog"
	"github.com/accelc/accelc/pkg/inventory"
)

// Classify a two-node snapshot: a time-sliced T4 whose product GFD
// suffixed with -SHARED, and a node with GPU capacity but no labels.
func ExampleClassify() {
	raw, problems, err := inventory.Decode([]byte(`{"kind": "List", "items": [
	  {"kind": "Node", "metadata": {"name": "t4", "labels": {
	    "nvidia.com/gpu.product": "Tesla-T4-SHARED", "nvidia.com/gpu.count": "1", "nvidia.com/gpu.replicas": "4"}},
	   "status": {"allocatable": {"nvidia.com/gpu": "4"}, "conditions": [{"type": "Ready", "status": "True"}]}},
	  {"kind": "Node", "metadata": {"name": "bare"},
	   "status": {"capacity": {"nvidia.com/gpu": "2"}}}
	]}`))
	if err != nil || len(problems) > 0 {
		panic(fmt.Sprint(err, problems))
	}
	cat, err := catalog.Builtin()
	if err != nil {
		panic(err)
	}
	inv := inventory.Classify(raw, cat, inventory.Options{})
	for _, n := range inv.Nodes {
		fmt.Printf("%s: %s, %s, %d allocatable (%s)\n", n.Name, n.AcceleratorType, n.Sharing, n.Allocatable, n.Notes[0])
	}
	for _, s := range inv.Summary() {
		fmt.Println(s)
	}
	// Output:
	// bare: unknown, exclusive, 2 allocatable (no GPU Feature Discovery labels: install the GPU Operator (or GFD), or pin the type in cluster.nodes)
	// t4: nvidia-t4-16gb, time-sliced, 4 allocatable (type from nvidia.com/gpu.product=Tesla-T4-SHARED)
	// NVIDIA T4 16GB: 1 node, 1 GPU, 4 allocatable (4 of the allocatable are shared replicas, not whole GPUs)
	// GPU - type unknown: 1 node, 2 GPUs, 2 allocatable
}

// Classify a node by its ResourceSlice: NVIDIA's DRA driver publishes two
// GPUs of two models, each classified from its productName; the uuid the
// driver publishes is not kept.
func ExampleSnapshot_Classify_resourceSlices() {
	snap, err := inventory.DecodeSnapshot([]byte(`{"kind": "List", "items": [
	  {"kind": "Node", "metadata": {"name": "dra-01"}, "status": {"conditions": [{"type": "Ready", "status": "True"}]}},
	  {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "dra-01-gpu.nvidia.com-x7k2p"},
	   "spec": {"driver": "gpu.nvidia.com", "nodeName": "dra-01", "pool": {"name": "dra-01", "generation": 1, "resourceSliceCount": 1},
	    "devices": [
	      {"name": "gpu-0", "attributes": {"type": {"string": "gpu"}, "productName": {"string": "NVIDIA A100-SXM4-80GB"},
	        "uuid": {"string": "GPU-0a1b2c3d-0000-1111-2222-333344445555"}}},
	      {"name": "gpu-1", "attributes": {"type": {"string": "gpu"}, "productName": {"string": "NVIDIA H100 80GB HBM3"},
	        "uuid": {"string": "GPU-0a1b2c3d-0000-1111-2222-333344446666"}}}]}}
	]}`))
	if err != nil {
		panic(err)
	}
	cat, err := catalog.Builtin()
	if err != nil {
		panic(err)
	}
	_, kept := snap.Slices[0].Spec.Devices[0].Attributes["uuid"]
	fmt.Println("uuid kept:", kept)
	inv := snap.Classify(cat, inventory.Options{})
	for _, n := range inv.Nodes {
		for _, g := range n.DRA {
			fmt.Printf("%s: %d× %s\n", n.Name, g.GPUs, g.AcceleratorType)
		}
	}
	for _, s := range inv.Summary() {
		fmt.Println(s)
	}
	// Output:
	// uuid kept: false
	// dra-01: 1× nvidia-a100-80gb
	// dra-01: 1× nvidia-h100-80gb
	// NVIDIA A100 80GB: 1 node, 1 GPU, 1 allocatable
	// NVIDIA H100 80GB: 1 node, 1 GPU, 1 allocatable
}
