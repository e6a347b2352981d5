package inventory_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelc/accelc/pkg/inventory"
)

// family is one real label set, as its source printed it (labels and
// capacity only; where a case takes part of a source, it says which).
type family struct {
	name, source  string
	labels, cap   m
	alloc         m
	anno          m // the node's annotations (HAMi's register)
	typ, vendor   string
	sharing       inventory.Sharing
	count, allocN int
	mig           map[string]int
	model         string // Node.Model: what labels of an unread scheme say
	why           string // a note contains it
}

func runFamilies(t *testing.T, cases []family) {
	t.Helper()
	cat := builtin(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.NotEmpty(t, c.source, "every case cites where its labels were seen")
			raw := node(t, c.name, c.labels, c.cap, c.alloc)
			raw.Metadata.Annotations = c.anno
			inv := inventory.Classify([]inventory.RawNode{raw}, cat, inventory.Options{})
			require.Len(t, inv.Nodes, 1, "a GPU node, never \"no accelerator\"")
			n := inv.Nodes[0]
			notes := strings.Join(n.Notes, "\n")
			assert.Equal(t, c.typ, n.AcceleratorType, "notes: %q", n.Notes)
			assert.Equal(t, c.vendor, n.Vendor, "vendor")
			assert.Equal(t, c.sharing, n.Sharing, "sharing; notes: %q", n.Notes)
			assert.Equal(t, c.count, n.Count, "count")
			assert.Equal(t, c.allocN, n.Allocatable, "allocatable")
			assert.Equal(t, c.mig, n.MIGDevices, "MIG devices")
			assert.Equal(t, c.model, n.Model, "model")
			assert.Contains(t, notes, c.why)
			if c.typ == inventory.TypeUnknown {
				assert.Contains(t, n.DisplayName, "type unknown")
			}
		})
	}
}

// TestCurrentHardware: nodes of parts that ship in data centres today,
// which the catalog names (family 1 of issue 18).
func TestCurrentHardware(t *testing.T) {
	runFamilies(t, []family{
		{name: "b300-eks", source: "github.com/littlemex/distributed-inference 2026-06-20-gpudirect-rdma-efa-b300/README: kubectl get nodes -l nvidia.com/gpu.product=NVIDIA-B300-SXM6-AC on p6-b300.48xlarge",
			labels: m{"nvidia.com/gpu.product": "NVIDIA-B300-SXM6-AC", "node.kubernetes.io/instance-type": "p6-b300.48xlarge"},
			typ:    "nvidia-b300-288gb", vendor: "nvidia", sharing: inventory.Exclusive, why: "nvidia.com/gpu.product=NVIDIA-B300-SXM6-AC"},
		{name: "b300-instance-type-only", source: "AWS P6-B300 instances (8× B300 per p6-b300.48xlarge), as EKS clusters in public repos list them",
			labels: m{"node.kubernetes.io/instance-type": "p6-b300.48xlarge"}, cap: m{"nvidia.com/gpu": "8"},
			typ: "nvidia-b300-288gb", vendor: "nvidia", sharing: inventory.Exclusive, count: 8, allocN: 8, why: "instance-type=p6-b300.48xlarge"},
		{name: "gb200-gke", source: "GKE A4X node pools selected with cloud.google.com/gke-accelerator=nvidia-gb200 (kubectl get nodes -l …, NVIDIA DRA driver set-up notes); A4X nodes have 4 GPUs (Google Cloud A4X docs)",
			labels: m{"cloud.google.com/gke-accelerator": "nvidia-gb200", "kubernetes.io/arch": "arm64"}, cap: m{"nvidia.com/gpu": "4"},
			typ: "nvidia-gb200-186gb", vendor: "nvidia", sharing: inventory.Exclusive, count: 4, allocN: 4, why: "gke-accelerator=nvidia-gb200"},
		{name: "gb200-gfd", source: "nodeSelector nvidia.com/gpu.product: NVIDIA-GB200 of GB200 clusters (NVIDIA/aicr certification tests, prime-rl deployment)",
			labels: m{"nvidia.com/gpu.product": "NVIDIA-GB200", "nvidia.com/gpu.count": "4"},
			typ:    "nvidia-gb200-186gb", vendor: "nvidia", sharing: inventory.Exclusive, count: 4, allocN: 4, why: "NVIDIA-GB200"},
		{name: "rtx-pro-6000-server-shared", source: "a Helm chart's nodeSelector for time-sliced nodes: nvidia.com/gpu.product=NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition-SHARED",
			labels: m{"nvidia.com/gpu.product": "NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition-SHARED", "nvidia.com/gpu.count": "1", "nvidia.com/gpu.replicas": "4"},
			typ:    "nvidia-rtx-pro-6000-96gb", vendor: "nvidia", sharing: inventory.TimeSliced, count: 1, allocN: 4, why: "Server-Edition-SHARED"},
		{name: "rtx-pro-6000-max-q", source: "https://github.com/NVIDIA/gpu-operator/issues/2249 (Unable to configure MIG for NVIDIA-RTX-PRO-6000-Blackwell-Max-Q-Workstation-Edition)",
			labels: m{"nvidia.com/gpu.product": "NVIDIA-RTX-PRO-6000-Blackwell-Max-Q-Workstation-Edition"}, cap: m{"nvidia.com/gpu": "1"},
			typ: "nvidia-rtx-pro-6000-96gb", vendor: "nvidia", sharing: inventory.Exclusive, count: 1, allocN: 1, why: "Max-Q"},
		{name: "intel-max-1550", source: "github.com/intel/intel-device-plugins-for-kubernetes cmd/gpu_plugin/labels.md (NFD rules, \"For MAX 1550\")",
			labels: m{"gpu.intel.com/device.count": "2", "gpu.intel.com/family": "Max_Series", "gpu.intel.com/product": "Max_1550"},
			typ:    "intel-max-1550-128gb", vendor: "intel", sharing: inventory.Exclusive, count: 2, allocN: 2, why: "gpu.intel.com/product=Max_1550"},
		{name: "intel-max-1100-resource", source: "a Max 1100 node as Intel's GPU plugin advertises it (gpu.intel.com/product=Max_1100, gpu.intel.com/memory=49152, allocatable gpu.intel.com/i915: 4), llm-d workload-variant-autoscaler discovery tests",
			labels: m{"gpu.intel.com/product": "Max_1100", "gpu.intel.com/memory": "49152"}, cap: m{"gpu.intel.com/i915": "4"},
			typ: "intel-max-1100-48gb", vendor: "intel", sharing: inventory.Exclusive, count: 4, allocN: 4, why: "Max_1100"},
	})
}

