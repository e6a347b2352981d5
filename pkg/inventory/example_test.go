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
