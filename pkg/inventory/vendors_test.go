package inventory_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelc/accelc/pkg/inventory"
)

// Issue 48's corpus: nodes of every vendor a Kubernetes node carries and
// of the providers' labels, each case citing where its labels and
// resources were seen. Every one is an accelerator node.

// TestEveryVendor: the vendors past NVIDIA, AMD, Intel, Google and AWS.
func TestEveryVendor(t *testing.T) {
	mindx := m{"accelerator": "huawei-Ascend910", "host-arch": "huawei-arm", "workerselector": "dls-worker-node", "nodeDEnable": "on"}
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
		{name: "ascend-800t-a2", source: "MindX DL's deployment guide (kubectl label nodes accelerator=huawei-Ascend910 accelerator-type=module-910b-8 host-arch=huawei-arm) and Ascend/ascend-device-plugin's huawei.com/Ascend910",
			labels: with(mindx, "accelerator-type", "module-910b-8"), cap: m{"huawei.com/Ascend910": "8"},
			typ: "huawei-ascend-910b-64gb", vendor: "huawei", sharing: inventory.Exclusive, count: 8, allocN: 8, why: "type from accelerator-type=module-910b-8"},
		{name: "ascend-a3", source: "MindX DL's A3 deployment guide (accelerator-type=module-a3-16)",
			labels: with(mindx, "accelerator-type", "module-a3-16"), cap: m{"huawei.com/Ascend910": "16"},
			typ: "huawei-ascend-910c-64gb", vendor: "huawei", sharing: inventory.Exclusive, count: 16, allocN: 16, why: "module-a3-16"},
		{name: "ascend-hami-910b3", source: "Project-HAMi/HAMi charts/hami values.yaml (devices.ascend: nodeSelector ascend=on, huawei.com/Ascend910B3 with -memory and -core)",
			labels: m{"ascend": "on", "accelerator": "huawei-Ascend910"}, cap: m{"huawei.com/Ascend910B3": "8", "huawei.com/Ascend910B3-memory": "524288", "huawei.com/Ascend910B3-core": "160"},
			typ: "huawei-ascend-910b-64gb", vendor: "huawei", sharing: inventory.Exclusive, count: 8, allocN: 8, why: "type from the resource huawei.com/Ascend910B3"},
		{name: "ascend-cce-1980", source: "Huawei Cloud CCE nodes as Volcano's and vllm-ascend's manifests request them (huawei.com/ascend-1980: 8)",
			cap: m{"huawei.com/ascend-1980": "8"},
			typ: inventory.TypeUnknown, vendor: "huawei", sharing: inventory.Exclusive, count: 8, allocN: 8, model: "ascend-1980", why: "huawei.com/ascend-1980"},
		{name: "ascend-310p", source: "MindX DL's device-plugin installer (accelerator=huawei-Ascend310P for device d500) and huawei.com/Ascend310P",
			labels: m{"accelerator": "huawei-Ascend310P"}, cap: m{"huawei.com/Ascend310P": "4"},
			typ: "huawei-ascend-310p-24gb", vendor: "huawei", sharing: inventory.Exclusive, count: 4, allocN: 4, why: "huawei-Ascend310P"},
		{name: "cambricon-hami", source: "HAMi values.yaml (mluResourceName cambricon.com/vmlu, cambricon.com/mlu.smlu.vmemory, vcore)",
			cap: m{"cambricon.com/vmlu": "8", "cambricon.com/mlu.smlu.vmemory": "393216", "cambricon.com/mlu.smlu.vcore": "800"},
			typ: inventory.TypeUnknown, vendor: "cambricon", sharing: inventory.Exclusive, count: 8, allocN: 8, why: "cambricon.com/vmlu"},
		{name: "cambricon-mlu370-x8", source: "Cambricon/cambricon-k8s-device-plugin: its plugin's cambricon.com/mlu (pkg/mlu const.go) and its node labeller's Model=MLU370-X8, CPUType, DriverVersion, MCUVersion (pkg/nodeLabel and its test)",
			labels: m{"Model": "MLU370-X8", "CPUType": "Intel_R_Xeon_R_Gold_5118_CPU_2.30GHz", "DriverVersion": "v4.20.6", "MCUVersion": "v1.1.4"}, cap: m{"cambricon.com/mlu": "8"},
			typ: "cambricon-mlu370-x8-48gb", vendor: "cambricon", sharing: inventory.Exclusive, count: 8, allocN: 8, why: "type from Model=MLU370-X8"},
		{name: "cambricon-plugin-no-label", source: "Cambricon's device plugin without its labeller: cambricon.com/mlu names no card (the MLU370-X8 and MLU290-M5 share it)",
			cap: m{"cambricon.com/mlu": "8"},
			typ: inventory.TypeUnknown, vendor: "cambricon", sharing: inventory.Exclusive, count: 8, allocN: 8, why: "cambricon.com/mlu"},
		{name: "iluvatar-bi-v100", source: "HAMi's device config (iluvatar.ai/BI-V100-vgpu, .vMem, .vCore)",
			cap: m{"iluvatar.ai/BI-V100-vgpu": "8", "iluvatar.ai/BI-V100.vMem": "256", "iluvatar.ai/BI-V100.vCore": "800"},
			typ: "iluvatar-bi-v100-32gb", vendor: "iluvatar", sharing: inventory.Exclusive, count: 8, allocN: 8, why: "type from the resource iluvatar.ai/BI-V100-vgpu"},
		{name: "hygon-dcu", source: "HAMi values.yaml (dcuResourceName hygon.com/dcunum, dcumem, dcucores)",
			cap: m{"hygon.com/dcunum": "8", "hygon.com/dcumem": "524288", "hygon.com/dcucores": "800"},
			typ: inventory.TypeUnknown, vendor: "hygon", sharing: inventory.Exclusive, count: 8, allocN: 8, why: "hygon.com/dcunum"},
		{name: "metax-sgpu", source: "HAMi's device config (metax-tech.com/gpu, sGPU metax-tech.com/sgpu with vcore and vmemory)",
			cap: m{"metax-tech.com/gpu": "8"},
			typ: inventory.TypeUnknown, vendor: "metax", sharing: inventory.Exclusive, count: 8, allocN: 8, why: "metax-tech.com/gpu"},
		{name: "iluvatar-bi-v150", source: "HAMi's device config (iluvatar.ai/BI-V150-vgpu, .vMem, .vCore)",
			cap: m{"iluvatar.ai/BI-V150-vgpu": "8", "iluvatar.ai/BI-V150.vMem": "512", "iluvatar.ai/BI-V150.vCore": "800"},
			typ: "iluvatar-bi-v150-64gb", vendor: "iluvatar", sharing: inventory.Exclusive, count: 8, allocN: 8, why: "type from the resource iluvatar.ai/BI-V150-vgpu"},
		{name: "iluvatar-mr-v100", source: "HAMi's examples/iluvatar/default_use_MR-V100.yaml (iluvatar.ai/MR-V100-vgpu, .vCore, .vMem) on a two-GPU MR-V100 machine as a deployment report describes it (dual Iluvatar MR-V100 32GB)",
			cap: m{"iluvatar.ai/MR-V100-vgpu": "2", "iluvatar.ai/MR-V100.vMem": "256", "iluvatar.ai/MR-V100.vCore": "200"},
			typ: "iluvatar-mr-v100-32gb", vendor: "iluvatar", sharing: inventory.Exclusive, count: 2, allocN: 2, why: "type from the resource iluvatar.ai/MR-V100-vgpu"},
		{name: "metax-c550", source: "a MetaX operator install write-up's node mx-5500g6 (kubectl get node -o yaml: metax-tech.com/gpu.product=MXC550, gpu.family=MXC, gpu.memory=64GB…; allocatable metax-tech.com/gpu 8, metax-tech.com/vfio-gpu 0)",
			labels: m{"metax-tech.com/driver.ready": "true", "metax-tech.com/gpu.driver.major": "2", "metax-tech.com/gpu.driver.minor": "12", "metax-tech.com/gpu.driver.mode": "cloud", "metax-tech.com/gpu.driver.patch": "13", "metax-tech.com/gpu.family": "MXC", "metax-tech.com/gpu.installed": "true", "metax-tech.com/gpu.memory": "64GB", "metax-tech.com/gpu.product": "MXC550", "metax-tech.com/gpu.sriov": "forbidden", "metax-tech.com/maca.ready": "true", "metax-tech.com/runtime.ready": "true"},
			cap:    m{"metax-tech.com/gpu": "8", "metax-tech.com/vfio-gpu": "0"},
			typ:    "metax-c550-64gb", vendor: "metax", sharing: inventory.Exclusive, count: 8, allocN: 8, why: "metax-tech.com/gpu.product=MXC550"},
		{name: "metax-c500", source: "a MetaX C500 cluster's node labels as a deployment note records the device plugin stack writing them (metax-tech.com/gpu.product=MXC500, gpu.family=MXC, gpu.memory=64GB, driver.ready/maca.ready/runtime.ready=true)",
			labels: m{"metax-tech.com/gpu.installed": "true", "metax-tech.com/gpu.product": "MXC500", "metax-tech.com/gpu.memory": "64GB", "metax-tech.com/gpu.family": "MXC", "metax-tech.com/driver.ready": "true", "metax-tech.com/maca.ready": "true", "metax-tech.com/runtime.ready": "true"},
			cap:    m{"metax-tech.com/gpu": "8"},
			typ:    "metax-c500-64gb", vendor: "metax", sharing: inventory.Exclusive, count: 8, allocN: 8, why: "metax-tech.com/gpu.product=MXC500"},
		{name: "hygon-k100-ai", source: "Hygon's DCU-Label-Node and DCU-Device-Plugin as a K100_AI deployment guide documents them (hygon.com/dcu=true, dcu.name=K100_AI, dcu.cu-count=120, dcu.vram=64G; resource hygon.com/dcu; 8 HCUs in hy-smi)",
			labels: m{"hygon.com/dcu": "true", "hygon.com/dcu.name": "K100_AI", "hygon.com/dcu.cu-count": "120", "hygon.com/dcu.vram": "64G"},
			cap:    m{"hygon.com/dcu": "8"},
			typ:    "hygon-k100-ai-64gb", vendor: "hygon", sharing: inventory.Exclusive, count: 8, allocN: 8, why: "hygon.com/dcu.name=K100_AI"},
		{name: "hygon-plugin-no-label", source: "Hygon's DCU-Device-Plugin without DCU-Label-Node (its labels can be switched off): hygon.com/dcu is every DCU's resource, so it names no model",
			cap: m{"hygon.com/dcu": "8"},
			typ: inventory.TypeUnknown, vendor: "hygon", sharing: inventory.Exclusive, count: 8, allocN: 8, why: "hygon.com/dcu"},
		{name: "mthreads-s5000-sgpu", source: "HAMi's Use HAMi with Mthreads MTT S5000 guide (label mthreads.com/gpu-node=true; sgpu_km total_gpu_num=1 slices GPU 0; the node reports mthreads.com/gpu for whole cards, sgpu-core 16 and sgpu-memory 160 per sliced card)",
			labels: m{"mthreads.com/gpu-node": "true", "mthreads.com/gpu.count": "8"},
			cap:    m{"mthreads.com/gpu": "7", "mthreads.com/sgpu-core": "16", "mthreads.com/sgpu-memory": "160"},
			typ:    "mthreads-s5000-80gb", vendor: "mthreads", sharing: inventory.Exclusive, count: 7, allocN: 7, why: "mthreads.com/sgpu-memory=160 over 1 cards"},
		{name: "mthreads-s4000-sgpu", source: "the same guide's S4000 (HAMi's memoryPerCard default, 96 units of 512 MiB, matches the MTT S4000's 48 GiB) with two cards sliced",
			labels: m{"mthreads.com/gpu-node": "true", "mthreads.com/gpu.count": "8"},
			cap:    m{"mthreads.com/gpu": "6", "mthreads.com/sgpu-core": "32", "mthreads.com/sgpu-memory": "192"},
			typ:    "mthreads-s4000-48gb", vendor: "mthreads", sharing: inventory.Exclusive, count: 6, allocN: 6, why: "the 48 GiB of the Moore Threads MTT S4000 48GB"},
		{name: "mthreads-whole-cards", source: "the guide's whole-card pool alone (no card bound to sgpu_km): mthreads.com/gpu is every model's resource and the labels name none, so an S4000 node and an S5000 node read alike",
			labels: m{"mthreads.com/gpu-node": "true", "mthreads.com/gpu.count": "8"},
			cap:    m{"mthreads.com/gpu": "8"},
			typ:    inventory.TypeUnknown, vendor: "mthreads", sharing: inventory.Exclusive, count: 8, allocN: 8, why: "mthreads.com/gpu"},
		{name: "mthreads", source: "HAMi values.yaml (mthreads.com/vgpu)", cap: m{"mthreads.com/vgpu": "8"},
			typ: inventory.TypeUnknown, vendor: "mthreads", sharing: inventory.Exclusive, count: 8, allocN: 8, why: "mthreads.com/vgpu"},
		{name: "enflame", source: "HAMi values.yaml (enflame.com/gcu, drs-gcu, gcu-memory, gcu-core)", cap: m{"enflame.com/gcu": "8", "enflame.com/gcu-memory": "384"},
			typ: inventory.TypeUnknown, vendor: "enflame", sharing: inventory.Exclusive, count: 8, allocN: 8, why: "enflame.com/gcu"},
		{name: "enflame-s60-gcushare", source: "a node with one Enflame S60 under gcushare, as a HAMi Enflame DRS design note records it (node sse-jq-111-65: GCU Feature Discovery's enflame.com/gcu.model=S60, gcu.memory=41984, gcu.family=SCORPIO…; capacity enflame.com/gcu-count 1, shared-gcu 6, drs-gcu 6, enflame.com/gcu 0)",
			labels: m{"enflame.com/gcu.count": "1", "enflame.com/gcu.driverVer": "1.8.7", "enflame.com/gcu.family": "SCORPIO", "enflame.com/gcu.machine": "System-Product-Name", "enflame.com/gcu.memory": "41984", "enflame.com/gcu.model": "S60", "enflame.com/gcu.present": "true", "enflame.com/gcu.product": "scorpio", "enflame.com/gcushare": "true"},
			cap:    m{"enflame-tech.com/gcu": "0", "enflame.com/drs-gcu": "6", "enflame.com/gcu": "0", "enflame.com/gcu-count": "1", "enflame.com/shared-gcu": "6"},
			typ:    inventory.TypeUnknown, vendor: "enflame", sharing: inventory.TimeSliced, count: 1, allocN: 6, model: "S60", why: "enflame.com/gcu-count 1 GCUs offered as up to 6 shares"},
		{name: "kunlunxin", source: "HAMi values.yaml (kunlunxin.com/xpu, vxpu, vxpu-memory)", cap: m{"kunlunxin.com/xpu": "8"},
			typ: inventory.TypeUnknown, vendor: "kunlunxin", sharing: inventory.Exclusive, count: 8, allocN: 8, why: "kunlunxin.com/xpu"},
		{name: "qualcomm-ultra", source: "NRP's Qualcomm Cloud AI 100 docs (8 cards, 32 devices, qualcomm.com/qaic) and the AIC operator's node selector qualcomm.com/qaic=true",
			labels: m{"qualcomm.com/qaic": "true"}, cap: m{"qualcomm.com/qaic": "32"},
			typ: "qualcomm-cloud-ai-100-32gb", vendor: "qualcomm", sharing: inventory.Exclusive, count: 32, allocN: 32, why: "type from the resource qualcomm.com/qaic"},
		{name: "tenstorrent-n300", source: "goshlanguage/k8s-device-plugin (tenstorrent.com/<board>: n150 or n300)", cap: m{"tenstorrent.com/n300": "4"},
			typ: "tenstorrent-wormhole-n300-24gb", vendor: "tenstorrent", sharing: inventory.Exclusive, count: 4, allocN: 4, why: "tenstorrent.com/n300"},
		{name: "tenstorrent-p150a", source: "tt-system-firmware's Blackhole boards (P150A) under the device plugin's tenstorrent.com/<board>", cap: m{"tenstorrent.com/p150a": "4"},
			typ: "tenstorrent-blackhole-p150-32gb", vendor: "tenstorrent", sharing: inventory.Exclusive, count: 4, allocN: 4, why: "tenstorrent.com/p150a"},
		{name: "biren", source: "HAMi values.yaml and Biren's device plugin (BirenTechnology/k8s-device-plugin: birentech.com/gpu)",
			cap: m{"birentech.com/gpu": "8"},
			typ: inventory.TypeUnknown, vendor: "biren", sharing: inventory.Exclusive, count: 8, allocN: 8, why: "birentech.com/gpu is a biren device"},
		{name: "biren-svi", source: "Biren's device plugin, SVI partitions pre-created on the GPUs (BirenTechnology/k8s-device-plugin: birentech.com/1-4-gpu, 1-2-gpu)",
			cap: m{"birentech.com/1-4-gpu": "16"},
			typ: inventory.TypeUnknown, vendor: "biren", sharing: inventory.Partitioned, count: 0, allocN: 16, why: "Biren's SVI partitions"},
		{name: "iluvatar-own-plugin", source: "Iluvatar's own device plugin (iluvatar.com/gpu, a board, a chip or a time-slice token as its flags say)",
			cap: m{"iluvatar.com/gpu": "8"},
			typ: inventory.TypeUnknown, vendor: "iluvatar", sharing: inventory.Exclusive, count: 8, allocN: 8, why: "iluvatar.com/gpu is a iluvatar device"},
		{name: "cambricon-model-resource", source: "Cambricon/cambricon-k8s-device-plugin device-plugin/README.md (device-type naming: cambricon.com/mlu370)",
			cap: m{"cambricon.com/mlu370": "8"},
			typ: inventory.TypeUnknown, vendor: "cambricon", sharing: inventory.Exclusive, count: 8, allocN: 8, model: "mlu370", why: "cambricon.com/mlu370"},
		{name: "cambricon-env-share", source: "the same README, env-share mode (cambricon.com/mlu370.share, each MLU offered to several containers)",
			cap: m{"cambricon.com/mlu370.share": "32"},
			typ: inventory.TypeUnknown, vendor: "cambricon", sharing: inventory.TimeSliced, count: 0, allocN: 32, model: "mlu370", why: "Cambricon's env-share"},
		{name: "cambricon-mim", source: "the same README, MIM mode (cambricon.com/mlu370.mim-2m.8gb)",
			cap: m{"cambricon.com/mlu370.mim-2m.8gb": "16"},
			typ: inventory.TypeUnknown, vendor: "cambricon", sharing: inventory.Partitioned, count: 0, allocN: 16, model: "mlu370", why: "Cambricon's MIM instances"},
		{name: "hygon-vdcu", source: "Hygon's DCU Kubernetes deployment guide, standard mode: pre-created vDCUs beside whole DCUs (hygon.com/dcu-share-30c-16g, hygon.com/dcu) and DCU-Label-Node's labels",
			labels: m{"hygon.com/dcu": "true", "hygon.com/dcu.name": "K100_AI"}, cap: m{"hygon.com/dcu": "4", "hygon.com/dcu-share-30c-16g": "8"},
			typ: "hygon-k100-ai-64gb", vendor: "hygon", sharing: inventory.Partitioned, count: 4, allocN: 12, why: "Hygon's pre-created vDCUs"},
		{name: "hygon-dcu-mig", source: "the same guide, MIG mode (hygon.com/dcu-mig-2g-15gb, dcu-mig-4g-31gb)",
			cap: m{"hygon.com/dcu-mig-2g-15gb": "4", "hygon.com/dcu-mig-4g-31gb": "2"},
			typ: inventory.TypeUnknown, vendor: "hygon", sharing: inventory.Partitioned, count: 0, allocN: 6, why: "Hygon's MIG instances"},
		{name: "metax-sgpu-mode", source: "MetaX's Kubernetes component guide (gpu-device in sGPU mode registers metax-tech.com/sgpu, up to 16 instances a GPU) on a C500 node as its operator labels it",
			labels: m{"metax-tech.com/gpu.product": "MXC500", "metax-tech.com/gpu.memory": "64GB"}, cap: m{"metax-tech.com/sgpu": "64"},
			typ: "metax-c500-64gb", vendor: "metax", sharing: inventory.TimeSliced, count: 0, allocN: 64, why: "MetaX's sGPU instances"},
		{name: "enflame-shared-only", source: "Enflame's gcushare plugin offering enflame.com/shared-gcu without gcu-count (HAMi's Enflame guide: shared-gcu requested with gcu-memory)",
			labels: m{"enflame.com/gcu.model": "S60"}, cap: m{"enflame.com/shared-gcu": "48"},
			typ: inventory.TypeUnknown, vendor: "enflame", sharing: inventory.TimeSliced, count: 0, allocN: 48, model: "S60", why: "shares of Enflame GCUs' memory"},
		{name: "mthreads-all-sliced", source: "HAMi's Use HAMi with Mthreads guide with every card bound to sgpu_km: the node reports only mthreads.com/sgpu-core (16 a card) and sgpu-memory",
			labels: m{"mthreads.com/gpu-node": "true"}, cap: m{"mthreads.com/sgpu-core": "32", "mthreads.com/sgpu-memory": "192"},
			typ: "mthreads-s4000-48gb", vendor: "mthreads", sharing: inventory.TimeSliced, count: 2, allocN: 0, why: "every card is sliced by Moore Threads' sGPU"},
		{name: "ascend-dynamic-vnpu", source: "Ascend/ascend-device-plugin's virtual-device resource huawei.com/npu-core (dynamic vNPUs), on a node MindX DL labels",
			labels: m{"accelerator": "huawei-Ascend910", "workerselector": "dls-worker-node"}, cap: m{"huawei.com/npu-core": "160"},
			typ: inventory.TypeUnknown, vendor: "huawei", sharing: inventory.Partitioned, count: 0, allocN: 0, why: "Ascend's dynamic virtual NPUs"},
		{name: "ascend-static-vnpu", source: "MindX DL's static virtual NPUs (huawei.com/Ascend310P-2c beside whole huawei.com/Ascend310P)",
			labels: m{"accelerator": "huawei-Ascend310P"}, cap: m{"huawei.com/Ascend310P": "2", "huawei.com/Ascend310P-2c": "4"},
			typ: "huawei-ascend-310p-24gb", vendor: "huawei", sharing: inventory.Partitioned, count: 2, allocN: 6, why: "Ascend virtual NPUs"},
		{name: "ascend-chip-910b3", source: "a 910B node as an accelerator-toolkit rollout note records it (kunlun-02: accelerator=huawei-Ascend910, node.kubernetes.io/npu.chip.name=910B3, servertype=Ascend910B-20; huawei.com/Ascend910 capacity 8, allocatable 7)",
			labels: m{"accelerator": "huawei-Ascend910", "node.kubernetes.io/npu.chip.name": "910B3", "servertype": "Ascend910B-20", "kubernetes.io/arch": "arm64"},
			cap:    m{"huawei.com/Ascend910": "8"}, alloc: m{"huawei.com/Ascend910": "7"},
			typ: "huawei-ascend-910b-64gb", vendor: "huawei", sharing: inventory.Exclusive, count: 8, allocN: 7, why: "type from node.kubernetes.io/npu.chip.name=910B3"},
		{name: "ascend-chip-910b4", source: "a CI runner-label parser's test: arm64-910B4-1 selects kubernetes.io/arch=arm64, node.kubernetes.io/npu.chip.name=910B4",
			labels: m{"kubernetes.io/arch": "arm64", "node.kubernetes.io/npu.chip.name": "910B4"}, cap: m{"huawei.com/Ascend910": "8"},
			typ: "huawei-ascend-910b4-32gb", vendor: "huawei", sharing: inventory.Exclusive, count: 8, allocN: 8, why: "npu.chip.name=910B4"},
		{name: "ascend-chip-910a", source: "Ascend's device plugin (ChipNameLabel node.kubernetes.io/npu.chip.name, \"eg. 910A\") on an Atlas 800 training node MindX DL labels",
			labels: with(mindx, "node.kubernetes.io/npu.chip.name", "910A"), cap: m{"huawei.com/Ascend910": "8"},
			typ: "huawei-ascend-910a-32gb", vendor: "huawei", sharing: inventory.Exclusive, count: 8, allocN: 8, why: "npu.chip.name=910A"},
		{name: "ascend-cce-snt9c", source: "a CCE/ModelArts NPU dashboard's node model: huawei.com/ascend-1980 capacity, accelerator/huawei-npu \"ascend-snt9c\", node.kubernetes.io/npu.chip.name \"Ascend910\"; an A3 node's 16 dies",
			labels: m{"accelerator/huawei-npu": "ascend-snt9c", "node.kubernetes.io/npu.chip.name": "Ascend910"}, cap: m{"huawei.com/ascend-1980": "16"},
			typ: "huawei-ascend-910c-64gb", vendor: "huawei", sharing: inventory.Exclusive, count: 16, allocN: 16, why: "accelerator/huawei-npu=ascend-snt9c"},
		{name: "ascend-cce-snt9b", source: "a Huawei Cloud Stack vLLM-Ascend deployment manual (910B, \"8 * ascend-snt9b 64G\") on a CCE node with CCE's resource",
			labels: m{"accelerator/huawei-npu": "ascend-snt9b"}, cap: m{"huawei.com/ascend-1980": "8"},
			typ: "huawei-ascend-910b-64gb", vendor: "huawei", sharing: inventory.Exclusive, count: 8, allocN: 8, why: "accelerator/huawei-npu=ascend-snt9b"},
		{name: "ascend-cce-selector-1980", source: "a Helm chart's nodeSelector accelerator/huawei-npu: ascend-1980 and CCE's huawei.com/ascend-1980: the value names the resource, not the chip",
			labels: m{"accelerator/huawei-npu": "ascend-1980"}, cap: m{"huawei.com/ascend-1980": "8"},
			typ: inventory.TypeUnknown, vendor: "huawei", sharing: inventory.Exclusive, count: 8, allocN: 8, model: "ascend-1980", why: "huawei.com/ascend-1980"},
		{name: "cambricon-mlu370-x4", source: "Cambricon's labeller (Model, pkg/nodeLabel) on an MLU370-X4 node, the board HAMi's protocol example and benchmark workers name (product MLU370-X4)",
			labels: m{"Model": "MLU370-X4"}, cap: m{"cambricon.com/mlu": "8"},
			typ: "cambricon-mlu370-x4-24gb", vendor: "cambricon", sharing: inventory.Exclusive, count: 8, allocN: 8, why: "type from Model=MLU370-X4"},
		{name: "cambricon-mlu590-h8", source: "Cambricon's labeller on an 8-card MLU590-H8 server (cnmon and torch_mlu name the device MLU590-H8)",
			labels: m{"Model": "MLU590-H8"}, cap: m{"cambricon.com/mlu": "8"},
			typ: "cambricon-mlu590-h8-80gb", vendor: "cambricon", sharing: inventory.Exclusive, count: 8, allocN: 8, why: "type from Model=MLU590-H8"},
		{name: "hygon-z100l", source: "Hygon's DCU-Label-Node on a Z100L node (hygon.com/dcu.name; Z100 and Z100L are card models of Hygon's DTK compatibility matrix)",
			labels: m{"hygon.com/dcu": "true", "hygon.com/dcu.name": "Z100L"}, cap: m{"hygon.com/dcu": "8"},
			typ: "hygon-z100l-32gb", vendor: "hygon", sharing: inventory.Exclusive, count: 8, allocN: 8, why: "hygon.com/dcu.name=Z100L"},
		{name: "mthreads-s3000-sgpu", source: "HAMi's Mthreads guide's sGPU resources on an MTT S3000 (32 GB: 64 units of 512 MiB a card), one card sliced beside seven whole ones",
			labels: m{"mthreads.com/gpu-node": "true"}, cap: m{"mthreads.com/gpu": "7", "mthreads.com/sgpu-core": "16", "mthreads.com/sgpu-memory": "64"},
			typ: "mthreads-s3000-32gb", vendor: "mthreads", sharing: inventory.Exclusive, count: 7, allocN: 7, why: "the 32 GiB of the Moore Threads MTT S3000 32GB"},
		{name: "ascend-910b4-hami-and-static-vnpu", source: "a 910B4 server's node as a HAMi-on-Ascend write-up prints it (wenxue-master: accelerator=huawei-Ascend910, accelerator-type=module, npu.chip.name=910B4, servertype=Ascend910B-20; capacity huawei.com/Ascend910 6, Ascend910-5c.1cpu.8g 2, Ascend910B4 32; hami.io/node-register-Ascend910B4 lists 8 chips, count 4 each)",
			labels: with(mindx, "accelerator-type", "module", "ascend", "on", "masterselector", "dls-master-node", "node.kubernetes.io/npu.chip.name", "910B4", "servertype", "Ascend910B-20", "kubernetes.io/arch", "arm64"),
			cap:    m{"huawei.com/Ascend910": "6", "huawei.com/Ascend910-5c.1cpu.8g": "2", "huawei.com/Ascend910B4": "32"},
			anno:   m{"hami.io/node-register-Ascend910B4": `[{"index":0,"id":"Ascend910B4-0","count":4,"devmem":32768,"devcore":20,"type":"Ascend910B4","health":true},{"index":1,"id":"Ascend910B4-1","count":4,"devmem":32768,"devcore":20,"type":"Ascend910B4","health":true},{"index":2,"id":"Ascend910B4-2","count":4,"devmem":32768,"devcore":20,"type":"Ascend910B4","health":true},{"index":3,"id":"Ascend910B4-3","count":4,"devmem":32768,"devcore":20,"type":"Ascend910B4","health":true},{"index":4,"id":"Ascend910B4-4","count":4,"devmem":32768,"devcore":20,"type":"Ascend910B4","health":true},{"index":5,"id":"Ascend910B4-5","count":4,"devmem":32768,"devcore":20,"type":"Ascend910B4","health":true},{"index":6,"id":"Ascend910B4-6","count":4,"devmem":32768,"devcore":20,"type":"Ascend910B4","health":true},{"index":7,"id":"Ascend910B4-7","count":4,"devmem":32768,"devcore":20,"type":"Ascend910B4","health":true}]`},
			typ:    "huawei-ascend-910b4-32gb", vendor: "huawei", sharing: inventory.TimeSliced, count: 8, allocN: 40, why: "shared by HAMi: hami.io/node-register-Ascend910B4 registers 8 devices, each offered to up to 4 containers"},
		{name: "enflame-t10", source: "Enflame's GCU Feature Discovery guide, node sse-lab-inspur-048 (kubectl describe node: enflame.com/gcu.count=8, gcu.family=LEO, gcu.machine=NF5468M5, gcu.memory=16384, gcu.model=T10, gcu.present=true) under Enflame's device plugin (enflame.com/gcu)",
			labels: m{"enflame.com/gcu.count": "8", "enflame.com/gcu.family": "LEO", "enflame.com/gcu.machine": "NF5468M5", "enflame.com/gcu.memory": "16384", "enflame.com/gcu.model": "T10", "enflame.com/gcu.present": "true", "enflame.com/gfd.timestamp": "2023-03-02-06-11-03"},
			cap:    m{"enflame.com/gcu": "8"},
			typ:    "enflame-t10-16gb", vendor: "enflame", sharing: inventory.Exclusive, count: 8, allocN: 8, why: "type from enflame.com/gcu.model=T10"},
		{name: "enflame-old-plugin-domain", source: "Enflame's older device plugin's enflame-tech.com/gcu (the resource a t9k cluster config lists beside enflame.com/gcu)",
			cap: m{"enflame-tech.com/gcu": "8"},
			typ: inventory.TypeUnknown, vendor: "enflame", sharing: inventory.Exclusive, count: 8, allocN: 8, why: "enflame-tech.com/gcu is a enflame device"},
		{name: "enflame-hami-vgcu", source: "HAMi's device config (enflame resourceCountName enflame.com/vgcu, resourcePercentageName enflame.com/vgcu-percentage)",
			cap: m{"enflame.com/vgcu": "16"},
			typ: inventory.TypeUnknown, vendor: "enflame", sharing: inventory.TimeSliced, count: 0, allocN: 16, why: "HAMi's vGCUs"},
		{name: "kunlunxin-own-plugin", source: "Kunlunxin's XPU device plugin README (kunlunxpu/xpu-device-plugin: kubectl describe node shows Capacity baidu.com/xpu: 4)",
			cap: m{"baidu.com/xpu": "4", "cpu": "12", "memory": "7746896Ki", "pods": "110"},
			typ: inventory.TypeUnknown, vendor: "kunlunxin", sharing: inventory.Exclusive, count: 4, allocN: 4, why: "baidu.com/xpu is a kunlunxin device"},
		{name: "kunlunxin-vxpu", source: "HAMi values.yaml (kunlunxin.com/vxpu, vxpu-memory: HAMi's vXPU, halves and quarters of a P800)",
			cap: m{"kunlunxin.com/vxpu": "16", "kunlunxin.com/vxpu-memory": "786432"},
			typ: inventory.TypeUnknown, vendor: "kunlunxin", sharing: inventory.Partitioned, count: 0, allocN: 16, why: "HAMi's vXPUs"},
	})
}