// TestVirtualFunctionsAndVGPUs: GPUs a VM sees through SR-IOV carry their
// own device id and product name, and NVIDIA vGPU guests a vGPU type; they
// are the physical GPU's class where the name says which (family 2).
func TestVirtualFunctionsAndVGPUs(t *testing.T) {
	runFamilies(t, []family{
		{name: "mi300x-vf-aks", source: "https://github.com/ROCm/k8s-device-plugin/issues/112 (Standard_ND96isr_MI300X_v5, labels as posted)",
			labels: m{"amd.com/gpu.cu-count": "304", "amd.com/gpu.device-id": "74b5", "amd.com/gpu.driver-src-version": "0A82C3819E55873715679EA",
				"amd.com/gpu.driver-version": "6.8.5", "amd.com/gpu.family": "AI", "amd.com/gpu.simd-count": "1216", "amd.com/gpu.vram": "191G",
				"beta.amd.com/gpu.cu-count": "304", "beta.amd.com/gpu.cu-count.304": "8", "beta.amd.com/gpu.device-id": "74b5",
				"beta.amd.com/gpu.device-id.74b5": "8", "beta.amd.com/gpu.family": "AI", "beta.amd.com/gpu.family.AI": "8"},
			typ: "amd-mi300x-192gb", vendor: "amd", sharing: inventory.Exclusive, count: 8, allocN: 8, why: "amd.com/gpu.device-id=74b5"},
		{name: "mi300x-vf-operator", source: "https://github.com/ROCm/gpu-operator/issues/266 (labels as posted: no product name in the VM)",
			labels: m{"amd.com/gpu.cu-count": "304", "amd.com/gpu.device-id": "74b5", "amd.com/gpu.driver-version": "6.12.12", "amd.com/gpu.family": "AI"},
			cap:    m{"amd.com/gpu": "1"},
			typ:    "amd-mi300x-192gb", vendor: "amd", sharing: inventory.Exclusive, count: 1, allocN: 1, why: "74b5"},
		{name: "mi300x-vf-product-name", source: "the labeller's product name for 74b5 since ROCm/gpu-operator#266's fix: libdrm amdgpu.ids \"AMD Instinct MI300X VF\" with '_' for ' '",
			labels: m{"amd.com/gpu.product-name": "AMD_Instinct_MI300X_VF"}, cap: m{"amd.com/gpu": "8"},
			typ: "amd-mi300x-192gb", vendor: "amd", sharing: inventory.Exclusive, count: 8, allocN: 8, why: "AMD_Instinct_MI300X_VF"},
		{name: "vgpu-a16-4q", source: "an RKE2 vGPU guest's `kubectl get nodes -o json` (node nori) in a public set-up guide",
			labels: m{"nvidia.com/gpu.count": "1", "nvidia.com/gpu.family": "ampere", "nvidia.com/gpu.machine": "VCG", "nvidia.com/gpu.memory": "4096",
				"nvidia.com/gpu.mode": "graphics", "nvidia.com/gpu.present": "true", "nvidia.com/gpu.product": "NVIDIA-A16-4Q", "nvidia.com/gpu.replicas": "1",
				"nvidia.com/gpu.sharing-strategy": "none", "nvidia.com/mig.capable": "false", "nvidia.com/mig.strategy": "single", "nvidia.com/mps.capable": "false",
				"nvidia.com/vgpu.host-driver-branch": "r551_40", "nvidia.com/vgpu.host-driver-version": "550.54.16", "nvidia.com/vgpu.present": "true"},
			alloc: m{"nvidia.com/gpu": "1"},
			typ:   "nvidia-a16-16gb", vendor: "nvidia", sharing: inventory.VGPU, count: 1, allocN: 1, why: "NVIDIA vGPU A16-4Q: 4GB of the NVIDIA A16 16GB's 16GB"},
		{name: "vgpu-grid-a100-10c", source: "a VMware VKS vGPU worker's labels in a public DRA driver set-up guide (GRID-A100-10C)",
			labels: m{"nvidia.com/gpu.count": "1", "nvidia.com/gpu.family": "ampere", "nvidia.com/gpu.machine": "VMware201", "nvidia.com/gpu.memory": "10240",
				"nvidia.com/gpu.mode": "compute", "nvidia.com/gpu.present": "true", "nvidia.com/gpu.product": "GRID-A100-10C", "nvidia.com/gpu.replicas": "1",
				"nvidia.com/gpu.sharing-strategy": "none", "nvidia.com/mig.capable": "false", "nvidia.com/mig.strategy": "single", "nvidia.com/mps.capable": "false",
				"nvidia.com/vgpu.host-driver-branch": "r596_25", "nvidia.com/vgpu.host-driver-version": "595.71.03", "nvidia.com/vgpu.present": "true"},
			// NVIDIA's vGPU tables name the 40GB A100's types A100- (the 80GB
			// boards' are A100D- and A100DX-).
			typ: "nvidia-a100-40gb", vendor: "nvidia", sharing: inventory.VGPU, count: 1, allocN: 1, why: "NVIDIA vGPU A100-10C: 10GB of the NVIDIA A100 40GB's 40GB"},
	})
}

