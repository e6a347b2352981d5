package inventory

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/accelc/accelc/pkg/catalog"
)

// Sharing is how a node's accelerators are offered to pods.
type Sharing string

const (
	Exclusive  Sharing = "exclusive"
	TimeSliced Sharing = "time-sliced"
	MPS        Sharing = "mps"
	MIGSingle  Sharing = "mig-single"
	MIGMixed   Sharing = "mig-mixed"
	// VGPU is an NVIDIA vGPU guest: the device is a vGPU type, a share
	// of a board the hypervisor hands out (vgpu.go).
	VGPU Sharing = "vgpu"
	// Partitioned is an AMD GPU cut into compute partitions, each offered
	// as a device (sharing.go).
	Partitioned Sharing = "partitioned"
)

// labelKarpenterNodePool names the NodePool that launched a node.
const labelKarpenterNodePool = "karpenter.sh/nodepool"

// Node states that are not a class id.
const (
	TypeUnknown = "unknown"
	TypeMixed   = "mixed"
)

// Node status values.
const (
	StatusReady         = "Ready"
	StatusNotReady      = "NotReady"
	StatusUnschedulable = "Unschedulable"
	// StatusUnknown is a node whose snapshot carries no Ready condition.
	StatusUnknown = "Unknown"
)

// Node is one classified accelerator node.
type Node struct {
	Name string `json:"name"`
	// AcceleratorType is a catalog class id, or "unknown" or "mixed".
	AcceleratorType string `json:"acceleratorType"`
	DisplayName     string `json:"displayName"`
	Vendor          string `json:"vendor"`
	// Model is the model labels of a scheme accelc does not read name
	// ("a4000", "A100_NVLINK_80GB"), for a node of unknown type.
	Model string `json:"model,omitempty"`
	// Pinned is set when the type was pinned by hand in CUE.
	Pinned bool `json:"pinned,omitempty"`
	// Count is the number of accelerator devices the node's labels or
	// capacity describe: physical GPUs, except under MIG single, where GPU
	// Feature Discovery reports only MIG devices.
	Count int `json:"count"`
	// Allocatable is what the scheduler can hand out: time-sliced replicas
	// and MIG devices included.
	Allocatable int `json:"allocatable"`
	// InUse is what pods bound to the node request (live snapshots only);
	// InUseBy is the same per namespace.
	InUse   int            `json:"inUse,omitempty"`
	InUseBy map[string]int `json:"inUseByNamespace,omitempty"`
	// MemoryGB is one device's memory in GB (10^9 bytes): its class's as
	// the catalog gives it, or for a node of unknown type what GPU Feature
	// Discovery's nvidia.com/gpu.memory (MiB) says.
	MemoryGB     int            `json:"memoryGB"`
	Architecture string         `json:"architecture"`
	Sharing      Sharing        `json:"sharing"`
	Replicas     int            `json:"replicas,omitempty"`
	MIGDevices   map[string]int `json:"migDevices,omitempty"`
	// Partitions counts an AMD node's partitions per compute-memory
	// partition mode ("cpx_nps4": 64) where its device plugin offers
	// partitions.
	Partitions map[string]int `json:"partitions,omitempty"`
	// Types counts the devices per class id of a "mixed" node.
	Types map[string]int `json:"types,omitempty"`
	// DRA are the node's devices per class as its ResourceSlices publish
	// them (Dynamic Resource Allocation); empty for a node without. The
	// slices decide the node's type: a node with devices of two classes
	// is "mixed" to a node selector, but a claim gets each class's
	// devices through its DeviceClass, and the summary counts each group
	// under its class.
	DRA    []DRADevices `json:"dra,omitempty"`
	Status string       `json:"status"`
	// Resource is the extended resource the node offers most of
	// (nvidia.com/gpu, nvidia.com/gpu.shared, amd.com/gpu…); empty when
	// the snapshot lists no capacity.
	Resource string `json:"resource,omitempty"`
	// Taints are the node's NoSchedule and NoExecute taints, but for those
	// Kubernetes sets for the node's condition.
	Taints []Taint `json:"taints,omitempty"`
	// Topology is the shape of the node's TPU slice, as GKE's
	// cloud.google.com/gke-tpu-topology gives it ("2x4"); empty for every
	// other node.
	Topology string `json:"topology,omitempty"`
	// Notes say why the node got its type and what is odd about it.
	Notes []string `json:"notes,omitempty"`

	labels             map[string]string
	cpuMilli, memBytes int64 // allocatable (else capacity) CPU and memory
}

// Resources returns the node's allocatable CPU (millicores) and memory
// (bytes), or its capacity when the snapshot has no allocatable; zero when
// the snapshot lists neither.
func (n *Node) Resources() (cpuMilli, memBytes int64) { return n.cpuMilli, n.memBytes }

// Labels returns a copy of the node's labels.
func (n *Node) Labels() map[string]string { return maps.Clone(n.labels) }

// Label returns one of the node's labels.
func (n *Node) Label(key string) (string, bool) {
	v, ok := n.labels[key]
	return v, ok
}

