package inventory

import (
	"maps"
	"slices"
	"strings"
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
	"mthreads.com/", "enflame.com/", "kunlunxin.com/", "tenstorrent.com/", "xilinx.com/",
	"google.com/tpu", "cloud-tpus.google.com/", "aws.amazon.com/neuron",
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