// TestGPUSharingResources: GPUs a cloud's or a scheduler's own sharing
// offers under resources of its own, not nvidia.com/gpu.
func TestGPUSharingResources(t *testing.T) {
	runFamilies(t, []family{
		{name: "volcano-gpu-share", source: "a Volcano GPU-sharing node as a deployment note prints it (kubectl get node -o yaml: nvidia.com/gpu 2, volcano.sh/gpu-memory 21978, volcano.sh/gpu-number 2)",
			cap: m{"nvidia.com/gpu": "2", "volcano.sh/gpu-memory": "21978", "volcano.sh/gpu-number": "2"},
			typ: inventory.TypeUnknown, vendor: "nvidia", sharing: inventory.TimeSliced, count: 2, allocN: 2, why: "time-sliced by Volcano's GPU sharing"},
		{name: "volcano-gpu-number-only", source: "Volcano's GPU number user guide (kubectl describe node: volcano.sh/gpu-memory 0, volcano.sh/gpu-number 1 on a GCE node)",
			cap: m{"volcano.sh/gpu-memory": "0", "volcano.sh/gpu-number": "1"},
			typ: inventory.TypeUnknown, vendor: "nvidia", sharing: inventory.Exclusive, count: 1, allocN: 1, why: "no GPU Feature Discovery labels"},
		{name: "tke-qgpu", source: "a vLLM-on-TKE guide's qGPU node (kubectl describe node, Allocatable: tke.cloud.tencent.com/qgpu-core 100, qgpu-memory 48)",
			cap: m{"tke.cloud.tencent.com/qgpu-core": "100", "tke.cloud.tencent.com/qgpu-memory": "48"},
			typ: inventory.TypeUnknown, vendor: "nvidia", sharing: inventory.TimeSliced, count: 1, allocN: 1, why: "time-sliced by Tencent Cloud's qGPU"},
		{name: "vke-mgpu", source: "VKE's mgpu-share scheduler code (allocatable vke.volcengine.com/mgpu-core \"200\", mgpu-memory \"30218\"; GPUs = mgpu-core / 100)",
			cap: m{"vke.volcengine.com/mgpu-core": "200", "vke.volcengine.com/mgpu-memory": "30218"},
			typ: inventory.TypeUnknown, vendor: "nvidia", sharing: inventory.TimeSliced, count: 2, allocN: 2, why: "time-sliced by Volcengine's mGPU"},
		{name: "ack-cgpu", source: "an ACK cGPU node: ACK's labels (aliyun.accelerator/nvidia_name, nvidia_count, nvidia_mem; ack.node.gpu.schedule=cgpu, the scheduler framework's GPUShareNodeLabels) and gpushare's resources aliyun.com/gpu-count and aliyun.com/gpu-mem (GiB)",
			labels: m{"aliyun.accelerator/nvidia_name": "Tesla-V100-SXM2-16GB", "aliyun.accelerator/nvidia_count": "4", "aliyun.accelerator/nvidia_mem": "16160MiB", "ack.node.gpu.schedule": "cgpu"},
			cap:    m{"aliyun.com/gpu-count": "4", "aliyun.com/gpu-mem": "64", "nvidia.com/gpu": "0"},
			typ:    "nvidia-v100-16gb", vendor: "nvidia", sharing: inventory.TimeSliced, count: 4, allocN: 4, why: "(ack.node.gpu.schedule=cgpu)"},
		{name: "gpushare-memory-only", source: "AliyunContainerService/gpushare-device-plugin on a node labelled gpushare=true, offering aliyun.com/gpu-mem alone",
			labels: m{"gpushare": "true"}, cap: m{"aliyun.com/gpu-mem": "32"},
			typ: inventory.TypeUnknown, vendor: "nvidia", sharing: inventory.TimeSliced, count: 0, allocN: 0, why: "how many GPUs it shares is not said"},
	})
}