// Available reports whether the node's accelerators count as available:
// it is not cordoned or failing.
func (n *Node) Available() bool {
	return n.Status == StatusReady || n.Status == StatusUnknown
}

// Free is what a pod could still get on the node: allocatable less what
// pods use, nothing on a cordoned or failing node.
func (n *Node) Free() int {
	if !n.Available() {
		return 0
	}
	return max(n.Allocatable-n.InUse, 0)
}

// Options tune classification.
type Options struct {
	// Pins sets node types by hand (node name → class id); they win over
	// detection. pkg/compile fills it from the cluster's CUE.
	Pins map[string]string
	// TypeLabel is the cluster's own type label (<labelPrefix>/type). A
	// node that carries it with a class id, and that no vendor label
	// classifies, is of that class: accelc's Karpenter NodePools give it
	// to the nodes they launch, before any feature discovery has run.
	TypeLabel string
	// NonAccelerator reports the extended resources the cluster declares
	// not accelerators (cluster.nonAcceleratorResources); nil, the
	// default's (DefaultNonAccelerator). Every other extended resource a
	// node advertises makes it an accelerator node.
	NonAccelerator func(name string) bool
}

// DefaultNonAcceleratorResources are cluster.nonAcceleratorResources'
// default (schemas/schema.cue): EKS's network resources and EFA adapters,
// KubeVirt's devices, the RDMA shared device plugin's HCAs and SGX's
// enclave memory.
var DefaultNonAcceleratorResources = []string{"vpc.amazonaws.com/", "devices.kubevirt.io/", "rdma/", "sgx.intel.com/"}

