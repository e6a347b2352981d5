package nvml

// A node object from an NVML report: the labels and capacity GPU Feature
// Discovery would give it.

import (
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Resource and label names of the NVIDIA device plugin and GPU Feature
// Discovery (docs/hardware.md, NVIDIA's labels and resources).
const (
	resGPU    = "nvidia.com/gpu"
	migPrefix = "nvidia.com/mig-"

	lblProduct         = "nvidia.com/gpu.product"
	lblCount           = "nvidia.com/gpu.count"
	lblMemory          = "nvidia.com/gpu.memory"
	lblFamily          = "nvidia.com/gpu.family"
	lblComputeMajor    = "nvidia.com/gpu.compute.major"
	lblComputeMinor    = "nvidia.com/gpu.compute.minor"
	lblReplicas        = "nvidia.com/gpu.replicas"
	lblSharingStrategy = "nvidia.com/gpu.sharing-strategy"
	lblMIGCapable      = "nvidia.com/mig.capable"
	lblMIGStrategy     = "nvidia.com/mig.strategy"
)

// Node is the part of a v1 Node that a report stands for: what the
// device plugin and GPU Feature Discovery would put on the node.
type Node struct {
	APIVersion string     `json:"apiVersion"`
	Kind       string     `json:"kind"`
	Metadata   NodeMeta   `json:"metadata"`
	Status     NodeStatus `json:"status"`
}

// NodeMeta is a Node's metadata.
type NodeMeta struct {
	Name   string            `json:"name"`
	Labels map[string]string `json:"labels,omitempty"`
}

// NodeStatus is a Node's extended-resource capacity and allocatable.
type NodeStatus struct {
	Capacity    map[string]string `json:"capacity,omitempty"`
	Allocatable map[string]string `json:"allocatable,omitempty"`
}

// NodeObject returns the v1 Node the report stands for: the node name,
// Labels and Capacity (allocatable is the capacity: the report cannot
// know what kubelet reserves).
func (r *Report) NodeObject() *Node {
	capacity := r.Capacity()
	return &Node{
		APIVersion: "v1",
		Kind:       "Node",
		Metadata:   NodeMeta{Name: r.Node, Labels: r.Labels()},
		Status:     NodeStatus{Capacity: capacity, Allocatable: maps.Clone(capacity)},
	}
}

// Labels returns the node labels GPU Feature Discovery writes for the
// report's GPUs: product (sanitised as GFD does, "NVIDIA A100-SXM4-40GB"
// → "NVIDIA-A100-SXM4-40GB"), count, memory in MiB, family and compute
// capability, replicas and sharing strategy of an unshared node, MIG
// capability, the driver and CUDA version labels (old and new forms), and
// with MIG enabled on any GPU the mixed strategy's per-profile labels
// (nvidia.com/mig-<profile>.count and .product). GFD labels a node with
// one product; on a node with several models the labels describe the
// model most of its GPUs are. A report without GPUs has no labels.
//
// Labels GFD reads from outside NVML (gpu.machine, gfd.timestamp, the
// sharing configuration) are left out.
func (r *Report) Labels() map[string]string {
	if len(r.GPUs) == 0 {
		return nil
	}
	labels := map[string]string{}
	r.addGPULabels(labels)
	r.addMIGLabels(labels)
	r.addVersionLabels(labels)
	return labels
}

// Capacity returns the extended resources the device plugin advertises
// under the MIG mixed strategy: nvidia.com/gpu for the GPUs without MIG,
// nvidia.com/mig-<profile> for MIG devices.
func (r *Report) Capacity() map[string]string {
	capacity := map[string]string{}
	full := 0
	for i := range r.GPUs {
		if !r.GPUs[i].MIG.Enabled() {
			full++
		}
	}
	if full > 0 {
		capacity[resGPU] = strconv.Itoa(full)
	}
	for profile, t := range r.migTotals() {
		capacity[migPrefix+profile] = strconv.Itoa(t.count)
	}
	return capacity
}

func (r *Report) addGPULabels(labels map[string]string) {
	g, count := r.mainProduct()
	labels[lblProduct] = sanitize(g.Product)
	labels[lblCount] = strconv.Itoa(count)
	labels[lblMemory] = strconv.FormatUint(g.MemoryMiB, 10)
	major, minor, ccKnown := parseComputeCapability(g.ComputeCapability)
	if ccKnown {
		labels[lblComputeMajor] = strconv.Itoa(major)
		labels[lblComputeMinor] = strconv.Itoa(minor)
	}
	if family := gpuFamily(g, major, minor, ccKnown); family != "" {
		labels[lblFamily] = family
	}
	// GFD labels MIG-enabled GPUs without sharing (replicas 0), unless a
	// GPU of the same product runs without MIG.
	replicas := "0"
	for i := range r.GPUs {
		if r.GPUs[i].Product == g.Product && !r.GPUs[i].MIG.Enabled() {
			replicas = "1"
		}
	}
	labels[lblReplicas] = replicas
	labels[lblSharingStrategy] = "none"
}

// mainProduct returns the first GPU of the product most GPUs are (the
// product seen first wins a tie) and how many GPUs are of that product.
func (r *Report) mainProduct() (*GPU, int) {
	counts := map[string]int{}
	for i := range r.GPUs {
		counts[r.GPUs[i].Product]++
	}
	best := 0
	for i := range r.GPUs {
		if counts[r.GPUs[i].Product] > counts[r.GPUs[best].Product] {
			best = i
		}
	}
	return &r.GPUs[best], counts[r.GPUs[best].Product]
}

func (r *Report) addMIGLabels(labels map[string]string) {
	capable, enabled := false, false
	for i := range r.GPUs {
		capable = capable || r.GPUs[i].MIG != nil
		enabled = enabled || r.GPUs[i].MIG.Enabled()
	}
	labels[lblMIGCapable] = strconv.FormatBool(capable)
	if !enabled {
		return
	}
	labels[lblMIGStrategy] = "mixed"
	for profile, t := range r.migTotals() {
		labels[migPrefix+profile+".count"] = strconv.Itoa(t.count)
		labels[migPrefix+profile+".product"] = sanitize(t.parent) + "-MIG-" + sanitize(profile)
	}
}

// migTotal is one MIG profile's devices across the node.
type migTotal struct {
	count  int
	parent string // the product of the first GPU with the profile
}

// migTotals sums MIG devices by profile over the GPUs with MIG enabled.
func (r *Report) migTotals() map[string]migTotal {
	totals := map[string]migTotal{}
	for i := range r.GPUs {
		g := &r.GPUs[i]
		if !g.MIG.Enabled() {
			continue
		}
		for _, profile := range slices.Sorted(maps.Keys(g.MIG.Devices)) {
			t, seen := totals[profile]
			if !seen {
				t.parent = g.Product
			}
			t.count += g.MIG.Devices[profile]
			totals[profile] = t
		}
	}
	return totals
}

// addVersionLabels writes GFD's driver and CUDA labels, in the
// deprecated forms (cuda.driver.*, cuda.runtime.*) that older selectors
// use and the current ones (cuda.driver-version.*, cuda.runtime-version.*).
func (r *Report) addVersionLabels(labels map[string]string) {
	if parts := strings.Split(r.DriverVersion, "."); len(parts) == 2 || len(parts) == 3 {
		rev := ""
		if len(parts) == 3 {
			rev = parts[2]
		}
		labels["nvidia.com/cuda.driver.major"] = parts[0]
		labels["nvidia.com/cuda.driver.minor"] = parts[1]
		labels["nvidia.com/cuda.driver.rev"] = rev
		labels["nvidia.com/cuda.driver-version.major"] = parts[0]
		labels["nvidia.com/cuda.driver-version.minor"] = parts[1]
		labels["nvidia.com/cuda.driver-version.revision"] = rev
		labels["nvidia.com/cuda.driver-version.full"] = r.DriverVersion
	}
	if major, minor, ok := strings.Cut(r.CUDAVersion, "."); ok {
		labels["nvidia.com/cuda.runtime.major"] = major
		labels["nvidia.com/cuda.runtime.minor"] = minor
		labels["nvidia.com/cuda.runtime-version.major"] = major
		labels["nvidia.com/cuda.runtime-version.minor"] = minor
		labels["nvidia.com/cuda.runtime-version.full"] = r.CUDAVersion
	}
}

// sanitize turns an NVML name into a label value the way GFD does: it
// drops every character but letters, digits, '-', '_', '.' and spaces,
// and joins the words with '-'.
func sanitize(s string) string {
	kept := strings.Map(func(c rune) rune {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9',
			c == '-', c == '_', c == '.', c == ' ':
			return c
		}
		return -1
	}, s)
	return strings.Join(strings.Fields(kept), "-")
}