// TestBaiduCGPU: Baidu Cloud's cGPU resources name the GPU model and its
// memory.
func TestBaiduCGPU(t *testing.T) {
	runFamilies(t, []family{
		{name: "baidu-a800", source: "a Baidu AIHC resource pool's status (gpuDetail: gpudescriptor baidu.com/a800_80g_cgpu, total 8), a node of eight A800",
			cap: m{"baidu.com/a800_80g_cgpu": "8"},
			typ: "nvidia-a800-80gb", vendor: "nvidia", sharing: inventory.Exclusive, count: 8, allocN: 8, why: "Baidu Cloud's cGPU resource"},
		{name: "baidu-l20", source: "Baidu AIHC's descriptor for the L20 (baidu.com/l20_cgpu), as a job-submission tool's alias table lists it",
			cap: m{"baidu.com/l20_cgpu": "8"},
			typ: "nvidia-l20-48gb", vendor: "nvidia", sharing: inventory.Exclusive, count: 8, allocN: 8, why: "baidu.com/l20_cgpu"},
		{name: "baidu-h20z", source: "the same table's baidu.com/h20z_141g_cgpu, a name the catalog has no model of",
			cap: m{"baidu.com/h20z_141g_cgpu": "8"},
			typ: inventory.TypeUnknown, vendor: "nvidia", sharing: inventory.Exclusive, count: 8, allocN: 8, model: "H20Z-141G", why: "names a GPU the catalog does not"},
	})
}

