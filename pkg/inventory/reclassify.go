package inventory

// Reclassifying a watched cluster: accelc serve counts the catalog again
// on every change its watch sees, which is most often one node's (a pod
// bound or gone changes its in-use count). A Reclassifier keeps each
// node's classification from the last snapshot and classifies again only
// the nodes that changed, so that a change costs its nodes, not the
// cluster's.

import (
	"maps"
	"reflect"
	"slices"

	"github.com/accelc/accelc/pkg/catalog"
)

// Reclassifier classifies successive snapshots of one cluster with one
// catalog and options, each node again only where it changed since the
// last snapshot. Its result equals Snapshot.Classify's. It keeps each
// snapshot's nodes until the next: a node must not be changed in place
// once classified (the Watcher replaces a node that changed, and
// annotates a copy). Not safe for use by more than one goroutine at once.
type Reclassifier struct {
	cat  *catalog.Catalog
	opts Options
	// last is what the last call read and made; nil before the first.
	last *reading
}

// reading is one snapshot's nodes as read and classified.
type reading struct {
	nodes []RawNode
	// index is each node's place in nodes by name; got its
	// classification, by the same place.
	index map[string]int
	got   []classified
	// unique is false where two nodes share a name: such a snapshot is
	// classified whole, and so is the next.
	unique bool
	slices []ResourceSlice
	dra    map[string]*draNode
	sliced map[string][]string
	// draProblems are the problems the slices gave (readSlices).
	draProblems []Problem
	resources   map[string][]string
}

// NewReclassifier classifies with cat and opts.
func NewReclassifier(cat *catalog.Catalog, opts Options) *Reclassifier {
	if opts.NonAccelerator == nil {
		opts.NonAccelerator = DefaultNonAccelerator
	}
	return &Reclassifier{cat: cat, opts: opts}
}

// Classify is s.Classify of the Reclassifier's catalog and options.
// changed names the nodes (sorted) that were classified again: added,
// removed or changed since the last call, among them those without
// accelerators; all is true where every node was instead, which it is on
// the first call, where the ResourceSlices changed (a slice can change
// which nodes its devices count on) or the node names did while slices
// are read, and where two nodes share a name. Inventories made earlier
// are not changed.
func (r *Reclassifier) Classify(s *Snapshot) (inv *Inventory, changed []string, all bool) {
	next := &reading{nodes: s.Nodes, index: make(map[string]int, len(s.Nodes)), got: make([]classified, len(s.Nodes)), slices: s.Slices}
	for i := range s.Nodes {
		next.index[s.Nodes[i].Metadata.Name] = i
	}
	next.unique = len(next.index) == len(s.Nodes)
	last := r.last
	all = last == nil || !last.unique || !next.unique || !reflect.DeepEqual(last.slices, s.Slices) ||
		(len(s.Slices) > 0 && !sameNames(last.index, next.index))
	if all {
		if len(s.Slices) > 0 {
			names := make(map[string]bool, len(s.Nodes))
			for name := range next.index {
				names[name] = true
			}
			next.dra, next.draProblems = readSlices(s.Slices, names, r.cat)
		}
		next.sliced = nodesWithSlices(s.Slices)
	} else {
		next.dra, next.draProblems, next.sliced = last.dra, last.draProblems, last.sliced
	}
	advertisedSame := !all
	for i := range s.Nodes {
		raw := &s.Nodes[i]
		name := raw.Metadata.Name
		if !all {
			j, ok := last.index[name]
			if ok && sameRaw(&last.nodes[j], raw) {
				next.got[i] = last.got[j]
				continue
			}
			if !ok || !sameResources(&last.nodes[j], raw) {
				advertisedSame = false
			}
			changed = append(changed, name)
		}
		next.got[i] = classifyNode(raw, next.dra[name], next.sliced[name], r.cat, r.opts)
	}
	if !all {
		for name := range last.index {
			if _, ok := next.index[name]; !ok {
				changed = append(changed, name)
				advertisedSame = false
			}
		}
		slices.Sort(changed)
	}
	if advertisedSame {
		next.resources = last.resources
	} else {
		next.resources = advertised(s.Nodes)
	}
	r.last = next
	return next.inventory(s), changed, all
}

// inventory puts the nodes read together as Snapshot.Classify does.
func (rd *reading) inventory(s *Snapshot) *Inventory {
	inv := &Inventory{Nodes: make([]Node, 0, len(rd.got)), Resources: rd.resources, Problems: slices.Clone(rd.draProblems)}
	for _, c := range rd.got {
		inv.add(c)
	}
	inv.order()
	inv.Problems = append(slices.Clip(s.Problems), inv.Problems...)
	inv.Source = s.Source
	return inv
}

// sameNames reports whether two snapshots have the same nodes by name.
func sameNames(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for name := range a {
		if _, ok := b[name]; !ok {
			return false
		}
	}
	return true
}

// sameRaw reports whether two readings of a node are the same in
// everything classification reads.
func sameRaw(a, b *RawNode) bool {
	return a.APIVersion == b.APIVersion && a.Kind == b.Kind &&
		a.Metadata.Name == b.Metadata.Name &&
		sameMap(a.Metadata.Labels, b.Metadata.Labels) &&
		sameMap(a.Metadata.Annotations, b.Metadata.Annotations) &&
		a.Spec.Unschedulable == b.Spec.Unschedulable &&
		slices.Equal(a.Spec.Taints, b.Spec.Taints) &&
		sameMap(a.Status.Capacity, b.Status.Capacity) &&
		sameMap(a.Status.Allocatable, b.Status.Allocatable) &&
		slices.Equal(a.Status.Conditions, b.Status.Conditions)
}

// sameMap reports whether two maps hold the same entries: at once where
// they are one map, as a watched node's labels are from one snapshot to
// the next until the node changes.
func sameMap(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	if reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer() {
		return true
	}
	return maps.Equal(a, b)
}

// sameResources reports whether two readings of a node list the same
// resource names (advertised reads nothing else).
func sameResources(a, b *RawNode) bool {
	return sameKeys(a.Status.Capacity, b.Status.Capacity) && sameKeys(a.Status.Allocatable, b.Status.Allocatable)
}

func sameKeys(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			return false
		}
	}
	return true
}
