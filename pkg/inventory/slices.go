package inventory

import (
	"cmp"
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

// This file reads Dynamic Resource Allocation's ResourceSlices
// (resource.k8s.io/v1): what a DRA driver publishes of each device of a
// node, attribute by attribute. That is the most precise source there is:
// a device's own product name or PCI device id, where node labels say
// what a node's devices are as a whole. A node whose slices publish GPUs
// is classified device by device (a node with two models is two groups of
// devices, not "mixed"), and its slices win over its labels for the device
// types.
//
// The attribute shapes are those of the drivers' own sources and reports:
// NVIDIA's (sigs.k8s.io/dra-driver-nvidia-gpu v0.4.0,
// cmd/gpu-kubelet-plugin/deviceinfo.go and mig.go; the attributes its
// tests/bats/test_gpu_basic.bats and test_gpu_mig.bats expect; the slices
// of its issue #719) and AMD's (ROCm/k8s-gpu-dra-driver: the slices of its
// pull request #21, in resource.k8s.io/v1beta1's "basic" form, and the
// attributes of pull request #35).

// The DRA drivers whose devices accelc classifies. A snapshot keeps no
// other driver's slices: a network driver's devices are not accelerators,
// and their attributes are addresses.
const (
	DriverNVIDIA = "gpu.nvidia.com"
	DriverAMD    = "gpu.amd.com"
)

// IsAcceleratorDriver reports whether accelc reads a DRA driver's slices.
func IsAcceleratorDriver(driver string) bool {
	return driver == DriverNVIDIA || driver == DriverAMD
}

// ResourceSliceAPIVersion is the API version accelc reads and writes
// ResourceSlices in.
const ResourceSliceAPIVersion = "resource.k8s.io/v1"

// ResourceSlice is what accelc keeps of a ResourceSlice: its driver, pool
// and node, and of each device its name, attributes, capacity and the
// counter sets it consumes from. Identifying values (UUIDs, PCI addresses,
// serial numbers) are dropped before a snapshot holds it: see Redact.
type ResourceSlice struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec SliceSpec `json:"spec"`
}

// SliceSpec is a ResourceSlice's spec.
type SliceSpec struct {
	Driver string `json:"driver"`
	Pool   Pool   `json:"pool"`
	// NodeName is the node whose devices the slice publishes; a slice of
	// network-attached devices has none (but a node selector, allNodes
	// or per-device nodes), and accelc does not count its devices.
	NodeName               string    `json:"nodeName,omitempty"`
	NodeSelector           *struct{} `json:"nodeSelector,omitempty"`
	AllNodes               bool      `json:"allNodes,omitempty"`
	PerDeviceNodeSelection bool      `json:"perDeviceNodeSelection,omitempty"`
	Devices                []Device  `json:"devices,omitempty"`
}

// Pool is a driver's pool of devices. Its slices of the highest
// generation are current; a pool has ResourceSliceCount of them when
// complete.
type Pool struct {
	Name               string `json:"name"`
	Generation         int64  `json:"generation"`
	ResourceSliceCount int64  `json:"resourceSliceCount"`
}

// Device is one device of a slice.
type Device struct {
	Name       string               `json:"name"`
	Attributes map[string]Attribute `json:"attributes,omitempty"`
	Capacity   map[string]Capacity  `json:"capacity,omitempty"`
	// ConsumesCounters names the counter sets a device draws on: for
	// NVIDIA's MIG devices, a MIG device the driver creates when a claim
	// asks for it (dynamic MIG), which is not one yet.
	ConsumesCounters []CounterConsumption `json:"consumesCounters,omitempty"`
	// Basic is a resource.k8s.io/v1beta1 device's content; reading moves
	// it to the fields above.
	Basic *BasicDevice `json:"basic,omitempty"`
}

// BasicDevice is the "basic" wrapper resource.k8s.io/v1beta1 devices have.
type BasicDevice struct {
	Attributes       map[string]Attribute `json:"attributes,omitempty"`
	Capacity         map[string]Capacity  `json:"capacity,omitempty"`
	ConsumesCounters []CounterConsumption `json:"consumesCounters,omitempty"`
}

