package inventory

// What a classified inventory is: its nodes with their type, sharing
// and counts, and the options classification takes.

import (
	"maps"
	"strings"
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