// TestMIGFromAnySignal: a node whose GPUs are cut into MIG slices is MIG,
// whichever of its labels or capacity says so (family 3).
func TestMIGFromAnySignal(t *testing.T) {
	// The MIG mixed node of NVIDIA's docs (cloud-native-docs
	// gpu-operator/manifests/output/mig-mixed-node-labels.json, also in
	// testdata/nodes/real-nodes-sample.json), as a snapshot shows it when
	// some of GFD's labels are missing.
	full := m{
		"nvidia.com/gpu.count": "1", "nvidia.com/gpu.family": "hopper", "nvidia.com/gpu.memory": "81559", "nvidia.com/gpu.present": "true",
		"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3", "nvidia.com/gpu.replicas": "0", "nvidia.com/gpu.sharing-strategy": "none",
		"nvidia.com/mig-1g.10gb.count": "2", "nvidia.com/mig-1g.10gb.engines.copy": "1", "nvidia.com/mig-1g.10gb.memory": "9984",
		"nvidia.com/mig-1g.10gb.multiprocessors": "16", "nvidia.com/mig-1g.10gb.product": "NVIDIA-H100-80GB-HBM3-MIG-1g.10gb",
		"nvidia.com/mig-2g.20gb.count": "1", "nvidia.com/mig-2g.20gb.memory": "20096", "nvidia.com/mig-2g.20gb.product": "NVIDIA-H100-80GB-HBM3-MIG-2g.20gb",
		"nvidia.com/mig-3g.40gb.count": "1", "nvidia.com/mig-3g.40gb.memory": "40320", "nvidia.com/mig-3g.40gb.multiprocessors": "60",
		"nvidia.com/mig-3g.40gb.product": "NVIDIA-H100-80GB-HBM3-MIG-3g.40gb",
		"nvidia.com/mig.capable":         "true", "nvidia.com/mig.config": "all-balanced", "nvidia.com/mig.config.state": "success", "nvidia.com/mig.strategy": "mixed",
	}
	without := func(drop func(k string) bool) m {
		out := m{}
		for k, v := range full {
			if !drop(k) {
				out[k] = v
			}
		}
		return out
	}
	runFamilies(t, []family{
		{name: "capacity-only-h100-nvl", source: "https://github.com/davidB/kubectl-view-allocations/issues/258 (one H100 NVL, mixed all-balanced: kubectl describe node)",
			cap: m{"nvidia.com/gpu": "0", "nvidia.com/mig-1g.12gb": "2", "nvidia.com/mig-2g.24gb": "1", "nvidia.com/mig-3g.47gb": "1"},
			typ: inventory.TypeUnknown, vendor: "nvidia", sharing: inventory.MIGMixed, count: 0, allocN: 4,
			mig: map[string]int{"1g.12gb": 2, "2g.24gb": 1, "3g.47gb": 1}, why: "MIG mixed from capacity"},
		{name: "capacity-whole-and-slices", source: "https://github.com/NVIDIA/gpu-operator/issues/637 (Allocatable, mixed strategy, as posted)",
			cap: m{"cpu": "64", "memory": "519659388Ki", "nvidia.com/gpu": "2", "nvidia.com/mig-1g.10gb": "6", "nvidia.com/mig-2g.20gb": "4", "nvidia.com/mig-3g.40gb": "0", "pods": "160"},
			typ: inventory.TypeUnknown, vendor: "nvidia", sharing: inventory.MIGMixed, count: 2, allocN: 12,
			mig: map[string]int{"1g.10gb": 6, "2g.20gb": 4}, why: "MIG mixed from capacity 6×1g.10gb,4×2g.20gb"},
		{name: "profile-labels-without-counts", source: "cloud-native-docs mig-mixed-node-labels.json less its .count and .product labels",
			labels: without(func(k string) bool {
				return strings.HasPrefix(k, "nvidia.com/mig-") && (strings.HasSuffix(k, ".count") || strings.HasSuffix(k, ".product"))
			}),
			typ: "nvidia-h100-80gb", vendor: "nvidia", sharing: inventory.MIGMixed, count: 1, allocN: 0,
			why: "MIG mixed from per-profile labels of 1g.10gb, 2g.20gb, 3g.40gb; slice counts not reported"},
		{name: "mig-manager-config-only", source: "cloud-native-docs mig-mixed-node-labels.json less every nvidia.com/mig-<profile> label: the MIG manager's state alone",
			labels: without(func(k string) bool { return strings.HasPrefix(k, "nvidia.com/mig-") }),
			typ:    "nvidia-h100-80gb", vendor: "nvidia", sharing: inventory.MIGMixed, count: 1, allocN: 0,
			why: "MIG mixed from nvidia.com/mig.config=all-balanced (success)"},
		{name: "single-device-labels-no-product", source: "https://github.com/NVIDIA/gpu-operator/issues/981 (node labels as posted, cut short before the product)",
			labels: m{"nvidia.com/gpu.machine": "PowerEdge-R7525", "nvidia.com/gpu.memory": "4864", "nvidia.com/gpu.engines.decoder": "0",
				"nvidia.com/gpu.deploy.dcgm-exporter": "true", "nvidia.com/gpu.deploy.device-plugin": "true", "nvidia.com/mig.config": "all-1g.5gb",
				"nvidia.com/gpu.deploy.nvsm": "true", "nvidia.com/gpu.deploy.mig-manager": "true", "nvidia.com/gpu.family": "ampere",
				"nvidia.com/gpu.sharing-strategy": "none", "nvidia.com/mig.capable": "true", "nvidia.com/gpu.engines.jpeg": "0",
				"feature.node.kubernetes.io/pci-8086.sriov.capable": "true", "kubernetes.io/os": "linux"},
			typ: inventory.TypeUnknown, vendor: "nvidia", sharing: inventory.MIGSingle,
			why: "MIG single from the MIG device label nvidia.com/gpu.engines.decoder; slice counts not reported (the config cuts each GPU into 1g.5gb slices)"},
		{name: "config-all-disabled-is-not-mig", source: "testdata/nodes/real-nodes-sample.json node 192-222-54-148 (Lambda docs): mig.config all-disabled, strategy single",
			labels: m{"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3", "nvidia.com/gpu.count": "8", "nvidia.com/mig.capable": "true",
				"nvidia.com/mig.config": "all-disabled", "nvidia.com/mig.config.state": "success", "nvidia.com/mig.strategy": "single"},
			typ: "nvidia-h100-80gb", vendor: "nvidia", sharing: inventory.Exclusive, count: 8, allocN: 8, why: "NVIDIA-H100-80GB-HBM3"},
	})
}