// Attribute is a device attribute: one of its values is set.
type Attribute struct {
	Int      *int64   `json:"int,omitempty"`
	Bool     *bool    `json:"bool,omitempty"`
	String   *string  `json:"string,omitempty"`
	Version  *string  `json:"version,omitempty"`
	Ints     []int64  `json:"ints,omitempty"`
	Bools    []bool   `json:"bools,omitempty"`
	Strings  []string `json:"strings,omitempty"`
	Versions []string `json:"versions,omitempty"`
}

// Capacity is a device's capacity of one kind: a quantity.
type Capacity struct {
	Value string `json:"value"`
}

// CounterConsumption names a counter set a device consumes from; what it
// consumes is not kept.
type CounterConsumption struct {
	CounterSet string `json:"counterSet"`
}

// normalize moves a v1beta1 device's content out of "basic".
func (d *Device) normalize() {
	if b := d.Basic; b != nil {
		if d.Attributes == nil {
			d.Attributes = b.Attributes
		}
		if d.Capacity == nil {
			d.Capacity = b.Capacity
		}
		if d.ConsumesCounters == nil {
			d.ConsumesCounters = b.ConsumesCounters
		}
		d.Basic = nil
	}
}

// str is a string attribute's value (or a version's), "" when absent.
func (d *Device) str(name string) string {
	a, ok := d.Attributes[name]
	switch {
	case !ok:
		return ""
	case a.String != nil:
		return strings.TrimSpace(*a.String)
	case a.Version != nil:
		return strings.TrimSpace(*a.Version)
	}
	return ""
}

// memoryBytes is the device's memory capacity in bytes; 0 when it has
// none or publishes 0 (AMD's driver, when it could not read it).
func (d *Device) memoryBytes() int64 {
	c, ok := d.Capacity["memory"]
	if !ok {
		return 0
	}
	q, err := resource.ParseQuantity(c.Value)
	if err != nil || q.Sign() <= 0 {
		return 0
	}
	return q.Value()
}

// Identifying values: a snapshot is committed to Git and must not carry a
// device's serial number or address.
var (
	// identifyingNames are attribute names (without their domain,
	// lower-case) whose value identifies one device or where it sits:
	// NVIDIA's uuid, parentUUID and older pcieBusID; the standard
	// resource.kubernetes.io/pciBusID and pcieRoot; AMD's pciAddr,
	// parentPciAddr, parentDeviceID and iommuGroup.
	identifyingNames = map[string]bool{
		"uuid": true, "parentuuid": true, "pcibusid": true, "pciebusid": true, "pcieroot": true,
		"pciaddr": true, "parentpciaddr": true, "pciaddress": true, "parentdeviceid": true,
		"iommugroup": true, "serial": true, "serialnumber": true, "macaddress": true, "mac": true,
	}
	// identifyingValue matches values that identify a device whatever
	// the attribute is called: a UUID (GPU-…, MIG-… or bare), a PCI
	// address ("0000:3b:00.0", AMD's "0003:00:04:0"), a PCIe root
	// ("pci0000:5a"), a MAC address, or a long decimal id (AMD's KFD
	// unique id).
	identifyingValue = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)` +
			`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}` +
			`|[0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2}[.:][0-7]` +
			`|[0-9a-f]{4}-[0-9a-f]{2}-[0-9a-f]{2}-[0-7]` +
			`|\bpci[0-9a-f]{4}:[0-9a-f]{2}\b` +
			`|\b([0-9a-f]{2}:){5}[0-9a-f]{2}\b` +
			`|^[0-9]{12,}$`)
	})
	// pciDeviceID is a PCI device id as drivers write it: "74a1", "0x740f".
	pciDeviceID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(?i)(0x)?([0-9a-f]{4})$`) })
)

// identifying reports whether an attribute must not reach a snapshot.
func identifying(name string, a Attribute) bool {
	local := strings.ToLower(name[strings.LastIndex(name, "/")+1:])
	if identifyingNames[local] || strings.Contains(local, "uuid") || strings.Contains(local, "serial") {
		return true
	}
	if local == "deviceid" && a.String != nil && !pciDeviceID().MatchString(strings.TrimSpace(*a.String)) {
		// AMD's deviceID was the GPU's KFD id or address before it was
		// the PCI device id (ROCm/k8s-gpu-dra-driver#21, #35).
		return true
	}
	for _, v := range slices.Concat(a.Strings, a.Versions) {
		if looksIdentifying(v) {
			return true
		}
	}
	for _, p := range []*string{a.String, a.Version} {
		if p != nil && looksIdentifying(*p) {
			return true
		}
	}
	return false
}

