package catalog

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
)

// Class is one accelerator type.
type Class struct {
	ID                string   `json:"id"`
	Vendor            string   `json:"vendor"`
	DisplayName       string   `json:"displayName"`
	Model             string   `json:"model"`
	Architecture      string   `json:"architecture"`
	MemoryGB          int      `json:"memoryGB"`
	ComputeCapability string   `json:"computeCapability,omitempty"`
	FormFactors       []string `json:"formFactors,omitempty"`
	PCIDeviceIDs      []string `json:"pciDeviceIDs"`
	// NoPCIDeviceIDs says why a class has no PCI device id (an id two
	// models share, none published); empty when it has ids.
	NoPCIDeviceIDs string `json:"noPCIDeviceIDs,omitempty"`
	// PCISubsystems are the class's boards by device and subsystem ids,
	// where another model's boards share the device id (the Quadro RTX
	// 6000 and 8000 are both 1e30 and 1e78).
	PCISubsystems []PCISubsystem `json:"pciSubsystems,omitempty"`
	// PCIVendorID is the class's PCI vendor id when it is not its vendor's
	// usual one (Intel's data-centre GPUs are 8086, its Gaudi line 1da3).
	PCIVendorID  string `json:"pciVendorID,omitempty"`
	ResourceName string `json:"resourceName"`
	// ResourceNames are extended resources whose name alone names this
	// class (HAMi's huawei.com/Ascend910B3, Tenstorrent's
	// tenstorrent.com/n150): a node that advertises one is of the class.
	ResourceNames []string `json:"resourceNames,omitempty"`
	// SharedResourceName says the vendor's device plugin offers every one
	// of its models as ResourceName (hygon.com/dcu, mthreads.com/gpu): the
	// resource alone does not name the class, however few of the vendor's
	// models the catalog lists. Its labels do.
	SharedResourceName  bool    `json:"sharedResourceName,omitempty"`
	FP16TFLOPS          float64 `json:"fp16TFLOPS,omitempty"`
	BF16TFLOPS          float64 `json:"bf16TFLOPS,omitempty"`
	MemoryBandwidthGBps float64 `json:"memoryBandwidthGBps,omitempty"`
	// CostPerHour is one device's hourly cost; nil when the admin gave none.
	CostPerHour *float64 `json:"costPerHour,omitempty"`
	// Performance holds what models measured on this type, by model name.
	Performance  map[string]Performance `json:"performance,omitempty"`
	IdentifiedBy map[string][]string    `json:"identifiedBy"`
}

// PCISubsystem is a board by its PCI device id and its subsystem's
// vendor and device ids, lower-case hex without 0x, as NFD's pci.device
// feature reports them (device, subsystem_vendor, subsystem_device).
type PCISubsystem struct {
	Device          string `json:"device"`
	SubsystemVendor string `json:"subsystemVendor"`
	SubsystemDevice string `json:"subsystemDevice"`
}

// Performance is one model's measurement on a type.
type Performance struct {
	// TokensPerSecond is serving throughput of one replica on GPUs devices.
	TokensPerSecond float64 `json:"tokensPerSecond,omitempty"`
	// TrainingTokensPerSecond is training throughput per device.
	TrainingTokensPerSecond float64 `json:"trainingTokensPerSecond,omitempty"`
	GPUs                    int     `json:"gpus"`
}

// PCIVendorIDs maps a vendor to its usual PCI vendor id, as NFD's
// pci.device feature reports it (lower-case hex, no 0x). A class whose
// devices carry another sets PCIVendorID.
var PCIVendorIDs = map[string]string{
	"nvidia": "10de",
	"amd":    "1002",
	"intel":  "1da3", // Habana Labs, the Gaudi line
}

// PCIVendor is the PCI vendor id of the class's devices.
func (c *Class) PCIVendor() string {
	if c.PCIVendorID != "" {
		return c.PCIVendorID
	}
	return PCIVendorIDs[c.Vendor]
}

