package inventory_test

import (
	"testing"

	"github.com/accelc/accelc/pkg/inventory"
)

// Issue 33's corpus: label sets as providers, operators and users have
// printed them, each case citing where. A case takes only the labels and
// capacity its source shows; where a source shows a node selector rather
// than a node, the node carries what the selector selects.

// TestVGPUGuests: NVIDIA vGPU guests are of their board's class, shared
// through the hypervisor (family vGPU).
func TestVGPUGuests(t *testing.T) {
	vks := m{"nvidia.com/vgpu.present": "true", "nvidia.com/vgpu.host-driver-branch": "r582_12", "nvidia.com/vgpu.host-driver-version": "580.126.08"}
	with := func(base m, kv ...string) m {
		out := m{}
		for k, v := range base {
			out[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			out[kv[i]] = kv[i+1]
		}
		return out
	}
	runFamilies(t, []family{
		{name: "vks-grid-a100-40c", source: "a VMware VKS AI-conformance write-up (vGPU evidence in node labels: vgpu.present, host-driver r582_12 580.126.08, gpu.product GRID-A100-40C)",
			labels: with(vks, "nvidia.com/gpu.product", "GRID-A100-40C", "nvidia.com/gpu.count", "1"), cap: m{"nvidia.com/gpu": "1"},
			typ: "nvidia-a100-40gb", vendor: "nvidia", sharing: inventory.VGPU, count: 1, allocN: 1, why: "NVIDIA vGPU A100-40C: the whole NVIDIA A100 40GB's 40GB"},
		{name: "vks-grid-a100-4c", source: "the same VKS write-up's second VM class (gpu.product GRID-A100-4C)",
			labels: with(vks, "nvidia.com/gpu.product", "GRID-A100-4C", "nvidia.com/gpu.memory", "4096"), cap: m{"nvidia.com/gpu": "1"},
			typ: "nvidia-a100-40gb", vendor: "nvidia", sharing: inventory.VGPU, count: 1, allocN: 1, why: "NVIDIA vGPU A100-4C: 4GB of the NVIDIA A100 40GB's 40GB"},
		{name: "aks-a10-24q", source: "kaito-project/kaito's node fixture for an Azure NVadsA10 v5 node (gpu.product NVIDIA-A10-24Q, count 2, memory 24512)",
			labels: m{"nvidia.com/gpu.product": "NVIDIA-A10-24Q", "nvidia.com/gpu.count": "2", "nvidia.com/gpu.memory": "24512"},
			typ:    "nvidia-a10-24gb", vendor: "nvidia", sharing: inventory.VGPU, count: 2, allocN: 2, why: "NVIDIA vGPU A10-24Q: the whole NVIDIA A10 24GB's 24GB"},
		{name: "a10-24q-time-sliced", source: "a public AKS GPU-sharing guide's `kubectl describe node` (NVIDIA-A10-24Q-SHARED, replicas 4, vgpu host driver r552_52 553.07)",
			labels: m{"nvidia.com/gpu.family": "ampere", "nvidia.com/gpu.machine": "Virtual-Machine", "nvidia.com/gpu.memory": "24512", "nvidia.com/gpu.present": "true",
				"nvidia.com/gpu.product": "NVIDIA-A10-24Q-SHARED", "nvidia.com/gpu.replicas": "4", "nvidia.com/mig.capable": "true", "nvidia.com/mig.strategy": "single",
				"nvidia.com/vgpu.host-driver-branch": "r552_52", "nvidia.com/vgpu.host-driver-version": "553.07", "nvidia.com/gpu.count": "1"},
			cap: m{"nvidia.com/gpu": "4"},
			// Time-slicing inside the guest: a pod gets a replica of the vGPU.
			typ: "nvidia-a10-24gb", vendor: "nvidia", sharing: inventory.TimeSliced, count: 1, allocN: 4, why: "NVIDIA vGPU A10-24Q"},
		{name: "h100xm-80c", source: "a cluster manager's tests of the device string its H100 vGPU nodes report (NVIDIA-H100XM-80C, memory 81920 MiB)",
			labels: m{"nvidia.com/gpu.product": "NVIDIA-H100XM-80C", "nvidia.com/gpu.memory": "81920", "nvidia.com/gpu.count": "1"},
			typ:    "nvidia-h100-80gb", vendor: "nvidia", sharing: inventory.VGPU, count: 1, allocN: 1, why: "NVIDIA vGPU H100XM-80C"},
		{name: "vgpu-guest-physical-name", source: "the VKS write-up's vGPU labels (vgpu.present, host driver r582_12) on a guest whose GFD names the board itself, as passthrough-style vGPU profiles print it",
			labels: with(vks, "nvidia.com/gpu.product", "NVIDIA-A100-PCIE-40GB", "nvidia.com/gpu.count", "1"), cap: m{"nvidia.com/gpu": "1"},
			typ: "nvidia-a100-40gb", vendor: "nvidia", sharing: inventory.Exclusive, count: 1, allocN: 1,
			why: "GPU Feature Discovery marks a vGPU guest, but nvidia.com/gpu.product=NVIDIA-A100-PCIE-40GB names no vGPU type: counted as whole GPUs"},
		{name: "mig-backed-a100d-2-20c", source: "StackHPC's kayobe vGPU docs, the mdev types of an A100 PCIe 80GB (nvidia-700 GRID A100D-2-20C), as the guest's GFD names it",
			labels: with(vks, "nvidia.com/gpu.product", "GRID-A100D-2-20C", "nvidia.com/gpu.count", "1"),
			typ:    "nvidia-a100-80gb", vendor: "nvidia", sharing: inventory.VGPU, count: 1, allocN: 1, why: "20GB of the NVIDIA A100 80GB's 80GB, on a MIG instance of 2 compute slices"},
	})
}

// TestGKESharing: GKE's own time-sharing, MPS and MIG, read from the
// labels GKE puts on a node pool's nodes (family GKE).
func TestGKESharing(t *testing.T) {
	runFamilies(t, []family{
		{name: "l4-time-sharing-4", source: "a public GKE lab write-up (node pool nvidia-l4, gpuSharingConfig TIME_SHARING 4: node labels gke-gpu-sharing-strategy=time-sharing, gke-max-shared-clients-per-gpu=4; allocatable nvidia.com/gpu 4)",
			labels: m{"cloud.google.com/gke-accelerator": "nvidia-l4", "cloud.google.com/gke-gpu-sharing-strategy": "time-sharing", "cloud.google.com/gke-max-shared-clients-per-gpu": "4"},
			cap:    m{"nvidia.com/gpu": "4"},
			typ:    "nvidia-l4-24gb", vendor: "nvidia", sharing: inventory.TimeSliced, count: 1, allocN: 4, why: "time-sliced from cloud.google.com/gke-gpu-sharing-strategy=time-sharing"},
		{name: "t4-time-sharing-16", source: "a GKE cluster README's time-slicing convention (nodeSelector gke-accelerator nvidia-tesla-t4, time-sharing, 16 clients: NAP provisions a node advertising 16 GPU slots)",
			labels: m{"cloud.google.com/gke-accelerator": "nvidia-tesla-t4", "cloud.google.com/gke-gpu-sharing-strategy": "time-sharing", "cloud.google.com/gke-max-shared-clients-per-gpu": "16"},
			cap:    m{"nvidia.com/gpu": "16"},
			typ:    "nvidia-t4-16gb", vendor: "nvidia", sharing: inventory.TimeSliced, count: 1, allocN: 16, why: "up to 16 containers a GPU"},
		{name: "mps", source: "cloud.google.com/kubernetes-engine/docs/how-to/nvidia-mps-gpus (node pool --accelerator ...,gpu-sharing-strategy=mps,max-shared-clients-per-gpu=3: nodes labelled gke-gpu-sharing-strategy=mps)",
			labels: m{"cloud.google.com/gke-accelerator": "nvidia-tesla-t4", "cloud.google.com/gke-gpu-sharing-strategy": "mps", "cloud.google.com/gke-max-shared-clients-per-gpu": "3"},
			cap:    m{"nvidia.com/gpu": "3"},
			typ:    "nvidia-t4-16gb", vendor: "nvidia", sharing: inventory.MPS, count: 1, allocN: 3, why: "mps from cloud.google.com/gke-gpu-sharing-strategy=mps"},
		{name: "a100-partition-1g-5gb", source: "a public GKE Gemma 3 example (gke-gpu-partition-size 1g.5gb: up to 7 replicas on one a2-highgpu-1g node) and cloud.google.com/kubernetes-engine/docs/how-to/gpus-multi",
			labels: m{"cloud.google.com/gke-accelerator": "nvidia-tesla-a100", "cloud.google.com/gke-gpu-partition-size": "1g.5gb", "node.kubernetes.io/instance-type": "a2-highgpu-1g"},
			cap:    m{"nvidia.com/gpu": "7"},
			typ:    "nvidia-a100-40gb", vendor: "nvidia", sharing: inventory.MIGSingle, count: 7, allocN: 7, mig: map[string]int{"1g.5gb": 7}, why: "MIG single from cloud.google.com/gke-gpu-partition-size=1g.5gb"},
		{name: "rtx-pro-6000-partition", source: "an Omniverse streaming on GKE guide's values (nodeSelector cloud.google.com/gke-gpu-partition-size: 1g.24gb) on GKE's nvidia-rtx-pro-6000 nodes",
			labels: m{"cloud.google.com/gke-accelerator": "nvidia-rtx-pro-6000", "cloud.google.com/gke-gpu-partition-size": "1g.24gb"},
			cap:    m{"nvidia.com/gpu": "4"},
			typ:    "nvidia-rtx-pro-6000-96gb", vendor: "nvidia", sharing: inventory.MIGSingle, count: 4, allocN: 4, mig: map[string]int{"1g.24gb": 4}, why: "gke-gpu-partition-size=1g.24gb"},
		{name: "h100-mega", source: "GKE's accelerator values (Vertex AI/GKE AcceleratorType NVIDIA_H100_MEGA_80GB: cloud.google.com/gke-accelerator=nvidia-h100-mega-80gb on a3-megagpu-8g)",
			labels: m{"cloud.google.com/gke-accelerator": "nvidia-h100-mega-80gb", "node.kubernetes.io/instance-type": "a3-megagpu-8g"}, cap: m{"nvidia.com/gpu": "8"},
			typ: "nvidia-h100-80gb", vendor: "nvidia", sharing: inventory.Exclusive, count: 8, allocN: 8, why: "gke-accelerator=nvidia-h100-mega-80gb"},
		{name: "h200", source: "GKE's accelerator values (NVIDIA_H200_141GB: gke-accelerator=nvidia-h200-141gb on a3-ultragpu-8g)",
			labels: m{"cloud.google.com/gke-accelerator": "nvidia-h200-141gb"}, cap: m{"nvidia.com/gpu": "8"},
			typ: "nvidia-h200-141gb", vendor: "nvidia", sharing: inventory.Exclusive, count: 8, allocN: 8, why: "gke-accelerator=nvidia-h200-141gb"},
		{name: "b200", source: "GKE's accelerator values (NVIDIA_B200: gke-accelerator=nvidia-b200 on a4-highgpu-8g)",
			labels: m{"cloud.google.com/gke-accelerator": "nvidia-b200"}, cap: m{"nvidia.com/gpu": "8"},
			typ: "nvidia-b200-180gb", vendor: "nvidia", sharing: inventory.Exclusive, count: 8, allocN: 8, why: "gke-accelerator=nvidia-b200"},
		{name: "a100-80gb", source: "GKE's accelerator values (NVIDIA_A100_80GB: gke-accelerator=nvidia-a100-80gb)",
			labels: m{"cloud.google.com/gke-accelerator": "nvidia-a100-80gb"}, cap: m{"nvidia.com/gpu": "1"},
			typ: "nvidia-a100-80gb", vendor: "nvidia", sharing: inventory.Exclusive, count: 1, allocN: 1, why: "gke-accelerator=nvidia-a100-80gb"},
	})
}

// TestInstanceTypesAndProviderLabels: OCI shapes, Azure sizes with AKS's
// accelerator label, CoreWeave's class label, IBM Cloud profiles (family
// provider labels).
func TestInstanceTypesAndProviderLabels(t *testing.T) {
	oke := func(shape string) m {
		return m{"node.kubernetes.io/instance-type": shape, "beta.kubernetes.io/instance-type": shape}
	}
	aks := func(size string) m {
		return m{"kubernetes.azure.com/accelerator": "nvidia", "node.kubernetes.io/instance-type": size, "beta.kubernetes.io/instance-type": size}
	}
	runFamilies(t, []family{
		{name: "oci-bm-gpu-h100-8", source: "OCI HPC stack scripts (per-shape HCA lists and Slurm gres: BM.GPU.H100.8 gpu:H100:8); docs.oracle.com Compute Shapes",
			labels: oke("BM.GPU.H100.8"), cap: m{"nvidia.com/gpu": "8"},
			typ: "nvidia-h100-80gb", vendor: "nvidia", sharing: inventory.Exclusive, count: 8, allocN: 8, why: "instance-type=BM.GPU.H100.8"},
		{name: "oci-bm-gpu-a100-v2-8", source: "OCI HPC stack scripts (BM.GPU.A100-v2.8: 8× A100 80GB)",
			labels: oke("BM.GPU.A100-v2.8"), cap: m{"nvidia.com/gpu": "8"},
			typ: "nvidia-a100-80gb", vendor: "nvidia", sharing: inventory.Exclusive, count: 8, allocN: 8, why: "BM.GPU.A100-v2.8"},
		{name: "oci-vm-gpu-a10-1", source: "an OKE Terraform module's gpu_shapes default (VM.GPU.A10.1, VM.GPU.A10.2, BM.GPU.A10.4, …)",
			labels: oke("VM.GPU.A10.1"), cap: m{"nvidia.com/gpu": "1"},
			typ: "nvidia-a10-24gb", vendor: "nvidia", sharing: inventory.Exclusive, count: 1, allocN: 1, why: "VM.GPU.A10.1"},
		{name: "oci-bm-gpu-h200-8", source: "OCI NCCL test scripts (BM.GPU.H200.8|BM.GPU.B200.8 share an HCA list)",
			labels: oke("BM.GPU.H200.8"), cap: m{"nvidia.com/gpu": "8"},
			typ: "nvidia-h200-141gb", vendor: "nvidia", sharing: inventory.Exclusive, count: 8, allocN: 8, why: "BM.GPU.H200.8"},
		{name: "oci-bm-gpu-b200-8", source: "OCI NCCL test scripts (BM.GPU.B200.8)",
			labels: oke("BM.GPU.B200.8"), cap: m{"nvidia.com/gpu": "8"},
			typ: "nvidia-b200-180gb", vendor: "nvidia", sharing: inventory.Exclusive, count: 8, allocN: 8, why: "BM.GPU.B200.8"},
		{name: "oci-bm-gpu-mi300x-8", source: "an OKE Terraform module's gpu_shapes default (BM.GPU.MI300X.8)",
			labels: oke("BM.GPU.MI300X.8"), cap: m{"amd.com/gpu": "8"},
			typ: "amd-mi300x-192gb", vendor: "amd", sharing: inventory.Exclusive, count: 8, allocN: 8, why: "BM.GPU.MI300X.8"},
		{name: "oci-bm-gpu-l40s-4", source: "an OKE Terraform module's gpu_shapes default (BM.GPU.L40S.4, VM.GPU.L40S.1, VM.GPU.L40S.2)",
			labels: oke("BM.GPU.L40S.4"), cap: m{"nvidia.com/gpu": "4"},
			typ: "nvidia-l40s-48gb", vendor: "nvidia", sharing: inventory.Exclusive, count: 4, allocN: 4, why: "BM.GPU.L40S.4"},
		{name: "aks-nd96isr-h100-v5", source: "learn.microsoft.com AKS \"Use GPUs\" (nodes labelled kubernetes.azure.com/accelerator=nvidia) and the ND H100 v5 size (8× H100 80GB)",
			labels: aks("Standard_ND96isr_H100_v5"), cap: m{"nvidia.com/gpu": "8"},
			typ: "nvidia-h100-80gb", vendor: "nvidia", sharing: inventory.Exclusive, count: 8, allocN: 8, why: "Standard_ND96isr_H100_v5"},
		{name: "aks-nc24ads-a100-v4", source: "AKS GPU node pools (kubernetes.azure.com/accelerator=nvidia) on the NC A100 v4 size (1× A100 80GB PCIe)",
			labels: aks("Standard_NC24ads_A100_v4"), cap: m{"nvidia.com/gpu": "1"},
			typ: "nvidia-a100-80gb", vendor: "nvidia", sharing: inventory.Exclusive, count: 1, allocN: 1, why: "Standard_NC24ads_A100_v4"},
		{name: "aks-nd96amsr-a100-v4", source: "AKS GPU node pools on the NDm A100 v4 size (8× A100 80GB SXM)",
			labels: aks("Standard_ND96amsr_A100_v4"), cap: m{"nvidia.com/gpu": "8"},
			typ: "nvidia-a100-80gb", vendor: "nvidia", sharing: inventory.Exclusive, count: 8, allocN: 8, why: "Standard_ND96amsr_A100_v4"},
		{name: "aks-nc40ads-h100-v5", source: "AKS GPU node pools on the NCads H100 v5 size (1× H100 NVL 94GB)",
			labels: aks("Standard_NC40ads_H100_v5"), cap: m{"nvidia.com/gpu": "1"},
			typ: "nvidia-h100-94gb", vendor: "nvidia", sharing: inventory.Exclusive, count: 1, allocN: 1, why: "Standard_NC40ads_H100_v5"},
		{name: "aks-nd96isr-h200-v5", source: "AKS GPU node pools on the ND H200 v5 size (8× H200)",
			labels: aks("Standard_ND96isr_H200_v5"), cap: m{"nvidia.com/gpu": "8"},
			typ: "nvidia-h200-141gb", vendor: "nvidia", sharing: inventory.Exclusive, count: 8, allocN: 8, why: "Standard_ND96isr_H200_v5"},
		{name: "aks-nv36ads-a10-v5", source: "AKS GPU node pools on the NVadsA10 v5 size with a whole A10 (Standard_NV36ads_A10_v5)",
			labels: aks("Standard_NV36ads_A10_v5"), cap: m{"nvidia.com/gpu": "1"},
			typ: "nvidia-a10-24gb", vendor: "nvidia", sharing: inventory.Exclusive, count: 1, allocN: 1, why: "Standard_NV36ads_A10_v5"},
		{name: "coreweave-h100", source: "a CoreWeave onboarding guide (kubectl get nodes -L gpu.nvidia.com/class: L40S, A100_PCIE_80GB, H100_NVLINK_80GB)",
			labels: m{"gpu.nvidia.com/class": "H100_NVLINK_80GB"}, cap: m{"nvidia.com/gpu": "8"},
			typ: "nvidia-h100-80gb", vendor: "nvidia", sharing: inventory.Exclusive, count: 8, allocN: 8, why: "gpu.nvidia.com/class=H100_NVLINK_80GB"},
		{name: "coreweave-l40s", source: "the same CoreWeave guide (class L40S)",
			labels: m{"gpu.nvidia.com/class": "L40S"}, cap: m{"nvidia.com/gpu": "8"},
			typ: "nvidia-l40s-48gb", vendor: "nvidia", sharing: inventory.Exclusive, count: 8, allocN: 8, why: "gpu.nvidia.com/class=L40S"},
		{name: "coreweave-rtx-a6000", source: "a CoreWeave inference CLI's list of GPU models (RTX_A6000, A100_NVLINK, …)",
			labels: m{"gpu.nvidia.com/class": "RTX_A6000"}, cap: m{"nvidia.com/gpu": "1"},
			typ: "nvidia-rtx-a6000-48gb", vendor: "nvidia", sharing: inventory.Exclusive, count: 1, allocN: 1, why: "gpu.nvidia.com/class=RTX_A6000"},
		{name: "coreweave-a100-nvlink-40gb", source: "CoreWeave's GPU price list as mirrored in a public repo (A100 HGX 40GB: A100_NVLINK)",
			labels: m{"gpu.nvidia.com/class": "A100_NVLINK"}, cap: m{"nvidia.com/gpu": "8"},
			typ: "nvidia-a100-40gb", vendor: "nvidia", sharing: inventory.Exclusive, count: 8, allocN: 8, why: "gpu.nvidia.com/class=A100_NVLINK"},
		{name: "ibm-gaudi3", source: "IBM Cloud VPC release notes and Intel's enterprise-RAG IBM deployment (instance profile gx3d-160x1792x8gaudi3: 8× Gaudi 3)",
			labels: m{"node.kubernetes.io/instance-type": "gx3d-160x1792x8gaudi3"}, cap: m{"habana.ai/gaudi": "8"},
			typ: "intel-gaudi3-128gb", vendor: "intel", sharing: inventory.Exclusive, count: 8, allocN: 8, why: "gx3d-160x1792x8gaudi3"},
	})
}

// TestPartitionsAndSharedResources: AMD GPUs offered as partitions count
// as GPUs of their class, shared; a node offering only NVIDIA's renamed
// shared resource is shared (family partitions).
func TestPartitionsAndSharedResources(t *testing.T) {
	runFamilies(t, []family{
		{name: "amd-mixed-cpx-nps4", source: "ROCm/k8s-device-plugin docs/user-guide/configuration.md, Resource Naming Strategy: 8 GPUs in CPX-NPS4 report amd.com/cpx_nps4: 64 (mixed)",
			labels: m{"amd.com/gpu.product-name": "AMD_Instinct_MI300X_OAM", "amd.com/compute-memory-partition": "cpx_nps4"}, cap: m{"amd.com/cpx_nps4": "64"},
			typ: "amd-mi300x-192gb", vendor: "amd", sharing: inventory.Partitioned, count: 8, allocN: 64, why: "AMD GPU partitions from capacity 64×cpx_nps4: 8 GPUs"},
		{name: "amd-mixed-heterogeneous", source: "the same page: 5 GPUs in SPX-NPS1 and 3 in CPX-NPS1 report amd.com/spx_nps1: 5, amd.com/cpx_nps1: 24",
			labels: m{"amd.com/gpu.device-id": "74a1"}, cap: m{"amd.com/spx_nps1": "5", "amd.com/cpx_nps1": "24"},
			typ: "amd-mi300x-192gb", vendor: "amd", sharing: inventory.Partitioned, count: 8, allocN: 29, why: "8 GPUs"},
		{name: "amd-single-cpx-nps4", source: "the same page: under single naming 8 GPUs in CPX-NPS4 report amd.com/gpu: 64; the ROCm labeller's amd.com/compute-memory-partition",
			labels: m{"amd.com/gpu.product-name": "AMD_Instinct_MI300X_OAM", "amd.com/compute-memory-partition": "cpx_nps4"}, cap: m{"amd.com/gpu": "64"},
			typ: "amd-mi300x-192gb", vendor: "amd", sharing: inventory.Partitioned, count: 8, allocN: 64, why: "amd.com/compute-memory-partition=cpx_nps4"},
		{name: "mi355x-oam", source: "an MI355X benchmark log: vLLM's get_device_name() returns \"AMD Instinct MI355 OAM\", the sysfs product name the ROCm labeller writes with '_'",
			labels: m{"amd.com/gpu.product-name": "AMD_Instinct_MI355_OAM", "amd.com/gpu.family": "AI"}, cap: m{"amd.com/gpu": "8"},
			typ: "amd-mi355x-288gb", vendor: "amd", sharing: inventory.Exclusive, count: 8, allocN: 8, why: "AMD_Instinct_MI355_OAM"},
		{name: "mi355x-device-id", source: "vLLM's ROCm device-id table test (0x75a3 → AMD_Instinct_MI355X)",
			labels: m{"amd.com/gpu.device-id": "75a3"}, cap: m{"amd.com/gpu": "8"},
			typ: "amd-mi355x-288gb", vendor: "amd", sharing: inventory.Exclusive, count: 8, allocN: 8, why: "75a3"},
		{name: "mi325x", source: "sglang's MoE configs tuned on MI325X (device_name=AMD_Instinct_MI325X)",
			labels: m{"amd.com/gpu.product-name": "AMD_Instinct_MI325X"}, cap: m{"amd.com/gpu": "8"},
			typ: "amd-mi325x-256gb", vendor: "amd", sharing: inventory.Exclusive, count: 8, allocN: 8, why: "AMD_Instinct_MI325X"},
		{name: "gpu-shared-only", source: "a Kubernetes GPU lab's `kubectl describe node` after a time-slicing config with renameByDefault (Capacity: nvidia.com/gpu.shared: 4), without GFD's labels",
			cap: m{"nvidia.com/gpu.shared": "4"},
			typ: inventory.TypeUnknown, vendor: "nvidia", sharing: inventory.TimeSliced, count: 0, allocN: 4, why: "advertised only as nvidia.com/gpu.shared"},
		{name: "gpu-shared-mps-a100", source: "a public MPS walkthrough's `kubectl describe node` (NVIDIA-A100-PCIE-40GB, replicas 10, sharing-strategy mps; capacity nvidia.com/gpu 2, nvidia.com/gpu.shared 20; allocatable nvidia.com/gpu 0)",
			labels: m{"nvidia.com/gpu.product": "NVIDIA-A100-PCIE-40GB", "nvidia.com/gpu.replicas": "10", "nvidia.com/gpu.sharing-strategy": "mps"},
			cap:    m{"nvidia.com/gpu": "2", "nvidia.com/gpu.shared": "20"}, alloc: m{"nvidia.com/gpu": "0", "nvidia.com/gpu.shared": "20"},
			typ: "nvidia-a100-40gb", vendor: "nvidia", sharing: inventory.MPS, count: 2, allocN: 20, why: "renameByDefault"},
		{name: "p40-shared", source: "a homelab inventory note (Tesla P40, nvidia.com/gpu.replicas = 2, so nvidia.com/gpu.shared: 2)",
			labels: m{"nvidia.com/gpu.product": "Tesla-P40", "nvidia.com/gpu.replicas": "2"}, cap: m{"nvidia.com/gpu.shared": "2"},
			typ: "nvidia-p40-24gb", vendor: "nvidia", sharing: inventory.TimeSliced, count: 1, allocN: 2, why: "renameByDefault"},
	})
}

// TestNewMIGParts: nodes of the newest MIG-capable parts with their MIG
// resources (family MIG geometry).
func TestNewMIGParts(t *testing.T) {
	runFamilies(t, []family{
		{name: "p6-b200-mig-1g-23gb", source: "aws/sagemaker-hyperpod-cli PR 403 (p6-b200.48xlarge MIG resources mig-1g.23gb … mig-7g.180gb; all-1g.23gb: 7 a GPU)",
			labels: m{"node.kubernetes.io/instance-type": "p6-b200.48xlarge", "nvidia.com/mig.config": "all-1g.23gb", "nvidia.com/mig.strategy": "mixed"},
			cap:    m{"nvidia.com/gpu": "0", "nvidia.com/mig-1g.23gb": "56"},
			typ:    "nvidia-b200-180gb", vendor: "nvidia", sharing: inventory.MIGMixed, count: 0, allocN: 56, mig: map[string]int{"1g.23gb": 56}, why: "MIG mixed from capacity 56×1g.23gb"},
		{name: "rtx-pro-6000-mig-single", source: "aws/sagemaker-hyperpod-cli PR 403 (RTX PRO 6000 Blackwell g7e profiles: 1g.24gb ×4)",
			labels: m{"nvidia.com/gpu.product": "NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition-MIG-1g.24gb", "nvidia.com/gpu.count": "4", "node.kubernetes.io/instance-type": "g7e.2xlarge"},
			typ:    "nvidia-rtx-pro-6000-96gb", vendor: "nvidia", sharing: inventory.MIGSingle, count: 4, allocN: 4, mig: map[string]int{"1g.24gb": 4}, why: "MIG single: 4 × 1g.24gb"},
	})
}