// looksIdentifying reports whether identifyingValue matches v. Every form
// it matches holds a ':' or a '-', or is twelve digits or more: most
// values (product names, versions, types) need no regular expression.
func looksIdentifying(v string) bool {
	if !strings.ContainsAny(v, ":-") && (len(v) < 12 || strings.Trim(v, "0123456789") != "") {
		return false
	}
	return identifyingValue().MatchString(v)
}

// Redact drops what identifies a device: attributes such as uuid,
// parentUUID, resource.kubernetes.io/pciBusID and pcieRoot, any attribute
// whose value is a UUID, PCI address or serial-like id, and counter sets
// named after one. A device named after one is renamed by its position.
// It reports how many values it dropped.
func (s *ResourceSlice) Redact() int {
	dropped := 0
	for i := range s.Spec.Devices {
		d := &s.Spec.Devices[i]
		d.normalize()
		for name, a := range d.Attributes {
			if identifying(name, a) {
				delete(d.Attributes, name)
				dropped++
			}
		}
		if looksIdentifying(d.Name) {
			d.Name = "device-" + strconv.Itoa(i)
			dropped++
		}
		d.ConsumesCounters = slices.DeleteFunc(d.ConsumesCounters, func(c CounterConsumption) bool {
			if looksIdentifying(c.CounterSet) {
				dropped++
				return true
			}
			return false
		})
		if len(d.ConsumesCounters) == 0 {
			d.ConsumesCounters = nil
		}
	}
	return dropped
}

// keepSlices keeps the slices of accelerator drivers, redacted, in a
// fixed order (node, driver, pool, generation, name). It redacts in place
// what in holds unless clone is set.
func keepSlices(in []ResourceSlice, clone bool) []ResourceSlice {
	var out []ResourceSlice
	for _, s := range in {
		if !IsAcceleratorDriver(s.Spec.Driver) {
			continue
		}
		s.APIVersion, s.Kind = ResourceSliceAPIVersion, "ResourceSlice"
		if clone {
			s.Spec.Devices = slices.Clone(s.Spec.Devices)
			for i := range s.Spec.Devices {
				d := &s.Spec.Devices[i]
				d.Attributes, d.Capacity = maps.Clone(d.Attributes), maps.Clone(d.Capacity)
				d.ConsumesCounters = slices.Clone(d.ConsumesCounters)
			}
		}
		s.Redact()
		out = append(out, s)
	}
	sortSlices(out)
	return out
}

func sortSlices(s []ResourceSlice) {
	slices.SortStableFunc(s, func(a, b ResourceSlice) int {
		return cmp.Or(strings.Compare(a.Spec.NodeName, b.Spec.NodeName), strings.Compare(a.Spec.Driver, b.Spec.Driver),
			strings.Compare(a.Spec.Pool.Name, b.Spec.Pool.Name), cmp.Compare(a.Spec.Pool.Generation, b.Spec.Pool.Generation),
			strings.Compare(a.Metadata.Name, b.Metadata.Name))
	})
}

// AcceleratorSlices keeps, of the slices a cluster lists, those of the
// accelerator drivers accelc reads, redacted (see Redact) and in a fixed
// order: what a snapshot holds. It redacts the slices of all in place.
func AcceleratorSlices(all []ResourceSlice) []ResourceSlice { return keepSlices(all, false) }

// DRADevices are the devices of one class on a node, as its
// ResourceSlices publish them.
type DRADevices struct {
	// AcceleratorType is the devices' class id, or "unknown".
	AcceleratorType string `json:"acceleratorType"`
	DisplayName     string `json:"displayName"`
	Driver          string `json:"driver"`
	// Model is the product the driver publishes, for devices of unknown
	// type.
	Model string `json:"model,omitempty"`
	// GPUs counts physical GPUs: whole, or cut into MIG devices or
	// partitions.
	GPUs int `json:"gpus"`
	// Devices counts what claims can be given: whole GPUs, MIG devices
	// and partitions.
	Devices int `json:"devices"`
	// MIGDevices counts NVIDIA MIG devices per profile (1g.10gb).
	MIGDevices map[string]int `json:"migDevices,omitempty"`
	// Partitions counts AMD GPU partitions per partition profile
	// (dpx_nps1: two per GPU, their memory in one NUMA pool).
	Partitions map[string]int `json:"partitions,omitempty"`
	// MemoryGB is one whole device's memory in GB (10^9 bytes): its
	// class's, or for devices of unknown type what the slice publishes.
	MemoryGB int `json:"memoryGB,omitempty"`

	class   *catalog.Class
	why     string // which attribute decided
	partial bool   // partitions whose GPUs could not be counted
}

