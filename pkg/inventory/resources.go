package inventory

// Accelerator resources: which extended resources are accelerators, of
// which vendor, and how many devices a node's say it has.

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/accelc/accelc/pkg/catalog"
)

// VendorPrefixes are the domains of GPU and accelerator vendors' device
// plugins, and the prefixes of Google's TPU and AWS's Neuron resources:
// every extended resource under one of them is an accelerator, whatever
// its name (nvidia.com/GH100_H200_141GB, as
// Confidential Containers and KubeVirt advertise a whole GPU;
// huawei.com/Ascend910; qualcomm.com/qaic). accelc's policies hold them
// all as accelerator resources.
var VendorPrefixes = []string{
	"nvidia.com/", "amd.com/", "habana.ai/", "gpu.intel.com/", "huawei.com/",
	"qualcomm.com/", "cambricon.com/", "hygon.com/", "metax-tech.com/", "iluvatar.ai/",
	"mthreads.com/", "enflame.com/", "enflame-tech.com/", "kunlunxin.com/", "tenstorrent.com/", "xilinx.com/",
	"iluvatar.com/", "birentech.com/", "vastaitech.com/", "baidu.com/xpu", "google.com/tpu", "cloud-tpus.google.com/", "aws.amazon.com/neuron",
}

// VendorResource reports whether the resource is a known accelerator's:
// one VendorOfResource names, or under one of VendorPrefixes.
func VendorResource(name string) bool {
	if VendorOfResource(name) != "" {
		return true
	}
	for _, d := range VendorPrefixes {
		if strings.HasPrefix(name, d) {
			return true
		}
	}
	return false
}

// ExtendedResource reports whether a node resource is an extended
// resource, one a device plugin or an admin advertises, rather than one of
// Kubernetes' own: cpu, memory, pods, ephemeral-storage, hugepages-…,
// attachable-volumes-… and every other name without a domain, and every
// name under kubernetes.io (as Kubernetes' IsNativeResource has it). The
// legacy alpha.kubernetes.io/nvidia-gpu is a GPU all the same.
func ExtendedResource(name string) bool {
	if VendorOfResource(name) != "" {
		return true
	}
	return strings.Contains(name, "/") && !strings.Contains(name, "kubernetes.io/")
}

// advertised maps each extended resource the nodes list in their capacity
// or allocatable to the nodes that list it, sorted; nil for none.
func advertised(raw []RawNode) map[string][]string {
	var out map[string][]string
	for i := range raw {
		n := &raw[i]
		names := map[string]bool{}
		for k := range n.Status.Capacity {
			names[k] = true
		}
		for k := range n.Status.Allocatable {
			names[k] = true
		}
		for _, k := range slices.Sorted(maps.Keys(names)) {
			if !ExtendedResource(k) {
				continue
			}
			if out == nil {
				out = map[string][]string{}
			}
			out[k] = append(out[k], n.Metadata.Name)
		}
	}
	for _, nodes := range out {
		slices.Sort(nodes)
	}
	return out
}

// Resource names that mean "this node has accelerators".
const (
	resNVIDIA       = "nvidia.com/gpu"
	resNVIDIAShared = "nvidia.com/gpu.shared"
	resNVIDIAMIG    = "nvidia.com/mig-"
	resNVIDIALegacy = "alpha.kubernetes.io/nvidia-gpu"
	resAMD          = "amd.com/gpu"
	resGaudi        = "habana.ai/gaudi"
	// Intel's GPU device plugin: i915 and the newer xe kernel driver.
	resIntelI915 = "gpu.intel.com/i915"
	resIntelXe   = "gpu.intel.com/xe"
)

// VendorOfResource maps an accelerator's extended resource to its vendor;
// it is empty for every other resource.
func VendorOfResource(name string) string {
	switch {
	case name == resNVIDIA, name == resNVIDIAShared, name == resNVIDIALegacy, strings.HasPrefix(name, resNVIDIAMIG):
		return "nvidia"
	case name == resAMD, amdPartitionResource(name) != "":
		return "amd"
	case name == resGaudi, name == resIntelI915, name == resIntelXe:
		return "intel"
	case name == resTPU:
		return "google"
	case name == resNeuron, name == resNeuronDevice, name == resNeuronCore:
		return "aws"
	}
	return ""
}

// GPU Feature Discovery labels.
const (
	lblProduct  = catalog.LabelGFDProduct
	lblCount    = "nvidia.com/gpu.count"
	lblMemory   = "nvidia.com/gpu.memory"
	lblReplicas = "nvidia.com/gpu.replicas"
	lblStrategy = "nvidia.com/gpu.sharing-strategy"
)