// TestWorkstationGPUs: GeForce and TITAN cards in clusters, as GPU Feature
// Discovery labels them.
func TestWorkstationGPUs(t *testing.T) {
	runFamilies(t, []family{
		{name: "rtx-5090-gfd", source: "a GPU Operator write-up's GFD labels on a two-card RTX 5090 node (nvidia.com/gpu.count=2, gpu.product=NVIDIA-GeForce-RTX-5090, gpu.memory=32768, gpu.family=blackwell…)",
			labels: m{"nvidia.com/gpu.count": "2", "nvidia.com/gpu.product": "NVIDIA-GeForce-RTX-5090", "nvidia.com/gpu.memory": "32768", "nvidia.com/gpu.compute.major": "10", "nvidia.com/gpu.compute.minor": "0", "nvidia.com/cuda.driver.major": "570", "nvidia.com/cuda.runtime.major": "12", "nvidia.com/gpu.family": "blackwell"},
			cap:    m{"nvidia.com/gpu": "2"},
			typ:    "nvidia-rtx-5090-32gb", vendor: "nvidia", sharing: inventory.Exclusive, count: 2, allocN: 2, why: "NVIDIA-GeForce-RTX-5090"},
		{name: "rtx-2080-ti-time-sliced", source: "a time-slicing tutorial's node b120639-pc3 (kubectl describe node: nvidia.com/gpu.product=NVIDIA-GeForce-RTX-2080-Ti-SHARED, nvidia.com/gpu 6, the GPUs uncounted: no gpu.count in what it shows)",
			labels: m{"nvidia.com/gpu.product": "NVIDIA-GeForce-RTX-2080-Ti-SHARED"},
			cap:    m{"nvidia.com/gpu": "6"},
			typ:    "nvidia-rtx-2080ti-11gb", vendor: "nvidia", sharing: inventory.TimeSliced, count: 0, allocN: 6, why: "NVIDIA-GeForce-RTX-2080-Ti-SHARED"},
	})
}