// DefaultNonAccelerator reports whether DefaultNonAcceleratorResources
// declares the resource not an accelerator.
func DefaultNonAccelerator(name string) bool {
	for _, p := range DefaultNonAcceleratorResources {
		if name == p || strings.HasSuffix(p, "/") && strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// Inventory is the classified node list of one cluster.
type Inventory struct {
	// Nodes are the nodes with accelerators, sorted by name.
	Nodes []Node
	// Problems are nodes that could not be read (left out) and nodes
	// whose device counts are not trusted (Kept, counted as 0 available).
	Problems []Problem
	// OtherNodes counts nodes without any accelerator.
	OtherNodes int
	// Resources maps each extended resource (ExtendedResource) that any
	// node, with accelerators or without, lists in its capacity or
	// allocatable to the names of those nodes, sorted: what pods could ask
	// for, which the policies must know to be accelerators or not.
	Resources map[string][]string
	// Source says where and when the nodes were read; nil for a plain
	// kubectl snapshot.
	Source *Source
}

// UsageKnown reports whether the nodes' InUse counts come from pods.
func (inv *Inventory) UsageKnown() bool { return inv.Source != nil && inv.Source.PodsCounted }

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
		c := classifyNode(&raw[i], dra[raw[i].Metadata.Name], sliced[raw[i].Metadata.Name], cat, opts)
		if !c.accelerated {
			inv.OtherNodes++
			continue
		}
		if c.problem != nil {
			inv.Problems = append(inv.Problems, *c.problem)
		}
		inv.Nodes = append(inv.Nodes, c.node)
	}
	sort.Slice(inv.Nodes, func(i, j int) bool { return inv.Nodes[i].Name < inv.Nodes[j].Name })
	sort.SliceStable(inv.Problems, func(i, j int) bool {
		if inv.Problems[i].Kind != inv.Problems[j].Kind {
			return inv.Problems[i].Kind < inv.Problems[j].Kind
		}
		return inv.Problems[i].Node < inv.Problems[j].Node
	})
	return inv
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
	r := resources{allocatable: -1}
	keys := make([]string, 0, len(n.Status.Capacity))
	for k := range n.Status.Capacity {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := deviceVendor(k, nonAccel)
		if v == "" || neuronAlias(k, n.Status.Capacity) {
			continue
		}
		q, ok := quantity(n.Status.Capacity[k])
		if !ok {
			r.bad = append(r.bad, fmt.Sprintf("capacity %s %q", k, n.Status.Capacity[k]))
		}
		if q > 0 && r.vendor == "" {
			r.vendor = v
		}
		r.capacity += q
		if q > r.resourceQty {
			r.resource, r.resourceQty = k, q
		}
		switch {
		case k == resNVIDIAShared:
			r.shared = q
		case strings.HasPrefix(k, resNVIDIAMIG):
			if q > 0 {
				if r.migCapacity == nil {
					r.migCapacity = map[string]int{}
				}
				r.migCapacity[strings.TrimPrefix(k, resNVIDIAMIG)] = q
			}
		case amdPartitionResource(k) != "":
			if q > 0 {
				if r.partitions == nil {
					r.partitions = map[string]int{}
				}
				r.partitions[amdPartitionResource(k)] = q
			}
		default:
			r.whole += q
		}
	}
	if n.Status.Allocatable != nil {
		r.allocatable = 0
		for _, k := range slices.Sorted(maps.Keys(n.Status.Allocatable)) {
			if deviceVendor(k, nonAccel) != "" && !neuronAlias(k, n.Status.Allocatable) {
				q, ok := quantity(n.Status.Allocatable[k])
				if !ok {
					r.bad = append(r.bad, fmt.Sprintf("allocatable %s %q", k, n.Status.Allocatable[k]))
				}
				r.allocatable += q
			}
		}
	}
	return r
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
	derived := readGFDSharing(n, labels, p, mig, res)
	if mig.config != "" && !mig.configEnabled() && mig.config != "all-disabled" {
		n.Notes = append(n.Notes, fmt.Sprintf("%s=%s failed to apply (%s=%s): the GPUs' MIG state is not known; see the MIG manager's log", lblMIGConfig, mig.config, lblMIGConfigState, mig.state))
	}
	if count, _ := atoi(labels[lblCount]); count == 0 && n.Sharing == Exclusive && res.capacity > 0 {
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

// readGFDSharing reads the node's GPU count and how its GPUs are shared
// (MIG single or mixed, time-slicing, MPS) from GFD's labels, and returns
// the allocatable count they imply.
func readGFDSharing(n *Node, labels map[string]string, p GFDProduct, mig migSignals, res resources) int {
	count, _ := atoi(labels[lblCount])
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
	case vendor != "" && vendor != "nvidia" && vendor != "amd" && vendor != "intel":
		return fmt.Sprintf("no label or resource names the %s model: add a class under accelerators whose resourceNames or identifiedBy name it, or pin the type in cluster.nodes", vendor)
	default:
		return "no label names the model: pin the type in cluster.nodes"
	}
}

// applyDRA lays what a node's ResourceSlices say over what its labels
// said: the device types (the slices win, and a note says what the labels
// said where they differ), the vendor, the GPU count and MIG devices. It
// returns the node's class: nil for devices of several classes (n.Types
// then counts them) or of no catalog class, where the labels' class, if
// any, stands.
func (n *Node) applyDRA(d *draNode, labelClass *catalog.Class) *catalog.Class {
	n.DRA = d.groups
	// A vGPU guest's devices are vGPUs whoever publishes them: a vGPU
	// type's ResourceSlice does not make it a whole GPU.
	wasVGPU := n.Sharing == VGPU
	n.Notes = nil // what the labels said of sharing and counts no longer holds
	n.Vendor = d.vendor
	n.Sharing, n.Replicas, n.MIGDevices, n.Types, n.Model = Exclusive, 0, nil, nil, ""
	if wasVGPU {
		n.Sharing = VGPU
		n.Notes = append(n.Notes, "vGPU guest (its labels name a vGPU type): the ResourceSlices' devices are vGPUs")
	}
	gpus := 0
	var known []*catalog.Class
	var parts []string
	for i := range d.groups {
		g := &d.groups[i]
		gpus += g.GPUs
		for p, c := range g.MIGDevices {
			if n.MIGDevices == nil {
				n.MIGDevices = map[string]int{}
			}
			n.MIGDevices[p] += c
		}
		if g.class != nil {
			known = append(known, g.class)
		}
		what := g.AcceleratorType
		if g.class == nil {
			what = g.Model
		}
		parts = append(parts, fmt.Sprintf("%d× %s (%s %s)", g.GPUs, what, g.Driver, g.why))
	}
	n.Count = gpus
	if len(n.MIGDevices) > 0 {
		// A claim names a MIG device's profile, as a pod names a MIG
		// resource under GFD's mixed strategy.
		n.Sharing = MIGMixed
	}
	var class *catalog.Class
	switch {
	case len(d.groups) > 1:
		n.Types = map[string]int{}
		for _, g := range d.groups {
			n.Types[g.AcceleratorType] += g.GPUs
		}
		n.Notes = append(n.Notes, "types from ResourceSlices: "+strings.Join(parts, ", "))
	case len(known) == 1:
		class = known[0]
		n.Notes = append(n.Notes, "type from ResourceSlices: "+parts[0])
	case labelClass != nil:
		class = labelClass
		n.Notes = append(n.Notes, fmt.Sprintf("type from the labels: the ResourceSlices name %s (%s)", d.groups[0].Model, d.groups[0].why))
	default:
		n.Model = d.groups[0].Model
		n.Notes = append(n.Notes, "ResourceSlices: "+parts[0])
	}
	if labelClass != nil && class != labelClass {
		n.Notes = append(n.Notes, fmt.Sprintf("labels say %s; the ResourceSlices win", labelClass.ID))
	}
	n.Notes = append(n.Notes, d.notes...)
	return class
}

// draAdvice says what to do about devices of no catalog class.
func draAdvice(driver, model string) string {
	if driver == DriverAMD {
		return "add the device's PCI id to a class's pciDeviceIDs, or its productName to the class's identifiedBy amd.com/gpu.product-name, or pin the type in cluster.nodes"
	}
	return fmt.Sprintf("add %s to a class's identifiedBy %s, or pin the type in cluster.nodes", strings.ReplaceAll(model, " ", "-"), catalog.LabelGFDProduct)
}
