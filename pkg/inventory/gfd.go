package inventory

// A node's type and sharing as GPU Feature Discovery's labels say them:
// the product label read against the catalog, MIG and time-slicing
// replicas, and the names and advice for a product the catalog lacks.

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/accelc/accelc/pkg/catalog"
)

// classifyGFD reads GPU Feature Discovery labels. It returns the class (nil
// when the product is not in the catalog) and the allocatable count the
// labels imply, for snapshots without node status.
func classifyGFD(n *Node, labels map[string]string, mig migSignals, res resources, cat *catalog.Catalog) (*catalog.Class, int) {
	product, productKey := gfdProduct(labels, mig)
	p := ParseGFDProduct(product)
	if productKey != lblProduct {
		// A per-profile product names its MIG profile: the node is mixed.
		p.MIGProfile, p.MIGInvalid = "", false
	}
	// GFD's GPU count, read once: the sharing reads it, and a node whose
	// label is missing or 0 takes its device plugin's capacity.
	count, _ := atoi(labels[lblCount])
	derived := readGFDSharing(n, labels, count, p, mig, res)
	if mig.config != "" && !mig.configEnabled() && mig.config != "all-disabled" {
		n.Notes = append(n.Notes, fmt.Sprintf("%s=%s failed to apply (%s=%s): the GPUs' MIG state is not known; see the MIG manager's log", lblMIGConfig, mig.config, lblMIGConfigState, mig.state))
	}
	if count == 0 && n.Sharing == Exclusive && res.capacity > 0 {
		n.Count = res.capacity
	}
	if product == "" {
		n.Notes = append([]string{"no " + lblProduct + " label: GPU Feature Discovery's product is missing"}, n.Notes...)
		return nil, derived
	}
	return gfdClass(n, labels, p, product, productKey, cat), derived
}

// gfdProduct is GFD's product label and its key: nvidia.com/gpu.product,
// or on a MIG mixed node that carries only per-profile labels, the first
// profile's.
func gfdProduct(labels map[string]string, mig migSignals) (product, key string) {
	if product := labels[lblProduct]; product != "" {
		return product, lblProduct
	}
	key = lblProduct
	for _, p := range mig.profiles {
		key = "nvidia.com/mig-" + p + ".product"
		if product = labels[key]; product != "" {
			break
		}
	}
	return product, key
}

// readGFDSharing sets the node's GPU count, GFD's count label, and reads
// how its GPUs are shared (MIG single or mixed, time-slicing, MPS) from
// GFD's labels, and returns the allocatable count they imply.
func readGFDSharing(n *Node, labels map[string]string, count int, p GFDProduct, mig migSignals, res resources) int {
	replicas, _ := atoi(labels[lblReplicas])
	n.Count = count
	derived := count
	migMode, migWhy := mig.mode()
	switch {
	case p.MIGInvalid:
		n.Sharing = MIGSingle
		n.Count = 0
		derived = 0
		n.Notes = append(n.Notes, fmt.Sprintf("MIG layout invalid (%s=%s): GFD reports 0 devices; fix the node's nvidia.com/mig.config", lblProduct, labels[lblProduct]))
	case p.MIGProfile != "":
		n.Sharing = MIGSingle
		n.MIGDevices = map[string]int{p.MIGProfile: count}
		n.Notes = append(n.Notes, fmt.Sprintf("MIG single: %d × %s devices; count is MIG devices", count, p.MIGProfile))
	case migMode == MIGMixed:
		n.Sharing = MIGMixed
		n.MIGDevices = mig.devices()
		derived = 0
		for _, c := range n.MIGDevices {
			derived += c
		}
		if len(mig.counts) == 0 {
			// GFD's per-profile counts are the usual sign; say which
			// other one was read.
			n.Notes = append(n.Notes, migNote(MIGMixed, migWhy, n.MIGDevices, mig))
		}
	case migMode == MIGSingle:
		// MIG single, but the product has no -MIG- suffix yet (labels of
		// a node being reconfigured, or cut short): the count is of MIG
		// devices, their profile is the config's if it names one.
		n.Sharing = MIGSingle
		if prof := mig.configProfile(); prof != "" && count > 0 {
			n.MIGDevices = map[string]int{prof: count}
		}
		n.Notes = append(n.Notes, migNote(MIGSingle, migWhy, n.MIGDevices, mig))
	case replicas > 1 || p.Shared || res.shared > 0:
		derived = readReplicas(n, labels, count, replicas, res, derived)
	}
	return derived
}