// TestAnyGPUHintIsAGPUNode: labels of schemes accelc does not read that
// name a GPU vendor or model make the node a GPU node of unknown type,
// with the vendor and, where they say, the model and count (family 4).
func TestAnyGPUHintIsAGPUNode(t *testing.T) {
	runFamilies(t, []family{
		{name: "akash-provider", source: "github.com/akash-network/docs testnet/provider-build-with-gpu/create-kubernetes-cluster.md (GPU Node Label example)",
			labels: m{"akash.network/capabilities.gpu.vendor.nvidia.model.a4000": "true"},
			typ:    inventory.TypeUnknown, vendor: "nvidia", sharing: inventory.Exclusive, model: "a4000", why: "in a scheme accelc does not read"},
		{name: "sap-converged-cloud", source: "https://github.com/sapcc/kubernikus/issues/305 (label ccloud.sap.com/nvidia-gpu=nvidia-tesla-v100)",
			labels: m{"ccloud.sap.com/nvidia-gpu": "nvidia-tesla-v100", "ccloud.sap.com/nodepool": "gpu"},
			typ:    inventory.TypeUnknown, vendor: "nvidia", sharing: inventory.Exclusive, model: "V100", why: "ccloud.sap.com/nvidia-gpu=nvidia-tesla-v100"},
		{name: "kubernetes-docs-accelerator", source: "kubernetes/website content/en/docs/tasks/manage-gpus/scheduling-gpus.md (kubectl label nodes <node-with-k80> accelerator=nvidia-tesla-k80)",
			labels: m{"accelerator": "nvidia-tesla-k80"}, cap: m{"nvidia.com/gpu": "1"},
			typ: inventory.TypeUnknown, vendor: "nvidia", sharing: inventory.Exclusive, count: 1, allocN: 1, model: "K80", why: "accelerator=nvidia-tesla-k80"},
		{name: "lecture-kit-accelerator", source: "github.com/sysnet4admin/_Lecture_k8s_learning.kit ch6/6.4/node_labels.sh (gpupool=nvidia accelerator=tesla-a100)",
			labels: m{"gpupool": "nvidia", "accelerator": "tesla-a100"},
			typ:    inventory.TypeUnknown, vendor: "nvidia", sharing: inventory.Exclusive, model: "A100", why: "accelerator=tesla-a100"},
		{name: "amd-operator-vf-nfd", source: "https://github.com/ROCm/gpu-operator/issues/183 (the node has feature.node.kubernetes.io/amd-vgpu: \"true\" and no amd.com labels)",
			labels: m{"feature.node.kubernetes.io/amd-vgpu": "true"},
			typ:    inventory.TypeUnknown, vendor: "amd", sharing: inventory.Exclusive, why: "feature.node.kubernetes.io/amd-vgpu=true"},
		{name: "coreweave", source: "docs.coreweave.com/coreweave-kubernetes/label-selectors (gpu.nvidia.com/class, gpu.nvidia.com/vram) with a class value CoreWeave users select (A100_NVLINK_80GB)",
			labels: m{"gpu.nvidia.com/class": "A100_NVLINK_80GB", "gpu.nvidia.com/vram": "80"}, cap: m{"nvidia.com/gpu": "8"},
			// The catalog names CoreWeave's class values: no longer a hint.
			typ: "nvidia-a100-80gb", vendor: "nvidia", sharing: inventory.Exclusive, count: 8, allocN: 8, why: "type from gpu.nvidia.com/class=A100_NVLINK_80GB"},
		{name: "intel-flex-170", source: "github.com/intel/intel-device-plugins-for-kubernetes cmd/gpu_plugin/labels.md (NFD rules, Flex 170)",
			labels: m{"gpu.intel.com/device.count": "1", "gpu.intel.com/family": "Flex_Series", "gpu.intel.com/product": "Flex_170"},
			typ:    inventory.TypeUnknown, vendor: "intel", sharing: inventory.Exclusive, count: 1, allocN: 1, model: "Flex_170", why: "Flex_170 is not in the catalog"},
	})
}

