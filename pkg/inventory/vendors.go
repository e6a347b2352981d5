package inventory

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/accelc/accelc/pkg/catalog"
)

// This file reads the accelerators of the vendors past NVIDIA, AMD, Intel,
// Google and AWS, whose device plugins advertise their devices under their
// own domains (VendorPrefixes), and the resources named per device:
//
//   - Huawei's Ascend device plugin offers huawei.com/Ascend910,
//     Ascend310P, Ascend310 (Ascend/ascend-device-plugin); HAMi's offers
//     one resource per chip, huawei.com/Ascend910B3, Ascend910C… with
//     -memory and -core beside it (Project-HAMi/HAMi charts/hami
//     values.yaml, devices.ascend.customresources); Huawei Cloud's CCE
//     offers huawei.com/ascend-1980 for its 910-series nodes.
//   - HAMi's other vendors (the same values.yaml): cambricon.com/vmlu,
//     hygon.com/dcunum, metax-tech.com/sgpu, iluvatar.ai/<chip>-vgpu,
//     mthreads.com/vgpu, enflame.com/drs-gcu, kunlunxin.com/xpu and vxpu,
//     each with memory and core resources that are not device counts;
//     vastaitech.com/va and birentech.com/gpu.
//   - The vendors' own plugins: Iluvatar's offers iluvatar.com/gpu, Biren's
//     birentech.com/gpu and its pre-created partitions birentech.com/1-4-gpu
//     and 1-2-gpu (BirenTechnology/k8s-device-plugin).
//   - Qualcomm's Cloud AI 100 as qualcomm.com/qaic, one per SoC;
//     Tenstorrent's boards as tenstorrent.com/<board> (n150, n300…).
//   - KubeVirt's and Confidential Containers' NVIDIA device plugin names a
//     passed-through GPU by its PCI name (nvidia.com/GH100_H200_141GB,
//     nvidia.com/TU104GL_Tesla_T4) and a vGPU by its type
//     (nvidia.com/GRID_T4-16Q, nvidia.com/NVIDIA_A10-24Q).

// vendorDomains maps a resource domain a vendor's device plugin uses to
// the vendor; VendorPrefixes' other entries are named in VendorOfResource.
var resourceDomains = map[string]string{
	"nvidia.com/": "nvidia", "amd.com/": "amd", "habana.ai/": "intel", "gpu.intel.com/": "intel",
	"huawei.com/": "huawei", "qualcomm.com/": "qualcomm", "cambricon.com/": "cambricon",
	"hygon.com/": "hygon", "metax-tech.com/": "metax", "iluvatar.ai/": "iluvatar",
	"mthreads.com/": "mthreads", "enflame.com/": "enflame", "enflame-tech.com/": "enflame", "kunlunxin.com/": "kunlunxin",
	"tenstorrent.com/": "tenstorrent", "iluvatar.com/": "iluvatar", "birentech.com/": "biren",
	// Kunlunxin's own device plugin offers its XPUs as baidu.com/xpu
	// (kunlunxpu/xpu-device-plugin); the rest of baidu.com is Baidu
	// Cloud's.
	"baidu.com/xpu":   "kunlunxin",
	"vastaitech.com/": "vastai",
}

// vendorOfDomain is the vendor whose domain the resource is under, or "".
func vendorOfDomain(name string) string {
	for d, v := range resourceDomains {
		if strings.HasPrefix(name, d) {
			return v
		}
	}
	return ""
}