// Catalog is a set of classes with lookups by id and by label value.
// It is immutable once built.
type Catalog struct {
	classes map[string]*Class
	ids     []string // sorted
	// byLabel maps label key → normalized value → class id.
	byLabel map[string]map[string]string
	// byModel maps vendor/upper-case model → class ids, for fuzzy matching.
	byModel map[string][]string
	// byPCI maps vendor/PCI device id → class ids.
	byPCI map[string][]string
	// byResource maps an extended resource → the class it names.
	byResource map[string]string
	// labelKeys are byLabel's keys, sorted once: classification asks for
	// them for every node.
	labelKeys []string
}

// New builds a catalog. Two classes claiming the same label value is an
// error, since classification would be ambiguous.
func New(classes []Class) (*Catalog, error) {
	c := &Catalog{
		classes: make(map[string]*Class, len(classes)),
		byLabel: map[string]map[string]string{},
		byModel: map[string][]string{},
		byPCI:   map[string][]string{},

		byResource: map[string]string{},
	}
	for i := range classes {
		cl := classes[i]
		if _, dup := c.classes[cl.ID]; dup {
			return nil, fmt.Errorf("accelerator class %q is defined twice", cl.ID)
		}
		c.classes[cl.ID] = &cl
		c.ids = append(c.ids, cl.ID)
	}
	sort.Strings(c.ids)
	var errs []string
	boards := map[string]string{}
	for _, id := range c.ids {
		cl := c.classes[id]
		mk := cl.Vendor + "/" + strings.ToUpper(cl.Model)
		c.byModel[mk] = append(c.byModel[mk], id)
		for _, dev := range cl.PCIDeviceIDs {
			pk := cl.Vendor + "/" + strings.ToLower(dev)
			c.byPCI[pk] = append(c.byPCI[pk], id)
		}
		for _, b := range cl.PCISubsystems {
			bk := cl.Vendor + "/" + b.Device + "/" + b.SubsystemVendor + ":" + b.SubsystemDevice
			if other, ok := boards[bk]; ok && other != id {
				errs = append(errs, fmt.Sprintf("PCI device %s subsystem %s:%s names both %s and %s: keep it on one class", b.Device, b.SubsystemVendor, b.SubsystemDevice, other, id))
			}
			boards[bk] = id
		}
		keys := make([]string, 0, len(cl.IdentifiedBy))
		for k := range cl.IdentifiedBy {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, key := range keys {
			m := c.byLabel[key]
			if m == nil {
				m = map[string]string{}
				c.byLabel[key] = m
			}
			for _, v := range cl.IdentifiedBy[key] {
				nv := NormalizeLabelValue(key, v)
				if other, ok := m[nv]; ok && other != id {
					errs = append(errs, fmt.Sprintf("label %s=%s identifies both %s and %s: keep it on one class", key, v, other, id))
					continue
				}
				m[nv] = id
			}
		}
	}
	for _, bk := range slices.Sorted(maps.Keys(boards)) {
		// A board told by its subsystem is no other class's by its
		// device id alone: both rules would label its node.
		id := boards[bk]
		vendor, rest, _ := strings.Cut(bk, "/")
		dev, _, _ := strings.Cut(rest, "/")
		for _, other := range c.byPCI[vendor+"/"+dev] {
			if other != id {
				errs = append(errs, fmt.Sprintf("PCI device %s names %s by its id alone and %s by its subsystem: give %s its subsystems instead", dev, other, id, other))
			}
		}
	}
	errs = append(errs, c.indexResources()...)
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	for k := range c.byLabel {
		c.labelKeys = append(c.labelKeys, k)
	}
	sort.Strings(c.labelKeys)
	return c, nil
}

// indexResources maps each class's resourceNames, and each resourceName
// no other class shares, to the class.
func (c *Catalog) indexResources() []string {
	var errs []string
	shared := map[string]int{}
	for _, id := range c.ids {
		shared[c.classes[id].ResourceName]++
	}
	for _, id := range c.ids {
		cl := c.classes[id]
		for _, r := range cl.ResourceNames {
			if other, ok := c.byResource[r]; ok && other != id {
				errs = append(errs, fmt.Sprintf("resource %s names both %s and %s: keep it on one class", r, other, id))
				continue
			}
			c.byResource[r] = id
		}
	}
	for _, id := range c.ids {
		if r := c.classes[id].ResourceName; r != "" && shared[r] == 1 && !c.classes[id].SharedResourceName {
			if _, ok := c.byResource[r]; !ok {
				c.byResource[r] = id
			}
		}
	}
	return errs
}

// ByResource returns the class an extended resource names: one of its
// resourceNames, or a resourceName no other class has.
func (c *Catalog) ByResource(name string) (*Class, bool) {
	id, ok := c.byResource[name]
	if !ok {
		return nil, false
	}
	return c.classes[id], true
}

// Get returns the class with the given id.
func (c *Catalog) Get(id string) (*Class, bool) {
	cl, ok := c.classes[id]
	return cl, ok
}

// IDs returns every class id, sorted.
func (c *Catalog) IDs() []string { return slices.Clone(c.ids) }

// Classes returns every class, sorted by id.
func (c *Catalog) Classes() []*Class {
	out := make([]*Class, len(c.ids))
	for i, id := range c.ids {
		out[i] = c.classes[id]
	}
	return out
}

// ByLabel returns the class a label value identifies.
func (c *Catalog) ByLabel(key, value string) (*Class, bool) {
	id, ok := c.byLabel[key][NormalizeLabelValue(key, value)]
	if !ok {
		return nil, false
	}
	return c.classes[id], true
}

// LabelKeys returns the node label keys some class is identified by,
// sorted.
func (c *Catalog) LabelKeys() []string { return slices.Clone(c.labelKeys) }

// ByModel returns the classes of a vendor's model ("nvidia", "A100"),
// sorted by id.
func (c *Catalog) ByModel(vendor, model string) []*Class {
	return c.lookup(c.byModel[vendor+"/"+strings.ToUpper(model)])
}

// ByPCI returns the classes whose PCI device ids include device ("20b0"),
// sorted by id. Some devices are sold in more than one memory size under
// one id: the caller decides what more than one class means.
func (c *Catalog) ByPCI(vendor, device string) []*Class {
	return c.lookup(c.byPCI[vendor+"/"+strings.ToLower(device)])
}

// lookup returns the classes of ids, in order.
func (c *Catalog) lookup(ids []string) []*Class {
	out := make([]*Class, len(ids))
	for i, id := range ids {
		out[i] = c.classes[id]
	}
	return out
}

// NormalizeLabelValue puts a raw label value in the form catalog lookups
// compare: case-folded, and for GPU Feature Discovery products without the
// brand words drivers prepend ("NVIDIA-", "Tesla-", "Quadro-", "GeForce-",
// and "GRID-", which older drivers give a vGPU).
func NormalizeLabelValue(key, value string) string {
	v := strings.ToUpper(strings.TrimSpace(value))
	if key == LabelGFDProduct || strings.HasSuffix(key, ".product") {
		v = strings.NewReplacer(" ", "-", "_", "-").Replace(v)
		for {
			trimmed := false
			for _, brand := range []string{"NVIDIA-", "TESLA-", "QUADRO-", "GEFORCE-", "GRID-"} {
				if rest, ok := strings.CutPrefix(v, brand); ok && rest != "" {
					v, trimmed = rest, true
				}
			}
			if !trimmed {
				break
			}
		}
	}
	return v
}

// LabelGFDProduct is GPU Feature Discovery's product label.
const LabelGFDProduct = "nvidia.com/gpu.product"

// Closest returns up to n ids closest to id by edit distance, closest
// first, for "did you mean" hints.
func (c *Catalog) Closest(id string, n int) []string { return Closest(id, c.ids, n) }

// Closest returns up to n of names closest to name by edit distance,
// closest first.
func Closest(id string, names []string, n int) []string {
	type cand struct {
		id string
		d  int
	}
	var cands []cand
	for _, other := range names {
		d := distance(id, other)
		// Ids are often written without their memory suffix.
		if i := strings.LastIndex(other, "-"); i > 0 {
			d = min(d, distance(id, other[:i])+1)
		}
		if strings.Contains(other, id) || strings.Contains(id, other) {
			d = min(d, 2)
		}
		if d <= max(3, len(id)/2) {
			cands = append(cands, cand{other, d})
		}
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].d < cands[j].d })
	var out []string
	for i := 0; i < len(cands) && i < n; i++ {
		out = append(out, cands[i].id)
	}
	return out
}