// draNode is what a node's slices say.
type draNode struct {
	groups []DRADevices
	notes  []string
	vendor string
}

// draKind is what a device is to a count.
type draKind int

const (
	draWhole     draKind = iota // a whole GPU
	draSlice                    // a MIG device or partition that exists
	draPlacement                // a MIG device or partition the driver would create on demand
	draVFIO                     // a GPU bound for passthrough to a VM
)

// migParent reads the GPU of an NVIDIA MIG device from its name
// ("gpu-0-mig-3g40gb-9-4" is a MIG device of "gpu-0"); it does not need
// the parentUUID a snapshot drops.
var migParent = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(gpu-[0-9]+)-mig-`) })

// partitionsPerGPU is how many partitions an AMD compute partition mode
// makes of one GPU (spx_nps1, dpx_nps1…): CPX makes one per XCD, eight on
// the MI300X, MI325X, MI350X and MI355X and six on the MI300A.
func partitionsPerGPU(profile string, class *catalog.Class) int {
	mode, _, _ := strings.Cut(strings.ToLower(profile), "_")
	switch mode {
	case "spx":
		return 1
	case "dpx":
		return 2
	case "tpx":
		return 3
	case "qpx":
		return 4
	case "cpx":
		if class == nil {
			return 0
		}
		if strings.EqualFold(class.Model, "MI300A") {
			return 6
		}
		return 8
	}
	return 0
}

// classifyDevice finds a device's class through the lookups node labels
// go through: NVIDIA's productName is GPU Feature Discovery's product with
// spaces for dashes ("NVIDIA A100 80GB PCIe"), looked up as
// nvidia.com/gpu.product values are; AMD's deviceID is the PCI device id
// ("0x74a1"), looked up as NFD's PCI labels are, and its productName is
// the ROCm labeller's product-name ("AMD_Instinct_MI300X_OAM").
func classifyDevice(driver string, d *Device, kind draKind, cat *catalog.Catalog) (class *catalog.Class, model, why string) {
	product := d.str("productName")
	switch driver {
	case DriverNVIDIA:
		if product == "" {
			return nil, "", ""
		}
		why = "productName=" + product
		gfd := strings.ReplaceAll(product, " ", "-")
		if c, ok := cat.ByLabel(catalog.LabelGFDProduct, gfd); ok {
			return c, product, why
		}
		mem := ""
		if b := d.memoryBytes(); b > 0 && kind == draWhole {
			mem = strconv.FormatInt(b, 10)
		}
		c, how := matchByModel(cat, gfd, mem, "capacity memory", kind != draWhole)
		if c == nil {
			return nil, product, why + " is not in the catalog (" + how + ")"
		}
		return c, product, why + " by " + how + "; the value is not in the catalog: add " + gfd + " to the class's identifiedBy " + catalog.LabelGFDProduct
	case DriverAMD:
		if m := pciDeviceID().FindStringSubmatch(d.str("deviceID")); m != nil {
			dev := strings.ToLower(m[2])
			cands := cat.ByPCI("amd", dev)
			gb := 0
			if len(cands) > 1 && kind == draWhole {
				// One id, several memory sizes: the device's tells.
				gb = int((d.memoryBytes() + 5e8) / 1e9)
			}
			if c, by := pickByMemory(cands, gb, "capacity memory"); c != nil {
				return c, product, "deviceID=" + d.str("deviceID") + by
			}
		}
		if product != "" {
			if c, ok := cat.ByLabel("amd.com/gpu.product-name", product); ok {
				return c, product, "productName=" + product
			}
			return nil, product, "productName=" + product + " is not in the catalog"
		}
		if id := d.str("deviceID"); id != "" {
			return nil, "", "deviceID=" + id + " is not in the catalog"
		}
	}
	return nil, product, ""
}

// deviceKind says what a device of a driver is; ok is false for devices
// that are not GPUs (NVIDIA's compute-domain channels, say).
func deviceKind(driver string, d *Device) (draKind, bool) {
	typ := strings.ToLower(d.str("type"))
	switch driver {
	case DriverNVIDIA:
		switch typ {
		case "gpu":
			return draWhole, true
		case "mig":
			if len(d.ConsumesCounters) > 0 {
				return draPlacement, true
			}
			return draSlice, true
		case "vfio":
			return draVFIO, true
		}
	case DriverAMD:
		switch typ {
		case "amdgpu":
			return draWhole, true
		case "amdgpu-partition":
			if _, ok := d.Attributes["computePartition"]; ok {
				// Synthetic-partition mode publishes each mode a GPU
				// could be cut in, one of which a claim picks.
				return draPlacement, true
			}
			return draSlice, true
		case "vfio":
			return draVFIO, true
		}
	}
	return 0, false
}

// draEntry is one device of a node's current slices.
type draEntry struct {
	driver string
	dev    *Device
	kind   draKind
}

// readSlices reads each node's devices, by class, from the current slices
// of every pool. Slices of nodes not in nodes are problems.
func readSlices(all []ResourceSlice, nodes map[string]bool, cat *catalog.Catalog) (map[string]*draNode, []Problem) {
	perNode, notes, problems := currentDevices(all, nodes)
	out := make(map[string]*draNode, len(perNode))
	for node, entries := range perNode {
		if dn := groupDevices(entries, notes[node], cat); len(dn.groups) > 0 || len(dn.notes) > 0 {
			out[node] = dn
		}
	}
	return out, problems
}

// currentDevices lists each node's GPU devices from the current slices of
// every pool: its slices of the highest generation (older ones are being
// replaced). A pool short of slices, or a device published twice, is a
// note on its node.
func currentDevices(all []ResourceSlice, nodes map[string]bool) (map[string][]draEntry, map[string][]string, []Problem) {
	type poolKey struct{ driver, pool string }
	gen := map[poolKey]int64{}
	for i := range all {
		s := &all[i]
		k := poolKey{s.Spec.Driver, s.Spec.Pool.Name}
		gen[k] = max(gen[k], s.Spec.Pool.Generation)
	}
	type nodePool struct {
		node string
		poolKey
	}
	count, want := map[poolKey]int64{}, map[poolKey]int64{}
	seen := map[nodePool]map[string]bool{}
	perNode := map[string][]draEntry{}
	notes := map[string][]string{}
	var problems []Problem
	for i := range all {
		s := &all[i]
		k := poolKey{s.Spec.Driver, s.Spec.Pool.Name}
		if !IsAcceleratorDriver(s.Spec.Driver) || s.Spec.Pool.Generation < gen[k] {
			continue
		}
		count[k]++
		want[k] = s.Spec.Pool.ResourceSliceCount
		node := s.Spec.NodeName
		switch {
		case node == "":
			problems = append(problems, Problem{Kind: "ResourceSlice", Node: s.Metadata.Name, Item: -1, Reason: fmt.Sprintf(
				"%s devices of no one node (a node selector, all nodes or per device)", s.Spec.Driver)})
			continue
		case !nodes[node]:
			problems = append(problems, Problem{Kind: "ResourceSlice", Node: s.Metadata.Name, Item: -1, Reason: fmt.Sprintf(
				"%s devices of node %s, which the snapshot does not list", s.Spec.Driver, node)})
			continue
		}
		np := nodePool{node, k}
		if seen[np] == nil {
			seen[np] = map[string]bool{}
		}
		for j := range s.Spec.Devices {
			d := &s.Spec.Devices[j]
			d.normalize()
			kind, ok := deviceKind(s.Spec.Driver, d)
			switch {
			case !ok:
			case seen[np][d.Name]:
				notes[node] = append(notes[node], fmt.Sprintf("%s device %s is published twice in pool %s: counted once", s.Spec.Driver, d.Name, k.pool))
			default:
				seen[np][d.Name] = true
				perNode[node] = append(perNode[node], draEntry{s.Spec.Driver, d, kind})
			}
		}
	}
	for np := range seen {
		if k := np.poolKey; want[k] > count[k] {
			notes[np.node] = append(notes[np.node], fmt.Sprintf("pool %s of %s has %d of its %d ResourceSlices: devices may be missing while the driver updates them", k.pool, k.driver, count[k], want[k]))
		}
	}
	return perNode, notes, problems
}

// groupDevices classifies a node's devices and counts them per class:
// whole GPUs, MIG devices (and the GPUs their names say they are cut
// from), AMD partitions (and the GPUs their profile says they make).
func groupDevices(entries []draEntry, notes []string, cat *catalog.Catalog) *draNode {
	g := newDeviceGrouping(entries, cat)
	for _, e := range entries {
		g.add(e)
	}
	dn := &draNode{notes: notes}
	for _, k := range g.sorted() {
		dg := g.countGPUs(k)
		if dg.partial {
			dn.notes = append(dn.notes, fmt.Sprintf("%s partitions whose profile does not say how many make a GPU (%s): their GPUs are not counted", dg.DisplayName, migList(dg.Partitions)))
		}
		dn.groups = append(dn.groups, *dg)
		if dn.vendor == "" {
			dn.vendor = vendorOfDriver(dg.Driver)
		}
	}
	dn.notes = append(dn.notes, g.notes()...)
	slices.Sort(dn.notes)
	return dn
}

// groupKey is a group of a node's devices: one class of one driver, or
// for devices the catalog does not know, one model.
type groupKey struct{ driver, class, model string }

// deviceGrouping carries a node's devices through groupDevices' phases.
type deviceGrouping struct {
	cat     *catalog.Catalog
	groups  map[groupKey]*DRADevices
	order   []groupKey
	parents map[groupKey]map[string]bool // GPUs of MIG devices, per group
	whole   map[string]bool              // NVIDIA's whole GPUs, by name
	migged  map[string]bool              // whole GPUs whose MIG devices are published too
	// placements count, per driver and profile, the places where a
	// dynamic driver may cut a device; vfio the passthrough devices and
	// orphans the MIG devices whose GPU their name does not give.
	placements    map[string]map[string]int
	vfio, orphans int
}

// newDeviceGrouping notes NVIDIA's whole GPUs and which of them are
// published beside their MIG devices.
func newDeviceGrouping(entries []draEntry, cat *catalog.Catalog) *deviceGrouping {
	g := &deviceGrouping{cat: cat, groups: map[groupKey]*DRADevices{}, parents: map[groupKey]map[string]bool{},
		whole: map[string]bool{}, migged: map[string]bool{}, placements: map[string]map[string]int{}}
	for _, e := range entries {
		if e.driver == DriverNVIDIA && e.kind == draWhole {
			g.whole[e.dev.Name] = true
		}
	}
	for _, e := range entries {
		if m := migParent().FindStringSubmatch(e.dev.Name); e.driver == DriverNVIDIA && e.kind == draSlice && m != nil && g.whole[m[1]] {
			g.migged[m[1]] = true
		}
	}
	return g
}

// add counts one device: a passthrough device or a placement aside, else
// in its group.
func (g *deviceGrouping) add(e draEntry) {
	switch e.kind {
	case draVFIO:
		g.vfio++
		return
	case draPlacement:
		profile := e.dev.str("profile")
		if e.driver == DriverAMD {
			profile = e.dev.str("computePartition") + "_" + e.dev.str("memoryPartition")
		}
		if g.placements[e.driver] == nil {
			g.placements[e.driver] = map[string]int{}
		}
		g.placements[e.driver][profile]++
		return
	}
	k, dg := g.group(e)
	switch {
	case e.kind == draWhole:
		dg.GPUs++
		if g.migged[e.dev.Name] {
			// Published whole beside its MIG devices
			// (kubernetes-sigs/dra-driver-nvidia-gpu#719): its MIG
			// devices are what a claim can get.
			return
		}
		dg.Devices++
		if gb := int((e.dev.memoryBytes() + 5e8) / 1e9); gb > 0 && dg.MemoryGB == 0 {
			dg.MemoryGB = gb
		}
	case e.driver == DriverAMD:
		dg.Devices++
		if dg.Partitions == nil {
			dg.Partitions = map[string]int{}
		}
		dg.Partitions[cmp.Or(e.dev.str("partitionProfile"), "unknown")]++
	default:
		g.addMIGDevice(k, dg, e)
	}
}

// group is the group of a device, by its class (or model), made the
// first time.
func (g *deviceGrouping) group(e draEntry) (groupKey, *DRADevices) {
	class, model, why := classifyDevice(e.driver, e.dev, e.kind, g.cat)
	k := groupKey{driver: e.driver, model: model}
	if class != nil {
		k = groupKey{driver: e.driver, class: class.ID}
	}
	if dg := g.groups[k]; dg != nil {
		return k, dg
	}
	dg := &DRADevices{Driver: e.driver, class: class, why: why}
	if class != nil {
		dg.AcceleratorType, dg.DisplayName, dg.MemoryGB = class.ID, class.DisplayName, class.MemoryGB
	} else {
		dg.AcceleratorType, dg.Model = TypeUnknown, model
		dg.DisplayName = "GPU - type unknown (ResourceSlices say " + cmp.Or(model, "no productName") + ")"
	}
	g.groups[k] = dg
	g.order = append(g.order, k)
	return k, dg
}

// addMIGDevice counts a MIG device by profile, and the GPU its name says
// it is cut from unless that GPU is published whole.
func (g *deviceGrouping) addMIGDevice(k groupKey, dg *DRADevices, e draEntry) {
	dg.Devices++
	if dg.MIGDevices == nil {
		dg.MIGDevices = map[string]int{}
	}
	dg.MIGDevices[cmp.Or(e.dev.str("profile"), "unknown")]++
	switch m := migParent().FindStringSubmatch(e.dev.Name); {
	case m == nil:
		g.orphans++
	case !g.whole[m[1]]:
		if g.parents[k] == nil {
			g.parents[k] = map[string]bool{}
		}
		g.parents[k][m[1]] = true
	}
}

// sorted are the groups, known classes first, by class, model and driver.
func (g *deviceGrouping) sorted() []groupKey {
	slices.SortFunc(g.order, func(a, b groupKey) int {
		if ua, ub := a.class == "", b.class == ""; ua != ub {
			if ua {
				return 1
			}
			return -1
		}
		return cmp.Or(strings.Compare(a.class, b.class), strings.Compare(a.model, b.model), strings.Compare(a.driver, b.driver))
	})
	return g.order
}

// countGPUs adds to a group's GPUs those its MIG devices and partitions
// are cut from.
func (g *deviceGrouping) countGPUs(k groupKey) *DRADevices {
	dg := g.groups[k]
	dg.GPUs += len(g.parents[k])
	for profile, n := range dg.Partitions {
		if per := partitionsPerGPU(profile, dg.class); per > 0 {
			dg.GPUs += (n + per - 1) / per
		} else {
			dg.partial = true
		}
	}
	return dg
}

// notes say what was not counted, or counted otherwise than published.
func (g *deviceGrouping) notes() []string {
	var notes []string
	for gpu := range g.migged {
		notes = append(notes, fmt.Sprintf("%s is published both whole and as MIG devices (kubernetes-sigs/dra-driver-nvidia-gpu#719): counted as its MIG devices", gpu))
	}
	if g.orphans > 0 {
		notes = append(notes, fmt.Sprintf("%d MIG devices whose GPU their name does not give: their GPUs are not counted", g.orphans))
	}
	for driver, byProfile := range g.placements {
		total := 0
		for _, n := range byProfile {
			total += n
		}
		what := "dynamic MIG: the driver cuts MIG devices when claims ask for them"
		if driver == DriverAMD {
			what = "synthetic partitions: the driver partitions a GPU as the claim it is given for asks"
		}
		notes = append(notes, fmt.Sprintf("%s (%d placements of %s): counted as whole GPUs", what, total, strings.Join(slices.Sorted(maps.Keys(byProfile)), ", ")))
	}
	if g.vfio > 0 {
		notes = append(notes, fmt.Sprintf("%d devices for passthrough to VMs (type vfio): not counted", g.vfio))
	}
	return notes
}

func vendorOfDriver(driver string) string {
	switch driver {
	case DriverNVIDIA:
		return "nvidia"
	case DriverAMD:
		return "amd"
	}
	return ""
}