// TestPerDeviceResources: a GPU advertised by its PCI name or its vGPU
// type, as KubeVirt's and Confidential Containers' device plugin does.
func TestPerDeviceResources(t *testing.T) {
	runFamilies(t, []family{
		{name: "coco-h200", source: "NVIDIA's Confidential Containers deployment (nvidia.com/GH100_H200_141GB, the sandbox device plugin's PCI-name resource)",
			labels: m{"nvidia.com/gpu.workload.config": "vm-passthrough"}, cap: m{"nvidia.com/GH100_H200_141GB": "8", "devices.kubevirt.io/kvm": "1k"},
			typ: "nvidia-h200-141gb", vendor: "nvidia", sharing: inventory.Exclusive, count: 8, allocN: 8, why: "nvidia.com/GH100_H200_141GB"},
		{name: "kubevirt-h100", source: "a KubeVirt VM's gpus deviceName nvidia.com/GH100_H100_SXM5_80GB (beside the NVSwitch nvidia.com/GH100_H100_NVSwitch)",
			cap: m{"nvidia.com/GH100_H100_SXM5_80GB": "8", "nvidia.com/GH100_H100_NVSwitch": "4"},
			typ: "nvidia-h100-80gb", vendor: "nvidia", sharing: inventory.Exclusive, count: 8, allocN: 8, why: "nvidia.com/GH100_H100_SXM5_80GB"},
		{name: "openshift-t4", source: "OpenShift Virtualization's HyperConverged permittedHostDevices (resourceName nvidia.com/TU104GL_Tesla_T4)",
			cap: m{"nvidia.com/TU104GL_Tesla_T4": "2"},
			typ: "nvidia-t4-16gb", vendor: "nvidia", sharing: inventory.Exclusive, count: 2, allocN: 2, why: "nvidia.com/TU104GL_Tesla_T4"},
		{name: "kubevirt-vgpu", source: "KubeVirt's mediated devices (NVIDIA vGPU type GRID T4-16Q as the device plugin names it, nvidia.com/GRID_T4-16Q)",
			cap: m{"nvidia.com/GRID_T4-16Q": "4"},
			typ: "nvidia-t4-16gb", vendor: "nvidia", sharing: inventory.VGPU, count: 4, allocN: 4, why: "a vGPU type of that board"},
	})
}

