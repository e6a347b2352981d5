package catalog_test

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelc/accelc/pkg/catalog"
	"github.com/accelc/accelc/pkg/inventory"
)

// TestGFDProducts maps nvidia.com/gpu.product values as GPU Feature
// Discovery writes them on real nodes (NVML's name, spaces turned into
// '-') to classes. It covers the prefix traps: a value names exactly one
// class, never a class whose name it merely starts with.
func TestGFDProducts(t *testing.T) {
	cat, err := catalog.Builtin()
	require.NoError(t, err)
	for _, tc := range []struct{ value, want string }{
		// Ampere data center, and the A10 / A100 / A16 / A2 traps.
		{"NVIDIA-A40", "nvidia-a40-48gb"},
		{"A40", "nvidia-a40-48gb"},
		{"nvidia-a40", "nvidia-a40-48gb"},
		{"NVIDIA-A16", "nvidia-a16-16gb"},
		{"NVIDIA-A2", "nvidia-a2-16gb"},
		{"A2", "nvidia-a2-16gb"},
		{"NVIDIA-A10", "nvidia-a10-24gb"},
		{"NVIDIA-A10G", "nvidia-a10g-24gb"},
		{"NVIDIA-A30", "nvidia-a30-24gb"},
		{"NVIDIA-A100-PCIE-40GB", "nvidia-a100-40gb"},
		{"NVIDIA-A800-SXM4-80GB", "nvidia-a800-80gb"},
		{"A800-SXM4-80GB", "nvidia-a800-80gb"},
		{"NVIDIA-A800-80GB-PCIe", "nvidia-a800-80gb"},
		{"NVIDIA-A800-80GB-PCIe-LC", "nvidia-a800-80gb"},
		{"NVIDIA-A800-SXM4-40GB", "nvidia-a800-40gb"},
		{"NVIDIA-A800-40GB-Active", "nvidia-a800-40gb"},
		// Hopper: H800 / H20 against H100 / H200.
		{"NVIDIA-H800", "nvidia-h800-80gb"},
		{"NVIDIA-H800-PCIe", "nvidia-h800-80gb"},
		{"NVIDIA-H800-NVL", "nvidia-h800-94gb"},
		{"NVIDIA-H20", "nvidia-h20-96gb"},
		{"NVIDIA-H20-3e", "nvidia-h20-141gb"},
		{"NVIDIA-H200", "nvidia-h200-141gb"},
		{"NVIDIA-H100-PCIe", "nvidia-h100-80gb"},
		// Ada: L4 / L20 / L40 / L40S.
		{"NVIDIA-L20", "nvidia-l20-48gb"},
		{"NVIDIA-L4", "nvidia-l4-24gb"},
		{"NVIDIA-L40", "nvidia-l40-48gb"},
		{"NVIDIA-L40S", "nvidia-l40s-48gb"},
		// Workstation cards: RTX 6000 Ada against the Quadro RTX 6000.
		{"NVIDIA-RTX-6000-Ada-Generation", "nvidia-rtx-6000-ada-48gb"},
		{"NVIDIA RTX 6000 Ada Generation", "nvidia-rtx-6000-ada-48gb"},
		{"Quadro-RTX-6000", "nvidia-quadro-rtx-6000-24gb"},
		{"NVIDIA-Quadro-RTX-6000", "nvidia-quadro-rtx-6000-24gb"},
		{"Quadro-RTX-8000", "nvidia-quadro-rtx-8000-48gb"},
		{"QUADRO-RTX-8000", "nvidia-quadro-rtx-8000-48gb"},
		{"NVIDIA-RTX-A6000", "nvidia-rtx-a6000-48gb"},
		{"NVIDIA-RTX-A5000", "nvidia-rtx-a5000-24gb"},
		{"RTX-A5000", "nvidia-rtx-a5000-24gb"},
		{"NVIDIA-RTX-A4000", "nvidia-rtx-a4000-16gb"},
		// GeForce.
		{"NVIDIA-GeForce-RTX-3090", "nvidia-rtx-3090-24gb"},
		{"GeForce-RTX-3090", "nvidia-rtx-3090-24gb"},
		{"NVIDIA GeForce RTX 3090", "nvidia-rtx-3090-24gb"},
		{"NVIDIA-GeForce-RTX-3090-Ti", "nvidia-rtx-3090ti-24gb"},
		{"NVIDIA-GeForce-RTX-4090", "nvidia-rtx-4090-24gb"},
		{"NVIDIA-GeForce-RTX-4090-D", "nvidia-rtx-4090d-24gb"},
		// Pascal, Maxwell, Kepler: the P4 / P40 / P100 traps.
		{"Tesla-P100-PCIE-16GB", "nvidia-p100-16gb"},
		{"TESLA-P100-PCIE-16GB", "nvidia-p100-16gb"},
		{"Tesla_P100-PCIE-16GB", "nvidia-p100-16gb"},
		{"Tesla-P100-SXM2-16GB", "nvidia-p100-16gb"},
		{"Tesla-P100-PCIE-12GB", "nvidia-p100-12gb"},
		{"Tesla-P40", "nvidia-p40-24gb"},
		{"Tesla-P4", "nvidia-p4-8gb"},
		{"Tesla-M60", "nvidia-m60-8gb"},
		{"Tesla-K80", "nvidia-k80-12gb"},
		{"Tesla-T4", "nvidia-t4-16gb"},
		// Blackwell. Values as real nodes and nvidia-smi report them:
		// NVIDIA-B300-SXM6-AC in `kubectl get nodes -l` of an EKS p6-b300
		// cluster (littlemex/distributed-inference), NVIDIA-GB200 in
		// nodeSelectors of GB200 clusters (NVIDIA/aicr, prime-rl),
		// "NVIDIA GB300" from nvidia-smi on GB300 trays (sglang
		// deployment notes), the RTX PRO 6000 Server Edition in a Helm
		// chart's nodeSelector; the Workstation and Max-Q names are
		// NVIDIA's (developer.nvidia.com/cuda-gpus) as NVML writes them.
		{"NVIDIA-B200", "nvidia-b200-180gb"},
		{"NVIDIA-B100", "nvidia-b100-192gb"},
		{"NVIDIA-B300-SXM6-AC", "nvidia-b300-288gb"},
		{"NVIDIA-GB200", "nvidia-gb200-186gb"},
		{"NVIDIA-GB300", "nvidia-gb300-279gb"},
		{"NVIDIA GB300", "nvidia-gb300-279gb"},
		{"NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition", "nvidia-rtx-pro-6000-96gb"},
		{"NVIDIA-RTX-PRO-6000-Blackwell-Workstation-Edition", "nvidia-rtx-pro-6000-96gb"},
		{"NVIDIA-RTX-PRO-6000-Blackwell-Max-Q-Workstation-Edition", "nvidia-rtx-pro-6000-96gb"},
		{"NVIDIA-GeForce-RTX-5090", "nvidia-rtx-5090-32gb"},
		{"NVIDIA-GeForce-RTX-4080", "nvidia-rtx-4080-16gb"},
		{"NVIDIA-GeForce-RTX-2080-Ti", "nvidia-rtx-2080ti-11gb"},
		{"NVIDIA-TITAN-RTX", "nvidia-titan-rtx-24gb"},
		{"NVIDIA-RTX-4000-Ada-Generation", "nvidia-rtx-4000-ada-20gb"},
	} {
		c, ok := cat.ByLabel(catalog.LabelGFDProduct, tc.value)
		if assert.True(t, ok, tc.value) {
			assert.Equal(t, tc.want, c.ID, tc.value)
		}
	}
	for _, value := range []string{
		"NVIDIA-A1", "NVIDIA-A8", "NVIDIA-A800", "NVIDIA-H8", "NVIDIA-H2", "NVIDIA-L2",
		"NVIDIA-RTX-6000-Ada", "NVIDIA-GeForce-RTX-4070", "Tesla-P",
		// GB200 and GB300 are not B200 and B300; the RTX PRO 6000D is
		// another product.
		"NVIDIA-B", "NVIDIA-GB", "NVIDIA-B300", "NVIDIA-RTX-PRO-6000D-Blackwell-Workstation-Edition",
	} {
		c, ok := cat.ByLabel(catalog.LabelGFDProduct, value)
		assert.False(t, ok, "%s names %v", value, c)
	}
}