// parseComputeCapability splits "8.0" into 8 and 0.
func parseComputeCapability(cc string) (major, minor int, ok bool) {
	ma, mi, found := strings.Cut(cc, ".")
	if !found {
		return 0, 0, false
	}
	major, errMa := strconv.Atoi(ma)
	minor, errMi := strconv.Atoi(mi)
	return major, minor, errMa == nil && errMi == nil && major > 0
}

// gpuFamily is GFD's nvidia.com/gpu.family: the architecture family of a
// compute capability; without one, the architecture NVML names. It is
// empty when neither is known (GFD writes "undefined"; accelc leaves the
// label out).
func gpuFamily(g *GPU, major, minor int, ccKnown bool) string {
	if ccKnown {
		return familyOfComputeCapability(major, minor)
	}
	return strings.ReplaceAll(strings.ToLower(g.Architecture), " ", "-")
}

func familyOfComputeCapability(major, minor int) string {
	switch major {
	case 1:
		return "tesla"
	case 2:
		return "fermi"
	case 3:
		return "kepler"
	case 5:
		return "maxwell"
	case 6:
		return "pascal"
	case 7:
		if minor < 5 {
			return "volta"
		}
		return "turing"
	case 8:
		if minor == 9 {
			return "ada-lovelace"
		}
		return "ampere"
	case 9:
		return "hopper"
	case 10, 12:
		return "blackwell"
	case 13:
		return "rubin"
	}
	return ""
}
