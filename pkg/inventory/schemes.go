package inventory

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/accelc/accelc/pkg/catalog"
)

// This file reads the labelling schemes other than GPU Feature Discovery's:
// the ROCm node labeller (current and legacy), GKE's TPU labels and Neuron
// instance families (tpuneuron.go), Karpenter's instance labels,
// Node Feature Discovery's PCI labels, and whatever label keys the catalog's
// identifiedBy names (GKE's accelerator label, cloud instance types).

// detection is what one scheme found on a node.
type detection struct {
	class *catalog.Class
	// types is set instead of class for a node whose devices are of more
	// than one class (class id → devices).
	types map[string]int
	// count is the device count the scheme states, 0 when it states none.
	count int
	// vendor is set when the scheme names the vendor but no class.
	vendor string
	// model is the model a scheme accelc does not read names, if any.
	model string
	// why says which label decided, or why nothing did.
	why string
}

func (d detection) found() bool { return d.class != nil || len(d.types) > 0 }

// labelPriority orders the catalog label keys consulted after GPU Feature
// Discovery's product: the richest first. Instance types come last: they
// name the machine, not the device.
var labelPriority = []string{
	"cloud.google.com/gke-accelerator",
}

// schemes are the detectors in order of trust.
var schemes = []func(map[string]string, *catalog.Catalog) detection{
	detectAMD, detectTPU, detectCatalogKeys(labelPriority), detectKarpenter, detectAlibaba, detectNFDPCI,
	detectIntelGPU, detectCatalogKeys(nil), detectSageMaker, detectNeuron, detectEKSAccelerator,
}

// SageMaker HyperPod's EKS nodes carry the cluster's instance group type
// as node.kubernetes.io/instance-type: the EC2 instance type with "ml."
// before it (ml.p5.48xlarge, ml.g5.8xlarge, ml.trn1.32xlarge: the
// awsome-distributed-training HyperPod EKS examples select them so). The
// EC2 type types the node as it would an EKS node.
func detectSageMaker(labels map[string]string, cat *catalog.Catalog) detection {
	key := lblInstanceType
	it := strings.TrimSpace(labels[key])
	if it == "" {
		key = lblInstanceTypeBeta
		it = strings.TrimSpace(labels[key])
	}
	ec2, ok := strings.CutPrefix(it, "ml.")
	if !ok || ec2 == "" {
		return detection{}
	}
	if c, ok := cat.ByLabel(lblInstanceType, ec2); ok {
		return detection{class: c, why: fmt.Sprintf("type from %s=%s, SageMaker HyperPod's name for the EC2 instance type %s", key, it, ec2)}
	}
	d := detectNeuron(map[string]string{lblInstanceType: ec2}, cat)
	if d.why != "" {
		d.why = fmt.Sprintf("SageMaker HyperPod's %s=%s: %s", key, it, d.why)
	}
	return d
}

// detectByLabels runs the schemes in order of trust and returns the first
// that names a class. When none does, it returns the most telling miss,
// with what labels of schemes accelc does not read say of the vendor,
// model and count where the miss does not.
func detectByLabels(labels map[string]string, cat *catalog.Catalog) detection {
	var miss detection
	for _, scheme := range schemes {
		d := scheme(labels, cat)
		if d.found() {
			return d
		}
		if miss.why == "" && d.why != "" {
			miss = d
		}
	}
	h := detectHints(labels, cat)
	switch {
	case h.why == "":
	case miss.why == "":
		miss = h
	default:
		if miss.vendor == "" {
			miss.vendor = h.vendor
		}
		if miss.model == "" {
			miss.model = h.model
		}
		if miss.count == 0 {
			miss.count = h.count
		}
	}
	return miss
}

// countLabels are, per catalog label key, the label that gives the node's
// device count beside it.
var countLabels = map[string]string{
	"karpenter.k8s.aws/instance-accelerator-name": lblKarpenterAccelCount,
}

// detectCatalogKeys looks label values up in the catalog's identifiedBy:
// the keys given, or, with none, every key the catalog knows.
func detectCatalogKeys(keys []string) func(map[string]string, *catalog.Catalog) detection {
	return func(labels map[string]string, cat *catalog.Catalog) detection {
		ks := keys
		if ks == nil {
			ks = cat.LabelKeys()
		}
		for _, k := range ks {
			v, ok := labels[k]
			if !ok || v == "" {
				continue
			}
			if c, ok := cat.ByLabel(k, v); ok {
				count, _ := atoi(labels[countLabels[k]])
				return detection{class: c, count: count, why: fmt.Sprintf("type from %s=%s", k, v)}
			}
		}
		return detection{}
	}
}

