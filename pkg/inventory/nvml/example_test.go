package nvml_test

import (
	"fmt"

	_ "github.com/accelc/accelc/internal/testutil"
	"github.com/accelc/accelc/pkg/inventory/nvml"
)

// The Node a report stands for carries GPU Feature Discovery's labels and
// the device plugin's capacity, which pkg/inventory classifies.
func ExampleReport_NodeObject() {
	r := &nvml.Report{Node: "gpu-07", DriverVersion: "550.54.15", CUDAVersion: "12.4", GPUs: []nvml.GPU{
		{Index: 0, Product: "NVIDIA H100 80GB HBM3", ComputeCapability: "9.0", MemoryMiB: 81559},
		{Index: 1, Product: "NVIDIA H100 80GB HBM3", ComputeCapability: "9.0", MemoryMiB: 81559,
			MIG: &nvml.MIG{Current: nvml.MIGEnabled, Pending: nvml.MIGEnabled, Devices: map[string]int{"3g.40gb": 2}}},
	}}
	n := r.NodeObject()
	for _, k := range []string{"nvidia.com/gpu.product", "nvidia.com/gpu.count", "nvidia.com/gpu.family", "nvidia.com/mig-3g.40gb.count"} {
		fmt.Printf("%s=%s\n", k, n.Metadata.Labels[k])
	}
	fmt.Println(n.Status.Capacity)
	// Output:
	// nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3
	// nvidia.com/gpu.count=2
	// nvidia.com/gpu.family=hopper
	// nvidia.com/mig-3g.40gb.count=2
	// map[nvidia.com/gpu:1 nvidia.com/mig-3g.40gb:2]
}
