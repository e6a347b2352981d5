package inventory

// Classification: Classify, and classifyNode's phases, which type one
// node and count its devices from its labels (gfd.go), its ResourceSlices
// (draclass.go), its resources (resources.go) and its pin.

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/accelc/accelc/pkg/catalog"
)

// Classify classifies raw nodes against a catalog.
func Classify(raw []RawNode, cat *catalog.Catalog, opts Options) *Inventory {
	return classify(raw, nil, cat, opts)
}

// classify classifies raw nodes and the devices their ResourceSlices
// publish.
func classify(raw []RawNode, resourceSlices []ResourceSlice, cat *catalog.Catalog, opts Options) *Inventory {
	inv := &Inventory{Nodes: make([]Node, 0, len(raw)), Resources: advertised(raw)}
	var dra map[string]*draNode
	if len(resourceSlices) > 0 {
		names := make(map[string]bool, len(raw))
		for i := range raw {
			names[raw[i].Metadata.Name] = true
		}
		dra, inv.Problems = readSlices(resourceSlices, names, cat)
	}
	if opts.NonAccelerator == nil {
		opts.NonAccelerator = DefaultNonAccelerator
	}
	sliced := nodesWithSlices(resourceSlices)
	for i := range raw {
		inv.add(classifyNode(&raw[i], dra[raw[i].Metadata.Name], sliced[raw[i].Metadata.Name], cat, opts))
	}
	inv.order()
	return inv
}

// add puts a classified node in the inventory: counted only, where it
// has no accelerator.
func (inv *Inventory) add(c classified) {
	if !c.accelerated {
		inv.OtherNodes++
		return
	}
	if c.problem != nil {
		inv.Problems = append(inv.Problems, *c.problem)
	}
	inv.Nodes = append(inv.Nodes, c.node)
}

// order sorts the nodes by name and the problems by kind, then node.
func (inv *Inventory) order() {
	sort.Slice(inv.Nodes, func(i, j int) bool { return inv.Nodes[i].Name < inv.Nodes[j].Name })
	sort.SliceStable(inv.Problems, func(i, j int) bool {
		if inv.Problems[i].Kind != inv.Problems[j].Kind {
			return inv.Problems[i].Kind < inv.Problems[j].Kind
		}
		return inv.Problems[i].Node < inv.Problems[j].Node
	})
}

type classified struct {
	node Node
	// problem is a device count the node's status gets wrong: the node is
	// kept, its counts 0.
	problem *Problem
	// accelerated is false for a node with no accelerator and no pin,
	// which the inventory only counts (OtherNodes).
	accelerated bool
}

// classifyNode types one node and counts its devices, in phases: what
// its labels say (GPU Feature Discovery's, else the providers' and the
// catalog's), what its ResourceSlices say, the pin in CUE over both; then
// the type's description, the device counts, what pods use, and notes on
// what to do.
func classifyNode(raw *RawNode, dra *draNode, sliceDrivers []string, cat *catalog.Catalog, opts Options) classified {
	if opts.NonAccelerator == nil {
		opts.NonAccelerator = DefaultNonAccelerator
	}
	r := newNodeReading(raw, cat, opts.NonAccelerator)
	r.detectType(opts)
	if r.n.Sharing == Exclusive {
		r.n.readHAMi(raw.Metadata.Annotations)
	}
	r.readDRA(dra)
	_, pinned := opts.Pins[r.n.Name]
	if !pinned && r.class == nil && r.n.Vendor == "" && r.res.capacity == 0 && len(sliceDrivers) == 0 {
		return classified{}
	}
	if r.class == nil && r.devices == nil && len(sliceDrivers) > 0 && r.res.capacity == 0 {
		// No one node is invisible: its devices are in slices accelc
		// does not read.
		r.n.Notes = append(r.n.Notes, fmt.Sprintf("publishes ResourceSlices of %s, whose devices accelc does not read: pin the type in cluster.nodes", strings.Join(sliceDrivers, ", ")))
	}
	r.applyPin(opts.Pins)
	r.describeType()
	r.countDevices()
	r.readUsage()
	problem := r.distrustBadCounts()
	r.advise()
	return classified{node: r.n, problem: problem, accelerated: true}
}