// AMD's ROCm node labeller. It writes amd.com/gpu.<name>=<value> when every
// device of the node agrees, and amd.com/gpu.<name>.<value>=<count> per
// value when they do not; its legacy beta.amd.com/gpu.* labels carry the
// value in the key the same way.
const (
	amdPrefix     = "amd.com/gpu."
	amdBetaPrefix = "beta.amd.com/gpu."
)

func detectAMD(labels map[string]string, cat *catalog.Catalog) detection {
	var miss detection
	for _, name := range []string{"product-name", "device-id"} {
		key := amdPrefix + name
		for _, prefix := range []string{amdPrefix, amdBetaPrefix} {
			if v := labels[prefix+name]; v != "" {
				if c, ok := cat.ByLabel(key, v); ok {
					return detection{class: c, count: amdDevices(labels), why: fmt.Sprintf("type from %s%s=%s", prefix, name, v)}
				}
				if miss.why == "" {
					miss = detection{vendor: "amd", why: fmt.Sprintf("%s%s=%s is not in the catalog", prefix, name, v)}
				}
			}
			if d, ok := amdValueKeyed(labels, prefix+name+".", key, cat); ok {
				if d.found() {
					return d
				}
				if miss.why == "" {
					miss = d
				}
			}
		}
	}
	return miss
}

// amdDevices counts a node's GPUs from the labeller's value-keyed labels
// (beta.amd.com/gpu.device-id.74b5=8): 0 when it wrote none.
func amdDevices(labels map[string]string) int {
	for _, prefix := range []string{amdPrefix, amdBetaPrefix} {
		total := 0
		for k, v := range labels {
			if rest, ok := strings.CutPrefix(k, prefix+"device-id."); ok && rest != "" {
				if n, ok := atoi(v); ok {
					total += n
				}
			}
		}
		if total > 0 {
			return total
		}
	}
	return 0
}

// amdValueKeyed reads <prefix><value>=<count> labels. ok is false when the
// node has none.
func amdValueKeyed(labels map[string]string, prefix, catalogKey string, cat *catalog.Catalog) (detection, bool) {
	counts := map[string]int{} // class id → devices
	var unknown []string
	for k, v := range labels {
		value, ok := strings.CutPrefix(k, prefix)
		if !ok || value == "" || strings.Contains(value, "/") {
			continue
		}
		n, ok := atoi(v)
		if !ok {
			continue
		}
		c, ok := cat.ByLabel(catalogKey, value)
		if !ok {
			unknown = append(unknown, value)
			continue
		}
		counts[c.ID] += n
	}
	if len(counts) == 0 && len(unknown) == 0 {
		return detection{}, false
	}
	slices.Sort(unknown)
	key := prefix + "<value>"
	switch {
	case len(unknown) > 0:
		return detection{vendor: "amd", why: fmt.Sprintf("%s: %s not in the catalog", key, strings.Join(unknown, ", "))}, true
	case len(counts) == 1:
		for id, n := range counts {
			c, _ := cat.Get(id)
			return detection{class: c, count: n, why: fmt.Sprintf("type from %s (%d devices)", key, n)}, true
		}
	}
	total := 0
	for _, n := range counts {
		total += n
	}
	return detection{types: counts, count: total, vendor: "amd", why: fmt.Sprintf("%s names %d types", key, len(counts))}, true
}

// Karpenter's AWS provider labels every node it launches with the GPU of
// its instance type: name ("a100", older releases "nvidia-a100"),
// manufacturer, count, and memory per GPU in MiB.
const (
	lblKarpenterGPUName   = "karpenter.k8s.aws/instance-gpu-name"
	lblKarpenterGPUVendor = "karpenter.k8s.aws/instance-gpu-manufacturer"
	lblKarpenterGPUCount  = "karpenter.k8s.aws/instance-gpu-count"
	lblKarpenterGPUMemory = "karpenter.k8s.aws/instance-gpu-memory"
)

