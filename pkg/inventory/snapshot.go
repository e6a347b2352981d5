package inventory

// Snapshots: the raw nodes, ResourceSlices and workloads of a cluster as
// read or written to a file, and their classification.

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/accelc/accelc/pkg/catalog"
)

// RawNode is the part of a Kubernetes Node that classification reads. It
// is also what a snapshot written by accelc holds of each node: nothing
// else (no addresses, machine ids or images) is kept.
type RawNode struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
	Metadata   struct {
		Name        string            `json:"name"`
		Labels      map[string]string `json:"labels,omitempty"`
		Annotations map[string]string `json:"annotations,omitempty"`
	} `json:"metadata"`
	Spec struct {
		Unschedulable bool    `json:"unschedulable,omitempty"`
		Taints        []Taint `json:"taints,omitempty"`
	} `json:"spec"`
	Status struct {
		Capacity    map[string]string `json:"capacity,omitempty"`
		Allocatable map[string]string `json:"allocatable,omitempty"`
		Conditions  []Condition       `json:"conditions,omitempty"`
	} `json:"status"`
}

// Taint is a node taint: pods need a matching toleration to land.
type Taint struct {
	Key    string `json:"key"`
	Value  string `json:"value,omitempty"`
	Effect string `json:"effect"`
}

// Condition is a node condition; only Ready is read.
type Condition struct {
	Type   string `json:"type"`
	Status string `json:"status"`
}

// workloadKinds are the kinds of what a cluster runs that a snapshot may
// hold beside its nodes (written by `accelc inventory snapshot
// --workloads`, read by pkg/workloads, whose kinds a test keeps here).
var workloadKinds = map[string]bool{
	"Pod": true, "Deployment": true, "StatefulSet": true, "ReplicaSet": true, "DaemonSet": true,
	"Job": true, "CronJob": true, "Notebook": true, "PyTorchJob": true, "RayCluster": true, "JobSet": true,
	"RayJob": true, "LeaderWorkerSet": true, "MPIJob": true, "AppWrapper": true, "TrainJob": true, "InferenceService": true,
	"ResourceClaim": true, "ResourceClaimTemplate": true,
}

// WorkloadKind says whether a snapshot item of the kind is a workload,
// which node classification passes over.
func WorkloadKind(kind string) bool { return workloadKinds[kind] }

// Snapshot is a set of raw nodes with where and when they were read.
type Snapshot struct {
	Source *Source
	Nodes  []RawNode
	// Slices are the ResourceSlices of the nodes' accelerators (Dynamic
	// Resource Allocation), of the drivers accelc reads, without what
	// identifies a device (see ResourceSlice.Redact).
	Slices   []ResourceSlice
	Problems []Problem
	// Warnings are what the reader could not do but worked around
	// (pods it may not list).
	Warnings []string
	// Workloads are written after the nodes and slices, as they are:
	// what the cluster runs, trimmed by pkg/workloads, for accelc audit.
	Workloads []any
}

// Source records where a snapshot came from. It never holds the server's
// address or credentials: snapshots are committed to Git.
type Source struct {
	// Cluster is the kubeconfig cluster name the nodes were read from.
	Cluster string `json:"cluster,omitempty"`
	// TakenAt is when the nodes were read.
	TakenAt time.Time `json:"takenAt"`
	// PodsCounted says the nodes carry the accelerators pods use
	// (AnnotationInUse); without it, use is unknown.
	PodsCounted bool `json:"podsCounted"`
	// Namespaces are the names of the cluster's namespaces, sorted, when
	// the reader could list them; nil when it could not (or the snapshot
	// is older), and then nothing is checked against them.
	Namespaces []string `json:"namespaces,omitempty"`
}

// KnownNamespaces are the cluster's namespaces and whether they are known
// at all: a snapshot without them (plain kubectl output, an older
// accelc's, a reader that may not list namespaces) says nothing of what
// the cluster lacks.
func (s *Source) KnownNamespaces() ([]string, bool) {
	if s == nil || s.Namespaces == nil {
		return nil, false
	}
	return s.Namespaces, true
}

// AnnotationInUse holds, on a node of a snapshot, the accelerator devices
// that running and pending pods bound to it request; AnnotationInUseBy,
// the same per namespace, as JSON ({"ml-research": 4}).
const (
	AnnotationInUse   = "accelc.io/accelerators-in-use"
	AnnotationInUseBy = "accelc.io/accelerators-in-use-by-namespace"
)

// SetInUse records on a raw node what pods use of it, per namespace.
func SetInUse(n *RawNode, byNamespace map[string]int) {
	total := 0
	for _, v := range byNamespace {
		total += v
	}
	if n.Metadata.Annotations == nil {
		n.Metadata.Annotations = map[string]string{}
	}
	n.Metadata.Annotations[AnnotationInUse] = strconv.Itoa(total)
	data, _ := json.Marshal(byNamespace) // a map of ints: cannot fail; keys sorted
	n.Metadata.Annotations[AnnotationInUseBy] = string(data)
}

// Problem is a node that could not be read or classified. It never stops
// a run: the node is left out, or (Kept) kept with its accelerators
// counted as 0 available, and the problem is reported.
type Problem struct {
	// Kind is the object's kind when it is not a Node: a ResourceSlice,
	// whose name Node then holds.
	Kind string `json:"kind,omitempty"`
	Node string `json:"node,omitempty"`
	// Item is the node's index in the snapshot's items; -1 when the
	// problem was found after reading.
	Item   int    `json:"item"`
	Reason string `json:"reason"`
	Kept   bool   `json:"kept,omitempty"`
}