// TestProviderLabels: the providers' own labels.
func TestProviderLabels(t *testing.T) {
	runFamilies(t, []family{
		{name: "crusoe-h100", source: "Crusoe's KServe example (crusoe.ai/accelerator node selector) and the cluster autoscaler's Crusoe provider (nvidia-h100-80gb-sxm-ib)",
			labels: m{"crusoe.ai/accelerator": "nvidia-h100-80gb-sxm-ib"}, cap: m{"nvidia.com/gpu": "8"},
			typ: "nvidia-h100-80gb", vendor: "nvidia", sharing: inventory.Exclusive, count: 8, allocN: 8, why: "crusoe.ai/accelerator=nvidia-h100-80gb-sxm-ib"},
		{name: "crusoe-mi355x", source: "MLPerf runs on Crusoe (SEL='crusoe.ai/accelerator=amd-mi355x-288gb-roce')",
			labels: m{"crusoe.ai/accelerator": "amd-mi355x-288gb-roce"}, cap: m{"amd.com/gpu": "8"},
			typ: "amd-mi355x-288gb", vendor: "amd", sharing: inventory.Exclusive, count: 8, allocN: 8, why: "amd-mi355x-288gb-roce"},
		{name: "coreweave-model", source: "llm-d benchmark scenarios (gpu.nvidia.com/model:H200 on CoreWeave's Kubernetes)",
			labels: m{"gpu.nvidia.com/model": "H200"}, cap: m{"nvidia.com/gpu": "8"},
			typ: "nvidia-h200-141gb", vendor: "nvidia", sharing: inventory.Exclusive, count: 8, allocN: 8, why: "gpu.nvidia.com/model=H200"},
		{name: "azure-gb200", source: "Azure's ND GB200 v6 size (Standard_ND128isr_NDR_GB200_v6, 4 GPUs)",
			labels: m{"node.kubernetes.io/instance-type": "Standard_ND128isr_NDR_GB200_v6"}, cap: m{"nvidia.com/gpu": "4"},
			typ: "nvidia-gb200-186gb", vendor: "nvidia", sharing: inventory.Exclusive, count: 4, allocN: 4, why: "Standard_ND128isr_NDR_GB200_v6"},
		{name: "nebius-h100", source: "a Nebius mk8s node as a test fixture records it (node.kubernetes.io/instance-type=gpu-h100-sxm, nebius.com/resource-preset=1gpu-16vcpu-200gb); vLLM's CI selects gpu-h100-sxm nodes",
			labels: m{"node.kubernetes.io/instance-type": "gpu-h100-sxm", "nebius.com/resource-preset": "1gpu-16vcpu-200gb", "topology.kubernetes.io/region": "eu-north1"}, cap: m{"nvidia.com/gpu": "1"},
			typ: "nvidia-h100-80gb", vendor: "nvidia", sharing: inventory.Exclusive, count: 1, allocN: 1, why: "instance-type=gpu-h100-sxm"},
		{name: "nebius-b200-a", source: "the Nebius platform gpu-b200-sxm-a (me-west1's B200) with preset 8gpu-160vcpu-1792gb, as Nebius node groups in public e2e configs launch it",
			labels: m{"node.kubernetes.io/instance-type": "gpu-b200-sxm-a", "nebius.com/resource-preset": "8gpu-160vcpu-1792gb"}, cap: m{"nvidia.com/gpu": "8"},
			typ: "nvidia-b200-180gb", vendor: "nvidia", sharing: inventory.Exclusive, count: 8, allocN: 8, why: "gpu-b200-sxm-a"},
		{name: "nebius-gpu-name", source: "a Nebius node's labels checked by a public deployment script (nebius.com/gpu-name=H100, nebius.com/resource-preset=1gpu-16vcpu-200gb, nebius.com/preemptible=true)",
			labels: m{"nebius.com/gpu-name": "H100", "nebius.com/resource-preset": "1gpu-16vcpu-200gb", "nebius.com/preemptible": "true"}, cap: m{"nvidia.com/gpu": "1"},
			typ: "nvidia-h100-80gb", vendor: "nvidia", sharing: inventory.Exclusive, count: 1, allocN: 1, why: "nebius.com/gpu-name=H100"},
		{name: "hyperpod-p5", source: "SageMaker HyperPod EKS jobs selecting node.kubernetes.io/instance-type: ml.p5.48xlarge (awsome-distributed-training; its Ray example also sagemaker.amazonaws.com/node-health-status: Schedulable)",
			labels: m{"node.kubernetes.io/instance-type": "ml.p5.48xlarge", "sagemaker.amazonaws.com/node-health-status": "Schedulable"}, cap: m{"nvidia.com/gpu": "8"},
			typ: "nvidia-h100-80gb", vendor: "nvidia", sharing: inventory.Exclusive, count: 8, allocN: 8, why: "SageMaker HyperPod's name for the EC2 instance type p5.48xlarge"},
		{name: "hyperpod-g5", source: "HyperPod Slurm-on-EKS node sets with nodeSelector node.kubernetes.io/instance-type: ml.g5.8xlarge",
			labels: m{"node.kubernetes.io/instance-type": "ml.g5.8xlarge"}, cap: m{"nvidia.com/gpu": "1"},
			typ: "nvidia-a10g-24gb", vendor: "nvidia", sharing: inventory.Exclusive, count: 1, allocN: 1, why: "ml.g5.8xlarge"},
		{name: "hyperpod-trn1", source: "HyperPod instance group ml.trn1.32xlarge (16 Trainium devices) with the Neuron device plugin's aws.amazon.com/neuron",
			labels: m{"node.kubernetes.io/instance-type": "ml.trn1.32xlarge"}, cap: m{"aws.amazon.com/neuron": "16"},
			typ: "aws-trainium-32gb", vendor: "aws", sharing: inventory.Exclusive, count: 16, allocN: 16, why: "ml.trn1.32xlarge"},
	})
}