// migMixedCounts reads the per-profile nvidia.com/mig-<profile>.count
// labels GFD writes under the MIG mixed strategy.
func migMixedCounts(labels map[string]string) map[string]int {
	var out map[string]int
	for k, v := range labels {
		rest, ok := strings.CutPrefix(k, "nvidia.com/mig-")
		if !ok {
			continue
		}
		profile, ok := strings.CutSuffix(rest, ".count")
		if !ok || profile == "" {
			continue
		}
		if c, ok := atoi(v); ok {
			if out == nil {
				out = map[string]int{}
			}
			out[profile] = c
		}
	}
	return out
}

// gbInProduct finds a memory size written in a product name: "80GB".
var gbInProduct = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)(?:^|-)(\d+)GB?(?:-|$)`) })

type resources struct {
	vendor      string
	capacity    int    // sum of accelerator resources in capacity
	allocatable int    // likewise in allocatable; -1 when the node has none listed
	shared      int    // nvidia.com/gpu.shared capacity
	whole       int    // capacity of whole devices: neither MIG slices nor shared replicas
	resource    string // the accelerator resource with the most capacity
	resourceQty int
	migCapacity map[string]int
	// partitions is the capacity of AMD partition resources per mode
	// (amd.com/cpx_nps4 under the device plugin's mixed naming).
	partitions map[string]int
	// gcuShares is the most shares of Enflame's GCUs the node offers
	// (enflameShare): in capacity, and in allocatable (-1: none listed).
	gcuShares, gcuSharesAlloc int
	// shares is the capacity of a vendor's share or partition resources
	// (vendorShare: cambricon.com/mlu370.share, hygon.com/dcu-mig-2g-15gb),
	// counted in capacity but not in whole.
	shares map[string]int
	// cores is, on a node with no device count, a vendor's resource of
	// cores or memory it offers (mthreads.com/sgpu-core,
	// huawei.com/npu-core), and coresQty its capacity.
	cores    string
	coresQty int
	// gpuShare is the GPU sharing scheme whose resources the node
	// offers (gpushare.go): they are not device counts.
	gpuShare *gpuShare
	// gpuShares are its share resources with some capacity, "name qty".
	gpuShares []string
	// bad lists the accelerator quantities that are not device counts
	// ("capacity nvidia.com/gpu \"abc\""): the node's counts are not
	// trusted.
	bad []string
}

// otherVendor stands for the vendor of an extended resource no vendor's
// domain names and that cluster.nonAcceleratorResources does not declare:
// a device all the same, of a vendor accelc does not know.
const otherVendor = "other"

// deviceVendor is the vendor of a device-count resource: the known
// accelerators', a vendor domain's, or otherVendor for any other extended
// resource not declared a non-accelerator; "" for the rest.
func deviceVendor(name string, nonAccel func(string) bool) string {
	if v := VendorOfResource(name); v != "" {
		return v
	}
	if v := vendorDeviceResource(name); v != "" {
		return v
	}
	if ExtendedResource(name) && vendorOfDomain(name) == "" && !nonAccel(name) && !notADeviceCount().MatchString(name) {
		return otherVendor
	}
	return ""
}

func readResources(n *RawNode, nonAccel func(string) bool) resources {
	r := resources{allocatable: -1, gcuSharesAlloc: -1}
	keys := slices.Sorted(maps.Keys(n.Status.Capacity))
	var share *gpuShare
	for _, k := range keys {
		if s := gpuShareOf(k); s != nil {
			share = s
			continue
		}
		v := deviceVendor(k, nonAccel)
		if v == "" || neuronAlias(k, n.Status.Capacity) {
			continue
		}
		r.addCapacity(k, v, n.Status.Capacity)
	}
	if r.vendor == "" {
		r.readCores(n.Status.Capacity, keys)
	}
	if n.Status.Allocatable != nil {
		r.readAllocatable(n.Status.Allocatable, nonAccel)
	}
	if share != nil {
		r.readGPUShare(share, n.Status.Capacity, n.Status.Allocatable)
	}
	return r
}

// addCapacity counts one device resource k of vendor v: as the node's
// largest, and by what it offers (whole devices, time-sliced replicas,
// MIG slices, AMD partitions, a vendor's shares, Enflame's GCU shares).
func (r *resources) addCapacity(k, v string, capacity map[string]string) {
	q, gcuShares := r.deviceQuantity("capacity", k, capacity)
	if gcuShares {
		r.gcuShares = max(r.gcuShares, q)
		return
	}
	if q > 0 && r.vendor == "" {
		r.vendor = v
	}
	r.capacity += q
	if q > r.resourceQty {
		r.resource, r.resourceQty = k, q
	}
	count := func(m *map[string]int, key string) {
		if q > 0 {
			if *m == nil {
				*m = map[string]int{}
			}
			(*m)[key] = q
		}
	}
	switch {
	case k == resNVIDIAShared:
		r.shared = q
	case strings.HasPrefix(k, resNVIDIAMIG):
		count(&r.migCapacity, strings.TrimPrefix(k, resNVIDIAMIG))
	case amdPartitionResource(k) != "":
		count(&r.partitions, amdPartitionResource(k))
	case vendorShareOf(k):
		count(&r.shares, k)
	default:
		r.whole += q
	}
}

// deviceQuantity is device resource k's count in m (the node's capacity
// or allocatable, what), a count it cannot read noted as bad, and whether
// k is an Enflame GCU's shares rather than devices.
func (r *resources) deviceQuantity(what, k string, m map[string]string) (q int, gcuShares bool) {
	q, ok := quantity(m[k])
	if !ok {
		r.bad = append(r.bad, fmt.Sprintf("%s %s %q", what, k, m[k]))
	}
	return q, enflameShare(k, m)
}

// readAllocatable counts the devices pods may get: the allocatable
// device resources, Enflame's GCU shares in place of the cards gcu-count
// counts.
func (r *resources) readAllocatable(alloc map[string]string, nonAccel func(string) bool) {
	r.allocatable = 0
	for _, k := range slices.Sorted(maps.Keys(alloc)) {
		if deviceVendor(k, nonAccel) == "" || gpuShareOf(k) != nil || neuronAlias(k, alloc) {
			continue
		}
		q, gcuShares := r.deviceQuantity("allocatable", k, alloc)
		if gcuShares {
			r.gcuSharesAlloc = max(r.gcuSharesAlloc, q)
			continue
		}
		r.allocatable += q
	}
	if r.gcuSharesAlloc >= 0 {
		// Pods get the GCUs' shares, not the cards gcu-count counts.
		if q, ok := quantity(alloc[resEnflameCount]); ok {
			r.allocatable += r.gcuSharesAlloc - q
		}
	}
}

// vendorShareOf reports whether a resource offers shares or partitions
// of a vendor's devices (vendorShare).
func vendorShareOf(name string) bool {
	s, _ := vendorShare(name)
	return s != ""
}

// readCores finds, on a node no device count names, a vendor's resource
// of cores (or, failing one, of memory) with some capacity: the node's
// devices are offered only as shares of them.
func (r *resources) readCores(capacity map[string]string, keys []string) {
	for _, suffix := range []string{"core", "cores", "mem", "memory"} {
		for _, k := range keys {
			v := vendorOfDomain(k)
			if v == "" || !strings.HasSuffix(strings.ToLower(k), suffix) {
				continue
			}
			if q, ok := quantity(capacity[k]); ok && q > 0 {
				r.vendor, r.cores, r.coresQty = v, k, q
				r.resource = k
				return
			}
		}
	}
}

// Enflame's gcushare device plugin offers a node's GCUs three ways at
// once: enflame.com/gcu-count counts the cards, enflame.com/shared-gcu
// offers shares of their memory and enflame.com/drs-gcu their DRS
// instances, hard partitions like MIG's (HAMi pkg/device/enflame:
// CountNoSharedName, SharedResourceName, the DRS resource; a node with one
// S60 reports gcu-count 1, shared-gcu 6 and drs-gcu 6). Summed they would
// count one card thirteen times.
const (
	resEnflameCount  = "enflame.com/gcu-count"
	resEnflameShared = "enflame.com/shared-gcu"
	resEnflameDRS    = "enflame.com/drs-gcu"
)

// enflameShare reports whether a resource offers shares of the GCUs
// enflame.com/gcu-count counts on the same node.
func enflameShare(name string, list map[string]string) bool {
	if name != resEnflameShared && name != resEnflameDRS {
		return false
	}
	_, counted := list[resEnflameCount]
	return counted
}

// neuronAlias reports whether a Neuron resource counts again what another
// of the node's resources counts: cores (aws.amazon.com/neuroncore) or the
// older device name (aws.amazon.com/neurondevice) beside the devices of
// aws.amazon.com/neuron. Summing them would count each device two or
// three times; a node that offers only cores counts its cores.
func neuronAlias(name string, list map[string]string) bool {
	switch name {
	case resNeuronDevice:
		_, ok := list[resNeuron]
		return ok
	case resNeuronCore:
		_, dev := list[resNeuron]
		_, old := list[resNeuronDevice]
		return dev || old
	}
	return false
}

// MaxDevices bounds a device count read from a node, so that a corrupt
// quantity cannot overflow the sums of the summary.
const MaxDevices = 1 << 20

// quantity reads a device count: a Kubernetes quantity that is a whole
// number from 0 to MaxDevices. Anything else ("abc", "-8", "", "NaN",
// "1e18", "1.5") is 0 and not ok.
func quantity(s string) (int, bool) {
	q, err := resource.ParseQuantity(s)
	if err != nil || q.Sign() < 0 || q.Cmp(*resource.NewQuantity(MaxDevices, resource.DecimalSI)) > 0 {
		return 0, false
	}
	if q.MilliValue()%1000 != 0 {
		return 0, false
	}
	return int(q.Value()), true
}

func atoi(s string) (int, bool) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 0 || n > MaxDevices {
		return 0, false
	}
	return n, true
}

// classified is what classifyNode makes of one raw node.
