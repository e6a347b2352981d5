package inventory

// Each node's devices from its ResourceSlices: the current slices of every
// pool, each device classified (GPU, MIG partition, other accelerator) and
// grouped by driver, class and model into the counts classification reads.

import (
	"cmp"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/accelc/accelc/pkg/catalog"
)

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