func detectKarpenter(labels map[string]string, cat *catalog.Catalog) detection {
	name := strings.TrimSpace(labels[lblKarpenterGPUName])
	if name == "" {
		return detection{}
	}
	count, _ := atoi(labels[lblKarpenterGPUCount])
	if c, ok := cat.ByLabel(lblKarpenterGPUName, name); ok {
		return detection{class: c, count: count, why: fmt.Sprintf("type from %s=%s", lblKarpenterGPUName, name)}
	}
	vendor := strings.ToLower(strings.TrimSpace(labels[lblKarpenterGPUVendor]))
	model := strings.ToLower(name)
	if vendor != "" {
		model = strings.TrimPrefix(model, vendor+"-")
	}
	gb := 0
	if mib, err := strconv.Atoi(labels[lblKarpenterGPUMemory]); err == nil && mib > 0 {
		gb = int(math.Round(float64(mib) / 1024))
	}
	cands := cat.ByModel(vendor, model)
	if c, why := pickByMemory(cands, gb, lblKarpenterGPUMemory); c != nil {
		return detection{class: c, count: count, why: fmt.Sprintf("type from %s=%s by model %s%s", lblKarpenterGPUName, name, strings.ToUpper(model), why)}
	}
	d := detection{count: count, vendor: vendor}
	if len(cands) == 0 {
		d.why = fmt.Sprintf("%s=%s is not a catalog model", lblKarpenterGPUName, name)
	} else {
		d.why = fmt.Sprintf("%s=%s could be %s and %s does not tell them apart", lblKarpenterGPUName, name, classIDs(cands), lblKarpenterGPUMemory)
	}
	return d
}

// Alibaba Cloud's ACK labels GPU nodes with the NVML product name
// (aliyun.accelerator/nvidia_name: "Tesla-V100-SXM2-16GB", "NVIDIA-A10",
// "T4") and the memory per GPU (nvidia_mem: "16160MiB").
const (
	lblAlibabaName   = "aliyun.accelerator/nvidia_name"
	lblAlibabaMemory = "aliyun.accelerator/nvidia_mem"
	lblAlibabaCount  = "aliyun.accelerator/nvidia_count"
)

func detectAlibaba(labels map[string]string, cat *catalog.Catalog) detection {
	name := strings.TrimSpace(labels[lblAlibabaName])
	if name == "" {
		return detection{}
	}
	count, _ := atoi(labels[lblAlibabaCount])
	if c, ok := cat.ByLabel(catalog.LabelGFDProduct, name); ok {
		return detection{class: c, count: count, why: fmt.Sprintf("type from %s=%s", lblAlibabaName, name)}
	}
	// "16160MiB": a binary suffix written with a B, which Kubernetes
	// quantities do not take.
	mem := ""
	if q, err := resource.ParseQuantity(strings.TrimSuffix(strings.TrimSpace(labels[lblAlibabaMemory]), "B")); err == nil && q.Sign() > 0 {
		mem = strconv.FormatInt(q.Value()>>20, 10)
	}
	c, why := matchByModel(cat, name, mem, lblAlibabaMemory, false)
	if c == nil {
		return detection{vendor: "nvidia", count: count, why: fmt.Sprintf("%s=%s: %s", lblAlibabaName, name, why)}
	}
	return detection{class: c, count: count, why: fmt.Sprintf("type from %s=%s by %s", lblAlibabaName, name, why)}
}

// k8s.amazonaws.com/accelerator is a label admins set on EKS node groups
// for the cluster autoscaler, in GKE's style ("nvidia-tesla-t4") or free
// form ("L4", even "true"). It is trusted last: after the instance type,
// which AWS sets.
const lblEKSAccelerator = "k8s.amazonaws.com/accelerator"

func detectEKSAccelerator(labels map[string]string, cat *catalog.Catalog) detection {
	v := strings.TrimSpace(labels[lblEKSAccelerator])
	if v == "" {
		return detection{}
	}
	for _, key := range []string{lblEKSAccelerator, "cloud.google.com/gke-accelerator", catalog.LabelGFDProduct} {
		if c, ok := cat.ByLabel(key, v); ok {
			return detection{class: c, why: fmt.Sprintf("type from %s=%s (set by hand on the node group: check it)", lblEKSAccelerator, v)}
		}
	}
	return detection{why: fmt.Sprintf("%s=%s names no catalog type", lblEKSAccelerator, v)}
}

// pickByMemory chooses among a model's classes the one whose memory is
// within 15% of gb, closest first. With one candidate, memory need not be
// known; with several and no figure, it gives up rather than guess.
func pickByMemory(cands []*catalog.Class, gb int, src string) (*catalog.Class, string) {
	if len(cands) == 1 && gb == 0 {
		return cands[0], ""
	}
	var best *catalog.Class
	for _, c := range cands {
		if gb <= 0 {
			break
		}
		d := math.Abs(float64(c.MemoryGB - gb))
		if d/float64(c.MemoryGB) <= 0.15 && (best == nil || d < math.Abs(float64(best.MemoryGB-gb))) {
			best = c
		}
	}
	if best == nil {
		return nil, ""
	}
	return best, fmt.Sprintf(" and %dGB from %s", gb, src)
}