// distance is the Levenshtein distance between a and b.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// DefaultResourceName is the extended resource a vendor's device plugin
// advertises.
func DefaultResourceName(vendor string) string {
	switch vendor {
	case "amd":
		return "amd.com/gpu"
	case "intel":
		return "habana.ai/gaudi"
	case "google":
		return "google.com/tpu"
	case "aws":
		return "aws.amazon.com/neuron"
	}
	return "nvidia.com/gpu"
}

// TypedByPCI reports whether the rendered NodeFeatureRule gives the
// class's nodes the type label: it matches the class's PCI ids. Nodes of
// a class it does not type get the label only from a pin in
// cluster.nodes, from their node pool, or from a Karpenter pool of the
// class (see Labelling).
func (c *Class) TypedByPCI() bool {
	return (len(c.PCIDeviceIDs) > 0 || len(c.PCISubsystems) > 0) && c.PCIVendor() != ""
}

// Labelling says, for a class no NodeFeatureRule types, why none does
// and what gives its nodes typeLabel=<id>, which every profile naming it
// selects; "" for a class the rule types. The provider labels the catalog
// knows the class by, where it has one, name the node pool to label.
func (c *Class) Labelling(typeLabel string) string {
	if c.TypedByPCI() {
		return ""
	}
	why := c.NoPCIDeviceIDs
	if why == "" {
		why = "its class lists no PCI id"
	}
	// The provider labels that name the class name the node pool to
	// label, and how that provider sets a pool's labels.
	var pool, how []string
	for _, k := range []struct{ key, how string }{
		{"cloud.google.com/gke-tpu-accelerator", "GKE's --node-labels"},
		{"cloud.google.com/gke-accelerator", "GKE's --node-labels"},
		{"crusoe.ai/accelerator", "the node pool's labels"},
		{"karpenter.k8s.aws/instance-accelerator-name", "an EKS node group's labels"},
	} {
		if vs := c.IdentifiedBy[k.key]; len(vs) > 0 {
			pool = append(pool, k.key+"="+strings.Join(vs, "|"))
			if !slices.Contains(how, k.how) {
				how = append(how, k.how)
			}
		}
	}
	where := "the node pool's labels: GKE's --node-labels, an EKS node group's or AKS node pool's labels"
	if len(pool) > 0 {
		where = "the labels of the node pool whose nodes carry " + strings.Join(pool, " or ") + " (" + strings.Join(how, ", ") + ")"
	}
	// Karpenter launches AWS's and Azure's instance types (EC2's
	// family.size, Azure's Standard_…).
	karpenter := ""
	if slices.ContainsFunc(c.IdentifiedBy["node.kubernetes.io/instance-type"], func(t string) bool {
		return strings.HasPrefix(t, "Standard_") || (strings.Contains(t, ".") && !strings.HasPrefix(t, "BM.") && !strings.HasPrefix(t, "VM."))
	}) {
		karpenter = ", or a Karpenter pool of the type (cluster.autoscaling.karpenter.pools), whose nodes are born labelled"
	}
	return fmt.Sprintf("no NodeFeatureRule labels %s nodes %s=%s, which its profiles select (no PCI id: %s): pin its nodes in cluster.nodes, or set the label through %s%s",
		c.ID, typeLabel, c.ID, why, where, karpenter)
}