// TestOtherLabels covers the keys other than GFD's product: GKE's
// accelerator label, AMD's node labeller and cloud instance types.
func TestOtherLabels(t *testing.T) {
	cat, err := catalog.Builtin()
	require.NoError(t, err)
	for _, tc := range []struct{ key, value, want string }{
		{"cloud.google.com/gke-accelerator", "nvidia-tesla-p100", "nvidia-p100-16gb"},
		{"cloud.google.com/gke-accelerator", "nvidia-tesla-p4", "nvidia-p4-8gb"},
		{"cloud.google.com/gke-accelerator", "nvidia-tesla-k80", "nvidia-k80-12gb"},
		{"cloud.google.com/gke-accelerator", "nvidia-tesla-t4", "nvidia-t4-16gb"},
		{"amd.com/gpu.product-name", "AMD_Instinct_MI100", "amd-mi100-32gb"},
		{"amd.com/gpu.product-name", "AMD_Instinct_MI325_OAM", "amd-mi325x-256gb"},
		{"amd.com/gpu.product-name", "AMD_Instinct_MI325X", "amd-mi325x-256gb"},
		{"amd.com/gpu.product-name", "AMD_Instinct_MI300X_OAM", "amd-mi300x-192gb"},
		{"amd.com/gpu.device-id", "738c", "amd-mi100-32gb"},
		{"amd.com/gpu.device-id", "74a5", "amd-mi325x-256gb"},
		{"amd.com/gpu.device-id", "74a1", "amd-mi300x-192gb"},
		{"node.kubernetes.io/instance-type", "p2.xlarge", "nvidia-k80-12gb"},
		{"node.kubernetes.io/instance-type", "g3s.xlarge", "nvidia-m60-8gb"},
		{"node.kubernetes.io/instance-type", "g3.16xlarge", "nvidia-m60-8gb"},
		{"node.kubernetes.io/instance-type", "gr6.4xlarge", "nvidia-l4-24gb"},
		{"node.kubernetes.io/instance-type", "Standard_NC6", "nvidia-k80-12gb"},
		{"node.kubernetes.io/instance-type", "Standard_NC6s_v2", "nvidia-p100-16gb"},
		{"node.kubernetes.io/instance-type", "Standard_NC6s_v3", "nvidia-v100-16gb"},
		{"node.kubernetes.io/instance-type", "Standard_ND24rs", "nvidia-p40-24gb"},
		{"node.kubernetes.io/instance-type", "Standard_NV12s_v3", "nvidia-m60-8gb"},
		{"beta.kubernetes.io/instance-type", "Standard_NV6", "nvidia-m60-8gb"},
		{"node.kubernetes.io/instance-type", "Standard_ND96isr_MI300X_v5", "amd-mi300x-192gb"},
		// Current data-centre parts. AMD's names and device ids are the
		// node labeller's amdgpu.ids (ROCm/k8s-device-plugin); a virtual
		// function (_VF, its own device id) is the same GPU seen from a VM.
		{"amd.com/gpu.device-id", "74b5", "amd-mi300x-192gb"},
		{"amd.com/gpu.product-name", "AMD_Instinct_MI300X_VF", "amd-mi300x-192gb"},
		{"amd.com/gpu.product-name", "AMD_Instinct_MI325X_VF", "amd-mi325x-256gb"},
		{"amd.com/gpu.device-id", "74b9", "amd-mi325x-256gb"},
		{"amd.com/gpu.device-id", "74a0", "amd-mi300a-128gb"},
		{"amd.com/gpu.product-name", "AMD_Instinct_MI300A", "amd-mi300a-128gb"},
		{"amd.com/gpu.device-id", "75a0", "amd-mi350x-288gb"},
		{"amd.com/gpu.product-name", "AMD_Instinct_MI350X_VF", "amd-mi350x-288gb"},
		{"amd.com/gpu.device-id", "75a3", "amd-mi355x-288gb"},
		{"amd.com/gpu.device-id", "75b3", "amd-mi355x-288gb"},
		{"amd.com/gpu.product-name", "AMD_Instinct_MI355X", "amd-mi355x-288gb"},
		// Intel's GPU plugin NFD rules (a node's labels in a public
		// test: gpu.intel.com/product=Max_1100, gpu.intel.com/memory=49152).
		{"gpu.intel.com/product", "Max_1100", "intel-max-1100-48gb"},
		{"gpu.intel.com/product", "Max_1550", "intel-max-1550-128gb"},
		// GKE's accelerator label as nodeSelectors use it on A4X (GB200)
		// and G4 (RTX PRO 6000) node pools.
		{"cloud.google.com/gke-accelerator", "nvidia-gb200", "nvidia-gb200-186gb"},
		{"cloud.google.com/gke-accelerator", "nvidia-rtx-pro-6000", "nvidia-rtx-pro-6000-96gb"},
		// Cloud instance types: AWS P6-B300, P6e-GB200 and G7e, GCP A4X.
		{"node.kubernetes.io/instance-type", "p6-b300.48xlarge", "nvidia-b300-288gb"},
		{"node.kubernetes.io/instance-type", "p6e-gb200.36xlarge", "nvidia-gb200-186gb"},
		{"node.kubernetes.io/instance-type", "a4x-highgpu-4g", "nvidia-gb200-186gb"},
		{"node.kubernetes.io/instance-type", "g7e.48xlarge", "nvidia-rtx-pro-6000-96gb"},
		{"node.kubernetes.io/instance-type", "g7e.2xlarge", "nvidia-rtx-pro-6000-96gb"},
	} {
		c, ok := cat.ByLabel(tc.key, tc.value)
		if assert.True(t, ok, "%s=%s", tc.key, tc.value) {
			assert.Equal(t, tc.want, c.ID, "%s=%s", tc.key, tc.value)
		}
	}
}