// nodeReading carries one node through classifyNode's phases.
type nodeReading struct {
	raw    *RawNode
	labels map[string]string
	res    resources
	cat    *catalog.Catalog
	n      Node
	class  *catalog.Class
	// derivedAlloc is the allocatable count the labels imply, for
	// snapshots without status; -1 when they imply none.
	derivedAlloc int
	// devices are the node's ResourceSlices' devices, when it has some;
	// from says which gave the class: "labels" or "ResourceSlices".
	devices *draNode
	from    string
}

// newNodeReading starts a node: its name, status, resources, and the
// taints that say something about its devices.
func newNodeReading(raw *RawNode, cat *catalog.Catalog, nonAccel func(string) bool) nodeReading {
	labels := raw.Metadata.Labels
	res := readResources(raw, nonAccel)
	r := nodeReading{raw: raw, labels: labels, res: res, cat: cat, derivedAlloc: -1, from: "labels",
		n: Node{Name: raw.Metadata.Name, Status: nodeStatus(raw), Sharing: Exclusive, Resource: res.resource, labels: labels}}
	r.n.cpuMilli, r.n.memBytes = nodeResources(raw)
	for _, t := range raw.Spec.Taints {
		// node.kubernetes.io/ taints (not-ready, unschedulable, pressure)
		// come and go with the node's state; profiles never tolerate them.
		if (t.Effect == "NoSchedule" || t.Effect == "NoExecute") && !strings.HasPrefix(t.Key, "node.kubernetes.io/") &&
			!strings.HasPrefix(t.Key, "node.cloudprovider.kubernetes.io/") {
			r.n.Taints = append(r.n.Taints, t)
		}
	}
	return r
}

// detectType reads the node's type, vendor, count and sharing from its
// labels: GPU Feature Discovery's product (or MIG labels), else what the
// providers' and the catalog's labels say.
func (r *nodeReading) detectType(opts Options) {
	mig := readMIG(r.labels, r.res)
	if r.labels[lblProduct] != "" || len(mig.profiles) > 0 {
		r.class, r.derivedAlloc = classifyGFD(&r.n, r.labels, mig, r.res, r.cat)
		r.n.Vendor = "nvidia"
		return
	}
	n, res := &r.n, r.res
	d := detectByLabels(r.labels, r.cat)
	if !d.found() {
		// HAMi's plugin names some vendors' models in the device type it
		// registers.
		if hd := hamiDetection(r.raw.Metadata.Annotations, r.cat); hd.found() || (hd.model != "" && d.why == "") {
			d = hd
		}
	}
	vgpu := false
	if !d.found() {
		if rd, isVGPU := resourceDetection(res, r.raw.Status.Capacity, r.cat); rd.found() || (rd.why != "" && d.why == "") {
			d, vgpu = rd, isVGPU
		}
	}
	if d.class == nil && opts.TypeLabel != "" {
		if c, ok := r.cat.Get(r.labels[opts.TypeLabel]); ok {
			d.class, d.model, d.types = c, "", nil
			d.why = fmt.Sprintf("type from %s=%s", opts.TypeLabel, c.ID)
			if pool := r.labels[labelKarpenterNodePool]; pool != "" {
				d.why += fmt.Sprintf(", as NodePool %s launched it", pool)
			}
		}
	}
	r.class = d.class
	n.Types = d.types
	n.Model = d.model
	switch {
	case r.class != nil:
		n.Vendor = r.class.Vendor
	case d.vendor != "":
		n.Vendor = d.vendor
	default:
		n.Vendor = res.vendor
	}
	if k := vendorModelLabels[n.Vendor]; r.class == nil && len(d.types) == 0 && k != "" && strings.TrimSpace(r.labels[k]) != "" {
		// The vendor's labeller names a model the catalog has no class of.
		n.Model = strings.TrimSpace(r.labels[k])
		d.why = fmt.Sprintf("%s=%s names the model", k, n.Model)
	}
	n.Count = res.capacity
	if n.Count == 0 {
		n.Count = d.count
		r.derivedAlloc = d.count
	}
	if d.why != "" {
		n.Notes = append(n.Notes, d.why)
	}
	r.readMIGWithoutGFD(mig)
	if vgpu && n.Sharing == Exclusive {
		n.Sharing = VGPU
	}
	if n.Sharing == Exclusive {
		// Sharing that no GFD label states: the provider's labels,
		// AMD's partitions, a shared resource.
		if len(res.shares) > 0 && hamiShares(r.raw.Metadata.Annotations) {
			// HAMi shares the devices, its register says how many;
			// a vendor's partitions beside them are some of those
			// devices, not more.
			res.shares = nil
		}
		n.readSharing(r.labels, res, r.class)
	}
	if n.Vendor == otherVendor {
		n.Vendor = ""
		n.Notes = append(n.Notes, fmt.Sprintf("advertises %s, an extended resource of no vendor accelc knows: a device to the policies; if it is not an accelerator, list it in cluster.nonAcceleratorResources", res.resource))
	}
}