func (p Problem) String() string {
	what := "node"
	if p.Kind != "" && p.Kind != "Node" {
		what = p.Kind
	}
	switch {
	case p.Item < 0:
		return fmt.Sprintf("%s %s: %s", what, p.Node, p.Reason)
	case p.Node != "":
		return fmt.Sprintf("%s %s (items[%d]): %s", what, p.Node, p.Item, p.Reason)
	}
	return fmt.Sprintf("items[%d]: %s", p.Item, p.Reason)
}

// Effect says what became of the node.
func (p Problem) Effect() string {
	if p.Kind == "ResourceSlice" {
		return "its devices are not counted"
	}
	if p.Kept {
		return "its accelerators are counted as 0 available"
	}
	return "the node is left out"
}

// Load reads a snapshot file and classifies its nodes; the nodes it could
// not read are the inventory's Problems.
func Load(path string, cat *catalog.Catalog, opts Options) (*Inventory, error) {
	snap, err := ReadSnapshot(path)
	if err != nil {
		return nil, err
	}
	return snap.Classify(cat, opts), nil
}

// Classify classifies the snapshot's nodes; the inventory keeps its source
// and problems.
func (s *Snapshot) Classify(cat *catalog.Catalog, opts Options) *Inventory {
	inv := classify(s.Nodes, s.Slices, cat, opts)
	inv.Problems = append(slices.Clip(s.Problems), inv.Problems...)
	inv.Source = s.Source
	return inv
}

// Write writes the snapshot as a kind List of Nodes, then its
// ResourceSlices, that kubectl and accelc both read, with its source under
// the top-level "accelc" key. Output is deterministic for the same nodes,
// slices and source.
func (s *Snapshot) Write(w io.Writer) error {
	items := make([]any, len(s.Nodes), len(s.Nodes)+len(s.Slices))
	for i, n := range s.Nodes {
		n.APIVersion, n.Kind = "v1", "Node"
		// Annotations carry addresses and tool state (CNI, cloud
		// controllers): only accelc's own use count is kept.
		n.Metadata.Annotations = nil
		for _, key := range []string{AnnotationInUse, AnnotationInUseBy} {
			if v, ok := s.Nodes[i].Metadata.Annotations[key]; ok {
				if n.Metadata.Annotations == nil {
					n.Metadata.Annotations = map[string]string{}
				}
				n.Metadata.Annotations[key] = v
			}
		}
		items[i] = n
	}
	for _, rs := range keepSlices(s.Slices, true) {
		items = append(items, rs)
	}
	items = append(items, s.Workloads...)
	doc := struct {
		APIVersion string  `json:"apiVersion"`
		Kind       string  `json:"kind"`
		Accelc     *Source `json:"accelc,omitempty"`
		Items      []any   `json:"items"`
	}{"v1", "List", s.Source, items}
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(data, '\n'))
	return err
}

// Merge lays other's nodes over the snapshot's: a node of both keeps its
// status and gains other's labels (which win), and other's accelerator
// capacity when it lists none; a node only in other is added. This is how NVML reports from
// nodes the GPU Operator does not label enrich a cluster snapshot.
// other's ResourceSlices are added where the snapshot has none of that
// name. It returns the names of the nodes merged and added.
func (s *Snapshot) Merge(other *Snapshot) (merged, added []string) {
	haveSlice := map[string]bool{}
	for _, rs := range s.Slices {
		haveSlice[rs.Metadata.Name] = true
	}
	for _, rs := range other.Slices {
		if !haveSlice[rs.Metadata.Name] {
			s.Slices = append(s.Slices, rs)
		}
	}
	sortSlices(s.Slices)
	index := make(map[string]int, len(s.Nodes))
	for i := range s.Nodes {
		index[s.Nodes[i].Metadata.Name] = i
	}
	for _, o := range other.Nodes {
		i, ok := index[o.Metadata.Name]
		if !ok {
			index[o.Metadata.Name] = len(s.Nodes)
			s.Nodes = append(s.Nodes, o)
			added = append(added, o.Metadata.Name)
			continue
		}
		n := &s.Nodes[i]
		n.Metadata.Labels = overlay(n.Metadata.Labels, o.Metadata.Labels)
		// What the kubelet reports stands; the report's counts fill in
		// only where the node lists no accelerator.
		alloc := o.Status.Allocatable
		if alloc == nil {
			alloc = o.Status.Capacity
		}
		if !hasAccelerators(n.Status.Capacity) {
			n.Status.Capacity = overlay(n.Status.Capacity, accelerators(o.Status.Capacity))
		}
		if !hasAccelerators(n.Status.Allocatable) {
			n.Status.Allocatable = overlay(n.Status.Allocatable, accelerators(alloc))
		}
		merged = append(merged, o.Metadata.Name)
	}
	sort.Slice(s.Nodes, func(i, j int) bool { return s.Nodes[i].Metadata.Name < s.Nodes[j].Metadata.Name })
	return merged, added
}

func hasAccelerators(resources map[string]string) bool {
	return len(accelerators(resources)) > 0
}

// accelerators keeps the accelerator resources of a resource list.
func accelerators(resources map[string]string) map[string]string {
	var out map[string]string
	for k, v := range resources {
		if VendorOfResource(k) != "" {
			if out == nil {
				out = map[string]string{}
			}
			out[k] = v
		}
	}
	return out
}

func overlay(base, top map[string]string) map[string]string {
	out := make(map[string]string, len(base)+len(top))
	maps.Copy(out, base)
	maps.Copy(out, top)
	return out
}

// Age is how old the snapshot is at now; ok is false when the snapshot
// does not say when it was taken (plain kubectl output).
func (s *Source) Age(now time.Time) (time.Duration, bool) {
	if s == nil || s.TakenAt.IsZero() {
		return 0, false
	}
	return now.Sub(s.TakenAt), true
}