// TestCatalogInvariants checks what classification relies on across the
// whole built-in catalog.
func TestCatalogInvariants(t *testing.T) {
	cat, err := catalog.Builtin()
	require.NoError(t, err)
	pci := map[string]string{}
	models := map[string]map[int]string{}
	for _, c := range cat.Classes() {
		assert.Regexp(t, `^[a-z]+-[a-z0-9-]+-\d+gb$`, c.ID)
		assert.Contains(t, c.ID, "-"+strconv.Itoa(c.MemoryGB)+"gb", "%s: the id names the memory", c.ID)
		assert.NotEmpty(t, c.Architecture, c.ID)
		if c.Vendor == "nvidia" {
			assert.NotEmpty(t, c.ComputeCapability, c.ID)
			assert.NotEmpty(t, c.IdentifiedBy[catalog.LabelGFDProduct], c.ID)
		}
		// NFD rules stamp the type by PCI id alone: an id on two classes
		// would put two types on one node.
		for _, dev := range c.PCIDeviceIDs {
			k := c.Vendor + "/" + dev
			if other, dup := pci[k]; dup {
				t.Errorf("PCI device %s is on both %s and %s", k, other, c.ID)
			}
			pci[k] = c.ID
		}
		// The model fallback tells a model's classes apart by memory
		// alone: two classes of one model and one size would be a guess.
		mk := c.Vendor + "/" + c.Model
		if models[mk] == nil {
			models[mk] = map[int]string{}
		}
		if other, dup := models[mk][c.MemoryGB]; dup {
			t.Errorf("model %s has two %dGB classes: %s and %s", mk, c.MemoryGB, other, c.ID)
		}
		models[mk][c.MemoryGB] = c.ID
	}
}