func classIDs(cs []*catalog.Class) string {
	ids := make([]string, len(cs))
	for i, c := range cs {
		ids[i] = c.ID
	}
	return strings.Join(ids, " or ")
}

// Node Feature Discovery's pci source labels devices as
// feature.node.kubernetes.io/pci-<fields>.present, the fields joined by '_'
// (by default class and vendor; with deviceLabelFields including "device",
// the device id too). A vendor id followed by a device id the catalog knows
// names the class.
const nfdPCIPrefix = "feature.node.kubernetes.io/pci-"

// intelPCIVendor is Intel's own PCI vendor id, which its data-centre GPUs
// carry (the Gaudi line is Habana's 1da3).
const intelPCIVendor = "8086"

// pciVendors maps a PCI vendor id to its vendor.
var pciVendors = func() map[string]string {
	m := map[string]string{intelPCIVendor: "intel"}
	for v, id := range catalog.PCIVendorIDs {
		m[id] = v
	}
	return m
}()

// Intel's GPU plugin NFD rules label data-centre GPUs with their product
// and count (gpu.intel.com/product=Max_1550, gpu.intel.com/device.count=2)
// and every Intel GPU with its PCI class and device id
// (gpu.intel.com/device-id.0380-0bd5.present=true).
const (
	lblIntelProduct = "gpu.intel.com/product"
	lblIntelCount   = "gpu.intel.com/device.count"
	intelDevicePfx  = "gpu.intel.com/device-id."
)

func detectIntelGPU(labels map[string]string, cat *catalog.Catalog) detection {
	count, _ := atoi(labels[lblIntelCount])
	if v := strings.TrimSpace(labels[lblIntelProduct]); v != "" {
		if c, ok := cat.ByLabel(lblIntelProduct, v); ok {
			return detection{class: c, count: count, why: fmt.Sprintf("type from %s=%s", lblIntelProduct, v)}
		}
	}
	var keys []string
	for k, v := range labels {
		if strings.HasPrefix(k, intelDevicePfx) && strings.HasSuffix(k, ".present") && v == "true" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		id := strings.TrimSuffix(strings.TrimPrefix(k, intelDevicePfx), ".present")
		_, dev, ok := strings.Cut(id, "-")
		if !ok {
			continue
		}
		for _, c := range cat.ByPCI("intel", dev) {
			if c.PCIVendor() == intelPCIVendor {
				return detection{class: c, count: count, why: fmt.Sprintf("type from %s (PCI 8086:%s)", k, dev)}
			}
		}
	}
	if v := strings.TrimSpace(labels[lblIntelProduct]); v != "" {
		return detection{vendor: "intel", model: v, count: count, why: fmt.Sprintf("%s=%s is not in the catalog", lblIntelProduct, v)}
	}
	return detection{}
}

func detectNFDPCI(labels map[string]string, cat *catalog.Catalog) detection {
	var miss detection
	var keys []string
	for k, v := range labels {
		if strings.HasPrefix(k, nfdPCIPrefix) && v == "true" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		rest := strings.TrimPrefix(k, nfdPCIPrefix)
		fields, ok := strings.CutSuffix(rest, ".present")
		if !ok {
			continue
		}
		parts := strings.Split(fields, "_")
		for i, p := range parts {
			vendor, ok := pciVendors[p]
			if !ok {
				continue
			}
			if i+1 < len(parts) {
				cs := slices.DeleteFunc(cat.ByPCI(vendor, parts[i+1]), func(c *catalog.Class) bool { return c.PCIVendor() != p })
				if len(cs) == 1 {
					return detection{class: cs[0], why: fmt.Sprintf("type from NFD label %s (PCI %s:%s)", k, p, parts[i+1])}
				} else if len(cs) > 1 && miss.why == "" {
					miss = detection{vendor: vendor, why: fmt.Sprintf("NFD label %s: PCI device %s could be %s", k, parts[i+1], classIDs(cs))}
				}
			}
			// Intel's 8086 is on most servers' chipsets and integrated
			// graphics: only a device id of a class says GPU.
			if miss.why == "" && p != intelPCIVendor {
				miss = detection{vendor: vendor, why: fmt.Sprintf("NFD label %s names the vendor, not the model", k)}
			}
		}
	}
	return miss
}