// TestHAMiSharing: HAMi registers each GPU with how many containers may
// share it; the device plugin offers it that many times.
func TestHAMiSharing(t *testing.T) {
	for _, anno := range []string{
		// Older releases: id,count,mem,core,type,numa,health separated by ':'.
		"GPU-0,10,40960,100,NVIDIA-NVIDIA A100-SXM4-40GB,0,true:GPU-1,10,40960,100,NVIDIA-NVIDIA A100-SXM4-40GB,0,true:",
		// Current ones: JSON.
		`[{"id":"GPU-0","count":10,"devmem":40960,"devcore":100,"type":"NVIDIA-NVIDIA A100-SXM4-40GB","health":true},{"id":"GPU-1","count":10,"devmem":40960,"devcore":100,"type":"NVIDIA-NVIDIA A100-SXM4-40GB","health":true}]`,
	} {
		n := node(t, "hami", m{"gpu": "on", "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB", "nvidia.com/gpu.count": "2"}, m{"nvidia.com/gpu": "20"}, nil)
		n.Metadata.Annotations = map[string]string{"hami.io/node-nvidia-register": anno}
		inv := inventory.Classify([]inventory.RawNode{n}, builtin(t), inventory.Options{})
		require.Len(t, inv.Nodes, 1)
		got := inv.Nodes[0]
		assert.Equal(t, "nvidia-a100-40gb", got.AcceleratorType)
		assert.Equal(t, inventory.TimeSliced, got.Sharing, "notes: %q", got.Notes)
		assert.Equal(t, 10, got.Replicas)
		assert.Equal(t, 2, got.Count)
		assert.Equal(t, 20, got.Allocatable)
	}
}