// notADeviceCount matches the resources sharing device plugins offer
// beside a device count: memory, cores, a percentage or a priority
// (nvidia.com/gpumem, huawei.com/Ascend910B3-memory, hygon.com/dcucores,
// iluvatar.ai/BI-V150.vMem, cambricon.com/mlu.smlu.vcore).
var notADeviceCount = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)(mem|memory|core|cores|percentage|priority)$`)
})

// vendorDeviceResource is the vendor of a device-count resource under a
// vendor's domain (VendorPrefixes) that VendorOfResource does not name:
// empty for the memory and core resources of sharing plugins.
func vendorDeviceResource(name string) string {
	if _, ok := baiduGPU(name); ok {
		return "nvidia"
	}
	v := vendorOfDomain(name)
	if v == "" {
		return ""
	}
	_, rest, _ := strings.Cut(name, "/")
	if rest == "" || notADeviceCount().MatchString(rest) {
		return ""
	}
	switch v {
	case "nvidia", "amd", "intel":
		// Their usual resources are VendorOfResource's; a name of their
		// domain past those is a device named by its board (KubeVirt).
		if _, ok := perDeviceNVIDIA(name); v == "nvidia" && ok {
			return v
		}
		return ""
	}
	return v
}

// pciChip matches the chip code the PCI name of an NVIDIA GPU starts with
// (GH100, GA100, TU104GL, GV100GL, AD102GL, GB202).
var pciChip = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Z]{2,3}[0-9]{3}[A-Z]*_`) })

// vgpuResource matches a vGPU type as KubeVirt names its resource: a
// board and a profile ending in a letter (GRID_T4-16Q, NVIDIA_A10-24Q).
var vgpuResource = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_]+-[0-9]+[A-Z]$`) })

// perDeviceNVIDIA reads a per-device NVIDIA resource as the product GPU
// Feature Discovery would name ("H200-141GB" of nvidia.com/GH100_H200_141GB,
// "GRID-T4-16Q" of nvidia.com/GRID_T4-16Q); ok is false for every other
// nvidia.com resource.
func perDeviceNVIDIA(name string) (string, bool) {
	rest, ok := strings.CutPrefix(name, "nvidia.com/")
	if !ok || rest == "" {
		return "", false
	}
	switch {
	case pciChip().MatchString(rest):
		rest = pciChip().ReplaceAllString(rest, "")
	case vgpuResource().MatchString(rest):
	default:
		return "", false
	}
	if strings.Contains(strings.ToUpper(rest), "NVSWITCH") {
		// The NVSwitches of an HGX board, passed through beside its GPUs.
		return "", false
	}
	return strings.ReplaceAll(rest, "_", "-"), true
}

// Baidu Cloud's GPU virtualisation (cGPU) offers a node's NVIDIA GPUs under
// a resource named by their model and memory: baidu.com/a800_80g_cgpu,
// v100_32g_cgpu, h20_96g_cgpu, l20_cgpu, rtx_4090_cgpu (Baidu AI Cloud's
// AIHC resource descriptors, as its queues report them per node pool).
var baiduCGPU = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^baidu\.com/([a-z0-9]+(?:_[a-z0-9]+)*)_cgpu$`) })

// baiduGPU reads a Baidu cGPU resource as a product name ("A800-80G" of
// baidu.com/a800_80g_cgpu, "RTX-4090" of baidu.com/rtx_4090_cgpu).
func baiduGPU(name string) (string, bool) {
	m := baiduCGPU().FindStringSubmatch(name)
	if m == nil {
		return "", false
	}
	return strings.ToUpper(strings.ReplaceAll(m[1], "_", "-")), true
}