// readReplicas reads time-sliced or MPS GPUs: each advertised as
// replicas devices, renamed nvidia.com/gpu.shared or not.
func readReplicas(n *Node, labels map[string]string, count, replicas int, res resources, derived int) int {
	n.Sharing = TimeSliced
	if labels[lblStrategy] == "mps" {
		n.Sharing = MPS
	}
	if replicas > 1 {
		n.Replicas = replicas
		derived = count * replicas
		if count == 0 && res.shared > 0 && res.shared%replicas == 0 {
			// No gpu.count: the shared resource is GPUs × replicas.
			n.Count = res.shared / replicas
		}
	}
	if res.shared > 0 {
		n.Notes = append(n.Notes, "renameByDefault: GPUs advertised as nvidia.com/gpu.shared")
	}
	return derived
}

// gfdClass looks GFD's product up in the catalog (by the catalog's
// identifiedBy, by model and memory, or as a vGPU type of a board), and
// notes first how the type was found.
func gfdClass(n *Node, labels map[string]string, p GFDProduct, product, productKey string, cat *catalog.Catalog) *catalog.Class {
	vgpu, isVGPU := parseVGPU(p.Base)
	var class *catalog.Class
	by := false
	why := ""
	if isVGPU {
		// nvidia.com/gpu.memory is the vGPU's framebuffer, not the board's.
		class, why = vgpu.class(cat, labels[lblMemory])
	} else if class, by = cat.ByLabel(lblProduct, p.Base); !by {
		class, why = matchByModel(cat, p.Base, labels[lblMemory], lblMemory, n.Sharing == MIGSingle)
	}
	var how string
	switch {
	case isVGPU && class != nil:
		how = fmt.Sprintf("type from %s=%s, a vGPU type of that board: %s", productKey, product, why)
	case isVGPU:
		how = fmt.Sprintf("%s=%s is a vGPU type of a board the catalog does not name (%s)", productKey, product, why)
	case class != nil && by:
		how = fmt.Sprintf("type from %s=%s", productKey, product)
	case class != nil:
		how = fmt.Sprintf("type from %s=%s by %s; the value is not in the catalog: add it to the class's identifiedBy", productKey, product, why)
	default:
		how = fmt.Sprintf("%s=%s is not in the catalog (%s)", productKey, product, why)
	}
	n.Notes = append([]string{how}, n.Notes...)
	switch {
	case isVGPU:
		if n.Sharing == Exclusive {
			n.Sharing = VGPU
		}
		n.Notes = append(n.Notes, vgpu.note(class))
	case vgpuGuest(labels):
		n.Notes = append(n.Notes, fmt.Sprintf("GPU Feature Discovery marks a vGPU guest, but %s=%s names no vGPU type: counted as whole GPUs", lblProduct, product))
	}
	return class
}

// GFDProduct is a parsed nvidia.com/gpu.product value.
type GFDProduct struct {
	// Base is the product without sharing and MIG suffixes.
	Base string
	// MIGProfile is the MIG single profile ("1g.5gb"), if any.
	MIGProfile string
	// MIGInvalid is set for GFD's "-MIG-INVALID" marker.
	MIGInvalid bool
	// Shared is set for the "-SHARED" suffix of time-slicing and MPS.
	Shared bool
}

// ParseGFDProduct splits the suffixes GPU Feature Discovery appends to a
// product name: "-SHARED" (time-slicing or MPS without renameByDefault)
// and "-MIG-<profile>" or "-MIG-INVALID" (MIG single strategy).
func ParseGFDProduct(v string) GFDProduct {
	var p GFDProduct
	v = strings.TrimSpace(v)
	if len(v) > len("-SHARED") && strings.EqualFold(v[len(v)-len("-SHARED"):], "-SHARED") {
		p.Shared = true
		v = v[:len(v)-len("-SHARED")]
	}
	if i := lastIndexFold(v, "-MIG-"); i > 0 {
		profile := v[i+len("-MIG-"):]
		v = v[:i]
		if strings.EqualFold(profile, "INVALID") {
			p.MIGInvalid = true
		} else {
			p.MIGProfile = profile
		}
	}
	p.Base = v
	return p
}

// lastIndexFold is strings.LastIndex for an ASCII sep, ignoring case. (It
// does not upper-case s: that changes byte offsets in invalid UTF-8.)
func lastIndexFold(s, sep string) int {
	for i := len(s) - len(sep); i >= 0; i-- {
		if strings.EqualFold(s[i:i+len(sep)], sep) {
			return i
		}
	}
	return -1
}