// readMIGWithoutGFD reads MIG without GFD's product: the capacity, the
// MIG manager's config or single-strategy device labels say so.
func (r *nodeReading) readMIGWithoutGFD(mig migSignals) {
	n := &r.n
	mode, why := mig.mode()
	if mode == "" || (n.Vendor != "nvidia" && n.Vendor != "") {
		return
	}
	n.Vendor = "nvidia"
	n.Sharing = mode
	n.MIGDevices = mig.devices()
	if mode == MIGMixed {
		// Whole GPUs are what nvidia.com/gpu offers beside the
		// slices; the GPUs cut into slices are not reported.
		n.Count = r.res.whole
		if r.res.capacity == 0 {
			r.derivedAlloc = 0
			for _, c := range n.MIGDevices {
				r.derivedAlloc += c
			}
		}
	}
	n.Notes = append(n.Notes, migNote(mode, why, n.MIGDevices, mig))
}

// readDRA reads the devices the node's ResourceSlices publish, which
// type it over its labels.
func (r *nodeReading) readDRA(dra *draNode) {
	switch {
	case dra != nil && len(dra.groups) > 0:
		r.class = r.n.applyDRA(dra, r.class)
		r.devices, r.from = dra, "ResourceSlices"
	case dra != nil:
		r.n.Notes = append(r.n.Notes, dra.notes...)
	}
}

// applyPin types a node pinned in CUE (cluster.nodes) by its pin, over
// what its labels or slices say.
func (r *nodeReading) applyPin(pins map[string]string) {
	id, ok := pins[r.n.Name]
	if !ok {
		return
	}
	pin, ok := r.cat.Get(id)
	if !ok {
		return
	}
	if r.class != nil && r.class.ID != id {
		r.n.Notes = append(r.n.Notes, fmt.Sprintf("%s say %s; the pin wins", r.from, r.class.ID))
	}
	r.class = pin
	r.n.Vendor = pin.Vendor
	r.n.Pinned = true
	r.n.Notes = append(r.n.Notes, "type pinned in CUE (cluster.nodes)")
}

// describeType sets the node's type and what the node view shows of it:
// the class's, the mixed types', the slices' device, or an unknown
// type's vendor, model and memory.
func (r *nodeReading) describeType() {
	n := &r.n
	switch {
	case r.class != nil:
		n.AcceleratorType = r.class.ID
		n.DisplayName = r.class.DisplayName
		n.Architecture = r.class.Architecture
		n.MemoryGB = r.class.MemoryGB
		n.Types = nil
		n.Model = ""
	case len(n.Types) > 0:
		n.Model = ""
		n.AcceleratorType = TypeMixed
		n.DisplayName = mixedDisplayName(n.Types, r.cat)
	case r.devices != nil:
		g := &r.devices.groups[0]
		n.AcceleratorType, n.DisplayName, n.MemoryGB = TypeUnknown, g.DisplayName, g.MemoryGB
	default:
		n.AcceleratorType = TypeUnknown
		n.DisplayName = unknownDisplayName(n.Vendor, n.Model, n.Resource)
		if mib, ok := memoryMiB(r.labels[lblMemory]); ok && n.Sharing != MIGSingle && mib > 0 {
			n.MemoryGB = int(math.Round(float64(mib) * (1 << 20) / 1e9))
		}
	}
}

// countDevices sets what is allocatable: the status's, else the
// capacity, else what the labels imply; a node with ResourceSlices and no
// device plugin has its slices' devices.
func (r *nodeReading) countDevices() {
	n, res := &r.n, r.res
	switch {
	case res.allocatable >= 0:
		n.Allocatable = res.allocatable
	case res.capacity > 0:
		n.Allocatable = res.capacity
	case r.derivedAlloc >= 0:
		n.Allocatable = r.derivedAlloc
	}
	if r.devices == nil {
		return
	}
	total := 0
	for _, g := range r.devices.groups {
		total += g.Devices
	}
	if plugin := res.resource != "" || res.allocatable > 0; plugin {
		n.Notes = append(n.Notes, fmt.Sprintf("a device plugin (%s) and the DRA driver both publish this node's devices: one could be given twice; allocatable is the device plugin's", n.Resource))
	} else {
		n.Allocatable = total
	}
}