// TestNoHintNoGPU: labels that only look alike stay off: amd64 is not AMD,
// a GPU word without a vendor or model says nothing, false says no.
func TestNoHintNoGPU(t *testing.T) {
	inv := inventory.Classify([]inventory.RawNode{
		node(t, "arch", m{"kubernetes.io/arch": "amd64", "beta.kubernetes.io/arch": "amd64"}, nil, nil),
		node(t, "pool", m{"cloud.google.com/gke-nodepool": "gpu-pool-spare", "gpu": "true"}, nil, nil),
		node(t, "off", m{"nvidia.com/gpu.deploy.operands": "false", "accelerator": "none"}, nil, nil),
		node(t, "intel-igpu", m{"feature.node.kubernetes.io/pci-0300_8086.present": "true"}, nil, nil),
	}, builtin(t), inventory.Options{})
	assert.Empty(t, inv.Nodes)
	assert.Equal(t, 4, inv.OtherNodes)
}

// TestTPUAndNeuron: Google's Cloud TPUs on GKE and AWS's Neuron devices
// on EKS are accelerator nodes like GPU nodes: typed by GKE's TPU label or
// the EC2 instance type, counted by google.com/tpu and aws.amazon.com/neuron
// (never the Neuron plugin's cores as well), and, where the catalog does
// not know the part, listed as of unknown type with the reason.
func TestTPUAndNeuron(t *testing.T) {
	runFamilies(t, []family{
		{name: "tpu-v5e-2x4", source: "GKE's Plan TPUs in GKE (cloud.google.com/kubernetes-engine/docs/concepts/plan-tpus): tpu-v5-lite-podslice, topology 2x4 on ct5lp-hightpu-8t (8 chips, one host); cloud.google.com/gke-accelerator-count as SkyPilot reads TPU nodes (skypilot-org/skypilot#3947)",
			labels: m{"cloud.google.com/gke-tpu-accelerator": "tpu-v5-lite-podslice", "cloud.google.com/gke-tpu-topology": "2x4",
				"cloud.google.com/gke-accelerator-count": "8", "node.kubernetes.io/instance-type": "ct5lp-hightpu-8t", "cloud.google.com/gke-nodepool": "tpu-v5e-pool"},
			cap: m{"google.com/tpu": "8"},
			typ: "google-tpu-v5e-16gb", vendor: "google", sharing: inventory.Exclusive, count: 8, allocN: 8, why: "TPU slice 2x4: this node's 8 chips"},
		{name: "tpu-v6e-2x2-selector", source: "the GKE TPU target of GCSFuse's NPI benchmark runbook: node_selector cloud.google.com/gke-accelerator-count=4, gke-nodepool=ct6e-pool, gke-tpu-accelerator=tpu-v6e-slice, gke-tpu-topology=2x2, limits google.com/tpu=4",
			labels: m{"cloud.google.com/gke-accelerator-count": "4", "cloud.google.com/gke-nodepool": "ct6e-pool",
				"cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice", "cloud.google.com/gke-tpu-topology": "2x2"},
			alloc: m{"google.com/tpu": "4"},
			typ:   "google-tpu-v6e-32gb", vendor: "google", sharing: inventory.Exclusive, count: 4, allocN: 4, why: "cloud.google.com/gke-tpu-accelerator=tpu-v6e-slice"},
		{name: "tpu-v5p-multi-host", source: "Cloud TPU v5p's slice shapes (cloud.google.com/tpu/docs/v5p: 2x2x2 is 8 chips on 2 hosts), GKE's tpu-v5p-slice on ct5p-hightpu-4t (plan-tpus; GoogleCloudPlatform/cluster-toolkit#6019's gke-tpu-v5p example)",
			labels: m{"cloud.google.com/gke-tpu-accelerator": "tpu-v5p-slice", "cloud.google.com/gke-tpu-topology": "2x2x2", "node.kubernetes.io/instance-type": "ct5p-hightpu-4t"},
			cap:    m{"google.com/tpu": "4"},
			typ:    "google-tpu-v5p-95gb", vendor: "google", sharing: inventory.Exclusive, count: 4, allocN: 4, why: "TPU slice 2x2x2: 8 chips over 2 nodes of 4"},
		{name: "tpu7x", source: "an Ironwood node pool in a public training write-up: --machine-type=tpu7x-standard-4t --node-labels=cloud.google.com/gke-tpu-accelerator=tpu7x,cloud.google.com/gke-tpu-topology=4x4x4",
			labels: m{"cloud.google.com/gke-tpu-accelerator": "tpu7x", "cloud.google.com/gke-tpu-topology": "4x4x4", "node.kubernetes.io/instance-type": "tpu7x-standard-4t"},
			cap:    m{"google.com/tpu": "4"},
			typ:    "google-tpu7x-192gb", vendor: "google", sharing: inventory.Exclusive, count: 4, allocN: 4, why: "type from cloud.google.com/gke-tpu-accelerator=tpu7x"},
		{name: "trn1-32xlarge", source: "the Neuron device plugin's two resources (awsdocs-neuron containers/tutorials/k8s-neuron-device-plugin: aws.amazon.com/neuron devices, aws.amazon.com/neuroncore cores) on trn1.32xlarge, 16 Trainium of 2 NeuronCore-v2 each (about-neuron/arch/neuron-hardware/trainium)",
			labels: m{"node.kubernetes.io/instance-type": "trn1.32xlarge", "topology.kubernetes.io/zone": "us-east-1c"},
			cap:    m{"aws.amazon.com/neuron": "16", "aws.amazon.com/neuroncore": "32"},
			typ:    "aws-trainium-32gb", vendor: "aws", sharing: inventory.Exclusive, count: 16, allocN: 16, why: "instance-type=trn1.32xlarge"},
		{name: "trn2-48xlarge", source: "EKS Trn2 node groups (trn2.48xlarge: 16 Trainium2, about-neuron/arch/neuron-hardware/trn2-arch) as the Neuron device plugin advertises them",
			labels: m{"node.kubernetes.io/instance-type": "trn2.48xlarge"}, cap: m{"aws.amazon.com/neuron": "16"},
			typ: "aws-trainium2-96gb", vendor: "aws", sharing: inventory.Exclusive, count: 16, allocN: 16, why: "instance-type=trn2.48xlarge"},
		{name: "inf2-karpenter", source: "Karpenter's well-known label karpenter.k8s.aws/instance-accelerator-name, whose Neuron values are trainium, inferentia and inferentia2 since v1.0 (karpenter.sh upgrade guide), on an inf2.xlarge (one Inferentia2) before the device plugin reported",
			labels: m{"karpenter.k8s.aws/instance-accelerator-name": "inferentia2", "karpenter.k8s.aws/instance-accelerator-manufacturer": "aws",
				"karpenter.k8s.aws/instance-accelerator-count": "1", "karpenter.sh/nodepool": "neuron"},
			typ: "aws-inferentia2-32gb", vendor: "aws", sharing: inventory.Exclusive, count: 1, allocN: 1, why: "instance-accelerator-name=inferentia2"},
		{name: "inf1", source: "Inf1 (awsdocs-neuron general/arch/neuron-hardware/inf1-arch: inf1.xlarge has 1 Inferentia device) under the Neuron device plugin",
			labels: m{"node.kubernetes.io/instance-type": "inf1.xlarge"}, cap: m{"aws.amazon.com/neuron": "1", "aws.amazon.com/neuroncore": "4"},
			typ: "aws-inferentia-8gb", vendor: "aws", sharing: inventory.Exclusive, count: 1, allocN: 1, why: "type from node.kubernetes.io/instance-type=inf1.xlarge"},
	})
}