// resourceDetection types a node by the names of its device resources:
// a catalog class's resourceNames, or an NVIDIA resource named per
// device. It tells the vendor where it finds no class.
func resourceDetection(res resources, capacity map[string]string, cat *catalog.Catalog) (d detection, vgpu bool) {
	names := make([]string, 0, len(capacity))
	for k := range capacity {
		if q, ok := quantity(capacity[k]); ok && q > 0 && (VendorOfResource(k) != "" || vendorDeviceResource(k) != "") {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	for _, k := range names {
		if c, ok := cat.ByResource(k); ok {
			return detection{class: c, why: fmt.Sprintf("type from the resource %s, which only %s's device plugin names", k, c.DisplayName)}, false
		}
	}
	if c, why := mthreadsBySGPU(capacity, cat); c != nil {
		return detection{class: c, why: why}, false
	}
	for _, k := range names {
		product, ok := perDeviceNVIDIA(k)
		if !ok {
			continue
		}
		if v, isVGPU := parseVGPU(product); isVGPU {
			c, why := v.class(cat, "")
			if c != nil {
				return detection{class: c, why: fmt.Sprintf("type from the resource %s, a vGPU type of that board (%s); %s", k, why, v.note(c))}, true
			}
			return detection{vendor: "nvidia", model: v.board, why: fmt.Sprintf("the resource %s is a vGPU type of a board the catalog does not name (%s)", k, why)}, true
		}
		if c, ok := cat.ByLabel(lblProduct, product); ok {
			return detection{class: c, why: fmt.Sprintf("type from the resource %s, the GPU's PCI name (KubeVirt, Confidential Containers)", k)}, false
		}
		if c, why := matchByModel(cat, product, "", lblMemory, false); c != nil {
			return detection{class: c, why: fmt.Sprintf("type from the resource %s, the GPU's PCI name, by %s", k, why)}, false
		}
		return detection{vendor: "nvidia", model: product, why: fmt.Sprintf("the resource %s names a GPU the catalog does not: add %s to a class's identifiedBy %s, or pin the type in cluster.nodes", k, product, lblProduct)}, false
	}
	for _, k := range names {
		product, ok := baiduGPU(k)
		if !ok {
			continue
		}
		if c, why := matchByModel(cat, product, "", lblMemory, false); c != nil {
			return detection{class: c, why: fmt.Sprintf("type from the resource %s, Baidu Cloud's cGPU resource of the GPU, by %s", k, why)}, false
		}
		return detection{vendor: "nvidia", model: product, why: fmt.Sprintf("the resource %s names a GPU the catalog does not (%s): pin the type in cluster.nodes", k, product)}, false
	}
	if res.vendor != "" && res.vendor != otherVendor && res.vendor != "nvidia" && res.vendor != "amd" && res.vendor != "intel" && res.vendor != "google" && res.vendor != "aws" {
		return detection{vendor: res.vendor, model: modelOfResource(res.resource), why: fmt.Sprintf("the resource %s is a %s device the catalog does not name by itself", res.resource, res.vendor)}, false
	}
	return detection{}, false
}

// Moore Threads' sGPU slices each card it is given into 16 core groups
// and its memory into units of 512 MiB, which the node advertises as
// mthreads.com/sgpu-core and sgpu-memory (HAMi's Mthreads MTT S5000
// guide). Its labels name no model, and every model is mthreads.com/gpu,
// but the cards sGPU slices differ by their memory: the sliced cards' say
// which they are.
const (
	mthreadsSGPUCore   = "mthreads.com/sgpu-core"
	mthreadsSGPUMemory = "mthreads.com/sgpu-memory"
	sgpuCoresPerCard   = 16
	sgpuMemoryUnitMiB  = 512
)

// mthreadsBySGPU is the Moore Threads class whose memory is a sliced
// card's, and why; nil when the node slices no card, its memory is not a
// whole number of GiB a card (an overcommit ratio raises it), or not one
// class has that memory.
func mthreadsBySGPU(capacity map[string]string, cat *catalog.Catalog) (*catalog.Class, string) {
	cores, okCores := quantity(capacity[mthreadsSGPUCore])
	mem, okMem := quantity(capacity[mthreadsSGPUMemory])
	if !okCores || !okMem || cores < sgpuCoresPerCard || cores%sgpuCoresPerCard != 0 || mem == 0 {
		return nil, ""
	}
	cards := cores / sgpuCoresPerCard
	if mem%cards != 0 || mem/cards*sgpuMemoryUnitMiB%1024 != 0 {
		return nil, ""
	}
	gib := mem / cards * sgpuMemoryUnitMiB / 1024
	var found *catalog.Class
	for _, c := range cat.Classes() {
		if c.Vendor == "mthreads" && c.MemoryGB == gib {
			if found != nil {
				return nil, ""
			}
			found = c
		}
	}
	if found == nil {
		return nil, ""
	}
	return found, fmt.Sprintf("type from %s=%d over %d cards (%s=%d, %d a card): %d units of %d MiB a card, the %d GiB of the %s; those %d cards are shared by sGPU slices (HAMi's mthreads.com/vgpu), not counted with the whole cards of mthreads.com/gpu",
		mthreadsSGPUMemory, mem, cards, mthreadsSGPUCore, cores, sgpuCoresPerCard, mem/cards, sgpuMemoryUnitMiB, gib, found.DisplayName, cards)
}

// modelOfResource is the chip a per-chip resource names (Ascend910B3 of
// huawei.com/Ascend910B3, BI-V150 of iluvatar.ai/BI-V150-vgpu), or "".
func modelOfResource(name string) string {
	_, rest, _ := strings.Cut(name, "/")
	if notADeviceCount().MatchString(rest) {
		return ""
	}
	if sharing, _ := vendorShare(name); sharing != "" {
		// The model before the share's suffix: mlu370 of
		// cambricon.com/mlu370.share, Ascend910 of huawei.com/Ascend910-4c.
		rest = regexp.MustCompile(`(\.share|\.mim-.*|-[0-9]+c(\..*)?)$`).ReplaceAllString(rest, "")
		switch rest {
		case "sgpu", "shared-gcu", "drs-gcu", "vxpu", "vgcu":
			return ""
		}
		if strings.HasPrefix(rest, "dcu-") || strings.HasSuffix(rest, "-gpu") {
			return ""
		}
	}
	rest = strings.TrimSuffix(strings.TrimSuffix(rest, "-vgpu"), "-1")
	switch strings.ToLower(rest) {
	case "gpu", "vgpu", "sgpu", "npu", "xpu", "vxpu", "dcu", "dcunum", "vmlu", "mlu", "gcu", "gcu-count", "drs-gcu", "shared-gcu", "va", "qaic":
		return ""
	}
	return rest
}

// HAMi's device plugin registers a node's devices in an annotation,
// hami.io/node-<vendor>-register (hami.io/node-nvidia-register,
// hami.io/node-dcu-register, hami.io/node-register-Ascend910B3…): per
// device its id, how many containers may share it (deviceSplitCount, 10
// by default), its memory and cores, its type… as JSON in current
// releases, as "id,count,mem,core,type,numa,health[,index,mode]:" in
// older ones (Project-HAMi/HAMi pkg/device/devices.go, EncodeNodeDevices
// and MarshalNodeDevices). The device plugin then advertises each device
// count times.
const hamiAnnotationPrefix = "hami.io/node-"

// hamiDevice is what accelc reads of one registered device.
type hamiDevice struct {
	Count int    `json:"count"`
	Type  string `json:"type"`
}

// hamiDevices reads the devices a node's HAMi register annotations list,
// and the annotation read; none when it has no such annotation.
func hamiDevices(annotations map[string]string) ([]hamiDevice, string) {
	keys := make([]string, 0, len(annotations))
	for k := range annotations {
		if strings.HasPrefix(k, hamiAnnotationPrefix) && strings.Contains(k, "register") {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := strings.TrimSpace(annotations[k])
		var devs []hamiDevice
		if strings.HasPrefix(v, "[") {
			if json.Unmarshal([]byte(v), &devs) == nil && len(devs) > 0 {
				return devs, k
			}
			continue
		}
		for _, seg := range strings.Split(v, ":") {
			f := strings.Split(seg, ",")
			if len(f) != 7 && len(f) != 9 {
				continue
			}
			n, ok := atoi(f[1])
			if !ok {
				continue
			}
			devs = append(devs, hamiDevice{Count: n, Type: f[4]})
		}
		if len(devs) > 0 {
			return devs, k
		}
	}
	return nil, ""
}

// vendorModelLabels are the labels the vendors' labellers name a node's
// model in: Enflame's GCU Feature Discovery (enflame.com/gcu.model=S60),
// Hygon's DCU-Label-Node, MetaX's operator, Cambricon's labeller
// (Model=MLU370-X8). Where the catalog has no class of the model, the
// node is of type unknown with that model named.
var vendorModelLabels = map[string]string{
	"enflame":   "enflame.com/gcu.model",
	"hygon":     "hygon.com/dcu.name",
	"metax":     "metax-tech.com/gpu.product",
	"cambricon": "Model",
}

// hamiTypeLabels maps the register annotation of a HAMi device plugin
// whose device type names the model to the vendor's prefix on that type
// and the node label that names the model the same way: HAMi's Hygon
// plugin registers "DCU-K100_AI" (the type a pod's hygon.com/use-dcutype
// names, HAMi examples/hygon), Hygon's DCU-Label-Node labels
// hygon.com/dcu.name=K100_AI; its Cambricon plugin registers
// "MLU-MLU370-X4" (HAMi docs/develop/protocol.md), Cambricon's labeller
// labels Model=MLU370-X4.
var hamiTypeLabels = map[string]struct{ prefix, label, vendor string }{
	hamiAnnotationPrefix + "dcu-register": {"DCU-", "hygon.com/dcu.name", "hygon"},
	hamiAnnotationPrefix + "mlu-register": {"MLU-", "Model", "cambricon"},
}

// hamiDetection types a node by the device type HAMi registers for it,
// where that names the model (hamiTypeLabels); it names the model alone
// when the catalog has no class of it.
func hamiDetection(annotations map[string]string, cat *catalog.Catalog) detection {
	devs, key := hamiDevices(annotations)
	t, ok := hamiTypeLabels[key]
	if len(devs) == 0 || !ok {
		return detection{}
	}
	model, ok := strings.CutPrefix(devs[0].Type, t.prefix)
	if !ok || model == "" {
		return detection{}
	}
	for _, d := range devs {
		if d.Type != devs[0].Type {
			return detection{vendor: t.vendor, why: fmt.Sprintf("%s registers devices of more than one type (%s, %s): pin the type in cluster.nodes", key, devs[0].Type, d.Type)}
		}
	}
	if c, ok := cat.ByLabel(t.label, model); ok {
		return detection{class: c, why: fmt.Sprintf("type from %s: devices of type %s, as %s=%s names it", key, devs[0].Type, t.label, model)}
	}
	return detection{vendor: t.vendor, model: model, why: fmt.Sprintf("%s registers devices of type %s, a model the catalog does not name: add a class whose identifiedBy %s lists %s, or pin the type in cluster.nodes", key, devs[0].Type, t.label, model)}
}

// readHAMi reads a node whose devices HAMi shares: each offered count
// times, to containers that each get a share of its memory and cores.
// It returns the device type HAMi names ("NVIDIA-NVIDIA A100-SXM4-40GB"),
// for a node no label types.
func (n *Node) readHAMi(annotations map[string]string) string {
	devs, key := hamiDevices(annotations)
	if len(devs) == 0 {
		return ""
	}
	if split := hamiSplit(devs); split > 1 {
		n.Sharing = TimeSliced
		n.Replicas = split
		n.Count = len(devs)
		n.Notes = append(n.Notes, fmt.Sprintf("shared by HAMi: %s registers %d devices, each offered to up to %d containers (deviceSplitCount), memory and cores split among them", key, len(devs), split))
	}
	return devs[0].Type
}

// hamiSplit is how many containers HAMi lets share each device: the
// fewest any registered device allows.
func hamiSplit(devs []hamiDevice) int {
	if len(devs) == 0 {
		return 0
	}
	split := devs[0].Count
	for _, d := range devs {
		split = min(split, d.Count)
	}
	return split
}

// hamiShares reports whether HAMi shares the node's devices: its register
// annotation lets more than one container use each.
func hamiShares(annotations map[string]string) bool {
	devs, _ := hamiDevices(annotations)
	return hamiSplit(devs) > 1
}

// nodesWithSlices lists per node the drivers of the ResourceSlices it
// publishes that accelc does not read but that are an accelerator
// vendor's (a driver under a vendor's domain: tenstorrent.com,
// neuron.aws.com is not one), sorted.
func nodesWithSlices(all []ResourceSlice) map[string][]string {
	out := map[string][]string{}
	for i := range all {
		s := &all[i]
		if s.Spec.NodeName == "" || IsAcceleratorDriver(s.Spec.Driver) || !vendorDriver(s.Spec.Driver) {
			continue
		}
		if !slices.Contains(out[s.Spec.NodeName], s.Spec.Driver) {
			out[s.Spec.NodeName] = append(out[s.Spec.NodeName], s.Spec.Driver)
			slices.Sort(out[s.Spec.NodeName])
		}
	}
	return out
}

// vendorDriver reports whether a DRA driver's name is under an
// accelerator vendor's domain (gpu.intel.com, tenstorrent.com).
func vendorDriver(driver string) bool {
	for d := range resourceDomains {
		d = strings.TrimSuffix(d, "/")
		if driver == d || strings.HasSuffix(driver, "."+d) {
			return true
		}
	}
	return false
}

// Vendors' plugins that share or cut their devices offer the shares or
// the partitions under a resource of their own, whose count is not of
// devices:
//
//   - Cambricon's plugin offers cambricon.com/<model>.share in its
//     env-share mode, each MLU to several containers, and
//     cambricon.com/<model>.mim-<profile> (mlu370.mim-2m.8gb) for the
//     hardware instances MIM cuts an MLU into
//     (Cambricon/cambricon-k8s-device-plugin device-plugin/README.md);
//   - Hygon's offers pre-created vDCUs as hygon.com/dcu-share-<cu>c-<mem>g
//     (dcu-share-30c-16g) and MIG instances as hygon.com/dcu-mig-2g-15gb
//     (Hygon's DCU Kubernetes deployment guide, standard and MIG modes);
//   - MetaX's offers metax-tech.com/sgpu in sGPU mode, up to 16 software
//     instances of a GPU (MetaX's Kubernetes component guide);
//   - Enflame's gcushare offers enflame.com/shared-gcu and drs-gcu
//     (enflameShare counts them where gcu-count counts the cards), HAMi's
//     Enflame support enflame.com/vgcu with vgcu-percentage (HAMi's
//     device config, enflame resourceCountName);
//   - Biren's offers its SVI partitions as birentech.com/1-4-gpu and
//     1-2-gpu (BirenTechnology/k8s-device-plugin);
//   - Huawei's Ascend plugin offers static vNPUs by template,
//     huawei.com/Ascend910-4c, Ascend310P-2c.1cpu, and CCE's
//     huawei.com/ascend-1980-10c.3cpu.32g (MindX DL's virtual NPU guide;
//     Huawei Cloud CCE's NPU virtualisation);
//   - HAMi's Kunlunxin vXPU offers kunlunxin.com/vxpu, a half or a quarter
//     of an XPU (Project-HAMi/HAMi pkg/device/kunlun).
var vendorShareResources = sync.OnceValue(func() []struct {
	re      *regexp.Regexp
	sharing Sharing
	what    string
} {
	type share = struct {
		re      *regexp.Regexp
		sharing Sharing
		what    string
	}
	return []share{
		{regexp.MustCompile(`^cambricon\.com/[a-z0-9-]+\.share$`), TimeSliced, "Cambricon's env-share offers each MLU to several containers"},
		{regexp.MustCompile(`^cambricon\.com/[a-z0-9-]+\.mim-`), Partitioned, "Cambricon's MIM instances, hardware partitions of an MLU"},
		{regexp.MustCompile(`^hygon\.com/dcu-share-`), Partitioned, "Hygon's pre-created vDCUs, partitions of a DCU's compute units and memory"},
		{regexp.MustCompile(`^hygon\.com/dcu-mig-`), Partitioned, "Hygon's MIG instances of a DCU"},
		{regexp.MustCompile(`^metax-tech\.com/sgpu$`), TimeSliced, "MetaX's sGPU instances, up to 16 software shares of a GPU"},
		{regexp.MustCompile(`^enflame\.com/shared-gcu$`), TimeSliced, "shares of Enflame GCUs' memory (gcushare)"},
		{regexp.MustCompile(`^enflame\.com/drs-gcu$`), Partitioned, "Enflame's DRS instances, hard partitions of a GCU"},
		{regexp.MustCompile(`^enflame\.com/vgcu$`), TimeSliced, "HAMi's vGCUs, percentage shares of an Enflame GCU"},
		{regexp.MustCompile(`^birentech\.com/[0-9]+-[0-9]+-gpu$`), Partitioned, "Biren's SVI partitions of a GPU"},
		{regexp.MustCompile(`^huawei\.com/[A-Za-z0-9-]+-[0-9]+c(\.[A-Za-z0-9]+)*$`), Partitioned, "Ascend virtual NPUs, each a template's share of an NPU's AI cores and memory"},
		{regexp.MustCompile(`^kunlunxin\.com/vxpu$`), Partitioned, "HAMi's vXPUs, halves or quarters of a Kunlunxin XPU"},
	}
})

// vendorShare is how a vendor's resource shares the devices it offers,
// and what its count is; "" for a resource of whole devices.
func vendorShare(name string) (Sharing, string) {
	for _, s := range vendorShareResources() {
		if s.re.MatchString(name) {
			return s.sharing, s.what
		}
	}
	return "", ""
}

// A node may offer its devices only as cores and memory a pod asks a
// share of: Moore Threads' sGPU (mthreads.com/sgpu-core, 16 a card, and
// sgpu-memory) on a node whose every card it slices, Ascend's dynamic vNPUs
// (huawei.com/npu-core, Ascend/ascend-device-plugin's virtual-device
// resource). Such a node is an accelerator node all the same.
const resAscendNPUCore = "huawei.com/npu-core"

// readVendorShares reads the sharing a vendor's share or partition
// resources state (vendorShare), or a node that offers only cores and
// memory: its devices are not the resource's count.
func (n *Node) readVendorShares(res resources) {
	if len(res.shares) > 0 {
		names := slices.Sorted(maps.Keys(res.shares))
		sharing, what := vendorShare(names[0])
		var list []string
		for _, k := range names {
			list = append(list, fmt.Sprintf("%s %d", k, res.shares[k]))
		}
		n.Sharing = sharing
		n.Count = res.whole
		note := fmt.Sprintf("%s from capacity %s: %s; ", sharing, strings.Join(list, ", "), what)
		if res.whole > 0 {
			note += fmt.Sprintf("the %d whole devices beside them are counted, not the devices they are cut from", res.whole)
		} else {
			note += "the devices they are cut from are not counted"
		}
		n.Notes = append(n.Notes, note)
		return
	}
	if res.cores == "" || res.capacity > 0 {
		return
	}
	q := res.coresQty
	switch {
	case res.cores == mthreadsSGPUCore:
		n.Sharing = TimeSliced
		if q%sgpuCoresPerCard == 0 {
			n.Count = q / sgpuCoresPerCard
		}
		n.Notes = append(n.Notes, fmt.Sprintf("time-sliced: every card is sliced by Moore Threads' sGPU, offered as %s %d (%d a card: %d cards) and %s; a pod asks a share of both", mthreadsSGPUCore, q, sgpuCoresPerCard, n.Count, mthreadsSGPUMemory))
	case res.cores == resAscendNPUCore:
		n.Sharing = Partitioned
		n.Notes = append(n.Notes, fmt.Sprintf("partitioned: Ascend's dynamic virtual NPUs, offered as %s %d AI cores a pod asks some of; the NPUs are not counted", resAscendNPUCore, q))
	default:
		n.Sharing = TimeSliced
		n.Notes = append(n.Notes, fmt.Sprintf("time-sliced: the node offers its devices only as %s %d, a share a pod asks of a device; the devices are not counted", res.cores, q))
	}
}