// TestModelFallback classifies nodes whose product value the catalog
// does not list: the model fallback takes the class only where the model
// and memory say which, and otherwise leaves the node unknown.
func TestModelFallback(t *testing.T) {
	cat, err := catalog.Builtin()
	require.NoError(t, err)
	for _, tc := range []struct {
		product string
		memMiB  int // nvidia.com/gpu.memory; 0 for none
		want    string
	}{
		{"NVIDIA-A800", 81920, "nvidia-a800-80gb"},
		{"NVIDIA-A800", 40960, "nvidia-a800-40gb"},
		{"NVIDIA-A800", 0, inventory.TypeUnknown},
		{"NVIDIA-A800-PCIE-40GB", 0, "nvidia-a800-40gb"},
		{"NVIDIA-H20-141GB-HBM3e", 0, "nvidia-h20-141gb"},
		{"NVIDIA-H20-SXM5", 97871, "nvidia-h20-96gb"},
		{"NVIDIA-H20-SXM5", 0, inventory.TypeUnknown},
		{"NVIDIA-RTX-6000-Ada", 49140, "nvidia-rtx-6000-ada-48gb"},
		{"Quadro-RTX-6000-Passive", 24576, "nvidia-quadro-rtx-6000-24gb"},
		{"NVIDIA-RTX-6000-Ada", 0, inventory.TypeUnknown},
		{"Tesla-P100-PCIE", 12288, "nvidia-p100-12gb"},
		{"Tesla-P100-PCIE", 16384, "nvidia-p100-16gb"},
		{"Tesla-P100-PCIE", 0, inventory.TypeUnknown},
		{"NVIDIA-A100", 0, inventory.TypeUnknown},
		// No class of the model has that memory: no guess.
		{"NVIDIA-A800", 65536, inventory.TypeUnknown},
	} {
		name := fmt.Sprintf("%s/%d", tc.product, tc.memMiB)
		var n inventory.RawNode
		n.Metadata.Name = "n"
		n.Metadata.Labels = map[string]string{catalog.LabelGFDProduct: tc.product, "nvidia.com/gpu.count": "1"}
		if tc.memMiB > 0 {
			n.Metadata.Labels["nvidia.com/gpu.memory"] = strconv.Itoa(tc.memMiB)
		}
		n.Status.Capacity = map[string]string{"nvidia.com/gpu": "1"}
		inv := inventory.Classify([]inventory.RawNode{n}, cat, inventory.Options{})
		if assert.Len(t, inv.Nodes, 1, name) {
			assert.Equal(t, tc.want, inv.Nodes[0].AcceleratorType, "%s: %v", name, inv.Nodes[0].Notes)
		}
	}
}