// TestHAMiTypes: where no label names the model, the device type HAMi's
// plugin registers for the node may.
func TestHAMiTypes(t *testing.T) {
	for _, c := range []struct {
		name, source, key, anno string
		cap                     m
		typ, vendor, model, why string
		count, replicas         int
	}{
		{name: "hygon-hami-k100-ai", source: "HAMi's Hygon plugin: hami.io/node-dcu-register in the id,count,mem,core,type,numa,health form of docs/develop/protocol.md, with the device type its examples/hygon name (DCU-K100_AI) and hy-smi's 65438 MiB a K100_AI; hygon.com/dcunum offers each device count times",
			key: "hami.io/node-dcu-register", anno: "DCU-0,4,65438,100,DCU-K100_AI,0,true:DCU-1,4,65438,100,DCU-K100_AI,0,true:",
			cap: m{"hygon.com/dcunum": "8", "hygon.com/dcumem": "130876", "hygon.com/dcucores": "200"},
			typ: "hygon-k100-ai-64gb", vendor: "hygon", why: "type from hami.io/node-dcu-register: devices of type DCU-K100_AI", count: 2, replicas: 4},
		{name: "cambricon-hami-mlu370-x4", source: "HAMi's docs/develop/protocol.md example: hami.io/node-mlu-register MLU-45013011-2257-0000-0000-000000000000,10,23308,0,MLU-MLU370-X4,0,false (its first MLU370-X4)",
			key: "hami.io/node-mlu-register", anno: "MLU-45013011-2257-0000-0000-000000000000,10,23308,0,MLU-MLU370-X4,0,false:",
			cap: m{"cambricon.com/vmlu": "10"},
			typ: "cambricon-mlu370-x4-24gb", vendor: "cambricon", why: "type from hami.io/node-mlu-register: devices of type MLU-MLU370-X4", count: 1, replicas: 10},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.NotEmpty(t, c.source)
			n := node(t, c.name, nil, c.cap, nil)
			n.Metadata.Annotations = map[string]string{c.key: c.anno}
			inv := inventory.Classify([]inventory.RawNode{n}, builtin(t), inventory.Options{})
			require.Len(t, inv.Nodes, 1)
			got := inv.Nodes[0]
			assert.Equal(t, c.typ, got.AcceleratorType, "notes: %q", got.Notes)
			assert.Equal(t, c.vendor, got.Vendor)
			assert.Equal(t, c.model, got.Model)
			assert.Equal(t, inventory.TimeSliced, got.Sharing, "notes: %q", got.Notes)
			assert.Equal(t, c.count, got.Count)
			assert.Equal(t, c.replicas, got.Replicas)
			assert.Contains(t, strings.Join(got.Notes, "\n"), c.why)
		})
	}
}

// TestSliceOnlyNode: a node whose devices only a vendor's DRA driver
// publishes is listed.
func TestSliceOnlyNode(t *testing.T) {
	var s inventory.ResourceSlice
	s.Spec.Driver = "tenstorrent.com"
	s.Spec.NodeName = "tt-1"
	raw := []inventory.RawNode{node(t, "tt-1", nil, m{"cpu": "64"}, nil)}
	snap := &inventory.Snapshot{Nodes: raw, Slices: []inventory.ResourceSlice{s}}
	inv := snap.Classify(builtin(t), inventory.Options{})
	require.Len(t, inv.Nodes, 1)
	assert.Equal(t, inventory.TypeUnknown, inv.Nodes[0].AcceleratorType)
	assert.Contains(t, inv.Nodes[0].Notes[0], "publishes ResourceSlices of tenstorrent.com")
}

// TestSharingTheNodeStates: sharing read from what the node says, whoever
// shares it: Intel's GPU plugin offering each GPU -shared-dev-num times,
// GKE's time-sharing labels.
func TestSharingTheNodeStates(t *testing.T) {
	runFamilies(t, []family{
		{name: "intel-max-1100-shared-10", source: "canonical/checkbox checkbox-dss-validation (intel GPU plugin with -shared-dev-num=10: capacity gpu.intel.com/i915 is the sum of gpu.intel.com/device-id.*.count times 10) on a Max 1100 node as its NFD rules label it (labels.md)",
			labels: m{"gpu.intel.com/device-id.0380-0bda.count": "1", "gpu.intel.com/device-id.0380-0bda.present": "true", "gpu.intel.com/product": "Max_1100", "intel.feature.node.kubernetes.io/gpu": "true"},
			cap:    m{"gpu.intel.com/i915": "10"},
			typ:    "intel-max-1100-48gb", vendor: "intel", sharing: inventory.TimeSliced, count: 1, allocN: 10, why: "gpu.intel.com/i915 10 over 1 GPUs (gpu.intel.com/device-id.0380-0bda.count), each offered to up to 10 containers"},
		{name: "intel-max-1550-shared-4", source: "intel-device-plugins-gpu Helm values sharedDevNum: 4 (ar3s3ru/homelabs) on labels.md's Max 1550 labels (device.count=2)",
			labels: m{"gpu.intel.com/device.count": "2", "gpu.intel.com/family": "Max_Series", "gpu.intel.com/product": "Max_1550"},
			cap:    m{"gpu.intel.com/i915": "8"},
			typ:    "intel-max-1550-128gb", vendor: "intel", sharing: inventory.TimeSliced, count: 2, allocN: 8, why: "each offered to up to 4 containers (-shared-dev-num)"},
		{name: "intel-xe-millicores", source: "the GPU plugin's xe resource (README: gpu.intel.com/xe for GPUs on the xe kernel driver) with its labeller's gpu.intel.com/millicores (labels.md: GPU count * 1000), GpuDevicePlugin sharedDevNum: 2 (jleight/homelab)",
			labels: m{"gpu.intel.com/millicores": "2000", "gpu.intel.com/memory.max": "103079215104", "gpu.intel.com/tiles": "2", "gpu.intel.com/gpu-numbers": "0.1"},
			cap:    m{"gpu.intel.com/xe": "4"},
			typ:    inventory.TypeUnknown, vendor: "intel", sharing: inventory.TimeSliced, count: 2, allocN: 4, why: "gpu.intel.com/xe 4 over 2 GPUs (gpu.intel.com/millicores)"},
		{name: "intel-not-shared", source: "labels.md's Max 1550 labels with the plugin's default -shared-dev-num=1",
			labels: m{"gpu.intel.com/device.count": "2", "gpu.intel.com/product": "Max_1550"},
			cap:    m{"gpu.intel.com/i915": "2"},
			typ:    "intel-max-1550-128gb", vendor: "intel", sharing: inventory.Exclusive, count: 2, allocN: 2, why: "gpu.intel.com/product=Max_1550"},
		{name: "gke-a100-time-sharing", source: "cloud.google.com/kubernetes-engine/docs/how-to/timesharing-gpus (gcloud container node-pools create … --accelerator=type=nvidia-tesla-a100,count=1,gpu-sharing-strategy=time-sharing,max-shared-clients-per-gpu=2; nodes labelled cloud.google.com/gke-gpu-sharing-strategy=time-sharing, cloud.google.com/gke-max-shared-clients-per-gpu=2)",
			labels: m{"cloud.google.com/gke-accelerator": "nvidia-tesla-a100", "cloud.google.com/gke-gpu": "true", "cloud.google.com/gke-gpu-sharing-strategy": "time-sharing", "cloud.google.com/gke-max-shared-clients-per-gpu": "2"},
			cap:    m{"nvidia.com/gpu": "2"},
			typ:    "nvidia-a100-40gb", vendor: "nvidia", sharing: inventory.TimeSliced, count: 1, allocN: 2, why: "up to 2 containers a GPU"},
	})
}