// readUsage reads a TPU node's slice topology and what accelc's pod
// count annotated as in use, in all and per namespace.
func (r *nodeReading) readUsage() {
	n := &r.n
	if t := strings.TrimSpace(r.labels[LabelTPUTopology]); t != "" && n.Vendor == "google" {
		n.Topology = t
		n.Notes = append(n.Notes, tpuNote(t, n.Count))
	}
	annotations := r.raw.Metadata.Annotations
	if v, ok := annotations[AnnotationInUse]; ok {
		n.InUse, _ = atoi(v)
	}
	v, ok := annotations[AnnotationInUseBy]
	if !ok {
		return
	}
	var by map[string]int
	if json.Unmarshal([]byte(v), &by) != nil {
		return
	}
	for ns, c := range by {
		if c > 0 && c <= MaxDevices {
			if n.InUseBy == nil {
				n.InUseBy = map[string]int{}
			}
			n.InUseBy[ns] = c
		}
	}
}

// distrustBadCounts zeroes a node's counts when one of its device counts
// is not a count: one bad count sinks the node's counts, not the run.
func (r *nodeReading) distrustBadCounts() *Problem {
	if len(r.res.bad) == 0 {
		return nil
	}
	n := &r.n
	n.Count, n.Allocatable, n.InUse, n.InUseBy, n.MIGDevices = 0, 0, 0, nil, nil
	why := strings.Join(r.res.bad, ", ")
	n.Notes = append(n.Notes, "device counts not trusted ("+why+"): counted as 0 available")
	return &Problem{Node: n.Name, Item: -1, Kept: true, Reason: fmt.Sprintf(
		"%s: not a device count (a whole number from 0 to %d); check the node's device plugin", why, MaxDevices)}
}

// advise adds the notes on what the counts and the type leave the node
// view to say: nothing allocatable, no count, mixed or unknown types.
func (r *nodeReading) advise() {
	n := &r.n
	if n.Allocatable == 0 && (n.Count > 0 || len(n.MIGDevices) > 0) {
		n.Notes = append(n.Notes, "0 allocatable: not counted as available")
	}
	if n.Count == 0 && n.Allocatable == 0 && r.res.capacity == 0 && n.Sharing != MIGSingle {
		n.Notes = append(n.Notes, "device count unknown: no gpu.count label and no capacity in the snapshot")
	}
	switch {
	case n.AcceleratorType == TypeMixed && r.devices != nil:
		n.Notes = append(n.Notes, fmt.Sprintf("devices of %d types, each classified from its ResourceSlice: a DRA claim gets a type's devices through its DeviceClass; a node selector on the type label cannot tell them apart", len(r.devices.groups)))
	case n.AcceleratorType == TypeMixed:
		n.Notes = append(n.Notes, "devices of more than one type on one node: a profile cannot tell which a pod gets; make the node's devices alike, or pin the type in cluster.nodes")
	case r.class == nil && r.devices != nil:
		n.Notes = append(n.Notes, draAdvice(r.devices.groups[0].Driver, n.Model))
	case r.class == nil:
		// Last, so the node view can show it as what to do.
		n.Notes = append(n.Notes, unknownAdvice(n.Vendor, r.labels))
	}
}

func nodeResources(raw *RawNode) (cpuMilli, memBytes int64) {
	read := func(name string) resource.Quantity {
		for _, l := range []map[string]string{raw.Status.Allocatable, raw.Status.Capacity} {
			if v, ok := l[name]; ok {
				if q, err := resource.ParseQuantity(v); err == nil && q.Sign() > 0 {
					return q
				}
			}
		}
		return resource.Quantity{}
	}
	cpu, mem := read("cpu"), read("memory")
	return cpu.MilliValue(), mem.Value()
}

func nodeStatus(raw *RawNode) string {
	if raw.Spec.Unschedulable {
		return StatusUnschedulable
	}
	for _, c := range raw.Status.Conditions {
		if c.Type == "Ready" {
			if c.Status == "True" {
				return StatusReady
			}
			return StatusNotReady
		}
	}
	return StatusUnknown
}