// matchByModel finds a class for a product the catalog does not list
// verbatim, by model name and memory. It never guesses between two
// classes: without a memory figure that tells them apart it gives up.
func matchByModel(cat *catalog.Catalog, base, memValue, memKey string, migSingle bool) (*catalog.Class, string) {
	norm := catalog.NormalizeLabelValue(lblProduct, base)
	tokens := strings.Split(norm, "-")
	var cands []*catalog.Class
	model := ""
	for k := min(len(tokens), 2); k >= 1 && len(cands) == 0; k-- {
		model = strings.Join(tokens[:k], "-")
		cands = cat.ByModel("nvidia", model)
	}
	if len(cands) == 0 {
		return nil, "no catalog model matches it: add the class under accelerators, or pin the node in cluster.nodes"
	}
	if len(cands) == 1 {
		return cands[0], "model " + model
	}
	gb := 0
	src := ""
	if m := gbInProduct().FindStringSubmatch(norm); m != nil {
		gb, _ = strconv.Atoi(m[1])
		src = "memory in the name"
	} else if mib, ok := memoryMiB(memValue); ok && !migSingle && mib > 0 {
		gb = int(math.Round(float64(mib) / 1024))
		src = memKey
	}
	if best, why := pickByMemory(cands, gb, src); best != nil {
		return best, "model " + model + why
	}
	return nil, fmt.Sprintf("model %s could be %s and no memory figure tells them apart: pin the node in cluster.nodes", model, classIDs(cands))
}

// memoryMiB reads nvidia.com/gpu.memory, which GFD writes in MiB but some
// versions and hand-made labels give in bytes.
func memoryMiB(v string) (int64, bool) {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n < 0 {
		return 0, false
	}
	if n > 1<<24 { // more than 16 TiB in MiB: it is bytes
		n /= 1 << 20
	}
	return n, true
}

func mixedDisplayName(types map[string]int, cat *catalog.Catalog) string {
	parts := make([]string, 0, len(types))
	for _, id := range slices.Sorted(maps.Keys(types)) {
		name := id
		if c, ok := cat.Get(id); ok {
			name = c.DisplayName
		}
		parts = append(parts, fmt.Sprintf("%d× %s", types[id], name))
	}
	return "Mixed: " + strings.Join(parts, ", ")
}

func unknownDisplayName(vendor, model, resource string) string {
	kind := "GPU"
	switch {
	case resource == resGaudi || (vendor == "intel" && resource == "" && model == ""):
		kind = "Gaudi"
	case vendor == "google":
		kind = "TPU"
	case vendor == "aws":
		kind = "Neuron device"
	}
	if vendorDomain := vendorOfDomain(resource); vendorDomain != "" && vendorDomain == vendor && vendor != "nvidia" && vendor != "amd" && vendor != "intel" {
		// A vendor accelc reads by its resource alone: the resource
		// says what the node has.
		if model != "" {
			return fmt.Sprintf("%s device - type unknown (resource %s)", vendor, resource)
		}
		return vendor + " device - type unknown"
	}
	if model != "" {
		brand := map[string]string{"nvidia": "NVIDIA ", "amd": "AMD ", "intel": "Intel ", "google": "Google ", "aws": "AWS "}[vendor]
		return fmt.Sprintf("%s - type unknown (labels say %s%s)", kind, brand, model)
	}
	return kind + " - type unknown"
}

func unknownAdvice(vendor string, labels map[string]string) string {
	switch {
	case vendor == "nvidia" && labels[lblProduct] == "":
		return "no GPU Feature Discovery labels: install the GPU Operator (or GFD), or pin the type in cluster.nodes"
	case vendor == "nvidia":
		return fmt.Sprintf("the product %s=%s is not in the catalog: add it to a class's identifiedBy %s, or pin the type in cluster.nodes", lblProduct, labels[lblProduct], lblProduct)
	case vendor == "google" && labels[lblTPUAccelerator] != "":
		return fmt.Sprintf("the TPU version %s=%s is not in the catalog: add it to a class's identifiedBy %s, or pin the type in cluster.nodes", lblTPUAccelerator, labels[lblTPUAccelerator], lblTPUAccelerator)
	case vendor == "google":
		return "no " + lblTPUAccelerator + " label names the TPU version: pin the type in cluster.nodes"
	case vendor == "aws":
		return "add the instance type to a class's identifiedBy " + lblInstanceType + ", or pin the type in cluster.nodes"
	case vendorModelLabels[vendor] != "" && strings.TrimSpace(labels[vendorModelLabels[vendor]]) != "":
		k := vendorModelLabels[vendor]
		return fmt.Sprintf("the model %s=%s is not in the catalog: add a class under accelerators whose identifiedBy %s lists it, or pin the type in cluster.nodes", k, strings.TrimSpace(labels[k]), k)
	case vendor != "" && vendor != "nvidia" && vendor != "amd" && vendor != "intel":
		return fmt.Sprintf("no label or resource names the %s model: add a class under accelerators whose resourceNames or identifiedBy name it, or pin the type in cluster.nodes", vendor)
	default:
		return "no label names the model: pin the type in cluster.nodes"
	}
}
